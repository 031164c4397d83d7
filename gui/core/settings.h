// The app's settings (QSettings underneath) with their defaults and validation: a setter
// refuses a bad value (returns false, keeps the old one) so the store never holds one, and
// a value edited by hand into something invalid reads back as the default.
#pragma once

#include <QObject>
#include <QSettings>
#include <QStringList>
#include <memory>

#include "gui/core/engine_settings.h"

namespace niwa::gui {

class Settings : public QObject {
    Q_OBJECT
    Q_PROPERTY(QString distro READ distro NOTIFY changed)
    Q_PROPERTY(QString enginePath READ enginePath NOTIFY changed)
    Q_PROPERTY(QString modelPath READ modelPath NOTIFY changed)
    Q_PROPERTY(QString mmprojPath READ mmprojPath NOTIFY changed)
    Q_PROPERTY(int port READ port NOTIFY changed)
    Q_PROPERTY(double memFraction READ memFraction NOTIFY changed)
    Q_PROPERTY(double vramLimitGiB READ vramLimitGiB NOTIFY changed)
    Q_PROPERTY(int maxSeqs READ maxSeqs NOTIFY changed)
    Q_PROPERTY(int contextLength READ contextLength NOTIFY changed)
    Q_PROPERTY(QString kvFormat READ kvFormat NOTIFY changed)
    Q_PROPERTY(bool lan READ lan NOTIFY changed)
    Q_PROPERTY(int apiKeyCount READ apiKeyCount NOTIFY changed)
    Q_PROPERTY(QString backend READ backend NOTIFY changed)
    Q_PROPERTY(bool closeToTray READ closeToTray NOTIFY changed)

public:
    // The user's settings (organization/application names of the QCoreApplication).
    explicit Settings(QObject* parent = nullptr);
    // An INI file of its own (tests, portable installs).
    explicit Settings(const QString& iniPath, QObject* parent = nullptr);
    ~Settings() override;

    static constexpr int kDefaultPort = 8080;
    static constexpr double kDefaultMemFraction = 0.9;
    static constexpr int kDefaultMaxSeqs = 16;
    static constexpr int kDefaultContextLength = 32768;

    QString distro() const;
    QString enginePath() const;
    QString modelPath() const;
    QString mmprojPath() const;
    int port() const;
    double memFraction() const;
    double vramLimitGiB() const;  // 0: no limit
    int maxSeqs() const;
    int contextLength() const;
    QString kvFormat() const;
    bool lan() const;
    QStringList apiKeys() const;
    QString backend() const;   // cpu or cuda; empty: the engine's default
    bool closeToTray() const;  // closing the window keeps the app (and the engine) in the tray
    int apiKeyCount() const { return int(apiKeys().size()); }

    bool setDistro(const QString& name);
    bool setEnginePath(const QString& path);
    bool setModelPath(const QString& path);
    bool setMmprojPath(const QString& path);
    bool setPort(int port);
    bool setMemFraction(double fraction);
    bool setVramLimitGiB(double gib);
    bool setMaxSeqs(int n);
    bool setContextLength(int tokens);
    bool setKvFormat(const QString& name);
    void setLan(bool on);
    // Keys are printable ASCII without spaces, at least 16 characters; never logged.
    bool setApiKeys(const QStringList& keys);
    bool setBackend(const QString& backend);
    void setCloseToTray(bool on);

    // The engine's start settings from these (apiKeysFile is left to the caller, who knows
    // where the engine sees files).
    EngineSettings engineSettings() const;

    void sync() { settings_->sync(); }

signals:
    void changed();

private:
    bool store(const QString& key, const QVariant& value);
    bool reject(const QString& key, const QString& why);

    std::unique_ptr<QSettings> settings_;
};

}  // namespace niwa::gui
