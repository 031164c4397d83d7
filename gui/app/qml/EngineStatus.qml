// The engine's state in the side bar: a dot, a word, and the LAN address when serving.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ItemDelegate {
    id: status
    Layout.fillWidth: true
    implicitHeight: column.implicitHeight + 16
    background: Rectangle { radius: 6; color: status.hovered ? theme.hover : "transparent" }
    readonly property color dotColor: app.engineState === "ready" ? theme.success
                                    : app.engineState === "failed" ? theme.danger
                                    : app.engineState === "starting" || app.engineState === "stopping" ? theme.warning
                                    : theme.other
    contentItem: ColumnLayout {
        id: column
        spacing: 2
        RowLayout {
            spacing: 8
            Rectangle { width: 8; height: 8; radius: 4; color: status.dotColor }
            Label {
                text: app.engineState === "ready" ? qsTr("Engine running")
                    : app.engineState === "starting" ? qsTr("Engine starting… %1%").arg(Math.round(app.engineProgress * 100))
                    : app.engineState === "stopping" ? qsTr("Engine stopping…")
                    : app.engineState === "failed" ? qsTr("Engine failed")
                    : qsTr("Engine stopped")
                color: theme.text; font.pixelSize: 13
                Layout.fillWidth: true; elide: Text.ElideRight
            }
        }
        Label {
            visible: app.lanServing
            text: qsTr("Serving on the LAN")
            color: theme.subtext; font.pixelSize: 12; leftPadding: 16
        }
    }
}
