#pragma once
/// Strict reading of hand-written JSON files (scenes, the state file's header): every value is
/// named by its dotted key ("solver.cg_tol", "pins[2].plane.axis") and the line it stands on, and
/// every problem (unknown key, wrong type, non-finite or out-of-range number) is one
/// edn::Error(Parse) "SOURCE:LINE: key: problem".

#include "core/json.hpp"
#include "core/types.hpp"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace edn {

/// One value of a parsed document and where it is.
struct JsonField {
    const Json* value = nullptr; ///< the value
    std::string pointer;         ///< its JSON pointer ("" for the root)
    std::string name;            ///< its dotted key for messages ("" for the root)

    /// The value.
    const Json& operator*() const { return *value; }
    /// Member access on the value.
    const Json* operator->() const { return value; }
};

/// Reads fields of one document with messages naming `source` and the lines of `lines`.
class JsonFieldReader {
public:
    /// `lines` (may be null: then no line numbers) must outlive the reader.
    JsonFieldReader(std::string source, const JsonLines* lines)
        : source_(std::move(source)), lines_(lines) {}

    /// The document's root.
    JsonField root(const Json& value) const { return {&value, "", ""}; }
    /// Member `key` of object `object` (which must hold it).
    JsonField member(const JsonField& object, const std::string& key) const;
    /// Element `index` of array `array`.
    JsonField element(const JsonField& array, std::size_t index) const;

    /// "SOURCE:LINE: key" (or "SOURCE:LINE" for the root) for messages.
    std::string where(const JsonField& field) const;
    /// Throws edn::Error(Parse) "SOURCE:LINE: key: problem".
    [[noreturn]] void fail(const JsonField& field, const std::string& problem) const;

    /// Throws unless `field` is an object whose keys are all in `keys`.
    void expect_object(const JsonField& field, std::initializer_list<std::string_view> keys) const;
    /// Throws unless `field` is an array.
    void expect_array(const JsonField& field) const;
    /// A finite number.
    double number(const JsonField& field) const;
    /// A finite number in [min, max].
    double number_in(const JsonField& field, double min, double max) const;
    /// An integer in [min, max] (a number without a fraction).
    std::int64_t integer(const JsonField& field, std::int64_t min, std::int64_t max) const;
    /// true or false.
    bool boolean(const JsonField& field) const;
    /// A string.
    const std::string& string(const JsonField& field) const;
    /// An array of three finite numbers.
    Vec3 vec3(const JsonField& field) const;

    /// The name of the file being read.
    const std::string& source() const { return source_; }

private:
    std::string source_;
    const JsonLines* lines_;
};

} // namespace edn
