#include "cli/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace edn::cli {

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char escaped[8];
                std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
                out += escaped;
            } else {
                out += c;
            }
        }
    }
    return out + "\"";
}

std::string json_number(double value) {
    if (!std::isfinite(value)) return "null";
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, end);
}

JsonObject& JsonObject::add_raw(const std::string& key, std::string json) {
    members_.emplace_back(key, std::move(json));
    return *this;
}

std::string JsonObject::dump(bool pretty) const {
    if (members_.empty()) return "{}";
    std::string out = pretty ? "{\n" : "{";
    for (std::size_t i = 0; i < members_.size(); ++i) {
        if (pretty) out += "  ";
        out += json_string(members_[i].first) + (pretty ? ": " : ":") + members_[i].second;
        if (i + 1 < members_.size()) out += pretty ? ",\n" : ", ";
    }
    return out + (pretty ? "\n}" : "}");
}

} // namespace edn::cli
