// image://niwa/… for the chat view: "pending/N/…" is the Nth image waiting to be sent,
// "message/ID/N" the Nth image of a stored message. Thumbnails are scaled here, not in QML.
#pragma once

#include <QQuickImageProvider>

namespace niwa::gui {

class AppController;

class ImageProvider : public QQuickImageProvider {
public:
    explicit ImageProvider(AppController* app);
    QImage requestImage(const QString& id, QSize* size, const QSize& requestedSize) override;

private:
    AppController* app_;
};

}  // namespace niwa::gui
