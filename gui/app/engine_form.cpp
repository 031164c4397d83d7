// EngineForm: the ranges match Settings' validation, so apply() never has a setter refuse.
#include "gui/app/engine_form.h"

#include <QFileInfo>
#include <QRegularExpression>
#include <QUrl>
#include <algorithm>

#include "gui/core/settings.h"
#include "gui/core/stats_model.h"

namespace niwa::gui {

namespace {
constexpr int kModelMaxContext = 262144;  // MODEL.md
}

EngineForm::EngineForm(Settings* settings, StatsModel* stats, bool usesWsl, QObject* parent)
    : QObject(parent), settings_(settings), stats_(stats), usesWsl_(usesWsl) {
    connect(stats_, &StatsModel::statsChanged, this, [this] {
        const QList<qint64> seen = devices();
        if (!seen.isEmpty() && seen != knownDevices_) {
            knownDevices_ = seen;
            emit changed();
        }
    });
    connect(settings_, &Settings::changed, this, &EngineForm::changed);
    revert();
}

QStringList EngineForm::kvFormats() const {
    return {QStringLiteral("auto"), QStringLiteral("f32"),  QStringLiteral("f16"), QStringLiteral("bf16"),
            QStringLiteral("k8v8"), QStringLiteral("k4v4"), QStringLiteral("k3v2")};
}

template <typename T>
void EngineForm::assign(T& field, const T& value) {
    if (field == value) return;
    field = value;
    emit changed();
}

void EngineForm::setModelPath(const QString& v) {
    assign(modelPath_, v.trimmed());
}
void EngineForm::setMmprojPath(const QString& v) {
    assign(mmprojPath_, v.trimmed());
}
void EngineForm::setBackend(const QString& v) {
    assign(backend_, v);
}
void EngineForm::setPort(int v) {
    assign(port_, v);
}
void EngineForm::setMemFraction(double v) {
    assign(memFraction_, v);
}
void EngineForm::setVramLimitGiB(double v) {
    assign(vramLimitGiB_, v);
}
void EngineForm::setMaxSeqs(int v) {
    assign(maxSeqs_, v);
}
void EngineForm::setContextLength(int v) {
    assign(contextLength_, v);
}
void EngineForm::setKvFormat(const QString& v) {
    assign(kvFormat_, v);
}
void EngineForm::setDistro(const QString& v) {
    assign(distro_, v.trimmed());
}

void EngineForm::setKnownDevices(const QList<qint64>& bytes) {
    knownDevices_ = bytes;
    emit changed();
}

QVariantMap EngineForm::errors() const {
    QVariantMap e;
    // A path inside the WSL distro cannot be checked from Windows; a Windows path can.
    const bool checkable = !usesWsl_ || !modelPath_.startsWith(QLatin1Char('/'));
    if (modelPath_.isEmpty())
        e[QStringLiteral("modelPath")] = tr("Choose the model file (.gguf), or run setup to download it.");
    else if (!modelPath_.endsWith(QStringLiteral(".gguf"), Qt::CaseInsensitive))
        e[QStringLiteral("modelPath")] = tr("The model must be a .gguf file.");
    else if (checkable && !QFileInfo(modelPath_).isFile())
        e[QStringLiteral("modelPath")] = tr("No file at this path. Choose the model file again.");
    if (!mmprojPath_.isEmpty() && (!usesWsl_ || !mmprojPath_.startsWith(QLatin1Char('/'))) &&
        !QFileInfo(mmprojPath_).isFile())
        e[QStringLiteral("mmprojPath")] = tr("No file at this path. Leave it empty to run without images.");
    if (!backend_.isEmpty() && backend_ != QLatin1String("cpu") && backend_ != QLatin1String("cuda"))
        e[QStringLiteral("backend")] = tr("Choose CPU or CUDA.");
    if (port_ < 1024 || port_ > 65535) e[QStringLiteral("port")] = tr("Use a port from 1024 to 65535.");
    if (memFraction_ < 0.1 || memFraction_ > 0.99)
        e[QStringLiteral("memFraction")] = tr("Use a share from 10% to 99%.");
    if (vramLimitGiB_ < 0 || vramLimitGiB_ > 4096)
        e[QStringLiteral("vramLimitGiB")] = tr("Use 0 (no limit) up to 4096 GiB.");
    if (maxSeqs_ < 1 || maxSeqs_ > 1024) e[QStringLiteral("maxSeqs")] = tr("Use 1 to 1024 sequences.");
    if (contextLength_ < 256 || contextLength_ > kModelMaxContext)
        e[QStringLiteral("contextLength")] =
            tr("Use 256 to %L1 tokens (the model's limit).").arg(kModelMaxContext);
    if (!kvFormats().contains(kvFormat_))
        e[QStringLiteral("kvFormat")] = tr("Choose a KV format from the list.");
    static const QRegularExpression distroName(QStringLiteral("^[A-Za-z0-9._-]{0,64}$"));
    if (usesWsl_ && !distroName.match(distro_).hasMatch())
        e[QStringLiteral("distro")] = tr("A distro name has only letters, digits, '.', '_' and '-'.");
    return e;
}

bool EngineForm::dirty() const {
    return modelPath_ != settings_->modelPath() || mmprojPath_ != settings_->mmprojPath() ||
           backend_ != settings_->backend() || port_ != settings_->port() ||
           !qFuzzyCompare(memFraction_, settings_->memFraction()) ||
           !qFuzzyCompare(1 + vramLimitGiB_, 1 + settings_->vramLimitGiB()) ||
           maxSeqs_ != settings_->maxSeqs() || contextLength_ != settings_->contextLength() ||
           kvFormat_ != settings_->kvFormat() || (usesWsl_ && distro_ != settings_->distro());
}

QList<qint64> EngineForm::devices() const {
    QList<qint64> bytes;
    for (int row = 0; row < stats_->rowCount(); ++row)
        bytes << stats_->data(stats_->index(row), StatsModel::VramTotalRole).toLongLong();
    return bytes;
}

CapacityKnobs EngineForm::knobs() const {
    CapacityKnobs k;
    if (backend_ != QLatin1String("cpu")) k.deviceBytes = knownDevices_;
    k.memFraction = memFraction_;
    k.vramLimitGiB = vramLimitGiB_;
    k.maxSeqs = std::max(1, maxSeqs_);
    k.contextLength = std::max(1, contextLength_);
    k.kvFormat = kvFormat_;
    return k;
}

QVariantMap EngineForm::estimate() const {
    ModelGeometry model = ModelGeometry::bonsai27b();
    const QFileInfo file(modelPath_);
    if (file.isFile() && file.size() > 0) model.weightsBytes = file.size();
    const CapacityKnobs k = knobs();
    const CapacityEstimate e = estimateCapacity(model, k);
    return {{QStringLiteral("known"), e.known},
            {QStringLiteral("fits"), e.fits},
            {QStringLiteral("users"), e.usersAtFullContext},
            {QStringLiteral("context"), e.contextAtMaxSeqs},
            {QStringLiteral("maxSeqs"), k.maxSeqs},
            {QStringLiteral("contextLength"), k.contextLength},
            {QStringLiteral("kvBytesPerToken"), e.kvBytesPerToken},
            {QStringLiteral("stateBytes"), double(e.stateBytesPerSequence)},
            {QStringLiteral("bytesPerUser"), double(e.bytesPerUser)},
            {QStringLiteral("budgetBytes"), double(e.budgetBytes)},
            {QStringLiteral("neededBytes"), double(e.neededBytes)},
            {QStringLiteral("reservedBytes"), double(e.reservedBytes)},
            {QStringLiteral("devices"), int(k.deviceBytes.size())}};
}

void EngineForm::revert() {
    modelPath_ = settings_->modelPath();
    mmprojPath_ = settings_->mmprojPath();
    backend_ = settings_->backend();
    port_ = settings_->port();
    memFraction_ = settings_->memFraction();
    vramLimitGiB_ = settings_->vramLimitGiB();
    maxSeqs_ = settings_->maxSeqs();
    contextLength_ = settings_->contextLength();
    kvFormat_ = settings_->kvFormat();
    distro_ = settings_->distro();
    emit changed();
}

bool EngineForm::apply() {
    if (!valid()) return false;
    {
        const QSignalBlocker quiet(settings_);  // one changed() at the end, not one per field
        writeSettings();
    }
    emit settings_->changed();
    return true;
}

void EngineForm::writeSettings() {
    settings_->setModelPath(modelPath_);
    settings_->setMmprojPath(mmprojPath_);
    settings_->setBackend(backend_);
    settings_->setPort(port_);
    settings_->setMemFraction(memFraction_);
    settings_->setVramLimitGiB(vramLimitGiB_);
    settings_->setMaxSeqs(maxSeqs_);
    settings_->setContextLength(contextLength_);
    settings_->setKvFormat(kvFormat_);
    if (usesWsl_) settings_->setDistro(distro_);
    settings_->sync();
}

QString EngineForm::pathFromUrl(const QUrl& url) const {
    return url.isLocalFile() ? url.toLocalFile() : url.toString();
}

}  // namespace niwa::gui
