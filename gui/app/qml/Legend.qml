// A colour swatch and its meaning.
import QtQuick
import QtQuick.Controls

Row {
    property color color
    property string text
    spacing: 6
    Rectangle { width: 10; height: 10; radius: 2; color: parent.color; anchors.verticalCenter: parent.verticalCenter }
    Label { text: parent.text; color: theme.subtext; font.pixelSize: 12 }
}
