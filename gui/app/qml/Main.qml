// The main window: side navigation, the pages, shortcuts, and the dialogs.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtQuick.Window

ApplicationWindow {
    id: window
    width: 1200
    height: 780
    minimumWidth: 880
    minimumHeight: 560
    visible: true
    title: app.conversationTitle && pageName === "chat" ? app.conversationTitle + " — Niwa" : "Niwa"
    color: theme.window

    // chat, dashboard, engine or wizard
    property string pageName: app.needsSetup ? "wizard" : "chat"

    palette.window: theme.window
    palette.windowText: theme.text
    palette.base: theme.input
    palette.alternateBase: theme.card
    palette.text: theme.text
    palette.button: theme.card
    palette.buttonText: theme.text
    palette.highlight: theme.accent
    palette.highlightedText: theme.accentText
    palette.placeholderText: theme.subtext
    palette.mid: theme.cardBorder
    palette.midlight: theme.hover
    palette.dark: theme.accent
    palette.light: theme.card
    palette.shadow: theme.cardBorder
    palette.toolTipBase: theme.card
    palette.toolTipText: theme.text
    font.pixelSize: 14

    function showPage(name) { pageName = name }

    Connections {
        target: app
        function onRaiseRequested() {
            window.show()
            window.raise()
            window.requestActivate()
        }
        function onApiKeyCreated(key) { apiKeyDialog.show(key) }
        function onToast(message) { toast.show(message) }
    }

    onClosing: function(close) {
        if (app.trayAvailable && app.closeToTray) {
            close.accepted = false
            window.hide()
        }
    }

    Shortcut { sequence: "Ctrl+1"; onActivated: window.showPage("chat") }
    Shortcut { sequence: "Ctrl+2"; onActivated: window.showPage("dashboard") }
    Shortcut { sequence: "Ctrl+3"; onActivated: window.showPage("engine") }
    Shortcut { sequence: "Ctrl+,"; onActivated: settingsDialog.open() }
    Shortcut {
        sequence: "Ctrl+N"
        onActivated: { window.showPage("chat"); app.newConversation(); chatPage.focusInput() }
    }
    Shortcut { sequence: "Esc"; enabled: app.session.busy; onActivated: app.stop() }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        Rectangle {
            Layout.fillHeight: true
            Layout.preferredWidth: 212
            color: theme.sidebar
            ColumnLayout {
                anchors.fill: parent
                anchors.margins: 10
                spacing: 4
                RowLayout {
                    Layout.margins: 8
                    Layout.bottomMargin: 14
                    spacing: 10
                    Image { source: "qrc:/icons/niwa.svg"; sourceSize: Qt.size(28, 28) }
                    Label { text: "Niwa"; font.pixelSize: 18; font.weight: Font.DemiBold; color: theme.text }
                }
                NavButton {
                    text: qsTr("Chat"); iconName: "chat"; shortcutText: "Ctrl+1"
                    current: window.pageName === "chat"; onClicked: window.showPage("chat")
                }
                NavButton {
                    text: qsTr("Dashboard"); iconName: "dashboard"; shortcutText: "Ctrl+2"
                    current: window.pageName === "dashboard"; onClicked: window.showPage("dashboard")
                }
                NavButton {
                    text: qsTr("Engine"); iconName: "engine"; shortcutText: "Ctrl+3"
                    current: window.pageName === "engine" || window.pageName === "wizard"
                    onClicked: window.showPage("engine")
                }
                Item { Layout.fillHeight: true }
                EngineStatus { Layout.fillWidth: true; onClicked: window.showPage("engine") }
                NavButton {
                    text: qsTr("Settings"); iconName: "settings"; shortcutText: "Ctrl+,"
                    onClicked: settingsDialog.open()
                }
            }
        }

        StackLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            currentIndex: ["chat", "dashboard", "engine", "wizard"].indexOf(window.pageName)
            ChatPage { id: chatPage }
            DashboardPage {}
            EnginePage { onOpenWizard: window.showPage("wizard") }
            WizardPage { onDone: { app.setupFinished(); window.showPage("engine") } }
        }
    }

    SettingsDialog { id: settingsDialog; objectName: "settingsDialog" }
    ApiKeyDialog { id: apiKeyDialog }

    Toast { id: toast }
}
