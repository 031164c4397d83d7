// Loading rejects broken model files with messages that say what is wrong, and accepts the
// layouts it should (hyper-parameters, tensor table, Prism metadata).
#include <QtTest>

#include <fstream>

#include "engine/gguf/reader.h"
#include "engine/gguf/writer.h"
#include "engine/model/layout.h"
#include "engine/model/model.h"
#include "engine/model/prism.h"
#include "support/engine_process.h"
#include "support/temp_dir.h"

using namespace niwa;

namespace {

// Copies `src` to `dst`, letting `edit` drop or change metadata and tensors.
struct Edit {
    std::string drop_tensor;
    std::string reshape_tensor;  // written with its dimensions swapped
    std::string drop_key;
    std::string retype_key;  // a u32 key written as i32
};

void copy_with(const std::string& src, const std::string& dst, const Edit& e) {
    const gguf::Reader r = gguf::Reader::open(src);
    gguf::Writer w;
    for (const gguf::KeyValue& kv : r.metadata()) {
        if (kv.key == e.drop_key) continue;
        if (kv.key == e.retype_key) {
            w.add_i32(kv.key, int32_t(std::get<uint32_t>(kv.value.scalar)));
            continue;
        }
        w.add_value(kv.key, kv.value);
    }
    for (const gguf::TensorInfo& t : r.tensors()) {
        if (t.name == e.drop_tensor) continue;
        std::vector<int64_t> ne(t.ne, t.ne + t.n_dims);
        const auto bytes = r.data(t);
        if (t.name == e.reshape_tensor) std::swap(ne[0], ne[1]);
        w.add_tensor_bytes(t.name, t.type, ne, {bytes.begin(), bytes.end()});
    }
    w.write(dst);
}

QString load_error(const std::string& path) {
    try {
        model::ModelConfig c;
        c.max_context = 64;
        model::Model::open(path, c);
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

}  // namespace

class TestModelLoad : public QObject {
    Q_OBJECT

private:
    std::string tiny_;
    test::TempDir dir_;

private slots:
    void initTestCase() {
        tiny_ = test::synthetic_model("tiny", 2).toStdString();
        QVERIFY(!tiny_.empty());
    }

    void hparams_and_prism_of_the_tiny_preset() {
        const gguf::Reader r = gguf::Reader::open(tiny_);
        const model::HParams hp = model::HParams::from_gguf(r);
        QCOMPARE(hp.n_layer, 4);
        QVERIFY(hp.is_attention(3) && !hp.is_attention(0));
        QVERIFY(hp.ssm_n_v_heads > hp.ssm_n_k_heads);
        model::check_layout(r, hp);
        const model::PrismRotation p = model::PrismRotation::from_gguf(r);
        QVERIFY(p.enabled && p.block > 0 && p.block < 1024);
        QVERIFY(p.folded.count("output.weight") && !p.folded.count("token_embd.weight"));
        QVERIFY(p.inverse.count("token_embd.weight"));
        for (const auto& [width, s] : p.signs) QVERIFY(width % p.block == 0 && int64_t(s.size()) == width);
    }

    void truncated_file_is_refused() {
        const std::string path = dir_.file("truncated.gguf").toStdString();
        std::ifstream in(tiny_, std::ios::binary);
        std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream(path, std::ios::binary).write(all.data(), std::streamsize(all.size() / 2));
        const QString err = load_error(path);
        QVERIFY2(!err.isEmpty(), "a truncated file loaded");
        QVERIFY2(err.contains("byte"), qPrintable(err));
    }

    void missing_tensor_is_named() {
        const std::string path = dir_.file("missing.gguf").toStdString();
        copy_with(tiny_, path, {.drop_tensor = "blk.1.ssm_a"});
        const QString err = load_error(path);
        QVERIFY2(err.contains("missing tensor 'blk.1.ssm_a'"), qPrintable(err));
    }

    void wrong_shape_is_named_with_both_shapes() {
        const std::string path = dir_.file("shape.gguf").toStdString();
        copy_with(tiny_, path, {.reshape_tensor = "blk.3.attn_k.weight"});
        const QString err = load_error(path);
        QVERIFY2(err.contains("'blk.3.attn_k.weight' has shape") && err.contains("expected"),
                 qPrintable(err));
    }

    void missing_and_mistyped_keys_are_named() {
        const std::string missing = dir_.file("nokey.gguf").toStdString();
        copy_with(tiny_, missing, {.drop_key = "qwen35.ssm.state_size"});
        QVERIFY2(load_error(missing).contains("qwen35.ssm.state_size"), qPrintable(load_error(missing)));
        const std::string retyped = dir_.file("retyped.gguf").toStdString();
        copy_with(tiny_, retyped, {.retype_key = "qwen35.embedding_length"});
        const QString err = load_error(retyped);
        QVERIFY2(err.contains("qwen35.embedding_length"), qPrintable(err));
    }

    void unknown_backend_is_refused_clearly() {
        model::ModelConfig c;
        c.backend = "quantum";
        try {
            model::Model::open(tiny_, c);
            QFAIL("an unknown backend was accepted");
        } catch (const std::exception& e) {
            QVERIFY(QString(e.what()).contains("quantum"));
        }
    }
};

QTEST_GUILESS_MAIN(TestModelLoad)
#include "test_model_load.moc"
