// Tests of the CPU kv_store, paged attention and the attention layer from its projections
// (qk_attention): sequences of mixed lengths with random block tables, against dense causal
// attention in double over each sequence's own K and V.
#include "kernels/ops.h"
#include "tests/kernels/kernel_test_util.h"

#include <QtTest>
#include <algorithm>
#include <numeric>
#include <stdexcept>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

struct Shape {
    int pos0, n_q;
};

// A step's sequences over a pool of n_blocks blocks of bt tokens, their blocks drawn at random:
// the step's tables, and every token j of sequence s visited in order as visit(s, j, slot, row),
// row -1 for a token cached before the step, else the token's row in the step.
struct PagedStep {
    std::vector<SeqInfo> seqs;
    std::vector<int32_t> tables, positions, kv_slots;
    StepInfo step;

    template <typename Visit>
    PagedStep(std::mt19937& rng, const std::vector<Shape>& shape, int n_blocks, int bt, Visit&& visit) {
        std::vector<int32_t> free_blocks(n_blocks);
        std::iota(free_blocks.begin(), free_blocks.end(), 0);
        std::shuffle(free_blocks.begin(), free_blocks.end(), rng);
        int row = 0;
        for (size_t s = 0; s < shape.size(); ++s) {
            const int len = shape[s].pos0 + shape[s].n_q;
            SeqInfo si;
            si.q_start = row;
            si.n_q = shape[s].n_q;
            si.pos0 = shape[s].pos0;
            si.table_start = int32_t(tables.size());
            seqs.push_back(si);
            for (int b = 0; b < (len + bt - 1) / bt; ++b) {
                tables.push_back(free_blocks.back());
                free_blocks.pop_back();
            }
            for (int j = 0; j < len; ++j) {
                const int slot = tables[si.table_start + j / bt] * bt + j % bt;
                if (j < si.pos0) {
                    visit(int(s), j, slot, -1);
                    continue;
                }
                visit(int(s), j, slot, row);
                positions.push_back(j);
                kv_slots.push_back(slot);
                ++row;
            }
        }
        step.seqs = seqs.data();
        step.host_seqs = seqs.data();
        step.n_seqs = int(seqs.size());
        step.n_tokens = row;
        step.positions = positions.data();
        set_kv_slots(step, kv_slots.data());
        step.block_tables = tables.data();
    }
};

// Causal attention in double of one query head q (d values) at position p over a sequence's
// keys and values ([len][width] rows, KV head kvh at column kvh * d).
std::vector<double> dense_attention(const std::vector<double>& q, const std::vector<double>& k,
                                    const std::vector<double>& v, int p, int kvh, int d, int width,
                                    double scale) {
    std::vector<double> w(size_t(p) + 1), out(size_t(d), 0.0);
    double mx = -1e300, sum = 0.0;
    for (int j = 0; j <= p; ++j) {
        double dot = 0.0;
        for (int c = 0; c < d; ++c) dot += q[size_t(c)] * k[size_t(j) * width + kvh * d + c];
        w[size_t(j)] = dot * scale;
        mx = std::max(mx, w[size_t(j)]);
    }
    for (double& x : w) sum += x = std::exp(x - mx);
    for (int j = 0; j <= p; ++j)
        for (int c = 0; c < d; ++c) out[size_t(c)] += w[size_t(j)] / sum * v[size_t(j) * width + kvh * d + c];
    return out;
}

}  // namespace

class TestAttention : public QObject {
    Q_OBJECT

private slots:
    void pagedMatchesDense() {
        std::mt19937 rng(600);
        const int n_blocks = 24, bt = 4, n_kv = 2, d = 16, n_heads = 6;
        const int width = n_kv * d;
        const std::vector<int32_t> kv_of_q = {0, 0, 0, 1, 1, 1};
        const std::vector<Shape> shape = {{0, 6}, {13, 1}, {5, 9}, {3, 2}};

        // The pool starts as noise, so a read of a wrong slot shows.
        std::vector<float> kpool = random_vector(rng, size_t(n_blocks) * bt * width, -5.0f, 5.0f);
        std::vector<float> vpool = random_vector(rng, kpool.size(), -5.0f, 5.0f);
        const KvLayer kv{kpool.data(), vpool.data(), DType::F32, n_blocks, bt, n_kv, d};

        std::vector<std::vector<double>> dense_k(shape.size()), dense_v(shape.size());  // [len * width]
        int n_tokens = 0;
        for (const Shape& s : shape) n_tokens += s.n_q;
        HostTensor k(n_tokens, width, width + 3), v(n_tokens, width, width + 1);
        const PagedStep ps(rng, shape, n_blocks, bt, [&](int s, int, int slot, int row) {
            for (int c = 0; c < width; ++c) {
                const float kj = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
                const float vj = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
                dense_k[size_t(s)].push_back(kj);
                dense_v[size_t(s)].push_back(vj);
                (row < 0 ? kpool[size_t(slot) * width + c] : k.at(row, c)) = kj;  // cached: by earlier steps
                (row < 0 ? vpool[size_t(slot) * width + c] : v.at(row, c)) = vj;
            }
        });

        auto ops = make_cpu_ops(3);
        ops->kv_store(kv, k.t, v.t, ps.step);
        for (int t = 0; t < n_tokens; ++t)
            for (int c = 0; c < width; ++c) {
                QCOMPARE(kpool[size_t(ps.kv_slots[t]) * width + c], k.at(t, c));
                QCOMPARE(vpool[size_t(ps.kv_slots[t]) * width + c], v.at(t, c));
            }

        const float scale = 0.3f;
        const HostTensor q = random_tensor(rng, n_tokens, n_heads * d, n_heads * d + 2, -2.0f, 2.0f);
        HostTensor out = random_tensor(rng, n_tokens, n_heads * d, n_heads * d + 4);
        ops->attention(q.t, kv, kv_of_q.data(), scale, ps.step, out.t);

        for (size_t s = 0; s < shape.size(); ++s)
            for (int i = 0; i < shape[s].n_q; ++i) {
                const int r = ps.seqs[s].q_start + i;
                for (int h = 0; h < n_heads; ++h) {
                    std::vector<double> qh(static_cast<size_t>(d), 0.0);
                    for (int c = 0; c < d; ++c) qh[size_t(c)] = q.at(r, h * d + c);
                    const std::vector<double> want = dense_attention(
                        qh, dense_k[s], dense_v[s], shape[s].pos0 + i, kv_of_q[h], d, width, scale);
                    for (int c = 0; c < d; ++c)
                        QVERIFY2(std::abs(out.at(r, h * d + c) - want[size_t(c)]) < 1e-5,
                                 qPrintable(QString("seq %1 token %2 head %3").arg(s).arg(i).arg(h)));
                }
            }
    }

    // qk_attention, the attention layer from its projections: the queries and new keys normed
    // and rotated, the new keys and values stored, the queries attended, against the same in
    // double. The queries come as head rows between the gates (the model's layout), the keys and
    // values as column ranges of one row.
    void qkAttentionIsTheLayer() {
        std::mt19937 rng(601);
        const int n_blocks = 12, bt = 4, n_kv = 2, d = 16, n_heads = 6, n_rot = 8;
        const int width = n_kv * d;
        const float eps = 1e-6f, theta = 1e4f, scale = 0.25f;
        const std::vector<int32_t> kv_of_q = {0, 0, 0, 1, 1, 1};
        const std::vector<Shape> shape = {{7, 1}, {0, 3}, {2, 2}};
        std::vector<float> kpool = random_vector(rng, size_t(n_blocks) * bt * width, -5.0f, 5.0f);
        std::vector<float> vpool = random_vector(rng, kpool.size(), -5.0f, 5.0f);
        const KvLayer kv{kpool.data(), vpool.data(), DType::F32, n_blocks, bt, n_kv, d};
        const std::vector<float> q_w = random_vector(rng, d, 0.5f, 1.5f),
                                 k_w = random_vector(rng, d, 0.5f, 1.5f);

        // A head row normed and rotated at position pos, in double.
        auto norm_rope = [&](const float* x, const std::vector<float>& w, int pos) {
            double ss = 0.0;
            for (int c = 0; c < d; ++c) ss += double(x[c]) * x[c];
            const double inv = 1.0 / std::sqrt(ss / d + eps);
            std::vector<double> y(d);
            for (int c = 0; c < d; ++c) y[c] = x[c] * inv * w[c];
            for (int i = 0; i < n_rot / 2; ++i) {
                const double a = y[i], b = y[i + n_rot / 2];
                const double angle = pos * std::pow(double(theta), -2.0 * i / n_rot);
                y[i] = a * std::cos(angle) - b * std::sin(angle);
                y[i + n_rot / 2] = a * std::sin(angle) + b * std::cos(angle);
            }
            return y;
        };

        int n_tokens = 0;
        for (const Shape& s : shape) n_tokens += s.n_q;
        HostTensor qg = random_tensor(rng, int64_t(n_tokens) * n_heads, 2 * d, 2 * d, -2.0f, 2.0f);
        HostTensor kvr = random_tensor(rng, n_tokens, 2 * width, 2 * width + 3, -2.0f, 2.0f);
        // Each sequence's keys and values as cached after the step: [len * width].
        std::vector<std::vector<double>> dense_k(shape.size()), dense_v(shape.size());
        const PagedStep ps(rng, shape, n_blocks, bt, [&](int s, int j, int slot, int row) {
            std::vector<double>&dk = dense_k[size_t(s)], &dv = dense_v[size_t(s)];
            if (row < 0) {  // cached by earlier steps, normed and rotated then
                dk.insert(dk.end(), &kpool[size_t(slot) * width], &kpool[size_t(slot + 1) * width]);
                dv.insert(dv.end(), &vpool[size_t(slot) * width], &vpool[size_t(slot + 1) * width]);
                return;
            }
            for (int h = 0; h < n_kv; ++h) {
                const std::vector<double> kn = norm_rope(&kvr.at(row, h * d), k_w, j);
                dk.insert(dk.end(), kn.begin(), kn.end());
            }
            for (int c = 0; c < width; ++c) dv.push_back(kvr.at(row, width + c));
        });

        auto ops = make_cpu_ops(2);
        const Tensor heads{qg.t.data, DType::F32, int64_t(n_tokens) * n_heads, d, 2 * d};
        HostTensor q_out(int64_t(n_tokens) * n_heads, d, d), k_out(int64_t(n_tokens) * n_kv, d, d);
        HostTensor out = random_tensor(rng, n_tokens, n_heads * d, n_heads * d + 4);
        ops->qk_attention(heads, q_w.data(), q_out.t, kvr.t.cols_view(0, width), k_w.data(), k_out.t,
                          kvr.t.cols_view(width, width), eps, n_rot, theta, kv, kv_of_q.data(), scale,
                          ps.step, out.t);

        for (size_t s = 0; s < shape.size(); ++s)
            for (int i = 0; i < shape[s].n_q; ++i) {
                const int r = ps.seqs[s].q_start + i, p = shape[s].pos0 + i;
                for (int h = 0; h < n_heads; ++h) {
                    const std::vector<double> q = norm_rope(&qg.at(int64_t(r) * n_heads + h, 0), q_w, p);
                    const std::vector<double> want =
                        dense_attention(q, dense_k[s], dense_v[s], p, kv_of_q[h], d, width, scale);
                    for (int c = 0; c < d; ++c)
                        QVERIFY2(std::abs(out.at(r, h * d + c) - want[size_t(c)]) < 2e-5,
                                 qPrintable(QString("seq %1 token %2 head %3 dim %4: %5 against %6")
                                                .arg(s)
                                                .arg(i)
                                                .arg(h)
                                                .arg(c)
                                                .arg(out.at(r, h * d + c))
                                                .arg(want[size_t(c)])));
                }
            }

        // The queries must be whole head rows, one after another.
        const Tensor strided{q_out.t.data, DType::F32, q_out.t.rows / 2, d, 2 * d};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 ops->qk_attention(heads, q_w.data(), strided, kvr.t.cols_view(0, width),
                                                   k_w.data(), k_out.t, kvr.t.cols_view(width, width), eps,
                                                   n_rot, theta, kv, kv_of_q.data(), scale, ps.step, out.t));
    }
};

QTEST_APPLESS_MAIN(TestAttention)
#include "test_attention.moc"
