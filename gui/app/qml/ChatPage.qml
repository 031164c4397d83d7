// The chat page: conversations with search on the left, the conversation and the composer on
// the right. Images can be dropped anywhere on the page, pasted, or picked.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtQuick.Dialogs

Item {
    id: page
    function focusInput() { input.forceActiveFocus() }
    function sendNow() {
        if (app.send(input.text)) input.text = ""
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        // Conversation list
        Rectangle {
            Layout.fillHeight: true
            Layout.preferredWidth: 264
            color: theme.window
            border.color: theme.cardBorder
            border.width: 0
            Rectangle { anchors.right: parent.right; width: 1; height: parent.height; color: theme.cardBorder }
            ColumnLayout {
                anchors.fill: parent
                anchors.margins: 12
                anchors.rightMargin: 13
                spacing: 10
                RowLayout {
                    spacing: 8
                    TextField {
                        id: search
                        objectName: "conversationSearch"
                        Layout.fillWidth: true
                        placeholderText: qsTr("Search chats")
                        leftPadding: 32
                        onTextChanged: app.conversations.search = text
                        background: Rectangle { radius: 6; color: theme.input; border.color: search.activeFocus ? theme.accent : theme.cardBorder }
                        Icon { glyph: "search"; sourceSize: Qt.size(16, 16); color: theme.subtext; x: 10; anchors.verticalCenter: parent.verticalCenter }
                    }
                    IconButton {
                        iconName: "plus"; tip: qsTr("New chat (Ctrl+N)"); tint: theme.text
                        onClicked: { app.newConversation(); page.focusInput() }
                    }
                }
                ListView {
                    id: conversationList
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    clip: true
                    spacing: 2
                    model: app.conversations
                    ScrollBar.vertical: ScrollBar {}
                    delegate: ItemDelegate {
                        id: row
                        width: conversationList.width
                        implicitHeight: snippetLabel.visible ? 58 : 40
                        readonly property bool current: model.conversationId === app.conversationId
                        onClicked: app.openConversation(model.conversationId)
                        background: Rectangle { radius: 6; color: row.current ? theme.selected : row.hovered ? theme.hover : "transparent" }
                        contentItem: ColumnLayout {
                            spacing: 2
                            RowLayout {
                                Label {
                                    text: model.title || qsTr("New chat")
                                    color: theme.text; elide: Text.ElideRight; Layout.fillWidth: true
                                    font.weight: row.current ? Font.DemiBold : Font.Normal
                                }
                                IconButton {
                                    visible: row.hovered
                                    iconName: "trash"; tip: qsTr("Delete chat")
                                    implicitWidth: 24; implicitHeight: 24
                                    onClicked: app.deleteConversation(model.conversationId)
                                }
                            }
                            Label {
                                id: snippetLabel
                                visible: model.snippet !== ""
                                text: model.snippet; color: theme.subtext; font.pixelSize: 12
                                elide: Text.ElideRight; Layout.fillWidth: true
                            }
                        }
                    }
                    Label {
                        anchors.centerIn: parent
                        visible: conversationList.count === 0
                        text: search.text ? qsTr("No chat matches") : qsTr("No chats yet")
                        color: theme.subtext
                    }
                }
            }
        }

        // The conversation
        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            RowLayout {
                Layout.fillWidth: true
                Layout.margins: 16
                Layout.bottomMargin: 8
                Label {
                    text: app.conversationTitle || qsTr("New chat")
                    font.pixelSize: 18; font.weight: Font.DemiBold; color: theme.text
                    elide: Text.ElideRight; Layout.fillWidth: true
                }
                Label {
                    visible: app.session.busy
                    text: qsTr("%1 tok/s").arg(app.session.tokensPerSecond.toFixed(1))
                    color: theme.subtext
                }
                Label {
                    visible: app.modelName !== ""
                    text: app.modelName
                    color: theme.subtext; font.pixelSize: 12
                    leftPadding: 8; rightPadding: 8; topPadding: 3; bottomPadding: 3
                    background: Rectangle { radius: 10; color: theme.track }
                }
            }

            ListView {
                id: messageList
                objectName: "messageList"
                Layout.fillWidth: true
                Layout.fillHeight: true
                clip: true
                spacing: 10
                topMargin: 8
                bottomMargin: 16
                model: app.messages
                ScrollBar.vertical: ScrollBar {}
                delegate: MessageDelegate { width: messageList.width }
                // Follows the end while the reply grows, until the user scrolls up to read.
                property bool follow: true
                onMovementEnded: follow = atYEnd
                onContentHeightChanged: if (follow) Qt.callLater(positionViewAtEnd)
                onCountChanged: { follow = true; Qt.callLater(positionViewAtEnd) }
                ColumnLayout {
                    anchors.centerIn: parent
                    visible: messageList.count === 0
                    spacing: 10
                    Image { source: "qrc:/icons/niwa.svg"; sourceSize: Qt.size(56, 56); Layout.alignment: Qt.AlignHCenter; opacity: 0.9 }
                    Label {
                        text: app.engineState === "ready" ? qsTr("Ask anything. Drop images here to include them.")
                                                          : qsTr("Start the engine on the Engine page to chat.")
                        color: theme.subtext; Layout.alignment: Qt.AlignHCenter
                    }
                }
            }

            Label {
                visible: app.session.error !== ""
                text: qsTr("The reply failed: %1").arg(app.session.error)
                color: theme.danger; wrapMode: Text.WordWrap
                Layout.fillWidth: true; Layout.leftMargin: 24; Layout.rightMargin: 24
            }

            // Composer
            Rectangle {
                Layout.fillWidth: true
                Layout.margins: 16
                Layout.topMargin: 4
                implicitHeight: composer.implicitHeight + 16
                radius: 10
                color: theme.input
                border.color: input.activeFocus ? theme.accent : theme.cardBorder
                ColumnLayout {
                    id: composer
                    anchors.fill: parent
                    anchors.margins: 8
                    spacing: 6
                    Flow {
                        Layout.fillWidth: true
                        visible: app.pendingImages.length > 0
                        spacing: 8
                        Repeater {
                            model: app.pendingImages
                            Rectangle {
                                width: 64; height: 64; radius: 6; color: theme.track; clip: true
                                Image { anchors.fill: parent; source: modelData; sourceSize: Qt.size(128, 128); fillMode: Image.PreserveAspectCrop }
                                IconButton {
                                    anchors.top: parent.top; anchors.right: parent.right
                                    implicitWidth: 22; implicitHeight: 22
                                    iconName: "error"; tip: qsTr("Remove image"); tint: theme.text
                                    onClicked: app.removeImage(index)
                                }
                            }
                        }
                    }
                    RowLayout {
                        spacing: 6
                        IconButton {
                            iconName: "attach"; tip: qsTr("Add an image")
                            Layout.alignment: Qt.AlignBottom
                            onClicked: imageDialog.open()
                        }
                        ScrollView {
                            Layout.fillWidth: true
                            Layout.preferredHeight: Math.min(Math.max(input.implicitHeight, 36), 180)
                            TextArea {
                                id: input
                                objectName: "chatInput"
                                placeholderText: qsTr("Message Niwa (Ctrl+Enter to send)")
                                wrapMode: TextArea.Wrap
                                background: null
                                color: theme.text
                                Keys.onPressed: function(event) {
                                    if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter) && (event.modifiers & Qt.ControlModifier)) {
                                        page.sendNow()
                                        event.accepted = true
                                    } else if (event.matches(StandardKey.Paste) && app.pasteImage()) {
                                        event.accepted = true
                                    }
                                }
                            }
                        }
                        AccentButton {
                            objectName: "sendButton"
                            Layout.alignment: Qt.AlignBottom
                            iconName: app.session.busy ? "stop" : "send"
                            text: app.session.busy ? qsTr("Stop") : qsTr("Send")
                            enabled: app.session.busy || input.text.trim() !== "" || app.pendingImages.length > 0
                            onClicked: app.session.busy ? app.stop() : page.sendNow()
                            ToolTip.visible: hovered
                            ToolTip.delay: 600
                            ToolTip.text: app.session.busy ? qsTr("Stop (Esc)") : qsTr("Send (Ctrl+Enter)")
                        }
                    }
                }
            }
        }
    }

    DropArea {
        id: drop
        anchors.fill: parent
        keys: ["text/uri-list"]
        onDropped: function(event) {
            for (let i = 0; i < event.urls.length; ++i) app.addImage(event.urls[i])
            event.acceptProposedAction()
        }
        Rectangle {
            anchors.fill: parent
            anchors.margins: 8
            visible: drop.containsDrag
            radius: 12
            color: Qt.rgba(theme.accent.r, theme.accent.g, theme.accent.b, 0.12)
            border.color: theme.accent
            border.width: 2
            Label { anchors.centerIn: parent; text: qsTr("Drop images to add them to your message"); color: theme.accent; font.pixelSize: 16 }
        }
    }

    FileDialog {
        id: imageDialog
        title: qsTr("Add an image")
        nameFilters: [qsTr("Images (*.png *.jpg *.jpeg *.webp *.gif *.bmp)")]
        fileMode: FileDialog.OpenFiles
        onAccepted: { for (let i = 0; i < selectedFiles.length; ++i) app.addImage(selectedFiles[i]) }
    }
}
