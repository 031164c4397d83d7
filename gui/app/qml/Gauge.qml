// A ring gauge for a 0..1 value (the KV pool), drawn with Canvas.
import QtQuick
import QtQuick.Controls

Item {
    id: gauge
    property real value: 0
    onValueChanged: canvas.requestPaint()
    Connections { target: theme; function onChanged() { canvas.requestPaint() } }
    Canvas {
        id: canvas
        anchors.fill: parent
        onPaint: {
            const ctx = getContext("2d")
            ctx.reset()
            const r = Math.min(width, height) / 2 - 10
            const start = Math.PI * 0.75, sweep = Math.PI * 1.5
            ctx.lineWidth = 14
            ctx.lineCap = "round"
            ctx.strokeStyle = theme.track
            ctx.beginPath(); ctx.arc(width / 2, height / 2, r, start, start + sweep); ctx.stroke()
            const v = Math.max(0, Math.min(1, gauge.value))
            if (v > 0) {
                ctx.strokeStyle = v > 0.9 ? theme.danger : v > 0.75 ? theme.warning : theme.accent
                ctx.beginPath(); ctx.arc(width / 2, height / 2, r, start, start + sweep * v); ctx.stroke()
            }
        }
    }
    Column {
        anchors.centerIn: parent
        Label { text: Math.round(gauge.value * 100) + "%"; font.pixelSize: 28; font.weight: Font.DemiBold; color: theme.text; anchors.horizontalCenter: parent.horizontalCenter }
        Label { text: qsTr("in use"); color: theme.subtext; font.pixelSize: 12; anchors.horizontalCenter: parent.horizontalCenter }
    }
}
