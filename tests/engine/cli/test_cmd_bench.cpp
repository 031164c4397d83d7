// `niwa-engine bench` through the real binary on the CPU backend: its JSON (each decode row's
// time and bytes a step, each prefill row's FLOPs), its table, and its usage errors, which come
// before anything is read or measured.
#include <QtTest>

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "support/engine_process.h"

using namespace niwa;

namespace {

const char* const kParts[] = {"weights", "state", "kv", "activations", "logits"};

QJsonObject parse(const QByteArray& out) {
    QJsonParseError e;
    const QJsonDocument d = QJsonDocument::fromJson(out, &e);
    return e.error == QJsonParseError::NoError ? d.object() : QJsonObject{};
}

}  // namespace

class TestCmdBench : public QObject {
    Q_OBJECT

private:
    QString model_;

private slots:
    void initTestCase() {
        model_ = test::synthetic_model("tiny", 5);
        QVERIFY(!model_.isEmpty());
    }

    void decodeAndPrefillAsJson() {
        const auto r = test::run_engine({"bench", "--model", model_, "--batch", "1,3", "--context", "20",
                                         "--prompt", "0,7,14", "--steps", "3", "--json"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const QJsonObject o = parse(r.out);
        QVERIFY2(!o.isEmpty(), r.out.constData());
        QCOMPARE(o["backend"].toString(), QString("cpu"));
        QCOMPARE(o["model"].toString(), model_);
        QVERIFY(o["kv_pool_tokens"].toInteger() > 0);
        QVERIFY(!o.contains("copy_bandwidth_gb_s"));          // measured on CUDA only
        QCOMPARE(o["logits"].toString(), QString("greedy"));  // each row reduced, as the server does

        const QJsonArray decode = o["decode"].toArray();
        QCOMPARE(decode.size(), 2);
        const QJsonObject one = decode[0].toObject(), three = decode[1].toObject();
        QCOMPARE(one["batch"].toInteger(), 1);
        QCOMPARE(three["batch"].toInteger(), 3);
        for (const QJsonObject& d : {one, three}) {
            QCOMPARE(d["context"].toInteger(), 20);
            const double step_ms = d["step_ms"].toDouble(), tok_s = d["tok_s"].toDouble();
            QVERIFY2(step_ms > 0 && tok_s > 0, "no time measured");
            QVERIFY2(qAbs(tok_s - d["batch"].toDouble() * 1e3 / step_ms) <= 1e-9 * tok_s,
                     "tok/s is not the batch over the step's time");
            const QJsonObject b = d["bytes_per_step"].toObject();
            double parts = 0;
            for (const char* k : kParts) {
                QVERIFY2(b[k].toDouble() > 0, k);
                parts += b[k].toDouble();
            }
            QVERIFY2(qAbs(b["total"].toDouble() - parts) <= 1e-12 * parts, "the total is not its parts' sum");
            // No copy rate on the CPU, so no bound.
            QVERIFY(!d.contains("bound_tok_s") && !d.contains("fraction") && !d.contains("over_bound_ms"));
        }
        // A step reads the weights once whatever the batch; the rest is per sequence.
        const QJsonObject b1 = one["bytes_per_step"].toObject(), b3 = three["bytes_per_step"].toObject();
        QCOMPARE(b3["weights"].toDouble(), b1["weights"].toDouble());
        QVERIFY2(b1["weights"].toDouble() <= double(QFileInfo(model_).size()),
                 "more weight than the file holds");
        for (const char* k : {"state", "kv", "activations", "logits"})
            QCOMPARE(b3[k].toDouble(), 3 * b1[k].toDouble());

        // Prompt 0 means none; FLOPs grow faster than the prompt (attention's scores).
        const QJsonArray prefill = o["prefill"].toArray();
        QCOMPARE(prefill.size(), 2);
        const QJsonObject p7 = prefill[0].toObject(), p14 = prefill[1].toObject();
        QCOMPARE(p7["prompt"].toInteger(), 7);
        QCOMPARE(p14["prompt"].toInteger(), 14);
        for (const QJsonObject& p : {p7, p14}) {
            const double s = p["seconds"].toDouble();
            QVERIFY(s > 0);
            QVERIFY(qAbs(p["tok_s"].toDouble() - p["prompt"].toDouble() / s) <= 1e-9 * p["tok_s"].toDouble());
            QVERIFY(qAbs(p["tflops"].toDouble() - p["flops"].toDouble() / s / 1e12) <=
                    1e-9 * p["tflops"].toDouble());
            QVERIFY(!p.contains("fraction"));
        }
        QVERIFY2(p14["flops"].toDouble() > 2 * p7["flops"].toDouble(),
                 "twice the prompt, not more than twice the FLOPs");
    }

    // The sampler alone on the model's vocabulary: each setting's step on whole rows and from the
    // rows' reductions, and the share of rows whose draws needed the whole row after all (none for
    // greedy rows, none for a peaked row's nucleus; some for a flat row's unfiltered draw).
    void samplerAsJson() {
        const auto r = test::run_engine({"bench", "--model", model_, "--sampler", "--batch", "3", "--json"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const QJsonArray rows = parse(r.out)["sample"].toArray();
        QCOMPARE(rows.size(), 8);  // two shapes of row, four settings
        for (const QJsonValue& v : rows) {
            const QJsonObject s = v.toObject();
            const QString what = s["rows"].toString() + " " + s["params"].toString();
            QVERIFY2(s["step_ms"].toDouble() > 0 && s["reduced_step_ms"].toDouble() > 0, qPrintable(what));
            const double whole = s["reduced_rows_drawn_whole"].toDouble();
            QVERIFY2(whole >= 0 && whole <= 1, qPrintable(what));
            if (s["params"].toString() == "greedy" ||
                (s["rows"].toString() == "peaked" && s["params"].toString() == "T0.7 top_p0.9"))
                QVERIFY2(whole == 0, qPrintable(what));
            if (s["rows"].toString() == "flat" && s["params"].toString() == "T1.0")
                QVERIFY2(whole > 0, qPrintable(what));
        }
    }

    void printsATableWithoutJson() {
        const auto r = test::run_engine(
            {"bench", "--model", model_, "--batch", "2", "--context", "5", "--prompt", "4", "--steps", "2"});
        QVERIFY2(r.exit_code == 0, r.err.constData());
        const QList<QByteArray> lines = r.out.trimmed().split('\n');
        QCOMPARE(lines.size(), 3);
        QVERIFY2(lines[0].startsWith(model_.toUtf8() + " on cpu"), lines[0].constData());
        QVERIFY2(lines[1].simplified().startsWith("decode batch 2 ctx 5 "), lines[1].constData());
        QVERIFY2(lines[1].contains("tok/s") && lines[1].contains("GB/step"), lines[1].constData());
        QVERIFY2(lines[2].simplified().startsWith("prefill prompt 4 "), lines[2].constData());
    }

    void usageErrorsSayWhatToFix() {
        struct Bad {
            QStringList args;
            int exit_code;
            const char* says;
        };
        const Bad bad[] = {
            {{"--batch", "0"}, 2, "--batch sizes must be 1..4096"},
            {{"--batch", "1,x"}, 2, "--batch"},
            {{"--prompt", "-5"}, 2, "--prompt lengths must be positive"},
            {{"--steps", "0"}, 2, "--steps >= 1"},
            {{"--kernels"}, 2, "--kernels needs --backend cuda"},
            {{"--all-reduce", "--tp", "1"}, 2, "--tp 2 or more"},
            {{"--backend", "tpu"}, 2, "--backend must be cpu or cuda"},
            {{"--logits", "all"}, 2, "--logits all: greedy, sampled or whole"},
            {{"--bogus", "1"}, 2, "--bogus"},
        };
        for (const Bad& b : bad) {
            const auto r = test::run_engine(QStringList{"bench", "--model", model_} + b.args);
            const QString what = b.args.join(' ');
            QVERIFY2(r.exit_code == b.exit_code,
                     qPrintable(what + ": exit " + QString::number(r.exit_code) + ", " + r.err));
            QVERIFY2(r.err.contains(b.says), qPrintable(what + ": " + r.err));
            QVERIFY2(r.out.isEmpty(), qPrintable(what + " printed before its error: " + r.out));
        }
        const QString missing = model_ + ".missing";
        const auto r = test::run_engine({"bench", "--model", missing, "--batch", "1", "--prompt", "0"});
        QCOMPARE(r.exit_code, 1);
        QVERIFY2(r.err.contains(missing.toUtf8()), r.err.constData());
    }
};

QTEST_GUILESS_MAIN(TestCmdBench)
#include "test_cmd_bench.moc"
