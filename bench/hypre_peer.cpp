// BoomerAMG for `bench solve` (hypre_peer.hpp): the Bin-BCSR* matrix as scalar CSR with the pins
// as identity rows and columns, handed to the HYPRE plugin (hypre_plugin.hpp), which is loaded
// with dlopen on first use so that only `bench solve` pays for HYPRE's libraries.
#include "hypre_peer.hpp"

#include "core/error.hpp"
#include "hypre_plugin.hpp"

#include <algorithm>
#include <cmath>
#include <dlfcn.h>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace edn::bench {
namespace {

/// The plugin's entry points (null when it is absent).
struct Plugin {
    EdnHypreSolveFunction solve = nullptr;
    EdnHypreSettingsFunction settings = nullptr;
    std::string path; ///< the file loaded, or why none was
};

/// Loads the plugin once: next to the running executable, or in ../lib from it (an install).
/// RTLD_GLOBAL because OpenMPI's own components, loaded later by MPI_Init, need libmpi's
/// symbols. Never unloaded (its atexit handlers finalize MPI).
const Plugin& plugin() {
    static const Plugin loaded = [] {
        Plugin p;
#if defined(EDN_HYPRE_MODULE)
        std::error_code error;
        const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", error);
        p.path = "hypre: no " EDN_HYPRE_MODULE " next to the executable";
        if (error) return p;
        for (const std::filesystem::path& candidate :
             {exe.parent_path() / EDN_HYPRE_MODULE,
              exe.parent_path().parent_path() / "lib" / EDN_HYPRE_MODULE}) {
            if (!std::filesystem::exists(candidate, error)) continue;
            void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_GLOBAL);
            if (!handle) {
                p.path = std::string("hypre: ") + dlerror();
                return p;
            }
            p.solve = reinterpret_cast<EdnHypreSolveFunction>(dlsym(handle, "edn_hypre_solve"));
            p.settings =
                reinterpret_cast<EdnHypreSettingsFunction>(dlsym(handle, "edn_hypre_settings"));
            if (!p.solve || !p.settings) p.solve = nullptr, p.settings = nullptr;
            p.path = candidate.string();
            return p;
        }
#else
        p.path = "hypre: not built (libhypre-dev was not found by CMake)";
#endif
        return p;
    }();
    return loaded;
}

} // namespace

bool hypre_built() {
    return plugin().solve != nullptr;
}

HypreRun hypre_solve(const BinBcsrMatrix<double>& a, const std::uint8_t* fixed, const double* b,
                     double* x, const HypreOptions& options) {
    const Plugin& p = plugin();
    EDN_VERIFY(p.solve, ErrorCode::Unsupported, p.path);
    HypreRun run;
    const Index nodes = a.pattern->num_rows;
    const std::int32_t n = 3 * static_cast<std::int32_t>(nodes);
    Stopwatch clock;
    // Scalar CSR of the free system: pinned rows and columns become identity (symmetric, and
    // the free rows keep exactly the couplings among free dofs, as in the projected PCG).
    const std::vector<CooEntry<double>> coo = to_coo(a);
    auto pinned = [&](std::int64_t dof) { return fixed[dof / 3] != 0; };
    std::vector<std::int32_t> counts(static_cast<std::size_t>(n), 0), columns;
    std::vector<double> values;
    columns.reserve(coo.size()), values.reserve(coo.size());
    std::size_t at = 0;
    for (std::int32_t row = 0; row < n; ++row) {
        if (pinned(row)) columns.push_back(row), values.push_back(1.0), ++counts[row];
        for (; at < coo.size() && coo[at].row == row; ++at)
            if (!pinned(row) && !pinned(coo[at].col)) {
                columns.push_back(static_cast<std::int32_t>(coo[at].col));
                values.push_back(coo[at].value);
                ++counts[row];
            }
    }
    std::vector<double> rhs(b, b + n);
    for (std::int32_t i = 0; i < n; ++i)
        if (pinned(i)) rhs[i] = 0.0;
    // Rigid rotations (-y, x, 0), (0, -z, y), (z, 0, -x), zero on pinned rows; the translations
    // are in the interpolation already (one displacement component per function).
    std::vector<double> rotations;
    if (options.rigid_body_positions) {
        rotations.assign(3 * static_cast<std::size_t>(n), 0.0);
        for (int axis = 0; axis < 3; ++axis) {
            const int u = (axis + 1) % 3, v = (axis + 2) % 3; // rotation in the (u, v) plane
            double* mode = rotations.data() + std::size_t(axis) * n;
            for (Index i = 0; i < nodes; ++i) {
                if (fixed[i]) continue;
                const Vec3& position = options.rigid_body_positions[i];
                mode[3 * i + u] = -position[v];
                mode[3 * i + v] = position[u];
            }
        }
    }
    const Interval csr = clock.lap();
    const EdnHypreProblem problem{n,
                                  counts.data(),
                                  columns.data(),
                                  values.data(),
                                  rhs.data(),
                                  x,
                                  options.mode == HypreMode::PcgAmg ? 0 : 1,
                                  options.tolerance,
                                  options.max_iterations,
                                  rotations.empty() ? 0 : 3,
                                  rotations.data()};
    EdnHypreResult result{};
    EDN_VERIFY(p.solve(&problem, &result) == 0, ErrorCode::Internal, "hypre: " << result.error);
    run.convert = {csr.wall_ms + result.convert_wall_ms, csr.cpu_ms + result.convert_cpu_ms};
    run.setup = {result.setup_wall_ms, result.setup_cpu_ms};
    run.solve = {result.solve_wall_ms, result.solve_cpu_ms};
    run.iterations = result.iterations;
    run.converged = result.converged != 0;
    run.reported_relative_residual = result.reported_relative_residual;
    for (std::int32_t i = 0; i < n; ++i)
        if (pinned(i))
            run.max_pinned_value = std::max(run.max_pinned_value, std::abs(x[i])), x[i] = 0;
    return run;
}

JsonObject hypre_settings() {
    const Plugin& p = plugin();
    JsonObject out;
    if (!p.settings) return out.add("built", false).add("why", p.path);
    out.add("built", true).add("module", p.path);
    const Json settings = parse_json(p.settings(), "hypre plugin settings");
    for (const auto& [key, value] : settings.items()) out.add(key, value);
    return out;
}

} // namespace edn::bench
