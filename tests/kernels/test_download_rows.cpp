// Ops::download_rows' default, on the CPU backend: each row lands at its pitch in the host
// buffer and nothing between the rows is written; packed rows; the errors of a pitch too short.
#include <QtTest>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/ops.h"

using namespace niwa::kernels;

namespace {

// Copies `rows` rows of row_bytes from src_pitch apart in backend memory to dst_pitch apart on
// the host; checks every byte of the host buffer: the rows, and the poison everywhere else.
void check_rows(Ops& ops, size_t row_bytes, size_t src_pitch, size_t dst_pitch, size_t rows, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> src(rows * src_pitch);
    for (auto& b : src) b = uint8_t(rng());
    void* d = ops.alloc(src.size());
    ops.upload(d, src.data(), src.size());
    constexpr uint8_t kPoison = 0xA5;
    std::vector<uint8_t> dst(rows * dst_pitch + 7, kPoison);
    ops.download_rows(dst.data(), dst_pitch, d, src_pitch, row_bytes, rows);
    ops.free(d);
    for (size_t i = 0; i < dst.size(); ++i) {
        const size_t r = i / dst_pitch, c = i % dst_pitch;
        const uint8_t want = r < rows && c < row_bytes ? src[r * src_pitch + c] : kPoison;
        if (dst[i] != want)
            QFAIL(qPrintable(QString("byte %1 (row %2, column %3) is %4, want %5")
                                 .arg(i)
                                 .arg(r)
                                 .arg(c)
                                 .arg(dst[i])
                                 .arg(want)));
    }
}

}  // namespace

class TestDownloadRows : public QObject {
    Q_OBJECT

private slots:
    void stridedRows_data() {
        QTest::addColumn<int>("row_bytes");
        QTest::addColumn<int>("src_pitch");
        QTest::addColumn<int>("dst_pitch");
        QTest::addColumn<int>("rows");
        QTest::newRow("odd pitches") << 13 << 17 << 29 << 5;
        QTest::newRow("slice of wider host rows") << 12 << 12 << 40 << 7;
        QTest::newRow("packed host, padded source") << 12 << 20 << 12 << 3;
        QTest::newRow("packed both: one download") << 24 << 24 << 24 << 6;
        QTest::newRow("one row") << 9 << 11 << 31 << 1;
    }

    void stridedRows() {
        QFETCH(int, row_bytes);
        QFETCH(int, src_pitch);
        QFETCH(int, dst_pitch);
        QFETCH(int, rows);
        auto ops = make_cpu_ops(1);
        check_rows(*ops, size_t(row_bytes), size_t(src_pitch), size_t(dst_pitch), size_t(rows),
                   uint32_t(row_bytes * 31 + rows));
    }

    // download_rows_at: only the rows listed (in any order) land, each at its own row; the rows
    // between keep the poison; a negative row is refused.
    void listedRows() {
        auto ops = make_cpu_ops(1);
        const size_t row_bytes = 13, src_pitch = 17, dst_pitch = 29, rows = 6;
        std::mt19937 rng(11);
        std::vector<uint8_t> src(rows * src_pitch);
        for (auto& x : src) x = uint8_t(rng());
        void* d = ops->alloc(src.size());
        ops->upload(d, src.data(), src.size());
        std::vector<uint8_t> dst(rows * dst_pitch, 0xA5);
        const std::vector<int64_t> listed = {4, 1, 5};
        ops->download_rows_at(dst.data(), dst_pitch, d, src_pitch, row_bytes, listed.data(), listed.size());
        for (size_t i = 0; i < dst.size(); ++i) {
            const size_t r = i / dst_pitch, c = i % dst_pitch;
            const bool in = c < row_bytes && (r == 1 || r == 4 || r == 5);
            QCOMPARE(dst[i], in ? src[r * src_pitch + c] : uint8_t(0xA5));
        }
        const int64_t negative = -1;
        QVERIFY_THROWS_EXCEPTION(
            std::invalid_argument,
            ops->download_rows_at(dst.data(), dst_pitch, d, src_pitch, row_bytes, &negative, 1));
        ops->free(d);
    }

    // Logits-sized rows: two ranks' vocabulary slices, each downloaded into its columns of the
    // full rows, make the full rows.
    void slicesMakeFullRows() {
        auto ops = make_cpu_ops(1);
        const size_t rows = 4, vocab = 1001, split = 517;
        std::mt19937 rng(7);
        std::vector<float> want(rows * vocab);
        for (float& x : want) x = std::uniform_real_distribution<float>(-3, 3)(rng);
        std::vector<float> full(rows * vocab, -1.0f);
        for (const auto& [begin, n] : {std::pair<size_t, size_t>{0, split}, {split, vocab - split}}) {
            std::vector<float> slice(rows * n);
            for (size_t i = 0; i < rows; ++i)
                for (size_t j = 0; j < n; ++j) slice[i * n + j] = want[i * vocab + begin + j];
            void* d = ops->alloc(slice.size() * sizeof(float));
            ops->upload(d, slice.data(), slice.size() * sizeof(float));
            ops->download_rows(full.data() + begin, vocab * sizeof(float), d, n * sizeof(float),
                               n * sizeof(float), rows);
            ops->free(d);
        }
        QVERIFY(full == want);
    }

    void nothingToCopy() {
        auto ops = make_cpu_ops(1);
        std::vector<uint8_t> dst(16, 0x5A);
        ops->download_rows(dst.data(), 8, nullptr, 8, 8, 0);
        ops->download_rows(dst.data(), 8, nullptr, 8, 0, 2);
        QVERIFY(dst == std::vector<uint8_t>(16, 0x5A));
    }

    void pitchShorterThanRowThrows() {
        auto ops = make_cpu_ops(1);
        void* d = ops->alloc(64);
        std::vector<uint8_t> dst(64);
        for (const auto& [dst_pitch, src_pitch] : {std::pair<size_t, size_t>{15, 16}, {16, 15}}) {
            try {
                ops->download_rows(dst.data(), dst_pitch, d, src_pitch, 16, 2);
                ops->free(d);
                QFAIL("a pitch shorter than the row was accepted");
            } catch (const std::invalid_argument& e) {
                const QString msg = e.what();
                QVERIFY2(msg.contains("cpu") && msg.contains("download_rows") && msg.contains("16 bytes"),
                         e.what());
            }
        }
        ops->free(d);
    }
};

QTEST_GUILESS_MAIN(TestDownloadRows)
#include "test_download_rows.moc"
