// The proof that the forward is the model: CPU logits against transformers' Qwen3.5 run on
// the same weights (tests/fixtures/reference, made on the GPU machine by
// tests/fixtures/make_reference.py; tests/fixtures/README.md has the command), and against
// the independent numpy forward on weights this test makes fresh.
#include <QtTest>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <cmath>
#include <random>
#include <set>

#include "engine/model/sequences.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"

using namespace niwa;

namespace {

std::vector<float> engine_logits(const QString& model_path, const std::vector<int32_t>& tokens, int tp = 1) {
    model::ModelConfig c;
    c.tp = tp;
    c.max_context = int(tokens.size()) + 16;
    c.max_step_tokens = 64;  // prefill in several chunks
    auto m = model::Model::open(model_path.toStdString(), c);
    model::Sequences s(*m);
    const int id = s.add();
    return s.feed({{id, tokens}}, true)[0];
}

std::vector<float> read_f32(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray b = f.readAll();
    std::vector<float> v(size_t(b.size()) / sizeof(float));
    std::memcpy(v.data(), b.constData(), v.size() * sizeof(float));
    return v;
}

struct Agreement {
    double rel = INFINITY;  // max |Δ| / max |ref|
    double argmax = 0;      // fraction of rows with the same top token
};

Agreement compare(const std::vector<float>& got, const std::vector<float>& ref, int64_t vocab) {
    Agreement a;
    if (got.size() != ref.size() || ref.empty()) return a;
    double num = 0, den = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        num = std::max(num, std::fabs(double(got[i]) - double(ref[i])));
        den = std::max(den, std::fabs(double(ref[i])));
    }
    a.rel = num / den;
    const size_t rows = ref.size() / size_t(vocab);
    size_t same = 0;
    for (size_t r = 0; r < rows; ++r) {
        auto g = got.begin() + int64_t(r * size_t(vocab)), f = ref.begin() + int64_t(r * size_t(vocab));
        same += std::max_element(g, g + vocab) - g == std::max_element(f, f + vocab) - f;
    }
    a.argmax = double(same) / double(rows);
    return a;
}

}  // namespace

class TestReference : public QObject {
    Q_OBJECT

private slots:
    void matches_transformers() {
        const QDir dir(QStringLiteral(NIWA_SOURCE_DIR) + "/tests/fixtures/reference");
        const QStringList cases = dir.entryList({"*.json"}, QDir::Files, QDir::Name);
        std::set<QString> presets;
        for (const QString& name : cases) {
            QFile f(dir.filePath(name));
            QVERIFY(f.open(QIODevice::ReadOnly));
            const QJsonObject c = QJsonDocument::fromJson(f.readAll()).object();
            QCOMPARE(c["impl"].toString(), QString("transformers"));
            const QJsonObject m = c["manifest_model"].toObject();
            const QString model =
                test::synthetic_model(m["preset"].toString(), m["seed"].toInt(), m["quant"].toString());
            QVERIFY(!model.isEmpty());
            std::vector<int32_t> tokens;
            for (const auto& t : c["tokens"].toArray()) tokens.push_back(int32_t(t.toInt()));
            const int64_t vocab = c["vocab"].toInt();
            const auto ref = read_f32(dir.filePath(c["case"].toString() + ".logits.f32"));
            QCOMPARE(int64_t(ref.size()), int64_t(tokens.size()) * vocab);
            const Agreement a = compare(engine_logits(model, tokens), ref, vocab);
            qInfo("%s: %zu tokens, max|d|/max|ref| = %.3g, argmax agreement %.3f",
                  qPrintable(c["case"].toString()), tokens.size(), a.rel, a.argmax);
            QVERIFY2(a.rel <= 1e-4,
                     qPrintable(QString("%1 differs from transformers by %2 (if mkmodel's generator "
                                        "changed, remake the fixtures: tests/fixtures/README.md)")
                                    .arg(c["case"].toString())
                                    .arg(a.rel)));
            presets.insert(m["preset"].toString());
        }
        QVERIFY2(presets.size() >= 2, "the reference fixtures must cover at least two geometries");
    }

    // Fresh weights every run: the numpy forward in tests/fixtures (float64, written from the
    // transformers conventions) against the engine, unsharded and with --tp 2.
    void matches_numpy_forward_on_fresh_weights() {
        test::TempDir tmp;
        for (const auto& [preset, seed, n] : {std::tuple{"tiny", 11, 100}, std::tuple{"small", 12, 70}}) {
            const QString model = test::synthetic_model(preset, seed);
            QVERIFY(!model.isEmpty());
            std::mt19937 rng{static_cast<uint32_t>(seed)};
            std::vector<int32_t> tokens(static_cast<size_t>(n));
            QStringList ids;
            for (auto& t : tokens) ids << QString::number(t = int32_t(rng() % 1000));
            QProcess py;
            const QString prefix = tmp.file(preset);
            py.start("/usr/bin/python3",
                     {QStringLiteral(NIWA_SOURCE_DIR) + "/tests/fixtures/make_reference.py", "--model", model,
                      "--tokens", ids.join(','), "--out", prefix, "--impl", "numpy"});
            QVERIFY2(py.waitForFinished(300000), "the numpy reference did not finish");
            QVERIFY2(py.exitCode() == 0, py.readAllStandardError().constData());
            const auto ref = read_f32(prefix + ".logits.f32");
            const int64_t vocab = int64_t(ref.size()) / n;
            QVERIFY(vocab > 1000);
            for (int tp : {1, 2}) {
                const Agreement a = compare(engine_logits(model, tokens, tp), ref, vocab);
                qInfo("%s seed %d tp %d: max|d|/max|ref| = %.3g", preset, seed, tp, a.rel);
                QVERIFY2(a.rel <= 1e-4,
                         qPrintable(
                             QString("%1 --tp %2 differs from numpy by %3").arg(preset).arg(tp).arg(a.rel)));
                QVERIFY(a.argmax >= 0.99);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestReference)
#include "test_reference.moc"
