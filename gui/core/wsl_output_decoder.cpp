// WslOutputDecoder: per-chunk choice between UTF-16LE and UTF-8.
#include "gui/core/wsl_output_decoder.h"

namespace niwa::gui {

namespace {

bool hasUtf16Bom(const QByteArray& b) {
    return b.size() >= 2 && uchar(b[0]) == 0xFF && uchar(b[1]) == 0xFE;
}

bool validUtf8(const QByteArray& b) {
    QStringDecoder d(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
    const QString text = d.decode(b);
    return !text.isEmpty() && !d.hasError();
}

}  // namespace

QString WslOutputDecoder::decode(const QByteArray& chunk) {
    if (chunk.isEmpty()) return {};
    const bool looksUtf16 = hasUtf16Bom(chunk) || chunk.contains('\0') || !oddByte_.isEmpty() ||
                            // Japanese-only UTF-16 has no NUL. Linux output comes in lines, so
                            // only a valid UTF-8 chunk with a line end switches back.
                            (utf16_ && !(chunk.contains('\n') && validUtf8(chunk)));
    utf16_ = looksUtf16;
    if (utf16_) return decodeUtf16(oddByte_ + chunk);
    oddByte_.clear();
    return utf8_.decode(chunk);
}

QString WslOutputDecoder::decodeUtf16(QByteArray bytes) {
    if (hasUtf16Bom(bytes)) bytes.remove(0, 2);
    oddByte_.clear();
    if (bytes.size() % 2) {
        oddByte_ = bytes.right(1);
        bytes.chop(1);
    }
    // Code unit by code unit: a surrogate pair split across chunks comes back whole once the
    // launcher joins the pieces into a line.
    QString text(bytes.size() / 2, Qt::Uninitialized);
    for (qsizetype i = 0; i < text.size(); ++i)
        text[i] = QChar(ushort(uchar(bytes[2 * i]) | (uchar(bytes[2 * i + 1]) << 8)));
    return text;
}

}  // namespace niwa::gui
