// What the engine knobs allow: how many users at what context fit in the memory the engine
// may use, from the model's per-token KV size and per-sequence recurrent state (MODEL.md).
// The one place this arithmetic lives; the Engine page shows it live as the knobs change.
#pragma once

#include <QList>
#include <QString>

namespace niwa::gui {

// The memory shape of a hybrid (full attention + Gated DeltaNet) model.
struct ModelGeometry {
    int attentionLayers = 16;  // layers with a KV cache
    int kvHeads = 4;
    int keyLength = 256;
    int valueLength = 256;
    int gdnLayers = 48;  // layers with a recurrent state
    int gdnValueHeads = 48;
    int gdnHeadDim = 128;  // the state is head_dim × head_dim per value head, fp32
    int convChannels = 10240;
    int convKernel = 4;                // the conv state keeps kernel - 1 inputs, fp32
    qint64 weightsBytes = 7206168928;  // Ternary-Bonsai-2-27B-PQ2_0.gguf

    // Ternary-Bonsai-2-27B (the product's model).
    static ModelGeometry bonsai27b() { return {}; }
};

struct CapacityKnobs {
    QList<qint64> deviceBytes;  // total memory of each GPU the engine uses; empty: unknown
    double memFraction = 0.9;   // share of each GPU the engine may take
    double vramLimitGiB = 0;    // per GPU, 0: none (emulates a smaller card)
    int maxSeqs = 16;
    int contextLength = 32768;
    QString kvFormat = QStringLiteral("k3v2");
};

struct CapacityEstimate {
    double kvBytesPerToken = 0;
    qint64 stateBytesPerSequence = 0;
    qint64 bytesPerUser = 0;   // one sequence at full context: its KV plus its state
    qint64 budgetBytes = -1;   // what the engine may use on all GPUs; -1: unknown
    qint64 reservedBytes = 0;  // weights and activations
    qint64 freeForCacheBytes = -1;
    int usersAtFullContext = -1;  // ≤ maxSeqs; -1: unknown
    int contextAtMaxSeqs = -1;    // tokens each of maxSeqs users gets; ≤ contextLength
    qint64 neededBytes = 0;       // weights, activations and maxSeqs users at full context
    bool fits = false;
    bool known = false;  // false when the devices' memory is unknown
};

// Bits per K element and per V element of a KV format (engine's --kv-format names; "auto" is
// the engine's default on a GPU, f16). Quantized formats add one fp16 scale per head vector.
double kvBitsPerElement(const QString& format, bool value);
// The format the engine holds the cache in when asked for `format`: the quantized k8v8, k4v4 and
// k3v2 are accepted and run as auto (f16 on a GPU) until the engine stores them (its
// kv_format_implemented, engine/model/model.cpp); the estimate counts what the engine will hold.
QString engineKvFormat(const QString& format);
double kvBytesPerToken(const ModelGeometry& m, const QString& format);
qint64 stateBytesPerSequence(const ModelGeometry& m);
// Activations and workspace the engine keeps per GPU beside weights and caches.
constexpr qint64 kActivationReserveBytes = 1536LL * 1024 * 1024;

CapacityEstimate estimateCapacity(const ModelGeometry& model, const CapacityKnobs& knobs);

}  // namespace niwa::gui
