// A flat button showing only an icon, with a tooltip.
import QtQuick
import QtQuick.Controls

ToolButton {
    id: b
    property string iconName
    property string tip
    property color tint: theme.subtext
    icon.source: "qrc:/icons/" + iconName + ".svg"
    icon.color: hovered ? theme.text : tint
    icon.width: 16
    icon.height: 16
    implicitWidth: 30
    implicitHeight: 30
    background: Rectangle { radius: 6; color: b.hovered ? theme.hover : "transparent" }
    ToolTip.visible: hovered && tip !== ""
    ToolTip.delay: 500
    ToolTip.text: tip
    Accessible.name: tip
}
