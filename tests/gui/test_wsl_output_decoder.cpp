// WslOutputDecoder: UTF-16LE from wsl.exe and UTF-8 from Linux, in one pipe, in any chunking.
#include <QTest>

#include "gui/core/wsl_output_decoder.h"

using niwa::gui::WslOutputDecoder;

namespace {

QByteArray utf16le(const QString& s, bool bom = false) {
    QByteArray b = bom ? QByteArray("\xFF\xFE", 2) : QByteArray();
    for (const QChar c : s) {
        b.append(char(c.unicode() & 0xFF));
        b.append(char(c.unicode() >> 8));
    }
    return b;
}

}  // namespace

class TestWslOutputDecoder : public QObject {
    Q_OBJECT

private slots:
    void decodesUtf8() {
        WslOutputDecoder d;
        QCOMPARE(d.decode(QStringLiteral("モデル loaded\n").toUtf8()), QStringLiteral("モデル loaded\n"));
        QVERIFY(!d.lastWasUtf16());
    }

    void decodesUtf16WithAndWithoutBom() {
        const QString text = QStringLiteral("  NAME   STATE\r\n* Ubuntu-24.04  Running  2\r\n");
        WslOutputDecoder a;
        QCOMPARE(a.decode(utf16le(text, true)), text);
        QVERIFY(a.lastWasUtf16());
        WslOutputDecoder b;
        QCOMPARE(b.decode(utf16le(text)), text);
    }

    void joinsCodeUnitsSplitAcrossChunks() {
        const QString text =
            QStringLiteral("Error: 指定された名前のディストリビューションはありません。\r\n");
        const QByteArray bytes = utf16le(text);
        // Pipes deliver what wsl.exe wrote in one go; a lone byte cannot be judged, so cuts
        // start at two bytes (a cut of three also splits code units).
        for (int cut : {2, 3, 7, 11}) {
            WslOutputDecoder d;
            QString out;
            for (qsizetype i = 0; i < bytes.size(); i += cut) out += d.decode(bytes.mid(i, cut));
            QCOMPARE(out, text);
        }
    }

    void followsASwitchBetweenEncodings() {
        WslOutputDecoder d;
        QString out = d.decode(QByteArray("engine line\n"));
        out += d.decode(utf16le(QStringLiteral("The operation was cancelled.\r\n")));
        out += d.decode(QStringLiteral("次の行\n").toUtf8());
        QCOMPARE(out, QStringLiteral("engine line\nThe operation was cancelled.\r\n次の行\n"));
    }
};

QTEST_GUILESS_MAIN(TestWslOutputDecoder)
#include "test_wsl_output_decoder.moc"
