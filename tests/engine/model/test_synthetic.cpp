// mkmodel end to end: runs the real niwa-engine binary and reads its files back with
// gguf::Reader: layout, hyper-parameters, Prism metadata, determinism across seeds, thread
// counts and quant formats.
#include <QFile>
#include <QTest>

#include <set>

#include "engine/gguf/reader.h"
#include "engine/model/hparams.h"
#include "engine/model/layout.h"
#include "engine/model/prism.h"
#include "engine/model/synthetic.h"
#include "kernels/formats.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"

using namespace niwa;
using niwa::test::run_engine;
using niwa::test::synthetic_model;

namespace {

QByteArray file_bytes(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

// Runs mkmodel with `extra` arguments into `out`; fails the test on a non-zero exit.
bool mkmodel(const QString& preset, int seed, const QString& out, const QStringList& extra = {}) {
    const auto r = run_engine(
        QStringList{"mkmodel", "--preset", preset, "--seed", QString::number(seed), "--out", out} + extra);
    if (r.exit_code != 0) qWarning("mkmodel failed (%d): %s", r.exit_code, r.err.constData());
    return r.exit_code == 0;
}

std::vector<float> dequantize(const gguf::Reader& r, const gguf::TensorInfo& t) {
    std::vector<float> out(size_t(t.n_elements()));
    const auto bytes = r.data(t);
    const uint64_t row = gguf::row_bytes(t.type, t.ne[0]);
    for (int64_t i = 0; i < t.n_elements() / t.ne[0]; ++i)
        kernels::dequantize_row(static_cast<kernels::DType>(t.type), bytes.data() + uint64_t(i) * row,
                                out.data() + i * t.ne[0], t.ne[0]);
    return out;
}

void compare_hparams(const model::HParams& a, const model::HParams& b) {
    QCOMPARE(a.n_layer, b.n_layer);
    QCOMPARE(a.n_nextn, b.n_nextn);
    QCOMPARE(a.n_ctx_train, b.n_ctx_train);
    QCOMPARE(a.n_embd, b.n_embd);
    QCOMPARE(a.n_ff, b.n_ff);
    QCOMPARE(a.n_head, b.n_head);
    QCOMPARE(a.n_head_kv, b.n_head_kv);
    QCOMPARE(a.head_dim, b.head_dim);
    QCOMPARE(a.n_rot, b.n_rot);
    QCOMPARE(a.rope_theta, b.rope_theta);
    QCOMPARE(a.rope_sections, b.rope_sections);
    QCOMPARE(a.rms_eps, b.rms_eps);
    QCOMPARE(a.full_attn_interval, b.full_attn_interval);
    QCOMPARE(a.ssm_conv_kernel, b.ssm_conv_kernel);
    QCOMPARE(a.ssm_d_state, b.ssm_d_state);
    QCOMPARE(a.ssm_n_k_heads, b.ssm_n_k_heads);
    QCOMPARE(a.ssm_n_v_heads, b.ssm_n_v_heads);
    QCOMPARE(a.ssm_d_inner, b.ssm_d_inner);
}

}  // namespace

class TestSynthetic : public QObject {
    Q_OBJECT

private slots:
    void layout_is_exact_data() {
        QTest::addColumn<QString>("preset");
        QTest::addColumn<QString>("quant");
        QTest::newRow("tiny pq2_0") << "tiny"
                                    << "pq2_0";
        QTest::newRow("tiny ptq1_0") << "tiny"
                                     << "ptq1_0";
        QTest::newRow("small pq2_0") << "small"
                                     << "pq2_0";
    }

    void layout_is_exact() {
        QFETCH(QString, preset);
        QFETCH(QString, quant);
        const QString path = synthetic_model(preset, 1, quant);
        QVERIFY(!path.isEmpty());
        const auto r = gguf::Reader::open(path.toStdString());
        const auto hp = model::HParams::from_gguf(r);
        compare_hparams(hp, model::synthetic_preset(preset.toStdString()).hp);
        QCOMPARE(hp.n_vocab % 64, 0);
        QCOMPARE(int64_t(hp.n_vocab), int64_t(r.get_string_array("tokenizer.ggml.tokens").size()));

        const auto quant_type = quant == "pq2_0" ? gguf::TensorType::PQ2_0 : gguf::TensorType::PTQ1_0;
        const auto layout = model::tensor_layout(hp);
        QCOMPARE(r.tensors().size(), layout.size());
        for (size_t i = 0; i < layout.size(); ++i) {
            const model::TensorSpec& want = layout[i];
            const gguf::TensorInfo& got = r.tensors()[i];
            QCOMPARE(got.name, want.name);
            QCOMPARE(size_t(got.n_dims), want.ne.size());
            for (size_t d = 0; d < want.ne.size(); ++d) QCOMPARE(got.ne[d], want.ne[d]);
            const gguf::TensorType expected = want.kind == model::TensorKind::Ternary ? quant_type
                                              : want.kind == model::TensorKind::Dense ? gguf::TensorType::BF16
                                                                                      : gguf::TensorType::F32;
            QCOMPARE(got.type, expected);
        }
        QCOMPARE(r.get_string("general.architecture"), std::string("qwen35"));
        QCOMPARE(r.get_string("general.name"), "Niwa synthetic " + preset.toStdString());
        QCOMPARE(r.get_u32("general.quantization_version"), 2u);
        QCOMPARE(r.get_i32("general.sampling.top_k"), 20);
        QCOMPARE(r.get_f32("general.sampling.top_p"), 0.95f);
        QCOMPARE(r.get_f32("general.sampling.temp"), 1.0f);
        QCOMPARE(r.get_u64("niwa.synthetic.seed"), uint64_t(1));
        QCOMPARE(r.get_string("niwa.synthetic.preset"), preset.toStdString());
    }

    void prism_metadata_matches_the_layout() {
        const auto r = gguf::Reader::open(synthetic_model("tiny").toStdString());
        const auto rot = model::PrismRotation::from_gguf(r);
        QVERIFY(rot.enabled);
        QCOMPARE(rot.block, 256);
        QVERIFY(rot.gdn_v_grouped);
        QCOMPARE(rot.inverse, std::set<std::string>{"token_embd.weight"});
        std::set<std::string> folded;
        std::set<int64_t> widths;
        for (const auto& t : model::tensor_layout(model::HParams::from_gguf(r))) {
            if (t.kind != model::TensorKind::Ternary || t.name == "token_embd.weight") continue;
            folded.insert(t.name);
            widths.insert(t.ne[0]);
        }
        QVERIFY(folded.count("output.weight"));
        QCOMPARE(rot.folded, folded);
        QCOMPARE(widths, (std::set<int64_t>{256, 768, 1024}));
        QCOMPARE(rot.signs.size(), widths.size());
        for (const auto& [width, signs] : rot.signs) {
            QVERIFY(widths.count(width));
            QCOMPARE(int64_t(signs.size()), width);
            int negative = 0;
            for (float s : signs) {
                QVERIFY(s == 1.0f || s == -1.0f);
                negative += s < 0;
            }
            QVERIFY2(negative > width / 4 && negative < 3 * width / 4,
                     "signs should be random, not constant");
        }
    }

    void unrotated_has_no_prism_keys_and_the_same_weights() {
        test::TempDir dir;
        QVERIFY(mkmodel("tiny", 1, dir.file("u.gguf"), {"--unrotated"}));
        const auto u = gguf::Reader::open(dir.file("u.gguf").toStdString());
        const auto rotated = gguf::Reader::open(synthetic_model("tiny").toStdString());
        for (const auto& kv : u.metadata()) QVERIFY2(kv.key.rfind("prism.", 0) != 0, kv.key.c_str());
        QVERIFY(!model::PrismRotation::from_gguf(u).enabled);
        QCOMPARE(u.tensors().size(), rotated.tensors().size());
        for (size_t i = 0; i < u.tensors().size(); ++i) {
            const auto a = u.data(u.tensors()[i]);
            const auto b = rotated.data(rotated.tensors()[i]);
            QVERIFY(std::equal(a.begin(), a.end(), b.begin(), b.end()));
        }
    }

    void same_seed_same_bytes_whatever_the_threads() {
        test::TempDir dir;
        QVERIFY(mkmodel("tiny", 7, dir.file("a.gguf"), {"--threads", "1"}));
        QVERIFY(mkmodel("tiny", 7, dir.file("b.gguf"), {"--threads", "5"}));
        QVERIFY(mkmodel("small", 7, dir.file("c.gguf"), {"--threads", "1"}));
        QVERIFY(mkmodel("small", 7, dir.file("d.gguf"), {"--threads", "3"}));
        const QByteArray a = file_bytes(dir.file("a.gguf"));
        QVERIFY(a.size() > 1000000);
        QCOMPARE(file_bytes(dir.file("b.gguf")), a);
        QCOMPARE(file_bytes(dir.file("c.gguf")), file_bytes(dir.file("d.gguf")));
    }

    void different_seeds_differ_in_every_weight() {
        test::TempDir dir;
        QVERIFY(mkmodel("tiny", 8, dir.file("s8.gguf")));
        QVERIFY(mkmodel("tiny", 9, dir.file("s9.gguf")));
        const auto a = gguf::Reader::open(dir.file("s8.gguf").toStdString());
        const auto b = gguf::Reader::open(dir.file("s9.gguf").toStdString());
        QCOMPARE(a.file_size(), b.file_size());
        for (size_t i = 0; i < a.tensors().size(); ++i) {
            const auto x = a.data(a.tensors()[i]);
            const auto y = b.data(b.tensors()[i]);
            QVERIFY2(!std::equal(x.begin(), x.end(), y.begin(), y.end()), a.tensors()[i].name.c_str());
        }
        // The vocabulary does not depend on the seed.
        QCOMPARE(a.get_string_array("tokenizer.ggml.merges"), b.get_string_array("tokenizer.ggml.merges"));
    }

    void pq2_and_ptq1_hold_the_same_weights() {
        const auto p = gguf::Reader::open(synthetic_model("tiny", 1, "pq2_0").toStdString());
        const auto t = gguf::Reader::open(synthetic_model("tiny", 1, "ptq1_0").toStdString());
        QVERIFY(p.get_u32("general.file_type") != t.get_u32("general.file_type"));
        QCOMPARE(p.tensors().size(), t.tensors().size());
        int ternary = 0;
        for (size_t i = 0; i < p.tensors().size(); ++i) {
            const auto& a = p.tensors()[i];
            const auto& b = t.tensors()[i];
            if (a.type == gguf::TensorType::PQ2_0) {
                QCOMPARE(b.type, gguf::TensorType::PTQ1_0);
                QVERIFY2(dequantize(p, a) == dequantize(t, b), a.name.c_str());
                ++ternary;
            } else {
                QCOMPARE(b.type, a.type);
                const auto x = p.data(a);
                const auto y = t.data(b);
                QVERIFY2(std::equal(x.begin(), x.end(), y.begin(), y.end()), a.name.c_str());
            }
        }
        QCOMPARE(ternary, 1 + 3 * 6 + 7 + 1);  // embd, 3 GDN layers, 1 attention layer, output
    }

    void weights_have_the_intended_statistics() {
        const auto r = gguf::Reader::open(synthetic_model("tiny").toStdString());
        const auto* up = r.tensor("blk.0.ffn_up.weight");
        QVERIFY(up);
        const std::vector<float> w = dequantize(r, *up);
        // Trits are uniform: a third of the weights are zero; scales are sqrt(1.5 / 256) * [0.75, 1.25].
        const double base = std::sqrt(1.5 / 256);
        int64_t zeros = 0;
        for (float v : w) {
            if (v == 0) {
                ++zeros;
                continue;
            }
            QVERIFY2(std::fabs(v) >= 0.749 * base && std::fabs(v) <= 1.251 * base,
                     qPrintable(QString::number(v)));
        }
        const double zero_fraction = double(zeros) / double(w.size());
        QVERIFY2(zero_fraction > 0.32 && zero_fraction < 0.347, qPrintable(QString::number(zero_fraction)));

        const auto* ssm_a = r.tensor("blk.0.ssm_a");
        QVERIFY(ssm_a);
        const auto bytes = r.data(*ssm_a);
        for (int64_t i = 0; i < ssm_a->ne[0]; ++i) {
            float v;
            std::memcpy(&v, bytes.data() + 4 * i, 4);
            QVERIFY(v >= -16 && v <= -1);
        }
    }

    void the_27b_preset_has_the_published_geometry() {
        const auto p = model::synthetic_preset("27b");
        QCOMPARE(p.hp.n_layer, 64);
        QCOMPARE(p.hp.n_embd, 5120);
        QCOMPARE(p.hp.n_ff, 17408);
        QCOMPARE(p.hp.n_head, 24);
        QCOMPARE(p.hp.n_head_kv, 4);
        QCOMPARE(p.hp.ssm_n_k_heads, 16);
        QCOMPARE(p.hp.ssm_n_v_heads, 48);
        QCOMPARE(p.hp.ssm_d_inner, 6144);
        QCOMPARE(p.hp.n_vocab, 248320);
        QCOMPARE(p.hp.n_ctx_train, 262144);
        QCOMPARE(p.hadamard_block, 1024);
        // The published PQ2_0 and PTQ1_0 files differ by 6 bytes per 128 ternary weights
        // (34 vs 28 per block) and by nothing else, so their size difference pins the
        // number of ternary weights of the layout.
        int64_t ternary_elements = 0;
        for (const auto& t : model::tensor_layout(p.hp))
            if (t.kind == model::TensorKind::Ternary) ternary_elements += t.ne[0] * t.ne[1];
        QCOMPARE(ternary_elements / 128 * 6, int64_t(7206168928) - int64_t(5946648928));
    }

    void bad_arguments_are_usage_errors() {
        test::TempDir dir;
        const QString out = dir.file("x.gguf");
        QCOMPARE(run_engine({"mkmodel", "--preset", "huge", "--seed", "1", "--out", out}).exit_code, 2);
        QCOMPARE(run_engine({"mkmodel", "--preset", "tiny", "--seed", "1", "--quant", "q4", "--out", out})
                     .exit_code,
                 2);
        QCOMPARE(run_engine({"mkmodel", "--preset", "tiny", "--seed", "-3", "--out", out}).exit_code, 2);
        QCOMPARE(run_engine({"mkmodel", "--preset", "tiny", "--out", out}).exit_code, 2);
        QVERIFY(!QFile::exists(out));
        const auto help = run_engine({"mkmodel", "--help"});
        QCOMPARE(help.exit_code, 0);
        QVERIFY(help.out.contains("--unrotated"));
    }
};

QTEST_GUILESS_MAIN(TestSynthetic)
#include "test_synthetic.moc"
