// `niwa-engine tokenize`: ids as JSON, --detokenize, --no-special, --bench --json, errors.
#include <QtTest>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "support/engine_process.h"
#include "support/temp_dir.h"
#include "tiny_vocab.h"

using niwa::test::run_engine;
namespace tiny = niwa::test::tiny;

class TestCmdTokenize : public QObject {
    Q_OBJECT

    niwa::test::TempDir dir_;
    QString model_;

private slots:
    void initTestCase() {
        model_ = dir_.file("tiny.gguf");
        niwa::test::write_tiny_vocab(model_.toStdString());
    }

    void textToIds() {
        const auto r = run_engine({"tokenize", "--model", model_, "--text", "<|im_start|>hello world"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QCOMPARE(r.out.trimmed(), QByteArray(R"({"ids":[261,259,260,111,114,108,100]})"));
    }

    void noSpecial() {
        const auto r = run_engine({"tokenize", "--model", model_, "--text", "<|endoftext|>", "--no-special"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QCOMPARE(r.out.trimmed(),
                 QByteArray(R"({"ids":[60,124,101,110,100,111,102,116,101,120,116,124,62]})"));
    }

    void idsToText() {
        const auto r = run_engine({"tokenize", "--model", model_, "--detokenize", "261,259,260,111,262"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        QCOMPARE(r.out, QByteArray("<|im_start|>hello wo<|im_end|>"));
        const auto bad = run_engine({"tokenize", "--model", model_, "--detokenize", "1,266"});
        QCOMPARE(bad.exit_code, 2);
        QVERIFY2(bad.err.contains("266"), bad.err.constData());
    }

    void benchPrintsJson() {
        QFile f(dir_.file("text.txt"));
        QVERIFY(f.open(QIODevice::WriteOnly));
        const QByteArray text = QByteArray("hello world 日本語のテキスト\n").repeated(1000);
        f.write(text);
        f.close();
        const auto r = run_engine({"tokenize", "--model", model_, "--bench", f.fileName(), "--json"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const QJsonObject o = QJsonDocument::fromJson(r.out).object();
        QCOMPARE(o["bytes"].toInteger(), qint64(text.size()));
        // Per line: hello, Ġw o r l d, Ġ, 8 kanji/kana of 3 bytes each, \n = 1+5+1+24+1 tokens.
        QCOMPARE(o["tokens"].toInteger(), qint64(32 * 1000));
        QVERIFY(o["seconds"].toDouble() > 0);
        QVERIFY(o["mb_per_s"].toDouble() > 0);
    }

    void unknownPreIsReported() {
        const QString bad = dir_.file("bad.gguf");
        niwa::test::write_tiny_vocab(bad.toStdString(), "deepseek-llm");
        const auto r = run_engine({"tokenize", "--model", bad, "--text", "x"});
        QCOMPARE(r.exit_code, 1);
        QVERIFY2(r.err.contains("deepseek-llm") && r.err.contains("qwen35"), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCmdTokenize)
#include "test_cmd_tokenize.moc"
