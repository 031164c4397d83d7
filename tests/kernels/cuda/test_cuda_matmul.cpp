// The CUDA matmul against the CPU oracle: every weight type (PQ2_0S and PQ2_0T, the layouts the
// model loads PQ2_0 in, against the CPU's PQ2_0 of the same rows), both precisions, x row counts on both
// sides of the decode/prefill switch (1, 7, 32, 33, 200), odd row counts, strided views of x, y
// and the weight (a shard starting mid-row), and the model's real shapes. Both
// prefill paths (cuBLAS on dequantized weights, the tensor-core tiles) on every type, and
// against each other. The register decode kernel's int8 x (1-4 rows) against its own CPU reference.
#include "tests/kernels/cuda/cuda_test_util.h"

#include <QtTest>
#include <algorithm>
#include <cstring>
#include <memory>

#include "kernels/cuda/cuda_ops.h"

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

// `out` rows of `in` elements of type t, rows `stride` bytes apart; ternary types hold random
// trits and scales (what the model files hold), the others random values.
std::vector<uint8_t> random_weight(std::mt19937& rng, DType t, int64_t in, int64_t out, size_t stride) {
    std::vector<uint8_t> bytes(stride * static_cast<size_t>(out));
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    std::uniform_real_distribution<float> value(-1.0f, 1.0f), scale(0.01f, 0.1f);
    std::vector<int8_t> trits(static_cast<size_t>(in));
    std::vector<float> scales(static_cast<size_t>(in / kQuantBlock + 1));
    for (int64_t r = 0; r < out; ++r) {
        uint8_t* row = &bytes[static_cast<size_t>(r) * stride];
        if (t == DType::PQ2_0 || t == DType::PTQ1_0) {
            for (auto& x : trits) x = static_cast<int8_t>(static_cast<int>(rng() % 3) - 1);
            for (auto& s : scales) s = scale(rng);
            pack_ternary_row(t, trits.data(), scales.data(), row, in);
            continue;
        }
        for (int64_t i = 0; i < in; ++i) {
            const float f = value(rng);
            if (t == DType::F32) std::memcpy(row + 4 * i, &f, 4);
            if (t == DType::F16 || t == DType::BF16) {
                const uint16_t h = t == DType::F16 ? f32_to_fp16(f) : f32_to_bf16(f);
                std::memcpy(row + 2 * i, &h, 2);
            }
            if (t == DType::Q8_0 && i % 32 == 0) {
                const uint16_t d = f32_to_fp16(scale(rng));
                std::memcpy(row + i / 32 * 34, &d, 2);
            }
        }
    }
    return bytes;
}

struct Case {
    int64_t out, in, n;
    size_t row_pad;     // bytes past each row
    int64_t col_block;  // the weight view starts this many blocks into each row
    int64_t x_pad, y_pad;
};

// A case's weight: t's rows for the GPU and, for the CPU, the file rows they come from.
// PQ2_0S: the CPU multiplies by PQ2_0 rows, the GPU by the same rows converted (whole rows of
// the view, each padded to a 16-byte multiple past row_pad); PQ2_0T: by the view converted whole
// (tiles of 16 rows: no row stride to pad).
struct CaseWeight {
    std::vector<uint8_t> bytes;
    Weight host;
    std::unique_ptr<DeviceBytes> dev_bytes;
    Weight dev;
};

CaseWeight case_weight(Backends& b, DType t, const Case& c, std::mt19937& rng) {
    CaseWeight cw;
    const DType file_t = t == DType::PQ2_0S || t == DType::PQ2_0T ? DType::PQ2_0 : t;
    const int64_t block = dtype_block_elems(t);
    const int64_t full_in = c.in + c.col_block * block;
    const size_t stride = dtype_row_bytes(file_t, full_in) + c.row_pad;
    cw.bytes = random_weight(rng, file_t, full_in, c.out, stride);
    const size_t offset = dtype_row_bytes(file_t, c.col_block * block);
    cw.host = Weight{cw.bytes.data() + offset, file_t, c.in, c.out, stride};
    std::vector<uint8_t> dev_host = cw.bytes;
    size_t dev_offset = offset, dev_stride = stride;
    if (t == DType::PQ2_0S) {
        const size_t row = dtype_row_bytes(t, c.in);
        dev_stride = (row + c.row_pad + 15) / 16 * 16;
        dev_offset = 0;
        const std::vector<uint8_t> split =
            convert_rows(file_t, t, cw.bytes.data() + offset, stride, c.out, c.in);
        dev_host.assign(dev_stride * static_cast<size_t>(c.out), 0xEE);
        for (int64_t r = 0; r < c.out; ++r) std::memcpy(&dev_host[r * dev_stride], &split[r * row], row);
    }
    if (t == DType::PQ2_0T) {
        dev_stride = dtype_row_bytes(t, c.in);
        dev_offset = 0;
        dev_host = convert_rows(file_t, t, cw.bytes.data() + offset, stride, c.out, c.in);
    }
    cw.dev_bytes = std::make_unique<DeviceBytes>(*b.gpu, dev_host.data(), dev_host.size());
    cw.dev = Weight{cw.dev_bytes->as<uint8_t>() + dev_offset, t, c.in, c.out, dev_stride};
    return cw;
}

// Whether y's padding past `cols` (NaN-poisoned) is untouched.
bool padding_untouched(const HostTensor& y, int64_t cols) {
    for (int64_t r = 0; r < y.t.rows; ++r)
        for (int64_t o = cols; o < y.t.ld; ++o)
            if (!std::isnan(y.at(r, o))) return false;
    return true;
}

// Runs one case on both backends; returns the relative error and checks y's padding untouched.
// With `gpu_y`, also returns the GPU's result (padding included).
double run_case(Backends& b, DType t, const Case& c, std::mt19937& rng, std::vector<float>* gpu_y = nullptr) {
    const CaseWeight w = case_weight(b, t, c, rng);
    const HostTensor x = random_tensor(rng, c.n, c.in, c.in + c.x_pad);
    HostTensor want(c.n, c.out, c.out + c.y_pad);
    b.cpu->matmul(w.host, x.t, want.t);
    const DeviceTensor dx(*b.gpu, x);
    const DeviceTensor dy(*b.gpu, c.n, c.out, c.out + c.y_pad);
    b.gpu->matmul(w.dev, dx.t, dy.t);
    const HostTensor got = dy.download();
    if (!padding_untouched(got, c.out)) return INFINITY;  // wrote past the row
    if (gpu_y) *gpu_y = got.buf;
    return tensor_error(got, want);
}

const DType kTypes[] = {DType::F32,   DType::F16,    DType::BF16,   DType::Q8_0,
                        DType::PQ2_0, DType::PTQ1_0, DType::PQ2_0S, DType::PQ2_0T};

// PQ2_0T holds whole runs of 1024 inputs only.
bool holds(DType t, const Case& c) {
    return t != DType::PQ2_0T || c.in % kSplitRunElems == 0;
}

// A random input of `kind` for a matmul of `in` inputs (RotatedInput, ops.h): x [n, in] and what
// it reads besides (swiglu's up, the gated norm's z: [n, in]; the sigmoid gate: a row of 2 width
// a head, the gate its second half), per-channel gains of a head (`width`), the signs of Hadamard
// blocks of `block` (0: none). `host` reads the host copies, `dev` the GPU's.
struct RandomInput {
    HostTensor x, other;
    std::vector<float> gains, signs;
    std::unique_ptr<DeviceTensor> dx, dother;
    std::unique_ptr<DeviceBytes> dgains, dsigns;
    RotatedInput host, dev;
};

RandomInput random_input(Ops& gpu, std::mt19937& rng, RotatedInput::Kind kind, int64_t n, int64_t in,
                         int64_t width, int block) {
    const bool sigmoid = kind == RotatedInput::Kind::SigmoidGate;
    const int64_t heads = width ? in / width : 0;
    RandomInput r{
        random_tensor(rng, n, in, sigmoid ? in : in + 3),
        sigmoid ? random_tensor(rng, n * heads, 2 * width, 2 * width) : random_tensor(rng, n, in, in + 5),
        random_vector(rng, size_t(std::max<int64_t>(width, 1)), 0.5f, 1.5f),
        {}};
    for (int64_t i = 0; i < in; ++i) r.signs.push_back((rng() & 1) ? 1.0f : -1.0f);
    const auto view = [&](const Tensor& o) { return sigmoid ? o.cols_view(width, width) : o; };
    r.host = RotatedInput{kind,
                          r.x.t,
                          view(r.other.t),
                          r.gains.data(),
                          1e-6f,
                          width,
                          Rotation{block, block ? r.signs.data() : nullptr}};
    r.dx = std::make_unique<DeviceTensor>(gpu, r.x);
    r.dother = std::make_unique<DeviceTensor>(gpu, r.other);
    r.dgains = std::make_unique<DeviceBytes>(gpu, r.gains);
    r.dsigns = std::make_unique<DeviceBytes>(gpu, r.signs);
    r.dev = r.host;
    r.dev.x = r.dx->t;
    r.dev.other = view(r.dother->t);
    r.dev.w = r.dgains->as<float>();
    r.dev.r.signs = block ? r.dsigns->as<float>() : nullptr;
    return r;
}

const char* names_of(RotatedInput::Kind k) {
    const char* names[] = {"rotate", "swiglu", "gated norm", "sigmoid gate", "residual norm"};
    return names[static_cast<int>(k)];
}

}  // namespace

class TestCudaMatmul : public QObject {
    Q_OBJECT

private slots:
    void matmul_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<bool>("mixed");
        for (DType t : kTypes)
            for (bool mixed : {false, true})
                QTest::newRow(qPrintable(QString("%1 %2").arg(dtype_name(t), mixed ? "mixed" : "fp32")))
                    << static_cast<int>(t) << mixed;
    }

    void matmul() {
        QFETCH(int, type);
        QFETCH(bool, mixed);
        const auto t = static_cast<DType>(type);
        Backends b(mixed ? Precision::Mixed : Precision::Fp32);
        std::mt19937 rng(1000 + type);
        const double tol = mixed ? 3e-2 : 2e-5;
        // Row pads keep rows aligned to their element (4 bytes for F32, as the kernels need).
        const Case cases[] = {
            {50, 384, 1, 16, 0, 5, 3},   {333, 1024, 7, 0, 0, 0, 0},   {129, 1152, 32, 8, 1, 3, 1},
            {77, 640, 33, 0, 2, 4, 2},   {300, 2048, 200, 4, 0, 1, 5}, {1024, 5120, 24, 0, 0, 0, 0},
            {48, 5120, 5, 0, 0, 0, 0},   {16, 128, 3, 0, 0, 0, 0},     {17, 256, 1, 12, 1, 0, 7},
            {1030, 1280, 9, 0, 0, 0, 0}, {96, 5120, 24, 0, 0, 0, 0},
        };
        if (t == DType::PQ2_0T && !mixed) {
            // The mixed-precision decode layout only: fp32 says so instead of misreading it.
            QVERIFY_THROWS_EXCEPTION(std::invalid_argument, run_case(b, t, cases[1], rng));
            return;
        }
        for (const Case& c : cases) {
            if (!holds(t, c)) continue;
            const double err = run_case(b, t, c, rng);
            QVERIFY2(err <= tol,
                     qPrintable(QString("%1x%2 n=%3: error %4").arg(c.out).arg(c.in).arg(c.n).arg(err)));
            qInfo("%s %s %lldx%lld n=%lld: error %.3g", dtype_name(t), mixed ? "mixed" : "fp32",
                  static_cast<long long>(c.out), static_cast<long long>(c.in), static_cast<long long>(c.n),
                  err);
        }
    }

    // The 27B model's FFN matrices (ffn_gate/up 5120 -> 17408, ffn_down 17408 -> 5120, and its
    // half on each of two GPUs, 8704 -> 5120: a last run of 4 blocks).
    void realShapes_data() {
        QTest::addColumn<int>("type");
        QTest::addColumn<bool>("mixed");
        for (DType t : {DType::PQ2_0, DType::PTQ1_0, DType::PQ2_0S, DType::PQ2_0T})
            for (bool mixed : {false, true})
                if (mixed || t != DType::PQ2_0T)
                    QTest::newRow(qPrintable(QString("%1 %2").arg(dtype_name(t), mixed ? "mixed" : "fp32")))
                        << static_cast<int>(t) << mixed;
    }

    void realShapes() {
        QFETCH(int, type);
        QFETCH(bool, mixed);
        const auto t = static_cast<DType>(type);
        Backends b(mixed ? Precision::Mixed : Precision::Fp32);
        std::mt19937 rng(2000 + type);
        const double tol = mixed ? 3e-2 : 1e-4;
        for (const Case& c : {Case{17408, 5120, 1, 0, 0, 0, 0}, Case{5120, 17408, 24, 0, 0, 0, 0},
                              Case{5120, 17408, 33, 0, 0, 0, 0}, Case{17408, 5120, 7, 0, 0, 0, 0},
                              Case{5120, 8704, 24, 0, 0, 0, 0}, Case{5120, 8704, 1, 0, 0, 0, 0}}) {
            if (!holds(t, c)) continue;
            const double err = run_case(b, t, c, rng);
            QVERIFY2(err <= tol,
                     qPrintable(QString("%1x%2 n=%3: error %4").arg(c.out).arg(c.in).arg(c.n).arg(err)));
            qInfo("%s %s %lldx%lld n=%lld: error %.3g", dtype_name(t), mixed ? "mixed" : "fp32",
                  static_cast<long long>(c.out), static_cast<long long>(c.in), static_cast<long long>(c.n),
                  err);
        }
    }

    // Back-to-back calls of different shapes reuse the split-K counters and workspace.
    void repeatedCallsAgree() {
        Backends b(Precision::Mixed);
        std::mt19937 rng(3000);
        const Case c{2048, 4096, 3, 0, 0, 0, 0};
        for (int i = 0; i < 3; ++i) {
            QVERIFY(run_case(b, DType::PQ2_0, c, rng) <= 3e-2);
            QVERIFY(run_case(b, DType::PQ2_0S, c, rng) <= 3e-2);
            QVERIFY(run_case(b, DType::PQ2_0S, Case{640, 17408, 1, 0, 0, 0, 0}, rng) <= 3e-2);
            QVERIFY(run_case(b, DType::PQ2_0T, Case{640, 17408, 1, 0, 0, 0, 0}, rng) <= 3e-2);
        }
    }

    // Prefill sizes through each path on its own: cuBLAS on dequantized fp16 weights (one slab,
    // and slabs of rows when the scratch limit is low) and the tensor-core tiles; both against
    // the CPU, and against each other (the same fp16 operands: they differ only in summation
    // order). Odd `in` for the element types, shards starting mid-row, strided x and y.
    void prefillPaths_data() {
        QTest::addColumn<int>("type");
        for (DType t : kTypes) QTest::newRow(dtype_name(t)) << static_cast<int>(t);
    }

    void prefillPaths() {
        QFETCH(int, type);
        const auto t = static_cast<DType>(type);
        Backends b(Precision::Mixed);
        auto& cuda = dynamic_cast<cuda::CudaOps&>(*b.gpu);
        const int64_t block = dtype_block_elems(t);
        const int64_t odd_in = block == 1 ? 101 : 9 * block;
        const Case cases[] = {
            {1030, 1280, 129, 0, 0, 0, 0},
            {300, 2048, 200, 4, 0, 1, 5},
            {77, odd_in, 33, 4, 1, 3, 2},
            {640, 5120, 517, 0, 0, 0, 0},
        };
        for (const Case& c : cases) {
            if (!holds(t, c)) continue;
            for (const size_t limit : {size_t(128) << 20, size_t(256) << 10}) {
                std::mt19937 rng_b(4000 + type), rng_t(4000 + type);
                std::vector<float> via_blas, via_tiles;
                cuda.set_gemm_scratch_limit(limit);
                cuda.set_prefill_gemm(cuda::CudaOps::PrefillGemm::Cublas);
                const double err_b = run_case(b, t, c, rng_b, &via_blas);
                cuda.set_prefill_gemm(cuda::CudaOps::PrefillGemm::Tiles);
                const double err_t = run_case(b, t, c, rng_t, &via_tiles);
                const double apart = relative_gap(via_blas, via_tiles);
                qInfo("%s %lldx%lld n=%lld limit %zu KiB: cuBLAS %.3g, tiles %.3g, apart %.3g", dtype_name(t),
                      static_cast<long long>(c.out), static_cast<long long>(c.in),
                      static_cast<long long>(c.n), limit >> 10, err_b, err_t, apart);
                QVERIFY2(err_b <= 3e-2 && err_t <= 3e-2, qPrintable(QString("%1x%2 n=%3: cuBLAS %4 tiles %5")
                                                                        .arg(c.out)
                                                                        .arg(c.in)
                                                                        .arg(c.n)
                                                                        .arg(err_b)
                                                                        .arg(err_t)));
                QVERIFY2(apart <= 1e-4, qPrintable(QString("the paths differ by %1").arg(apart)));
            }
        }
        cuda.set_prefill_gemm(cuda::CudaOps::PrefillGemm::Auto);
    }

    // PQ2_0S at decode sizes through each kernel on its own (CudaOps::DecodeGemm says which takes
    // what): both against the CPU and against each other; and PQ2_0T, where the inputs are whole
    // runs, equal to PQ2_0S kernel by kernel.
    // Short last runs (384, 1152, 8704 inputs), odd row counts, one to 32 rows of x; the ring
    // kernel at 1-4 x tiles (whole runs: 1024, 2048, 3072, 5120 inputs). x in fp16 throughout (int8 x
    // at 1-4 rows is x8Decode's).
    void decodePaths() {
        Backends b(Precision::Mixed);
        auto& cuda = dynamic_cast<cuda::CudaOps&>(*b.gpu);
        cuda.set_decode_x8(false);
        const Case cases[] = {
            {50, 384, 1, 16, 0, 5, 3},    {333, 1024, 7, 0, 0, 0, 0},   {129, 1152, 32, 8, 0, 3, 1},
            {2048, 5120, 24, 0, 0, 0, 0}, {5120, 8704, 1, 0, 0, 0, 0},  {1030, 1280, 9, 0, 0, 0, 0},
            {4096, 2048, 17, 0, 0, 0, 0}, {640, 3072, 12, 32, 0, 4, 5}, {1000, 2048, 30, 0, 0, 0, 0},
        };
        for (const Case& c : cases) {
            std::mt19937 rng_r(5000), rng_s(5000);
            std::mt19937 rng_g(5000);
            std::vector<float> via_registers, via_staged, via_ring;
            cuda.set_decode_gemm(cuda::CudaOps::DecodeGemm::Registers);
            const double err_r = run_case(b, DType::PQ2_0S, c, rng_r, &via_registers);
            // The ring kernel (whole runs: 1024, 2048, 5120 inputs here) does the register
            // kernel's arithmetic in its order: bit for bit the same.
            cuda.set_decode_gemm(cuda::CudaOps::DecodeGemm::Ring);
            run_case(b, DType::PQ2_0S, c, rng_g, &via_ring);
            const bool same = same_bits(via_ring, via_registers);
            QVERIFY2(same, qPrintable(QString("%1x%2 n=%3: the ring kernel differs by %4")
                                          .arg(c.out)
                                          .arg(c.in)
                                          .arg(c.n)
                                          .arg(relative_gap(via_ring, via_registers))));
            cuda.set_decode_gemm(cuda::CudaOps::DecodeGemm::Staged);
            const double err_s = run_case(b, DType::PQ2_0S, c, rng_s, &via_staged);
            const double apart = relative_gap(via_registers, via_staged);
            qInfo("PQ2_0S %lldx%lld n=%lld: registers %.3g, staged %.3g, apart %.3g",
                  static_cast<long long>(c.out), static_cast<long long>(c.in), static_cast<long long>(c.n),
                  err_r, err_s, apart);
            QVERIFY2(err_r <= 3e-2 && err_s <= 3e-2, qPrintable(QString("%1x%2 n=%3: registers %4 staged %5")
                                                                    .arg(c.out)
                                                                    .arg(c.in)
                                                                    .arg(c.n)
                                                                    .arg(err_r)
                                                                    .arg(err_s)));
            QVERIFY2(apart <= 1e-3, qPrintable(QString("the kernels differ by %1").arg(apart)));
            if (!holds(DType::PQ2_0T, c)) continue;
            // PQ2_0T through each kernel: the same weights in the same arithmetic order, so bit
            // for bit what the kernel gives on PQ2_0S (rows that are not whole tiles included).
            const std::pair<cuda::CudaOps::DecodeGemm, const std::vector<float>*> kernels[] = {
                {cuda::CudaOps::DecodeGemm::Registers, &via_registers},
                {cuda::CudaOps::DecodeGemm::Ring, &via_ring},
                {cuda::CudaOps::DecodeGemm::Staged, &via_staged}};
            for (const auto& [k, want] : kernels) {
                std::mt19937 rng_t(5000);
                std::vector<float> tiled;
                cuda.set_decode_gemm(k);
                const double err_t = run_case(b, DType::PQ2_0T, c, rng_t, &tiled);
                const bool equal = same_bits(tiled, *want);
                QVERIFY2(err_t <= 3e-2 && equal,
                         qPrintable(QString("%1x%2 n=%3 PQ2_0T kernel %4: error %5, %6 "
                                            "from PQ2_0S")
                                        .arg(c.out)
                                        .arg(c.in)
                                        .arg(c.n)
                                        .arg(static_cast<int>(k))
                                        .arg(err_t)
                                        .arg(relative_gap(tiled, *want))));
            }
        }
        cuda.set_decode_gemm(cuda::CudaOps::DecodeGemm::Auto);
    }

    // The register kernel with int8 x (CudaOps::decode_x8, matmul_decode_x8.cuh), 1-4 rows: against
    // a CPU reference of the same arithmetic (x per row and quant block as s (q0 + q1 / 256), both
    // int8, rounded as the kernel rounds them; exact integer sums) to fp32 rounding, against the fp32
    // oracle at least as near as the fp16 kernel, and bit for bit between PQ2_0S and PQ2_0T (the same
    // sums in the same order). Short last runs (PQ2_0S), one slice and many, padded rows, zeros. At
    // more rows the switch leaves the fp16 kernel: bit for bit the switch off.
    void x8Decode() {
        Backends b(Precision::Mixed);
        auto& cuda = dynamic_cast<cuda::CudaOps&>(*b.gpu);
        cuda.set_decode_x8(true);
        cuda.set_decode_gemm(cuda::CudaOps::DecodeGemm::Registers);
        const Case cases[] = {
            {50, 384, 1, 16, 0, 5, 3},    {333, 1024, 3, 0, 0, 0, 0},  {2048, 5120, 1, 0, 0, 0, 0},
            {5120, 8704, 1, 0, 0, 0, 0},  {1030, 1280, 3, 0, 0, 2, 0}, {640, 3072, 4, 32, 0, 4, 5},
            {4096, 2048, 4, 0, 0, 0, 0},  {129, 1152, 2, 8, 0, 3, 1},  {2048, 17408, 1, 0, 0, 0, 0},
            {16384, 5120, 2, 0, 0, 0, 0}, {96, 2048, 4, 0, 0, 0, 0},   {333, 1024, 7, 0, 0, 0, 0},
            {640, 3072, 5, 0, 0, 1, 2},
        };
        int seed = 9100;
        for (const Case& c : cases) {
            std::vector<float> via_split;
            for (DType t : {DType::PQ2_0S, DType::PQ2_0T}) {
                if (!holds(t, c)) continue;
                std::mt19937 rng(seed);
                const CaseWeight w = case_weight(b, t, c, rng);
                HostTensor x = random_tensor(rng, c.n, c.in, c.in + c.x_pad);
                for (int64_t i = 0; i < c.in; i += 300) x.at(0, i) = 0.0f;          // zeros on the way
                for (int64_t i = 0; i < kQuantBlock; ++i) x.at(c.n - 1, i) = 0.0f;  // a block of zeros
                HostTensor want(c.n, c.out, c.out);
                b.cpu->matmul(w.host, x.t, want.t);
                const DeviceTensor dx(*b.gpu, x), dy(*b.gpu, c.n, c.out, c.out + c.y_pad);
                b.gpu->matmul(w.dev, dx.t, dy.t);
                const HostTensor got = dy.download();
                QVERIFY2(padding_untouched(got, c.out), "wrote past a row of y");
                cuda.set_decode_x8(false);
                const DeviceTensor dy16(*b.gpu, c.n, c.out, c.out + c.y_pad);
                b.gpu->matmul(w.dev, dx.t, dy16.t);
                cuda.set_decode_x8(true);
                const HostTensor fp16 = dy16.download();
                if (c.n > 4) {
                    QVERIFY2(same_bits(got.buf, fp16.buf), "int8 x switched on changed a matmul of 5+ rows");
                    continue;
                }

                // The reference: x's blocks rounded as the kernel rounds them, the rows' weights
                // dequantized, sums in double.
                const int64_t blocks = c.in / kQuantBlock;
                std::vector<double> q(static_cast<size_t>(c.n * c.in));  // q0 + q1 / 256
                std::vector<float> sx(static_cast<size_t>(c.n * blocks));
                for (int64_t r = 0; r < c.n; ++r)
                    for (int64_t qb = 0; qb < blocks; ++qb) {
                        const float* v = &x.at(r, qb * kQuantBlock);
                        float m = 0.0f;
                        for (int64_t i = 0; i < kQuantBlock; ++i) m = std::max(m, std::fabs(v[i]));
                        const float inv = m > 0.0f ? 127.0f / m : 0.0f;
                        for (int64_t i = 0; i < kQuantBlock; ++i) {
                            const float t = v[i] * inv, q0 = std::nearbyint(t);
                            const float q1 = std::min(std::nearbyint((t - q0) * 256.0f), 127.0f);
                            q[size_t(r * c.in + qb * kQuantBlock + i)] = double(q0) + double(q1) / 256.0;
                        }
                        sx[size_t(r * blocks + qb)] = m / 127.0f;
                    }
                std::vector<float> wrow(static_cast<size_t>(c.in));
                HostTensor ref(c.n, c.out, c.out);
                for (int64_t o = 0; o < c.out; ++o) {
                    dequantize_row(w.host.type,
                                   static_cast<const uint8_t*>(w.host.data) + o * w.host.row_stride,
                                   wrow.data(), c.in);
                    for (int64_t r = 0; r < c.n; ++r) {
                        double y = 0.0;
                        for (int64_t qb = 0; qb < blocks; ++qb) {
                            double sum = 0.0;
                            for (int64_t i = qb * kQuantBlock; i < (qb + 1) * kQuantBlock; ++i)
                                sum += double(wrow[size_t(i)]) * q[size_t(r * c.in + i)];
                            y += sum * sx[size_t(r * blocks + qb)];
                        }
                        ref.at(r, o) = static_cast<float>(y);
                    }
                }
                const double err_ref = tensor_error(got, ref), err = tensor_error(got, want),
                             err16 = tensor_error(fp16, want);
                qInfo("x8 %s %lldx%lld n=%lld: against its reference %.3g, against fp32 %.3g (fp16 x %.3g)",
                      dtype_name(t), static_cast<long long>(c.out), static_cast<long long>(c.in),
                      static_cast<long long>(c.n), err_ref, err, err16);
                QVERIFY2(err_ref <= 1e-5, qPrintable(QString("%1x%2 n=%3: %4 from the int8 reference")
                                                         .arg(c.out)
                                                         .arg(c.in)
                                                         .arg(c.n)
                                                         .arg(err_ref)));
                QVERIFY2(err <= err16,
                         qPrintable(QString("%1 from the fp32 oracle, fp16 x %2").arg(err).arg(err16)));
                if (t == DType::PQ2_0S) {
                    via_split = got.buf;
                } else {
                    QVERIFY2(!via_split.empty() && same_bits(got.buf, via_split),
                             qPrintable(QString("PQ2_0T differs from PQ2_0S by %1")
                                            .arg(relative_gap(got.buf, via_split))));
                }
            }
            ++seed;
        }
        cuda.set_decode_gemm(cuda::CudaOps::DecodeGemm::Auto);
    }

    // The wgmma decode kernel (PQ2_0T of whole runs, on sm_90 GPUs): against the CPU and the register
    // kernel on the same weights and x, x staged once a call and copied by each block from its
    // slice's record, whole or in halves. With the bias sums subtracted a quant
    // block at a time (the register kernel's sums in its order) bit for bit the register kernel; on
    // the tensor cores once a tile-slice (the default), within 2e-4 of its largest output (1.6e-5 to
    // 6.6e-5 on an H100: the rounding of sums ~1024 times the outputs, the codes' offset, which a
    // wrong part, block or row among them would miss by far more). One to five x tiles (40 rows: two
    // passes), groups of tiles that are not whole warpgroup quads (333 rows: 21 tiles), one slice and
    // many, padded x and y rows. x in fp16 in both (the register kernel's int8 x at 1-4 rows is
    // x8Decode's).
    void wgmmaDecode() {
        Backends b(Precision::Mixed);
        auto& cuda = dynamic_cast<cuda::CudaOps&>(*b.gpu);
        cuda.set_decode_x8(false);
        using G = cuda::CudaOps::DecodeGemm;
        if (cuda.props().major != 9) QSKIP("the wgmma kernel runs on sm_90 GPUs only");
        QVERIFY2(cuda.has_wgmma_decode(), "an sm_90 GPU but no wgmma kernel: build for 90a");
        const Case cases[] = {
            {16, 1024, 1, 0, 0, 0, 0},     {48, 2048, 3, 0, 0, 3, 2},    {333, 3072, 8, 0, 0, 0, 0},
            {1030, 5120, 9, 0, 0, 0, 0},   {2048, 5120, 24, 0, 0, 0, 1}, {5120, 6144, 1, 0, 0, 0, 0},
            {4096, 17408, 17, 0, 0, 0, 0}, {640, 3072, 32, 0, 0, 5, 0},  {512, 2048, 31, 0, 0, 0, 0},
        };
        struct Way {
            bool halves, bias_mma;
            const char* name;
        };
        const Way ways[] = {
            {true, true, "x in halves, bias on the tensor cores"},
            {false, true, "x whole, bias on the tensor cores"},
            {true, false, "x in halves, bias a block at a time"},
            {false, false, "x whole, bias a block at a time"},
        };
        for (const Case& c : cases) {
            std::vector<float> via_registers;
            std::mt19937 rng_r(6000);
            cuda.set_decode_gemm(G::Registers);
            const double err_r = run_case(b, DType::PQ2_0T, c, rng_r, &via_registers);
            for (const Way& way : ways) {
                std::vector<float> via_wgmma;
                std::mt19937 rng_w(6000);
                cuda.set_decode_gemm(G::Wgmma);
                cuda.set_record_halves(way.halves);
                cuda.set_wgmma_bias_mma(way.bias_mma);
                const double err_w = run_case(b, DType::PQ2_0T, c, rng_w, &via_wgmma);
                const double gap = relative_gap(via_wgmma, via_registers);
                qInfo(
                    "wgmma PQ2_0T %lldx%lld n=%lld, %s: error %.3g (registers %.3g), %.3g from the register "
                    "kernel",
                    static_cast<long long>(c.out), static_cast<long long>(c.in), static_cast<long long>(c.n),
                    way.name, err_w, err_r, gap);
                QVERIFY2(err_w <= 3e-2 && err_r <= 3e-2,
                         qPrintable(QString("%1x%2 n=%3: wgmma %4, registers %5")
                                        .arg(c.out)
                                        .arg(c.in)
                                        .arg(c.n)
                                        .arg(err_w)
                                        .arg(err_r)));
                if (way.bias_mma)
                    QVERIFY2(gap <= 2e-4, qPrintable(QString("%1x%2 n=%3, %4: %5 from the register kernel")
                                                         .arg(c.out)
                                                         .arg(c.in)
                                                         .arg(c.n)
                                                         .arg(way.name)
                                                         .arg(gap)));
                else
                    QVERIFY2(same_bits(via_wgmma, via_registers),
                             qPrintable(QString("%1: the kernels differ by %2").arg(way.name).arg(gap)));
            }
        }
        cuda.set_decode_gemm(G::Auto);
        cuda.set_record_halves(true);
        cuda.set_wgmma_bias_mma(true);
    }

    // The cross-slice sum shared by a group's slices (sum_slices, from
    // CudaOps::shared_sum_outputs outputs a group): bit for bit the sum by the last slice alone,
    // through every kernel that launches one wave (registers, ring, wgmma; the staged kernel never
    // shares), and against the CPU. rotatedInputs and convOutputs run again with every sum shared.
    void sharedSums() {
        Backends b(Precision::Mixed);
        auto& cuda = dynamic_cast<cuda::CudaOps&>(*b.gpu);
        using G = cuda::CudaOps::DecodeGemm;
        const Case cases[] = {
            {4096, 17408, 17, 0, 0, 0, 0}, {333, 3072, 8, 0, 0, 0, 0},  {2048, 5120, 24, 0, 0, 0, 1},
            {5120, 6144, 1, 0, 0, 0, 0},   {640, 3072, 32, 0, 0, 5, 0}, {1030, 5120, 3, 0, 0, 0, 0},
        };
        std::vector<G> kernels = {G::Registers, G::Ring, G::Staged};
        if (cuda.has_wgmma_decode()) kernels.push_back(G::Wgmma);
        for (const Case& c : cases)
            for (G k : kernels) {
                cuda.set_decode_gemm(k);
                std::vector<float> alone, shared;
                std::mt19937 rng_a(6100), rng_s(6100);
                cuda.set_shared_sum_outputs(cuda::CudaOps::kNeverShared);
                const double err_a = run_case(b, DType::PQ2_0T, c, rng_a, &alone);
                cuda.set_shared_sum_outputs(1);
                const double err_s = run_case(b, DType::PQ2_0T, c, rng_s, &shared);
                const bool same = same_bits(alone, shared);
                qInfo("shared sums %lldx%lld n=%lld kernel %d: error %.3g, alone %.3g, %s",
                      static_cast<long long>(c.out), static_cast<long long>(c.in),
                      static_cast<long long>(c.n), static_cast<int>(k), err_s, err_a,
                      same ? "equal" : "DIFFERENT");
                QVERIFY2(err_s <= 3e-2 && err_a <= 3e-2, "far from the CPU");
                QVERIFY2(same, qPrintable(QString("%1x%2 n=%3 kernel %4: shared sums differ by %5")
                                              .arg(c.out)
                                              .arg(c.in)
                                              .arg(c.n)
                                              .arg(static_cast<int>(k))
                                              .arg(relative_gap(shared, alone))));
            }
        cuda.set_decode_gemm(G::Auto);
        cuda.set_shared_sum_outputs(cuda::CudaOps::kSharedSumOutputs);
    }

    // rotated_matmul: the CPU stages the input with the ops it is made of and multiplies; the
    // GPU's register kernel builds it as it stages x (matmul_decode.cuh, stage_rotated: up to four
    // rows) from the same arithmetic as the rotate kernels, so it equals, bit for bit, the same
    // kernel on the input those kernels staged (fusing off), and leaves the staging buffer
    // untouched. The wgmma kernel (9-32 rows) and the ring kernel never build it: the input is
    // staged first, and what they give is the same bit for bit either way. Each kind at its model
    // shape, Hadamard blocks of 32..1024 and none, short last runs (2176, 2560 inputs), PQ2_0S and
    // PQ2_0T, 1-33 rows; and inputs left to staging (heads of 64 for the gated norm; more than four
    // rows), through each kernel choice.
    void rotatedInputs() {
        Backends b(Precision::Mixed);
        auto& cuda = dynamic_cast<cuda::CudaOps&>(*b.gpu);
        using K = RotatedInput::Kind;
        using G = cuda::CudaOps::DecodeGemm;
        struct RCase {
            K kind;
            int64_t out, in, n, width;
            int block;
            bool builds;  // an input stage_rotated builds (stage_rotated_takes), at any rows
        };
        const RCase cases[] = {
            {K::Swiglu, 640, 17408, 1, 0, 1024, true},
            {K::Swiglu, 320, 17408, 2, 0, 1024, true},
            {K::GatedNorm, 512, 6144, 1, 128, 1024, true},
            {K::GatedNorm, 512, 6144, 4, 128, 1024, true},
            {K::SigmoidGate, 512, 6144, 2, 256, 1024, true},
            {K::SigmoidGate, 300, 3072, 3, 64, 512, true},
            {K::Rotate, 256, 3072, 1, 0, 256, true},
            {K::Rotate, 200, 2176, 2, 0, 64, true},
            {K::Rotate, 128, 1152, 3, 0, 0, true},
            {K::GatedNorm, 256, 2560, 4, 128, 128, true},
            {K::Swiglu, 100, 2176, 1, 0, 32, true},
            {K::GatedNorm, 256, 2048, 2, 64, 1024, false},
            {K::Swiglu, 320, 17408, 24, 0, 1024, true},
            {K::Swiglu, 256, 2048, 33, 0, 1024, true},
            {K::Swiglu, 2048, 17408, 24, 0, 1024, true},
            {K::GatedNorm, 768, 6144, 13, 128, 128, true},
            {K::SigmoidGate, 1024, 6144, 32, 256, 1024, true},
            {K::Rotate, 256, 3072, 9, 0, 256, true},
            {K::GatedNorm, 256, 2048, 20, 64, 1024, false},
            {K::Rotate, 128, 1152, 10, 0, 0, true},
        };
        int seed = 7000;
        // The sum as planned, then shared; then int8 x (one x tile of the register kernel) as planned.
        for (const auto& [shared, x8] :
             {std::pair{int64_t{4096}, false}, std::pair{int64_t{1}, false}, std::pair{int64_t{4096}, true}})
            for (const RCase& c : cases)
                for (DType t : {DType::PQ2_0S, DType::PQ2_0T}) {
                    cuda.set_shared_sum_outputs(shared);
                    cuda.set_decode_x8(x8);
                    const Case wc{c.out, c.in, c.n, 0, 0, 0, 0};
                    if (!holds(t, wc)) continue;
                    std::mt19937 rng(seed++);
                    const CaseWeight w = case_weight(b, t, wc, rng);
                    const RandomInput ri = random_input(*b.gpu, rng, c.kind, c.n, c.in, c.width, c.block);
                    HostTensor staged(c.n, c.in, c.in), want(c.n, c.out, c.out);
                    b.cpu->rotated_matmul(w.host, ri.host, staged.t, want.t);
                    const RotatedInput& in = ri.dev;
                    std::vector<G> kernels = {G::Auto, G::Registers, G::Ring};
                    if (cuda.has_wgmma_decode()) kernels.push_back(G::Wgmma);
                    if (x8) kernels = {G::Auto, G::Registers};  // the kernels int8 x changes
                    // Where the wgmma kernel takes the weight, forcing it runs it (else Auto's pick).
                    const bool wgmma_takes = t == DType::PQ2_0T && c.in % 1024 == 0;
                    for (G k : kernels) {
                        cuda.set_decode_gemm(k);
                        std::vector<HostTensor> got;  // fused, staged first
                        bool untouched = false;
                        for (bool fuse : {true, false}) {
                            cuda.set_fuse_inputs(fuse);
                            const DeviceTensor dstaged(*b.gpu, c.n, c.in, c.in),
                                dy(*b.gpu, c.n, c.out, c.out + 2);
                            b.gpu->rotated_matmul(w.dev, in, dstaged.t, dy.t);
                            got.push_back(dy.download());
                            QVERIFY2(padding_untouched(got.back(), c.out), "wrote past a row of y");
                            if (fuse) {
                                const HostTensor s = dstaged.download();
                                untouched = std::all_of(s.buf.begin(), s.buf.end(),
                                                        [](float v) { return std::isnan(v); });
                            }
                        }
                        const double err = tensor_error(got[0], want),
                                     err_staged = tensor_error(got[1], want);
                        const bool same = std::memcmp(got[0].buf.data(), got[1].buf.data(),
                                                      got[0].buf.size() * sizeof(float)) == 0;
                        qInfo(
                            "%s %s %lldx%lld n=%lld block %d kernel %d%s: error %.3g, staged first %.3g, %s, "
                            "%s",
                            names_of(c.kind), dtype_name(t), static_cast<long long>(c.out),
                            static_cast<long long>(c.in), static_cast<long long>(c.n), c.block,
                            static_cast<int>(k), x8 ? " x8" : "", err, err_staged,
                            same ? "equal" : "different", untouched ? "fused" : "staged");
                        QVERIFY2(err <= 3e-2 && err_staged <= 3e-2,
                                 qPrintable(QString("error %1, staged first %2").arg(err).arg(err_staged)));
                        QVERIFY2(same, qPrintable(QString("fused and staged first differ by %1")
                                                      .arg(relative_gap(got[0].buf, got[1].buf))));
                        if (k == G::Registers) {
                            const bool fusable = c.builds && c.n <= 4;
                            QVERIFY2(untouched == fusable,
                                     fusable ? "fusable but staged" : "fused where it may not");
                        }
                        if (k == G::Ring || (k == G::Wgmma && wgmma_takes))
                            QVERIFY2(!untouched, "fused on a kernel that does not build inputs");
                    }
                }
        cuda.set_decode_gemm(G::Auto);
        cuda.set_fuse_inputs(true);
        cuda.set_shared_sum_outputs(cuda::CudaOps::kSharedSumOutputs);
        cuda.set_decode_x8(true);
    }

    // GDN's projection with its conv (matmul_conv1d_silu): at decode steps of 1-4 rows on the
    // register kernel, fused into its slices' sum, bit for bit the matmul then conv1d_silu (the
    // conv's output, the state it leaves, the columns past the conv); elsewhere (other kernels, 8
    // rows, one slice, a prefill) the two ops; all near the CPU's. Sequences in random state slots,
    // a second step continuing the first.
    void convOutputs() {
        Backends b(Precision::Mixed);
        auto& cuda = dynamic_cast<cuda::CudaOps&>(*b.gpu);
        using G = cuda::CudaOps::DecodeGemm;
        struct CCase {
            int64_t out, in, channels;
            std::vector<int> lengths;  // tokens of each sequence
        };
        const CCase cases[] = {
            {768, 5120, 520, {1}},
            {512, 2048, 512, {1, 1, 1}},
            {1280, 3072, 1000, {1, 1, 1, 1}},
            {320, 1024, 200, {1, 1}},  // one slice: the two ops
            {640, 2048, 600, std::vector<int>(8, 1)},
            {512, 2048, 300, {2, 1}},  // a prefill: the two ops
        };
        constexpr int kTaps = cuda::kConvTaps, kExtraSlots = 3;
        int seed = 8100;
        // Each case with the cross-slice sum as planned, then shared by every group's slices, then
        // with int8 x (one x tile of the register kernel) as planned.
        for (const auto& [shared, x8] :
             {std::pair{int64_t{4096}, false}, std::pair{int64_t{1}, false}, std::pair{int64_t{4096}, true}})
            for (const CCase& c : cases)
                for (DType t : {DType::PQ2_0S, DType::PQ2_0T}) {
                    cuda.set_shared_sum_outputs(shared);
                    cuda.set_decode_x8(x8);
                    const int n_seqs = static_cast<int>(c.lengths.size());
                    int n = 0;
                    for (int l : c.lengths) n += l;
                    const Case wc{c.out, c.in, n, 0, 0, 0, 0};
                    if (!holds(t, wc)) continue;
                    std::mt19937 rng(seed++);
                    const CaseWeight w = case_weight(b, t, wc, rng);
                    const int n_slots = n_seqs + kExtraSlots;
                    std::vector<int> slot_of(static_cast<size_t>(n_slots));
                    for (int i = 0; i < n_slots; ++i) slot_of[size_t(i)] = i;
                    std::shuffle(slot_of.begin(), slot_of.end(), rng);
                    std::vector<SeqInfo> seqs;
                    for (int s = 0, q = 0; s < n_seqs; q += c.lengths[size_t(s)], ++s) {
                        SeqInfo si;
                        si.q_start = q;
                        si.n_q = c.lengths[size_t(s)];
                        si.state_slot = slot_of[size_t(s)];
                        seqs.push_back(si);
                    }
                    StepInfo info;
                    info.seqs = seqs.data();
                    info.host_seqs = seqs.data();
                    info.n_seqs = n_seqs;
                    info.n_tokens = n;
                    const auto conv_w = random_vector(rng, size_t(c.channels) * kTaps);
                    const auto state0 =
                        random_vector(rng, size_t(n_slots) * (kTaps - 1) * size_t(c.channels), -2.0f, 2.0f);
                    const bool decode = n == n_seqs;
                    const DeviceBytes dseqs(*b.gpu, seqs), dconv_w(*b.gpu, conv_w);
                    StepInfo dinfo = info;
                    dinfo.seqs = dseqs.as<SeqInfo>();
                    for (G k : {G::Auto, G::Registers, G::Ring, G::Staged}) {
                        if (x8 && k != G::Auto && k != G::Registers) continue;  // int8 x changes these
                        cuda.set_decode_gemm(k);
                        // Where the register kernel runs the conv (decode_kernel's choice at Auto).
                        const bool registers =
                            k == G::Registers || (k == G::Auto && n <= (t == DType::PQ2_0T ? 4 : 2));
                        const bool fusable = decode && n <= 4 && c.in > 1024 && registers;
                        // Two steps from the same state: the CPU's and, fused then not, the GPU's.
                        std::vector<float> cpu_state = state0;
                        std::vector<std::vector<float>> states(2, state0);
                        double err = 0.0;
                        bool same = true;
                        for (int step = 0; step < 2; ++step) {
                            const HostTensor x = random_tensor(rng, n, c.in, c.in + 3);
                            HostTensor want_y(n, c.out, c.out), want(n, c.channels, c.channels + 1);
                            b.cpu->matmul_conv1d_silu(w.host, x.t, want_y.t, conv_w.data(), kTaps,
                                                      GdnState{cpu_state.data(), nullptr, n_slots}, info,
                                                      want.t);
                            const DeviceTensor dx(*b.gpu, x);
                            std::vector<HostTensor> got, got_y;
                            for (int fuse = 0; fuse < 2; ++fuse) {
                                cuda.set_fuse_inputs(fuse == 0);
                                DeviceBytes dstate(*b.gpu, states[size_t(fuse)]);
                                const DeviceTensor dy(*b.gpu, n, c.out, c.out + 2),
                                    dconv(*b.gpu, n, c.channels, c.channels + 1);
                                b.gpu->matmul_conv1d_silu(w.dev, dx.t, dy.t, dconv_w.as<float>(), kTaps,
                                                          GdnState{dstate.as<float>(), nullptr, n_slots},
                                                          dinfo, dconv.t);
                                got.push_back(dconv.download());
                                got_y.push_back(dy.download());
                                QVERIFY2(padding_untouched(got.back(), c.channels) &&
                                             padding_untouched(got_y.back(), c.out),
                                         "wrote past a row");
                                b.gpu->download(states[size_t(fuse)].data(), dstate.p,
                                                states[size_t(fuse)].size() * sizeof(float));
                            }
                            err = std::max({err, tensor_error(got[0], want), tensor_error(got[1], want)});
                            same = same && std::memcmp(got[0].buf.data(), got[1].buf.data(),
                                                       got[0].buf.size() * sizeof(float)) == 0;
                            for (int64_t r = 0; r < n; ++r)  // y past the conv's columns
                                same = same &&
                                       std::memcmp(&got_y[0].at(r, c.channels), &got_y[1].at(r, c.channels),
                                                   size_t(c.out - c.channels) * sizeof(float)) == 0;
                            const double e_y = relative_error(
                                std::vector<double>(&got_y[0].at(0, c.channels), &got_y[0].at(0, c.out)),
                                std::vector<double>(&want_y.at(0, c.channels), &want_y.at(0, c.out)));
                            err = std::max(err, e_y);
                            // Unfused, y's conv columns hold the matmul; fused, they are left as they were.
                            QVERIFY2(!std::isnan(got_y[1].at(0, 0)),
                                     "the unfused path left y's conv columns");
                            QVERIFY2(std::isnan(got_y[0].at(0, 0)) == fusable,
                                     fusable ? "not fused where the register kernel runs"
                                             : "fused where the register kernel does not run");
                        }
                        same = same && states[0] == states[1];
                        const double e_state =
                            relative_error(std::vector<double>(states[0].begin(), states[0].end()),
                                           std::vector<double>(cpu_state.begin(), cpu_state.end()));
                        qInfo(
                            "conv %s %lldx%lld, %lld channels, %d rows (%s), kernel %d%s, %s: error %.3g, "
                            "state "
                            "%.3g, %s",
                            dtype_name(t), static_cast<long long>(c.out), static_cast<long long>(c.in),
                            static_cast<long long>(c.channels), n, decode ? "decode" : "prefill",
                            static_cast<int>(k), x8 ? " x8" : "", fusable ? "fused" : "two ops", err, e_state,
                            same ? "equal" : "DIFFERENT");
                        QVERIFY2(err <= 3e-2 && e_state <= 3e-2,
                                 qPrintable(QString("error %1, state %2").arg(err).arg(e_state)));
                        QVERIFY2(same, "fused and unfused results differ");
                    }
                }
        cuda.set_decode_gemm(G::Auto);
        cuda.set_fuse_inputs(true);
        cuda.set_shared_sum_outputs(cuda::CudaOps::kSharedSumOutputs);
        cuda.set_decode_x8(true);
    }

    // The residual add in a sublayer output's matmul and the norm after it in the next matmuls
    // (Ops::norms_in_matmuls): rotated_matmul_add on the register kernel gives x bit for bit as
    // rotated_matmul then add, and leaves each row's sum of squares in parts that sum to the new
    // row's; a ResidualNorm input built from those parts (plain, and through GDN's conv) matches
    // the same input staged by rmsnorm and rotate, and the CPU's; its normed rows match rmsnorm's.
    void normsInMatmuls() {
        Backends b(Precision::Mixed);
        auto& cuda = dynamic_cast<cuda::CudaOps&>(*b.gpu);
        using K = RotatedInput::Kind;
        using G = cuda::CudaOps::DecodeGemm;
        struct NCase {
            K kind;
            int64_t hidden, in, n, width;  // x [n, hidden]; the output projection's input width
        };
        const NCase cases[] = {
            {K::Swiglu, 2048, 17408, 1, 0},       {K::GatedNorm, 3072, 6144, 2, 128},
            {K::SigmoidGate, 2048, 6144, 3, 256}, {K::Swiglu, 5120, 4096, 4, 0},
            {K::GatedNorm, 2048, 2048, 4, 128},
        };
        constexpr int kTaps = cuda::kConvTaps;
        const int64_t out2 = 640, channels = 520;
        cuda.set_decode_gemm(G::Registers);
        int seed = 9100;
        for (const auto& [shared, x8] :
             {std::pair{int64_t{4096}, true}, std::pair{int64_t{1}, true}, std::pair{int64_t{4096}, false}})
            for (const NCase& c : cases)
                for (DType t : {DType::PQ2_0S, DType::PQ2_0T}) {
                    cuda.set_shared_sum_outputs(shared);
                    cuda.set_decode_x8(x8);
                    std::mt19937 rng(seed++);
                    const CaseWeight w1 = case_weight(b, t, Case{c.hidden, c.in, c.n, 0, 0, 0, 0}, rng);
                    const CaseWeight w2 = case_weight(b, t, Case{out2, c.hidden, c.n, 0, 0, 0, 0}, rng);
                    const RandomInput ri = random_input(*b.gpu, rng, c.kind, c.n, c.in, c.width, 1024);
                    const HostTensor x0 = random_tensor(rng, c.n, c.hidden, c.hidden + 2, -3.0f, 3.0f);
                    const auto norm_w = random_vector(rng, size_t(c.hidden), 0.5f, 1.5f);
                    std::vector<float> signs_h;
                    for (int64_t i = 0; i < c.hidden; ++i) signs_h.push_back((rng() & 1) ? 1.0f : -1.0f);
                    // The CPU: x += the projection, then the normed input's matmul.
                    HostTensor x_cpu(c.n, c.hidden, x0.t.ld), y_cpu(c.n, c.hidden, c.hidden),
                        st_cpu(c.n, c.in, c.in);
                    x_cpu.buf = x0.buf;
                    b.cpu->rotated_matmul_add(w1.host, ri.host, st_cpu.t, y_cpu.t, x_cpu.t);
                    RotatedInput norm{K::ResidualNorm,
                                      x_cpu.t,
                                      {},
                                      norm_w.data(),
                                      1e-6f,
                                      0,
                                      Rotation{1024, signs_h.data()}};
                    HostTensor want_n(c.n, c.hidden, c.hidden), want2(c.n, out2, out2),
                        st2(c.n, c.hidden, c.hidden);
                    norm.normed = want_n.t;
                    b.cpu->rotated_matmul(w2.host, norm, st2.t, want2.t);

                    const DeviceBytes dnorm_w(*b.gpu, norm_w), dsigns_h(*b.gpu, signs_h);
                    const RotatedInput& in = ri.dev;
                    // The GPU: the add in the matmul, and apart (rotated_matmul, then add).
                    const DeviceTensor dx(*b.gpu, x0), dx_apart(*b.gpu, x0);
                    const DeviceTensor dst(*b.gpu, c.n, c.in, c.in), dy(*b.gpu, c.n, c.hidden, c.hidden);
                    const Tensor sq = b.gpu->rotated_matmul_add(w1.dev, in, dst.t, dy.t, dx.t);
                    QVERIFY2(sq.data && sq.rows == c.n && sq.cols > 0, "the register kernel left no squares");
                    std::vector<float> parts(size_t(sq.rows * sq.ld));
                    b.gpu->download(parts.data(), sq.data, parts.size() * sizeof(float));
                    b.gpu->rotated_matmul(w1.dev, in, dst.t, dy.t);
                    b.gpu->add(dx_apart.t, dy.t, dx_apart.t);
                    const HostTensor x_gpu = dx.download();
                    HostTensor want_n_gpu(c.n, c.hidden, c.hidden);  // rmsnorm of the GPU's new rows
                    b.cpu->rmsnorm(x_gpu.t, norm_w.data(), 1e-6f, want_n_gpu.t);
                    QVERIFY2(same_bits(x_gpu.buf, dx_apart.download().buf),
                             "the add in the matmul differs from rotated_matmul then add");
                    const double err_x = tensor_error(x_gpu, x_cpu);
                    double err_sq = 0.0;
                    for (int64_t r = 0; r < c.n; ++r) {
                        double total = 0.0, want = 0.0;
                        for (int64_t p = 0; p < sq.cols; ++p) total += parts[size_t(r * sq.ld + p)];
                        for (int64_t o = 0; o < c.hidden; ++o)
                            want += double(x_gpu.at(r, o)) * x_gpu.at(r, o);
                        err_sq = std::max(err_sq, std::fabs(total - want) / want);
                    }
                    // The normed input's matmul from the parts, against rmsnorm and rotate first.
                    norm.x = dx.t;
                    norm.w = dnorm_w.as<float>();
                    norm.r.signs = dsigns_h.as<float>();
                    std::vector<HostTensor> got, normed;
                    bool untouched = false;
                    for (bool fused : {true, false}) {
                        const DeviceTensor dn(*b.gpu, c.n, c.hidden, c.hidden + 1),
                            dst2(*b.gpu, c.n, c.hidden, c.hidden), dy2(*b.gpu, c.n, out2, out2 + 2);
                        norm.normed = dn.t;
                        norm.squares = fused ? sq : Tensor{};
                        b.gpu->rotated_matmul(w2.dev, norm, dst2.t, dy2.t);
                        got.push_back(dy2.download());
                        normed.push_back(dn.download());
                        QVERIFY2(
                            padding_untouched(got.back(), out2) && padding_untouched(normed.back(), c.hidden),
                            "wrote past a row");
                        if (fused) {
                            const HostTensor s2 = dst2.download();
                            untouched = std::all_of(s2.buf.begin(), s2.buf.end(),
                                                    [](float v) { return std::isnan(v); });
                        }
                    }
                    // GDN's projection of the normed input, its conv on the way out: against the
                    // input staged first (fuse_inputs off), one token a sequence.
                    const CaseWeight w3 = case_weight(b, t, Case{out2, c.hidden, c.n, 0, 0, 0, 0}, rng);
                    std::vector<SeqInfo> seqs(size_t(c.n));
                    for (int s = 0; s < c.n; ++s) seqs[size_t(s)] = SeqInfo{s, 1, 7, int(c.n) - 1 - s, 0};
                    const auto conv_w = random_vector(rng, size_t(channels) * kTaps);
                    const auto state0 = random_vector(rng, size_t(c.n) * (kTaps - 1) * size_t(channels));
                    const DeviceBytes dseqs(*b.gpu, seqs), dconv_w(*b.gpu, conv_w);
                    StepInfo info;
                    info.seqs = dseqs.as<SeqInfo>();
                    info.host_seqs = seqs.data();
                    info.n_seqs = int(c.n);
                    info.n_tokens = int(c.n);
                    std::vector<HostTensor> conv_out;
                    std::vector<std::vector<float>> states;
                    for (bool fused : {true, false}) {
                        cuda.set_fuse_inputs(fused);
                        DeviceBytes dstate(*b.gpu, state0);
                        const DeviceTensor dn(*b.gpu, c.n, c.hidden, c.hidden),
                            dst3(*b.gpu, c.n, c.hidden, c.hidden), dy3(*b.gpu, c.n, out2, out2),
                            dconv(*b.gpu, c.n, channels, channels + 1);
                        norm.normed = dn.t;
                        norm.squares = sq;
                        b.gpu->rotated_matmul_conv1d_silu(
                            w3.dev, norm, dst3.t, dy3.t, dconv_w.as<float>(), kTaps,
                            GdnState{dstate.as<float>(), nullptr, int(c.n)}, info, dconv.t);
                        conv_out.push_back(dconv.download());
                        QVERIFY2(padding_untouched(conv_out.back(), channels), "wrote past a row");
                        states.emplace_back(state0.size());
                        b.gpu->download(states.back().data(), dstate.p, state0.size() * sizeof(float));
                        if (fused)
                            QVERIFY2(std::isnan(dy3.download().at(0, 0)),
                                     "the conv's normed input not fused");
                    }
                    cuda.set_fuse_inputs(true);
                    const double err = tensor_error(got[0], want2), gap = tensor_error(got[0], got[1]),
                                 err_n = tensor_error(normed[0], want_n_gpu),
                                 gap_n = tensor_error(normed[0], normed[1]),
                                 gap_conv = tensor_error(conv_out[0], conv_out[1]),
                                 gap_state = relative_gap(states[0], states[1]);
                    qInfo(
                        "norms in matmuls %s %s hidden %lld in %lld n=%lld shared %lld%s: x %.3g, squares "
                        "%.3g, "
                        "%lld parts; next %.3g (staged first %.3g), normed %.3g (%.3g); conv %.3g, state "
                        "%.3g",
                        names_of(c.kind), dtype_name(t), static_cast<long long>(c.hidden),
                        static_cast<long long>(c.in), static_cast<long long>(c.n),
                        static_cast<long long>(shared), x8 ? " x8" : "", err_x, err_sq,
                        static_cast<long long>(sq.cols), err, gap, err_n, gap_n, gap_conv, gap_state);
                    QVERIFY2(err_x <= 3e-2 && err <= 3e-2, "far from the CPU");
                    QVERIFY2(err_sq <= 1e-5, "the parts do not sum to the rows' squares");
                    QVERIFY2(untouched, "the normed input was staged, not built in the matmul");
                    QVERIFY2(gap <= 2e-3 && gap_conv <= 2e-3 && gap_state <= 2e-3,
                             "built from the parts, far from the input staged first");
                    QVERIFY2(err_n <= 1e-5 && gap_n <= 1e-5, "the normed rows differ from rmsnorm's");
                }
        cuda.set_decode_gemm(G::Auto);
        cuda.set_shared_sum_outputs(cuda::CudaOps::kSharedSumOutputs);
        cuda.set_decode_x8(true);
        QVERIFY(cuda.norms_in_matmuls(1) && !cuda.norms_in_matmuls(2));  // the model's rule: one row
    }

    // A staging buffer that is not whole rows, or a sigmoid gate of the wrong shape: a clear
    // error, nothing run.
    void rotatedInputRejectsBadShapes() {
        Backends b(Precision::Mixed);
        std::mt19937 rng(11);
        const CaseWeight w = case_weight(b, DType::PQ2_0S, Case{64, 1024, 2, 0, 0, 0, 0}, rng);
        const DeviceTensor x(*b.gpu, random_tensor(rng, 2, 1024, 1024));
        const DeviceTensor gate(*b.gpu, random_tensor(rng, 8, 512, 512));
        const DeviceTensor staged(*b.gpu, 2, 1024, 1024), padded(*b.gpu, 2, 1024, 1030);
        const DeviceTensor y(*b.gpu, 2, 64, 64);
        RotatedInput in{RotatedInput::Kind::SigmoidGate, x.t, gate.t.cols_view(256, 256)};
        in.width = 256;
        b.gpu->rotated_matmul(w.dev, in, staged.t, y.t);  // 4 heads a row, 2 rows: 8 gate rows
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, b.gpu->rotated_matmul(w.dev, in, padded.t, y.t));
        in.width = 128;  // 8 heads a row want 16 gate rows of 128
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, b.gpu->rotated_matmul(w.dev, in, staged.t, y.t));
    }

    void rejectsMismatchedShapes() {
        Backends b;
        std::mt19937 rng(9);
        const std::vector<uint8_t> bytes = random_weight(rng, DType::F32, 64, 8, 256);
        const DeviceBytes w(*b.gpu, bytes.data(), bytes.size());
        const DeviceTensor x(*b.gpu, random_tensor(rng, 2, 63, 64));
        const DeviceTensor y(*b.gpu, 2, 8, 8);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 b.gpu->matmul(Weight{w.p, DType::F32, 64, 8, 256}, x.t, y.t));
    }
};

QTEST_APPLESS_MAIN(TestCudaMatmul)
#include "test_cuda_matmul.moc"
