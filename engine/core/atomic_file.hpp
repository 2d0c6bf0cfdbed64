#pragma once
/// Writing output files so that no partial file is ever left behind.

#include <filesystem>
#include <functional>
#include <ostream>

namespace edn {

/// Calls `write` with a stream on `path`.tmp.<pid>, then renames it onto `path`. On any exception
/// the temporary is removed and the exception propagates; `path` is untouched.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);

} // namespace edn
