// The engine page: start/stop with load progress and what went wrong (with the fix), the
// knobs with validation and a live estimate of what they allow, and the log tail.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtQuick.Dialogs

ScrollView {
    id: page
    signal openWizard()
    contentWidth: availableWidth
    readonly property var form: app.form
    readonly property var errors: form.errors
    readonly property var est: form.estimate
    readonly property bool running: app.engineState === "ready" || app.engineState === "starting"

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
                Label { text: qsTr("Engine"); font.pixelSize: 24; font.weight: Font.DemiBold; color: theme.text; Layout.fillWidth: true }
                Label { text: qsTr("niwa-engine runs the model and serves it at %1").arg("http://127.0.0.1:" + form.port + "/v1"); color: theme.subtext; Layout.fillWidth: true; elide: Text.ElideRight }
            }
            AccentButton { accent: false; iconName: "wizard"; text: qsTr("Setup checks"); onClicked: page.openWizard() }
        }

        // State
        Card {
            Layout.fillWidth: true
            Layout.leftMargin: 24
            Layout.rightMargin: 24
            RowLayout {
                Layout.fillWidth: true
                spacing: 14
                Icon {
                    glyph: app.engineState === "ready" ? "check" : app.engineState === "failed" ? "error" : app.engineState === "stopped" ? "skipped" : "pending"
                    sourceSize: Qt.size(28, 28)
                    color: app.engineState === "ready" ? theme.success : app.engineState === "failed" ? theme.danger : theme.subtext
                }
                ColumnLayout {
                    Layout.fillWidth: true
                    spacing: 2
                    Label {
                        text: app.engineState === "ready" ? qsTr("Running — %1").arg(app.modelName || qsTr("model loaded"))
                            : app.engineState === "starting" ? qsTr("Loading the model… %1%").arg(Math.round(app.engineProgress * 100))
                            : app.engineState === "stopping" ? qsTr("Stopping…")
                            : app.engineState === "failed" ? qsTr("The engine stopped with an error")
                            : qsTr("Stopped")
                        font.pixelSize: 16; font.weight: Font.DemiBold; color: theme.text
                        Layout.fillWidth: true; wrapMode: Text.Wrap
                    }
                    Label {
                        visible: app.engineState === "ready"
                        text: app.lanServing ? qsTr("Serving this PC and the LAN at %1").arg(app.lanAddress) : qsTr("Serving this PC only. Turn on LAN serving in Settings or the tray menu.")
                        color: theme.subtext
                        Layout.fillWidth: true; wrapMode: Text.Wrap
                    }
                }
                AccentButton {
                    objectName: "startButton"
                    visible: !page.running
                    enabled: app.engineState !== "stopping" && form.valid
                    iconName: "play"; text: qsTr("Start")
                    onClicked: app.startEngine()
                }
                AccentButton {
                    visible: page.running
                    accent: false
                    iconName: "stop"; text: qsTr("Stop")
                    onClicked: app.stopEngine()
                }
            }
            ProgressBar {
                visible: app.engineState === "starting"
                Layout.fillWidth: true
                value: app.engineProgress
                indeterminate: app.engineProgress <= 0
            }
            Rectangle {
                visible: app.engineState === "failed"
                Layout.fillWidth: true
                implicitHeight: failColumn.implicitHeight + 20
                radius: 6
                color: Qt.rgba(theme.danger.r, theme.danger.g, theme.danger.b, 0.1)
                border.color: theme.danger
                ColumnLayout {
                    id: failColumn
                    x: 12; y: 10; width: parent.width - 24
                    spacing: 6
                    Label { text: app.engineFix; color: theme.text; font.weight: Font.DemiBold; wrapMode: Text.Wrap; Layout.fillWidth: true }
                    Label { text: app.engineReason; color: theme.subtext; wrapMode: Text.Wrap; Layout.fillWidth: true; font.family: monoFont; font.pixelSize: 12 }
                }
            }
        }

        RowLayout {
            Layout.fillWidth: true
            Layout.leftMargin: 24
            Layout.rightMargin: 24
            Layout.bottomMargin: 24
            spacing: 16

            // Knobs
            Card {
                title: qsTr("Settings")
                subtitle: qsTr("Changes apply when the engine starts again.")
                Layout.fillWidth: true
                Layout.alignment: Qt.AlignTop
                GridLayout {
                    columns: 2
                    columnSpacing: 14
                    rowSpacing: 4
                    Layout.fillWidth: true

                    FormLabel { text: qsTr("Model") }
                    PathField {
                        objectName: "modelField"
                        text: form.modelPath; error: errors.modelPath || ""
                        onEdited: function(t) { form.modelPath = t }
                        filter: qsTr("GGUF models (*.gguf)")
                    }
                    FormLabel { text: qsTr("Vision projector") }
                    PathField {
                        text: form.mmprojPath; error: errors.mmprojPath || ""
                        placeholder: qsTr("Optional: for images")
                        onEdited: function(t) { form.mmprojPath = t }
                        filter: qsTr("GGUF models (*.gguf)")
                    }
                    FormLabel { text: qsTr("Backend") }
                    FieldBox {
                        error: errors.backend || ""
                        ComboBox {
                            id: backendBox
                            Layout.preferredWidth: 220
                            model: [qsTr("Automatic"), "CUDA (NVIDIA)", "CPU"]
                            readonly property var values: ["", "cuda", "cpu"]
                            currentIndex: Math.max(0, values.indexOf(form.backend))
                            onActivated: function(i) { form.backend = values[i] }
                        }
                    }
                    FormLabel { text: qsTr("Port") }
                    FieldBox {
                        error: errors.port || ""
                        SpinBox { from: 1; to: 65535; editable: true; value: form.port; onValueModified: form.port = value; textFromValue: function(v) { return String(v) } }
                    }
                    FormLabel { text: qsTr("Memory share") }
                    FieldBox {
                        error: errors.memFraction || ""
                        hint: qsTr("Of each GPU's memory the engine may take")
                        RowLayout {
                            Slider { from: 0.1; to: 0.99; stepSize: 0.01; value: form.memFraction; onMoved: form.memFraction = value; Layout.preferredWidth: 220 }
                            Label { text: Math.round(form.memFraction * 100) + "%"; color: theme.text }
                        }
                    }
                    FormLabel { text: qsTr("VRAM limit (GiB)") }
                    FieldBox {
                        error: errors.vramLimitGiB || ""
                        hint: qsTr("0: the whole card. Set 12 to act like a 12 GB card.")
                        SpinBox { from: 0; to: 4096; editable: true; value: form.vramLimitGiB; onValueModified: form.vramLimitGiB = value }
                    }
                    FormLabel { text: qsTr("Max sequences") }
                    FieldBox {
                        error: errors.maxSeqs || ""
                        hint: qsTr("Requests served at the same time")
                        SpinBox { from: 1; to: 1024; editable: true; value: form.maxSeqs; onValueModified: form.maxSeqs = value }
                    }
                    FormLabel { text: qsTr("Context length") }
                    FieldBox {
                        error: errors.contextLength || ""
                        hint: qsTr("Tokens per conversation")
                        ComboBox {
                            Layout.preferredWidth: 220
                            editable: true
                            model: ["4096", "8192", "16384", "32768", "65536", "131072", "262144"]
                            editText: String(form.contextLength)
                            onAccepted: form.contextLength = parseInt(editText) || 0
                            onActivated: function(i) { form.contextLength = parseInt(model[i]) }
                            validator: IntValidator { bottom: 1; top: 1048576 }
                        }
                    }
                    FormLabel { text: qsTr("KV format") }
                    FieldBox {
                        error: errors.kvFormat || ""
                        hint: qsTr("k3v2 is the default; k8v8, k4v4 and k3v2 run as f16 until the engine quantizes the cache")
                        ComboBox {
                            Layout.preferredWidth: 220
                            model: form.kvFormats
                            currentIndex: Math.max(0, form.kvFormats.indexOf(form.kvFormat))
                            onActivated: function(i) { form.kvFormat = form.kvFormats[i] }
                        }
                    }
                    FormLabel { text: qsTr("WSL distro"); visible: form.usesWsl }
                    FieldBox {
                        visible: form.usesWsl
                        error: errors.distro || ""
                        hint: qsTr("Empty: the default distro")
                        TextField { text: form.distro; onTextEdited: form.distro = text; Layout.preferredWidth: 220 }
                    }
                }
                RowLayout {
                    Layout.alignment: Qt.AlignRight
                    spacing: 8
                    AccentButton { accent: false; text: qsTr("Revert"); enabled: form.dirty; onClicked: form.revert() }
                    AccentButton {
                        text: page.running ? qsTr("Apply and restart") : qsTr("Apply")
                        enabled: form.dirty && form.valid
                        onClicked: app.applyAndRestart()
                    }
                }
            }

            ColumnLayout {
                Layout.preferredWidth: 380
                Layout.fillHeight: true
                Layout.alignment: Qt.AlignTop
                spacing: 16
                // Estimate
                Card {
                    title: qsTr("What fits")
                    subtitle: form.backend === "cpu" ? qsTr("The CPU backend keeps the cache in the PC's memory.")
                            : est.known ? qsTr("Estimated from %n GPU(s) and the model's memory per token", "", est.devices)
                                        : qsTr("GPU memory is not known yet: start the engine once, or set a VRAM limit.")
                    Layout.fillWidth: true
                    Label {
                        visible: est.known
                        text: est.fits ? qsTr("%1 users × %2 tokens").arg(est.maxSeqs).arg(Number(est.contextLength).toLocaleString(Qt.locale(), "f", 0))
                                       : qsTr("%1 users × %2 tokens").arg(est.users).arg(Number(est.contextLength).toLocaleString(Qt.locale(), "f", 0))
                        font.pixelSize: 22; font.weight: Font.DemiBold
                        color: est.fits ? theme.success : theme.warning
                        wrapMode: Text.Wrap; Layout.fillWidth: true
                    }
                    Label {
                        visible: est.known && !est.fits
                        text: est.context > 0 ? qsTr("Not all %1 sequences fit at full context: %1 users get %2 tokens each.").arg(est.maxSeqs).arg(est.context)
                                              : qsTr("The model does not fit in this memory. Raise the memory share or the VRAM limit.")
                        color: theme.text; wrapMode: Text.Wrap; Layout.fillWidth: true
                    }
                    Rectangle { Layout.fillWidth: true; height: 1; color: theme.cardBorder }
                    EstimateRow { label: qsTr("KV per token"); value: (est.kvBytesPerToken / 1024).toFixed(1) + " KiB" }
                    EstimateRow { label: qsTr("State per user"); value: (est.stateBytes / 1048576).toFixed(0) + " MiB" }
                    EstimateRow { label: qsTr("One user at full context"); value: page.gib(est.bytesPerUser) + " GiB" }
                    EstimateRow { label: qsTr("Weights and workspace"); value: page.gib(est.reservedBytes) + " GiB" }
                    EstimateRow { label: qsTr("Needed in all"); value: page.gib(est.neededBytes) + " GiB" }
                    EstimateRow { visible: est.known; label: qsTr("Available to the engine"); value: page.gib(est.budgetBytes) + " GiB" }
                }
                // Log
                Card {
                    title: qsTr("Log")
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    headerExtra: [ IconButton { iconName: "copy"; tip: qsTr("Copy the log"); onClicked: app.copyText(app.engineLog.join("\n")) } ]
                    Rectangle {
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        Layout.minimumHeight: 200
                        radius: 6
                        color: theme.codeBackground
                        border.color: theme.cardBorder
                        ListView {
                            id: logView
                            anchors.fill: parent
                            anchors.margins: 8
                            clip: true
                            model: app.engineLog
                            onCountChanged: positionViewAtEnd()
                            ScrollBar.vertical: ScrollBar {}
                            delegate: Text {
                                width: logView.width
                                text: modelData
                                color: /error|failed|fatal/i.test(modelData) ? theme.danger : /warn/i.test(modelData) ? theme.warning : theme.text
                                font.family: monoFont
                                font.pixelSize: 12
                                wrapMode: Text.WrapAnywhere
                            }
                            Label { anchors.centerIn: parent; visible: logView.count === 0; text: qsTr("The engine's output appears here."); color: theme.subtext }
                        }
                    }
                }
            }
        }

    }
}
