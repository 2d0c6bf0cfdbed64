#pragma once
// Locating the source tree and the CLI from tests, here and on the GPU machine.

#include <cstdlib>
#include <filesystem>
#include <string>

namespace edn::test {

/// Root of the source tree: $EDN_SOURCE_DIR, else the working directory if it holds tests/data,
/// else the configure-time path.
inline std::filesystem::path source_dir() {
    if (const char* env = std::getenv("EDN_SOURCE_DIR")) return env;
    if (std::filesystem::exists("tests/data")) return std::filesystem::current_path();
    return EDN_SOURCE_DIR;
}

/// tests/data/<name>
inline std::filesystem::path data_path(const std::string& name) {
    return source_dir() / "tests" / "data" / name;
}

/// The elastodyn-cli binary: $EDN_CLI, else next to the test binary, else the build-time path.
inline std::filesystem::path cli_path() {
    if (const char* env = std::getenv("EDN_CLI")) return env;
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        auto sibling = self.parent_path() / "elastodyn-cli";
        if (std::filesystem::exists(sibling)) return sibling;
    }
    return EDN_CLI_PATH;
}

} // namespace edn::test
