#include "cli/json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace edn::cli {

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
