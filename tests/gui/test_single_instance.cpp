// One Niwa per user: a second launch asks the first to show its window and exits 0.
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

#include "gui/app/single_instance.h"
#include "support/temp_dir.h"

class TestSingleInstance : public QObject {
    Q_OBJECT

private slots:
    void aSecondSingleInstanceRaisesTheFirst() {
        const QString name = QStringLiteral("niwa-test-%1").arg(QCoreApplication::applicationPid());
        niwa::gui::SingleInstance first(name);
        QVERIFY(!first.notifyRunning(200));  // nobody there yet
        QVERIFY(first.listen());
        QSignalSpy raised(&first, &niwa::gui::SingleInstance::raiseRequested);
        // The second is the real app: it must tell the first and exit 0.
        QProcess second;
        second.setProcessEnvironment([&] {
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("NIWA_INSTANCE_NAME"), name);
            return env;
        }());
        niwa::test::TempDir profile;
        second.start(QStringLiteral(NIWA_APP_PATH), {QStringLiteral("--profile"), profile.path()});
        QVERIFY(second.waitForStarted());
        QTRY_COMPARE_WITH_TIMEOUT(raised.count(), 1, 20000);
        // The test's event loop may already have seen it end.
        QTRY_COMPARE_WITH_TIMEOUT(second.state(), QProcess::NotRunning, 20000);
        QCOMPARE(second.exitStatus(), QProcess::NormalExit);
        QCOMPARE(second.exitCode(), 0);
        QVERIFY(second.readAllStandardError().contains("already running"));
    }

    void theRealAppRaisedByASecondLaunch() {
        const QString name = QStringLiteral("niwa-test-app-%1").arg(QCoreApplication::applicationPid());
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("NIWA_INSTANCE_NAME"), name);
        env.insert(QStringLiteral("QT_QUICK_BACKEND"), QStringLiteral("software"));
        niwa::test::TempDir profile;
        QProcess first;
        first.setProcessEnvironment(env);
        first.setProcessChannelMode(QProcess::SeparateChannels);
        first.start(QStringLiteral(NIWA_APP_PATH), {QStringLiteral("--profile"), profile.path()});
        QVERIFY(first.waitForStarted());
        // Wait until it listens: a probe connection succeeds.
        niwa::gui::SingleInstance probe(name);
        QTRY_VERIFY_WITH_TIMEOUT(probe.notifyRunning(500), 20000);
        QByteArray firstErr;
        QTRY_VERIFY_WITH_TIMEOUT(
            (firstErr += first.readAllStandardError()).contains("raised by a second launch"), 10000);
        const qsizetype raisedBefore = firstErr.count("raised by a second launch");

        QProcess second;
        second.setProcessEnvironment(env);
        second.start(QStringLiteral(NIWA_APP_PATH), {QStringLiteral("--profile"), profile.path()});
        QVERIFY(second.waitForFinished(20000));
        QCOMPARE(second.exitCode(), 0);
        QVERIFY2(second.readAllStandardError().contains("already running"), firstErr.constData());
        QTRY_VERIFY_WITH_TIMEOUT(
            (firstErr += first.readAllStandardError()).count("raised by a second launch") == raisedBefore + 1,
            10000);
        QCOMPARE(first.state(), QProcess::Running);  // the first one stays
        first.terminate();
        if (!first.waitForFinished(10000)) first.kill();
    }
};

QTEST_GUILESS_MAIN(TestSingleInstance)
#include "test_single_instance.moc"
