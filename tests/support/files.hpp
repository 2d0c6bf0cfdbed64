#pragma once
// Files from tests: the source tree's test data (here and on the GPU machine), whole-file reads,
// and a temporary directory per test.

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <sstream>
#include <string>
#include <unistd.h>

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

/// The whole file as text (empty when it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Writes `text` to `path` (replacing it).
inline void write_text(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

/// A fresh temporary directory named after `prefix`, the process and the running test (so that
/// parallel ctest processes never share one); removed at the end of the test. Construct it while
/// a test runs (in the test body or as a fixture member).
struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& prefix) {
        std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
        std::replace(test.begin(), test.end(), '/', '_'); // parameterised names hold '/'
        path = std::filesystem::temp_directory_path() /
               (prefix + "_" + std::to_string(::getpid()) + "_" + test);
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    /// `path / name`.
    std::filesystem::path operator/(const std::string& name) const { return path / name; }
    /// Entries directly in the directory.
    std::size_t entries() const {
        return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path),
                                                      std::filesystem::directory_iterator()));
    }
};

} // namespace edn::test
