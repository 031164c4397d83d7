// The synthetic vocabulary: GPT-2 byte order, a BPE trainer whose merges are checked by hand
// on a small corpus, merges that compose into tokens, and the special tokens at their ids
// (right after the learned tokens, or at Qwen's real ids for the 27b preset).
#include <QTest>

#include <map>
#include <set>
#include <unordered_map>

#include "engine/model/synthetic_corpus.h"
#include "engine/model/synthetic_vocab.h"
#include "engine/text/byte_level.h"

using namespace niwa;
using model::SyntheticVocab;
using model::TokenType;

namespace {

// Plain rank-ordered BPE over one pre-token's symbols (what a tokenizer does with merges).
std::vector<std::string> bpe(const std::string& piece, const std::unordered_map<std::string, int>& rank) {
    std::vector<std::string> syms;
    for (char c : piece) syms.push_back(text::byte_level_symbols()[uint8_t(c)]);
    for (;;) {
        int best = -1;
        size_t at = 0;
        for (size_t i = 0; i + 1 < syms.size(); ++i) {
            auto it = rank.find(syms[i] + " " + syms[i + 1]);
            if (it != rank.end() && (best < 0 || it->second < best)) best = it->second, at = i;
        }
        if (best < 0) return syms;
        syms[at] += syms[at + 1];
        syms.erase(syms.begin() + long(at) + 1);
    }
}

}  // namespace

class TestSyntheticVocab : public QObject {
    Q_OBJECT

private slots:
    void byte_order_is_gpt2s() {
        const auto order = model::byte_vocab_order();
        QCOMPARE(order.size(), size_t(256));
        QCOMPARE(std::set<uint8_t>(order.begin(), order.end()).size(), size_t(256));
        QCOMPARE(order[0], uint8_t('!'));
        QCOMPARE(order[93], uint8_t('~'));
        QCOMPARE(order[188], uint8_t(0));         // GPT-2 id 188 is "Ā", byte 0
        QCOMPARE(order[188 + 32], uint8_t(' '));  // id 220 is "Ġ"
    }

    void trainer_merges_the_most_frequent_pairs() {
        // Pieces: "low" " low" " low" " lower" " lowest". (l,o) and (o,w) both occur 5 times;
        // the tie goes to the pair of lower ids ('l' < 'o').
        const auto m = model::train_bpe("low low low lower lowest", 100);
        QCOMPARE(m.merges, (std::vector<std::string>{"l o", "lo w", "Ġ low", "Ġlow e"}));
        QCOMPARE(m.tokens.size(), size_t(260));
        QCOMPARE(m.tokens[256], std::string("lo"));
        QCOMPARE(m.tokens[259], std::string("Ġlowe"));
        QCOMPARE(model::train_bpe("low low low lower lowest", 2).merges.size(), size_t(2));
    }

    void vocabulary_is_consistent() {
        const SyntheticVocab v = model::synthetic_vocab();
        QCOMPARE(v.tokens.size(), v.types.size());
        QCOMPARE(v.tokens.size() % 64, size_t(0));
        std::unordered_map<std::string, int> id;
        for (size_t i = 0; i < v.tokens.size(); ++i)
            QVERIFY2(id.emplace(v.tokens[i], int(i)).second, v.tokens[i].c_str());
        for (size_t i = 0; i < 256; ++i)
            QCOMPARE(v.tokens[i], text::byte_level_symbols()[model::byte_vocab_order()[i]]);

        const int n_learned = v.endoftext_id;
        QVERIFY2(n_learned >= 1500 && n_learned <= 2500, qPrintable(QString::number(n_learned)));
        std::set<std::string> produced;
        std::unordered_map<std::string, int> rank;
        for (const std::string& merge : v.merges) {
            const size_t space = merge.find(' ');
            QVERIFY(space != std::string::npos && merge.find(' ', space + 1) == std::string::npos);
            const std::string left = merge.substr(0, space), right = merge.substr(space + 1);
            QVERIFY2(id.count(left) && id.at(left) < n_learned, merge.c_str());
            QVERIFY2(id.count(right) && id.at(right) < n_learned, merge.c_str());
            QVERIFY2(id.count(left + right) && id.at(left + right) < n_learned, merge.c_str());
            QVERIFY2(rank.emplace(merge, int(rank.size())).second, merge.c_str());
            produced.insert(left + right);
        }
        for (int i = 256; i < n_learned; ++i) {
            QVERIFY2(produced.count(v.tokens[size_t(i)]), v.tokens[size_t(i)].c_str());
            QCOMPARE(v.types[size_t(i)], int32_t(TokenType::Normal));
        }

        // The merges compress text like the corpus: frequent words become single tokens, and
        // Japanese clauses (one pre-token each) a handful.
        for (const std::string piece : {" office", " model", " the", " request", "サーバー"}) {
            const auto tokens = bpe(piece, rank);
            QVERIFY2(tokens.size() == 1 && id.count(tokens[0]), piece.c_str());
        }
        for (const std::string piece :
             {"会議は午前十時から始まります", "日本語と英語のどちらでも質問できます"}) {
            const auto tokens = bpe(piece, rank);
            for (const auto& t : tokens) QVERIFY(id.count(t));
            QVERIFY2(tokens.size() <= 5, piece.c_str());
        }
    }

    void specials_follow_the_learned_tokens() {
        const SyntheticVocab v = model::synthetic_vocab();
        const auto& specials = model::qwen_special_tokens();
        QCOMPARE(specials.size(), size_t(26));
        for (size_t i = 0; i < specials.size(); ++i) {
            const auto at = size_t(v.endoftext_id) + i;
            QCOMPARE(v.tokens[at], specials[i]);
            const bool bar = specials[i].rfind("<|", 0) == 0;
            QCOMPARE(v.types[at], int32_t(bar ? TokenType::Control : TokenType::UserDefined));
        }
        QCOMPARE(v.tokens[size_t(v.im_start_id)], std::string("<|im_start|>"));
        QCOMPARE(v.tokens[size_t(v.im_end_id)], std::string("<|im_end|>"));
        for (size_t i = size_t(v.endoftext_id) + 26; i < v.tokens.size(); ++i) {
            QCOMPARE(v.tokens[i], "[PAD" + std::to_string(i) + "]");
            QCOMPARE(v.types[i], int32_t(TokenType::Unused));
        }
    }

    void the_27b_vocabulary_has_qwens_ids() {
        const SyntheticVocab v = model::synthetic_vocab(248044, 248320);
        QCOMPARE(v.tokens.size(), size_t(248320));
        QCOMPARE(v.endoftext_id, 248044);
        QCOMPARE(v.im_end_id, 248046);
        const std::map<size_t, std::string> expected = {
            {248044, "<|endoftext|>"},    {248045, "<|im_start|>"},    {248046, "<|im_end|>"},
            {248053, "<|vision_start|>"}, {248054, "<|vision_end|>"},  {248055, "<|vision_pad|>"},
            {248056, "<|image_pad|>"},    {248057, "<|video_pad|>"},   {248058, "<tool_call>"},
            {248059, "</tool_call>"},     {248066, "<tool_response>"}, {248067, "</tool_response>"},
            {248068, "<think>"},          {248069, "</think>"},        {248070, "[PAD248070]"},
            {248319, "[PAD248319]"},
        };
        for (const auto& [at, token] : expected) QCOMPARE(v.tokens[at], token);
        const size_t n_learned = model::synthetic_vocab().endoftext_id;
        QCOMPARE(v.tokens[n_learned], std::string("<|niwa_unused_0|>"));
        QCOMPARE(v.tokens[248043], "<|niwa_unused_" + std::to_string(248043 - n_learned) + "|>");
        for (size_t i = n_learned; i < 248044; ++i) QCOMPARE(v.types[i], int32_t(TokenType::Unused));
        QCOMPARE(std::set<std::string>(v.tokens.begin(), v.tokens.end()).size(), v.tokens.size());
    }
};

QTEST_APPLESS_MAIN(TestSyntheticVocab)
#include "test_synthetic_vocab.moc"
