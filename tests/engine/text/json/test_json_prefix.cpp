// JsonPrefix against RFC 8259 and against nlohmann::json as the oracle: a table of prefixes
// and documents (numbers, escapes, surrogates, UTF-8, control characters, nesting); random
// valid documents accepted byte by byte, and complete only at their end; random one-byte
// corruptions judged as nlohmann::json judges them; no accepted prefix is a dead end.
#include <QtTest>

#include <random>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/text/json_prefix.h"

using niwa::text::JsonPrefix;

namespace {

// -1: some byte is refused; 0: every byte accepted, not complete; 1: a complete object.
int judge(const std::string& s) {
    JsonPrefix j;
    if (!j.feed(s)) return -1;
    return j.complete() ? 1 : 0;
}

bool oracle_object(const std::string& s) {
    // nlohmann::json reads a NUL byte as the end of the input; RFC 8259 has no place for one.
    if (s.find('\0') != std::string::npos) return false;
    if (!nlohmann::json::accept(s)) return false;
    return nlohmann::json::parse(s).is_object();
}

// Random valid JSON text, with random whitespace between tokens.
class Generator {
public:
    explicit Generator(uint32_t seed) : rng_(seed) {}

    std::string document() {
        std::string s = space();
        object(s, 0);
        return s + space();
    }

private:
    int pick(int n) { return int(rng_() % uint32_t(n)); }

    std::string space() {
        static const char kSpace[] = {' ', '\t', '\n', '\r'};
        std::string s;
        for (int n = pick(4) == 0 ? pick(3) : 0; n > 0; --n) s += kSpace[pick(4)];
        return s;
    }

    void object(std::string& s, int depth) {
        s += '{';
        const int n = pick(depth > 3 ? 2 : 4);
        for (int i = 0; i < n; ++i) {
            if (i) s += ',';
            s += space();
            string(s);
            s += space() + ":" + space();
            value(s, depth + 1);
            s += space();
        }
        if (n == 0) s += space();
        s += '}';
    }

    void array(std::string& s, int depth) {
        s += '[';
        const int n = pick(depth > 3 ? 2 : 4);
        for (int i = 0; i < n; ++i) {
            if (i) s += ',';
            s += space();
            value(s, depth + 1);
            s += space();
        }
        if (n == 0) s += space();
        s += ']';
    }

    void value(std::string& s, int depth) {
        switch (pick(depth > 4 ? 5 : 7)) {
            case 0:
                string(s);
                break;
            case 1:
                number(s);
                break;
            case 2:
                s += "true";
                break;
            case 3:
                s += "false";
                break;
            case 4:
                s += "null";
                break;
            case 5:
                object(s, depth);
                break;
            default:
                array(s, depth);
                break;
        }
    }

    void digits(std::string& s, int at_least) {
        for (int n = at_least + pick(3); n > 0; --n) s += char('0' + pick(10));
    }

    void number(std::string& s) {
        if (pick(2)) s += '-';
        if (pick(3) == 0) {
            s += '0';
        } else {
            s += char('1' + pick(9));
            digits(s, 0);
        }
        if (pick(2)) {
            s += '.';
            digits(s, 1);
        }
        if (pick(2)) {
            s += pick(2) ? 'e' : 'E';
            if (pick(2)) s += pick(2) ? '+' : '-';
            s += char('0' + pick(10));
            if (pick(2)) s += char('0' + pick(10));
        }
    }

    void string(std::string& s) {
        static const char* kPieces[] = {"a",
                                        "Z",
                                        " ",
                                        "\\\"",
                                        "\\\\",
                                        "\\/",
                                        "\\b",
                                        "\\f",
                                        "\\n",
                                        "\\r",
                                        "\\t",
                                        "\\u00e9",
                                        "\\u20AC",
                                        "\\ud83d\\ude00",
                                        "\xc3\xa9",
                                        "\xe2\x82\xac",
                                        "\xf0\x9f\x98\x80",
                                        "{",
                                        "]",
                                        ":",
                                        ","};
        s += '"';
        for (int n = pick(6); n > 0; --n) s += kPieces[pick(int(std::size(kPieces)))];
        s += '"';
    }

    std::mt19937 rng_;
};

}  // namespace

class TestJsonPrefix : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void table_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<int>("expected");  // as judge()
        const auto row = [](const char* name, const char* text, int expected) {
            QTest::newRow(name) << QByteArray(text) << expected;
        };
        row("empty", "", 0);
        row("whitespace", " \t\r\n", 0);
        row("open", "{", 0);
        row("empty object", "{}", 1);
        row("surrounding whitespace", " \n{ } \r\n\t", 1);
        row("top-level array", "[]", -1);
        row("top-level string", "\"a\"", -1);
        row("top-level number", "1", -1);
        row("top-level literal", "true", -1);
        row("after close", "{} x", -1);
        row("second object", "{}{}", -1);
        row("key must be string", "{a", -1);
        row("key then colon", "{\"a\"", 0);
        row("missing colon", "{\"a\" 1", -1);
        row("trailing comma", "{\"a\":1,}", -1);
        row("leading comma", "{,", -1);
        row("nested", "{\"a\":[1,{\"b\":[[],{}]},\"x\"],\"c\":{}}", 1);
        row("array trailing comma", "{\"a\":[1,]}", -1);
        row("array open", "{\"a\":[", 0);
        row("mismatched close", "{\"a\":[}", -1);
        row("mismatched close 2", "{\"a\":{]", -1);
        row("zero", "{\"n\":0}", 1);
        row("minus zero", "{\"n\":-0}", 1);
        row("exponent", "{\"n\":1e5}", 1);
        row("fraction exponent", "{\"n\":1.5E-3}", 1);
        row("signed exponent", "{\"n\":-12.25e+10}", 1);
        row("leading zero", "{\"n\":01", -1);
        row("minus leading zero", "{\"n\":-01", -1);
        row("bare minus", "{\"n\":-}", -1);
        row("dot first", "{\"n\":.5", -1);
        row("dot without digits", "{\"n\":1.}", -1);
        row("exponent without digits", "{\"n\":1e}", -1);
        row("exponent sign without digits", "{\"n\":1e+}", -1);
        row("plus", "{\"n\":+1", -1);
        row("number prefix", "{\"n\":1.5e-", 0);
        row("large exponent", "{\"n\":1e299}", 1);
        row("exponent leading zeros", "{\"n\":1e0005}", 1);
        row("tiny", "{\"n\":1e-99999}", 1);
        row("too large for a double", "{\"n\":1e300", -1);
        row("too large with digits", "{\"n\":12.5e299", -1);
        row("true", "{\"t\":true,\"f\":false,\"n\":null}", 1);
        row("literal prefix", "{\"t\":tr", 0);
        row("bad literal", "{\"t\":tru3", -1);
        row("capital literal", "{\"t\":True", -1);
        row("escapes", "{\"s\":\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"}", 1);
        row("bad escape", "{\"s\":\"\\x", -1);
        row("unicode escape", "{\"s\":\"\\u00E9\\u20ac\"}", 1);
        row("short unicode escape", "{\"s\":\"\\u12\"", -1);
        row("non-hex unicode", "{\"s\":\"\\u12G4", -1);
        row("surrogate pair", "{\"s\":\"\\uD83D\\uDE00\"}", 1);
        row("lone high surrogate", "{\"s\":\"\\uD83D\"", -1);
        row("high then bmp escape", "{\"s\":\"\\uD83D\\u0041", -1);
        row("lone low surrogate", "{\"s\":\"\\uDC", -1);
        row("high surrogate prefix", "{\"s\":\"\\uD8", 0);
        row("control char in string", "{\"s\":\"a\nb\"}", -1);
        row("tab in string", "{\"s\":\"a\tb\"}", -1);
        row("DEL in string", "{\"s\":\"\x7f\"}", 1);
        row("utf-8", "{\"s\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}", 1);
        row("utf-8 key", "{\"\xe6\x97\xa5\":1}", 1);
        row("utf-8 prefix", "{\"s\":\"\xe2\x82", 0);
        row("lone continuation", "{\"s\":\"\x80", -1);
        row("overlong", "{\"s\":\"\xc0\xaf", -1);
        row("overlong three", "{\"s\":\"\xe0\x80", -1);
        row("utf-16 surrogate in utf-8", "{\"s\":\"\xed\xa0\x80", -1);
        row("above U+10FFFF", "{\"s\":\"\xf4\x90", -1);
        row("truncated character", "{\"s\":\"\xc3\"", -1);
        row("utf-8 outside strings", "{\xc3\xa9", -1);
        row("whitespace everywhere", "{ \"a\" : [ 1 , 2 ] , \"b\" : { } }", 1);
    }

    void table() {
        QFETCH(QByteArray, text);
        QFETCH(int, expected);
        const std::string s = text.toStdString();
        QCOMPARE(judge(s), expected);
        if (expected == 1) QVERIFY(oracle_object(s));
    }

    void accepts_leaves_state() {
        JsonPrefix j;
        QVERIFY(j.feed("{\"a\":"));
        QVERIFY(j.accepts("1}"));
        QVERIFY(!j.accepts("}"));
        QVERIFY(j.feed("[true]}"));
        QVERIFY(j.complete());
        QVERIFY(!j.feed("x"));
        QVERIFY(j.dead());
        QVERIFY(!j.complete());
    }

    // Every prefix of a valid document is accepted; it is complete exactly once its closing
    // brace has been read.
    void random_documents_split_everywhere() {
        for (uint32_t seed = 1; seed <= 400; ++seed) {
            const std::string doc = Generator(seed).document();
            QVERIFY2(oracle_object(doc), doc.c_str());
            const size_t close = doc.find_last_of('}');
            JsonPrefix j;
            for (size_t i = 0; i < doc.size(); ++i) {
                QVERIFY2(j.feed(doc.substr(i, 1)), (doc + " at byte " + std::to_string(i)).c_str());
                QCOMPARE(j.complete(), i >= close);
            }
        }
    }

    // One byte replaced anywhere: the verdict matches nlohmann::json's, both ways.
    void random_corruptions_match_oracle() {
        std::mt19937 rng(7);
        int rejected = 0;
        for (uint32_t seed = 1; seed <= 400; ++seed) {
            const std::string doc = Generator(seed).document();
            for (int k = 0; k < 20; ++k) {
                std::string bad = doc;
                bad[rng() % bad.size()] = char(rng() % 256);
                const bool ours = judge(bad) == 1;
                // Numbers from 1e300 up are refused (a double may not hold them), so a third
                // exponent digit is the one disagreement allowed.
                static const std::regex big(R"([eE]\+?[0-9]{3})");
                if (!ours && std::regex_search(bad, big)) continue;
                QVERIFY2(ours == oracle_object(bad), bad.c_str());
                rejected += ours ? 0 : 1;
            }
        }
        QVERIFY(rejected > 1000);  // most corruptions break the document
    }

    // Random bytes drawn only from what the state accepts never reach a dead end: from any
    // accepted prefix, some byte is always accepted.
    void no_dead_ends() {
        std::mt19937 rng(11);
        for (int run = 0; run < 300; ++run) {
            JsonPrefix j;
            for (int n = 0; n < 200 && !j.complete(); ++n) {
                std::string next;
                for (int tries = 0; tries < 64 && next.empty(); ++tries) {
                    const std::string c(1, char(rng() % 256));
                    if (j.accepts(c)) next = c;
                }
                for (int b = 0; b < 256 && next.empty(); ++b)
                    if (j.accepts(std::string(1, char(b)))) next = std::string(1, char(b));
                QVERIFY(!next.empty());
                QVERIFY(j.feed(next));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestJsonPrefix)
#include "test_json_prefix.moc"
