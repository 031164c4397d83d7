// A titled surface: the building block of the Engine and Dashboard pages.
import QtQuick
import QtQuick.Layouts
import QtQuick.Controls

Rectangle {
    id: card
    property string title
    property string subtitle
    default property alias content: body.data
    property alias headerExtra: extra.data
    color: theme.card
    border.color: theme.cardBorder
    radius: 8
    implicitHeight: body.y + body.implicitHeight + 16
    implicitWidth: Math.max(header.implicitWidth, body.implicitWidth) + 32

    RowLayout {
        id: header
        visible: card.title !== ""
        x: 16
        y: 16
        width: card.width - 32
        ColumnLayout {
            spacing: 2
            Layout.fillWidth: true
            Label {
                text: card.title; font.pixelSize: 15; font.weight: Font.DemiBold; color: theme.text
                Layout.fillWidth: true; elide: Text.ElideRight
            }
            Label {
                visible: card.subtitle !== ""
                text: card.subtitle; color: theme.subtext; font.pixelSize: 12
                Layout.fillWidth: true; wrapMode: Text.WordWrap
            }
        }
        Row { id: extra; spacing: 12; Layout.alignment: Qt.AlignTop }
    }
    ColumnLayout {
        id: body
        x: 16
        y: header.visible ? header.y + header.height + 12 : 16
        width: card.width - 32
        height: Math.max(implicitHeight, card.height - y - 16)
        spacing: 10
    }
}
