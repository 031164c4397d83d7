// AppController: wiring, the engine's life, LAN serving and the chat actions.
#include "gui/app/app_controller.h"

#include <QBuffer>
#include <QClipboard>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QHostAddress>
#include <QImage>
#include <QMimeDatabase>
#include <QNetworkInterface>
#include <QStandardPaths>
#include <QUrl>

#include "gui/app/conversation_list_model.h"
#include "gui/app/engine_advice.h"
#include "gui/app/engine_form.h"
#include "gui/app/message_list_model.h"
#include "gui/app/theme.h"
#include "gui/core/api_keys_file.h"
#include "gui/core/chat_session.h"
#include "gui/core/chat_store.h"
#include "gui/core/engine_client.h"
#include "gui/core/local_launcher.h"
#include "gui/core/settings.h"
#include "gui/core/setup_checks.h"
#include "gui/core/stats_model.h"
#include "gui/core/wsl_launcher.h"

namespace niwa::gui {

namespace {

constexpr int kLogLines = 400;
constexpr qint64 kMaxImageBytes = 20 * 1024 * 1024;

#ifdef Q_OS_WIN
constexpr bool kUsesWsl = true;
#else
constexpr bool kUsesWsl = false;
#endif

QString dataDir(const QString& profileDir) {
    const QString dir =
        profileDir.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) : profileDir;
    QDir().mkpath(dir);
    return dir;
}

// C:\Users\x\AppData\... as WSL mounts it: /mnt/c/Users/x/AppData/...
QString wslPath(const QString& windowsPath) {
    const QString p = QDir::fromNativeSeparators(windowsPath);
    if (p.size() < 2 || p[1] != QLatin1Char(':')) return p;
    return QStringLiteral("/mnt/") + p[0].toLower() + p.mid(2);
}

}  // namespace

AppController::AppController(const QString& profileDir, QObject* parent)
    : QObject(parent),
      settings_(profileDir.isEmpty()
                    ? std::make_unique<Settings>()
                    : std::make_unique<Settings>(profileDir + QStringLiteral("/settings.ini"))),
      client_(new EngineClient(this)),
      stats_(new StatsModel(this)),
      store_(new ChatStore(this)),
      session_(new ChatSession(client_, store_, this)),
      theme_(new Theme(this)),
      lanExposure_(new LanExposure(this)),
      profileDir_(profileDir) {
    if (kUsesWsl)
        launcher_ = std::make_unique<WslLauncher>();
    else
        launcher_ = std::make_unique<LocalLauncher>();
    stats_->attach(client_);
    chatStorePath_ = dataDir(profileDir) + QStringLiteral("/chats.sqlite");
    if (!store_->open(chatStorePath_))
        qWarning("niwa: cannot open the chat history %s: %s", qPrintable(chatStorePath_),
                 qPrintable(store_->lastError()));
    conversations_ = new ConversationListModel(store_, this);
    messages_ = new MessageListModel(store_, session_, this);
    messages_->setDark(theme_->dark());
    connect(theme_, &Theme::changed, this, [this] { messages_->setDark(theme_->dark()); });
    form_ = new EngineForm(settings_.get(), stats_, kUsesWsl, this);
    setup_ = new SetupChecks(*settings_, this);

    connect(launcher_.get(), &EngineLauncher::stateChanged, this, &AppController::onEngineState);
    connect(launcher_.get(), &EngineLauncher::progressChanged, this, &AppController::engineChanged);
    connect(launcher_.get(), &EngineLauncher::logLine, this, [this](const QString& line) {
        log_.append(line);
        if (log_.size() > kLogLines) log_.removeFirst();
        emit engineLogChanged();
    });
    connect(client_, &EngineClient::modelsFetched, this, [this](const QStringList& ids) {
        modelName_ = ids.value(0);
        session_->setModel(modelName_);
        emit engineChanged();
    });
    connect(settings_.get(), &Settings::changed, this, [this] {
        emit lanChanged();
        emit closeToTrayChanged();
    });
    connect(lanExposure_, &LanExposure::finished, this, &AppController::onLanExposure);
    connect(session_, &ChatSession::conversationChanged, this, &AppController::conversationChanged);
    connect(store_, &ChatStore::conversationsChanged, this, &AppController::conversationChanged);

    const QList<Conversation> all = store_->isOpen() ? store_->conversations() : QList<Conversation>();
    if (!all.isEmpty()) session_->setConversationId(all.first().id);
    needsSetup_ = settings_->modelPath().isEmpty();
    configureClient();
}

AppController::~AppController() {
    // The launcher stops an engine it started; the session first, so no reply outlives it.
    delete session_;
    session_ = nullptr;
}

QObject* AppController::settingsObject() const {
    return settings_.get();
}
QObject* AppController::formObject() const {
    return form_;
}
QObject* AppController::statsObject() const {
    return stats_;
}
QObject* AppController::sessionObject() const {
    return session_;
}
QObject* AppController::conversationsObject() const {
    return conversations_;
}
QObject* AppController::messagesObject() const {
    return messages_;
}
QObject* AppController::setupObject() const {
    return setup_;
}
QObject* AppController::themeObject() const {
    return theme_;
}

QString AppController::engineState() const {
    switch (launcher_->state()) {
        case EngineLauncher::State::Stopped:
            return QStringLiteral("stopped");
        case EngineLauncher::State::Starting:
            return QStringLiteral("starting");
        case EngineLauncher::State::Ready:
            return QStringLiteral("ready");
        case EngineLauncher::State::Stopping:
            return QStringLiteral("stopping");
        case EngineLauncher::State::Failed:
            return QStringLiteral("failed");
    }
    return {};
}

QString AppController::engineReason() const {
    return launcher_->reason();
}

QString AppController::engineFix() const {
    return launcher_->state() == EngineLauncher::State::Failed ? engineFixFor(launcher_->reason())
                                                               : QString();
}

double AppController::engineProgress() const {
    return launcher_->progress();
}

bool AppController::lanServing() const {
    return settings_->lan();
}

QString AppController::lanAddress() const {
    for (const QHostAddress& a : QNetworkInterface::allAddresses()) {
        if (a.protocol() == QAbstractSocket::IPv4Protocol && !a.isLoopback() && !a.isLinkLocal())
            return QStringLiteral("http://%1:%2/v1").arg(a.toString()).arg(settings_->port());
    }
    return QStringLiteral("http://127.0.0.1:%1/v1").arg(settings_->port());
}

bool AppController::closeToTray() const {
    return settings_->closeToTray();
}
void AppController::setCloseToTray(bool on) {
    settings_->setCloseToTray(on);
}

qint64 AppController::conversationId() const {
    return session_ ? session_->conversationId() : 0;
}

QString AppController::conversationTitle() const {
    if (!conversationId()) return {};
    const auto c = store_->conversation(conversationId());
    return c ? c->title : QString();
}

QStringList AppController::pendingImages() const {
    QStringList urls;
    for (qsizetype i = 0; i < pending_.size(); ++i)
        urls << QStringLiteral("image://niwa/pending/%1/%2").arg(i).arg(qHash(pending_[i].data));
    return urls;
}

QString AppController::version() const {
    return QCoreApplication::applicationVersion();
}

QString AppController::enginePath() const {
    const QString configured = settings_->enginePath();
    if (kUsesWsl || configured != QLatin1String("niwa-engine")) return configured;
    const QString here = QCoreApplication::applicationDirPath();
    for (const QString& candidate :
         {here + QStringLiteral("/niwa-engine"), here + QStringLiteral("/../../engine/niwa-engine")}) {
        if (QFileInfo(candidate).isExecutable()) return QFileInfo(candidate).canonicalFilePath();
    }
    const QString onPath = QStandardPaths::findExecutable(configured);
    return onPath.isEmpty() ? configured : onPath;
}

QString AppController::apiKeysFilePath() const {
    return dataDir(profileDir_) + QStringLiteral("/api-keys.txt");
}

QString AppController::apiKeysFileForEngine() const {
    return kUsesWsl ? wslPath(apiKeysFilePath()) : apiKeysFilePath();
}

void AppController::configureClient() {
    EngineSettings s = settings_->engineSettings();
    client_->setBaseUrl(QUrl(s.localBaseUrl()));
    const QStringList keys = settings_->apiKeys();
    client_->setApiKey(settings_->lan() && !keys.isEmpty() ? keys.first() : QString());
}

void AppController::startEngine() {
    if (!form_->valid()) {
        emit toast(tr("Fix the highlighted settings first."));
        return;
    }
    if (form_->dirty()) form_->apply();
    EngineSettings s = settings_->engineSettings();
    s.enginePath = enginePath();
    if (s.lan) {
        if (settings_->apiKeys().isEmpty() || !writeKeyFile()) {
            emit toast(tr("LAN serving needs an API key; serving on this PC only."));
            s.lan = false;
        } else {
            s.apiKeysFile = apiKeysFileForEngine();
        }
    }
    configureClient();
    log_.clear();
    emit engineLogChanged();
    launcher_->start(s);
}

void AppController::stopEngine() {
    launcher_->stop();
}

bool AppController::applyAndRestart() {
    if (!form_->apply()) return false;
    restartIfRunning();
    return true;
}

void AppController::restartIfRunning() {
    const auto state = launcher_->state();
    if (state != EngineLauncher::State::Ready && state != EngineLauncher::State::Starting) return;
    EngineSettings s = settings_->engineSettings();
    s.enginePath = enginePath();
    if (s.lan && writeKeyFile()) s.apiKeysFile = apiKeysFileForEngine();
    configureClient();
    launcher_->restart(s);
}

void AppController::onEngineState() {
    const auto state = launcher_->state();
    if (state == EngineLauncher::State::Ready) {
        client_->fetchModels();
        client_->startStats();
        // WSL's NAT address changes when WSL restarts: re-point the LAN port forward.
        if (LanExposure::needed() && settings_->lan()) {
            lanExposure_->setDistro(settings_->distro());
            lanExposure_->checkAndReapply(settings_->port());
        }
    } else if (state != EngineLauncher::State::Starting) {
        client_->stopStats();
    }
    emit engineChanged();
}

qint64 AppController::newConversation() {
    if (session_->busy()) return 0;
    const qint64 id = store_->createConversation({});
    if (id) session_->setConversationId(id);
    return id;
}

void AppController::openConversation(qint64 id) {
    if (session_->busy()) {
        emit toast(tr("Wait for the reply to finish, or stop it."));
        return;
    }
    session_->setConversationId(id);
}

void AppController::deleteConversation(qint64 id) {
    if (session_->busy() && id == session_->conversationId()) return;
    store_->deleteConversation(id);
    if (id == session_->conversationId()) {
        const QList<Conversation> all = store_->conversations();
        session_->setConversationId(all.isEmpty() ? 0 : all.first().id);
    }
}

void AppController::renameConversation(qint64 id, const QString& title) {
    auto c = store_->conversation(id);
    if (!c || title.trimmed().isEmpty()) return;
    c->title = title.trimmed();
    store_->updateConversation(*c);
}

bool AppController::send(const QString& text) {
    const QString trimmed = text.trimmed();
    if ((trimmed.isEmpty() && pending_.isEmpty()) || session_->busy()) return false;
    if (launcher_->state() != EngineLauncher::State::Ready) {
        emit toast(tr("Start the engine first (Engine page)."));
        return false;
    }
    if (!session_->conversationId() && !newConversation()) return false;
    if (!session_->send(trimmed, pending_)) return false;
    pending_.clear();
    emit pendingImagesChanged();
    return true;
}

void AppController::stop() {
    session_->stop();
}

bool AppController::regenerate() {
    return launcher_->state() == EngineLauncher::State::Ready && session_->regenerate();
}

bool AppController::editAndResend(qint64 messageId, const QString& text) {
    return launcher_->state() == EngineLauncher::State::Ready &&
           session_->editAndResend(messageId, text.trimmed());
}

bool AppController::addImage(const QUrl& url) {
    const QString path = url.isLocalFile() ? url.toLocalFile() : url.toString();
    const QMimeType mime = QMimeDatabase().mimeTypeForFile(path);
    QFile file(path);
    if (!mime.name().startsWith(QLatin1String("image/")) || !file.open(QIODevice::ReadOnly)) {
        emit toast(tr("%1 is not an image.").arg(QFileInfo(path).fileName()));
        return false;
    }
    if (file.size() > kMaxImageBytes) {
        emit toast(tr("%1 is larger than 20 MB.").arg(QFileInfo(path).fileName()));
        return false;
    }
    pending_.append({path, mime.name(), file.readAll()});
    emit pendingImagesChanged();
    return true;
}

bool AppController::pasteImage() {
    const QImage image = QGuiApplication::clipboard()->image();
    if (image.isNull()) return false;
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    image.save(&buffer, "PNG");
    pending_.append({QString(), QStringLiteral("image/png"), png});
    emit pendingImagesChanged();
    return true;
}

void AppController::removeImage(int index) {
    if (index < 0 || index >= pending_.size()) return;
    pending_.removeAt(index);
    emit pendingImagesChanged();
}

void AppController::copyText(const QString& text) {
    QGuiApplication::clipboard()->setText(text);
}

bool AppController::writeKeyFile() {
    const QStringList keys = settings_->apiKeys();
    QList<ApiKeyEntry> entries;
    for (qsizetype i = 0; i < keys.size(); ++i)
        entries.append(
            {keys[i], i == 0 ? QStringLiteral("niwa-app") : QStringLiteral("office-%1").arg(i), 0, 0});
    QString error;
    if (!writeApiKeysFile(apiKeysFilePath(), entries, &error)) {
        emit toast(error);
        return false;
    }
    return true;
}

bool AppController::setLanServing(bool on) {
    if (on == settings_->lan()) return true;
    if (on && settings_->apiKeys().size() < 2) {
        const QString office = generateApiKey();
        if (!settings_->setApiKeys({generateApiKey(), office})) return false;
        if (!writeKeyFile()) return false;
        settings_->setLan(true);
        emit apiKeyCreated(office);
    } else {
        if (on && !writeKeyFile()) return false;
        settings_->setLan(on);
    }
    settings_->sync();
    restartIfRunning();
    emit lanChanged();
    lanExposure_->setDistro(settings_->distro());
    if (on)
        lanExposure_->enable(settings_->port());
    else
        lanExposure_->disable(settings_->port());
    return true;
}

void AppController::onLanExposure(LanExposure::Action action, LanExposure::Outcome outcome,
                                  const QString& message) {
    if (outcome == LanExposure::Outcome::Done) return;
    const bool declined = outcome == LanExposure::Outcome::Declined;
    switch (action) {
        case LanExposure::Action::Enable:
            if (!settings_->lan()) return;  // turned off again meanwhile
            settings_->setLan(false);
            settings_->sync();
            restartIfRunning();
            emit lanChanged();
            emit toast(declined
                           ? tr("LAN serving is off: Windows needs administrator permission to open the "
                                "engine's port to the LAN.")
                           : tr("LAN serving is off: the engine's port could not be opened to the LAN (%1).")
                                 .arg(message));
            return;
        case LanExposure::Action::Disable:
            emit toast(declined
                           ? tr("The engine serves this PC only, but the LAN port forward and firewall rule "
                                "stay in Windows: removing them needs administrator permission.")
                           : tr("The engine serves this PC only, but the LAN port forward and firewall rule "
                                "could not be removed (%1).")
                                 .arg(message));
            return;
        case LanExposure::Action::Reapply:
            emit toast(tr("Other PCs may not reach the engine: the LAN port forward could not be updated to "
                          "WSL's new address (%1).")
                           .arg(message));
            return;
    }
}

bool AppController::replaceOfficeKey() {
    const QStringList keys = settings_->apiKeys();
    const QString office = generateApiKey();
    if (!settings_->setApiKeys({keys.isEmpty() ? generateApiKey() : keys.first(), office})) return false;
    if (!writeKeyFile()) return false;
    settings_->sync();
    emit apiKeyCreated(office);
    if (settings_->lan()) restartIfRunning();
    return true;
}

void AppController::setupFinished() {
    needsSetup_ = false;
    form_->revert();
    emit needsSetupChanged();
}

void AppController::quit() {
    QCoreApplication::quit();
}

}  // namespace niwa::gui
