// The tensor-parallel all-reduce between GPU ranks (kernels/cuda/device_group.cpp and the
// exchange of kernels/cuda/peer_exchange.h) against sums made on the host, bit for bit (two
// ranks' sum is one fp32 add in either order): every path the GPUs here allow (the exchange
// through peer access where they have it, through mapped host memory, NCCL past the exchange's
// size), sizes around its limits, many calls queued on each rank before any wait (the epochs'
// parities, one rank running ahead), and calls replayed from recorded graphs. The floats past
// each buffer must come back untouched. On a machine of one GPU the exchange's cases run its
// Host path with both ranks on that GPU (PeerExchange::Gpus::Shared); the engine's group needs
// two GPUs and says so where there is one. Without a GPU every case fails.
#include <QtTest>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/peer_exchange.h"
#include "kernels/devices.h"
#include "kernels/ops.h"

using namespace niwa::kernels;
using niwa::kernels::cuda::CudaOps;
using niwa::kernels::cuda::PeerExchange;

namespace {

constexpr size_t kGuard = 64;  // floats after each buffer that no call may touch
constexpr float kGuardValue = -12345.5f;

// Two ranks on GPUs 0 and 1, as the engine makes them; on a machine of one GPU both on it
// (`shared`), which only the exchange's Host path takes.
struct TwoRanks {
    std::unique_ptr<Ops> ops[2];
    CudaOps* rank[2] = {};
    bool shared = false;
    TwoRanks() {
        shared = list_gpus().size() < 2;
        for (int r = 0; r < 2; ++r) {
            ops[r] = make_cuda_ops(shared ? 0 : r, Precision::Mixed);
            rank[r] = dynamic_cast<CudaOps*>(ops[r].get());
        }
    }
    std::vector<CudaOps*> list() const { return {rank[0], rank[1]}; }
    // The paths these ranks allow.
    std::vector<PeerExchange::Path> paths() const {
        std::vector<PeerExchange::Path> p = {PeerExchange::Path::Host};
        if (!shared && PeerExchange::peers_reach({0, 1})) p.push_back(PeerExchange::Path::Peer);
        return p;
    }
    std::unique_ptr<PeerExchange> exchange(PeerExchange::Path path) const {
        return std::make_unique<PeerExchange>(
            list(), path, PeerExchange::kDefaultMaxBytes,
            shared ? PeerExchange::Gpus::Shared : PeerExchange::Gpus::OneARank);
    }
};

// A rank's buffer of `count` random floats, after `lead` guard floats (1: rows that do not start
// 16-byte aligned) and before kGuard more, and what the host keeps of it.
struct Buffer {
    CudaOps* ops;
    float* dev = nullptr;
    size_t lead = 0;
    std::vector<float> host;  // the guard, the values sent, the guard
    Buffer(CudaOps* o, size_t count, std::mt19937& rng, size_t lead_floats = 0)
        : ops(o), lead(lead_floats), host(lead_floats + count + kGuard, kGuardValue) {
        std::uniform_real_distribution<float> value(-4.0f, 4.0f);
        for (size_t i = 0; i < count; ++i) host[lead + i] = value(rng);
        ops->bind();
        dev = static_cast<float*>(ops->alloc(host.size() * sizeof(float)));
        refill();
    }
    ~Buffer() { ops->free(dev); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    size_t count() const { return host.size() - kGuard - lead; }
    float* data() const { return dev + lead; }  // what a call reduces
    void refill() {                             // queued on the rank's stream
        ops->bind();
        ops->upload(dev, host.data(), host.size() * sizeof(float));
    }
    std::vector<float> download() const {
        std::vector<float> out(host.size());
        ops->bind();
        ops->download(out.data(), dev, out.size() * sizeof(float));
        return out;
    }
};

// Empty where both ranks' buffers hold a + b where they held a and b and their guards are
// whole; else what differs, for `what`.
std::string sum_mismatch(const Buffer& a, const Buffer& b, const std::string& what) {
    const std::vector<float> ra = a.download(), rb = b.download();
    for (size_t i = 0; i < ra.size(); ++i) {
        const bool reduced = i >= a.lead && i < a.lead + a.count();
        const float want = reduced ? a.host[i] + b.host[i] : kGuardValue;
        if (ra[i] != want || rb[i] != want)
            return what + ": " +
                   (reduced ? "element " + std::to_string(i - a.lead) : "guard float " + std::to_string(i)) +
                   " of " + std::to_string(a.count()) + ": rank 0 " + std::to_string(ra[i]) + ", rank 1 " +
                   std::to_string(rb[i]) + ", want " + std::to_string(want);
    }
    return {};
}

#define EXPECT_SUM(a, b, what)                                 \
    do {                                                       \
        const std::string m_ = sum_mismatch((a), (b), (what)); \
        QVERIFY2(m_.empty(), m_.c_str());                      \
    } while (0)

#define NEED_A_GPU() QVERIFY2(!list_gpus().empty(), "no GPU: the CUDA tests need one")

// Fails without a GPU; skips, saying so, with one.
#define NEED_TWO_GPUS()                                                                       \
    do {                                                                                      \
        const size_t n_ = list_gpus().size();                                                 \
        QVERIFY2(n_ > 0, "no GPU: the CUDA tests need one, and most of these two");           \
        if (n_ < 2) QSKIP("needs two GPUs (this machine has one): run it on nvidia-h200-x2"); \
    } while (0)

const char* path_name(PeerExchange::Path p) {
    return p == PeerExchange::Path::Peer ? "peer" : "host";
}

}  // namespace

class TestCudaAllReduce : public QObject {
    Q_OBJECT

private slots:
    // The exchange alone, each path, sizes from one float to its limit (odd counts take the
    // scalar tail), each size three times (both parities; the third not 16-byte aligned: all
    // scalar).
    void exchangeSums() {
        NEED_A_GPU();
        TwoRanks t;
        std::mt19937 rng(1201);
        for (PeerExchange::Path path : t.paths()) {
            const auto owned = t.exchange(path);
            const PeerExchange& ex = *owned;
            QCOMPARE(ex.path(), path);
            const size_t max_floats = ex.max_bytes() / sizeof(float);
            QVERIFY(max_floats >= PeerExchange::kDefaultMaxBytes / sizeof(float));
            for (size_t count : {size_t(1), size_t(3), size_t(4), size_t(7), size_t(1024), size_t(5120),
                                 size_t(5121), size_t(3 * 5120), max_floats - 1, max_floats}) {
                for (int round = 0; round < 3; ++round) {
                    const size_t lead = round == 2 ? 1 : 0;  // the third round's rows unaligned
                    Buffer a(t.rank[0], count - lead, rng, lead), b(t.rank[1], count - lead, rng, lead);
                    if (a.count() == 0) continue;
                    for (int r = 0; r < 2; ++r) {
                        t.rank[r]->bind();
                        ex.all_reduce(r, (r == 0 ? a : b).data(), a.count(), t.rank[r]->stream());
                    }
                    EXPECT_SUM(a, b,
                               std::string(path_name(path)) + " path, " + std::to_string(count) + " floats");
                }
            }
        }
    }

    // 160 calls of random sizes queued on rank 0, then on rank 1, before any wait: rank 0 runs
    // ahead of rank 1 by as much as the flags let it, through many epochs of both parities. Each
    // launched to overlap the one before (pdl.cuh), as the engine launches them: each starts the
    // next early, so a rank's queued calls could hold more SMs than the GPU has (an H200's 132).
    // On a shared GPU that would starve the other rank's first call; the exchange overlaps none
    // there.
    void manyCallsQueued() {
        NEED_A_GPU();
        TwoRanks t;
        std::mt19937 rng(1202);
        for (PeerExchange::Path path : t.paths()) {
            const auto owned = t.exchange(path);
            const PeerExchange& ex = *owned;
            const size_t max_floats = ex.max_bytes() / sizeof(float);
            constexpr int kCalls = 160;
            std::vector<std::unique_ptr<Buffer>> bufs[2];
            for (int i = 0; i < kCalls; ++i) {
                const size_t count = 1 + rng() % max_floats;
                bufs[0].push_back(std::make_unique<Buffer>(t.rank[0], count, rng));
                bufs[1].push_back(std::make_unique<Buffer>(t.rank[1], count, rng));
            }
            for (int r = 0; r < 2; ++r) {
                t.rank[r]->bind();
                for (int i = 0; i < kCalls; ++i)
                    ex.all_reduce(r, bufs[r][size_t(i)]->data(), bufs[r][size_t(i)]->count(),
                                  t.rank[r]->stream(), true);
            }
            for (int i = 0; i < kCalls; ++i)
                EXPECT_SUM(*bufs[0][size_t(i)], *bufs[1][size_t(i)],
                           std::string(path_name(path)) + " path, queued call " + std::to_string(i));
        }
    }

    // Three calls recorded into a graph on each rank, replayed five times with new values each
    // time: the epoch comes from the GPU, not from the recording.
    void replayedFromGraph() {
        NEED_A_GPU();
        TwoRanks t;
        std::mt19937 rng(1203);
        for (PeerExchange::Path path : t.paths()) {
            const auto owned = t.exchange(path);
            const PeerExchange& ex = *owned;
            const size_t counts[3] = {5120, 17, 2 * 5120};
            std::vector<std::unique_ptr<Buffer>> bufs[2];
            for (size_t c : counts)
                for (int r = 0; r < 2; ++r) bufs[r].push_back(std::make_unique<Buffer>(t.rank[r], c, rng));
            std::unique_ptr<Ops::Recording> rec[2];
            for (int r = 0; r < 2; ++r) {
                t.rank[r]->synchronize();
                rec[r] = t.rank[r]->record([&, r] {  // overlapping, as the engine records them
                    for (auto& b : bufs[r])
                        ex.all_reduce(r, b->data(), b->count(), t.rank[r]->stream(), true);
                });
            }
            std::uniform_real_distribution<float> value(-4.0f, 4.0f);
            for (int replay = 0; replay < 5; ++replay) {
                for (int r = 0; r < 2; ++r) {
                    for (auto& b : bufs[r]) {
                        for (size_t i = 0; i < b->count(); ++i) b->host[b->lead + i] = value(rng);
                        b->refill();
                    }
                    t.rank[r]->bind();
                    rec[r]->replay();
                }
                for (size_t i = 0; i < 3; ++i)
                    EXPECT_SUM(*bufs[0][i], *bufs[1][i],
                               std::string(path_name(path)) + " path, replay " + std::to_string(replay) +
                                   ", call " + std::to_string(i));
            }
        }
    }

    // As the engine joins them: join_device_group, then Ops::all_reduce_sum on rows of a
    // tensor, below the exchange's limit and above it (NCCL), by each NIWA_TP_EXCHANGE setting.
    void groupReducesRows_data() {
        QTest::addColumn<QString>("mode");
        QTest::newRow("unset") << QString();
        QTest::newRow("auto") << QString("auto");
        QTest::newRow("host") << QString("host");
        QTest::newRow("off") << QString("off");
    }
    void groupReducesRows() {
        NEED_TWO_GPUS();
        QFETCH(QString, mode);
        if (mode.isEmpty())
            qunsetenv("NIWA_TP_EXCHANGE");
        else
            qputenv("NIWA_TP_EXCHANGE", mode.toUtf8());
        TwoRanks t;
        std::string why, how;
        const bool joined = join_device_group({t.ops[0].get(), t.ops[1].get()}, &why, &how);
        qunsetenv("NIWA_TP_EXCHANGE");
        QVERIFY2(joined, why.c_str());
        qInfo("%s", how.c_str());
        const bool on = mode == "auto" || mode == "host" || (mode.isEmpty() && PeerExchange::kOnByDefault);
        QCOMPARE(t.rank[0]->exchange() != nullptr, on);
        QVERIFY(t.rank[0]->exchange() == t.rank[1]->exchange());
        if (mode == "host") QCOMPARE(t.rank[0]->exchange()->path(), PeerExchange::Path::Host);
        std::mt19937 rng(1204);
        const int64_t cols = 5120, ld = 5124;
        for (int64_t rows : {int64_t(1), int64_t(3), int64_t(24)}) {  // 24 rows: past the exchange
            const size_t count = size_t(rows * ld);
            Buffer a(t.rank[0], count, rng), b(t.rank[1], count, rng);
            // Each rank's call from a thread of its own, as the engine makes them: one thread's
            // NCCL call for one GPU may wait for the other's.
            bool issued[2] = {false, false};
            auto issue = [&](int r) {
                t.rank[r]->bind();
                issued[r] =
                    t.ops[r]->all_reduce_sum(Tensor{(r == 0 ? a : b).data(), DType::F32, rows, cols, ld});
            };
            std::thread other(issue, 1);
            issue(0);
            other.join();
            QVERIFY(issued[0] && issued[1]);
            EXPECT_SUM(a, b, mode.toStdString() + ", " + std::to_string(rows) + " rows");
        }
    }

    // Two ranks on one GPU are refused (NCCL needs a GPU a rank), naming why; they meet in host
    // memory instead (model.cpp). Runs on one GPU.
    void twoRanksOnOneGpuRefused() {
        QVERIFY2(!list_gpus().empty(), "no GPU: the CUDA tests need one");
        auto a = make_cuda_ops(0, Precision::Mixed), b = make_cuda_ops(0, Precision::Mixed);
        std::string why;
        QVERIFY(!join_device_group({a.get(), b.get()}, &why));
        QVERIFY2(why.find("share GPU 0") != std::string::npos, why.c_str());
        QVERIFY(!a->in_device_group());
        // The exchange itself refuses one rank, and two on one GPU (its kernels would wait for
        // each other beside grids that need the whole GPU).
        auto* ca = dynamic_cast<CudaOps*>(a.get());
        auto* cb = dynamic_cast<CudaOps*>(b.get());
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, PeerExchange({ca}, PeerExchange::Path::Host, 1024));
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, PeerExchange({ca, cb}, PeerExchange::Path::Host, 1024));
        // Shared on purpose (the tests' and the bench's one-GPU runs): the Host path only.
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, PeerExchange({ca, cb}, PeerExchange::Path::Peer, 1024,
                                                                  PeerExchange::Gpus::Shared));
        const PeerExchange shared({ca, cb}, PeerExchange::Path::Host, 1024, PeerExchange::Gpus::Shared);
        QCOMPARE(shared.ranks(), 2);
    }
};

QTEST_APPLESS_MAIN(TestCudaAllReduce)
#include "test_cuda_all_reduce.moc"
