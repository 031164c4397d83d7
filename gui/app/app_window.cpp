// loadMainWindow / installTranslations.
#include "gui/app/app_window.h"

#include <QCoreApplication>
#include <QFontDatabase>
#include <QLibraryInfo>
#include <QLocale>
#include <QQmlApplicationEngine>
#include <QQmlContext>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTranslator>

#include "gui/app/app_controller.h"
#include "gui/app/image_provider.h"
#include "gui/app/theme.h"

namespace niwa::gui {

namespace {

// lupdate does not follow C++17 nested namespace definitions (`namespace niwa::gui {`), so it files
// the strings of niwa::gui::Foo under the context "Foo"; look them up there.
class NiwaTranslator : public QTranslator {
public:
    using QTranslator::QTranslator;
    QString translate(const char* context, const char* sourceText, const char* disambiguation,
                      int n) const override {
        static constexpr char kPrefix[] = "niwa::gui::";
        if (context && qstrncmp(context, kPrefix, sizeof(kPrefix) - 1) == 0) context += sizeof(kPrefix) - 1;
        return QTranslator::translate(context, sourceText, disambiguation, n);
    }
};

}  // namespace

QString uiLanguage() {
    const QString forced = QString::fromLocal8Bit(qgetenv("NIWA_LANG")).toLower();
    if (forced == QLatin1String("ja") || forced == QLatin1String("en")) return forced;
    return QLocale::system().language() == QLocale::Japanese ? QStringLiteral("ja") : QStringLiteral("en");
}

void installTranslations(const QString& language) {
    auto* niwa = new NiwaTranslator(qApp);
    if (niwa->load(QStringLiteral(":/i18n/niwa_%1.qm").arg(language)))
        QCoreApplication::installTranslator(niwa);
    else
        qWarning("niwa: no translation for '%s'", qPrintable(language));
    auto* qt = new QTranslator(qApp);
    if (qt->load(QStringLiteral("qt_%1").arg(language), QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QCoreApplication::installTranslator(qt);
    else
        delete qt;
}

QQuickWindow* loadMainWindow(QQmlApplicationEngine& engine, AppController* app) {
    QQuickStyle::setStyle(QStringLiteral("Basic"));
    engine.addImageProvider(QStringLiteral("niwa"), new ImageProvider(app));
    engine.rootContext()->setContextProperty(QStringLiteral("app"), app);
    engine.rootContext()->setContextProperty(QStringLiteral("theme"), app->theme());
    engine.rootContext()->setContextProperty(QStringLiteral("uiLanguage"), uiLanguage());
    // "monospace" names no font on Windows; the system's fixed-pitch family does everywhere.
    engine.rootContext()->setContextProperty(QStringLiteral("monoFont"),
                                             QFontDatabase::systemFont(QFontDatabase::FixedFont).family());
    engine.load(QUrl(QStringLiteral("qrc:/qml/Main.qml")));
    if (engine.rootObjects().isEmpty()) return nullptr;
    return qobject_cast<QQuickWindow*>(engine.rootObjects().first());
}

}  // namespace niwa::gui
