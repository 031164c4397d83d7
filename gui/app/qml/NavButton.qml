// One entry of the side navigation.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ItemDelegate {
    id: button
    property string iconName
    property bool current: false
    property string shortcutText
    Layout.fillWidth: true
    implicitHeight: 40
    leftPadding: 12
    background: Rectangle {
        radius: 6
        color: button.current ? theme.selected : (button.hovered ? theme.hover : "transparent")
        Rectangle {
            visible: button.current
            width: 3; height: 16; radius: 2
            anchors.left: parent.left; anchors.verticalCenter: parent.verticalCenter
            color: theme.accent
        }
    }
    contentItem: RowLayout {
        spacing: 12
        Icon { glyph: button.iconName; color: button.current ? theme.accent : theme.text }
        Label { text: button.text; color: theme.text; Layout.fillWidth: true; font.pixelSize: 14 }
    }
    ToolTip.visible: hovered && shortcutText !== ""
    ToolTip.delay: 600
    ToolTip.text: shortcutText
}
