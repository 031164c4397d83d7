// The tray icon: Serve on LAN (checkable), Open, Quit. Closing the window leaves the app here.
#pragma once

#include <QObject>
#include <memory>

class QAction;
class QMenu;
class QSystemTrayIcon;

namespace niwa::gui {

class AppController;

class TrayIcon : public QObject {
    Q_OBJECT

public:
    explicit TrayIcon(AppController* app, QObject* parent = nullptr);
    ~TrayIcon() override;

    static bool available();
    void show();
    QMenu* menu() const { return menu_.get(); }

private:
    void retranslate();
    void sync();

    AppController* app_;
    std::unique_ptr<QMenu> menu_;
    QSystemTrayIcon* icon_;
    QAction* serve_;
    QAction* open_;
    QAction* quit_;
};

}  // namespace niwa::gui
