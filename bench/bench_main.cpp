// elastodyn-bench: the benchmark drivers (the same command as `elastodyn-cli bench`).
#include "bench_common.hpp"

int main(int argc, char** argv) {
    return edn::bench::run_bench(argc, argv);
}
