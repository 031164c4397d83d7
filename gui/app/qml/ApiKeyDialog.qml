// Shows a new API key once, with a copy button: Niwa keeps it but never shows it again.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Dialog {
    id: dialog
    property string key
    function show(k) { key = k; copied.visible = false; open() }
    title: qsTr("Your office API key")
    modal: true
    anchors.centerIn: Overlay.overlay
    width: 560
    padding: 20
    footer: Item {
        implicitHeight: 66
        AccentButton {
            anchors.right: parent.right; anchors.rightMargin: 20; anchors.verticalCenter: parent.verticalCenter
            text: qsTr("Done"); onClicked: dialog.close()
        }
    }
    closePolicy: Popup.NoAutoClose
    background: Rectangle { radius: 10; color: theme.card; border.color: theme.cardBorder }
    header: Label { text: dialog.title; font.pixelSize: 18; font.weight: Font.DemiBold; color: theme.text; padding: 20; bottomPadding: 0 }
    onClosed: key = ""

    ColumnLayout {
        anchors.fill: parent
        spacing: 12
        Label {
            text: qsTr("Give this key to the people and programs that use Niwa from other PCs. It is shown only now: copy it before you close this window.")
            wrapMode: Text.Wrap; color: theme.text; Layout.fillWidth: true
        }
        RowLayout {
            Layout.fillWidth: true
            TextField {
                objectName: "apiKeyField"
                text: dialog.key; readOnly: true; selectByMouse: true
                font.family: monoFont; Layout.fillWidth: true
            }
            AccentButton { iconName: "copy"; text: qsTr("Copy"); onClicked: { app.copyText(dialog.key); copied.visible = true } }
        }
        Label { id: copied; visible: false; text: qsTr("Copied to the clipboard."); color: theme.success }
        Label {
            text: qsTr("Clients use base URL %1 and send the key as a Bearer token.").arg(app.lanAddress)
            color: theme.subtext; wrapMode: Text.Wrap; Layout.fillWidth: true; font.pixelSize: 12
        }
    }
}
