// UTF-8 decoding with U+FFFD (the WHATWG / Unicode "maximal subpart" rule) and NFC.
#include <QtTest>

#include "engine/text/unicode.h"

using namespace niwa::text;

namespace {
const std::string R = "\xEF\xBF\xBD";  // U+FFFD

std::string decoded(std::string_view bytes) {
    std::string out;
    const size_t used = utf8_decode_replacing(bytes, true, out);
    if (used != bytes.size()) return "<not all consumed>";
    return out;
}
}  // namespace

class TestUnicode : public QObject {
    Q_OBJECT

private slots:
    void validTextPassesThrough() {
        const std::string s = "a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x98\x80";  // a é 日 😀
        QCOMPARE(decoded(s), s);
        QVERIFY(utf8_is_valid(s));
        QCOMPARE(decoded(std::string("\0x", 2)), std::string("\0x", 2));
    }

    void maximalSubpartsBecomeOneReplacementEach() {
        // The example of the Unicode Standard, section 3.9 (U+FFFD substitution):
        // 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 -> a FFFD FFFD FFFD b FFFD c FFFD FFFD d
        QCOMPARE(decoded("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
                 "a" + R + R + R + "b" + R + "c" + R + R + "d");
        QCOMPARE(decoded("\xC0\xAF"), R + R);                  // overlong: C0 can never start a sequence
        QCOMPARE(decoded("\xED\xA0\x80"), R + R + R);          // a surrogate
        QCOMPARE(decoded("\xF4\x90\x80\x80"), R + R + R + R);  // past U+10FFFF
        QCOMPARE(decoded("\xE6\x97"), R);                      // unfinished at the end: one replacement
    }

    void streamingHoldsBackAnUnfinishedCharacter() {
        std::string out;
        QCOMPARE(utf8_decode_replacing("ab\xE6\x97", false, out), size_t(2));
        QCOMPARE(out, std::string("ab"));
        out.clear();
        QCOMPARE(utf8_decode_replacing("\xE6\x41", false, out), size_t(2));  // can never finish
        QCOMPARE(out, R + "A");
    }

    void sanitize() {
        QCOMPARE(utf8_sanitize("ok"), std::string("ok"));
        QCOMPARE(utf8_sanitize("o\xFFk"), "o" + R + "k");
        QVERIFY(!utf8_is_valid("\xFF"));
    }

    void nfcComposes() {
        QCOMPARE(nfc("e\xCC\x81"), std::string("\xC3\xA9"));     // e + U+0301 -> é
        QCOMPARE(nfc("\xE2\x84\xAB"), std::string("\xC3\x85"));  // U+212B -> U+00C5
        QCOMPARE(nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8"), std::string("\xEA\xB0\x81"));  // jamo -> 각
        QCOMPARE(nfc("\xE3\x82\xAB\xE3\x82\x99"), std::string("\xE3\x82\xAC"));  // カ + U+3099 -> ガ
        QCOMPARE(nfc("plain ascii"), std::string("plain ascii"));
        // Canonical order: dot below (ccc 220) before circumflex (230), then composition.
        QCOMPARE(nfc("e\xCC\x82\xCC\xA3"), std::string("\xE1\xBB\x87"));  // U+1EC7
    }
};

QTEST_GUILESS_MAIN(TestUnicode)
#include "test_unicode.moc"
