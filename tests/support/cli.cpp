#include "support/cli.hpp"

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace edn::test {

std::filesystem::path cli_path() {
    if (const char* env = std::getenv("EDN_CLI")) return env;
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        auto sibling = self.parent_path() / "elastodyn-cli";
        if (std::filesystem::exists(sibling)) return sibling;
    }
    return EDN_CLI_PATH;
}

CliRun run_cli_captured(const std::filesystem::path& capture_dir,
                        const std::vector<std::string>& arguments, std::chrono::seconds limit) {
    std::vector<std::string> storage = {cli_path().string()};
    storage.insert(storage.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (std::string& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);

    const std::filesystem::path out_file = capture_dir / "stdout.txt";
    const std::filesystem::path err_file = capture_dir / "stderr.txt";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    CliRun result;
    if (spawned != 0) {
        ADD_FAILURE() << "cannot run " << storage[0];
        return result;
    }
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            ADD_FAILURE() << "elastodyn-cli hung (killed after " << limit.count() << " s)";
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    result.exited = WIFEXITED(status);
    result.exit_code = result.exited ? WEXITSTATUS(status) : -1;
    result.signal_number = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    result.out = read_text(out_file);
    result.err = read_text(err_file);
    return result;
}

int run_cli(const std::filesystem::path& dir, const std::vector<std::string>& arguments) {
    return run_cli_captured(dir, arguments).exit_code;
}

} // namespace edn::test
