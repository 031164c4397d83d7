// Settings: every key has one getter that validates what it reads and one setter that
// validates what it writes.
#include "gui/core/settings.h"

#include <QRegularExpression>

namespace niwa::gui {

namespace {

bool validPort(int p) {
    return p >= 1 && p <= 65535;
}
bool validMemFraction(double f) {
    return f >= 0.1 && f <= 0.99;
}
bool validVramLimit(double g) {
    return g >= 0 && g <= 4096;
}
bool validMaxSeqs(int n) {
    return n >= 1 && n <= 1024;
}
bool validContext(int n) {
    return n >= 256 && n <= 1048576;
}
bool validKvFormat(const QString& s) {
    static const QRegularExpression re(QStringLiteral("^[a-z0-9_]{1,16}$"));
    return re.match(s).hasMatch();
}
bool validDistro(const QString& s) {
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9._-]{0,64}$"));
    return re.match(s).hasMatch();
}
bool validKey(const QString& k) {
    static const QRegularExpression re(QStringLiteral("^[\\x21-\\x7e]{16,256}$"));
    return re.match(k).hasMatch();
}

}  // namespace

Settings::Settings(QObject* parent) : QObject(parent), settings_(std::make_unique<QSettings>()) {}

Settings::Settings(const QString& iniPath, QObject* parent)
    : QObject(parent), settings_(std::make_unique<QSettings>(iniPath, QSettings::IniFormat)) {}

Settings::~Settings() = default;

bool Settings::store(const QString& key, const QVariant& value) {
    if (settings_->value(key) == value) return true;
    settings_->setValue(key, value);
    emit changed();
    return true;
}

bool Settings::reject(const QString& key, const QString& why) {
    qWarning("settings: %s refused: %s", qPrintable(key), qPrintable(why));
    return false;
}

QString Settings::distro() const {
    const QString d = settings_->value(QStringLiteral("engine/distro")).toString();
    return validDistro(d) ? d : QString();
}

QString Settings::enginePath() const {
    const QString p = settings_->value(QStringLiteral("engine/path")).toString();
    return p.isEmpty() ? QStringLiteral("niwa-engine") : p;
}

QString Settings::modelPath() const {
    return settings_->value(QStringLiteral("engine/model")).toString();
}
QString Settings::mmprojPath() const {
    return settings_->value(QStringLiteral("engine/mmproj")).toString();
}

int Settings::port() const {
    bool ok = false;
    const int p = settings_->value(QStringLiteral("engine/port")).toInt(&ok);
    return ok && validPort(p) ? p : kDefaultPort;
}

double Settings::memFraction() const {
    bool ok = false;
    const double f = settings_->value(QStringLiteral("engine/mem_fraction")).toDouble(&ok);
    return ok && validMemFraction(f) ? f : kDefaultMemFraction;
}

double Settings::vramLimitGiB() const {
    bool ok = false;
    const double g = settings_->value(QStringLiteral("engine/vram_limit_gib")).toDouble(&ok);
    return ok && validVramLimit(g) ? g : 0.0;
}

int Settings::maxSeqs() const {
    bool ok = false;
    const int n = settings_->value(QStringLiteral("engine/max_seqs")).toInt(&ok);
    return ok && validMaxSeqs(n) ? n : kDefaultMaxSeqs;
}

int Settings::contextLength() const {
    bool ok = false;
    const int n = settings_->value(QStringLiteral("engine/context_length")).toInt(&ok);
    return ok && validContext(n) ? n : kDefaultContextLength;
}

QString Settings::kvFormat() const {
    const QString f = settings_->value(QStringLiteral("engine/kv_format")).toString();
    return validKvFormat(f) ? f : QStringLiteral("k3v2");
}

bool Settings::lan() const {
    return settings_->value(QStringLiteral("engine/lan"), false).toBool();
}

QStringList Settings::apiKeys() const {
    QStringList keys = settings_->value(QStringLiteral("engine/api_keys")).toStringList();
    keys.removeIf([](const QString& k) { return !validKey(k); });
    return keys;
}

QString Settings::backend() const {
    const QString b = settings_->value(QStringLiteral("engine/backend")).toString();
    return b == QLatin1String("cpu") || b == QLatin1String("cuda") ? b : QString();
}

bool Settings::closeToTray() const {
    return settings_->value(QStringLiteral("app/close_to_tray"), true).toBool();
}

bool Settings::setBackend(const QString& backend) {
    if (!backend.isEmpty() && backend != QLatin1String("cpu") && backend != QLatin1String("cuda"))
        return reject(QStringLiteral("backend"), QStringLiteral("'%1' is not cpu or cuda").arg(backend));
    return store(QStringLiteral("engine/backend"), backend);
}

void Settings::setCloseToTray(bool on) {
    store(QStringLiteral("app/close_to_tray"), on);
}

bool Settings::setDistro(const QString& name) {
    if (!validDistro(name))
        return reject(QStringLiteral("distro"), QStringLiteral("'%1' is not a WSL distro name").arg(name));
    return store(QStringLiteral("engine/distro"), name);
}

bool Settings::setEnginePath(const QString& path) {
    return store(QStringLiteral("engine/path"), path);
}

bool Settings::setModelPath(const QString& path) {
    if (path.trimmed().isEmpty()) return reject(QStringLiteral("model"), QStringLiteral("the path is empty"));
    return store(QStringLiteral("engine/model"), path);
}

bool Settings::setMmprojPath(const QString& path) {
    return store(QStringLiteral("engine/mmproj"), path);
}

bool Settings::setPort(int port) {
    if (!validPort(port))
        return reject(QStringLiteral("port"), QStringLiteral("%1 is not in 1..65535").arg(port));
    return store(QStringLiteral("engine/port"), port);
}

bool Settings::setMemFraction(double fraction) {
    if (!validMemFraction(fraction))
        return reject(QStringLiteral("memory fraction"),
                      QStringLiteral("%1 is not in 0.1..0.99").arg(fraction));
    return store(QStringLiteral("engine/mem_fraction"), fraction);
}

bool Settings::setVramLimitGiB(double gib) {
    if (!validVramLimit(gib))
        return reject(QStringLiteral("VRAM limit"),
                      QStringLiteral("%1 GiB is not in 0..4096 (0: none)").arg(gib));
    return store(QStringLiteral("engine/vram_limit_gib"), gib);
}

bool Settings::setMaxSeqs(int n) {
    if (!validMaxSeqs(n))
        return reject(QStringLiteral("max sequences"), QStringLiteral("%1 is not in 1..1024").arg(n));
    return store(QStringLiteral("engine/max_seqs"), n);
}

bool Settings::setContextLength(int tokens) {
    if (!validContext(tokens))
        return reject(QStringLiteral("context length"),
                      QStringLiteral("%1 is not in 256..1048576").arg(tokens));
    return store(QStringLiteral("engine/context_length"), tokens);
}

bool Settings::setKvFormat(const QString& name) {
    if (!validKvFormat(name))
        return reject(QStringLiteral("KV format"), QStringLiteral("'%1' is not a format name").arg(name));
    return store(QStringLiteral("engine/kv_format"), name);
}

void Settings::setLan(bool on) {
    store(QStringLiteral("engine/lan"), on);
}

bool Settings::setApiKeys(const QStringList& keys) {
    for (qsizetype i = 0; i < keys.size(); ++i) {
        // Say which key and why, never the key: warnings end up in logs.
        if (!validKey(keys[i]))
            return reject(QStringLiteral("API key %1").arg(i + 1),
                          QStringLiteral("a key is 16 to 256 printable ASCII characters without spaces"));
    }
    return store(QStringLiteral("engine/api_keys"), keys);
}

EngineSettings Settings::engineSettings() const {
    EngineSettings e;
    e.enginePath = enginePath();
    e.modelPath = modelPath();
    e.mmprojPath = mmprojPath();
    e.backend = backend();
    e.port = port();
    e.lan = lan();
    e.memFraction = memFraction();
    e.vramLimitGiB = vramLimitGiB();
    e.maxSeqs = maxSeqs();
    e.maxContext = contextLength();
    e.kvFormat = kvFormat();
    e.distro = distro();
    return e;
}

}  // namespace niwa::gui
