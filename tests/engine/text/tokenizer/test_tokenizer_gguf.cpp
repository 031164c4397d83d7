// Tokenizer::from_gguf on a hand-made vocabulary (tiny_vocab.h): merges in rank order,
// added and special tokens, parse_special, NFC, invalid UTF-8, decoding, errors.
#include <QtTest>

#include <atomic>
#include <thread>
#include <vector>

#include "engine/gguf/reader.h"
#include "engine/text/tokenizer.h"
#include "support/temp_dir.h"
#include "tiny_vocab.h"

using niwa::text::Tokenizer;
using Ids = QList<int32_t>;  // QCOMPARE reports the first index that differs
using Vec = std::vector<int32_t>;
namespace tiny = niwa::test::tiny;

namespace {

Ids bytes_of(std::string_view s) {
    Ids ids;
    for (char c : s) ids.push_back(static_cast<unsigned char>(c));  // ids 0..255 are the bytes
    return ids;
}

Ids cat(std::initializer_list<Ids> parts) {
    Ids out;
    for (const Ids& p : parts) out += p;
    return out;
}

Ids as_list(const Vec& v) {
    return Ids(v.begin(), v.end());
}

}  // namespace

class TestTokenizerGguf : public QObject {
    Q_OBJECT

    niwa::test::TempDir dir_;
    std::optional<Tokenizer> tok_;

    Tokenizer load(const std::string& pre, const std::string& model = "gpt2") {
        const std::string path = dir_.file(QString::fromStdString(pre + "-" + model + ".gguf")).toStdString();
        niwa::test::write_tiny_vocab(path, pre, model);
        const auto reader = niwa::gguf::Reader::open(path);
        return Tokenizer::from_gguf(reader);
    }

    Ids enc(std::string_view text, bool parse_special = true) const {
        return as_list(tok_->encode(text, parse_special));
    }

private slots:
    void initTestCase() { tok_.emplace(load("qwen35")); }

    void vocabularyShape() {
        QCOMPARE(tok_->n_vocab(), tiny::kVocab);
        QCOMPARE(tok_->token_text(tiny::kSpaceW), std::string_view("\xC4\xA0w"));  // "Ġw"
        QCOMPARE(tok_->token_text(' '), std::string_view("\xC4\xA0"));
        QCOMPARE(tok_->find_token("hello"), std::optional<int32_t>(tiny::kHello));
        QCOMPARE(tok_->find_token("<|im_end|>"), std::optional<int32_t>(tiny::kImEnd));
        QVERIFY(!tok_->find_token("hello world"));
        QCOMPARE(tok_->pre_tokenizer(), std::string("qwen35"));
    }

    void mergesApplyInRankOrder() {
        QCOMPARE(enc("hello"), Ids({tiny::kHello}));
        QCOMPARE(enc("hell"), Ids({tiny::kHell}));
        QCOMPARE(enc("helo"), Ids({tiny::kHe, 'l', 'o'}));
        // "lll": the leftmost "l l" merges first.
        QCOMPARE(enc("lll"), Ids({tiny::kLl, 'l'}));
        QCOMPARE(enc("hello world"), Ids({tiny::kHello, tiny::kSpaceW, 'o', 'r', 'l', 'd'}));
        // One pre-token holding the word twice: both halves merge alike.
        QCOMPARE(enc("hellohello"), Ids({tiny::kHello, tiny::kHello}));
        QCOMPARE(enc(""), Ids());
    }

    void cachedWordsGiveTheSameIds() {
        for (int i = 0; i < 3; ++i)
            QCOMPARE(enc("hello hello hello"), Ids({tiny::kHello, ' ', tiny::kHello, ' ', tiny::kHello}));
    }

    void concurrentEncodesAgree() {
        // The word cache is shared by all threads: results must not depend on who filled it.
        std::vector<std::string> words;
        for (int i = 0; i < 2000; ++i) {
            std::string w;
            for (int k = i; k > 0; k /= 4) w.push_back("helo"[k % 4]);
            words.push_back(" " + w);
        }
        const Tokenizer fresh = load("qwen35");  // an empty cache, filled by the threads below
        std::atomic<int> bad{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t)
            threads.emplace_back([&, t] {
                for (size_t i = 0; i < words.size(); ++i) {
                    const auto& w = words[(i * 7 + static_cast<size_t>(t) * 131) % words.size()];
                    if (fresh.encode(w) != tok_->encode(w)) ++bad;
                }
            });
        for (auto& th : threads) th.join();
        QCOMPARE(bad.load(), 0);
    }

    void specialTokensAreAtomic() {
        QCOMPARE(enc("<|im_start|>hello<|im_end|>"), Ids({tiny::kImStart, tiny::kHello, tiny::kImEnd}));
        QCOMPARE(enc("x<think>y"), Ids({'x', tiny::kThink, 'y'}));
        // Longest match first: "<|im_start|>" beats its prefix "<|im".
        QCOMPARE(enc("<|im_start|><|im"), Ids({tiny::kImStart, tiny::kIm}));
        QCOMPARE(enc("<|im_end"), cat({{tiny::kIm}, bytes_of("_end")}));
    }

    void parseSpecialFalseTreatsSpecialTextAsText() {
        // Control tokens become ordinary text, split as "<|" "_start"... by the pre-tokenizer;
        // the user-defined "<|im" is still matched whole.
        QCOMPARE(enc("<|im_start|>hello", false), cat({{tiny::kIm}, bytes_of("_start|>"), {tiny::kHello}}));
        QCOMPARE(enc("<|endoftext|>", false), bytes_of("<|endoftext|>"));
        QCOMPARE(enc("<think>", false), Ids({tiny::kThink}));
    }

    void textIsNfcNormalised() {
        QCOMPARE(enc("e\xCC\x81"), Ids({0xC3, 0xA9}));     // e + U+0301 -> U+00E9
        QCOMPARE(enc("\xE2\x84\xAB"), Ids({0xC3, 0x85}));  // U+212B ANGSTROM SIGN -> U+00C5
    }

    void invalidUtf8ReadsAsReplacementCharacter() {
        QCOMPARE(enc("\xFF"), Ids({0xEF, 0xBF, 0xBD}));
        QCOMPARE(enc("a\xE3\x81"), Ids({'a', 0xEF, 0xBF, 0xBD}));
    }

    void decodeMapsSymbolsBackToText() {
        QCOMPARE(tok_->decode(Vec({tiny::kImStart, tiny::kHello, tiny::kSpaceW, 'o', tiny::kImEnd})),
                 std::string("<|im_start|>hello wo<|im_end|>"));
        QCOMPARE(tok_->decode(Vec({tiny::kImStart, tiny::kHello, tiny::kThink, tiny::kImEnd}), true),
                 std::string("hello<think>"));
        QCOMPARE(tok_->decode(Vec({0xE6, 0x97, 0xA5})), std::string("日"));
        QCOMPARE(tok_->decode(Vec({0xE6, 0x97})), std::string("\xEF\xBF\xBD"));
        // An added token ends a byte run: the bytes either side do not join up.
        QCOMPARE(tok_->decode(Vec({0xE6, tiny::kThink, 0x97, 0xA5})),
                 std::string("\xEF\xBF\xBD<think>\xEF\xBF\xBD\xEF\xBF\xBD"));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, tok_->decode(Vec({tiny::kVocab})));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, tok_->decode(Vec({-1})));
    }

    void specialAndEos() {
        QVERIFY(tok_->is_special(tiny::kImStart));
        QVERIFY(tok_->is_special(tiny::kEndOfText));
        QVERIFY(!tok_->is_special(tiny::kThink));
        QVERIFY(!tok_->is_special(tiny::kHello));
        QVERIFY(!tok_->is_special(tiny::kVocab));
        QCOMPARE(as_list(tok_->eos_ids()), Ids({tiny::kImEnd, tiny::kEndOfText}));
    }

    void qwen2PatternLoads() { QCOMPARE(load("qwen2").pre_tokenizer(), std::string("qwen2")); }

    void unknownPreTokenizerIsAClearError() {
        try {
            load("llama-bpe");
            QFAIL("an unknown tokenizer.ggml.pre was accepted");
        } catch (const std::runtime_error& e) {
            const QString msg = e.what();
            QVERIFY2(msg.contains("llama-bpe") && msg.contains("qwen2") && msg.contains("qwen35") &&
                         msg.contains("tokenizer.ggml.pre"),
                     qPrintable(msg));
        }
    }

    void unknownModelIsAClearError() {
        try {
            load("qwen35", "llama");
            QFAIL("tokenizer.ggml.model 'llama' was accepted");
        } catch (const std::runtime_error& e) {
            QVERIFY2(QString(e.what()).contains("'llama'"), e.what());
        }
    }
};

QTEST_GUILESS_MAIN(TestTokenizerGguf)
#include "test_tokenizer_gguf.moc"
