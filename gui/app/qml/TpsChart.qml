// Prompt and generation tokens per second over StatsModel's five-minute history (Canvas).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ColumnLayout {
    id: chart
    property var stats
    spacing: 6
    RowLayout {
        spacing: 16
        Legend { color: theme.accent; text: qsTr("Generation %1 tok/s").arg(stats.generationTokensPerSecond.toFixed(1)) }
        Legend { color: theme.success; text: qsTr("Prompt %1 tok/s").arg(stats.promptTokensPerSecond.toFixed(1)) }
    }
    Canvas {
        id: canvas
        Layout.fillWidth: true
        Layout.fillHeight: true
        Connections { target: chart.stats; function onStatsChanged() { canvas.requestPaint() } }
        Connections { target: theme; function onChanged() { canvas.requestPaint() } }
        onWidthChanged: requestPaint()
        onHeightChanged: requestPaint()
        function niceMax(v) {
            if (v <= 5) return 5
            const p = Math.pow(10, Math.floor(Math.log(v) / Math.LN10))
            for (const m of [1, 1.5, 2, 2.5, 5, 10]) if (v <= m * p) return m * p
            return 10 * p
        }
        onPaint: {
            const ctx = getContext("2d")
            ctx.reset()
            const left = 44, bottom = 20, w = width - left - 4, h = height - bottom - 6
            const gen = chart.stats.series("generationTps"), prompt = chart.stats.series("promptTps")
            let top = 0
            for (const p of gen) top = Math.max(top, p.v)
            for (const p of prompt) top = Math.max(top, p.v)
            top = niceMax(top)
            ctx.font = "11px sans-serif"
            ctx.fillStyle = theme.subtext
            ctx.strokeStyle = theme.cardBorder
            ctx.lineWidth = 1
            for (let i = 0; i <= 5; ++i) {
                const y = 6 + h - h * i / 5
                ctx.beginPath(); ctx.moveTo(left, Math.round(y) + 0.5); ctx.lineTo(left + w, Math.round(y) + 0.5); ctx.stroke()
                ctx.textAlign = "right"
                ctx.fillText(String(Math.round(top * i / 5 * 10) / 10), left - 6, y + 4)
            }
            ctx.textAlign = "center"
            for (const m of [5, 4, 3, 2, 1, 0]) {
                const x = left + w * (1 - m / 5)
                ctx.fillText(m === 0 ? qsTr("now") : qsTr("-%1 min").arg(m), Math.min(x, left + w - 14), 6 + h + 15)
            }
            function line(points, color) {
                if (points.length === 0) return
                ctx.strokeStyle = color
                ctx.lineWidth = 2
                ctx.lineJoin = "round"
                ctx.beginPath()
                for (let i = 0; i < points.length; ++i) {
                    const x = left + w * (1 + points[i].t / 300), y = 6 + h - h * points[i].v / top
                    if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y)
                }
                ctx.stroke()
            }
            line(prompt, theme.success)
            line(gen, theme.accent)
        }
    }
}
