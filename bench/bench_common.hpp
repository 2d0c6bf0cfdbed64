#pragma once
/// Shared parts of the benchmark drivers (`elastodyn-bench`, later `elastodyn-cli bench`):
/// options, box meshes of standard sizes, timing helpers and the header and file of the Bench
/// JSON of DESIGN.md (written with core/json.hpp).

#include "core/json.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/topology.hpp"
#include "sim/simulation.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace edn::bench {

/// Runs `PROGRAM assembly|spmv|step|reorder|repattern|pcg|solve [options] --out bench.json`;
/// argv[0] is the program name used in messages
/// ("elastodyn-bench" or "elastodyn-cli bench"). Returns the process exit code (0 success,
/// 2 usage, 3 bad input, 4 resource or internal error); never throws. Errors are one line on
/// stderr.
int run_bench(int argc, char** argv);

/// Parsed command line.
struct Options {
    std::string benchmark;             ///< "assembly", "spmv", "step", ..., "solve"
    std::string backend = "cpu";       ///< "cpu" or "cuda"
    std::int64_t max_tets = 2'000'000; ///< largest mesh to run
    std::int64_t min_tets = 0;         ///< pcg: smallest mesh to run
    std::vector<int> orders = {1, 2, 3};
    bool orders_given = false; ///< --orders was on the command line (step: default 1,2)
    int repeat = 0;            ///< repetitions per measurement (0: 10 on CUDA, 3 on CPU)
    int frames = 30;           ///< step: measured frames per case (after the warm-up frames)
    /// step: coarse PCG iterations per two-level application (SimulationSettings::
    /// coarse_iterations; 0: the backend's default). The sweep in bench/README.md used it.
    int coarse_iterations = 0;
    /// step: no baseline runs (a CUDA run's CPU backend frames, which take most of a p >= 2 run).
    bool no_baseline = false;
    /// step: a mesh file (OBJ, .node/.ele or .msh) instead of the box, pinned at its base with a
    /// drag on its top (empty: the box).
    std::string mesh;
    std::string out; ///< JSON output path
    /// solve: relative tolerance of every method (||P(b - A x)|| <= tol ||P b||).
    double tolerance = 1e-4;
    /// solve: iteration cap of every method.
    int max_iterations = 10000;
    /// solve: the time step h of the matrix K + M/h^2.
    double dt = 1.0 / 60.0;
    /// solve: the methods to run (names of bench_solve.cpp's list; empty: all that apply);
    /// step, assembly: summation methods (per_entry, per_simplex, inline; empty: all three).
    std::vector<std::string> methods;
    /// step, assembly: materials (linear, corotational, neohookean; empty: the benchmark's
    /// default set).
    std::vector<std::string> materials;
    /// step: every case's preconditioner (empty: block Jacobi plus the two-level extras);
    /// repattern --mesh: the preconditioner of the Simulation::cut cases (empty: the settings'
    /// default); with multigrid a case times the first steps after a prepared cut.
    std::string preconditioner;
};

/// The materials of --materials, `defaults` when none were given; edn::Error(Usage) on an
/// unknown name.
std::vector<Material> bench_materials(const Options& options, std::vector<Material> defaults);
/// The summation methods of --methods (all three when none were given); edn::Error(Usage) on an
/// unknown name.
std::vector<SummationMethod> bench_methods(const Options& options);

/// A case's "assembly" object: element and summation ms `per` ("newton_iteration" in a step,
/// "call" in bench assembly), their sum `total_ms`, and the element Hessian blocks kept in memory
/// (bytes and MiB; 0 for inline summation, which computes them where it adds them).
JsonObject assembly_json(const char* per, double element_ms, double summation_ms,
                         std::size_t element_block_bytes);

/// Per (mesh, order, material, path where given) of the cases with an "assembly" object (the
/// gravity scene and block Jacobi only, where a step has those fields; skipped cases left out): the
/// assembly total_ms of per_entry, per_simplex and inline, inline_over_per_entry,
/// inline_over_per_simplex and the element-block MiB that inline saves against per_entry (null
/// where a method is missing).
Json inline_summary(const std::vector<JsonObject>& cases);

/// A box mesh of a standard benchmark size.
struct BoxCase {
    int nx, ny, nz;
    /// 6 nx ny nz.
    std::int64_t tets() const { return 6LL * nx * ny * nz; }
    /// "box-NXxNYxNZ".
    std::string name() const;
};

/// The standard sizes (about 8K, 50K, 125K, 400K, 720K, 1.1M and 1.7M tets) up to `max_tets`.
std::vector<BoxCase> standard_boxes(std::int64_t max_tets);

/// Whether the benchmark runs order `order` on a mesh of `tets` cells (p = 2 up to 1.2M tets,
/// p = 3 up to `p3_limit`), so one run stays within minutes.
bool order_runs_on(int order, std::int64_t tets, std::int64_t p3_limit);

/// A generated (or loaded) mesh with its host topology and the host times to make them.
struct MeshData {
    BoxCase box{};    ///< the box (zero for a mesh file)
    std::string name; ///< box.name(), or the file name of a loaded mesh
    TetMesh mesh;
    Topology topology;
    double generate_ms = 0; ///< make_box_tet_mesh
    double topology_ms = 0; ///< build_topology on the host
};

/// Generates the unit-height box mesh of `box` and its topology.
MeshData make_mesh_data(const BoxCase& box);
/// Loads the mesh file at `path` (OBJ meshed by TetGen, .node/.ele, .msh) and builds its
/// topology; errors of load_tet_mesh (exit 3 for a bad file).
MeshData load_mesh_data(const std::string& path);

/// Milliseconds on a steady clock since an arbitrary origin.
inline double now_ms() {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// Milliseconds of CPU time this process has used (all its threads) since an arbitrary origin.
double process_cpu_ms();

/// A time span: wall clock and the process's CPU time. On a loaded machine the wall time of a
/// one-thread computation grows with the load while its CPU time stays near the unloaded time.
struct Interval {
    double wall_ms = 0;
    double cpu_ms = 0;
};

/// Measures Intervals from its start or last lap.
class Stopwatch {
public:
    Stopwatch() : wall_(now_ms()), cpu_(process_cpu_ms()) {}
    /// The span since construction or the previous lap(); restarts.
    Interval lap() {
        const double wall = now_ms(), cpu = process_cpu_ms();
        const Interval out{wall - wall_, cpu - cpu_};
        wall_ = wall, cpu_ = cpu;
        return out;
    }

private:
    double wall_, cpu_;
};

/// Median of the samples (mean of the two middle ones for an even count; NaN when empty).
double median(std::vector<double> samples);

/// EDN_COMMIT, else `git rev-parse --short HEAD`, else "unknown".
std::string commit_id();

/// Header of a Bench JSON document (benchmark, backend, device, commit, host threads).
JsonObject bench_header(const Options& options, const std::string& device);

/// Writes header + cases to options.out atomically; `complete` is false while cases remain.
void write_bench_json(const Options& options, const JsonObject& header,
                      const std::vector<JsonObject>& cases, bool complete);

/// Prints one progress line to stderr.
void progress(const std::string& line);

/// The assembly benchmark (bench_assembly.cpp).
void run_assembly_bench(const Options& options);
/// bench assembly for one material through the simulation backend of --backend: per summation
/// method of --methods, the element pass (energy, gradient, Hessians where kept) and the
/// summation of one Newton iteration on `mesh` at a fixed deformed state; one case each
/// (bench_assembly_backend.cpp).
void backend_assembly_cases(const std::string& mesh_name, const TetMesh& mesh, int order,
                            Material material, const Options& options,
                            std::vector<JsonObject>& cases);
/// The SpMV benchmark (bench_spmv.cpp).
void run_spmv_bench(const Options& options);
/// Node order (natural, shuffled, Morton) against SpMV and summation (bench_reorder.cpp).
void run_reorder_bench(const Options& options);
/// Re-pattern after a cut, device and host (bench_repattern.cpp).
void run_repattern_bench(const Options& options);
/// The split cut of `mesh` (named `name`): full and partial blades on the rest shape with the
/// cut's phase times, then Simulation::cut (split, transfer, re-pattern) at --orders (default 1)
/// on the options' backend; each case goes to `add_case` (bench_split_cut.cpp).
void add_split_cut_cases(const Options& options, const std::string& name, const TetMesh& mesh,
                         const std::function<void(JsonObject)>& add_case);
/// One PCG iteration per CUDA solver variant, against the CPU PCG (bench_pcg.cpp).
void run_pcg_bench(const Options& options);
/// The per-frame simulation benchmark (bench_step.cpp).
void run_step_bench(const Options& options);
/// Linear solvers and the BoomerAMG peer on one Newton matrix (bench_solve.cpp).
void run_solve_bench(const Options& options);

} // namespace edn::bench
