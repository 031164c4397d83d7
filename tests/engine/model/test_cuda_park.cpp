// Parking on the CUDA backend: the same scenario as test_park, with the caches in GPU memory
// and the copies through Ops::download/upload. The parked bytes survive a restore into other
// blocks and slot exactly; the logits after it match never parking (bitwise, as the forward
// is deterministic for identical inputs). Label gpu: fails without a GPU.
#include <QtTest>

#include <cmath>

#include "park_scenario.h"
#include "support/engine_process.h"

using namespace niwa;

class TestCudaPark : public QObject {
    Q_OBJECT

private slots:
    void restore_elsewhere_equals_never_parked() {
        const std::string tiny = test::synthetic_model("tiny", 5).toStdString();
        QVERIFY(!tiny.empty());
        model::ModelConfig c;
        c.backend = "cuda";
        c.precision = kernels::Precision::Fp32;
        c.max_seqs = 4;
        c.max_step_tokens = 64;
        c.block_tokens = 16;
        c.max_context = 256;
        c.kv_blocks = 16;
        auto m = model::Model::open(tiny, c);
        const test::ParkRun stayed = test::park_scenario(*m, false);
        const test::ParkRun parked = test::park_scenario(*m, true);
        QCOMPARE(parked.parked.bytes, m->park_bytes(45));
        QVERIFY(parked.slot_after != parked.slot_before);
        QVERIFY(parked.blocks_after != parked.blocks_before);
        QVERIFY2(
            test::bitwise_equal(parked.reparked.data.get(), parked.parked.data.get(), parked.parked.bytes),
            "parked again after restore, the bytes differ");
        double worst = 0;
        for (size_t i = 0; i < stayed.next_logits.size(); ++i)
            worst = std::max(worst, std::fabs(double(parked.next_logits[i]) - double(stayed.next_logits[i])));
        QVERIFY2(
            test::bitwise_equal(parked.next_logits, stayed.next_logits),
            qPrintable(QString("logits after restore differ from never parking by up to %1").arg(worst)));
    }
};

QTEST_GUILESS_MAIN(TestCudaPark)
#include "test_cuda_park.moc"
