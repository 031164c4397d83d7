// Tests of the CPU ops' thread pool and of the Tensor views every op relies on.
#include "kernels/cpu/thread_pool.h"
#include "kernels/ops.h"

#include <QtTest>
#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

using namespace niwa::kernels;
using niwa::kernels::cpu::ThreadPool;

class TestThreadPool : public QObject {
    Q_OBJECT

private slots:
    void coversEveryIndexOnce() {
        for (int threads : {1, 3}) {
            ThreadPool pool(threads);
            QCOMPARE(pool.size(), threads);
            for (int64_t n : {1, 7, 1000, 12345}) {
                std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
                pool.parallel_for(
                    n,
                    [&](int64_t b, int64_t e) {
                        QVERIFY(b < e);
                        for (int64_t i = b; i < e; ++i) ++hits[i];
                    },
                    3);
                for (auto& h : hits) QCOMPARE(h.load(), 1);
            }
        }
    }

    void usesSeveralThreads() {
        ThreadPool pool(3);
        std::mutex m;
        std::set<std::thread::id> ids;
        std::atomic<int> arrived{0};
        pool.parallel_for(3, [&](int64_t, int64_t) {
            // Wait (briefly) until all three chunks are running at once.
            ++arrived;
            for (int i = 0; i < 2000 && arrived.load() < 3; ++i)
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            std::lock_guard lock(m);
            ids.insert(std::this_thread::get_id());
        });
        QCOMPARE(static_cast<int>(ids.size()), 3);
    }

    void nestedCallsRunInline() {
        ThreadPool pool(2);
        std::atomic<int64_t> sum{0};
        pool.parallel_for(10, [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i)
                pool.parallel_for(10, [&](int64_t b2, int64_t e2) {
                    for (int64_t j = b2; j < e2; ++j) sum += i * 10 + j;
                });
        });
        QCOMPARE(sum.load(), int64_t{99 * 100 / 2});
    }

    void rethrowsATasksException() {
        ThreadPool pool(2);
        QVERIFY_THROWS_EXCEPTION(std::runtime_error, pool.parallel_for(100, [](int64_t b, int64_t e) {
            if (b <= 57 && 57 < e) throw std::runtime_error("task 57");
        }));
        std::atomic<int> after{0};
        pool.parallel_for(100, [&](int64_t b, int64_t e) { after += static_cast<int>(e - b); });
        QCOMPARE(after.load(), 100);  // still usable
    }

    void viewsPointIntoTheParent() {
        std::vector<float> buf(6 * 10);
        const Tensor t{buf.data(), DType::F32, 6, 8, 10};
        const Tensor c = t.cols_view(3, 4);
        QCOMPARE(c.as<float>(), buf.data() + 3);
        QCOMPARE(c.cols, int64_t{4});
        QCOMPARE(c.ld, int64_t{10});
        QCOMPARE(c.rows, int64_t{6});
        const Tensor r = c.rows_view(2, 3);
        QCOMPARE(r.as<float>(), buf.data() + 2 * 10 + 3);
        QCOMPARE(r.rows, int64_t{3});
        QCOMPARE(r.cols, int64_t{4});
        std::vector<uint16_t> half(4 * 6);
        const Tensor h{half.data(), DType::BF16, 4, 6, 6};
        QCOMPARE(h.rows_view(1, 2).cols_view(2, 2).as<uint16_t>(), half.data() + 6 + 2);
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, t.cols_view(5, 4));
        QVERIFY_THROWS_EXCEPTION(std::out_of_range, t.rows_view(4, 3));
    }
};

QTEST_APPLESS_MAIN(TestThreadPool)
#include "test_thread_pool.moc"
