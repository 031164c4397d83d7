// API keys: strong, well-formed, written in the engine's --api-keys format (docs/API.md).
#include <QFile>
#include <QRegularExpression>
#include <QSet>
#include <QTest>

#include "gui/core/api_keys_file.h"
#include "support/temp_dir.h"

using namespace niwa::gui;

class TestApiKeysFile : public QObject {
    Q_OBJECT

private slots:
    void keysAreLongRandomAndDistinct() {
        static const QRegularExpression shape(QStringLiteral("^sk-niwa-[A-Za-z0-9]{40}$"));
        QSet<QString> seen;
        for (int i = 0; i < 200; ++i) {
            const QString k = generateApiKey();
            QVERIFY2(shape.match(k).hasMatch(), qPrintable(k));
            seen.insert(k);
        }
        QCOMPARE(seen.size(), 200);
    }

    void fileHasOneLinePerKey() {
        const QString text = apiKeysFileText(
            {{QStringLiteral("sk-niwa-aaaaaaaaaaaaaaaa"), QStringLiteral("niwa-app"), 0, 0},
             {QStringLiteral("sk-niwa-bbbbbbbbbbbbbbbb"), QStringLiteral("night batch"), 10, 2}});
        const QStringList lines = text.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 3);
        QVERIFY(lines[0].startsWith(QLatin1Char('#')));
        QCOMPARE(lines[1], QStringLiteral("sk-niwa-aaaaaaaaaaaaaaaa niwa-app 0 0"));
        QCOMPARE(lines[2], QStringLiteral("sk-niwa-bbbbbbbbbbbbbbbb night_batch 10 2"));
    }

    void writesAtomicallyForTheOwnerOnly() {
        niwa::test::TempDir dir;
        const QString path = dir.file(QStringLiteral("sub/api-keys.txt"));
        QString error;
        QVERIFY2(
            writeApiKeysFile(
                path, {{QStringLiteral("sk-niwa-cccccccccccccccc"), QStringLiteral("office"), 0, 0}}, &error),
            qPrintable(error));
        QFile f(path);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QVERIFY(f.readAll().contains("sk-niwa-cccccccccccccccc office 0 0\n"));
#ifndef Q_OS_WIN
        QCOMPARE(f.permissions() & (QFileDevice::ReadOther | QFileDevice::ReadGroup),
                 QFileDevice::Permissions());
#endif
        QVERIFY(!writeApiKeysFile(QStringLiteral("/proc/niwa/keys.txt"), {}, &error));
        QVERIFY(error.contains(QStringLiteral("/proc/niwa")));
    }
};

QTEST_GUILESS_MAIN(TestApiKeysFile)
#include "test_api_keys_file.moc"
