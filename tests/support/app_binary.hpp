#pragma once
// The app binary for the tests that run it as a child process.

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace edn::test {

/// The app binary: $EDN_APP, else next to the test binary, else ../app/elastodyn from it; empty
/// when it is not built.
inline std::filesystem::path app_binary() {
    namespace fs = std::filesystem;
    if (const char* env = std::getenv("EDN_APP")) return env;
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    for (const fs::path& candidate :
         {self.parent_path() / "elastodyn", self.parent_path().parent_path() / "app" / "elastodyn"})
        if (fs::is_regular_file(candidate)) return candidate;
    return {};
}

} // namespace edn::test
