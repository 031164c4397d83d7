// Everything the QML pages bind to, wired together: settings, the engine launcher (a child
// process here, wsl.exe on Windows), the engine client, stats, the chat store and session, and
// the list models over them. The pages call its invokables; the logic stays in gui/core.
#pragma once

#include <QObject>
#include <QStringList>
#include <QVariantList>
#include <memory>

#include "gui/app/lan_exposure.h"
#include "gui/core/chat_message.h"
#include "gui/core/engine_launcher.h"

namespace niwa::gui {

class ChatSession;
class ChatStore;
class ConversationListModel;
class EngineClient;
class EngineForm;
class MessageListModel;
class Settings;
class SetupChecks;
class StatsModel;
class Theme;

class AppController : public QObject {
    Q_OBJECT
    Q_PROPERTY(QString engineState READ engineState NOTIFY engineChanged)
    Q_PROPERTY(QString engineReason READ engineReason NOTIFY engineChanged)
    Q_PROPERTY(QString engineFix READ engineFix NOTIFY engineChanged)
    Q_PROPERTY(double engineProgress READ engineProgress NOTIFY engineChanged)
    Q_PROPERTY(QStringList engineLog READ engineLog NOTIFY engineLogChanged)
    Q_PROPERTY(QString modelName READ modelName NOTIFY engineChanged)
    Q_PROPERTY(bool lanServing READ lanServing NOTIFY lanChanged)
    Q_PROPERTY(QString lanAddress READ lanAddress NOTIFY lanChanged)
    Q_PROPERTY(bool closeToTray READ closeToTray WRITE setCloseToTray NOTIFY closeToTrayChanged)
    Q_PROPERTY(bool trayAvailable READ trayAvailable CONSTANT)
    Q_PROPERTY(qint64 conversationId READ conversationId NOTIFY conversationChanged)
    Q_PROPERTY(QString conversationTitle READ conversationTitle NOTIFY conversationChanged)
    Q_PROPERTY(QStringList pendingImages READ pendingImages NOTIFY pendingImagesChanged)
    Q_PROPERTY(bool needsSetup READ needsSetup NOTIFY needsSetupChanged)
    Q_PROPERTY(QString version READ version CONSTANT)
    Q_PROPERTY(QObject* settings READ settingsObject CONSTANT)
    Q_PROPERTY(QObject* form READ formObject CONSTANT)
    Q_PROPERTY(QObject* stats READ statsObject CONSTANT)
    Q_PROPERTY(QObject* session READ sessionObject CONSTANT)
    Q_PROPERTY(QObject* conversations READ conversationsObject CONSTANT)
    Q_PROPERTY(QObject* messages READ messagesObject CONSTANT)
    Q_PROPERTY(QObject* setup READ setupObject CONSTANT)
    Q_PROPERTY(QObject* theme READ themeObject CONSTANT)

public:
    // profileDir: settings and chats there instead of the user's (empty: the user's).
    explicit AppController(const QString& profileDir = {}, QObject* parent = nullptr);
    ~AppController() override;

    QString engineState() const;
    QString engineReason() const;
    QString engineFix() const;
    double engineProgress() const;
    QStringList engineLog() const { return log_; }
    QString modelName() const { return modelName_; }
    bool lanServing() const;
    QString lanAddress() const;
    bool closeToTray() const;
    void setCloseToTray(bool on);
    bool trayAvailable() const { return trayAvailable_; }
    void setTrayAvailable(bool available) { trayAvailable_ = available; }
    qint64 conversationId() const;
    QString conversationTitle() const;
    QStringList pendingImages() const;
    bool needsSetup() const { return needsSetup_; }
    QString version() const;

    Settings* settings() const { return settings_.get(); }
    EngineLauncher* launcher() const { return launcher_.get(); }
    EngineClient* client() const { return client_; }
    StatsModel* stats() const { return stats_; }
    ChatStore* store() const { return store_; }
    ChatSession* session() const { return session_; }
    EngineForm* form() const { return form_; }
    SetupChecks* setup() const { return setup_; }
    Theme* theme() const { return theme_; }
    LanExposure* lanExposure() const { return lanExposure_; }
    ConversationListModel* conversations() const { return conversations_; }
    MessageListModel* messages() const { return messages_; }
    QString chatStorePath() const { return chatStorePath_; }
    const QList<ChatImage>& pendingImageData() const { return pending_; }

    // The engine program: the setting, or the one built or installed beside the app.
    QString enginePath() const;

    Q_INVOKABLE void startEngine();
    Q_INVOKABLE void stopEngine();
    // Applies the form and restarts a running engine with it.
    Q_INVOKABLE bool applyAndRestart();

    Q_INVOKABLE qint64 newConversation();
    Q_INVOKABLE void openConversation(qint64 id);
    Q_INVOKABLE void deleteConversation(qint64 id);
    Q_INVOKABLE void renameConversation(qint64 id, const QString& title);
    // Sends text and the pending images in the open conversation (a new one if none).
    Q_INVOKABLE bool send(const QString& text);
    Q_INVOKABLE void stop();
    Q_INVOKABLE bool regenerate();
    Q_INVOKABLE bool editAndResend(qint64 messageId, const QString& text);

    // An image file (a dropped or picked URL); false with a toast when it is not an image.
    Q_INVOKABLE bool addImage(const QUrl& url);
    // The clipboard's image, if it holds one.
    Q_INVOKABLE bool pasteImage();
    Q_INVOKABLE void removeImage(int index);
    Q_INVOKABLE void copyText(const QString& text);

    // Turning LAN serving on makes the API keys (the app's own and one for the office) when
    // there are none, writes the engine's key file, and restarts a running engine. On Windows
    // it also runs the elevated LAN helper (LanExposure); when that is declined or fails, LAN
    // serving goes back off with a toast.
    Q_INVOKABLE bool setLanServing(bool on);
    // A new office key replaces the old one (shown once through apiKeyCreated).
    Q_INVOKABLE bool replaceOfficeKey();
    Q_INVOKABLE void setupFinished();
    Q_INVOKABLE void quit();

    // The key file's path as the engine sees it.
    QString apiKeysFileForEngine() const;
    QString apiKeysFilePath() const;

signals:
    void engineChanged();
    void engineLogChanged();
    void lanChanged();
    void closeToTrayChanged();
    void conversationChanged();
    void pendingImagesChanged();
    void needsSetupChanged();
    void raiseRequested();
    void apiKeyCreated(const QString& key);
    void toast(const QString& message);

private:
    void onEngineState();
    bool writeKeyFile();
    void configureClient();
    void restartIfRunning();
    void onLanExposure(LanExposure::Action action, LanExposure::Outcome outcome, const QString& message);

    std::unique_ptr<Settings> settings_;
    std::unique_ptr<EngineLauncher> launcher_;
    EngineClient* client_;
    StatsModel* stats_;
    ChatStore* store_;
    ChatSession* session_;
    ConversationListModel* conversations_;
    MessageListModel* messages_;
    EngineForm* form_;
    SetupChecks* setup_;
    Theme* theme_;
    LanExposure* lanExposure_;
    QString profileDir_;
    QString chatStorePath_;
    QStringList log_;
    QString modelName_;
    QList<ChatImage> pending_;
    bool trayAvailable_ = false;
    bool needsSetup_ = false;

    QObject* settingsObject() const;
    QObject* formObject() const;
    QObject* statsObject() const;
    QObject* sessionObject() const;
    QObject* conversationsObject() const;
    QObject* messagesObject() const;
    QObject* setupObject() const;
    QObject* themeObject() const;
};

}  // namespace niwa::gui
