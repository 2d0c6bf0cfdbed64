// `elastodyn-cli bench`: the benchmark drivers of bench/ (the same as `elastodyn-bench`), linked
// in when the build has them (EDN_WITH_BENCH, see the root CMakeLists.txt).
#include "cli/commands.hpp"
#include "core/error.hpp"

#if defined(EDN_WITH_BENCH)
#include "bench_common.hpp"
#endif

#include <string>
#include <vector>

namespace edn::cli {

int run_bench(const std::vector<std::string>& arguments) {
#if defined(EDN_WITH_BENCH)
    // run_bench takes a C command line; its argv[0] names the program in messages.
    std::vector<std::string> storage = {"elastodyn-cli bench"};
    storage.insert(storage.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    for (std::string& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    return edn::bench::run_bench(static_cast<int>(storage.size()), argv.data());
#else
    (void)arguments;
    EDN_THROW(ErrorCode::Unsupported,
              "bench: this build has no benchmarks (bench/ sources absent)");
#endif
}

} // namespace edn::cli
