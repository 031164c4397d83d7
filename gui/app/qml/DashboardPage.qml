// The dashboard: VRAM per GPU (engine / others / free), the KV pool, throughput over the last
// five minutes, and the request queue.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ScrollView {
    id: page
    contentWidth: availableWidth
    readonly property var stats: app.stats

    function gib(bytes) { return (bytes / 1073741824).toFixed(1) }

    ColumnLayout {
        width: page.availableWidth
        spacing: 16

        RowLayout {
            Layout.fillWidth: true
            Layout.margins: 24
            Layout.bottomMargin: 0
            ColumnLayout {
                spacing: 2
                Layout.fillWidth: true
                Label { text: qsTr("Dashboard"); font.pixelSize: 24; font.weight: Font.DemiBold; color: theme.text; Layout.fillWidth: true }
                Label {
                    text: stats.connected
                          ? qsTr("%1 on %2 · up %3").arg(stats.model).arg(stats.backend.toUpperCase()).arg(page.uptime(stats.uptimeSeconds))
                          : qsTr("Not connected: start the engine to see live numbers.")
                    color: theme.subtext
                    Layout.fillWidth: true
                }
            }
        }

        GridLayout {
            Layout.fillWidth: true
            Layout.leftMargin: 24
            Layout.rightMargin: 24
            columns: page.availableWidth > 900 ? 4 : 2
            columnSpacing: 16
            rowSpacing: 16
            StatTile { title: qsTr("Running"); value: stats.running; iconName: "play" }
            StatTile { title: qsTr("Waiting"); value: stats.waiting; iconName: "pending" }
            StatTile { title: qsTr("Preemptions"); value: stats.preemptions; iconName: "regenerate" }
            StatTile {
                title: qsTr("Generation"); iconName: "send"
                value: qsTr("%1 tok/s").arg(stats.generationTokensPerSecond.toFixed(1))
            }
        }

        RowLayout {
            Layout.fillWidth: true
            Layout.leftMargin: 24
            Layout.rightMargin: 24
            spacing: 16

            Card {
                title: qsTr("Throughput")
                subtitle: qsTr("Tokens per second, last 5 minutes")
                Layout.fillWidth: true
                Layout.preferredHeight: 300
                Layout.alignment: Qt.AlignTop
                TpsChart {
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    stats: page.stats
                }
            }

            Card {
                title: qsTr("KV cache")
                subtitle: qsTr("%L1 of %L2 tokens").arg(stats.kvTokensUsed).arg(stats.kvTokensCapacity)
                Layout.preferredWidth: 260
                Layout.preferredHeight: 300
                Layout.alignment: Qt.AlignTop
                Gauge {
                    Layout.alignment: Qt.AlignHCenter
                    Layout.preferredWidth: 170
                    Layout.preferredHeight: 170
                    value: stats.kvUsage
                }
                Label {
                    Layout.alignment: Qt.AlignHCenter
                    text: qsTr("%1 blocks of %2 · %3").arg(stats.kvBlocksUsed).arg(stats.kvBlocksTotal).arg(stats.kvFormat || "—")
                    color: theme.subtext; font.pixelSize: 12
                }
                Label {
                    Layout.alignment: Qt.AlignHCenter
                    text: qsTr("State slots %1 / %2").arg(stats.slotsUsed).arg(stats.slotsTotal)
                    color: theme.subtext; font.pixelSize: 12
                }
            }
        }

        Card {
            title: qsTr("GPU memory")
            subtitle: gpuRepeater.count === 0 ? qsTr("No GPU in use (CPU backend, or the engine is stopped).") : ""
            Layout.fillWidth: true
            Layout.leftMargin: 24
            Layout.rightMargin: 24
            Layout.bottomMargin: 24
            headerExtra: [
                Legend { color: theme.accent; text: qsTr("Engine") },
                Legend { color: theme.other; text: qsTr("Other programs") },
                Legend { color: theme.track; text: qsTr("Free") }
            ]
            Repeater {
                id: gpuRepeater
                model: page.stats
                ColumnLayout {
                    Layout.fillWidth: true
                    spacing: 4
                    readonly property real total: Math.max(1, model.vramTotalBytes)
                    readonly property real engine: Math.min(model.vramEngineBytes, model.vramUsedBytes)
                    readonly property real others: Math.max(0, model.vramUsedBytes - engine)
                    RowLayout {
                        Label { text: "GPU " + model.gpuIndex + (model.name ? " · " + model.name : ""); color: theme.text; Layout.fillWidth: true }
                        Label {
                            text: qsTr("%1 GiB engine · %2 GiB others · %3 GiB free").arg(page.gib(engine)).arg(page.gib(others))
                                  .arg(page.gib(Math.max(0, model.vramTotalBytes - model.vramUsedBytes)))
                            color: theme.subtext; font.pixelSize: 12
                        }
                    }
                    Rectangle {
                        Layout.fillWidth: true
                        height: 14; radius: 7; color: theme.track; clip: true
                        Row {
                            anchors.fill: parent
                            Rectangle { width: parent.width * engine / total; height: parent.height; color: theme.accent }
                            Rectangle { width: parent.width * others / total; height: parent.height; color: theme.other }
                        }
                    }
                }
            }
        }
    }

    function uptime(seconds) {
        const h = Math.floor(seconds / 3600), m = Math.floor(seconds % 3600 / 60), s = Math.floor(seconds % 60)
        return h > 0 ? qsTr("%1 h %2 min").arg(h).arg(m) : m > 0 ? qsTr("%1 min %2 s").arg(m).arg(s) : qsTr("%1 s").arg(s)
    }
}
