// GPT-2's byte <-> symbol alphabet.
#include <QtTest>

#include <set>

#include "engine/text/byte_level.h"

using namespace niwa::text;

class TestByteLevel : public QObject {
    Q_OBJECT

private slots:
    void knownSymbols() {
        const auto& s = byte_level_symbols();
        QCOMPARE(s['A'], std::string("A"));
        QCOMPARE(s['!'], std::string("!"));
        QCOMPARE(s[' '], std::string("\xC4\xA0"));   // Ġ U+0120: the 33rd unprintable byte
        QCOMPARE(s['\n'], std::string("\xC4\x8A"));  // Ċ U+010A
        QCOMPARE(s[0], std::string("\xC4\x80"));     // U+0100
        QCOMPARE(s[0xAD], std::string("\xC5\x83"));  // soft hyphen, the last unprintable: U+0143
        QCOMPARE(s[0xE9], std::string("\xC3\xA9"));  // é stands for itself
    }

    void symbolsAreDistinctAndRoundTrip() {
        std::set<std::string> seen(byte_level_symbols().begin(), byte_level_symbols().end());
        QCOMPARE(seen.size(), size_t(256));
        std::string all;
        for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
        QCOMPARE(byte_level_decode(byte_level_encode(all)), std::optional<std::string>(all));
        QCOMPARE(byte_level_decode("\xC4\xA0the"), std::optional<std::string>(" the"));
    }

    void foreignTextIsRejected() {
        QVERIFY(!byte_level_decode("\xE6\x97\xA5"));  // 日 is not a symbol
        QVERIFY(!byte_level_decode(" "));             // a raw space is not either
        QVERIFY(!byte_level_decode("\xC4"));          // cut off
    }
};

QTEST_GUILESS_MAIN(TestByteLevel)
#include "test_byte_level.moc"
