// A short message at the bottom of the window that goes away by itself.
import QtQuick
import QtQuick.Controls

Popup {
    id: toast
    property alias text: label.text
    function show(message) { text = message; open(); timer.restart() }
    x: (parent.width - width) / 2
    y: parent.height - height - 32
    padding: 12
    leftPadding: 18
    rightPadding: 18
    closePolicy: Popup.CloseOnPressOutside
    background: Rectangle { radius: 8; color: theme.text; opacity: 0.92 }
    contentItem: Label { id: label; color: theme.window; wrapMode: Text.WordWrap; width: Math.min(implicitWidth, 520) }
    Timer { id: timer; interval: 4000; onTriggered: toast.close() }
}
