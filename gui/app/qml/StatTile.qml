// One number on the dashboard.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Rectangle {
    property string title
    property var value
    property string iconName
    Layout.fillWidth: true
    implicitHeight: 84
    radius: 8
    color: theme.card
    border.color: theme.cardBorder
    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 14
        spacing: 4
        RowLayout {
            spacing: 6
            Icon { glyph: iconName; sourceSize: Qt.size(14, 14); color: theme.subtext }
            Label { text: title; color: theme.subtext; font.pixelSize: 13 }
        }
        Label { text: value; color: theme.text; font.pixelSize: 24; font.weight: Font.DemiBold }
    }
}
