#pragma once
/// JSON text of scalars, shared by every writer of machine-readable output (CLI, benchmarks).

#include <string>
#include <string_view>

namespace edn {

/// `text` as a quoted JSON string with escapes.
std::string json_string(std::string_view text);

/// A finite double in shortest round-trip form; NaN and infinities become null.
std::string json_number(double value);

} // namespace edn
