// A chat message's Markdown cut into prose and fenced code blocks, so the view renders prose
// with Text.MarkdownText and each code block in its own box (highlighted, with a copy button).
#pragma once

#include <QList>
#include <QString>
#include <QVariantList>

namespace niwa::gui {

struct MessageBlock {
    enum class Kind { Markdown, Code };
    Kind kind = Kind::Markdown;
    QString text;        // prose as Markdown, or the code as it is
    QString language;    // the fence's info string, e.g. "cpp"; empty when none
    bool closed = true;  // false: a code block still streaming in
};

// Splits at ``` and ~~~ fences (CommonMark: a fence line may be indented up to 3 spaces and the
// closing fence uses the same character, at least as long). An unclosed fence runs to the end.
QList<MessageBlock> splitMessage(const QString& markdown);

// The code as rich text (a <pre> with coloured spans): comments, strings, numbers and the
// keywords common to C-like languages, Python and shell. Colours suit a dark or light box.
QString highlightCode(const QString& code, const QString& language, bool dark);

// For QML: [{kind: "markdown"|"code", text, language, html}].
QVariantList blocksForView(const QString& markdown, bool dark);

}  // namespace niwa::gui
