// TrayIcon: a QSystemTrayIcon with a widgets menu (the same on Windows and Linux).
#include "gui/app/tray_icon.h"

#include <QAction>
#include <QIcon>
#include <QMenu>
#include <QSystemTrayIcon>

#include "gui/app/app_controller.h"

namespace niwa::gui {

TrayIcon::TrayIcon(AppController* app, QObject* parent)
    : QObject(parent), app_(app), menu_(std::make_unique<QMenu>()), icon_(new QSystemTrayIcon(this)) {
    icon_->setIcon(QIcon(QStringLiteral(":/icons/niwa.svg")));
    serve_ = menu_->addAction(QIcon(QStringLiteral(":/icons/lan.svg")), QString());
    serve_->setCheckable(true);
    open_ = menu_->addAction(QIcon(QStringLiteral(":/icons/open.svg")), QString());
    menu_->addSeparator();
    quit_ = menu_->addAction(QIcon(QStringLiteral(":/icons/quit.svg")), QString());
    icon_->setContextMenu(menu_.get());
    retranslate();
    sync();

    connect(serve_, &QAction::triggered, this, [this](bool on) {
        if (!app_->setLanServing(on)) serve_->setChecked(app_->lanServing());
    });
    connect(open_, &QAction::triggered, app_, &AppController::raiseRequested);
    connect(quit_, &QAction::triggered, app_, &AppController::quit);
    connect(icon_, &QSystemTrayIcon::activated, this, [this](QSystemTrayIcon::ActivationReason reason) {
        if (reason == QSystemTrayIcon::Trigger || reason == QSystemTrayIcon::DoubleClick)
            emit app_->raiseRequested();
    });
    connect(app_, &AppController::lanChanged, this, &TrayIcon::sync);
    connect(app_, &AppController::engineChanged, this, &TrayIcon::sync);
}

TrayIcon::~TrayIcon() = default;

bool TrayIcon::available() {
    return QSystemTrayIcon::isSystemTrayAvailable();
}

void TrayIcon::show() {
    icon_->show();
}

void TrayIcon::retranslate() {
    serve_->setText(tr("Serve on LAN"));
    open_->setText(tr("Open Niwa"));
    quit_->setText(tr("Quit"));
}

void TrayIcon::sync() {
    serve_->setChecked(app_->lanServing());
    QString state;
    const QString s = app_->engineState();
    if (s == QLatin1String("ready"))
        state = tr("Engine running");
    else if (s == QLatin1String("starting"))
        state = tr("Engine starting");
    else if (s == QLatin1String("failed"))
        state = tr("Engine stopped with an error");
    else
        state = tr("Engine stopped");
    icon_->setToolTip(QStringLiteral("Niwa — ") + state +
                      (app_->lanServing() ? tr(" · serving on the LAN") : QString()));
}

}  // namespace niwa::gui
