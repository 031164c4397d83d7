// The pre-tokenizer split, against splits worked out by hand from the patterns in MODEL.md
// (qwen35) and Qwen3's tokenizer.json (qwen2). The qwen35 cases are chosen where \p{M}
// changes the split; the conformance test covers qwen2 on a large corpus.
#include <QtTest>

#include "engine/text/pretokenizer.h"

using niwa::text::PreTokenizer;
using Pieces = QList<QString>;

namespace {

Pieces split(const char* name, const char* utf8) {
    Pieces out;
    for (const std::string& p : PreTokenizer::by_name(name).split(utf8)) out << QString::fromStdString(p);
    return out;
}

Pieces P(std::initializer_list<const char*> pieces) {
    Pieces out;
    for (const char* p : pieces) out << QString::fromUtf8(p);
    return out;
}

}  // namespace

class TestPreTokenizer : public QObject {
    Q_OBJECT

private slots:
    void commonSplits_data() {
        QTest::addColumn<QString>("pre");
        for (const char* pre : {"qwen2", "qwen35"}) QTest::newRow(pre) << pre;
    }
    void commonSplits() {
        QFETCH(QString, pre);
        const std::string name = pre.toStdString();
        const char* n = name.c_str();
        QCOMPARE(split(n, "Hello world"), P({"Hello", " world"}));
        QCOMPARE(split(n, "I'M here, you'Re"), P({"I", "'M", " here", ",", " you", "'Re"}));
        QCOMPARE(split(n, "abc123"), P({"abc", "1", "2", "3"}));
        QCOMPARE(split(n, "  foo"), P({" ", " foo"}));  // the last space goes with the word
        QCOMPARE(split(n, "a\r\n\r\nb"), P({"a", "\r\n\r\n", "b"}));
        QCOMPARE(split(n, "x  \n  y"), P({"x", "  \n", " ", " y"}));
        QCOMPARE(split(n, "ok!!\n"), P({"ok", "!!\n"}));
        QCOMPARE(split(n, "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x80\x82"), P({"日本語", "。"}));
        QCOMPARE(split(n, "end   "), P({"end", "   "}));
        QCOMPARE(split(n, ""), P({}));
    }

    void combiningMarksJoinLettersOnlyInQwen35() {
        // Decomposed é: U+0301 is \p{Mn}. qwen2 leaves it to the punctuation branch.
        QCOMPARE(split("qwen2", "cafe\xCC\x81 ok"), P({"cafe", "\xCC\x81", " ok"}));
        QCOMPARE(split("qwen35", "cafe\xCC\x81 ok"), P({"cafe\xCC\x81", " ok"}));
        // Devanagari नमस्ते: virama U+094D and vowel sign E U+0947 are marks. In qwen2 the
        // virama becomes the optional prefix of the next letter run.
        QCOMPARE(split("qwen2", "नमस्ते"), P({"नमस", "्त", "े"}));
        QCOMPARE(split("qwen35", "नमस्ते"), P({"नमस्ते"}));
        // Thai กิน: sara i U+0E34 is a mark.
        QCOMPARE(split("qwen2", "กิน"), P({"ก", "ิน"}));
        QCOMPARE(split("qwen35", "กิน"), P({"กิน"}));
        // A mark right after a space: qwen35 reads " \u0301x" as one word.
        QCOMPARE(split("qwen2", " \xCC\x81x"), P({" \xCC\x81", "x"}));
        QCOMPARE(split("qwen35", " \xCC\x81x"), P({" \xCC\x81x"}));
        // Marks are not punctuation in qwen35: "!" + U+20E3 splits before the mark's letter run.
        QCOMPARE(split("qwen2", "!\xE2\x83\xA3"), P({"!\xE2\x83\xA3"}));
        QCOMPARE(split("qwen35", "!\xE2\x83\xA3"), P({"!\xE2\x83\xA3"}));
        QCOMPARE(split("qwen35", "1\xE2\x83\xA3"), P({"1", "\xE2\x83\xA3"}));
    }

    void whitespaceIsUnicodeWhiteSpace() {
        // \s follows Unicode's White_Space (as the Rust tokenizers and llama.cpp do): U+0085
        // is whitespace, U+FEFF is not. (JavaScript's \s is the other way round, which is why
        // the conformance corpus leaves both out.)
        QCOMPARE(split("qwen2",
                       "a\xC2\x85\xC2\x85"
                       "b"),
                 P({"a", "\xC2\x85",
                    "\xC2\x85"
                    "b"}));
        QCOMPARE(split("qwen2",
                       "a\xEF\xBB\xBF\xEF\xBB\xBF"
                       "b"),
                 P({"a", "\xEF\xBB\xBF\xEF\xBB\xBF", "b"}));
        QCOMPARE(split("qwen35", "x\xE3\x80\x80\xE3\x80\x80y"), P({"x", "\xE3\x80\x80", "\xE3\x80\x80y"}));
    }

    void unknownNameIsAnError() {
        try {
            PreTokenizer::by_name("gpt-4o");
            QFAIL("accepted an unknown pre-tokenizer");
        } catch (const std::invalid_argument& e) {
            const QString msg = e.what();
            QVERIFY2(msg.contains("gpt-4o") && msg.contains("qwen2") && msg.contains("qwen35"), e.what());
        }
    }

    void hfRegexesMapToNames() {
        // As written in Qwen3's tokenizer.json and in MODEL.md.
        QCOMPARE(
            PreTokenizer::name_for_hf_regex(
                R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
            std::optional<std::string>("qwen2"));
        QCOMPARE(
            PreTokenizer::name_for_hf_regex(
                R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
            std::optional<std::string>("qwen35"));
        QVERIFY(!PreTokenizer::name_for_hf_regex(
            R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)"));
    }

    void longRunsDoNotExhaustTheMatcher() {
        for (const std::string& s : {std::string(200000, 'a'), std::string(200000, ' '),
                                     std::string(100000, '!'), std::string(100000, '\n')}) {
            size_t total = 0;
            PreTokenizer::by_name("qwen35").split(s, [&](std::string_view p) { total += p.size(); });
            QCOMPARE(total, s.size());
        }
    }
};

QTEST_GUILESS_MAIN(TestPreTokenizer)
#include "test_pretokenizer.moc"
