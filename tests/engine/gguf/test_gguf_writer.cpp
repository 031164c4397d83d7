// Writer -> Reader round trips: every value type, arrays of every scalar type, strings with
// UTF-8 and NULs, tensors of every type at alignments 32 and 64, and the writer's own errors.
#include <QFile>
#include <QTest>

#include <random>

#include "engine/gguf/reader.h"
#include "engine/gguf/writer.h"
#include "support/temp_dir.h"

using namespace niwa::gguf;

namespace {

// A random value of scalar type t; floats finite so that == compares them.
Scalar random_scalar(ValueType t, std::mt19937_64& rng) {
    const uint64_t r = rng();
    std::uniform_real_distribution<double> real(-1e6, 1e6);
    switch (t) {
        case ValueType::U8:
            return static_cast<uint8_t>(r);
        case ValueType::I8:
            return static_cast<int8_t>(r);
        case ValueType::U16:
            return static_cast<uint16_t>(r);
        case ValueType::I16:
            return static_cast<int16_t>(r);
        case ValueType::U32:
            return static_cast<uint32_t>(r);
        case ValueType::I32:
            return static_cast<int32_t>(r);
        case ValueType::F32:
            return static_cast<float>(real(rng));
        case ValueType::BOOL:
            return (r & 1) != 0;
        case ValueType::U64:
            return r;
        case ValueType::I64:
            return static_cast<int64_t>(r);
        case ValueType::F64:
            return real(rng);
        case ValueType::STRING: {
            // Random bytes, NULs and invalid UTF-8 included: GGUF strings are byte strings.
            std::string s(r % 40, '\0');
            for (char& c : s) c = static_cast<char>(rng());
            return s;
        }
        case ValueType::ARRAY:
            break;
    }
    return uint8_t{0};
}

std::vector<ValueType> scalar_types() {
    std::vector<ValueType> out;
    for (uint32_t t = 0; t < kValueTypeCount; ++t)
        if (static_cast<ValueType>(t) != ValueType::ARRAY) out.push_back(static_cast<ValueType>(t));
    return out;
}

const TensorType kAllTensorTypes[] = {TensorType::F32,  TensorType::F16,   TensorType::Q8_0,
                                      TensorType::BF16, TensorType::PQ2_0, TensorType::PTQ1_0};

uint64_t padded(uint64_t n, uint64_t a) {
    return (n + a - 1) / a * a;
}

}  // namespace

class TestGgufWriter : public QObject {
    Q_OBJECT

private slots:
    void everyValueTypeRoundTrips();
    void stringsKeepUtf8AndNuls();
    void typedAddersMatchGetters();
    void tensorsRoundTrip_data();
    void tensorsRoundTrip();
    void writerRejectsBadInput();
    void failedWriteLeavesNoFile();
    void writeReplacesExistingFile();
};

void TestGgufWriter::everyValueTypeRoundTrips() {
    std::mt19937_64 rng(101);
    niwa::test::TempDir dir;
    Writer w;
    std::vector<std::pair<std::string, Value>> expected;
    for (ValueType t : scalar_types()) {
        Value v;
        v.type = t;
        v.scalar = random_scalar(t, rng);
        expected.emplace_back("scalar." + std::string(to_string(t)), v);
        for (size_t len : {size_t{0}, size_t{1}, size_t{2 + rng() % 300}}) {
            Value a;
            a.type = ValueType::ARRAY;
            a.elem_type = t;
            for (size_t i = 0; i < len; ++i) a.array.push_back(random_scalar(t, rng));
            expected.emplace_back("array." + std::string(to_string(t)) + "." + std::to_string(len), a);
        }
    }
    std::shuffle(expected.begin(), expected.end(), rng);  // order must survive, whatever it is
    for (const auto& [k, v] : expected) w.add_value(k, v);
    const std::string path = dir.file("values.gguf").toStdString();
    w.write(path);

    const Reader r = Reader::open(path);
    QCOMPARE(r.version(), 3u);
    QCOMPARE(r.metadata().size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        const KeyValue& kv = r.metadata()[i];
        QCOMPARE(kv.key, expected[i].first);
        QCOMPARE(kv.value.type, expected[i].second.type);
        if (kv.value.type == ValueType::ARRAY) {
            QCOMPARE(kv.value.elem_type, expected[i].second.elem_type);
            QVERIFY2(kv.value.array == expected[i].second.array, kv.key.c_str());
        } else {
            QVERIFY2(kv.value.scalar == expected[i].second.scalar, kv.key.c_str());
        }
        QCOMPARE(r.find(kv.key), &kv);
    }
    QVERIFY(r.find("absent.key") == nullptr);
    QVERIFY(r.tensors().empty());
}

void TestGgufWriter::stringsKeepUtf8AndNuls() {
    niwa::test::TempDir dir;
    const std::string japanese = "日本語のテキスト 🌸";
    const std::string with_nuls("a\0b\0\0c", 6);
    Writer w;
    w.add_string("s.utf8", japanese);
    w.add_string("s.nuls", with_nuls);
    w.add_string("s.empty", "");
    w.add_string_array("s.array", {japanese, with_nuls, ""});
    w.add_string(japanese, "keys may be UTF-8 too");
    const std::string path = dir.file("strings.gguf").toStdString();
    w.write(path);

    const Reader r = Reader::open(path);
    QCOMPARE(r.get_string("s.utf8"), japanese);
    QCOMPARE(r.get_string("s.nuls"), with_nuls);
    QCOMPARE(r.get_string("s.nuls").size(), size_t{6});
    QCOMPARE(r.get_string("s.empty"), std::string());
    QCOMPARE(r.get_string_array("s.array"), (std::vector<std::string>{japanese, with_nuls, ""}));
    QCOMPARE(r.get_string(japanese), std::string("keys may be UTF-8 too"));
}

void TestGgufWriter::typedAddersMatchGetters() {
    std::mt19937_64 rng(202);
    niwa::test::TempDir dir;
    const auto u32 = static_cast<uint32_t>(rng());
    const auto i32 = static_cast<int32_t>(rng());
    const uint64_t u64 = rng();
    const float f32 = std::uniform_real_distribution<float>(-10, 10)(rng);
    std::vector<int32_t> ia(17);
    std::vector<uint32_t> ua(5);
    std::vector<float> fa(9);
    for (auto& x : ia) x = static_cast<int32_t>(rng());
    for (auto& x : ua) x = static_cast<uint32_t>(rng());
    for (auto& x : fa) x = std::uniform_real_distribution<float>(-1, 1)(rng);
    Writer w;
    w.add_u8("k.u8", 0xa5);
    w.add_u32("k.u32", u32);
    w.add_i32("k.i32", i32);
    w.add_u64("k.u64", u64);
    w.add_f32("k.f32", f32);
    w.add_bool("k.true", true);
    w.add_bool("k.false", false);
    w.add_i32_array("k.ia", ia);
    w.add_u32_array("k.ua", ua);
    w.add_f32_array("k.fa", fa);
    const std::string path = dir.file("typed.gguf").toStdString();
    w.write(path);

    const Reader r = Reader::open(path);
    QCOMPARE(std::get<uint8_t>(r.find("k.u8")->value.scalar), uint8_t{0xa5});
    QCOMPARE(r.get_u32("k.u32"), u32);
    QCOMPARE(r.get_i32("k.i32"), i32);
    QCOMPARE(r.get_u64("k.u64"), u64);
    QCOMPARE(r.get_f32("k.f32"), f32);
    QCOMPARE(r.get_bool("k.true"), true);
    QCOMPARE(r.get_bool("k.false"), false);
    QCOMPARE(r.get_i32_array("k.ia"), ia);
    QCOMPARE(r.get_u32_array("k.ua"), ua);
    QCOMPARE(r.get_f32_array("k.fa"), fa);
    QCOMPARE(r.opt_u32("k.u32"), std::optional<uint32_t>(u32));
    QCOMPARE(r.opt_bool("k.true"), std::optional<bool>(true));
    QVERIFY(!r.opt_u32("k.none").has_value());
    QVERIFY(!r.opt_string("k.none").has_value());
}

void TestGgufWriter::tensorsRoundTrip_data() {
    QTest::addColumn<uint32_t>("alignment");
    QTest::newRow("align32") << 32u;
    QTest::newRow("align64") << 64u;
    QTest::newRow("align4096") << 4096u;
}

void TestGgufWriter::tensorsRoundTrip() {
    QFETCH(uint32_t, alignment);
    std::mt19937_64 rng(303 + alignment);
    niwa::test::TempDir dir;
    struct Expected {
        std::string name;
        TensorType type;
        std::vector<int64_t> ne;
        std::vector<uint8_t> bytes;
    };
    std::vector<Expected> expected;
    for (TensorType type : kAllTensorTypes) {
        const int64_t block = traits(type).block_elems;
        for (int dims = 1; dims <= kMaxDims; ++dims) {
            Expected e{"t." + std::string(to_string(type)) + "." + std::to_string(dims), type, {}, {}};
            e.ne.push_back(block * static_cast<int64_t>(1 + rng() % 3));
            for (int d = 1; d < dims; ++d) e.ne.push_back(static_cast<int64_t>(1 + rng() % 5));
            uint64_t n = static_cast<uint64_t>(e.ne[0] / block * traits(type).block_bytes);
            for (int d = 1; d < dims; ++d) n *= static_cast<uint64_t>(e.ne[d]);
            e.bytes.resize(n);
            for (auto& b : e.bytes) b = static_cast<uint8_t>(rng());
            expected.push_back(std::move(e));
        }
    }
    Writer w;
    w.add_string("general.architecture", "test");
    w.set_alignment(alignment);
    for (size_t i = 0; i < expected.size(); ++i) {
        const Expected& e = expected[i];
        if (i % 2) {
            w.add_tensor_bytes(e.name, e.type, e.ne, e.bytes);
        } else {
            w.add_tensor(e.name, e.type, e.ne, [&e](std::span<uint8_t> out) {
                QCOMPARE(out.size(), e.bytes.size());
                std::copy(e.bytes.begin(), e.bytes.end(), out.begin());
            });
        }
    }
    const std::string path = dir.file("tensors.gguf").toStdString();
    w.write(path);

    const Reader r = Reader::open(path);
    QCOMPARE(r.alignment(), alignment);
    QCOMPARE(r.data_offset() % alignment, uint64_t{0});
    QCOMPARE(r.tensors().size(), expected.size());
    uint64_t offset = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
        const Expected& e = expected[i];
        const TensorInfo& t = r.tensors()[i];
        QCOMPARE(t.name, e.name);
        QCOMPARE(r.tensor(e.name), &t);
        QCOMPARE(t.type, e.type);
        QCOMPARE(t.n_dims, static_cast<int>(e.ne.size()));
        int64_t elems = 1;
        for (int d = 0; d < kMaxDims; ++d) {
            const int64_t want = d < t.n_dims ? e.ne[d] : 1;
            QCOMPARE(t.ne[d], want);
            elems *= want;
        }
        QCOMPARE(t.n_elements(), elems);
        QCOMPARE(t.offset, offset);  // the padded sum of the tensors before it
        QCOMPARE(t.nbytes, e.bytes.size());
        const auto data = r.data(t);
        QVERIFY(std::equal(data.begin(), data.end(), e.bytes.begin(), e.bytes.end()));
        offset = padded(offset + e.bytes.size(), alignment);
    }
    QCOMPARE(QFile(QString::fromStdString(path)).size(), static_cast<qint64>(r.data_offset() + offset));
    if (alignment == 32) {
        QVERIFY(!r.has("general.alignment"));  // the default is not written
    } else {
        QCOMPARE(r.get_u32("general.alignment"), alignment);
    }
}

void TestGgufWriter::writerRejectsBadInput() {
    Writer w;
    w.add_u32("a.key", 1);
    QVERIFY_THROWS_EXCEPTION(Error, w.add_i32("a.key", 2));
    QVERIFY_THROWS_EXCEPTION(Error, w.add_u32("", 2));
    QVERIFY_THROWS_EXCEPTION(Error, w.set_alignment(48));
    QVERIFY_THROWS_EXCEPTION(Error, w.set_alignment(0));
    QVERIFY_THROWS_EXCEPTION(Error, w.add_i32("general.alignment", 64));
    Value mismatched;
    mismatched.type = ValueType::U32;
    mismatched.scalar = int32_t{5};
    QVERIFY_THROWS_EXCEPTION(Error, w.add_value("b.key", mismatched));
    Value nested;
    nested.type = ValueType::ARRAY;
    nested.elem_type = ValueType::ARRAY;
    QVERIFY_THROWS_EXCEPTION(Error, w.add_value("c.key", nested));
    Value mixed;
    mixed.type = ValueType::ARRAY;
    mixed.elem_type = ValueType::I32;
    mixed.array = {int32_t{1}, uint32_t{2}};
    QVERIFY_THROWS_EXCEPTION(Error, w.add_value("d.key", mixed));
    const auto noop = [](std::span<uint8_t>) {};
    QVERIFY_THROWS_EXCEPTION(Error, w.add_tensor("q", TensorType::Q8_0, {48}, noop));
    QVERIFY_THROWS_EXCEPTION(Error, w.add_tensor("z", TensorType::F32, {4, 0}, noop));
    QVERIFY_THROWS_EXCEPTION(Error, w.add_tensor("d", TensorType::F32, {1, 1, 1, 1, 1}, noop));
    QVERIFY_THROWS_EXCEPTION(Error, w.add_tensor("u", static_cast<TensorType>(42), {128}, noop));
    QVERIFY_THROWS_EXCEPTION(Error, w.add_tensor("o", TensorType::F32, {int64_t{1} << 62, 8}, noop));
    QVERIFY_THROWS_EXCEPTION(Error, w.add_tensor("o", TensorType::F32, {int64_t{1} << 62}, noop));
    QVERIFY_THROWS_EXCEPTION(Error, row_bytes(TensorType::F32, int64_t{1} << 62));
    QVERIFY_THROWS_EXCEPTION(Error, row_bytes(TensorType::PQ2_0, 100));
    QCOMPARE(row_bytes(TensorType::PTQ1_0, 5120), uint64_t{5120 / 128 * 28});
    QVERIFY_THROWS_EXCEPTION(Error, w.add_tensor_bytes("s", TensorType::F32, {4}, std::vector<uint8_t>(15)));
    w.add_tensor("ok", TensorType::F32, {4}, noop);
    QVERIFY_THROWS_EXCEPTION(Error, w.add_tensor("ok", TensorType::F32, {4}, noop));
    // The rejected size-mismatch tensor left nothing behind: "s" can be added properly.
    w.add_tensor_bytes("s", TensorType::F32, {4}, std::vector<uint8_t>(16, 7));
}

void TestGgufWriter::failedWriteLeavesNoFile() {
    niwa::test::TempDir dir;
    Writer w;
    w.add_tensor("a", TensorType::F32, {8}, [](std::span<uint8_t> out) { out[0] = 1; });
    w.add_tensor("b", TensorType::F32, {8},
                 [](std::span<uint8_t>) { throw std::runtime_error("fill failed"); });
    const QString path = dir.file("broken.gguf");
    QVERIFY_THROWS_EXCEPTION(std::runtime_error, w.write(path.toStdString()));
    QVERIFY(!QFile::exists(path));
    QVERIFY(!QFile::exists(path + ".tmp"));

    const std::string nowhere = dir.file("no/such/folder/x.gguf").toStdString();
    try {
        w.write(nowhere);
        QFAIL("writing into a missing folder must fail");
    } catch (const Error& e) {
        QVERIFY2(std::string(e.what()).find(nowhere) != std::string::npos, e.what());
    }
}

void TestGgufWriter::writeReplacesExistingFile() {
    std::mt19937_64 rng(404);
    niwa::test::TempDir dir;
    const QString path = dir.file("model.gguf");
    QFile old(path);
    QVERIFY(old.open(QIODevice::WriteOnly));
    old.write(QByteArray(5000, 'x'));
    old.close();
    const auto v = static_cast<uint32_t>(rng());
    Writer w;
    w.add_u32("k", v);
    w.write(path.toStdString());
    QCOMPARE(Reader::open(path.toStdString()).get_u32("k"), v);
    QVERIFY(!QFile::exists(path + ".tmp"));
}

QTEST_APPLESS_MAIN(TestGgufWriter)
#include "test_gguf_writer.moc"
