// App settings: the tray, LAN serving and its key, the theme.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Dialog {
    id: dialog
    title: qsTr("Settings")
    modal: true
    anchors.centerIn: Overlay.overlay
    width: 520
    padding: 20
    footer: Item {
        implicitHeight: 66
        AccentButton {
            anchors.right: parent.right; anchors.rightMargin: 20; anchors.verticalCenter: parent.verticalCenter
            accent: false; text: qsTr("Close"); onClicked: dialog.close()
        }
    }
    background: Rectangle { radius: 10; color: theme.card; border.color: theme.cardBorder }
    header: Label { text: dialog.title; font.pixelSize: 18; font.weight: Font.DemiBold; color: theme.text; padding: 20; bottomPadding: 0 }

    ColumnLayout {
        anchors.fill: parent
        spacing: 14
        SettingSwitch {
            text: qsTr("Keep running in the tray when the window is closed")
            hint: app.trayAvailable ? "" : qsTr("This desktop has no system tray: closing the window quits.")
            checked: app.closeToTray
            onToggled: app.closeToTray = checked
        }
        SettingSwitch {
            objectName: "lanSwitch"
            text: qsTr("Serve on the LAN")
            hint: app.lanServing ? qsTr("Other PCs reach the engine at %1 with the office API key.").arg(app.lanAddress)
                                 : qsTr("Only this PC can use the engine. Turning this on makes an API key.")
            checked: app.lanServing
            onToggled: if (!app.setLanServing(checked)) checked = app.lanServing
        }
        AccentButton {
            visible: app.lanServing
            accent: false; iconName: "key"; text: qsTr("Make a new office key")
            onClicked: app.replaceOfficeKey()
        }
        RowLayout {
            Label { text: qsTr("Theme"); color: theme.text; Layout.fillWidth: true }
            Label { text: theme.dark ? qsTr("Dark (follows the system)") : qsTr("Light (follows the system)"); color: theme.subtext }
        }
        Label { text: qsTr("Niwa %1").arg(app.version); color: theme.subtext; font.pixelSize: 12 }
    }
}
