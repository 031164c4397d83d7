// SingleInstance: the message is one line, "raise".
#include "gui/app/single_instance.h"

#include <QCryptographicHash>
#include <QLocalSocket>

namespace niwa::gui {

namespace {

QString defaultName() {
    const QByteArray env = qgetenv("NIWA_INSTANCE_NAME");
    if (!env.isEmpty()) return QString::fromLocal8Bit(env);
    QByteArray user = qgetenv("USERNAME");
    if (user.isEmpty()) user = qgetenv("USER");
    const QByteArray hash = QCryptographicHash::hash(user, QCryptographicHash::Sha256).toHex().left(12);
    return QStringLiteral("niwa-app-") + QString::fromLatin1(hash);
}

}  // namespace

SingleInstance::SingleInstance(const QString& name, QObject* parent)
    : QObject(parent), name_(name.isEmpty() ? defaultName() : name) {
    server_.setSocketOptions(QLocalServer::UserAccessOption);
    connect(&server_, &QLocalServer::newConnection, this, &SingleInstance::onConnection);
}

bool SingleInstance::notifyRunning(int timeoutMs) {
    QLocalSocket socket;
    socket.connectToServer(name_);
    if (!socket.waitForConnected(timeoutMs)) return false;
    socket.write("raise\n");
    if (!socket.waitForBytesWritten(timeoutMs)) return false;
    // Wait for the first to read it and hang up, so the message is never lost.
    socket.waitForDisconnected(timeoutMs);
    return true;
}

bool SingleInstance::listen() {
    if (server_.listen(name_)) return true;
    // A name left behind by a crashed instance (Unix sockets outlive their process).
    QLocalServer::removeServer(name_);
    if (server_.listen(name_)) return true;
    qWarning("niwa: cannot listen on %s: %s", qPrintable(name_), qPrintable(server_.errorString()));
    return false;
}

void SingleInstance::onConnection() {
    while (QLocalSocket* socket = server_.nextPendingConnection()) {
        connect(socket, &QLocalSocket::readyRead, socket, [this, socket] {
            if (!socket->canReadLine()) return;
            if (socket->readLine().trimmed() == "raise") emit raiseRequested();
            socket->disconnectFromServer();
        });
        connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
    }
}

}  // namespace niwa::gui
