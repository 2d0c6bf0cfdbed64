#pragma once
/// Minimal ordered JSON object writer for the CLI's machine-readable output: keys keep the order
/// in which commands add them, so new keys can be appended without touching existing ones.

#include "core/json_text.hpp"

#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace edn::cli {

using edn::json_number;
using edn::json_string;

/// An ordered JSON object.
class JsonObject {
public:
    /// Adds an integer member.
    template <std::integral T> JsonObject& add(const std::string& key, T value) {
        if constexpr (std::same_as<T, bool>)
            return add_raw(key, value ? "true" : "false");
        else
            return add_raw(key, std::to_string(value));
    }
    /// Adds a real member.
    JsonObject& add(const std::string& key, double value) {
        return add_raw(key, json_number(value));
    }
    /// Adds a string member.
    JsonObject& add(const std::string& key, std::string_view value) {
        return add_raw(key, json_string(value));
    }
    /// Adds a string member (keeps string literals away from the bool overload).
    JsonObject& add(const std::string& key, const char* value) {
        return add(key, std::string_view(value));
    }
    /// Adds a nested object.
    JsonObject& add(const std::string& key, const JsonObject& value) {
        return add_raw(key, value.dump(false));
    }
    /// Adds already-serialised JSON.
    JsonObject& add_raw(const std::string& key, std::string json);

    /// Serialises the object: one line, or one member per line with two-space indent.
    std::string dump(bool pretty) const;

private:
    std::vector<std::pair<std::string, std::string>> members_; ///< key, serialised value
};

} // namespace edn::cli
