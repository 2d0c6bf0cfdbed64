#include "core/json.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <vector>

namespace edn {
namespace {

/// Nesting limit: the project's files are shallow; the bound rejects pathological input early.
constexpr int kMaxDepth = 64;

/// A char iterator that counts how many characters the parser has consumed, so the SAX pass
/// below knows where in the text each value is (nlohmann 3.11 reports positions only in errors).
struct CountingIterator {
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    const char* at = nullptr;
    std::size_t* consumed = nullptr;

    reference operator*() const { return *at; }
    CountingIterator& operator++() {
        ++at;
        ++*consumed;
        return *this;
    }
    CountingIterator operator++(int) {
        CountingIterator before = *this;
        ++*this;
        return before;
    }
    bool operator==(const CountingIterator& other) const { return at == other.at; }
    bool operator!=(const CountingIterator& other) const { return at != other.at; }
};

/// 1-based line and column of character `index` of `text` (index == size: just past the end).
std::pair<int, int> line_column(std::string_view text, std::size_t index) {
    index = std::min(index, text.size());
    int line = 1;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < index; ++i)
        if (text[i] == '\n') ++line, line_start = i + 1;
    return {line, static_cast<int>(index - line_start) + 1};
}

/// "~" and "/" escaped as a JSON pointer token (RFC 6901).
std::string pointer_token(std::string_view key) {
    std::string out;
    for (const char c : key) {
        if (c == '~')
            out += "~0";
        else if (c == '/')
            out += "~1";
        else
            out += c;
    }
    return out;
}

/// SAX pass that checks what nlohmann's DOM parser lets through (duplicate keys, depth), turns
/// syntax errors into edn::Error with line and column, and records the line of every value.
class Checker {
public:
    Checker(std::string_view text, const std::string& source, const std::size_t& consumed,
            JsonLines* lines)
        : text_(text), source_(source), consumed_(consumed), lines_(lines) {}

    bool null() { return value(); }
    bool boolean(bool) { return value(); }
    bool number_integer(Json::number_integer_t) { return value(); }
    bool number_unsigned(Json::number_unsigned_t) { return value(); }
    bool number_float(Json::number_float_t, const Json::string_t&) { return value(); }
    bool string(Json::string_t&) { return value(); }
    bool binary(Json::binary_t&) { return value(); }
    bool start_object(std::size_t) { return open(true); }
    bool end_object() { return close(); }
    bool start_array(std::size_t) { return open(false); }
    bool end_array() { return close(); }

    bool key(Json::string_t& key) {
        Frame& frame = stack_.back();
        if (!frame.keys.insert(key).second) fail(last_index(), "duplicate key \"" + key + "\"");
        frame.key = key;
        return true;
    }

    bool parse_error(std::size_t position, const std::string&, const Json::exception& error) {
        // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 2: "
        // prefix: the position is given in the project's form instead.
        std::string problem = error.what();
        if (const std::size_t column = problem.find("column "); column != std::string::npos)
            if (const std::size_t colon = problem.find(": ", column); colon != std::string::npos)
                problem = problem.substr(colon + 2);
        fail(position == 0 ? 0 : position - 1, problem);
    }

private:
    /// One open object or array.
    struct Frame {
        std::string pointer;        ///< its JSON pointer
        bool object = false;        ///< object (else array)
        std::size_t next_index = 0; ///< array: index of the next element
        std::string key;            ///< object: key of the next member
        std::set<std::string> keys; ///< object: keys seen so far
    };

    /// Index of the last character the lexer read: the last character of the value just
    /// reported, or the character after a number (on the same line).
    std::size_t last_index() const { return consumed_ == 0 ? 0 : consumed_ - 1; }

    [[noreturn]] void fail(std::size_t index, const std::string& problem) const {
        const auto [line, column] = line_column(text_, index);
        EDN_THROW(ErrorCode::Parse, source_ << ":" << line << ":" << column << ": " << problem);
    }

    /// Records the line of the value that starts now and returns its JSON pointer.
    std::string record() {
        std::string pointer;
        if (!stack_.empty()) {
            Frame& parent = stack_.back();
            pointer =
                parent.pointer + "/" +
                (parent.object ? pointer_token(parent.key) : std::to_string(parent.next_index++));
        }
        if (lines_) (*lines_)[pointer] = line_column(text_, last_index()).first;
        return pointer;
    }

    bool value() {
        record();
        return true;
    }

    bool open(bool object) {
        if (static_cast<int>(stack_.size()) >= kMaxDepth)
            fail(last_index(), "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
        Frame frame;
        frame.pointer = record();
        frame.object = object;
        stack_.push_back(std::move(frame));
        return true;
    }

    bool close() {
        stack_.pop_back();
        return true;
    }

    std::string_view text_;
    const std::string& source_;
    const std::size_t& consumed_;
    JsonLines* lines_;
    std::vector<Frame> stack_;
};

/// Shortest round-trip text of a finite double, or %.Ng.
void append_real(std::string& out, double value, int significant_digits) {
    if (!std::isfinite(value)) {
        out += "null";
        return;
    }
    char buffer[64];
    if (significant_digits > 0) {
        const int n = std::snprintf(buffer, sizeof buffer, "%.*g", significant_digits, value);
        out.append(buffer, static_cast<std::size_t>(n));
        return;
    }
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, end);
}

void append_string(std::string& out, const std::string& text) {
    out += Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
}

void append_compact(std::string& out, const Json& value, const JsonFormat& format) {
    switch (value.type()) {
    case Json::value_t::object: {
        out += '{';
        bool first = true;
        for (const auto& [key, member] : value.items()) {
            if (!first) out += ", ";
            first = false;
            append_string(out, key);
            out += ':';
            append_compact(out, member, format);
        }
        out += '}';
        return;
    }
    case Json::value_t::array: {
        out += '[';
        for (std::size_t i = 0; i < value.size(); ++i) {
            if (i) out += ", ";
            append_compact(out, value[i], format);
        }
        out += ']';
        return;
    }
    case Json::value_t::number_float:
        append_real(out, value.get<double>(), format.significant_digits);
        return;
    case Json::value_t::string:
        append_string(out, value.get_ref<const std::string&>());
        return;
    default: // null, boolean, integers (binary and discarded never occur in our documents)
        out += value.dump();
    }
}

/// A member of a Lines document: arrays of containers one element per line.
void append_member(std::string& out, const Json& value, const JsonFormat& format) {
    const bool records = value.is_array() &&
                         std::any_of(value.begin(), value.end(),
                                     [](const Json& element) { return element.is_structured(); });
    if (!records) {
        append_compact(out, value, format);
        return;
    }
    out += '[';
    for (std::size_t i = 0; i < value.size(); ++i) {
        out += i ? ",\n    " : "\n    ";
        append_compact(out, value[i], format);
    }
    out += "\n  ]";
}

} // namespace

Json parse_json(std::string_view text, const std::string& source, JsonLines* lines) {
    if (lines) lines->clear();
    std::size_t consumed = 0;
    Checker checker(text, source, consumed, lines);
    const CountingIterator first{text.data(), &consumed};
    const CountingIterator last{text.data() + text.size(), &consumed};
    Json::sax_parse(first, last, &checker); // throws edn::Error on any problem
    return Json::parse(text.begin(), text.end());
}

Json read_json_file(const std::filesystem::path& path, JsonLines* lines) {
    std::ifstream in(path, std::ios::binary);
    EDN_VERIFY(in, ErrorCode::Io, path.string() << ": cannot open");
    std::ostringstream text;
    text << in.rdbuf();
    EDN_VERIFY(!in.bad(), ErrorCode::Io, path.string() << ": read error");
    return parse_json(text.str(), path.string(), lines);
}

std::string to_json_text(const Json& value, const JsonFormat& format) {
    std::string out;
    if (format.layout == JsonLayout::Compact || !value.is_structured() || value.empty()) {
        append_compact(out, value, format);
        return out;
    }
    const bool object = value.is_object();
    out += object ? "{" : "[";
    bool first = true;
    for (const auto& [key, member] : value.items()) {
        out += first ? "\n  " : ",\n  ";
        first = false;
        if (object) {
            append_string(out, key);
            out += ": ";
        }
        append_member(out, member, format);
    }
    out += object ? "\n}" : "\n]";
    return out;
}

void write_json_file(const std::filesystem::path& path, const Json& value,
                     const JsonFormat& format) {
    const std::string text = to_json_text(value, format);
    write_file_atomically(path, [&](std::ostream& out) { out << text << '\n'; });
}

const char* json_type_name(const Json& value) {
    switch (value.type()) {
    case Json::value_t::null:
        return "null";
    case Json::value_t::boolean:
        return "boolean";
    case Json::value_t::object:
        return "object";
    case Json::value_t::array:
        return "array";
    case Json::value_t::string:
        return "string";
    case Json::value_t::binary:
        return "binary";
    case Json::value_t::discarded:
        return "discarded";
    default:
        return "number";
    }
}

} // namespace edn
