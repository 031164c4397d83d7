// Bounds-checked reads and the messages they throw (cursor.h).
#include "engine/gguf/cursor.h"

#include "engine/gguf/message.h"

namespace niwa::gguf {

void Cursor::need(uint64_t n, std::string_view what) const {
    if (n > remaining()) fail_truncated(what, pos_, cat(n, " bytes"));
}

std::string_view Cursor::bytes(uint64_t n, std::string_view what) {
    need(n, what);
    std::string_view v(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return v;
}

std::string Cursor::string(std::string_view what) {
    // The label is built only on failure: strings are read 500k times for a vocabulary.
    if (remaining() < sizeof(uint64_t)) fail_truncated(cat(what, " length"), pos_, "8 bytes");
    const uint64_t len = read<uint64_t>(what);
    return std::string(bytes(len, what));
}

void Cursor::fail(std::string_view message) const {
    throw Error(cat(file_, ": ", subject_, " at byte ", subject_at_, ": ", message));
}

void Cursor::fail_truncated(std::string_view what, uint64_t at, std::string_view needs) const {
    fail(cat("file ends at byte ", size(), ", ", what, " at byte ", at, " needs ", needs,
             "; the file is truncated or corrupt (download it again)"));
}

}  // namespace niwa::gguf
