// `bench step`: whole simulation frames (backward Euler, Newton + block-Jacobi PCG) on a box
// (or a user's mesh, --mesh) pinned at the bottom under gravity, per order, material and
// summation method, with the
// per-stage breakdown and the Newton and CG iteration counts. The step has no external peer:
// a CUDA run's baseline is the CPU backend on the same mesh in the same run; a CPU run's is the
// same CPU at one thread (p = 1; none for p >= 2, too slow to be worth it).
#include "bench_common.hpp"
#include "bench_scene.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cuda_peers.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/topology.hpp"
#include "sim/simulation.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace edn::bench {
namespace {

constexpr double kYoung = 1.0e5;
constexpr double kPoisson = 0.3;
constexpr double kDensity = 1000;
/// Frames stepped before timing starts: the first frames allocate and fill caches.
constexpr int kWarmupFrames = 3;
/// The GPU scene: about the size of Cecka et al.'s hand model (125K tets).
constexpr std::int64_t kCudaTets = 127'008;
/// The CPU reference scene (the 2-core target: a 10K-tet p = 1 co-rotational scene >= 30 fps).
constexpr std::int64_t kCpuTets = 10'368;
/// Baselines are slow (the CPU at p = 2 runs seconds per frame): few frames, capped in time.
constexpr int kBaselineFrames = 3;
constexpr double kBaselineCapMs = 8000;
/// The one-thread CPU baseline of a CPU run (p = 1 only).
constexpr int kOneThreadFrames = 10;

/// What one case simulates.
struct StepCase {
    int order = 1;
    Material material = Material::NeoHookean;
    SummationMethod method = SummationMethod::PerEntry;
    bool drag = false; ///< a spring pulls the top sideways and up (strongly nonlinear)
    Preconditioner preconditioner = Preconditioner::BlockJacobi;
};

SimulationSettings settings_for(const StepCase& c, Backend backend, int coarse_iterations) {
    SimulationSettings s;
    s.coarse_iterations = coarse_iterations;
    s.order = c.order;
    s.material = c.material;
    s.young = kYoung;
    s.poisson = kPoisson;
    s.density = kDensity;
    s.dt = 1.0 / 60.0;
    s.integrator = Integrator::BackwardEuler;
    s.backend = backend;
    s.summation = c.method;
    s.preconditioner = c.preconditioner;
    s.gravity = {0, 0, -9.81};
    // The fixed-work configuration these benchmarks have always measured (not the converge
    // defaults): 3 Newton iterations, every solve to 1e-4 capped at PcgSettings' 200.
    s.max_newton_iterations = 3;
    s.pcg.relative_tolerance = 1e-4;
    s.pcg.max_iterations = PcgSettings{}.max_iterations;
    s.cg_forcing = false;
    return s;
}

/// Timings and counters of the measured frames of one run.
struct FrameStats {
    std::vector<double> element, summation, pcg, line_search, total; ///< ms per frame
    std::vector<double> assembly; ///< element + summation per frame [ms]
    std::int64_t newton = 0, cg = 0;
    int converged = 0, recovered = 0, line_search_failures = 0, pcg_unconverged = 0,
        pcg_breakdowns = 0;
    bool finite = true;
    double setup_ms = 0; ///< Simulation construction (topology, pattern, maps, mass, upload)
    double warmup_ms = 0;
    Index nodes = 0;
    std::int64_t nnz_blocks = 0;
    std::size_t matrix_bytes = 0;
    std::size_t element_block_bytes = 0; ///< element Hessian blocks kept for the summation
    Index pinned = 0;

    int frames() const { return static_cast<int>(total.size()); }
};

/// Steps `warmup` frames, then up to `frames` timed ones (stopping early once `cap_ms` has
/// passed with at least one frame timed, when `cap_ms` > 0).
FrameStats measure(const StepScene& scene, const SimulationSettings& s, const StepCase& c,
                   int warmup, int frames, double cap_ms) {
    FrameStats st;
    double t0 = now_ms();
    Simulation sim(scene.mesh, s);
    st.setup_ms = now_ms() - t0;
    st.nodes = sim.num_nodes();
    st.nnz_blocks = sim.nnz_blocks();
    st.matrix_bytes = sim.matrix_bytes();
    st.element_block_bytes = sim.element_block_bytes();
    st.pinned = sim.pin_below(scene.pin_below);
    if (c.drag) sim.set_drag(scene.drag);
    t0 = now_ms();
    for (int f = 0; f < warmup; ++f) sim.step();
    st.warmup_ms = now_ms() - t0;
    const double start = now_ms();
    for (int f = 0; f < frames; ++f) {
        const StepResult r = sim.step();
        st.element.push_back(r.times.element);
        st.summation.push_back(r.times.summation);
        st.pcg.push_back(r.times.pcg);
        st.line_search.push_back(r.times.line_search);
        st.total.push_back(r.times.total);
        st.assembly.push_back(r.times.element + r.times.summation);
        st.newton += r.newton_iterations;
        st.cg += r.cg_iterations;
        st.converged += r.converged;
        st.recovered += r.recovered;
        st.line_search_failures += r.line_search_failures;
        st.pcg_unconverged += r.pcg_unconverged;
        st.pcg_breakdowns += r.pcg_breakdowns;
        if (cap_ms > 0 && now_ms() - start > cap_ms) break;
    }
    for (double v : sim.positions()) st.finite = st.finite && std::isfinite(v);
    return st;
}

/// median_ms and the counters of `st` (without the mesh description).
void add_stats(JsonObject& j, const FrameStats& st) {
    const double frames = std::max(1, st.frames());
    JsonObject ms;
    ms.add("element", median(st.element))
        .add("summation", median(st.summation))
        .add("pcg", median(st.pcg))
        .add("line_search", median(st.line_search))
        .add("total", median(st.total))
        .add("assembly", median(st.assembly));
    double mean_total = 0, element = 0, summation = 0;
    for (double v : st.total) mean_total += v;
    for (double v : st.element) element += v;
    for (double v : st.summation) summation += v;
    const double total = median(st.total);
    // Per Newton iteration (each assembles once and evaluates the Hessians about once), so that
    // methods compare at equal work even where their iteration counts differ.
    const double per = st.newton > 0 ? 1.0 / double(st.newton) : std::nan("");
    j.add("frames", st.frames())
        .add("median_ms", ms)
        .add("assembly", assembly_json("newton_iteration", element * per, summation * per,
                                       st.element_block_bytes))
        .add("mean_total_ms", mean_total / frames)
        .add("max_total_ms",
             st.total.empty() ? std::nan("") : *std::max_element(st.total.begin(), st.total.end()))
        .add("fps", 1000.0 / total)
        .add("newton_iterations", double(st.newton) / frames)
        .add("cg_iterations", double(st.cg) / frames)
        .add("cg_per_newton", st.newton > 0 ? double(st.cg) / double(st.newton) : 0.0)
        .add("converged_frames", st.converged)
        .add("recovered_frames", st.recovered)
        .add("line_search_failures", st.line_search_failures)
        .add("pcg_unconverged", st.pcg_unconverged)
        .add("pcg_breakdowns", st.pcg_breakdowns)
        .add("finite", st.finite)
        .add("setup_ms", st.setup_ms)
        .add("warmup_ms", st.warmup_ms);
}

/// The DESIGN.md target a case is judged by, if any: {fps, met}.
std::optional<double> target_fps(const StepCase& c, Backend backend, std::int64_t tets) {
    if (c.drag) return std::nullopt;
    if (backend == Backend::Cuda && tets >= kCudaTets * 9 / 10) {
        if (c.order == 1 && c.material == Material::NeoHookean) return 1000.0 / 6.0;
        if (c.order == 2) return 30.0;
    }
    if (backend == Backend::Cpu && tets >= kCpuTets * 9 / 10 && c.order == 1 &&
        c.material == Material::Corotational)
        return 30.0;
    return std::nullopt;
}

/// The cases of a run: per order, each material of --materials (default neo-Hookean and
/// co-rotational at every order, linear at p = 1 only) with each summation method of --methods
/// (default all three); p >= 2 adds per_entry with the two-level preconditioner (neo-Hookean,
/// co-rotational), p = 1 the drag scene (neo-Hookean per_entry). Targets first, so a run cut
/// short has them.
std::vector<StepCase> step_cases(const Options& o) {
    const auto has = [&](int p) {
        return std::find(o.orders.begin(), o.orders.end(), p) != o.orders.end();
    };
    const bool default_materials = o.materials.empty();
    const std::vector<Material> materials =
        default_materials
            ? std::vector<Material>{Material::NeoHookean, Material::Corotational, Material::Linear}
            : bench_materials(o, {});
    const std::vector<SummationMethod> methods = bench_methods(o);
    const auto listed = [](const auto& list, auto value) {
        return std::find(list.begin(), list.end(), value) != list.end();
    };
    std::vector<StepCase> out;
    // --preconditioner P: every case with P (multigrid: the app's default; at p >= 2 on CUDA its
    // products are matrix-free), no two-level extras.
    const std::optional<Preconditioner> chosen =
        o.preconditioner.empty() ? std::nullopt : parse_preconditioner(o.preconditioner);
    for (int p : {1, 2, 3}) {
        if (!has(p)) continue;
        for (Material m : materials) {
            if (default_materials && m == Material::Linear) continue; // p = 1, below
            for (SummationMethod s : methods)
                out.push_back({p, m, s, false, chosen.value_or(Preconditioner::BlockJacobi)});
        }
        if (chosen) continue;
        if (p >= 2 && listed(methods, SummationMethod::PerEntry))
            for (Material m : materials)
                if (m != Material::Linear)
                    out.push_back(
                        {p, m, SummationMethod::PerEntry, false, Preconditioner::TwoLevel});
    }
    if (has(1)) {
        if (listed(materials, Material::NeoHookean) && listed(methods, SummationMethod::PerEntry))
            out.push_back({1, Material::NeoHookean, SummationMethod::PerEntry, true});
        if (default_materials)
            for (SummationMethod s : methods) out.push_back({1, Material::Linear, s, false});
    }
    return out;
}

/// The standard box of the backend (within --max-tets): box_scene of bench_scene.hpp.
StepScene box_scene(const Options& o, Backend backend) {
    return box_scene(
        step_box(std::min(o.max_tets, backend == Backend::Cuda ? kCudaTets : kCpuTets)));
}

} // namespace

void run_step_bench(const Options& options_in) {
    Options o = options_in;
    const Backend backend = o.backend == "cuda" ? Backend::Cuda : Backend::Cpu;
    if (!o.orders_given) o.orders = {1, 2};
    const std::vector<StepCase> step_list = step_cases(o);
    std::string device;
    if (backend == Backend::Cuda) {
        EDN_VERIFY(cuda_device_available(), ErrorCode::Unsupported,
                   "--backend cuda: no CUDA device");
        device = device_info().name;
    } else {
        device = "cpu (" + std::to_string(num_threads()) + " threads)";
    }
    const StepScene body = o.mesh.empty() ? box_scene(o, backend) : file_scene(o.mesh);
    const TetMesh& mesh = body.mesh;
    const std::int64_t tets = mesh.num_cells();
    const int warmup = std::min(kWarmupFrames, o.frames);

    JsonObject header = bench_header(o, device);
    JsonObject scene;
    Vec3 lower = mesh.positions.front(), upper = lower;
    for (const Vec3& x : mesh.positions)
        for (int a = 0; a < 3; ++a)
            lower[a] = std::min(lower[a], x[a]), upper[a] = std::max(upper[a], x[a]);
    scene.add("mesh", body.name)
        .add("tets", tets)
        .add("vertices", mesh.num_vertices())
        .add("size_x_m", upper[0] - lower[0])
        .add("size_y_m", upper[1] - lower[1])
        .add("size_z_m", upper[2] - lower[2])
        .add("E", kYoung)
        .add("nu", kPoisson)
        .add("rho", kDensity)
        .add("dt", 1.0 / 60.0)
        .add("integrator", "backward_euler")
        .add("gravity", -9.81)
        .add("pins", body.is_box ? "nodes with rest z < a quarter cell (bottom face)"
                                 : "nodes with rest z in the lowest 2% of the height")
        .add("max_newton_iterations", 3)
        .add("cg_relative_tolerance", 1e-4)
        .add("cg_max_iterations", PcgSettings{}.max_iterations)
        .add("warmup_frames", warmup)
        .add("frames", o.frames)
        .add("coarse_iterations", o.coarse_iterations)
        .add("drag", body.is_box
                         ? "spring 2e3 N/m from a top-centre triangle to +0.25 m x, +0.15 m z"
                         : "spring from the highest boundary triangle to +25% of the height in "
                           "x, +15% in z (stiffness 2e3 N/m per m of height)");
    header.add("scene", scene);
    header.add("baseline_note",
               backend == Backend::Cuda
                   ? "no external peer for a whole step: baseline = the CPU backend (double, all "
                     "host threads, per_entry) on the same mesh and scene in the same run, 1 "
                     "warm-up + up to 3 frames (8 s cap), shared by the summation methods"
                   : "no external peer: baseline = the same CPU step at 1 thread (p = 1 only, 1 "
                     "warm-up + up to 10 frames); none for p >= 2");
    if (o.no_baseline) header.add("baseline_note", "none: --no-baseline");

    // Baselines shared by the summation methods of an (order, material, drag) triple.
    // The baseline object and its median total [ms] (NaN when none).
    using Baseline = std::pair<JsonObject, double>;
    std::map<std::tuple<int, int, bool>, Baseline> baselines;
    auto baseline_for = [&](const StepCase& c) -> Baseline {
        const auto key = std::make_tuple(c.order, int(c.material), c.drag);
        if (auto it = baselines.find(key); it != baselines.end()) return it->second;
        JsonObject b;
        double total = std::nan("");
        if (o.no_baseline) {
            b.add("name", "none").add("reason", "--no-baseline");
        } else if (backend == Backend::Cuda) {
            StepCase bc = c;
            bc.method = SummationMethod::PerEntry;
            progress("  baseline: cpu " + std::to_string(num_threads()) + " threads");
            const FrameStats st =
                measure(body, settings_for(bc, Backend::Cpu, o.coarse_iterations), bc, 1,
                        std::min(o.frames, kBaselineFrames), kBaselineCapMs);
            b.add("name", "cpu_backend_same_run")
                .add("backend", "cpu")
                .add("scalar", "double")
                .add("threads", num_threads())
                .add("method", summation_method_name(bc.method))
                .add("warmup_frames", 1);
            add_stats(b, st);
            total = median(st.total);
        } else {
#if defined(_OPENMP)
            if (c.order == 1) {
                progress("  baseline: cpu 1 thread");
                const int threads = omp_get_max_threads();
                omp_set_num_threads(1);
                FrameStats st;
                try {
                    st = measure(body, settings_for(c, Backend::Cpu, o.coarse_iterations), c, 1,
                                 std::min(o.frames, kOneThreadFrames), 0);
                } catch (...) {
                    omp_set_num_threads(threads);
                    throw;
                }
                omp_set_num_threads(threads);
                b.add("name", "cpu_1_thread")
                    .add("backend", "cpu")
                    .add("threads", 1)
                    .add("method", summation_method_name(c.method))
                    .add("warmup_frames", 1);
                add_stats(b, st);
                return {b, median(st.total)}; // per method: the one-thread run is cheap
            }
#endif
            b.add("name", "none");
        }
        baselines.emplace(key, Baseline{b, total});
        return {b, total};
    };

    std::vector<JsonObject> cases;
    int failed = 0;
    for (const StepCase& c : step_list) {
        const bool jacobi = c.preconditioner == Preconditioner::BlockJacobi;
        const std::string label =
            body.name + " p=" + std::to_string(c.order) + " " + material_name(c.material) + " " +
            summation_method_name(c.method) + (c.drag ? " drag" : "") +
            (jacobi ? "" : std::string(" ") + preconditioner_name(c.preconditioner));
        progress(label);
        JsonObject j;
        j.add("mesh", body.name)
            .add("tets", tets)
            .add("order", c.order)
            .add("method", summation_method_name(c.method))
            .add("material", material_name(c.material))
            .add("scene", c.drag ? "gravity+drag" : "gravity")
            .add("preconditioner", preconditioner_name(c.preconditioner))
            // CUDA: float matrix and PCG under a double Newton level (bench/README.md).
            .add("scalar", backend == Backend::Cuda ? "mixed" : "double");
        try {
            const FrameStats st = measure(body, settings_for(c, backend, o.coarse_iterations), c,
                                          warmup, o.frames, 0);
            j.add("nodes", st.nodes)
                .add("dofs", 3 * std::int64_t(st.nodes))
                .add("pinned_nodes", st.pinned)
                .add("nnz_blocks", st.nnz_blocks)
                .add("matrix_bytes", st.matrix_bytes)
                .add("warmup_frames", warmup);
            add_stats(j, st);
            const double ours = median(st.total);
            if (const auto fps = body.is_box ? target_fps(c, backend, tets) : std::nullopt) {
                JsonObject t;
                t.add("fps", *fps).add("ms", 1000.0 / *fps).add("met", ours <= 1000.0 / *fps);
                j.add("target", t);
            }
            const Baseline b = baseline_for(c);
            j.add("baseline", b.first);
            // Per frame; the baseline's frames are the scene's first ones (see its iterations).
            j.add("speedup_vs_baseline", b.second / ours);
        } catch (const Error& e) {
            // One failing case (out of device memory, a backend limit) must not lose the others
            // of a long run; the run still fails at the end unless it was memory.
            if (e.code() == ErrorCode::Usage || e.code() == ErrorCode::Io) throw;
            if (e.code() != ErrorCode::OutOfMemory) ++failed;
            j.add("skipped", std::string(error_code_name(e.code())) + ": " + e.what());
            progress("  skipped: " + std::string(e.what()));
        }
        cases.push_back(j);
        header.add("inline_summary", inline_summary(cases));
        write_bench_json(o, header, cases, false);
    }
    write_bench_json(o, header, cases, true);
    EDN_VERIFY(failed == 0, ErrorCode::Internal,
               failed << " step case(s) failed; see \"skipped\" in " << o.out);
}

} // namespace edn::bench
