// Light and dark colours for the QML pages, following the system (QStyleHints::colorScheme on
// Qt 6.5+, the palette's window lightness before), or forced by NIWA_THEME=light|dark.
#pragma once

#include <QColor>
#include <QObject>

namespace niwa::gui {

class Theme : public QObject {
    Q_OBJECT
    Q_PROPERTY(bool dark READ dark NOTIFY changed)
    Q_PROPERTY(QColor window READ window NOTIFY changed)
    Q_PROPERTY(QColor sidebar READ sidebar NOTIFY changed)
    Q_PROPERTY(QColor card READ card NOTIFY changed)
    Q_PROPERTY(QColor cardBorder READ cardBorder NOTIFY changed)
    Q_PROPERTY(QColor text READ text NOTIFY changed)
    Q_PROPERTY(QColor subtext READ subtext NOTIFY changed)
    Q_PROPERTY(QColor accent READ accent NOTIFY changed)
    Q_PROPERTY(QColor accentText READ accentText NOTIFY changed)
    Q_PROPERTY(QColor accentSoft READ accentSoft NOTIFY changed)
    Q_PROPERTY(QColor success READ success NOTIFY changed)
    Q_PROPERTY(QColor warning READ warning NOTIFY changed)
    Q_PROPERTY(QColor danger READ danger NOTIFY changed)
    Q_PROPERTY(QColor other READ other NOTIFY changed)
    Q_PROPERTY(QColor track READ track NOTIFY changed)
    Q_PROPERTY(QColor userBubble READ userBubble NOTIFY changed)
    Q_PROPERTY(QColor codeBackground READ codeBackground NOTIFY changed)
    Q_PROPERTY(QColor input READ input NOTIFY changed)
    Q_PROPERTY(QColor hover READ hover NOTIFY changed)
    Q_PROPERTY(QColor selected READ selected NOTIFY changed)

public:
    explicit Theme(QObject* parent = nullptr);

    bool dark() const { return dark_; }
    QColor window() const { return pick("#f3f3f3", "#202020"); }
    QColor sidebar() const { return pick("#ebebeb", "#1a1a1a"); }
    QColor card() const { return pick("#ffffff", "#2b2b2b"); }
    QColor cardBorder() const { return pick("#e0e0e0", "#383838"); }
    QColor text() const { return pick("#1b1b1b", "#f0f0f0"); }
    QColor subtext() const { return pick("#616161", "#a8a8a8"); }
    QColor accent() const { return pick("#0f6cbd", "#4cc2ff"); }
    QColor accentText() const { return pick("#ffffff", "#002133"); }
    QColor accentSoft() const { return pick("#dcebf8", "#1d3a4d"); }
    QColor success() const { return pick("#0f7b0f", "#6ccb5f"); }
    QColor warning() const { return pick("#9d5d00", "#fce100"); }
    QColor danger() const { return pick("#c42b1c", "#ff99a4"); }
    QColor other() const { return pick("#a0a0a0", "#6b6b6b"); }
    QColor track() const { return pick("#e6e6e6", "#3a3a3a"); }
    QColor userBubble() const { return pick("#dcebf8", "#1d3a4d"); }
    QColor codeBackground() const { return pick("#f6f8fa", "#161b22"); }
    QColor input() const { return pick("#ffffff", "#2d2d2d"); }
    QColor hover() const { return pick("#e5e5e5", "#2d2d2d"); }
    QColor selected() const { return pick("#dadada", "#383838"); }

    // light or dark forced; empty follows the system again.
    void setOverride(const QString& scheme);
    bool eventFilter(QObject* watched, QEvent* event) override;

signals:
    void changed();

private:
    QColor pick(const char* light, const char* dark) const { return QColor(dark_ ? dark : light); }
    void update();

    QString override_;
    bool dark_ = false;
};

}  // namespace niwa::gui
