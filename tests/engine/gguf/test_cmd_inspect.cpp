// `niwa-engine inspect` on files written by the Writer: the text and JSON summaries show the
// values written, shorten long ones, list tensors only on request, and pass reader errors on.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTest>

#include <random>

#include "engine/gguf/writer.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"
#include "tests/engine/gguf/raw_gguf.h"

using namespace niwa::gguf;
using niwa::test::run_engine;

class TestCmdInspect : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void textSummary();
    void jsonSummary();
    void tensorListOnRequest();
    void readerErrorsReachTheUser();

private:
    niwa::test::TempDir dir_;
    QString model_;
    uint32_t block_count_ = 0;
    float rope_theta_ = 0;
    std::vector<std::string> tokens_;
    std::string template_;
};

void TestCmdInspect::initTestCase() {
    std::mt19937_64 rng(909);
    block_count_ = 1 + static_cast<uint32_t>(rng() % 100);
    rope_theta_ = std::uniform_real_distribution<float>(1e5f, 1e7f)(rng);
    for (int i = 0; i < 50; ++i) tokens_.push_back("tok" + std::to_string(rng() % 100000));
    template_ = "{%- for m in messages %}" + std::string(3000, 'x') + "{%- endfor %}";
    Writer w;
    w.add_string("general.architecture", "qwen35");
    w.add_string("general.name", "Test-Bonsai");
    w.add_u32("general.file_type", 7);
    w.add_u32("qwen35.block_count", block_count_);
    w.add_f32("qwen35.rope.freq_base", rope_theta_);
    w.add_i32_array("qwen35.rope.dimension_sections", {11, 11, 10, 0});
    w.add_string_array("tokenizer.ggml.tokens", tokens_);
    w.add_string("tokenizer.chat_template", template_);
    w.add_bool("prism.hadamard.gdn_v_grouped", true);
    std::vector<uint8_t> bytes(34 * 2 * 3);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    w.add_tensor_bytes("token_embd.weight", TensorType::PQ2_0, {256, 3}, bytes);
    w.add_tensor_bytes("output.weight", TensorType::PQ2_0, {256, 3}, bytes);
    w.add_tensor_bytes("output_norm.weight", TensorType::F32, {256}, std::vector<uint8_t>(1024, 0x3f));
    model_ = dir_.file("inspect.gguf");
    w.write(model_.toStdString());
}

void TestCmdInspect::textSummary() {
    const auto r = run_engine({"inspect", "--model", model_});
    QCOMPARE(r.exit_code, 0);
    const QString out = QString::fromUtf8(r.out);
    QVERIFY2(out.contains("architecture: \"qwen35\""), qPrintable(out));
    QVERIFY(out.contains("name: \"Test-Bonsai\""));
    QVERIFY(out.contains("file type: 7"));
    QVERIFY(
        out.contains(QRegularExpression("qwen35.block_count\\s+u32\\s+" + QString::number(block_count_))));
    QVERIFY(out.contains(QRegularExpression("tokenizer.ggml.tokens\\s+arr\\[str\\]\\s+50 items \\[\"" +
                                            QString::fromStdString(tokens_[0]) + "\"")));
    QVERIFY(!out.contains(QString::fromStdString(tokens_[49]) + "\""));  // only the first few
    QVERIFY(out.contains("[11, 11, 10, 0]"));
    QVERIFY(out.contains("bytes)"));            // the chat template is shortened...
    QVERIFY(!out.contains(QString(500, 'x')));  // ...to far less than its 3000 x's
    QVERIFY(out.contains("tensors: 3"));
    QVERIFY(out.contains(QRegularExpression("PQ2_0\\s+2 tensors")));
    QVERIFY(!out.contains("output_norm.weight"));  // no tensor list without --tensors
}

void TestCmdInspect::jsonSummary() {
    const auto r = run_engine({"inspect", "--model", model_, "--json"});
    QCOMPARE(r.exit_code, 0);
    QJsonParseError err;
    const QJsonObject j = QJsonDocument::fromJson(r.out, &err).object();
    QVERIFY2(err.error == QJsonParseError::NoError, qPrintable(err.errorString()));
    QCOMPARE(j["architecture"].toString(), QString("qwen35"));
    QCOMPARE(j["name"].toString(), QString("Test-Bonsai"));
    QCOMPARE(j["file_type"].toInt(), 7);
    QCOMPARE(j["version"].toInt(), 3);
    QCOMPARE(j["tensor_count"].toInt(), 3);
    QCOMPARE(j["tensor_bytes"].toInteger(), qint64(204 + 204 + 1024));
    QCOMPARE(j["tensors_by_type"]["PQ2_0"]["count"].toInt(), 2);
    QCOMPARE(j["tensors_by_type"]["F32"]["bytes"].toInt(), 1024);
    QVERIFY(!j.contains("tensors"));
    const QJsonArray meta = j["metadata"].toArray();
    QCOMPARE(meta.size(), 9);
    QCOMPARE(meta[3]["key"].toString(), QString("qwen35.block_count"));
    QCOMPARE(meta[3]["type"].toString(), QString("u32"));
    QCOMPARE(meta[3]["value"].toInteger(), qint64(block_count_));
    QCOMPARE(meta[4]["value"].toDouble(), double(rope_theta_));
    QCOMPARE(meta[6]["type"].toString(), QString("arr[str]"));
    QCOMPARE(meta[6]["length"].toInt(), 50);
    QCOMPARE(meta[6]["head"][0].toString(), QString::fromStdString(tokens_[0]));
    QCOMPARE(meta[7]["bytes"].toInt(), int(template_.size()));
    QVERIFY(meta[7]["value"].toString().size() < 300);
    QCOMPARE(meta[8]["value"].toBool(), true);
}

void TestCmdInspect::tensorListOnRequest() {
    const auto text = run_engine({"inspect", "--model", model_, "--tensors"});
    QCOMPARE(text.exit_code, 0);
    QVERIFY(QString::fromUtf8(text.out).contains(
        QRegularExpression("output_norm.weight\\s+F32\\s+\\[256\\]\\s+1024")));
    const auto json = run_engine({"inspect", "--model", model_, "--json", "--tensors"});
    QCOMPARE(json.exit_code, 0);
    const QJsonArray tensors = QJsonDocument::fromJson(json.out).object()["tensors"].toArray();
    QCOMPARE(tensors.size(), 3);
    QCOMPARE(tensors[0]["name"].toString(), QString("token_embd.weight"));
    QCOMPARE(tensors[0]["type"].toString(), QString("PQ2_0"));
    QCOMPARE(tensors[0]["shape"].toArray(), (QJsonArray{256, 3}));
    QCOMPARE(tensors[0]["bytes"].toInt(), 204);
    QCOMPARE(tensors[1]["offset"].toInt(), 224);  // 204 bytes padded to 32
}

void TestCmdInspect::readerErrorsReachTheUser() {
    niwa::test::RawGguf raw;
    raw.header(1, 0).tensor_info("blk.0.ffn_up.weight", {128}, 42, 0);
    raw.pad(32).bytes.resize(raw.pos() + 64, 1);
    const QString bad = dir_.file("old-q2.gguf");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(reinterpret_cast<const char*>(raw.bytes.data()), static_cast<qint64>(raw.bytes.size()));
    f.close();
    const auto r = run_engine({"inspect", "--model", bad});
    QCOMPARE(r.exit_code, 1);
    const QString err = QString::fromUtf8(r.err);
    QVERIFY2(err.contains(bad) && err.contains("'blk.0.ffn_up.weight'") && err.contains("type 42") &&
                 err.contains("re-download"),
             qPrintable(err));
    QCOMPARE(run_engine({"inspect", "--model", dir_.file("missing.gguf")}).exit_code, 1);
    QCOMPARE(run_engine({"inspect"}).exit_code, 2);  // --model is required
}

QTEST_APPLESS_MAIN(TestCmdInspect)
#include "test_cmd_inspect.moc"
