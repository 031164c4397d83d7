// One Niwa per user: the first launch listens on a local socket; a second launch connects,
// asks the first to show its window, and exits.
#pragma once

#include <QLocalServer>
#include <QObject>

namespace niwa::gui {

class SingleInstance : public QObject {
    Q_OBJECT

public:
    // name: the socket's name; the default is per user. NIWA_INSTANCE_NAME overrides it (tests).
    explicit SingleInstance(const QString& name = {}, QObject* parent = nullptr);

    // True when another instance answered and was asked to raise its window.
    bool notifyRunning(int timeoutMs = 2000);
    // Starts listening; false with a warning when the name cannot be taken.
    bool listen();
    QString name() const { return name_; }

signals:
    void raiseRequested();

private:
    void onConnection();

    QString name_;
    QLocalServer server_;
};

}  // namespace niwa::gui
