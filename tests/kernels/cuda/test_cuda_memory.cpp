// Tests of the CUDA backend's memory: upload, download, strided downloads, device copies,
// zeroing, and the errors a user sees (a GPU that does not exist, an allocation larger than the card).
#include "tests/kernels/cuda/cuda_test_util.h"

#include <QtTest>
#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <stdexcept>

using namespace niwa::kernels;
using namespace niwa::kernels::test;

class TestCudaMemory : public QObject {
    Q_OBJECT

private slots:
    void roundTrips() {
        auto gpu = make_cuda_ops(0, Precision::Fp32);
        QCOMPARE(QString(gpu->name()), QString("cuda"));
        QVERIFY(!gpu->host_memory());
        std::mt19937 rng(1);
        const size_t n = (1 << 20) + 3;  // odd size: no reliance on alignment of the length
        std::vector<uint8_t> src(n);
        for (auto& b : src) b = static_cast<uint8_t>(rng());
        void* a = gpu->alloc(n);
        void* b = gpu->alloc(n);
        gpu->upload(a, src.data(), n);
        gpu->copy(b, a, n);
        gpu->zero(a, n / 2);
        std::vector<uint8_t> back(n, 0xAB), zeroed(n, 0xAB);
        gpu->download(back.data(), b, n);
        gpu->download(zeroed.data(), a, n);
        QVERIFY(back == src);
        for (size_t i = 0; i < n / 2; ++i) QCOMPARE(zeroed[i], uint8_t(0));
        for (size_t i = n / 2; i < n; ++i) QCOMPARE(zeroed[i], src[i]);
        gpu->free(a);
        gpu->free(b);
    }

    // download_rows (cudaMemcpy2DAsync) against the CPU backend's (a download per row): rows at
    // odd pitches into page-locked and pageable host memory, packed rows, a pitch too short.
    void stridedDownload() {
        Backends b;
        std::mt19937 rng(2);
        for (const auto& [row_bytes, src_pitch, dst_pitch, rows] : {std::array<size_t, 4>{13, 17, 29, 5},
                                                                    {993, 1000, 4004, 24},
                                                                    {64, 64, 64, 9},
                                                                    {40, 48, 40, 3}}) {
            std::vector<uint8_t> src(rows * src_pitch);
            for (auto& x : src) x = static_cast<uint8_t>(rng());
            const size_t n = rows * dst_pitch;
            std::vector<uint8_t> want(n, 0xAB), pageable(n, 0xAB);
            void* c = b.cpu->alloc(src.size());
            b.cpu->upload(c, src.data(), src.size());
            b.cpu->download_rows(want.data(), dst_pitch, c, src_pitch, row_bytes, rows);
            b.cpu->free(c);
            void* g = b.gpu->alloc(src.size());
            b.gpu->upload(g, src.data(), src.size());
            auto* pinned = static_cast<uint8_t*>(b.gpu->alloc_host(n));
            std::memset(pinned, 0xAB, n);
            b.gpu->download_rows(pinned, dst_pitch, g, src_pitch, row_bytes, rows);
            b.gpu->download_rows(pageable.data(), dst_pitch, g, src_pitch, row_bytes, rows);
            QVERIFY2(std::equal(want.begin(), want.end(), pinned), "into page-locked memory");
            QVERIFY2(pageable == want, "into pageable memory");
            b.gpu->free_host(pinned);
            b.gpu->free(g);
        }
        void* g = b.gpu->alloc(64);
        std::vector<uint8_t> dst(64);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, b.gpu->download_rows(dst.data(), 15, g, 16, 16, 2));
        b.gpu->free(g);
    }

    // download_rows_at against the CPU backend's: the rows listed, in any order, into
    // page-locked memory; the rows between untouched.
    void listedRowsDownload() {
        Backends b;
        std::mt19937 rng(3);
        const size_t row_bytes = 993, src_pitch = 1000, dst_pitch = 4004, rows = 24;
        std::vector<uint8_t> src(rows * src_pitch);
        for (auto& x : src) x = static_cast<uint8_t>(rng());
        const std::vector<int64_t> listed = {23, 0, 7, 8, 15};
        const size_t n = rows * dst_pitch;
        std::vector<uint8_t> want(n, 0xAB);
        void* c = b.cpu->alloc(src.size());
        b.cpu->upload(c, src.data(), src.size());
        b.cpu->download_rows_at(want.data(), dst_pitch, c, src_pitch, row_bytes, listed.data(),
                                listed.size());
        b.cpu->free(c);
        void* g = b.gpu->alloc(src.size());
        b.gpu->upload(g, src.data(), src.size());
        auto* pinned = static_cast<uint8_t*>(b.gpu->alloc_host(n));
        std::memset(pinned, 0xAB, n);
        b.gpu->download_rows_at(pinned, dst_pitch, g, src_pitch, row_bytes, listed.data(), listed.size());
        QVERIFY(std::equal(want.begin(), want.end(), pinned));  // the rows not listed: 0xAB in both
        b.gpu->free_host(pinned);
        b.gpu->free(g);
    }

    void reportsWhatToDo() {
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, make_cuda_ops(4096, Precision::Fp32));
        auto gpu = make_cuda_ops(0, Precision::Mixed);
        try {
            gpu->alloc(size_t(1) << 50);  // a petabyte
            QFAIL("a petabyte allocation succeeded");
        } catch (const std::runtime_error& e) {
            const QString msg = e.what();
            QVERIFY2(msg.contains("out of GPU memory") && msg.contains("--mem-fraction"), e.what());
        }
        // The backend still works after the failed allocation.
        void* p = gpu->alloc(256);
        std::vector<float> v(64, 1.5f), w(64, 0.0f);
        gpu->upload(p, v.data(), 256);
        gpu->download(w.data(), p, 256);
        QVERIFY(v == w);
        gpu->free(p);
    }
};

QTEST_GUILESS_MAIN(TestCudaMemory)
#include "test_cuda_memory.moc"
