// The capacity estimate: budget = Σ min(device, limit) × fraction; the weights (split over the
// GPUs) and a per-GPU activation reserve come off it; the rest holds KV blocks and states.
#include "gui/app/capacity_estimate.h"

#include <algorithm>
#include <cmath>

namespace niwa::gui {

double kvBitsPerElement(const QString& format, bool value) {
    if (format == QLatin1String("f16") || format == QLatin1String("bf16") ||
        format == QLatin1String("auto") || format.isEmpty())
        return 16;
    if (format == QLatin1String("k8v8")) return 8;
    if (format == QLatin1String("k4v4")) return 4;
    if (format == QLatin1String("k3v2")) return value ? 2 : 3;
    return 32;  // f32
}

QString engineKvFormat(const QString& format) {
    if (format == QLatin1String("k8v8") || format == QLatin1String("k4v4") || format == QLatin1String("k3v2"))
        return QStringLiteral("auto");
    return format;
}

double kvBytesPerToken(const ModelGeometry& m, const QString& format) {
    const double kBits = kvBitsPerElement(format, false);
    const double vBits = kvBitsPerElement(format, true);
    const bool quantized = kBits < 16 || vBits < 16;
    const double scaleBytes = quantized ? 2.0 * 2 : 0;  // one fp16 scale for K and one for V
    const double perHead = m.keyLength * kBits / 8 + m.valueLength * vBits / 8 + scaleBytes;
    return double(m.attentionLayers) * m.kvHeads * perHead;
}

qint64 stateBytesPerSequence(const ModelGeometry& m) {
    const qint64 recurrent = qint64(m.gdnValueHeads) * m.gdnHeadDim * m.gdnHeadDim * 4;
    const qint64 conv = qint64(m.convChannels) * (m.convKernel - 1) * 4;
    return qint64(m.gdnLayers) * (recurrent + conv);
}

CapacityEstimate estimateCapacity(const ModelGeometry& model, const CapacityKnobs& knobs) {
    CapacityEstimate e;
    e.kvBytesPerToken = kvBytesPerToken(model, engineKvFormat(knobs.kvFormat));
    e.stateBytesPerSequence = stateBytesPerSequence(model);
    e.bytesPerUser = qint64(std::ceil(e.kvBytesPerToken * knobs.contextLength)) + e.stateBytesPerSequence;
    const int devices = std::max<int>(1, int(knobs.deviceBytes.size()));
    e.reservedBytes = model.weightsBytes + devices * kActivationReserveBytes;
    e.neededBytes = e.reservedBytes + qint64(knobs.maxSeqs) * e.bytesPerUser;

    QList<qint64> devicesBytes = knobs.deviceBytes;
    const qint64 limit = qint64(knobs.vramLimitGiB * 1024 * 1024 * 1024);
    if (devicesBytes.isEmpty() && limit > 0) devicesBytes << limit;  // the limit is all we know
    if (devicesBytes.isEmpty()) return e;

    e.known = true;
    e.budgetBytes = 0;
    for (qint64 bytes : devicesBytes) {
        const qint64 usable = limit > 0 ? std::min(bytes, limit) : bytes;
        e.budgetBytes += qint64(double(usable) * knobs.memFraction);
    }
    e.freeForCacheBytes = std::max<qint64>(0, e.budgetBytes - e.reservedBytes);
    e.usersAtFullContext =
        int(std::min<qint64>(knobs.maxSeqs, e.freeForCacheBytes / std::max<qint64>(1, e.bytesPerUser)));
    const double perSeq = double(e.freeForCacheBytes) / std::max(1, knobs.maxSeqs) - e.stateBytesPerSequence;
    const double tokens = perSeq > 0 ? perSeq / e.kvBytesPerToken : 0;
    e.contextAtMaxSeqs = int(std::min<double>(knobs.contextLength, std::floor(tokens)));
    e.fits = e.neededBytes <= e.budgetBytes;
    return e;
}

}  // namespace niwa::gui
