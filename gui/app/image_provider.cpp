// ImageProvider: decodes the stored bytes on request.
#include "gui/app/image_provider.h"

#include "gui/app/app_controller.h"
#include "gui/core/chat_store.h"

namespace niwa::gui {

ImageProvider::ImageProvider(AppController* app)
    : QQuickImageProvider(QQuickImageProvider::Image), app_(app) {}

QImage ImageProvider::requestImage(const QString& id, QSize* size, const QSize& requestedSize) {
    const QStringList parts = id.split(QLatin1Char('/'));
    QByteArray data;
    if (parts.value(0) == QLatin1String("pending")) {
        const int index = parts.value(1).toInt();
        if (index >= 0 && index < app_->pendingImageData().size())
            data = app_->pendingImageData()[index].data;
    } else if (parts.value(0) == QLatin1String("message")) {
        if (const auto m = app_->store()->message(parts.value(1).toLongLong())) {
            const int index = parts.value(2).toInt();
            if (index >= 0 && index < m->images.size()) data = m->images[index].data;
        }
    }
    QImage image = QImage::fromData(data);
    if (!image.isNull() && requestedSize.isValid())
        image = image.scaled(requestedSize, Qt::KeepAspectRatio, Qt::SmoothTransformation);
    if (size) *size = image.size();
    return image;
}

}  // namespace niwa::gui
