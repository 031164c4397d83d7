// One message: Markdown prose and highlighted code blocks, collapsible reasoning, tool calls,
// image thumbnails, and its actions (copy, edit, regenerate).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Item {
    id: message
    readonly property bool isUser: model.role === "user"
    property bool editing: false
    property bool showReasoning: model.streaming && model.content === ""
    // A user message's actions sit beside its bubble; a reply's under it.
    implicitHeight: bubble.implicitHeight + (isUser ? 0 : actions.height + 4)

    HoverHandler { id: hover }

    Rectangle {
        id: bubble
        x: message.isUser ? message.width - width - 24 : 24
        width: message.isUser ? Math.min(body.implicitWidth + 36, message.width * 0.72) : message.width - 48
        implicitHeight: body.implicitHeight + (message.isUser ? 20 : 4)
        radius: 12
        color: message.isUser ? theme.userBubble : "transparent"

        ColumnLayout {
            id: body
            x: message.isUser ? 14 : 0
            y: message.isUser ? 10 : 2
            width: bubble.width - (message.isUser ? 28 : 0)
            spacing: 8

            // Reasoning
            ColumnLayout {
                visible: model.reasoning !== ""
                Layout.fillWidth: true
                spacing: 4
                ItemDelegate {
                    id: reasoningHeader
                    padding: 4
                    leftPadding: 6
                    background: Rectangle { radius: 6; color: reasoningHeader.hovered ? theme.hover : "transparent" }
                    onClicked: message.showReasoning = !message.showReasoning
                    contentItem: RowLayout {
                        spacing: 6
                        Icon { glyph: "chevron"; sourceSize: Qt.size(14, 14); color: theme.subtext; rotation: message.showReasoning ? 90 : 0 }
                        Icon { glyph: "think"; sourceSize: Qt.size(14, 14); color: theme.subtext }
                        Label {
                            text: model.streaming && model.content === "" ? qsTr("Thinking…") : qsTr("Thought process")
                            color: theme.subtext; font.pixelSize: 13
                        }
                    }
                }
                Label {
                    visible: message.showReasoning
                    Layout.fillWidth: true
                    leftPadding: 12
                    text: model.reasoning
                    wrapMode: Text.Wrap
                    color: theme.subtext
                    font.pixelSize: 13
                    Rectangle { width: 2; height: parent.height; color: theme.cardBorder }
                }
            }

            // Images
            Flow {
                visible: model.images.length > 0
                Layout.fillWidth: true
                spacing: 8
                Repeater {
                    model: images
                    Rectangle {
                        width: 120; height: 90; radius: 8; color: theme.track; clip: true
                        Image { anchors.fill: parent; source: modelData; sourceSize: Qt.size(240, 180); fillMode: Image.PreserveAspectCrop }
                    }
                }
            }

            // Content
            Repeater {
                model: message.editing ? [] : blocks
                delegate: Loader {
                    Layout.fillWidth: true
                    Layout.preferredWidth: message.isUser ? implicitWidth : body.width
                    sourceComponent: modelData.kind === "code" ? codeBlock : proseBlock
                    property var block: modelData
                }
            }

            // Tool calls
            Repeater {
                model: toolCalls
                Rectangle {
                    Layout.fillWidth: true
                    implicitHeight: toolColumn.implicitHeight + 16
                    radius: 8
                    color: theme.card
                    border.color: theme.cardBorder
                    ColumnLayout {
                        id: toolColumn
                        x: 10; y: 8; width: parent.width - 20
                        spacing: 4
                        RowLayout {
                            spacing: 6
                            Icon { glyph: "tool"; sourceSize: Qt.size(14, 14); color: theme.accent }
                            Label { text: qsTr("Tool call: %1").arg(modelData.name); color: theme.text; font.weight: Font.DemiBold; font.pixelSize: 13 }
                        }
                        Label {
                            Layout.fillWidth: true
                            text: modelData.arguments; wrapMode: Text.WrapAnywhere
                            font.family: monoFont; font.pixelSize: 12; color: theme.subtext
                        }
                    }
                }
            }

            // Editing a user message
            ColumnLayout {
                visible: message.editing
                Layout.fillWidth: true
                TextArea {
                    id: editor
                    Layout.fillWidth: true
                    Layout.preferredWidth: message.width * 0.6
                    wrapMode: TextArea.Wrap
                    color: theme.text
                    background: Rectangle { radius: 6; color: theme.input; border.color: theme.accent }
                }
                RowLayout {
                    Layout.alignment: Qt.AlignRight
                    AccentButton { accent: false; text: qsTr("Cancel"); onClicked: message.editing = false }
                    AccentButton {
                        text: qsTr("Send")
                        onClicked: { if (app.editAndResend(model.messageId, editor.text)) message.editing = false }
                    }
                }
            }

            Label {
                visible: model.streaming && model.content === "" && model.reasoning === ""
                text: qsTr("Waiting for the engine…")
                color: theme.subtext
            }
        }
    }

    RowLayout {
        id: actions
        y: message.isUser ? bubble.y + (bubble.height - height) / 2 : bubble.y + bubble.height + 2
        x: message.isUser ? bubble.x - width - 6 : 20
        height: 26
        spacing: 2
        visible: !model.streaming && !message.editing
        readonly property real buttonOpacity: hover.hovered || (model.isLast && !message.isUser) ? 1 : 0
        IconButton { iconName: "copy"; tip: qsTr("Copy"); opacity: actions.buttonOpacity; onClicked: app.copyText(model.content) }
        IconButton {
            opacity: actions.buttonOpacity
            visible: message.isUser
            iconName: "edit"; tip: qsTr("Edit and send again")
            onClicked: { editor.text = model.content; message.editing = true; editor.forceActiveFocus() }
        }
        IconButton {
            opacity: actions.buttonOpacity
            visible: !message.isUser && model.isLast
            iconName: "regenerate"; tip: qsTr("Regenerate")
            onClicked: app.regenerate()
        }
        Label {
            visible: !message.isUser && model.tokensPerSecond > 0
            text: qsTr("%1 tokens · %2 tok/s").arg(model.completionTokens).arg(model.tokensPerSecond.toFixed(1))
            color: theme.subtext; font.pixelSize: 12; leftPadding: 6
        }
        Label {
            visible: model.finishReason === "cancelled" || model.finishReason === "length" || model.finishReason === "error"
            text: model.finishReason === "cancelled" ? qsTr("Stopped") : model.finishReason === "length" ? qsTr("Cut at the length limit") : qsTr("Failed")
            color: theme.warning; font.pixelSize: 12; leftPadding: 6
        }
    }

    Component {
        id: proseBlock
        TextEdit {
            objectName: "messageText"
            text: block.text
            textFormat: TextEdit.MarkdownText
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.Wrap
            color: theme.text
            selectionColor: theme.accent
            selectedTextColor: theme.accentText
            font.pixelSize: 14
            onLinkActivated: function(link) { Qt.openUrlExternally(link) }
        }
    }

    Component {
        id: codeBlock
        Rectangle {
            implicitHeight: codeColumn.implicitHeight
            implicitWidth: Math.max(codeText.implicitWidth + 24, 240)
            radius: 8
            color: theme.codeBackground
            border.color: theme.cardBorder
            ColumnLayout {
                id: codeColumn
                width: parent.width
                spacing: 0
                RowLayout {
                    Layout.fillWidth: true
                    Layout.leftMargin: 12
                    Layout.rightMargin: 4
                    Layout.topMargin: 2
                    Label { text: block.language || qsTr("code"); color: theme.subtext; font.pixelSize: 12; Layout.fillWidth: true }
                    IconButton {
                        iconName: "copy"; tip: qsTr("Copy code")
                        implicitWidth: 26; implicitHeight: 26
                        onClicked: { app.copyText(block.text); copied.visible = true; copiedTimer.restart() }
                    }
                    Label { id: copied; visible: false; text: qsTr("Copied"); color: theme.success; font.pixelSize: 12; rightPadding: 6 }
                    Timer { id: copiedTimer; interval: 1500; onTriggered: copied.visible = false }
                }
                Rectangle { Layout.fillWidth: true; height: 1; color: theme.cardBorder }
                ScrollView {
                    Layout.fillWidth: true
                    Layout.preferredHeight: codeText.implicitHeight
                    ScrollBar.vertical.policy: ScrollBar.AlwaysOff
                    TextEdit {
                        id: codeText
                        padding: 10
                        leftPadding: 12
                        text: block.html
                        textFormat: TextEdit.RichText
                        readOnly: true
                        selectByMouse: true
                        color: theme.text
                        font.family: monoFont
                        font.pixelSize: 13
                    }
                }
            }
        }
    }
}
