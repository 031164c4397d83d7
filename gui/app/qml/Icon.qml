// A themed monochrome icon from resources/icons (tinted with color).
import QtQuick
import QtQuick.Controls.impl

IconImage {
    property string glyph
    source: glyph ? "qrc:/icons/" + glyph + ".svg" : ""
    sourceSize: Qt.size(20, 20)
    color: theme.text
}
