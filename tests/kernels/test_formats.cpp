// Tests of kernels/formats: half-precision conversions against the IEEE definitions, and the
// packed blocks against their bit layouts (MODEL.md "GGUF") written out here independently.
// Kernel headers first: Qt defines `slots` as a macro, and StepInfo has a field of that name.
#include "kernels/formats.h"
#include "tests/kernels/kernel_test_util.h"

#include <QtTest>
#include <cstring>
#include <limits>

using namespace niwa::kernels;
using niwa::kernels::test::half_value;
using niwa::kernels::test::ptq1_trit;

namespace {

float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

double bf16_value(uint16_t h) {
    return bits_float(static_cast<uint32_t>(h) << 16);
}

// True when `h` is a correctly rounded (nearest, ties to even) encoding of positive finite f
// among the finite neighbours, given a decoder of the format.
template <typename Decode>
bool nearest_even(float f, uint16_t h, uint16_t max_finite, Decode decode) {
    const double x = f;
    const double e = std::abs(decode(h) - x);
    for (int step : {-1, 1}) {
        const int n = h + step;
        if (n < 0 || n > max_finite) continue;
        const double en = std::abs(decode(static_cast<uint16_t>(n)) - x);
        if (en < e || (en == e && (h & 1))) return false;
    }
    return true;
}

// A float of random sign with its magnitude's exponent uniform in [lo, hi].
float random_float(std::mt19937& rng, int lo, int hi) {
    std::uniform_int_distribution<int> exp(lo, hi);
    std::uniform_real_distribution<double> mant(1.0, 2.0);
    const auto f = static_cast<float>(std::ldexp(mant(rng), exp(rng)));
    return (rng() & 1) ? -f : f;
}

// `rows` PQ2_0 rows of n random trits and scales, `stride` bytes apart (the gaps 0x5A).
std::vector<uint8_t> random_pq2_rows(std::mt19937& rng, int64_t n, int64_t rows, size_t stride) {
    std::vector<uint8_t> src(stride * static_cast<size_t>(rows), 0x5A);
    std::vector<int8_t> trits(static_cast<size_t>(n));
    for (int64_t r = 0; r < rows; ++r) {
        for (auto& t : trits) t = static_cast<int8_t>(static_cast<int>(rng() % 3) - 1);
        const auto scales = niwa::kernels::test::random_vector(rng, static_cast<int>(n / 128), -0.3f, 0.3f);
        pack_ternary_row(DType::PQ2_0, trits.data(), scales.data(), &src[static_cast<size_t>(r) * stride], n);
    }
    return src;
}

}  // namespace

class TestFormats : public QObject {
    Q_OBJECT

private slots:
    void fp16DecodeIsExhaustivelyIeee() {
        for (uint32_t h = 0; h < 65536; ++h) {
            const float f = fp16_to_f32(static_cast<uint16_t>(h));
            const double want = half_value(static_cast<uint16_t>(h));
            if (std::isnan(want))
                QVERIFY2(std::isnan(f), qPrintable(QString::number(h, 16)));
            else
                QVERIFY2(static_cast<double>(f) == want && std::signbit(f) == bool(h & 0x8000),
                         qPrintable(QString::number(h, 16)));
        }
    }

    void fp16EncodeRoundTripsEveryHalf() {
        for (uint32_t h = 0; h < 65536; ++h) {
            const uint16_t back = f32_to_fp16(fp16_to_f32(static_cast<uint16_t>(h)));
            if (std::isnan(half_value(static_cast<uint16_t>(h))))
                QVERIFY(std::isnan(half_value(back)));
            else
                QCOMPARE(back, static_cast<uint16_t>(h));
        }
    }

    void fp16EncodeRoundsToNearestEven() {
        std::mt19937 rng(11);
        for (int i = 0; i < 200000; ++i) {
            const float f = random_float(
                rng, -27, 14);  // from below half the smallest subnormal to 2^15 (overflow: below)
            const uint16_t h = f32_to_fp16(f);
            QCOMPARE(bool(h & 0x8000), std::signbit(f));
            QVERIFY2(nearest_even(std::abs(f), h & 0x7fff, 0x7bff, half_value),
                     qPrintable(QString::number(f)));
        }
        QCOMPARE(f32_to_fp16(65504.0f), uint16_t{0x7bff});
        QCOMPARE(f32_to_fp16(65519.99f), uint16_t{0x7bff});
        QCOMPARE(f32_to_fp16(65520.0f), uint16_t{0x7c00});  // the tie rounds up into infinity
        QCOMPARE(f32_to_fp16(1e10f), uint16_t{0x7c00});
        QCOMPARE(f32_to_fp16(-INFINITY), uint16_t{0xfc00});
        QVERIFY(std::isnan(half_value(f32_to_fp16(std::numeric_limits<float>::quiet_NaN()))));
        QCOMPARE(f32_to_fp16(std::ldexp(1.0f, -25)), uint16_t{0});  // tie between 0 and 1: even
        QCOMPARE(f32_to_fp16(std::ldexp(1.0f, -25) * 1.0001f), uint16_t{1});
        QCOMPARE(f32_to_fp16(std::ldexp(1.5f, -24)), uint16_t{2});
        QCOMPARE(f32_to_fp16(std::ldexp(2.5f, -24)), uint16_t{2});
        QCOMPARE(f32_to_fp16(std::ldexp(1023.5f, -24)), uint16_t{0x400});  // up into the normals
        QCOMPARE(f32_to_fp16(-0.0f), uint16_t{0x8000});
        QCOMPARE(f32_to_fp16(1.0f + std::ldexp(1.0f, -11)), uint16_t{0x3c00});
        QCOMPARE(f32_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)), uint16_t{0x3c02});
    }

    void bf16IsTheUpperHalfRoundedToNearestEven() {
        for (uint32_t h = 0; h < 65536; ++h)
            QCOMPARE(float_bits(bf16_to_f32(static_cast<uint16_t>(h))), h << 16);
        std::mt19937 rng(12);
        for (int i = 0; i < 200000; ++i) {
            const float f = random_float(rng, -140, 120);
            const uint16_t h = f32_to_bf16(f);
            QCOMPARE(bool(h & 0x8000), std::signbit(f));
            QVERIFY2(nearest_even(std::abs(f), h & 0x7fff, 0x7f7f, bf16_value),
                     qPrintable(QString::number(f)));
        }
        QCOMPARE(f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), uint16_t{0x3f80});
        QCOMPARE(f32_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), uint16_t{0x3f82});
        QCOMPARE(f32_to_bf16(std::numeric_limits<float>::max()), uint16_t{0x7f80});
        QVERIFY(std::isnan(bf16_to_f32(f32_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
        QVERIFY(std::isnan(bf16_to_f32(f32_to_bf16(bits_float(0x7f800001)))));  // low payload stays NaN
    }

    void rowBytesFollowTheBlocks() {
        QCOMPARE(dtype_row_bytes(DType::F32, 10), size_t{40});
        QCOMPARE(dtype_row_bytes(DType::BF16, 10), size_t{20});
        QCOMPARE(dtype_row_bytes(DType::Q8_0, 64), size_t{68});
        QCOMPARE(dtype_row_bytes(DType::PQ2_0, 5120), size_t{40 * 34});
        QCOMPARE(dtype_row_bytes(DType::PTQ1_0, 5120), size_t{40 * 28});
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, dtype_row_bytes(DType::PQ2_0, 100));
        QCOMPARE(QByteArray(dtype_name(DType::PTQ1_0)), QByteArray("PTQ1_0"));
    }

    void dequantizesPlainRows() {
        std::mt19937 rng(13);
        std::vector<uint16_t> half(96), bf(96);
        for (auto& h : half) h = static_cast<uint16_t>(rng() & 0x7bff);  // finite, either sign below
        for (auto& h : bf) h = static_cast<uint16_t>(rng() & 0xbf7f);
        std::vector<float> out(96);
        dequantize_row(DType::F16, half.data(), out.data(), 96);
        for (int i = 0; i < 96; ++i) QCOMPARE(static_cast<double>(out[i]), half_value(half[i]));
        dequantize_row(DType::BF16, bf.data(), out.data(), 96);
        for (int i = 0; i < 96; ++i) QCOMPARE(static_cast<double>(out[i]), bf16_value(bf[i]));
        const auto f = niwa::kernels::test::random_vector(rng, 96);
        dequantize_row(DType::F32, f.data(), out.data(), 96);
        QVERIFY(out == f);
    }

    void dequantizesQ8_0() {
        std::mt19937 rng(14);
        const int blocks = 5;
        std::vector<uint8_t> raw(blocks * 34);
        for (auto& b : raw) b = static_cast<uint8_t>(rng());
        for (int b = 0; b < blocks; ++b) raw[b * 34 + 1] &= 0x3b;  // a modest finite scale
        std::vector<float> out(blocks * 32);
        dequantize_row(DType::Q8_0, raw.data(), out.data(), blocks * 32);
        for (int b = 0; b < blocks; ++b) {
            const double d = half_value(static_cast<uint16_t>(raw[b * 34] | raw[b * 34 + 1] << 8));
            for (int j = 0; j < 32; ++j)
                QCOMPARE(static_cast<double>(out[b * 32 + j]), d * static_cast<int8_t>(raw[b * 34 + 2 + j]));
        }
    }

    void dequantizesPq2_0() {
        std::mt19937 rng(15);
        const int blocks = 4;
        std::vector<uint8_t> raw(blocks * 34);
        for (auto& b : raw) b = static_cast<uint8_t>(rng());
        for (int b = 0; b < blocks; ++b) raw[b * 34 + 1] &= 0x3b;
        std::vector<float> out(blocks * 128);
        dequantize_row(DType::PQ2_0, raw.data(), out.data(), blocks * 128);
        for (int b = 0; b < blocks; ++b) {
            const uint8_t* blk = &raw[b * 34];
            const double d = half_value(static_cast<uint16_t>(blk[0] | blk[1] << 8));
            for (int j = 0; j < 128; ++j) {
                const int q = (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
                QCOMPARE(static_cast<double>(out[b * 128 + j]), (q - 1) * d);
            }
        }
    }

    void dequantizesPtq1_0() {
        std::mt19937 rng(16);
        const int blocks = 4;
        std::vector<uint8_t> raw(blocks * 28);
        for (auto& b : raw) b = static_cast<uint8_t>(rng());
        for (int b = 0; b < blocks; ++b) raw[b * 28 + 27] &= 0x3b;
        std::vector<float> out(blocks * 128);
        dequantize_row(DType::PTQ1_0, raw.data(), out.data(), blocks * 128);
        for (int b = 0; b < blocks; ++b) {
            const uint8_t* blk = &raw[b * 28];
            const double d = half_value(static_cast<uint16_t>(blk[26] | blk[27] << 8));
            std::vector<double> want(128, NAN);
            for (int n = 0; n < 5; ++n) {
                for (int m = 0; m < 16; ++m) want[16 * n + m] = (ptq1_trit(blk[m], n) - 1) * d;
                for (int m = 0; m < 8; ++m) want[80 + 8 * n + m] = (ptq1_trit(blk[16 + m], n) - 1) * d;
            }
            for (int n = 0; n < 4; ++n)
                for (int h = 0; h < 2; ++h) want[120 + 2 * n + h] = (ptq1_trit(blk[24 + h], n) - 1) * d;
            for (int j = 0; j < 128; ++j) QCOMPARE(static_cast<double>(out[b * 128 + j]), want[j]);
        }
    }

    // The encoding pack uses: byte = ceil(v * 256 / 243) for the base-3 number v of the trits
    // (trit 0 most significant); checked against the decoder over every combination.
    void ptq1EncodingInvertsTheTritExtraction() {
        for (int v = 0; v < 243; ++v) {
            const int byte = (v * 256 + 242) / 243;
            QVERIFY(byte < 256);
            int rest = v;
            for (int n = 4; n >= 0; --n, rest /= 3)
                QVERIFY2(ptq1_trit(static_cast<uint8_t>(byte), n) == rest % 3,
                         qPrintable(QString::number(v)));
        }
        // And every trit tuple has exactly the bytes that decode to it somewhere in 0..255.
        std::vector<int> seen(243, 0);
        for (int b = 0; b < 256; ++b) {
            int v = 0;
            for (int n = 0; n < 5; ++n) v = v * 3 + ptq1_trit(static_cast<uint8_t>(b), n);
            ++seen[v];
        }
        for (int v = 0; v < 243; ++v) QVERIFY(seen[v] >= 1);
    }

    void packedTernaryRowsDequantizeToTritsTimesScale() {
        std::mt19937 rng(17);
        const int blocks = 12;
        const int n = blocks * 128;
        std::vector<int8_t> trits(n);
        for (auto& t : trits) t = static_cast<int8_t>(static_cast<int>(rng() % 3) - 1);
        // Blocks 1..11 also walk every 5-trit combination through the PTQ1_0 qs bytes.
        for (int c = 0; c < 243; ++c) {
            const int b = 1 + c / 24, m = c % 24;
            for (int k = 4, rest = c; k >= 0; --k, rest /= 3) {
                const int elem = m < 16 ? 16 * k + m : 80 + 8 * k + (m - 16);
                trits[b * 128 + elem] = static_cast<int8_t>(rest % 3 - 1);
            }
        }
        const auto scales = niwa::kernels::test::random_vector(rng, blocks, 0.001f, 0.2f);
        std::vector<uint8_t> pq2(dtype_row_bytes(DType::PQ2_0, n)), ptq1(dtype_row_bytes(DType::PTQ1_0, n));
        pack_ternary_row(DType::PQ2_0, trits.data(), scales.data(), pq2.data(), n);
        pack_ternary_row(DType::PTQ1_0, trits.data(), scales.data(), ptq1.data(), n);
        std::vector<float> a(n), b(n);
        dequantize_row(DType::PQ2_0, pq2.data(), a.data(), n);
        dequantize_row(DType::PTQ1_0, ptq1.data(), b.data(), n);
        for (int i = 0; i < n; ++i) {
            const double d = half_value(f32_to_fp16(scales[i / 128]));
            QVERIFY(std::abs(d - scales[i / 128]) <= scales[i / 128] * 0x1p-11);
            QCOMPARE(static_cast<double>(a[i]), trits[i] * d);
            QCOMPARE(static_cast<double>(b[i]), trits[i] * d);
        }
    }

    // pack_ternary_row's branch-free packing gives the very bytes of the plain definition:
    // PQ2_0 code t + 1 in bits 2 (j % 4) of qs[j / 4]; PTQ1_0 bytes ceil(v * 256 / 243) of the
    // base-3 numbers v of the layout's trit groups. Random rows, all -1 and all +1 blocks,
    // and every 5-trit combination.
    void packMatchesStraightforwardPacking() {
        std::mt19937 rng(23);
        const int blocks = 40;
        const int n = blocks * 128;
        std::vector<int8_t> trits(n);
        for (auto& t : trits) t = static_cast<int8_t>(static_cast<int>(rng() % 3) - 1);
        std::fill(trits.begin(), trits.begin() + 128, int8_t{-1});
        std::fill(trits.begin() + 128, trits.begin() + 256, int8_t{1});
        for (int c = 0; c < 243; ++c) {  // blocks 2..12: every 5-trit combination in a qs byte
            const int b = 2 + c / 24, m = c % 24;
            for (int k = 4, rest = c; k >= 0; --k, rest /= 3)
                trits[b * 128 + (m < 16 ? 16 * k + m : 80 + 8 * k + (m - 16))] =
                    static_cast<int8_t>(rest % 3 - 1);
        }
        const auto scales = niwa::kernels::test::random_vector(rng, blocks, -0.5f, 0.5f);

        std::vector<uint8_t> want_pq2(static_cast<size_t>(blocks) * 34, 0),
            want_ptq1(static_cast<size_t>(blocks) * 28);
        const auto ptq1_byte = [&](const int8_t* t, int stride, int count) {
            int v = 0;
            for (int k = 0; k < 5; ++k) v = v * 3 + (k < count ? t[k * stride] + 1 : 0);
            return static_cast<uint8_t>((v * 256 + 242) / 243);
        };
        for (int b = 0; b < blocks; ++b) {
            const int8_t* t = &trits[b * 128];
            const uint16_t d = f32_to_fp16(scales[b]);
            uint8_t* p = &want_pq2[b * 34];
            p[0] = d & 0xff, p[1] = d >> 8;
            for (int j = 0; j < 128; ++j) p[2 + j / 4] |= static_cast<uint8_t>((t[j] + 1) << (2 * (j % 4)));
            uint8_t* q = &want_ptq1[b * 28];
            for (int m = 0; m < 16; ++m) q[m] = ptq1_byte(t + m, 16, 5);
            for (int m = 0; m < 8; ++m) q[16 + m] = ptq1_byte(t + 80 + m, 8, 5);
            for (int h = 0; h < 2; ++h) q[24 + h] = ptq1_byte(t + 120 + h, 2, 4);
            q[26] = d & 0xff, q[27] = d >> 8;
        }
        std::vector<uint8_t> pq2(want_pq2.size(), 0xAA), ptq1(want_ptq1.size(), 0xAA);
        pack_ternary_row(DType::PQ2_0, trits.data(), scales.data(), pq2.data(), n);
        pack_ternary_row(DType::PTQ1_0, trits.data(), scales.data(), ptq1.data(), n);
        for (size_t i = 0; i < pq2.size(); ++i) QCOMPARE(pq2[i], want_pq2[i]);
        for (size_t i = 0; i < ptq1.size(); ++i) QCOMPARE(ptq1[i], want_ptq1[i]);
    }

    // PQ2_0S holds exactly the weights of the PQ2_0 rows it was converted from: scales in 16-byte
    // slots per run of 8 blocks (zero where a short last run has none), codes after them, row
    // bytes 16 per run plus n / 4. Rows of several run counts, a source with padded rows.
    void splitRowsHoldThePq2Weights() {
        std::mt19937 rng(29);
        for (const int64_t n : {128, 384, 1024, 1152, 5120, 8704}) {
            const int64_t rows = 3, blocks = n / 128, runs = (blocks + 7) / 8;
            const size_t src_row = dtype_row_bytes(DType::PQ2_0, n), src_stride = src_row + 6;
            QCOMPARE(dtype_row_bytes(DType::PQ2_0S, n), static_cast<size_t>(16 * runs + n / 4));
            const std::vector<uint8_t> src = random_pq2_rows(rng, n, rows, src_stride);
            const std::vector<uint8_t> split =
                convert_rows(DType::PQ2_0, DType::PQ2_0S, src.data(), src_stride, rows, n);
            const size_t row = dtype_row_bytes(DType::PQ2_0S, n);
            QCOMPARE(split.size(), row * rows);
            std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
            for (int64_t r = 0; r < rows; ++r) {
                dequantize_row(DType::PQ2_0, &src[r * src_stride], want.data(), n);
                dequantize_row(DType::PQ2_0S, &split[r * row], got.data(), n);
                for (int64_t i = 0; i < n; ++i) QCOMPARE(got[i], want[i]);
                const uint8_t* last = &split[r * row] + (runs - 1) * kSplitRunBytes;
                for (int64_t slot = blocks - (runs - 1) * 8; slot < 8; ++slot) {
                    QCOMPARE(last[2 * slot], uint8_t{0});
                    QCOMPARE(last[2 * slot + 1], uint8_t{0});
                }
            }
        }
        std::vector<uint8_t> f16(8, 7);
        QCOMPARE(convert_rows(DType::F16, DType::F16, f16.data(), 8, 1, 4), f16);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 convert_rows(DType::PQ2_0, DType::PTQ1_0, f16.data(), 8, 0, 128));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 convert_rows(DType::PTQ1_0, DType::PQ2_0S, f16.data(), 8, 0, 128));
    }

    // PQ2_0T holds exactly the weights of the PQ2_0 rows it was converted from, in whole tiles of
    // 16 rows whose padding rows are zero; each block's codes and scale sit where formats.h says
    // (checked byte by byte for one block). Row counts that are and are not whole tiles.
    void tiledMatricesHoldThePq2Weights() {
        std::mt19937 rng(31);
        for (const int64_t n : {1024, 3072}) {
            for (const int64_t rows : {16, 37}) {
                const int64_t runs = n / 1024, tiles = (rows + 15) / 16;
                const size_t src_row = dtype_row_bytes(DType::PQ2_0, n), src_stride = src_row + 6;
                QCOMPARE(dtype_row_bytes(DType::PQ2_0T, n), static_cast<size_t>(runs * kSplitRunBytes));
                const std::vector<uint8_t> src = random_pq2_rows(rng, n, rows, src_stride);
                const std::vector<uint8_t> tiled =
                    convert_rows(DType::PQ2_0, DType::PQ2_0T, src.data(), src_stride, rows, n);
                QCOMPARE(tiled.size(), static_cast<size_t>(tiles * runs * kTiledRunBytes));
                std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
                for (int64_t r = 0; r < tiles * 16; ++r) {
                    dequantize_tiled_row(tiled.data(), n, r, got.data());
                    if (r < rows)
                        dequantize_row(DType::PQ2_0, &src[r * src_stride], want.data(), n);
                    else
                        std::fill(want.begin(), want.end(), 0.0f);
                    for (int64_t i = 0; i < n; ++i) QCOMPARE(got[i], want[i]);
                }
                // Row 19 (tile 1, row 3), block 13 (run 1, block 5): scale then codes.
                if (rows == 37 && n == 3072) {
                    const uint8_t* blk = &src[19 * src_stride] + 13 * kPq2BlockBytes;
                    const uint8_t* run = tiled.data() + (1 * runs + 1) * kTiledRunBytes;
                    QCOMPARE(run[4096 + 128 * 1 + 8 * 3 + 2 * 1], blk[0]);
                    QCOMPARE(run[4096 + 128 * 1 + 8 * 3 + 2 * 1 + 1], blk[1]);
                    for (int j = 0; j < 32; ++j) QCOMPARE(run[32 * (16 * 5 + 3) + j], blk[2 + j]);
                }
            }
        }
        std::vector<uint8_t> pq2(dtype_row_bytes(DType::PQ2_0, 1024), 0);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 convert_rows(DType::PQ2_0, DType::PQ2_0T, pq2.data(), pq2.size(), 1, 512));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 convert_rows(DType::PQ2_0T, DType::PQ2_0T, pq2.data(), pq2.size(), 1, 1024));
        std::vector<float> out(1024);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 dequantize_row(DType::PQ2_0T, pq2.data(), out.data(), 1024));
    }

    void packRejectsNonTrits() {
        std::vector<int8_t> trits(128, 0);
        trits[77] = 2;
        const float scale = 1.0f;
        std::vector<uint8_t> out(34);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pack_ternary_row(DType::PQ2_0, trits.data(), &scale, out.data(), 128));
        std::vector<int8_t> row(512, 1);
        std::vector<float> scales(4, 1.0f);
        std::vector<uint8_t> packed(4 * 34);
        for (int bad : {2, -2, 127, -128}) {
            row[300] = static_cast<int8_t>(bad);
            for (DType t : {DType::PQ2_0, DType::PTQ1_0})
                QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                         pack_ternary_row(t, row.data(), scales.data(), packed.data(), 512));
        }
        trits[77] = 1;
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 pack_ternary_row(DType::Q8_0, trits.data(), &scale, out.data(), 128));
    }
};

QTEST_APPLESS_MAIN(TestFormats)
#include "test_formats.moc"
