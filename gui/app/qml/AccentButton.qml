// The page's main action (filled with the accent colour) or a plain secondary one.
import QtQuick
import QtQuick.Controls

Button {
    id: b
    property bool accent: true
    property string iconName
    icon.source: iconName ? "qrc:/icons/" + iconName + ".svg" : ""
    icon.color: accent ? theme.accentText : theme.text
    icon.width: 16
    icon.height: 16
    leftPadding: 16
    rightPadding: 16
    implicitHeight: 34
    palette.buttonText: accent ? theme.accentText : theme.text
    background: Rectangle {
        radius: 6
        color: !b.enabled ? theme.track : b.accent ? (b.down ? Qt.darker(theme.accent, 1.15) : b.hovered ? Qt.lighter(theme.accent, 1.08) : theme.accent)
                                                   : (b.down ? theme.selected : b.hovered ? theme.hover : theme.card)
        border.color: b.accent ? "transparent" : theme.cardBorder
    }
}
