// A label in the left column of a form.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Label {
    color: theme.text
    Layout.alignment: Qt.AlignRight | Qt.AlignTop
    Layout.topMargin: 8
}
