// A form control with its hint or its error below it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ColumnLayout {
    property string error
    property string hint
    default property alias content: holder.data
    Layout.fillWidth: true
    Layout.bottomMargin: 6
    spacing: 2
    RowLayout { id: holder }
    Label {
        visible: error !== "" || hint !== ""
        text: error !== "" ? error : hint
        color: error !== "" ? theme.danger : theme.subtext
        font.pixelSize: 12
        wrapMode: Text.Wrap
        Layout.fillWidth: true
    }
}
