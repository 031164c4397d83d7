// One line of the capacity estimate.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

RowLayout {
    property string label
    property string value
    Layout.fillWidth: true
    Label { text: label; color: theme.subtext; Layout.fillWidth: true }
    Label { text: value; color: theme.text; font.family: monoFont }
}
