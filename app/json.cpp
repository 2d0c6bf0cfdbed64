#include "json.hpp"

#include "core/error.hpp"

#include <cmath>
#include <cstdlib>

namespace edn {
namespace {

/// Nesting limit: scripts are shallow; the bound keeps malicious input from blowing the stack.
constexpr int kMaxDepth = 64;

class Parser {
public:
    Parser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

    JsonValue parse_document() {
        JsonValue value = parse_value(0);
        skip_space();
        if (pos_ != text_.size()) fail("unexpected text after the JSON value");
        return value;
    }

private:
    [[noreturn]] void fail(const std::string& problem) const {
        int line = 1;
        int column = 1;
        for (std::size_t i = 0; i < pos_ && i < text_.size(); ++i) {
            if (text_[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        EDN_THROW(ErrorCode::Parse, source_ << ":" << line << ":" << column << ": " << problem);
    }

    int current_line() const {
        int line = 1;
        for (std::size_t i = 0; i < pos_; ++i) line += text_[i] == '\n';
        return line;
    }

    void skip_space() {
        while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                       text_[pos_] == '\n' || text_[pos_] == '\r')) {
            ++pos_;
        }
    }

    bool consume_literal(std::string_view literal) {
        if (text_.substr(pos_, literal.size()) != literal) return false;
        pos_ += literal.size();
        return true;
    }

    JsonValue parse_value(int depth) {
        if (depth > kMaxDepth) fail("nesting deeper than 64 levels");
        skip_space();
        if (pos_ >= text_.size()) fail("unexpected end of input, expected a value");
        JsonValue value;
        value.line = current_line();
        const char c = text_[pos_];
        if (c == '{') {
            value.type = JsonValue::Type::Object;
            ++pos_;
            skip_space();
            if (pos_ < text_.size() && text_[pos_] == '}') {
                ++pos_;
                return value;
            }
            for (;;) {
                skip_space();
                if (pos_ >= text_.size() || text_[pos_] != '"') fail("expected a member name");
                std::string key = parse_string();
                skip_space();
                if (pos_ >= text_.size() || text_[pos_] != ':') fail("expected ':'");
                ++pos_;
                JsonValue member = parse_value(depth + 1);
                if (!value.object.emplace(key, std::move(member)).second) {
                    fail("duplicate member \"" + key + "\"");
                }
                skip_space();
                if (pos_ < text_.size() && text_[pos_] == ',') {
                    ++pos_;
                    continue;
                }
                if (pos_ < text_.size() && text_[pos_] == '}') {
                    ++pos_;
                    return value;
                }
                fail("expected ',' or '}'");
            }
        }
        if (c == '[') {
            value.type = JsonValue::Type::Array;
            ++pos_;
            skip_space();
            if (pos_ < text_.size() && text_[pos_] == ']') {
                ++pos_;
                return value;
            }
            for (;;) {
                value.array.push_back(parse_value(depth + 1));
                skip_space();
                if (pos_ < text_.size() && text_[pos_] == ',') {
                    ++pos_;
                    continue;
                }
                if (pos_ < text_.size() && text_[pos_] == ']') {
                    ++pos_;
                    return value;
                }
                fail("expected ',' or ']'");
            }
        }
        if (c == '"') {
            value.type = JsonValue::Type::String;
            value.string = parse_string();
            return value;
        }
        if (consume_literal("true")) {
            value.type = JsonValue::Type::Bool;
            value.boolean = true;
            return value;
        }
        if (consume_literal("false")) {
            value.type = JsonValue::Type::Bool;
            return value;
        }
        if (consume_literal("null")) return value;
        if (c == '-' || (c >= '0' && c <= '9')) {
            value.type = JsonValue::Type::Number;
            value.number = parse_number();
            return value;
        }
        fail(std::string("unexpected character '") + c + "'");
    }

    double parse_number() {
        // Validate the JSON grammar first (strtod accepts more: hex, inf, leading '+').
        const std::size_t start = pos_;
        auto digits = [&] {
            const std::size_t first = pos_;
            while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
            return pos_ > first;
        };
        if (text_[pos_] == '-') ++pos_;
        if (pos_ < text_.size() && text_[pos_] == '0') {
            ++pos_;
        } else if (!digits()) {
            fail("malformed number");
        }
        if (pos_ < text_.size() && text_[pos_] == '.') {
            ++pos_;
            if (!digits()) fail("malformed number: digits expected after '.'");
        }
        if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
            if (!digits()) fail("malformed number: digits expected in the exponent");
        }
        const std::string literal(text_.substr(start, pos_ - start));
        const double number = std::strtod(literal.c_str(), nullptr);
        if (!std::isfinite(number)) fail("number out of range: " + literal);
        return number;
    }

    static void append_utf8(std::string& out, unsigned code) {
        if (code < 0x80) {
            out += static_cast<char>(code);
        } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else if (code < 0x10000) {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (code >> 18));
            out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
        }
    }

    unsigned parse_hex4() {
        if (pos_ + 4 > text_.size()) fail("truncated \\u escape");
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
            const char h = text_[pos_++];
            code <<= 4;
            if (h >= '0' && h <= '9') {
                code |= static_cast<unsigned>(h - '0');
            } else if (h >= 'a' && h <= 'f') {
                code |= static_cast<unsigned>(h - 'a' + 10);
            } else if (h >= 'A' && h <= 'F') {
                code |= static_cast<unsigned>(h - 'A' + 10);
            } else {
                fail("bad hex digit in \\u escape");
            }
        }
        return code;
    }

    std::string parse_string() {
        ++pos_; // opening quote
        std::string out;
        for (;;) {
            if (pos_ >= text_.size()) fail("unterminated string");
            const char c = text_[pos_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= text_.size()) fail("unterminated escape");
            const char e = text_[pos_++];
            switch (e) {
            case '"':
                out += '"';
                break;
            case '\\':
                out += '\\';
                break;
            case '/':
                out += '/';
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                unsigned code = parse_hex4();
                if (code >= 0xD800 && code < 0xDC00) {
                    if (!consume_literal("\\u")) fail("unpaired surrogate in \\u escape");
                    const unsigned low = parse_hex4();
                    if (low < 0xDC00 || low >= 0xE000) fail("bad low surrogate in \\u escape");
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                } else if (code >= 0xDC00 && code < 0xE000) {
                    fail("unpaired surrogate in \\u escape");
                }
                append_utf8(out, code);
                break;
            }
            default:
                fail(std::string("bad escape '\\") + e + "'");
            }
        }
    }

    std::string_view text_;
    const std::string& source_;
    std::size_t pos_ = 0;
};

} // namespace

const JsonValue* JsonValue::find(const std::string& key) const {
    if (type != Type::Object) return nullptr;
    const auto it = object.find(key);
    return it == object.end() ? nullptr : &it->second;
}

const char* JsonValue::type_name() const {
    switch (type) {
    case Type::Null:
        return "null";
    case Type::Bool:
        return "boolean";
    case Type::Number:
        return "number";
    case Type::String:
        return "string";
    case Type::Array:
        return "array";
    case Type::Object:
        return "object";
    }
    return "?";
}

JsonValue parse_json(std::string_view text, const std::string& source) {
    return Parser(text, source).parse_document();
}

} // namespace edn
