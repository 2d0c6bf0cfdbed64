#pragma once
/// The project's one JSON reader and writer, over nlohmann::ordered_json: members keep the order
/// in which they were added (so machine-readable outputs keep their key order), parse errors are
/// edn::Error naming file, line and column, and every output uses the same text layout
/// (JsonLayout). Only this header includes nlohmann; other engine headers stay free of it.

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>

namespace edn {

/// A JSON value whose objects keep insertion order.
using Json = nlohmann::ordered_json;

/// 1-based line where each value of a parsed document starts, keyed by its JSON pointer ("" for
/// the root, "/actions/0", "/actions/0/drag"): lets readers of hand-written files name a line.
using JsonLines = std::unordered_map<std::string, int>;

/// Parses `text` (one JSON value, no comments, nesting at most 64 deep). Throws
/// edn::Error(Parse) "SOURCE:LINE:COLUMN: problem" on malformed text and on a duplicate key in
/// an object. Fills `lines` when given.
Json parse_json(std::string_view text, const std::string& source, JsonLines* lines = nullptr);

/// Reads and parses the file at `path` (errors name the path); Io error when it cannot be read.
Json read_json_file(const std::filesystem::path& path, JsonLines* lines = nullptr);

/// How to_json_text arranges a value into lines.
enum class JsonLayout {
    /// One line: {"a":1, "b":[1, 2], "c":{"d":null}}.
    Compact,
    /// The top-level object (or array) one member per line, indented 2, as "key": value; a member
    /// that is an array holding objects or arrays gets one element per line, indented 4;
    /// everything deeper is Compact. Records stay one line each: diffable and greppable.
    Lines,
};

/// Options of to_json_text.
struct JsonFormat {
    JsonLayout layout = JsonLayout::Lines; ///< line arrangement
    /// Reals: 0 writes the shortest text that reads back to the same double; N > 0 rounds to N
    /// significant digits (printf %.Ng). NaN and infinities are written as null either way.
    int significant_digits = 0;
};

/// `value` as JSON text (no trailing newline). Strings are escaped as RFC 8259 requires; invalid
/// UTF-8 in them is replaced by U+FFFD.
std::string to_json_text(const Json& value, const JsonFormat& format = {});

/// Writes to_json_text(value, format) and a newline to `path` through write_file_atomically
/// (core/atomic_file.hpp): the file is complete or untouched.
void write_json_file(const std::filesystem::path& path, const Json& value,
                     const JsonFormat& format = {});

/// "null", "boolean", "number", "string", "array" or "object", for messages.
const char* json_type_name(const Json& value);

/// Builds an object with chained calls, members in the order added:
/// `JsonObject().add("frame", 3).add("ms", 1.5).add("scene", other_object)`. Values are anything
/// Json is constructible from (numbers, bool, strings, Json, JsonObject, vectors of those).
class JsonObject {
public:
    /// Adds member `key` (an existing member of that name is replaced in place).
    template <class T> JsonObject& add(const std::string& key, const T& value) {
        json_[key] = Json(value);
        return *this;
    }
    /// True when no member was added.
    bool empty() const { return json_.empty(); }
    /// The object built so far.
    const Json& json() const { return json_; }

private:
    Json json_ = Json::object();
};

/// Lets Json hold a JsonObject (found by nlohmann through argument-dependent lookup).
inline void to_json(Json& json, const JsonObject& object) {
    json = object.json();
}

} // namespace edn
