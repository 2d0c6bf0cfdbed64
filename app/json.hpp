#pragma once
/// A small JSON reader for the app's action scripts (no JSON library ships with the system).
/// Parses RFC 8259 text into a tree of JsonValue; errors name the file, line and column.

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace edn {

/// One JSON value. Objects keep their members sorted by key (duplicate keys are an error).
struct JsonValue {
    /// The JSON type of a value.
    enum class Type { Null, Bool, Number, String, Array, Object };
    Type type = Type::Null;                  ///< which of the members below is meaningful
    bool boolean = false;                    ///< Type::Bool
    double number = 0.0;                     ///< Type::Number
    std::string string;                      ///< Type::String
    std::vector<JsonValue> array;            ///< Type::Array
    std::map<std::string, JsonValue> object; ///< Type::Object
    int line = 1;                            ///< where the value starts in the text (1-based)

    /// The member `key` of an object, or nullptr (also when this is not an object).
    const JsonValue* find(const std::string& key) const;
    /// Lower-case type name for messages ("number", "object", ...).
    const char* type_name() const;
};

/// Parses `text`; throws edn::Error(Parse) "SOURCE:LINE:COLUMN: problem" on malformed input.
JsonValue parse_json(std::string_view text, const std::string& source);

} // namespace edn
