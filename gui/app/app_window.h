// Loading the app's QML: the one main window (Main.qml) over an AppController, used by
// main() and by the UI test alike, and the translation for the user's language.
#pragma once

#include <QString>

class QQmlApplicationEngine;
class QQuickWindow;

namespace niwa::gui {

class AppController;

// "ja" or "en": NIWA_LANG when set, else the system locale's language.
QString uiLanguage();
// Installs Niwa's and Qt's own translations for language on the application.
void installTranslations(const QString& language);
// Loads Main.qml with app (and its theme) in context; the window, or nullptr on a QML error.
QQuickWindow* loadMainWindow(QQmlApplicationEngine& engine, AppController* app);

}  // namespace niwa::gui
