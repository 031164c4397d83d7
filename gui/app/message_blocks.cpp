// Fence splitting and a small, language-agnostic highlighter (no external dependency).
#include "gui/app/message_blocks.h"

#include <QRegularExpression>
#include <QSet>
#include <QVariantMap>
#include <algorithm>

namespace niwa::gui {

namespace {

struct Fence {
    QChar ch;
    int length = 0;
    QString info;
};

bool parseFence(const QString& line, Fence* fence) {
    int i = 0;
    while (i < line.size() && i < 4 && line[i] == QLatin1Char(' ')) ++i;
    if (i > 3 || i >= line.size()) return false;
    const QChar ch = line[i];
    if (ch != QLatin1Char('`') && ch != QLatin1Char('~')) return false;
    int n = 0;
    while (i + n < line.size() && line[i + n] == ch) ++n;
    if (n < 3) return false;
    const QString info = line.mid(i + n).trimmed();
    if (ch == QLatin1Char('`') && info.contains(QLatin1Char('`'))) return false;
    *fence = {ch, n, info.section(QLatin1Char(' '), 0, 0)};
    return true;
}

bool closes(const QString& line, const Fence& open) {
    Fence f;
    return parseFence(line, &f) && f.ch == open.ch && f.length >= open.length && f.info.isEmpty();
}

const QSet<QString>& keywords() {
    static const QSet<QString> words = {
        // C, C++, Java, JavaScript, TypeScript, Rust, Go
        QStringLiteral("auto"), QStringLiteral("bool"), QStringLiteral("break"), QStringLiteral("case"),
        QStringLiteral("catch"), QStringLiteral("char"), QStringLiteral("class"), QStringLiteral("const"),
        QStringLiteral("constexpr"), QStringLiteral("continue"), QStringLiteral("default"),
        QStringLiteral("delete"), QStringLiteral("do"), QStringLiteral("double"), QStringLiteral("else"),
        QStringLiteral("enum"), QStringLiteral("export"), QStringLiteral("extends"), QStringLiteral("false"),
        QStringLiteral("float"), QStringLiteral("fn"), QStringLiteral("for"), QStringLiteral("func"),
        QStringLiteral("function"), QStringLiteral("if"), QStringLiteral("impl"), QStringLiteral("import"),
        QStringLiteral("include"), QStringLiteral("int"), QStringLiteral("interface"), QStringLiteral("let"),
        QStringLiteral("long"), QStringLiteral("match"), QStringLiteral("mut"), QStringLiteral("namespace"),
        QStringLiteral("new"), QStringLiteral("null"), QStringLiteral("nullptr"), QStringLiteral("package"),
        QStringLiteral("private"), QStringLiteral("protected"), QStringLiteral("pub"),
        QStringLiteral("public"), QStringLiteral("return"), QStringLiteral("static"),
        QStringLiteral("struct"), QStringLiteral("switch"), QStringLiteral("template"),
        QStringLiteral("this"), QStringLiteral("throw"), QStringLiteral("true"), QStringLiteral("try"),
        QStringLiteral("type"), QStringLiteral("typename"), QStringLiteral("unsigned"), QStringLiteral("use"),
        QStringLiteral("using"), QStringLiteral("var"), QStringLiteral("virtual"), QStringLiteral("void"),
        QStringLiteral("while"), QStringLiteral("async"), QStringLiteral("await"),
        // Python, shell, SQL
        QStringLiteral("and"), QStringLiteral("as"), QStringLiteral("def"), QStringLiteral("elif"),
        QStringLiteral("except"), QStringLiteral("from"), QStringLiteral("in"), QStringLiteral("is"),
        QStringLiteral("lambda"), QStringLiteral("None"), QStringLiteral("not"), QStringLiteral("or"),
        QStringLiteral("pass"), QStringLiteral("self"), QStringLiteral("True"), QStringLiteral("False"),
        QStringLiteral("with"), QStringLiteral("yield"), QStringLiteral("then"), QStringLiteral("fi"),
        QStringLiteral("done"), QStringLiteral("esac"), QStringLiteral("echo"), QStringLiteral("SELECT"),
        QStringLiteral("FROM"), QStringLiteral("WHERE"), QStringLiteral("INSERT"), QStringLiteral("UPDATE"),
        QStringLiteral("CREATE"), QStringLiteral("TABLE")};
    return words;
}

bool hashComments(const QString& language) {
    static const QSet<QString> hash = {
        QStringLiteral("python"),     QStringLiteral("py"),         QStringLiteral("sh"),
        QStringLiteral("bash"),       QStringLiteral("shell"),      QStringLiteral("zsh"),
        QStringLiteral("ruby"),       QStringLiteral("yaml"),       QStringLiteral("yml"),
        QStringLiteral("toml"),       QStringLiteral("cmake"),      QStringLiteral("r"),
        QStringLiteral("perl"),       QStringLiteral("powershell"), QStringLiteral("ps1"),
        QStringLiteral("dockerfile"), QStringLiteral("makefile")};
    return hash.contains(language.toLower());
}

QString span(const QString& text, const char* color) {
    return QStringLiteral("<span style=\"color:%1\">%2</span>")
        .arg(QLatin1String(color), text.toHtmlEscaped());
}

}  // namespace

QList<MessageBlock> splitMessage(const QString& markdown) {
    QList<MessageBlock> blocks;
    const QStringList lines = markdown.split(QLatin1Char('\n'));
    QStringList current;
    Fence open;
    bool inCode = false;
    auto flush = [&](MessageBlock::Kind kind, bool closed) {
        QString text = current.join(QLatin1Char('\n'));
        current.clear();
        if (kind == MessageBlock::Kind::Markdown && text.trimmed().isEmpty()) return;
        blocks.append({kind, text, kind == MessageBlock::Kind::Code ? open.info : QString(), closed});
    };
    for (const QString& line : lines) {
        if (!inCode) {
            Fence f;
            if (parseFence(line, &f)) {
                flush(MessageBlock::Kind::Markdown, true);
                open = f;
                inCode = true;
            } else {
                current << line;
            }
        } else if (closes(line, open)) {
            flush(MessageBlock::Kind::Code, true);
            inCode = false;
        } else {
            current << line;
        }
    }
    flush(inCode ? MessageBlock::Kind::Code : MessageBlock::Kind::Markdown, !inCode);
    return blocks;
}

QString highlightCode(const QString& code, const QString& language, bool dark) {
    const char* comment = dark ? "#8b949e" : "#6a737d";
    const char* string = dark ? "#a5d6ff" : "#0a3069";
    const char* number = dark ? "#79c0ff" : "#0550ae";
    const char* keyword = dark ? "#ff7b72" : "#cf222e";
    const bool hash = hashComments(language);
    QString out;
    qsizetype i = 0;
    const qsizetype n = code.size();
    while (i < n) {
        const QChar c = code[i];
        const bool slashComment =
            !hash && c == QLatin1Char('/') && i + 1 < n && code[i + 1] == QLatin1Char('/');
        if ((hash && c == QLatin1Char('#')) || slashComment) {
            qsizetype end = code.indexOf(QLatin1Char('\n'), i);
            if (end < 0) end = n;
            out += span(code.mid(i, end - i), comment);
            i = end;
        } else if (!hash && c == QLatin1Char('/') && i + 1 < n && code[i + 1] == QLatin1Char('*')) {
            qsizetype end = code.indexOf(QStringLiteral("*/"), i + 2);
            end = end < 0 ? n : end + 2;
            out += span(code.mid(i, end - i), comment);
            i = end;
        } else if (c == QLatin1Char('"') || c == QLatin1Char('\'') || c == QLatin1Char('`')) {
            qsizetype j = i + 1;
            while (j < n && code[j] != c && code[j] != QLatin1Char('\n'))
                j += code[j] == QLatin1Char('\\') ? 2 : 1;
            j = std::min(n, j + 1);
            out += span(code.mid(i, j - i), string);
            i = j;
        } else if (c.isDigit()) {
            qsizetype j = i;
            while (j < n && (code[j].isLetterOrNumber() || code[j] == QLatin1Char('.'))) ++j;
            out += span(code.mid(i, j - i), number);
            i = j;
        } else if (c.isLetter() || c == QLatin1Char('_')) {
            qsizetype j = i;
            while (j < n && (code[j].isLetterOrNumber() || code[j] == QLatin1Char('_'))) ++j;
            const QString word = code.mid(i, j - i);
            out += keywords().contains(word) ? span(word, keyword) : word.toHtmlEscaped();
            i = j;
        } else {
            out += QString(c).toHtmlEscaped();
            ++i;
        }
    }
    return QStringLiteral("<pre style=\"margin:0\">") + out + QStringLiteral("</pre>");
}

QVariantList blocksForView(const QString& markdown, bool dark) {
    QVariantList out;
    for (const MessageBlock& b : splitMessage(markdown)) {
        const bool code = b.kind == MessageBlock::Kind::Code;
        out.append(QVariantMap{
            {QStringLiteral("kind"), code ? QStringLiteral("code") : QStringLiteral("markdown")},
            {QStringLiteral("text"), b.text},
            {QStringLiteral("language"), b.language},
            {QStringLiteral("html"), code ? highlightCode(b.text, b.language, dark) : QString()}});
    }
    return out;
}

}  // namespace niwa::gui
