#pragma once
// Locating the source tree and the CLI from tests, here and on the GPU machine.

#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace edn::test {

/// Root of the source tree: $EDN_SOURCE_DIR, else the working directory if it holds tests/data,
/// else the configure-time path.
inline std::filesystem::path source_dir() {
    if (const char* env = std::getenv("EDN_SOURCE_DIR")) return env;
    if (std::filesystem::exists("tests/data")) return std::filesystem::current_path();
    return EDN_SOURCE_DIR;
}

/// A fresh temporary directory named after `prefix`, the process and the running test; removed
/// at the end of the test.
struct TempDir {
    std::filesystem::path path;
    explicit TempDir(const std::string& prefix) {
        path = std::filesystem::temp_directory_path() /
               (prefix + "_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    /// Entries directly in the directory.
    std::size_t entries() const {
        return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path),
                                                      std::filesystem::directory_iterator()));
    }
};

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

/// The whole file as text (empty when it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Runs elastodyn-cli with `arguments` (no shell), stdout and stderr to stdout.txt and
/// stderr.txt in `dir`; returns the exit code (-1 when killed by a signal, -2 when it could not
/// be started).
inline int run_cli(const std::filesystem::path& dir, const std::vector<std::string>& arguments) {
    std::vector<std::string> storage = {cli_path().string()};
    storage.insert(storage.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (std::string& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string out = (dir / "stdout.txt").string(), err = (dir / "stderr.txt").string();
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return -2;
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -2;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace edn::test
