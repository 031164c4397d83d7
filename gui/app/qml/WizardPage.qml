// First-run setup: SetupChecks' steps (WSL, distro, GPU, engine, model), each with its state,
// what was found, and the fix it offers.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ScrollView {
    id: page
    signal done()
    contentWidth: availableWidth
    readonly property var setup: app.setup

    function titleOf(id) {
        switch (id) {
        case "wsl": return qsTr("Windows Subsystem for Linux")
        case "distro": return qsTr("Linux distribution")
        case "gpu": return qsTr("GPU and driver")
        case "engine": return qsTr("Niwa engine")
        case "model": return qsTr("Model file")
        }
        return id
    }
    function stateText(state) {
        switch (state) {
        case "pending": return qsTr("Waiting")
        case "running": return qsTr("Checking…")
        case "ok": return qsTr("Ready")
        case "failed": return qsTr("Needs attention")
        case "skipped": return qsTr("Skipped")
        }
        return state
    }

    ColumnLayout {
        width: Math.min(page.availableWidth, 860)
        x: (page.availableWidth - width) / 2
        spacing: 16

        ColumnLayout {
            Layout.margins: 24
            Layout.bottomMargin: 0
            spacing: 4
            Label { text: qsTr("Set up Niwa"); font.pixelSize: 24; font.weight: Font.DemiBold; color: theme.text }
            Label {
                text: qsTr("Niwa checks what the engine needs on this PC and offers to fix what is missing.")
                color: theme.subtext; wrapMode: Text.Wrap; Layout.fillWidth: true
            }
        }

        Card {
            Layout.fillWidth: true
            Layout.leftMargin: 24
            Layout.rightMargin: 24
            Repeater {
                model: page.setup.steps
                ColumnLayout {
                    Layout.fillWidth: true
                    spacing: 6
                    RowLayout {
                        Layout.fillWidth: true
                        spacing: 12
                        Item {
                            width: 24; height: 24
                            Icon {
                                anchors.centerIn: parent
                                visible: modelData.state !== "running"
                                glyph: modelData.state === "ok" ? "check" : modelData.state === "failed" ? "error" : modelData.state === "skipped" ? "skipped" : "pending"
                                sourceSize: Qt.size(22, 22)
                                color: modelData.state === "ok" ? theme.success : modelData.state === "failed" ? theme.danger : theme.subtext
                            }
                            BusyIndicator { anchors.fill: parent; running: modelData.state === "running"; visible: running }
                        }
                        ColumnLayout {
                            Layout.fillWidth: true
                            spacing: 2
                            Label { text: page.titleOf(modelData.id); color: theme.text; font.pixelSize: 15; font.weight: Font.DemiBold; Layout.fillWidth: true }
                            Label {
                                text: modelData.detail || page.stateText(modelData.state)
                                color: modelData.state === "failed" ? theme.danger : theme.subtext
                                wrapMode: Text.Wrap; Layout.fillWidth: true
                            }
                            Label {
                                visible: modelData.fix !== "" && modelData.state === "failed"
                                text: modelData.fix
                                color: theme.text; wrapMode: Text.Wrap; Layout.fillWidth: true
                            }
                        }
                        AccentButton {
                            visible: modelData.fix !== "" && modelData.state === "failed"
                            enabled: !page.setup.running
                            iconName: "wizard"
                            text: qsTr("Fix")
                            Layout.alignment: Qt.AlignTop
                            onClicked: page.setup.applyFix(modelData.id)
                        }
                    }
                    Rectangle { visible: index < page.setup.steps.length - 1; Layout.fillWidth: true; Layout.leftMargin: 36; height: 1; color: theme.cardBorder }
                }
            }
            ProgressBar {
                visible: page.setup.progress >= 0
                Layout.fillWidth: true
                value: Math.max(0, page.setup.progress)
            }
        }

        RowLayout {
            Layout.leftMargin: 24
            Layout.rightMargin: 24
            Layout.bottomMargin: 24
            Layout.fillWidth: true
            Label {
                text: page.setup.running ? qsTr("Working…") : page.setup.allOk ? qsTr("Everything is ready.") : qsTr("Fix the steps marked above, or continue and set the engine up by hand.")
                color: page.setup.allOk ? theme.success : theme.subtext
                wrapMode: Text.Wrap; Layout.fillWidth: true
            }
            AccentButton { accent: false; iconName: "regenerate"; text: qsTr("Check again"); enabled: !page.setup.running; onClicked: page.setup.runAll() }
            AccentButton { accent: page.setup.allOk; text: qsTr("Continue"); onClicked: page.done() }
        }
    }
}
