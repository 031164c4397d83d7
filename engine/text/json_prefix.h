// An incremental check that bytes are a prefix of one JSON object (RFC 8259: whitespace, then
// an object, then whitespace), for constrained decoding. Byte at a time, no lookahead: the
// state is the stack of open containers and where the lexer is inside the current token.
// Strings must hold valid UTF-8 and well-paired \u surrogates, and numbers must fit a double
// (below 1e300: RFC 8259 lets implementations limit the range), as strict parsers demand.
// No accepted prefix is a dead end: some byte always continues it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace niwa::text {

class JsonPrefix {
public:
    // Appends `bytes`; false (and the state is dead) when they cannot continue a JSON object.
    bool feed(std::string_view bytes);
    // Whether `bytes` would be accepted, leaving this state as it is.
    bool accepts(std::string_view bytes) const;
    // The top-level object has closed (only whitespace may follow).
    bool complete() const { return !dead_ && lex_ == Lex::Done; }
    bool dead() const { return dead_; }

private:
    enum class Lex : uint8_t {
        Start,         // before the top-level object: whitespace or '{'
        Value,         // a value must start (after ':' or ',' in an array)
        ValueOrClose,  // just after '['
        Key,           // a key must start (after ',' in an object)
        KeyOrClose,    // just after '{'
        Colon,
        CommaOrClose,
        String,
        Escape,
        Unicode,    // reading \u hex digits
        LowEscape,  // after a high surrogate: must see '\'
        LowU,       // ...then 'u'
        Utf8,       // inside a multi-byte character
        NumMinus,   // '-' read, a digit must follow
        NumZero,    // a leading 0: no more integer digits
        NumInt,
        NumDot,  // '.' read, a digit must follow
        NumFrac,
        NumExpMark,  // 'e' read: sign or digit
        NumExpSign,  // sign read: digit
        NumExp,
        Literal,  // inside true / false / null
        Done,
    };

    bool step(unsigned char c);
    bool start_value(unsigned char c);
    void value_done();
    bool after_number(unsigned char c);
    bool exponent_digit(unsigned char c);

    std::string stack_;  // '{' / '[' per open container
    Lex lex_ = Lex::Start;
    bool key_ = false;  // the string being read is an object key
    bool dead_ = false;
    const char* literal_ = nullptr;  // the rest of true / false / null still to come
    int magnitude_ = 0;              // integer digits + positive exponent so far (kept below 1e300)
    int exponent_ = 0;               // the exponent's value so far (saturated)
    bool exponent_negative_ = false;
    uint32_t code_ = 0;                              // \u escape value so far
    int digits_ = 0;                                 // \u hex digits read
    bool low_ = false;                               // the \u escape being read must be a low surrogate
    int utf8_left_ = 0;                              // continuation bytes still due
    unsigned char utf8_lo_ = 0x80, utf8_hi_ = 0xBF;  // range of the next continuation byte
};

}  // namespace niwa::text
