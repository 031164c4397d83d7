// Reader validation: strict getters, every truncation of a valid file, targeted corruptions
// (each message must name the key or tensor and the byte offset), and random byte flips.
#include <QFile>
#include <QTest>

#include <climits>
#include <random>

#include "engine/gguf/reader.h"
#include "engine/gguf/writer.h"
#include "support/temp_dir.h"
#include "tests/engine/gguf/raw_gguf.h"

using namespace niwa::gguf;
using niwa::test::RawGguf;

namespace {

constexpr uint64_t kHeaderBytes = 24;  // magic, version, n_tensors, n_kv

// A small valid file with one value of every type and tensors of every type. The last
// tensor is 128 bytes, so the file ends exactly where its data does (no trailing padding).
std::vector<uint8_t> small_valid_file(const std::string& dir, std::mt19937_64& rng) {
    Writer w;
    w.add_string("general.architecture", "qwen35");
    w.add_u8("v.u8", static_cast<uint8_t>(rng()));
    Value v;
    v.type = ValueType::I8, v.scalar = static_cast<int8_t>(rng()), w.add_value("v.i8", v);
    v.type = ValueType::U16, v.scalar = static_cast<uint16_t>(rng()), w.add_value("v.u16", v);
    v.type = ValueType::I16, v.scalar = static_cast<int16_t>(rng()), w.add_value("v.i16", v);
    v.type = ValueType::I64, v.scalar = static_cast<int64_t>(rng()), w.add_value("v.i64", v);
    v.type = ValueType::F64, v.scalar = 0.5 + static_cast<double>(rng() % 1000), w.add_value("v.f64", v);
    w.add_u32("v.u32", static_cast<uint32_t>(rng()));
    w.add_i32("v.i32", static_cast<int32_t>(rng()));
    w.add_u64("v.u64", rng());
    w.add_f32("v.f32", 1.25f);
    w.add_bool("v.bool", true);
    w.add_i32_array("v.ia", {static_cast<int32_t>(rng()), 3, -4});
    w.add_string_array("v.sa", {"a", std::string("b\0c", 3), "日本"});
    const auto random = [&rng](size_t n) {
        std::vector<uint8_t> b(n);
        for (auto& x : b) x = static_cast<uint8_t>(rng());
        return b;
    };
    w.add_tensor_bytes("pq2", TensorType::PQ2_0, {128, 2}, random(68));
    w.add_tensor_bytes("ptq1", TensorType::PTQ1_0, {256}, random(56));
    w.add_tensor_bytes("q8", TensorType::Q8_0, {32}, random(34));
    w.add_tensor_bytes("bf16", TensorType::BF16, {3}, random(6));
    w.add_tensor_bytes("f16", TensorType::F16, {5}, random(10));
    w.add_tensor_bytes("f32", TensorType::F32, {8, 4}, random(128));
    const std::string path = dir + "/small.gguf";
    w.write(path);
    QFile f(QString::fromStdString(path));
    if (!f.open(QIODevice::ReadOnly)) return {};
    const QByteArray b = f.readAll();
    return {b.begin(), b.end()};
}

// Parses `bytes` expecting a gguf::Error; returns its message ("" when it parsed).
std::string parse_error(std::span<const uint8_t> bytes) {
    try {
        Reader::from_memory(bytes, "test.gguf");
    } catch (const Error& e) {
        return e.what();
    }
    return {};
}

bool contains(const std::string& s, const std::string& part) {
    return s.find(part) != std::string::npos;
}

}  // namespace

// Asserts that parsing fails with a message holding every one of the given parts.
#define EXPECT_ERROR(raw, ...)                                                     \
    do {                                                                           \
        const std::string msg_ = parse_error((raw).span());                        \
        QVERIFY2(!msg_.empty(), "the corrupt file parsed without an error");       \
        for (const std::string& part_ : std::vector<std::string>{__VA_ARGS__})     \
            QVERIFY2(contains(msg_, part_), (part_ + " not in: " + msg_).c_str()); \
    } while (false)

class TestGgufReader : public QObject {
    Q_OBJECT

private slots:
    void strictGetters();
    void openErrorsNameThePath();
    void everyTruncationFails();
    void truncatedFileOnDiskFails();
    void headerCorruptions();
    void valueCorruptions();
    void tensorInfoCorruptions();
    void layoutCorruptions();
    void alignmentCorruptions();
    void randomMutationsParseOrThrow();
};

void TestGgufReader::strictGetters() {
    std::mt19937_64 rng(11);
    const auto i = static_cast<int32_t>(rng() % 1000);
    RawGguf raw;
    raw.header(0, 3);
    raw.str("qwen35.block_count").u32(5).put<int32_t>(i);  // an i32 where readers expect u32
    raw.kv_u32("k.u32", static_cast<uint32_t>(i));
    const uint64_t arr_at = raw.pos();
    raw.str("k.arr").u32(9).u32(5).u64(2).put<int32_t>(1).put<int32_t>(2);
    const Reader r = Reader::from_memory(raw.span(), "m.gguf");
    QCOMPARE(r.get_i32("qwen35.block_count"), i);
    QCOMPARE(r.get_u32("k.u32"), static_cast<uint32_t>(i));
    QCOMPARE(r.get_i32_array("k.arr"), (std::vector<int32_t>{1, 2}));

    const auto message = [&](auto&& fn) -> std::string {
        try {
            fn();
        } catch (const Error& e) {
            return e.what();
        }
        return {};
    };
    std::string m = message([&] { r.get_u32("qwen35.block_count"); });
    QVERIFY2(contains(m, "'qwen35.block_count'") && contains(m, "is i32") && contains(m, "expected u32") &&
                 contains(m, "byte " + std::to_string(kHeaderBytes)) && contains(m, "m.gguf"),
             m.c_str());
    m = message([&] { r.opt_u32("qwen35.block_count"); });
    QVERIFY2(contains(m, "expected u32"), m.c_str());
    m = message([&] { r.get_u32_array("k.arr"); });
    QVERIFY2(contains(m, "'k.arr'") && contains(m, "arr[i32]") && contains(m, "expected arr[u32]") &&
                 contains(m, "byte " + std::to_string(arr_at)),
             m.c_str());
    m = message([&] { r.get_string("k.u32"); });
    QVERIFY2(contains(m, "is u32, expected str"), m.c_str());
    m = message([&] { r.get_f32("no.such.key"); });
    QVERIFY2(contains(m, "'no.such.key'") && contains(m, "missing") && contains(m, "f32"), m.c_str());
    QVERIFY_THROWS_EXCEPTION(Error, r.get_bool("k.u32"));
    QVERIFY_THROWS_EXCEPTION(Error, r.get_u64("k.u32"));
    QVERIFY_THROWS_EXCEPTION(Error, r.get_f32_array("k.arr"));
    QVERIFY_THROWS_EXCEPTION(Error, r.get_string_array("k.arr"));
    QVERIFY(!r.opt_bool("absent").has_value());
}

void TestGgufReader::openErrorsNameThePath() {
    niwa::test::TempDir dir;
    const auto open_error = [](const std::string& path) -> std::string {
        try {
            Reader::open(path);
        } catch (const Error& e) {
            return e.what();
        }
        return {};
    };
    const std::string missing = dir.file("missing.gguf").toStdString();
    std::string m = open_error(missing);
    QVERIFY2(contains(m, missing) && contains(m, "No such file"), m.c_str());
    m = open_error(dir.path().toStdString());
    QVERIFY2(contains(m, "not a regular file"), m.c_str());
    const std::string empty = dir.file("empty.gguf").toStdString();
    QFile f(QString::fromStdString(empty));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.close();
    m = open_error(empty);
    QVERIFY2(contains(m, empty) && contains(m, "file ends at byte 0"), m.c_str());
}

void TestGgufReader::everyTruncationFails() {
    std::mt19937_64 rng(22);
    niwa::test::TempDir dir;
    const std::vector<uint8_t> file = small_valid_file(dir.path().toStdString(), rng);
    QVERIFY(!file.empty());
    const Reader full = Reader::from_memory(file);
    QCOMPARE(full.tensors().size(), size_t{6});
    for (size_t len = 0; len < file.size(); ++len) {
        const std::string m = parse_error(std::span(file).first(len));
        // Either the cursor ran out, or the counts in the header no longer fit.
        const bool named =
            contains(m, "file ends at byte " + std::to_string(len)) || contains(m, "cannot fit");
        QVERIFY2(named, ("prefix of " + std::to_string(len) + " bytes: '" + m + "'").c_str());
    }
}

void TestGgufReader::truncatedFileOnDiskFails() {
    std::mt19937_64 rng(33);
    niwa::test::TempDir dir;
    const std::vector<uint8_t> file = small_valid_file(dir.path().toStdString(), rng);
    const QString path = dir.file("cut.gguf");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(reinterpret_cast<const char*>(file.data()), static_cast<qint64>(file.size() - 1));
    f.close();
    try {
        Reader::open(path.toStdString());
        QFAIL("a file missing its last byte must not open");
    } catch (const Error& e) {
        const std::string m = e.what();
        QVERIFY2(contains(m, path.toStdString()) && contains(m, "'f32'") &&
                     contains(m, "file ends at byte " + std::to_string(file.size() - 1)) &&
                     contains(m, "needs 128 bytes"),
                 m.c_str());
    }
}

void TestGgufReader::headerCorruptions() {
    {
        RawGguf raw;
        raw.header(0, 0);
        raw.bytes[3] = 'X';
        EXPECT_ERROR(raw, "not a GGUF file", "byte 0", "'GGUX'");
    }
    {
        RawGguf raw;
        raw.header(0, 0, 2);
        EXPECT_ERROR(raw, "version 2", "byte 4", "version 3 only");
    }
    {
        RawGguf raw;
        raw.header(0, 0, 7);
        EXPECT_ERROR(raw, "version 7", "byte 4");
    }
    {
        RawGguf raw;
        raw.header(0, INT64_MAX).kv_u32("a", 1);
        EXPECT_ERROR(raw, "key/value count", "byte 16", "cannot fit");
    }
    {
        RawGguf raw;
        raw.header(int64_t{1} << 40, 1).kv_u32("a", 1);
        EXPECT_ERROR(raw, "tensor count", "byte 8", "cannot fit");
    }
    {
        RawGguf raw;
        raw.header(-1, 0);
        EXPECT_ERROR(raw, "tensor count", "byte 8", "negative");
    }
}

void TestGgufReader::valueCorruptions() {
    {  // string length past the end
        RawGguf raw;
        raw.header(0, 1).str("general.name").u32(8).u64(1000);
        const uint64_t at = raw.pos();
        raw.str("only a few bytes");
        EXPECT_ERROR(raw, "'general.name'", "byte 24", "file ends at byte " + std::to_string(raw.pos()),
                     "at byte " + std::to_string(at), "needs 1000 bytes");
    }
    {  // unknown value type
        RawGguf raw;
        uint64_t key_at = 0;
        raw.header(0, 2).kv_u32("a.ok", 1);
        key_at = raw.pos();
        raw.str("b.bad");
        const uint64_t type_at = raw.pos();
        raw.u32(13).u32(0);
        EXPECT_ERROR(raw, "'b.bad'", "byte " + std::to_string(key_at), "at byte " + std::to_string(type_at),
                     "is 13");
    }
    {  // nested array
        RawGguf raw;
        raw.header(0, 1).str("n.arr").u32(9);
        const uint64_t elem_at = raw.pos();
        raw.u32(9).u64(1).u32(4).u64(1).u32(7);
        EXPECT_ERROR(raw, "'n.arr'", "byte 24", "at byte " + std::to_string(elem_at), "arrays of arrays");
    }
    {  // array count past the end
        RawGguf raw;
        raw.header(0, 1).str("big.arr").u32(9).u32(4).u64(uint64_t{1} << 61).u32(1);
        EXPECT_ERROR(raw, "'big.arr'", "byte 24", "file ends at byte " + std::to_string(raw.pos()));
    }
    {  // bool that is neither 0 nor 1
        RawGguf raw;
        raw.header(0, 1).str("flag").u32(7);
        const uint64_t at = raw.pos();
        raw.u8(2);
        EXPECT_ERROR(raw, "'flag'", "byte 24", "at byte " + std::to_string(at), "0 or 1");
    }
    {  // a bad bool inside an array
        RawGguf raw;
        raw.header(0, 1).str("flags").u32(9).u32(7).u64(3).u8(1).u8(0);
        const uint64_t at = raw.pos();
        raw.u8(0x80);
        EXPECT_ERROR(raw, "'flags'", "at byte " + std::to_string(at), "0 or 1");
    }
    {  // duplicate key
        RawGguf raw;
        uint64_t first = 0, second = 0;
        raw.header(0, 3).kv_u32("dup.key", 1, &first).kv_u32("other", 2).kv_u32("dup.key", 3, &second);
        EXPECT_ERROR(raw, "'dup.key'", "byte " + std::to_string(second), "byte " + std::to_string(first),
                     "duplicate");
    }
    {  // empty key
        RawGguf raw;
        raw.header(0, 1).kv_u32("", 1);
        EXPECT_ERROR(raw, "key/value #0", "byte 24", "empty");
    }
}

void TestGgufReader::tensorInfoCorruptions() {
    std::mt19937_64 rng(44);
    // One tensor `name` with the given info; the data (256 bytes) follows the padding.
    const auto one = [&rng](const std::vector<int64_t>& ne, uint32_t type, uint64_t offset = 0) {
        RawGguf raw;
        raw.header(1, 0).tensor_info("blk.3.attn_q.weight", ne, type, offset);
        raw.pad(32).random_bytes(256, rng);
        return raw;
    };
    const std::string at = "byte " + std::to_string(kHeaderBytes);
    const std::string name = "'blk.3.attn_q.weight'";
    const uint64_t name_end = kHeaderBytes + 8 + 19;  // where n_dims is
    EXPECT_ERROR(one({4}, 77), name, at, "type 77", "at byte " + std::to_string(name_end + 4 + 8));
    EXPECT_ERROR(one({128}, 42), name, at, "type 42", "group-128", "group-64", "PQ2_0", "PTQ1_0",
                 "re-download");
    EXPECT_ERROR(one({}, 0), name, at, "n_dims", "is 0", "at byte " + std::to_string(name_end));
    EXPECT_ERROR(one({1, 1, 1, 1, 1}, 0), name, at, "n_dims", "is 5");
    EXPECT_ERROR(one({4, 0}, 0), name, at, "ne[1]", "is 0", "at byte " + std::to_string(name_end + 4 + 8));
    EXPECT_ERROR(one({-3}, 0), name, at, "ne[0]", "is -3");
    EXPECT_ERROR(one({48}, 8), name, at, "ne[0] = 48", "multiple of 32", "Q8_0");
    EXPECT_ERROR(one({64, 2}, 142), name, at, "multiple of 128", "PQ2_0");
    EXPECT_ERROR(one({int64_t{1} << 62, 4}, 0), name, at, "overflows");
    EXPECT_ERROR(one({int64_t{1} << 62}, 0), name, at, "overflows");  // 2^62 floats are 2^64 bytes
    EXPECT_ERROR(one({int64_t{1} << 31, int64_t{1} << 31, int64_t{1} << 31}, 0), name, at, "overflows");
    {  // duplicate tensor name
        RawGguf raw;
        uint64_t first = 0, second = 0;
        raw.header(2, 0).tensor_info("same", {8}, 0, 0, &first).tensor_info("same", {8}, 0, 32, &second);
        raw.pad(32).random_bytes(64, rng);
        EXPECT_ERROR(raw, "'same'", "byte " + std::to_string(second), "byte " + std::to_string(first),
                     "duplicate");
    }
    {  // empty tensor name
        RawGguf raw;
        raw.header(1, 0).tensor_info("", {8}, 0, 0);
        raw.pad(32).random_bytes(32, rng);
        EXPECT_ERROR(raw, "tensor info #0", at, "empty");
    }
}

void TestGgufReader::layoutCorruptions() {
    std::mt19937_64 rng(55);
    {  // misaligned offset
        RawGguf raw;
        uint64_t at = 0;
        raw.header(2, 0).tensor_info("a", {4}, 0, 0).tensor_info("b", {4}, 0, 16, &at);
        raw.pad(32).random_bytes(64, rng);
        EXPECT_ERROR(raw, "'b'", "byte " + std::to_string(at), "offset 16", "alignment 32");
    }
    {  // data past the end of the file
        RawGguf raw;
        uint64_t at = 0;
        raw.header(1, 0).tensor_info("big", {1024}, 0, 0, &at);
        raw.pad(32);
        const uint64_t data_at = raw.pos();
        raw.random_bytes(100, rng);
        EXPECT_ERROR(raw, "'big'", "byte " + std::to_string(at),
                     "file ends at byte " + std::to_string(raw.pos()), "at byte " + std::to_string(data_at),
                     "needs 4096 bytes");
    }
    {  // an offset so large that offset + size wraps around
        RawGguf raw;
        raw.header(1, 0).tensor_info("wrap", {8}, 0, ~uint64_t{31});
        raw.pad(32).random_bytes(64, rng);
        EXPECT_ERROR(raw, "'wrap'", "byte 24", "overflows");
    }
    {  // overlapping tensors (the later one in file order is named, with both ranges)
        RawGguf raw;
        uint64_t at = 0;
        raw.header(3, 0).tensor_info("x", {16}, 0, 0).tensor_info("y", {16}, 0, 64, &at);
        raw.tensor_info("z", {8}, 0, 32);
        raw.pad(32);
        const uint64_t data = raw.pos();
        raw.random_bytes(128, rng);
        EXPECT_ERROR(raw, "overlaps", "'x'", "'z'",
                     "[" + std::to_string(data) + ", " + std::to_string(data + 64));
    }
    {  // tensors may share nothing, but adjacency is fine and info order need not be data order
        RawGguf raw;
        raw.header(2, 0).tensor_info("late", {8}, 0, 32).tensor_info("early", {8}, 0, 0);
        raw.pad(32).random_bytes(64, rng);
        const Reader r = Reader::from_memory(raw.span());
        QCOMPARE(r.data(*r.tensor("late")).data(), raw.bytes.data() + r.data_offset() + 32);
    }
}

void TestGgufReader::alignmentCorruptions() {
    std::mt19937_64 rng(66);
    {
        RawGguf raw;
        uint64_t at = 0;
        raw.header(0, 1).kv_u32("general.alignment", 48, &at);
        EXPECT_ERROR(raw, "'general.alignment'", "byte " + std::to_string(at), "48", "power of two");
    }
    {
        RawGguf raw;
        raw.header(0, 1).kv_u32("general.alignment", 0);
        EXPECT_ERROR(raw, "'general.alignment'", "byte 24", "power of two");
    }
    {
        RawGguf raw;
        raw.header(0, 1).str("general.alignment").u32(5).put<int32_t>(64);
        EXPECT_ERROR(raw, "'general.alignment'", "byte 24", "is i32, expected u32");
    }
    {  // a valid alignment of 64 moves the data section and the offsets' grid
        RawGguf raw;
        raw.header(1, 1).kv_u32("general.alignment", 64).tensor_info("t", {8}, 0, 0);
        raw.pad(64);
        const uint64_t data = raw.pos();
        raw.random_bytes(32, rng);
        const Reader r = Reader::from_memory(raw.span());
        QCOMPARE(r.alignment(), 64u);
        QCOMPARE(r.data_offset(), data);
    }
}

void TestGgufReader::randomMutationsParseOrThrow() {
    std::mt19937_64 rng(77);
    niwa::test::TempDir dir;
    const std::vector<uint8_t> file = small_valid_file(dir.path().toStdString(), rng);
    QVERIFY(!file.empty());
    int parsed = 0, rejected = 0;
    for (int i = 0; i < 4000; ++i) {
        std::vector<uint8_t> copy = file;
        // Mostly the metadata and infos, where flips change structure rather than data.
        const size_t span = (i % 4 == 0) ? copy.size() : std::min<size_t>(copy.size(), 700);
        for (int flips = 1 + static_cast<int>(rng() % 4); flips > 0; --flips)
            copy[rng() % span] ^= static_cast<uint8_t>(1 + rng() % 255);
        try {
            const Reader r = Reader::from_memory(copy);
            uint64_t sum = 0;
            for (const TensorInfo& t : r.tensors())
                for (uint8_t b : r.data(t)) sum += b;
            QVERIFY(sum <= 255 * copy.size());
            ++parsed;
        } catch (const Error& e) {
            QVERIFY(std::string(e.what()).size() > 10);
            ++rejected;
        }
    }
    qInfo("random mutations: %d parsed, %d rejected", parsed, rejected);
    QVERIFY(parsed > 0 && rejected > 0);
}

QTEST_APPLESS_MAIN(TestGgufReader)
#include "test_gguf_reader.moc"
