// The Engine page's knobs as a draft: each field is validated as it is typed (errors says
// why, in words the user can act on), the capacity estimate follows live, and apply() writes
// the draft to Settings only when every field is valid.
#pragma once

#include <QObject>
#include <QVariantMap>

#include "gui/app/capacity_estimate.h"

namespace niwa::gui {

class Settings;
class StatsModel;

class EngineForm : public QObject {
    Q_OBJECT
    Q_PROPERTY(QString modelPath READ modelPath WRITE setModelPath NOTIFY changed)
    Q_PROPERTY(QString mmprojPath READ mmprojPath WRITE setMmprojPath NOTIFY changed)
    Q_PROPERTY(QString backend READ backend WRITE setBackend NOTIFY changed)
    Q_PROPERTY(int port READ port WRITE setPort NOTIFY changed)
    Q_PROPERTY(double memFraction READ memFraction WRITE setMemFraction NOTIFY changed)
    Q_PROPERTY(double vramLimitGiB READ vramLimitGiB WRITE setVramLimitGiB NOTIFY changed)
    Q_PROPERTY(int maxSeqs READ maxSeqs WRITE setMaxSeqs NOTIFY changed)
    Q_PROPERTY(int contextLength READ contextLength WRITE setContextLength NOTIFY changed)
    Q_PROPERTY(QString kvFormat READ kvFormat WRITE setKvFormat NOTIFY changed)
    Q_PROPERTY(QString distro READ distro WRITE setDistro NOTIFY changed)
    Q_PROPERTY(bool usesWsl READ usesWsl CONSTANT)
    Q_PROPERTY(QStringList kvFormats READ kvFormats CONSTANT)
    Q_PROPERTY(QVariantMap errors READ errors NOTIFY changed)
    Q_PROPERTY(bool valid READ valid NOTIFY changed)
    Q_PROPERTY(bool dirty READ dirty NOTIFY changed)
    Q_PROPERTY(QVariantMap estimate READ estimate NOTIFY changed)

public:
    EngineForm(Settings* settings, StatsModel* stats, bool usesWsl, QObject* parent = nullptr);

    QString modelPath() const { return modelPath_; }
    QString mmprojPath() const { return mmprojPath_; }
    QString backend() const { return backend_; }
    int port() const { return port_; }
    double memFraction() const { return memFraction_; }
    double vramLimitGiB() const { return vramLimitGiB_; }
    int maxSeqs() const { return maxSeqs_; }
    int contextLength() const { return contextLength_; }
    QString kvFormat() const { return kvFormat_; }
    QString distro() const { return distro_; }
    bool usesWsl() const { return usesWsl_; }
    QStringList kvFormats() const;

    void setModelPath(const QString& v);
    void setMmprojPath(const QString& v);
    void setBackend(const QString& v);
    void setPort(int v);
    void setMemFraction(double v);
    void setVramLimitGiB(double v);
    void setMaxSeqs(int v);
    void setContextLength(int v);
    void setKvFormat(const QString& v);
    void setDistro(const QString& v);

    // field name → what is wrong with it; empty when all is well.
    QVariantMap errors() const;
    bool valid() const { return errors().isEmpty(); }
    bool dirty() const;
    // {known, fits, users, context, maxSeqs, contextLength, kvBytesPerToken, stateBytes,
    //  bytesPerUser, budgetBytes, neededBytes, reservedBytes, devices}
    QVariantMap estimate() const;
    CapacityKnobs knobs() const;

    // The GPUs' total memory when the engine is not running to tell (last seen, or for tests).
    void setKnownDevices(const QList<qint64>& bytes);

    // Reads the draft back from Settings (dropping edits).
    Q_INVOKABLE void revert();
    // Writes the draft to Settings; false (writing nothing) while a field is invalid.
    Q_INVOKABLE bool apply();
    // A local file URL from a file dialog as a path.
    Q_INVOKABLE QString pathFromUrl(const QUrl& url) const;

signals:
    void changed();

private:
    template <typename T>
    void assign(T& field, const T& value);
    QList<qint64> devices() const;
    void writeSettings();

    Settings* settings_;
    StatsModel* stats_;
    bool usesWsl_;
    QList<qint64> knownDevices_;
    QString modelPath_;
    QString mmprojPath_;
    QString backend_;
    int port_ = 0;
    double memFraction_ = 0;
    double vramLimitGiB_ = 0;
    int maxSeqs_ = 0;
    int contextLength_ = 0;
    QString kvFormat_;
    QString distro_;
};

}  // namespace niwa::gui
