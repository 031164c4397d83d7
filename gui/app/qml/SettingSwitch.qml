// A switch with its explanation under it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ColumnLayout {
    property alias text: label.text
    property string hint
    property alias checked: toggle.checked
    signal toggled()
    Layout.fillWidth: true
    spacing: 2
    RowLayout {
        Layout.fillWidth: true
        Label { id: label; color: theme.text; Layout.fillWidth: true; wrapMode: Text.Wrap }
        Switch { id: toggle; onToggled: parent.parent.toggled() }
    }
    Label { visible: hint !== ""; text: hint; color: theme.subtext; font.pixelSize: 12; wrapMode: Text.Wrap; Layout.fillWidth: true }
}
