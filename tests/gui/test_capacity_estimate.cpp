// The capacity formula against numbers worked out by hand from MODEL.md's geometry.
#include <QTest>

#include "gui/app/capacity_estimate.h"

using namespace niwa::gui;

namespace {
constexpr qint64 kGiB = 1024LL * 1024 * 1024;
}

class TestCapacityEstimate : public QObject {
    Q_OBJECT

private slots:
    void perTokenAndPerSequenceSizes() {
        const ModelGeometry m = ModelGeometry::bonsai27b();
        // 16 layers × 4 KV heads × (256 K + 256 V) elements.
        QCOMPARE(kvBytesPerToken(m, QStringLiteral("f32")), 16.0 * 4 * 512 * 4);
        QCOMPARE(kvBytesPerToken(m, QStringLiteral("auto")), 16.0 * 4 * 512 * 2);
        QCOMPARE(kvBytesPerToken(m, QStringLiteral("f16")), 65536.0);
        QCOMPARE(kvBytesPerToken(m, QStringLiteral("bf16")), 65536.0);
        // k3v2: 96 + 64 bytes and two fp16 scales per head.
        QCOMPARE(kvBytesPerToken(m, QStringLiteral("k3v2")), 64.0 * (96 + 64 + 4));
        QCOMPARE(kvBytesPerToken(m, QStringLiteral("k4v4")), 64.0 * (128 + 128 + 4));
        // 48 layers × (48 heads × 128 × 128 fp32 + 10240 channels × 3 fp32): MODEL.md's 151 MB
        // of recurrent state plus the conv state.
        QCOMPARE(stateBytesPerSequence(m), 48LL * (48 * 128 * 128 * 4 + 10240 * 3 * 4));
        QCOMPARE(stateBytesPerSequence(m), 156893184LL);
    }

    // The defaults on two 16 GB cards. k3v2 runs as f16 until the engine quantizes the cache, so
    // a user at full context costs 64 KiB a token plus the state.
    void twoSixteenGigabyteCardsAtTheDefaults() {
        CapacityKnobs k;
        k.deviceBytes = {16 * kGiB, 16 * kGiB};
        k.memFraction = 0.9;
        k.maxSeqs = 16;
        k.contextLength = 32768;
        k.kvFormat = QStringLiteral("k3v2");
        const CapacityEstimate e = estimateCapacity(ModelGeometry::bonsai27b(), k);
        QVERIFY(e.known);
        QCOMPARE(e.kvBytesPerToken, 65536.0);
        QCOMPARE(e.budgetBytes, 2 * qint64(16 * kGiB * 0.9));
        QCOMPARE(e.reservedBytes, 7206168928LL + 2 * kActivationReserveBytes);
        QCOMPARE(e.bytesPerUser, 65536LL * 32768 + 156893184);
        QCOMPARE(e.neededBytes, e.reservedBytes + 16 * e.bytesPerUser);
        QVERIFY(!e.fits);
        // 20,496,370,130 bytes for caches: 8 users of 2,304,376,832, or 16 of 17,152 tokens.
        QCOMPARE(e.usersAtFullContext, 8);
        QCOMPARE(e.contextAtMaxSeqs, 17152);
    }

    void aTwelveGigabyteLimitFitsFewerUsers() {
        CapacityKnobs k;
        k.deviceBytes = {141 * kGiB};  // an H200 emulating a 12 GB card
        k.vramLimitGiB = 12;
        k.memFraction = 0.9;
        k.maxSeqs = 16;
        k.contextLength = 32768;
        k.kvFormat = QStringLiteral("f16");
        const CapacityEstimate e = estimateCapacity(ModelGeometry::bonsai27b(), k);
        QCOMPARE(e.budgetBytes, qint64(12 * kGiB * 0.9));
        QVERIFY(!e.fits);
        const qint64 free = e.budgetBytes - 7206168928LL - kActivationReserveBytes;
        QCOMPARE(e.freeForCacheBytes, free);
        QCOMPARE(e.usersAtFullContext, int(free / e.bytesPerUser));
        QCOMPARE(e.usersAtFullContext, 1);
        QCOMPARE(e.contextAtMaxSeqs, int((double(free) / 16 - 156893184) / 65536));
        QCOMPARE(e.contextAtMaxSeqs, 256);
    }

    // The quantized formats are accepted but held as f16 by the engine today: the estimate
    // counts that, not the format's own size (which perTokenAndPerSequenceSizes checks).
    void quantizedFormatsCountAsTheEngineHoldsThem() {
        CapacityKnobs k;
        k.deviceBytes = {12 * kGiB, 12 * kGiB};
        k.maxSeqs = 24;
        k.contextLength = 131072;
        k.kvFormat = QStringLiteral("auto");
        const CapacityEstimate held = estimateCapacity(ModelGeometry::bonsai27b(), k);
        for (const char* f : {"k8v8", "k4v4", "k3v2"}) {
            QCOMPARE(engineKvFormat(QString::fromLatin1(f)), QStringLiteral("auto"));
            k.kvFormat = QString::fromLatin1(f);
            const CapacityEstimate e = estimateCapacity(ModelGeometry::bonsai27b(), k);
            QCOMPARE(e.kvBytesPerToken, held.kvBytesPerToken);
            QCOMPARE(e.usersAtFullContext, held.usersAtFullContext);
            QCOMPARE(e.contextAtMaxSeqs, held.contextAtMaxSeqs);
        }
        for (const char* f : {"auto", "f32", "f16", "bf16"})
            QCOMPARE(engineKvFormat(QString::fromLatin1(f)), QString::fromLatin1(f));
    }

    void theLimitAloneIsEnoughToEstimate() {
        CapacityKnobs k;
        k.vramLimitGiB = 24;
        const CapacityEstimate e = estimateCapacity(ModelGeometry::bonsai27b(), k);
        QVERIFY(e.known);
        QCOMPARE(e.budgetBytes, qint64(24 * kGiB * 0.9));
    }

    void unknownMemoryStillGivesTheNeed() {
        CapacityKnobs k;
        k.maxSeqs = 4;
        k.contextLength = 8192;
        k.kvFormat = QStringLiteral("f16");
        const CapacityEstimate e = estimateCapacity(ModelGeometry::bonsai27b(), k);
        QVERIFY(!e.known);
        QCOMPARE(e.budgetBytes, -1LL);
        QCOMPARE(e.usersAtFullContext, -1);
        QCOMPARE(e.neededBytes, 7206168928LL + kActivationReserveBytes + 4 * (65536LL * 8192 + 156893184));
    }

    void aModelTooBigForTheCardFitsNobody() {
        CapacityKnobs k;
        k.deviceBytes = {8 * kGiB};
        const CapacityEstimate e = estimateCapacity(ModelGeometry::bonsai27b(), k);
        QCOMPARE(e.freeForCacheBytes, 0LL);
        QCOMPARE(e.usersAtFullContext, 0);
        QCOMPARE(e.contextAtMaxSeqs, 0);
        QVERIFY(!e.fits);
    }
};

QTEST_GUILESS_MAIN(TestCapacityEstimate)
#include "test_capacity_estimate.moc"
