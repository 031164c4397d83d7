// Tests of the CUDA kv_store and paged attention against the CPU ops: steps of decode rows,
// prefill sequences and both mixed, random block tables over a pool of noise, head_dim
// 64/128/256, GQA groups of 1, 6 and more than a block takes, padded views, F32/F16/BF16 pools,
// fp32 and mixed precision (the tensor-core prefill and decode).
#include "kernels/ops.h"
#include "tests/kernels/cuda/cuda_test_util.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

struct Shape {
    int pos0, n_q;
};

// A step over a pool: the sequences' cached tokens go in by a first kv_store (the prefix
// step), then the step's own tokens by a second; attention reads them all.
struct Problem {
    int bt, n_kv, d, n_heads, n_blocks = 0, width;
    std::vector<int32_t> kv_of_q;
    std::vector<SeqInfo> seqs, prefix_seqs;
    std::vector<int32_t> tables, positions, kv_slots, prefix_slots;
    StepInfo step, prefix;
    HostTensor k, v, pk, pv, q;
    int n_tokens = 0, n_rows = 0, n_prefix = 0;

    Problem(std::mt19937& rng, const std::vector<Shape>& shape, int bt_, int n_kv_, int d_,
            std::vector<int32_t> kv_of_q_, int padding_rows, bool on_grid)
        : bt(bt_),
          n_kv(n_kv_),
          d(d_),
          n_heads(int(kv_of_q_.size())),
          width(n_kv_ * d_),
          kv_of_q(std::move(kv_of_q_)),
          k(0, 0, 0),
          v(0, 0, 0),
          pk(0, 0, 0),
          pv(0, 0, 0),
          q(0, 0, 0) {
        for (const Shape& s : shape) {
            n_tokens += s.n_q;
            n_prefix += s.pos0;
            n_blocks += (s.pos0 + s.n_q + bt - 1) / bt;
        }
        n_blocks += 5;  // blocks no sequence owns
        std::vector<int32_t> free_blocks(n_blocks);
        std::iota(free_blocks.begin(), free_blocks.end(), 0);
        std::shuffle(free_blocks.begin(), free_blocks.end(), rng);

        n_rows = n_tokens + padding_rows;
        k = values(rng, n_rows, width + 3, on_grid);
        v = values(rng, n_rows, width + 1, on_grid);
        pk = values(rng, std::max(n_prefix, 1), width + 2, on_grid);
        pv = values(rng, std::max(n_prefix, 1), width, on_grid);
        q = random_tensor(rng, n_rows, int64_t(n_heads) * d, int64_t(n_heads) * d + 5);
        int row = 0, prow = 0;
        for (const Shape& s : shape) {
            SeqInfo si;
            si.q_start = row;
            si.n_q = s.n_q;
            si.pos0 = s.pos0;
            si.table_start = int32_t(tables.size());
            seqs.push_back(si);
            const int len = s.pos0 + s.n_q;
            for (int b = 0; b < (len + bt - 1) / bt; ++b) {
                tables.push_back(free_blocks.back());
                free_blocks.pop_back();
            }
            for (int j = 0; j < len; ++j) {
                const int slot = tables[si.table_start + j / bt] * bt + j % bt;
                if (j < s.pos0) {
                    prefix_slots.push_back(slot);
                    ++prow;
                    continue;
                }
                positions.push_back(j);
                kv_slots.push_back(slot);
                ++row;
            }
        }
        step.seqs = seqs.data();
        step.host_seqs = seqs.data();
        step.n_seqs = int(seqs.size());
        step.n_tokens = n_tokens;
        step.positions = positions.data();
        set_kv_slots(step, kv_slots.data());
        step.block_tables = tables.data();
        prefix.n_tokens = n_prefix;
        set_kv_slots(prefix, prefix_slots.data());
        prefix.block_tables = tables.data();
    }

    // [rows, width] with row stride ld; on the 1/64 grid in [-2, 2) (exact in F16 and BF16) or
    // uniform.
    HostTensor values(std::mt19937& rng, int rows, int64_t ld, bool on_grid) const {
        HostTensor t = random_tensor(rng, rows, width, ld, -2.0f, 2.0f);
        if (on_grid)
            for (float& x : t.buf) x = std::floor(x * 64.0f) / 64.0f;
        return t;
    }

    size_t pool_elems() const { return size_t(n_blocks) * bt * width; }

    // The CPU result, on an F32 pool that starts as noise.
    HostTensor cpu_out(Ops& cpu, std::mt19937& rng, float scale,
                       std::vector<float>* kpool_out = nullptr) const {
        std::vector<float> kpool = random_vector(rng, pool_elems(), -5.0f, 5.0f);
        std::vector<float> vpool = random_vector(rng, pool_elems(), -5.0f, 5.0f);
        const KvLayer kv{kpool.data(), vpool.data(), DType::F32, n_blocks, bt, n_kv, d};
        if (n_prefix > 0) cpu.kv_store(kv, pk.t.rows_view(0, n_prefix), pv.t.rows_view(0, n_prefix), prefix);
        cpu.kv_store(kv, k.t.rows_view(0, n_tokens), v.t.rows_view(0, n_tokens), step);
        HostTensor out = random_tensor(rng, n_rows, q.t.cols, q.t.cols + 1);
        cpu.attention(q.t, kv, kv_of_q.data(), scale, step, out.t);
        if (kpool_out) *kpool_out = kpool;
        return out;
    }
};

// Pool noise of a type: fp32 values, or 16-bit patterns that are finite (bit 14 clear).
std::vector<uint8_t> pool_noise(std::mt19937& rng, DType type, size_t elems) {
    if (type == DType::F32) {
        const std::vector<float> f = random_vector(rng, elems, -5.0f, 5.0f);
        std::vector<uint8_t> b(f.size() * 4);
        std::memcpy(b.data(), f.data(), b.size());
        return b;
    }
    std::vector<uint16_t> h(elems);
    for (uint16_t& x : h) x = uint16_t(rng() & 0xBFFFu);
    std::vector<uint8_t> b(h.size() * 2);
    std::memcpy(b.data(), h.data(), b.size());
    return b;
}

struct GpuRun {
    HostTensor out;
    std::vector<float> kpool;  // F32 pools only
};

// settled: the prefix is stored before the step begins (a host sync between), so the step may
// say so (StepInfo::settled) and the decode kernel reads it before the kernels before finish.
GpuRun gpu_run(Backends& b, const Problem& p, std::mt19937& rng, float scale, DType type,
               bool settled = false) {
    Ops& gpu = *b.gpu;
    const std::vector<uint8_t> kn = pool_noise(rng, type, p.pool_elems()),
                               vn = pool_noise(rng, type, p.pool_elems());
    DeviceBytes kpool(gpu, kn), vpool(gpu, vn);
    const KvLayer kv{kpool.p, vpool.p, type, p.n_blocks, p.bt, p.n_kv, p.d};
    DeviceBytes seqs(gpu, p.seqs), tables(gpu, p.tables),
        positions(gpu, p.positions.empty() ? std::vector<int32_t>{0} : p.positions);
    DeviceBytes kv_slots(gpu, p.kv_slots.empty() ? std::vector<int32_t>{0} : p.kv_slots);
    DeviceBytes prefix_slots(gpu, p.prefix_slots.empty() ? std::vector<int32_t>{0} : p.prefix_slots);
    StepInfo step = p.step, prefix = p.prefix;
    step.settled = settled;
    step.seqs = seqs.as<SeqInfo>();
    step.positions = positions.as<int32_t>();
    set_kv_slots(step, kv_slots.as<int32_t>());
    step.block_tables = tables.as<int32_t>();
    set_kv_slots(prefix, prefix_slots.as<int32_t>());
    prefix.block_tables = tables.as<int32_t>();

    DeviceTensor k(gpu, p.k), v(gpu, p.v), pk(gpu, p.pk), pv(gpu, p.pv), q(gpu, p.q);
    if (p.n_prefix > 0)
        gpu.kv_store(kv, pk.t.rows_view(0, p.n_prefix), pv.t.rows_view(0, p.n_prefix), prefix);
    if (settled) gpu.synchronize();
    gpu.kv_store(kv, k.t.rows_view(0, p.n_tokens), v.t.rows_view(0, p.n_tokens), step);
    DeviceTensor out(gpu, p.n_rows, p.q.t.cols, p.q.t.cols + 1);
    gpu.attention(q.t, kv, p.kv_of_q.data(), scale, step, out.t);
    GpuRun r{out.download(), {}};
    if (type == DType::F32) {
        r.kpool.resize(p.pool_elems());
        gpu.download(r.kpool.data(), kpool.p, r.kpool.size() * sizeof(float));
    }
    return r;
}

std::vector<int32_t> grouped(int n_heads, int n_kv) {
    std::vector<int32_t> m(n_heads);
    for (int h = 0; h < n_heads; ++h) m[h] = h / (n_heads / n_kv);
    return m;
}

std::vector<Shape> random_shapes(std::mt19937& rng, int n, int max_pos0, int min_q, int max_q) {
    std::uniform_int_distribution<int> pos(0, max_pos0), nq(min_q, max_q);
    std::vector<Shape> s;
    for (int i = 0; i < n; ++i) s.push_back({pos(rng), nq(rng)});
    return s;
}

}  // namespace

class TestCudaAttention : public QObject {
    Q_OBJECT

    // Runs one problem on both backends and checks the output (and, for F32, the pool). Mixed
    // precision rounds Q and the softmax weights to the pool's 16-bit type on the tensor cores.
    void check(const char* what, uint32_t seed, const std::vector<Shape>& shape, int bt, int n_kv, int d,
               const std::vector<int32_t>& kv_of_q, int padding_rows = 0, DType type = DType::F32,
               Precision precision = Precision::Fp32) {
        std::mt19937 rng(seed);
        Backends b(precision);
        const Problem p(rng, shape, bt, n_kv, d, kv_of_q, padding_rows, type != DType::F32);
        const float scale = 1.0f / std::sqrt(float(d));
        std::mt19937 rng_cpu(seed + 1), rng_gpu(seed + 2);
        std::vector<float> cpu_kpool;
        const HostTensor want = p.cpu_out(*b.cpu, rng_cpu, scale, &cpu_kpool);
        const GpuRun got = gpu_run(b, p, rng_gpu, scale, type);
        const double err = tensor_error(got.out, want);
        qInfo("%s: attention max relative error %.3g", what, err);
        // Mixed: Q and P rounded to fp16 (11 bits) or bf16 (8 bits); measured about 1/6 of these.
        const double tol = precision == Precision::Fp32 ? 1e-4 : type == DType::BF16 ? 1e-2 : 2e-3;
        QVERIFY2(err <= tol, qPrintable(QString("%1: error %2").arg(what).arg(err)));
        if (precision == Precision::Mixed) {
            // A settled step: the same arithmetic on the same pool (the same noise), the cached
            // tokens read early; bit for bit the same output.
            std::mt19937 rng_settled(seed + 2);
            const GpuRun early = gpu_run(b, p, rng_settled, scale, type, true);
            QVERIFY2(std::memcmp(early.out.buf.data(), got.out.buf.data(),
                                 got.out.buf.size() * sizeof(float)) == 0,
                     qPrintable(QString("%1: a settled step differs by %2")
                                    .arg(what)
                                    .arg(tensor_error(early.out, got.out))));
        }
        if (type != DType::F32) return;
        // The pool's written slots equal the CPU's (noise elsewhere differs by design).
        for (const std::vector<int32_t>* written : {&p.kv_slots, &p.prefix_slots})
            for (int32_t slot : *written)
                for (int c = 0; c < p.width; ++c)
                    QCOMPARE(got.kpool[size_t(slot) * p.width + c], cpu_kpool[size_t(slot) * p.width + c]);
    }

private slots:
    void decodeOnly() {
        std::mt19937 rng(1);
        check("decode d128 G6", 10, random_shapes(rng, 9, 900, 1, 1), 16, 4, 128, grouped(24, 4));
        check("decode d256 G6 long", 11, {{4000, 1}, {130, 1}, {0, 1}}, 32, 2, 256, grouped(12, 2));
        check("decode d64 G1", 12, random_shapes(rng, 5, 300, 1, 1), 8, 4, 64, grouped(4, 4));
    }

    void prefillOnly() {
        check("prefill d256 G6", 20, {{0, 300}, {50, 37}, {200, 5}}, 16, 2, 256, grouped(12, 2));
        check("prefill d128 G1", 21, {{0, 129}, {31, 64}}, 16, 3, 128, grouped(3, 3));
        check("prefill d64 G6", 22, {{10, 33}, {0, 7}}, 4, 1, 64, grouped(6, 1));
    }

    void mixed() {
        std::mt19937 rng(3);
        check("mixed d64 G1", 30, {{1000, 1}, {0, 128}, {20, 3}, {400, 1}, {7, 77}}, 32, 4, 64, grouped(4, 4),
              2);
        std::vector<Shape> s = random_shapes(rng, 6, 600, 1, 1);
        for (const Shape& x : random_shapes(rng, 3, 200, 2, 300)) s.push_back(x);
        std::shuffle(s.begin(), s.end(), rng);
        check("mixed d128 G6", 31, s, 16, 4, 128, grouped(24, 4));
        check("mixed d256 G6", 32, {{300, 1}, {0, 90}, {33, 4}, {2, 1}}, 16, 2, 256, grouped(12, 2), 1);
    }

    void unevenGroups() {
        // Ten query heads on KV head 1 (more than one block takes), two on head 0, interleaved.
        const std::vector<int32_t> m = {1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1};
        check("uneven d128", 40, {{500, 1}, {0, 40}, {70, 2}}, 16, 2, 128, m);
    }

    void halfPools() {
        const std::vector<Shape> s = {{700, 1}, {0, 100}, {45, 3}, {12, 1}};
        check("f16 d128 G6", 50, s, 16, 4, 128, grouped(24, 4), 0, DType::F16);
        check("bf16 d256 G6", 51, s, 16, 2, 256, grouped(12, 2), 0, DType::BF16);
    }

    // The tensor-core prefill (mixed precision, 16-bit pools): many query and key tiles with
    // ragged ends, prefills after cached tokens, batches with short prefills and decode rows.
    void tensorCorePrefill() {
        const std::vector<int32_t> uneven = {1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1};
        uint32_t seed = 60;
        for (DType t : {DType::F16, DType::BF16}) {
            auto run = [&](const char* what, const std::vector<Shape>& shape, int bt, int n_kv, int d,
                           const std::vector<int32_t>& kv_of_q, int padding_rows = 0) {
                const std::string name = std::string(dtype_name(t)) + " " + what;
                check(name.c_str(), seed++, shape, bt, n_kv, d, kv_of_q, padding_rows, t, Precision::Mixed);
            };
            run("long d256 G6", {{0, 333}}, 16, 2, 256, grouped(12, 2));
            run("cached d256 G6", {{130, 301}, {0, 9}}, 16, 2, 256, grouped(12, 2));
            run("batch d256 G6", {{0, 300}, {700, 1}, {120, 7}, {45, 3}, {0, 5}, {12, 1}}, 16, 4, 256,
                grouped(24, 4), 3);
            run("batch d128 G1", {{0, 200}, {60, 9}, {300, 1}, {5, 3}, {101, 13}}, 16, 4, 128, grouped(4, 4),
                1);
            run("cached d64 G6", {{77, 150}, {0, 40}, {500, 2}}, 8, 1, 64, grouped(6, 1));
            run("uneven d128", {{200, 130}, {0, 40}, {70, 2}}, 16, 2, 128, uneven);
        }
    }

    // The tensor-core decode (mixed precision, 16-bit pools): decode rows only, contexts from one
    // token to many splits, 16-token tiles over pool blocks of 8, 16 and 32 tokens and of 5 (a
    // tile's tokens in up to four blocks), a batch of 24, rows of a 4-row step, uneven groups.
    void tensorCoreDecode() {
        const std::vector<int32_t> uneven = {1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1};
        std::mt19937 rng(8);
        uint32_t seed = 80;
        for (DType t : {DType::F16, DType::BF16}) {
            auto run = [&](const char* what, const std::vector<Shape>& shape, int bt, int n_kv, int d,
                           const std::vector<int32_t>& kv_of_q) {
                const std::string name = std::string(dtype_name(t)) + " " + what;
                check(name.c_str(), seed++, shape, bt, n_kv, d, kv_of_q, 0, t, Precision::Mixed);
            };
            run("long d256 G6", {{4000, 1}, {130, 1}, {0, 1}, {17, 1}}, 32, 2, 256, grouped(12, 2));
            run("batch d128 G6", random_shapes(rng, 24, 900, 1, 1), 16, 4, 128, grouped(24, 4));
            run("blocks of 5 d64 G1", random_shapes(rng, 7, 300, 1, 1), 5, 4, 64, grouped(4, 4));
            run("uneven d128", {{500, 1}, {33, 4}, {1, 1}}, 8, 2, 128, uneven);
            // One row of a long context: 32 splits of 128 tokens (one wave, four KV heads), and at
            // 8150 tokens on one KV head (two waves) the combine pass's most splits, 64.
            run("one row d256 G6", {{4096, 1}}, 16, 4, 256, grouped(24, 4));
            run("one row, one KV head d128 G6", {{8150, 1}}, 16, 1, 128, grouped(6, 1));
        }
    }
};

QTEST_APPLESS_MAIN(TestCudaAttention)
#include "test_cuda_attention.moc"
