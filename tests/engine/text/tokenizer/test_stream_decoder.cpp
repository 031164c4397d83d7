// StreamDecoder: byte tokens that split UTF-8 characters (the tiny vocabulary's ids 0..255
// are single bytes) come out only as whole characters, and the pieces add up to decode().
#include <QtTest>

#include <vector>

#include "engine/gguf/reader.h"
#include "engine/text/stream_decoder.h"
#include "engine/text/tokenizer.h"
#include "support/temp_dir.h"
#include "tiny_vocab.h"

using niwa::text::StreamDecoder;
using niwa::text::Tokenizer;
namespace tiny = niwa::test::tiny;

class TestStreamDecoder : public QObject {
    Q_OBJECT

    std::optional<Tokenizer> tok_;

    // Pushes every id and returns the pieces, the flush last.
    std::vector<std::string> stream(const std::vector<int32_t>& ids, bool skip_special = false) const {
        StreamDecoder d(*tok_, skip_special);
        std::vector<std::string> pieces;
        for (int32_t id : ids) pieces.push_back(d.push(id));
        pieces.push_back(d.flush());
        return pieces;
    }
    static std::string joined(const std::vector<std::string>& pieces) {
        std::string s;
        for (const auto& p : pieces) s += p;
        return s;
    }

private slots:
    void initTestCase() {
        niwa::test::TempDir dir;
        const std::string path = dir.file("tiny.gguf").toStdString();
        niwa::test::write_tiny_vocab(path);
        tok_.emplace(Tokenizer::from_gguf(niwa::gguf::Reader::open(path)));
    }

    void emojiSplitOverFourTokens() {
        // U+1F600 is F0 9F 98 80.
        QCOMPARE(stream({0xF0, 0x9F, 0x98, 0x80}),
                 (std::vector<std::string>{"", "", "", "\xF0\x9F\x98\x80", ""}));
    }

    void kanjiAfterAsciiAndBetweenWholeTokens() {
        // "a" then 日 (E6 97 A5) then "hello" then 本 (E6 9C AC).
        const std::vector<int32_t> ids = {'a', 0xE6, 0x97, 0xA5, tiny::kHello, 0xE6, 0x9C, 0xAC};
        QCOMPARE(stream(ids), (std::vector<std::string>{"a", "", "", "日", "hello", "", "", "本", ""}));
    }

    void piecesConcatenateToDecode() {
        const std::vector<std::vector<int32_t>> cases = {
            {0xE6, 0x97, tiny::kThink, 0xA5, 'x'},             // an added token cuts a character
            {0xF0, 0x9F, tiny::kImStart, 0x98, 0x80},          // a special one too
            {0xC3, 0x28, 0xE2, 0x82, 0xAC, 0xFF, 0xF0, 0x9F},  // invalid bytes, then an unfinished emoji
            {tiny::kHello, tiny::kSpaceW, 'o', 0xE3, 0x81, 0x82},
        };
        for (const auto& ids : cases) {
            QCOMPARE(joined(stream(ids)), tok_->decode(ids));
            QCOMPARE(joined(stream(ids, true)), tok_->decode(ids, true));
        }
    }

    void invalidBytesAtFlushBecomeReplacement() {
        StreamDecoder d(*tok_);
        QCOMPARE(d.push(0xE6), std::string());
        QCOMPARE(d.push(0x97), std::string());
        QCOMPARE(d.flush(), std::string("\xEF\xBF\xBD"));  // one U+FFFD for the unfinished sequence
        QCOMPARE(d.flush(), std::string());
        QCOMPARE(d.push('z'), std::string("z"));
    }

    void invalidBytesMidStreamAreReplacedAtOnce() {
        StreamDecoder d(*tok_);
        QCOMPARE(d.push(0xE6), std::string());
        QCOMPARE(d.push('A'), std::string("\xEF\xBF\xBD"
                                          "A"));
        QCOMPARE(d.push(0xFF), std::string("\xEF\xBF\xBD"));
    }

    void skippedSpecialTokenDoesNotCutACharacter() {
        const std::vector<int32_t> ids = {0xE6, tiny::kImEnd, 0x97, 0xA5};
        QCOMPARE(stream(ids, true), (std::vector<std::string>{"", "", "", "日", ""}));
        QCOMPARE(stream(ids, false), (std::vector<std::string>{"", "\xEF\xBF\xBD<|im_end|>", "\xEF\xBF\xBD",
                                                               "\xEF\xBF\xBD", ""}));
    }
};

QTEST_GUILESS_MAIN(TestStreamDecoder)
#include "test_stream_decoder.moc"
