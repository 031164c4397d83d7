// LanExposure off Windows: binding 0.0.0.0 is enough, so every call reports Done at once and
// runs no helper; AppController's LAN toggle then stays on. (The Windows side runs
// niwa-lan.ps1 and cannot run here.)
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "gui/app/app_controller.h"
#include "gui/app/lan_exposure.h"
#include "gui/core/settings.h"

using niwa::gui::AppController;
using niwa::gui::LanExposure;

class TestLanExposure : public QObject {
    Q_OBJECT

private slots:
    void notNeededHere() { QVERIFY(!LanExposure::needed()); }

    void everyCallReportsDoneAtOnce() {
        LanExposure lan;
        QSignalSpy spy(&lan, &LanExposure::finished);
        lan.enable(8080);
        lan.disable(8080);
        lan.checkAndReapply(8080);
        QCOMPARE(spy.size(), 3);  // synchronously: no event loop ran
        const LanExposure::Action actions[] = {LanExposure::Action::Enable, LanExposure::Action::Disable,
                                               LanExposure::Action::Reapply};
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(spy[i][0].value<LanExposure::Action>(), actions[i]);
            QCOMPARE(spy[i][1].value<LanExposure::Outcome>(), LanExposure::Outcome::Done);
            QVERIFY(spy[i][2].toString().isEmpty());
        }
        QVERIFY(!lan.busy());
        QVERIFY(lan.findChildren<QProcess*>().isEmpty());
    }

    void runsNothingEvenWithoutTheScript() {
        LanExposure lan;
        lan.setScript(QStringLiteral("/nonexistent/niwa-lan.ps1"));
        QSignalSpy spy(&lan, &LanExposure::finished);
        lan.enable(9000);
        QCOMPARE(spy.size(), 1);
        QCOMPARE(spy[0][1].value<LanExposure::Outcome>(), LanExposure::Outcome::Done);
        QVERIFY(lan.findChildren<QProcess*>().isEmpty());
    }

    void lanToggleStaysOn() {
        QTemporaryDir profile;
        QVERIFY(profile.isValid());
        AppController app(profile.path());
        QSignalSpy toasts(&app, &AppController::toast);
        QSignalSpy exposed(app.lanExposure(), &LanExposure::finished);
        QVERIFY(app.setLanServing(true));
        QCOMPARE(exposed.size(), 1);
        QVERIFY(app.lanServing());
        QVERIFY(app.setLanServing(false));
        QCOMPARE(exposed.size(), 2);
        QVERIFY(!app.lanServing());
        QCOMPARE(toasts.size(), 0);
        QVERIFY(app.lanExposure()->findChildren<QProcess*>().isEmpty());
    }
};

QTEST_MAIN(TestLanExposure)
#include "test_lan_exposure.moc"
