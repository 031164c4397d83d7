// Turns what wsl.exe writes into text. wsl.exe itself writes UTF-16LE (older releases ignore
// WSL_UTF8=1), while the Linux program it runs writes UTF-8, and both can reach the same
// pipe. UTF-8 text never holds a NUL byte and UTF-16LE text with ASCII or line ends always
// does, so each chunk is judged on its own (a chunk of one byte is too little to judge: pipes
// deliver what wsl.exe wrote in one call, never that little).
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringDecoder>

namespace niwa::gui {

class WslOutputDecoder {
public:
    QString decode(const QByteArray& chunk);
    // Whether the last chunk was judged UTF-16LE.
    bool lastWasUtf16() const { return utf16_; }

private:
    QString decodeUtf16(QByteArray bytes);

    QStringDecoder utf8_{QStringDecoder::Utf8};
    QByteArray oddByte_;  // half a UTF-16 code unit left from the previous chunk
    bool utf16_ = false;
};

}  // namespace niwa::gui
