// The Hadamard fold handled end to end: a folded file and the same weights unfolded by this
// test (W = W_stored · H_B · diag(s), embedding rows E = s ⊙ H_B(z), in double precision)
// into an unrotated file of plain F32 matrices give the same logits.
#include <QtTest>

#include <bit>
#include <cmath>
#include <random>

#include "engine/gguf/reader.h"
#include "engine/gguf/writer.h"
#include "engine/model/prism.h"
#include "engine/model/sequences.h"
#include "kernels/formats.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"

using namespace niwa;

namespace {

// In place: each block of B values times the normalised Sylvester Hadamard matrix.
void hadamard_rows(std::vector<double>& v, int block) {
    std::vector<double> out(static_cast<size_t>(block));
    for (size_t b0 = 0; b0 < v.size(); b0 += size_t(block)) {
        for (int c = 0; c < block; ++c) {
            double s = 0;
            for (int r = 0; r < block; ++r)
                s += (std::popcount(unsigned(r & c)) % 2 ? -1.0 : 1.0) * v[b0 + size_t(r)];
            out[size_t(c)] = s / std::sqrt(double(block));
        }
        std::copy(out.begin(), out.end(), v.begin() + int64_t(b0));
    }
}

// Writes `dst`: `src` without the rotation's prism keys (gdn_v_grouped stays: it is the
// value-head order of ssm_out, not part of the rotation), every folded/inverse tensor
// unfolded to F32.
void write_unfolded(const gguf::Reader& src, const std::string& dst) {
    const model::PrismRotation prism = model::PrismRotation::from_gguf(src);
    QVERIFY(prism.enabled);
    gguf::Writer w;
    for (const gguf::KeyValue& kv : src.metadata())
        if (kv.key.rfind("prism.", 0) != 0 || kv.key == "prism.hadamard.gdn_v_grouped")
            w.add_value(kv.key, kv.value);
    for (const gguf::TensorInfo& t : src.tensors()) {
        std::vector<int64_t> ne(t.ne, t.ne + t.n_dims);
        const bool fold = prism.folded.count(t.name), inverse = prism.inverse.count(t.name);
        const auto bytes = src.data(t);
        if (!fold && !inverse) {
            w.add_tensor_bytes(t.name, t.type, ne, {bytes.begin(), bytes.end()});
            continue;
        }
        const int64_t in = t.ne[0], rows = t.ne[1];
        const auto type = static_cast<kernels::DType>(uint32_t(t.type));
        const size_t row_bytes = kernels::dtype_row_bytes(type, in);
        const std::vector<float>& s = prism.signs_for(in);
        std::vector<uint8_t> out(size_t(in * rows) * sizeof(float));
        std::vector<float> row(static_cast<size_t>(in));
        std::vector<double> v(static_cast<size_t>(in));
        for (int64_t r = 0; r < rows; ++r) {
            kernels::dequantize_row(type, bytes.data() + size_t(r) * row_bytes, row.data(), in);
            // Folded rows and the embedding's rows come back the same way:
            // W[r] = (W_stored[r] · H) ⊙ s, and E[r] = s ⊙ H(z) (H is symmetric).
            for (int64_t c = 0; c < in; ++c) v[size_t(c)] = row[size_t(c)];
            hadamard_rows(v, prism.block);
            for (int64_t c = 0; c < in; ++c) v[size_t(c)] *= s[size_t(c)];
            float* dst_row = reinterpret_cast<float*>(out.data()) + r * in;
            for (int64_t c = 0; c < in; ++c) dst_row[c] = float(v[size_t(c)]);
        }
        w.add_tensor_bytes(t.name, gguf::TensorType::F32, ne, std::move(out));
    }
    w.write(dst);
}

}  // namespace

class TestHadamardFold : public QObject {
    Q_OBJECT

private slots:
    void unfolded_weights_give_the_same_logits() {
        const std::string folded = test::synthetic_model("tiny", 3).toStdString();
        QVERIFY(!folded.empty());
        test::TempDir dir;
        const std::string plain = dir.file("plain.gguf").toStdString();
        {
            const gguf::Reader r = gguf::Reader::open(folded);
            write_unfolded(r, plain);
        }
        const auto plain_prism = model::PrismRotation::from_gguf(gguf::Reader::open(plain));
        QVERIFY(!plain_prism.enabled && plain_prism.gdn_v_grouped);

        std::mt19937 rng(5);
        std::vector<int32_t> tokens(70);
        for (auto& t : tokens) t = int32_t(rng() % 1000);
        auto run = [&](const std::string& path) {
            model::ModelConfig c;
            c.max_context = 128;
            auto m = model::Model::open(path, c);
            model::Sequences s(*m);
            const int id = s.add();
            return s.feed({{id, tokens}}, true)[0];
        };
        const auto a = run(folded), b = run(plain);
        QCOMPARE(a.size(), b.size());
        double num = 0, den = 0;
        for (size_t i = 0; i < a.size(); ++i) {
            num = std::max(num, std::fabs(double(a[i]) - double(b[i])));
            den = std::max(den, std::fabs(double(b[i])));
        }
        QVERIFY(den > 1.0);
        QVERIFY2(num / den <= 1e-4,
                 qPrintable(QString("folded vs unfolded logits differ by %1").arg(num / den)));
    }
};

QTEST_GUILESS_MAIN(TestHadamardFold)
#include "test_hadamard_fold.moc"
