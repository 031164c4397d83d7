// A file path: typed, or picked with the Browse button.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtQuick.Dialogs

FieldBox {
    id: box
    property alias text: field.text
    property string placeholder
    property string filter
    signal edited(string text)
    TextField {
        id: field
        Layout.fillWidth: true
        Layout.minimumWidth: 240
        placeholderText: box.placeholder
        onTextEdited: box.edited(text)
    }
    AccentButton { accent: false; iconName: "folder"; text: qsTr("Browse…"); onClicked: dialog.open() }
    FileDialog {
        id: dialog
        nameFilters: [box.filter, qsTr("All files (*)")]
        onAccepted: box.edited(app.form.pathFromUrl(selectedFile))
    }
}
