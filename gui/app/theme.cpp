// Theme: the system's scheme, re-read when it changes.
#include "gui/app/theme.h"

#include <QEvent>
#include <QGuiApplication>
#include <QPalette>
#include <QStyleHints>

namespace niwa::gui {

Theme::Theme(QObject* parent) : QObject(parent) {
    override_ = QString::fromLocal8Bit(qgetenv("NIWA_THEME")).toLower();
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
    connect(QGuiApplication::styleHints(), &QStyleHints::colorSchemeChanged, this, &Theme::update);
#endif
    qApp->installEventFilter(this);
    update();
}

void Theme::setOverride(const QString& scheme) {
    override_ = scheme;
    update();
}

bool Theme::eventFilter(QObject* watched, QEvent* event) {
    if (watched == qApp && event->type() == QEvent::ApplicationPaletteChange) update();
    return QObject::eventFilter(watched, event);
}

void Theme::update() {
    bool dark = false;
    if (override_ == QLatin1String("dark") || override_ == QLatin1String("light")) {
        dark = override_ == QLatin1String("dark");
    } else {
#if QT_VERSION >= QT_VERSION_CHECK(6, 5, 0)
        const Qt::ColorScheme scheme = QGuiApplication::styleHints()->colorScheme();
        if (scheme != Qt::ColorScheme::Unknown)
            dark = scheme == Qt::ColorScheme::Dark;
        else
#endif
            dark = QGuiApplication::palette().color(QPalette::Window).lightness() < 128;
    }
    if (dark == dark_) return;
    dark_ = dark;
    emit changed();
}

}  // namespace niwa::gui
