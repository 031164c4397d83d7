// MatmulChain (kernels/cuda/matmul_chain.h): one-row PQ2_0T matmuls in one persistent kernel.
// Every link's y bit for bit what CudaOps::matmul gives one link at a time (the register kernel
// with int8 x, the same x: the chain's sums of the link before's slices equal that kernel's y),
// and near the CPU oracle's chain of fp32 matmuls. Chains mix x from the link before (one slice
// and many, more slices than one round of loads) with x of a link's own (the link before's y
// then summed by the whole grid), and end on one slice or many; a chain of the 27B layout's
// shapes; a chain run twice, and recorded into a CUDA graph; links it cannot run rejected with
// what to fix.
#include <QtTest>
#include <cstring>
#include <memory>
#include <random>
#include <stdexcept>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/matmul_chain.h"
#include "kernels/formats.h"
#include "tests/kernels/cuda/cuda_test_util.h"

using namespace niwa::kernels;
using namespace niwa::kernels::test;

namespace {

// A random ternary matrix (trits -1/0/1, scales 0.01..0.1): PQ2_0 rows for the CPU, the same rows
// as PQ2_0T on the GPU.
struct ChainWeight {
    std::vector<uint8_t> file;
    Weight host;
    std::unique_ptr<DeviceBytes> dev_bytes;
    Weight dev;
};

ChainWeight chain_weight(Backends& b, std::mt19937& rng, int64_t in, int64_t out) {
    ChainWeight w;
    const size_t stride = dtype_row_bytes(DType::PQ2_0, in);
    w.file.resize(stride * static_cast<size_t>(out));
    std::vector<int8_t> trits(static_cast<size_t>(in));
    std::vector<float> scales(static_cast<size_t>(in / kQuantBlock));
    std::uniform_real_distribution<float> scale(0.01f, 0.1f);
    for (int64_t r = 0; r < out; ++r) {
        for (auto& t : trits) t = static_cast<int8_t>(static_cast<int>(rng() % 3) - 1);
        for (auto& s : scales) s = scale(rng);
        pack_ternary_row(DType::PQ2_0, trits.data(), scales.data(), &w.file[static_cast<size_t>(r) * stride],
                         in);
    }
    w.host = Weight{w.file.data(), DType::PQ2_0, in, out, stride};
    const std::vector<uint8_t> tiled =
        convert_rows(DType::PQ2_0, DType::PQ2_0T, w.file.data(), stride, out, in);
    w.dev_bytes = std::make_unique<DeviceBytes>(*b.gpu, tiled.data(), tiled.size());
    w.dev = Weight{w.dev_bytes->p, DType::PQ2_0T, in, out, dtype_row_bytes(DType::PQ2_0T, in)};
    return w;
}

// A link's shape and where its x comes from.
struct Shape {
    int64_t in, out;
    bool own_x;  // false: the link before's y
};

std::vector<float> download(Ops& ops, const void* p, int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    ops.download(v.data(), p, v.size() * sizeof(float));
    return v;
}

}  // namespace

class TestCudaMatmulChain : public QObject {
    Q_OBJECT

    // Runs the chain `shapes` on fresh random weights and x, then the same links one matmul at a
    // time on the GPU and on the CPU, and compares every link's y.
    void check_chain(const std::vector<Shape>& shapes, unsigned seed) {
        Backends b(Precision::Mixed);
        auto& cuda = dynamic_cast<cuda::CudaOps&>(*b.gpu);
        cuda.set_decode_x8(true);
        cuda.set_decode_gemm(cuda::CudaOps::DecodeGemm::Registers);
        std::mt19937 rng(seed);
        std::vector<ChainWeight> ws;
        std::vector<std::unique_ptr<DeviceTensor>> xs, ys, refs;
        std::vector<HostTensor> host_x;
        std::vector<cuda::ChainLink> links;
        for (size_t i = 0; i < shapes.size(); ++i) {
            const Shape& s = shapes[i];
            ws.push_back(chain_weight(b, rng, s.in, s.out));
            host_x.push_back(random_tensor(rng, 1, s.in, s.in));
            xs.push_back(std::make_unique<DeviceTensor>(*b.gpu, host_x.back()));
            ys.push_back(std::make_unique<DeviceTensor>(*b.gpu, 1, s.out, s.out));  // poisoned
            refs.push_back(std::make_unique<DeviceTensor>(*b.gpu, 1, s.out, s.out));
            links.push_back({ws.back().dev, s.own_x ? xs.back()->t.as<const float>() : nullptr,
                             ys.back()->t.as<float>()});
        }
        cuda::MatmulChain chain(cuda, links);
        chain.run();
        std::vector<std::vector<float>> first;
        for (const auto& y : ys) first.push_back(download(*b.gpu, y->t.data, y->t.cols));
        // Again, with every y poisoned: the barrier's count and the partials start over.
        for (const auto& y : ys) {
            const std::vector<unsigned char> poison(size_t(y->t.cols) * sizeof(float), 0xFF);
            b.gpu->upload(y->t.data, poison.data(), poison.size());
        }
        chain.run();
        // One at a time: the GPU from the same x (a link reading the link before's y reads the
        // separate kernel's), the CPU from its own ys.
        std::vector<float> cpu_prev;
        for (size_t i = 0; i < shapes.size(); ++i) {
            const Shape& s = shapes[i];
            const Tensor x = s.own_x ? xs[i]->t : Tensor{refs[i - 1]->t.data, DType::F32, 1, s.in, s.in};
            b.gpu->matmul(ws[i].dev, x, refs[i]->t);
            const std::vector<float> got = download(*b.gpu, ys[i]->t.data, s.out);
            const std::vector<float> want = download(*b.gpu, refs[i]->t.data, s.out);
            std::vector<float> cx = s.own_x ? host_x[i].buf : cpu_prev;
            std::vector<float> cy(static_cast<size_t>(s.out));
            b.cpu->matmul(ws[i].host, Tensor{cx.data(), DType::F32, 1, s.in, s.in},
                          Tensor{cy.data(), DType::F32, 1, s.out, s.out});
            const double err = relative_gap(got, cy);
            qInfo("link %zu %lldx%lld %s: vs the CPU chain %.3g", i, static_cast<long long>(s.out),
                  static_cast<long long>(s.in), s.own_x ? "own x" : "x from the link before", err);
            QVERIFY2(same_bits(got, want),
                     qPrintable(QString("link %1: differs from the separate matmul by %2")
                                    .arg(i)
                                    .arg(relative_gap(got, want))));
            QVERIFY2(same_bits(got, first[i]),
                     qPrintable(QString("link %1: the second run differs from the first").arg(i)));
            QVERIFY2(err <= 1e-3, qPrintable(QString("link %1: %2 from the CPU chain").arg(i).arg(err)));
            cpu_prev = cy;
        }
    }

private slots:
    // Slices a link: 1 (1024 inputs), 2, 3, 4, 5. Ends on four slices (the grid sums the last).
    void linksMatchSeparateMatmuls() {
        check_chain({{2048, 1024, true},
                     {1024, 5120, false},
                     {5120, 2048, false},
                     {2048, 640, false},
                     {3072, 1024, true},
                     {1024, 4096, false},
                     {4096, 2048, false}},
                    3100);
    }

    // One slice at the end; a first link of one slice read by the next.
    void endsOnOneSlice() { check_chain({{1024, 3072, true}, {3072, 1024, false}, {1024, 16, false}}, 3200); }

    // The 27B layout's widest shapes: gate+up (34816 rows), down (17 slices read by the next
    // link: three rounds of the staging's loads), its y summed by the grid for a link of its own x.
    void layout27b() {
        check_chain({{5120, 34816, true},
                     {17408, 5120, true},
                     {5120, 2048, false},
                     {6144, 5120, true},
                     {5120, 12288, true}},
                    3300);
    }

    // run() recorded into a CUDA graph (as a decode step is) and replayed: the same bits as run
    // directly, the barrier's count zeroed by the recorded memset each replay.
    void recordsIntoAGraph() {
        Backends b(Precision::Mixed);
        auto& cuda = dynamic_cast<cuda::CudaOps&>(*b.gpu);
        std::mt19937 rng(3500);
        const ChainWeight w0 = chain_weight(b, rng, 2048, 3072), w1 = chain_weight(b, rng, 3072, 1024);
        const DeviceTensor x(*b.gpu, random_tensor(rng, 1, 2048, 2048));
        const DeviceTensor y0(*b.gpu, 1, 3072, 3072), y1(*b.gpu, 1, 1024, 1024);
        cuda::MatmulChain chain(
            cuda, {{w0.dev, x.t.as<const float>(), y0.t.as<float>()}, {w1.dev, nullptr, y1.t.as<float>()}});
        chain.run();
        const std::vector<float> direct0 = download(*b.gpu, y0.t.data, 3072),
                                 direct1 = download(*b.gpu, y1.t.data, 1024);
        const std::vector<unsigned char> poison(3072 * sizeof(float), 0xFF);
        b.gpu->upload(y0.t.data, poison.data(), 3072 * sizeof(float));
        b.gpu->upload(y1.t.data, poison.data(), 1024 * sizeof(float));
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        QCOMPARE(cudaStreamBeginCapture(cuda.stream(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
        chain.run();
        QCOMPARE(cudaStreamEndCapture(cuda.stream(), &graph), cudaSuccess);
        QCOMPARE(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
        for (int i = 0; i < 3; ++i) QCOMPARE(cudaGraphLaunch(exec, cuda.stream()), cudaSuccess);
        b.gpu->synchronize();
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        const std::vector<float> got0 = download(*b.gpu, y0.t.data, 3072),
                                 got1 = download(*b.gpu, y1.t.data, 1024);
        QVERIFY2(same_bits(got0, direct0), "link 0 differs");
        QVERIFY2(same_bits(got1, direct1), "link 1 differs");
    }

    void rejectsLinksItCannotRun() {
        Backends b(Precision::Mixed);
        auto& cuda = dynamic_cast<cuda::CudaOps&>(*b.gpu);
        std::mt19937 rng(3400);
        const ChainWeight w = chain_weight(b, rng, 1024, 32);
        const ChainWeight w2 = chain_weight(b, rng, 2048, 32);
        const DeviceTensor x(*b.gpu, random_tensor(rng, 1, 2048, 2048));
        const DeviceTensor y(*b.gpu, 1, 32, 32), y2(*b.gpu, 1, 32, 32);
        const float* px = x.t.as<const float>();
        float* py = y.t.as<float>();
        auto rejects = [&](const std::vector<cuda::ChainLink>& links, const char* says) {
            try {
                cuda::MatmulChain chain(cuda, links);
            } catch (const std::invalid_argument& e) {
                QVERIFY2(std::strstr(e.what(), says), e.what());
                return;
            }
            QFAIL(qPrintable(QString("accepted a chain that should say: ") + says));
        };
        rejects({}, "at least one link");
        rejects({{w.dev, nullptr, py}}, "the first link needs its own x");
        rejects({{w.dev, px, py}, {w2.dev, nullptr, y2.t.as<float>()}}, "output width (32)");
        rejects({{w.dev, px, nullptr}}, "y is missing");
        Weight s = w.dev;
        s.type = DType::PQ2_0S;
        rejects({{s, px, py}}, "PQ2_0T weights");
        Weight odd = w.dev;
        odd.out = 24;
        rejects({{odd, px, py}}, "tiles of 16 rows");
    }
};

QTEST_APPLESS_MAIN(TestCudaMatmulChain)
#include "test_cuda_matmul_chain.moc"
