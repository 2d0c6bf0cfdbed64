#pragma once
// Running the real elastodyn-cli binary from tests (here and on the GPU machine).

#include "support/files.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace edn::test {

/// The elastodyn-cli binary: $EDN_CLI, else next to the test binary, else the build-time path.
std::filesystem::path cli_path();

/// Outcome of one CLI run.
struct CliRun {
    bool exited = false;   ///< ended by exit(), not by a signal
    int exit_code = -1;    ///< exit status when `exited`, else -1
    int signal_number = 0; ///< terminating signal otherwise
    std::string out;       ///< everything written to stdout
    std::string err;       ///< everything written to stderr
};

/// Runs elastodyn-cli with `arguments` (no shell), stdout and stderr to stdout.txt and
/// stderr.txt in `capture_dir` (read back into the result). A run that cannot start, or that
/// outlives `limit` (then killed), is a test failure.
CliRun run_cli_captured(const std::filesystem::path& capture_dir,
                        const std::vector<std::string>& arguments,
                        std::chrono::seconds limit = std::chrono::seconds(600));

/// run_cli_captured's exit code (-1 when killed by a signal), the output left in `dir`.
int run_cli(const std::filesystem::path& dir, const std::vector<std::string>& arguments);

} // namespace edn::test
