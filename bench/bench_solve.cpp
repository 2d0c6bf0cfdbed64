// `bench solve`: the linear solvers compared on one matrix, the Newton tangent of the first
// Newton iteration of a step at rest, K + M/h^2 (neo-Hookean at rest = linear elastic, HRZ
// lumped mass, backward Euler), with the pins of `bench step` and gravity as right-hand side.
// Every method starts from x = 0 and stops at the same rule ||P(b - A x)||_2 <= tol ||P b||_2;
// each reports setup ms, solve ms and iterations, and its final residual is recomputed here
// with a fresh A x in double, so all are judged alike. The peer is HYPRE's BoomerAMG
// (hypre_peer.hpp) on the same matrix. A method is one entry of solve_methods().
#include "bench_common.hpp"
#include "bench_scene.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "hypre_peer.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sim/material_tangent.hpp"
#include "sim/simulation.hpp"
#include "solver/multigrid.hpp"
#include "solver/pcg.hpp"
#include "solver/two_level.hpp"
#include "sparse/bin_bcsr_pattern.hpp"
#include "sparse/spmv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace edn::bench {
namespace {

constexpr double kYoung = 1.0e5; // as bench step
constexpr double kPoisson = 0.3;
constexpr double kDensity = 1000;
constexpr double kGravity = -9.81;
/// The default box: bench step's GPU scene (127K tets), within --max-tets.
constexpr std::int64_t kBoxTets = 127'008;

/// The linear system of the first Newton iteration of a backward-Euler step from rest.
struct SolveSystem {
    StepScene scene;
    int order = 1;
    double dt = 1.0 / 60.0;
    Topology topology;
    NodeLayout layout;
    BinBcsrPattern pattern;
    BinBcsrMatrix<double> matrix;       ///< K + M/h^2 (pins not applied: the masks do that)
    std::vector<double> element_blocks; ///< K's element blocks (#cells x m x m x 9)
    std::vector<double> node_diagonal;  ///< M/h^2 per node (added times I to the diagonal)
    std::vector<double> rhs;            ///< M g on free dofs, 0 on pinned ones
    std::vector<std::uint8_t> fixed;    ///< #nodes pin mask (bench step's rule)
    std::vector<Vec3> rest;             ///< #nodes rest positions
    Index pinned_nodes = 0;
    double assemble_ms = 0;  ///< topology, pattern, element blocks, summation
    double newton_check = 0; ///< |A v - H v| / |H v|, H from the Simulation
};

/// The system of `scene` at `order` (it points into itself: not movable).
std::unique_ptr<SolveSystem> make_solve_system(const StepScene& scene, int order, double dt) {
    auto s = std::make_unique<SolveSystem>();
    s->scene = scene;
    s->order = order;
    s->dt = dt;
    SimulationSettings settings;
    settings.order = order;
    settings.material = Material::NeoHookean;
    settings.young = kYoung;
    settings.poisson = kPoisson;
    settings.density = kDensity;
    settings.dt = dt;
    settings.integrator = Integrator::BackwardEuler;
    settings.gravity = {0, 0, kGravity};
    settings.preconditioner = Preconditioner::BlockJacobi;
    // Masses and pins exactly as bench step's simulation has them.
    Simulation sim(scene.mesh, settings);
    s->pinned_nodes = sim.pin_below(scene.pin_below);
    s->fixed = sim.pinned();
    const double t0 = now_ms();
    s->topology = build_topology(scene.mesh);
    s->layout = make_node_layout(s->topology, order);
    s->pattern = build_bin_bcsr_pattern(s->topology, scene.mesh.cells, s->layout);
    s->rest = node_positions(scene.mesh, s->topology, s->layout);
    const std::vector<Vec3>& rest = s->rest;
    const std::size_t dofs = 3 * rest.size();
    EDN_VERIFY(rest.size() == sim.lumped_mass().size(), ErrorCode::Internal,
               "bench solve: node count differs from the simulation's");
    // At rest (x = y~, v = 0) the neo-Hookean tangent is the linear elastic one; it is PSD there,
    // so the per-quadrature-point projection of the step leaves it unchanged.
    MaterialTangent tangent = material_tangent(
        Material::NeoHookean, lame_from_young_poisson(kYoung, kPoisson), scene.mesh, s->topology,
        s->layout, s->pattern, rest, std::vector<double>(dofs, 0.0));
    s->matrix = std::move(tangent.stiffness);
    s->matrix.pattern = &s->pattern;
    s->element_blocks = std::move(tangent.element_blocks);
    const Index n = s->layout.num_nodes();
    const double c = 1.0 / (dt * dt);
    s->node_diagonal.resize(n);
    s->rhs.assign(dofs, 0.0);
    for (Index i = 0; i < n; ++i) {
        const double m = sim.lumped_mass()[i];
        s->node_diagonal[i] = m * c;
        for (int k : {0, 4, 8}) s->matrix.diag[k * std::int64_t(n) + i] += m * c;
        if (!s->fixed[i]) s->rhs[3 * i + 2] = m * kGravity; // -dE/dx at y = y~: M g
    }
    s->assemble_ms = now_ms() - t0;
    // The check that this is the step's Newton matrix: the Simulation's own Hessian product.
    std::vector<double> v(dofs), av(dofs);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    for (double& e : v) e = u(rng);
    const std::vector<double> hv = sim.hessian_product(sim.rest_positions(), v);
    cpu::spmv(s->matrix.view(), v.data(), av.data());
    double diff = 0, norm = 0;
    for (std::size_t k = 0; k < dofs; ++k)
        diff += (av[k] - hv[k]) * (av[k] - hv[k]), norm += hv[k] * hv[k];
    s->newton_check = std::sqrt(diff / norm);
    return s;
}

/// Stopping rule shared by all methods.
struct SolveSettings {
    double tolerance = 1e-4;
    int max_iterations = 10000;
};

/// One run of a method: setup (what is done once per matrix), then the solve from x = 0.
struct MethodRun {
    Interval setup; ///< what is done once per matrix (hierarchy, coarse matrix, AMG setup)
    Interval solve; ///< the iterations
    int iterations = 0;
    bool converged = false;
    double reported_residual = std::nan(""); ///< the method's own final relative residual
    JsonObject details;                      ///< method-specific numbers
};

/// A method: x (3 #nodes, zero on entry) receives the solution.
using SolveFunction =
    std::function<MethodRun(const SolveSystem&, const SolveSettings&, std::vector<double>& x)>;

/// One entry of the comparison.
struct SolveMethod {
    std::string name;        ///< the --methods name and the JSON "method"
    std::string description; ///< what it is, for the JSON
    int threads = 1;         ///< threads it computes with
    int min_order = 1;       ///< runs on orders >= min_order only
    bool available = true;   ///< built into this binary
    SolveFunction run;
};

/// The matrix's kernel view: the views take mutable pointers, the methods only read.
BinBcsrMatrixView<double> matrix_view(const SolveSystem& s) {
    return const_cast<BinBcsrMatrix<double>&>(s.matrix).view();
}

PcgSettings pcg_settings(const SolveSettings& s) {
    PcgSettings p;
    p.relative_tolerance = s.tolerance;
    p.max_iterations = s.max_iterations;
    p.warm_start = false;
    return p;
}

MethodRun run_block_jacobi(const SolveSystem& s, const SolveSettings& settings,
                           std::vector<double>& x) {
    // The inverse diagonal blocks are computed inside every solve (the matrix changes every
    // Newton iteration), so the setup is part of the solve.
    MethodRun run;
    PcgWorkspace<double> ws;
    Stopwatch clock;
    const PcgResult r = cpu::pcg(matrix_view(s), s.rhs.data(), x.data(), pcg_settings(settings), ws,
                                 s.fixed.data());
    run.solve = clock.lap();
    run.iterations = r.iterations;
    run.converged = r.converged;
    run.reported_residual = r.final_residual / r.reference_norm;
    run.details.add("breakdown", r.breakdown);
    return run;
}

MethodRun run_two_level(const SolveSystem& s, const SolveSettings& settings,
                        std::vector<double>& x) {
    MethodRun run;
    Stopwatch clock;
    const CoarseSpace space = make_coarse_space(s.scene.mesh, s.topology, s.layout);
    const Interval pattern = clock.lap();
    BinBcsrMatrix<double> coarse(space.pattern);
    std::vector<double> scratch;
    cpu::assemble_coarse(space, s.element_blocks.data(), s.scene.mesh.num_cells(), s.node_diagonal,
                         scratch, coarse);
    const Interval values = clock.lap();
    run.setup = {pattern.wall_ms + values.wall_ms, pattern.cpu_ms + values.cpu_ms};
    PcgSettings inner; // as the CPU backend's Newton solves (cpu/simulation_cpu.cpp)
    inner.relative_tolerance = kCoarseTolerance;
    inner.max_iterations = kCoarseIterationsCpu;
    TwoLevelWorkspace ws;
    clock.lap();
    const PcgResult r =
        cpu::pcg_two_level(matrix_view(s), space, coarse.view(), s.rhs.data(), x.data(),
                           pcg_settings(settings), inner, ws, s.fixed.data());
    run.solve = clock.lap();
    run.iterations = r.iterations;
    run.converged = r.converged;
    run.reported_residual = r.final_residual / r.reference_norm;
    run.details.add("setup_pattern_ms", pattern.wall_ms)
        .add("setup_values_ms", values.wall_ms)
        .add("coarse_nodes", space.num_vertices)
        .add("coarse_iterations_total", ws.inner_iterations)
        .add("coarse_solve", "block-Jacobi PCG, tol " + std::to_string(kCoarseTolerance) +
                                 ", at most " + std::to_string(kCoarseIterationsCpu) +
                                 " iterations, flexible outer CG")
        .add("breakdown", r.breakdown);
    return run;
}

MethodRun run_multigrid_with(const SolveSystem& s, const SolveSettings& settings,
                             const MultigridSettings& mg, std::vector<double>& x) {
    MethodRun run;
    Stopwatch clock;
    // As the CPU backend builds it (cpu/simulation_cpu.cpp, with simulation_multigrid_settings
    // from the callers): p = 1 aggregates the nodes with the
    // rigid-body modes of their rest positions; p >= 2 first restricts to the P1 space.
    MultigridHierarchy h;
    std::vector<double> positions(3 * s.rest.size());
    for (std::size_t i = 0; i < s.rest.size(); ++i)
        for (int d = 0; d < 3; ++d) positions[3 * i + d] = s.rest[i][d];
    if (s.order == 1) {
        h = cpu::build_multigrid(s.pattern, positions.data(), s.fixed.data(), mg);
    } else {
        const CoarseSpace space = make_coarse_space(s.scene.mesh, s.topology, s.layout);
        const GivenTransfer p1 = p1_transfer(space, s.scene.mesh, s.fixed.data());
        h = cpu::build_multigrid(s.pattern, nullptr, s.fixed.data(), mg, &p1);
    }
    const Interval build = clock.lap();
    // the backends' re-value: the tentative prolongators at the current positions, then the maps
    cpu::retentative_multigrid(h, positions.data());
    const Interval modes = clock.lap();
    cpu::revalue_multigrid(h, matrix_view(s));
    const Interval values = clock.lap();
    run.setup = {build.wall_ms + modes.wall_ms + values.wall_ms,
                 build.cpu_ms + modes.cpu_ms + values.cpu_ms};
    PcgWorkspace<double> ws;
    clock.lap();
    const PcgResult r = cpu::pcg_multigrid(matrix_view(s), h, s.rhs.data(), x.data(),
                                           pcg_settings(settings), ws, s.fixed.data());
    run.solve = clock.lap();
    run.iterations = r.iterations;
    run.converged = r.converged;
    run.reported_residual = r.final_residual / r.reference_norm;
    const MultigridStats stats = cpu::multigrid_stats(h, s.pattern);
    run.details.add("setup_build_ms", build.wall_ms)
        .add("setup_retentative_ms", modes.wall_ms)
        .add("setup_revalue_ms", values.wall_ms)
        .add("setup_revalue_cpu_ms", values.cpu_ms)
        .add("levels", h.num_levels())
        .add("level_nodes", stats.level_nodes)
        .add("level_nnz_blocks", stats.level_nnz_blocks)
        .add("operator_complexity", h.operator_complexity(s.pattern.nnz_blocks()))
        .add("breakdown", r.breakdown);
    return run;
}

MethodRun run_multigrid(const SolveSystem& s, const SolveSettings& settings,
                        std::vector<double>& x) {
    return run_multigrid_with(s, settings, simulation_multigrid_settings(s.order), x);
}

MethodRun run_multigrid_parallel(const SolveSystem& s, const SolveSettings& settings,
                                 std::vector<double>& x) {
    MultigridSettings mg = simulation_multigrid_settings(s.order);
    mg.aggregation = Aggregation::Parallel;
    return run_multigrid_with(s, settings, mg, x);
}

SolveFunction hypre_method(HypreMode mode, bool rigid_body_modes) {
    return [=](const SolveSystem& s, const SolveSettings& settings, std::vector<double>& x) {
        HypreOptions options;
        options.mode = mode;
        options.tolerance = settings.tolerance;
        options.max_iterations = settings.max_iterations;
        if (rigid_body_modes) options.rigid_body_positions = s.rest.data();
        const HypreRun h = hypre_solve(s.matrix, s.fixed.data(), s.rhs.data(), x.data(), options);
        MethodRun run;
        run.setup = h.setup;
        run.solve = h.solve;
        run.iterations = h.iterations;
        run.converged = h.converged;
        run.reported_residual = h.reported_relative_residual;
        run.details.add("convert_ms", h.convert.wall_ms)
            .add("max_abs_x_on_pinned_rows", h.max_pinned_value);
        return run;
    };
}

/// Every method, in the order they run (the first that runs is the reference of the solution
/// differences). A method is a name, a description and a function that times its own setup and
/// solve (MethodRun); run_solve_bench does the rest (repeats, recomputed residual, JSON, table).
std::vector<SolveMethod> solve_methods() {
    std::vector<SolveMethod> out;
    out.push_back(
        {"block_jacobi",
         "cpu::pcg: CG preconditioned by the inverse 3x3 diagonal blocks (solver/pcg.hpp; "
         "inverted inside every solve, so its setup is in solve_ms)",
         num_threads(), 1, true, run_block_jacobi});
    out.push_back({"two_level",
                   "cpu::pcg_two_level: flexible CG, block Jacobi + inexact P1 Galerkin coarse "
                   "correction (solver/two_level.hpp)",
                   num_threads(), 2, true, run_two_level});
    out.push_back({"multigrid",
                   "cpu::pcg_multigrid: CG preconditioned by one smoothed-aggregation V-cycle "
                   "(solver/multigrid.hpp; p >= 2: p-multigrid to P1 first); setup = symbolic "
                   "build + re-value",
                   num_threads(), 1, true, run_multigrid});
    out.push_back({"multigrid_parallel_aggregation",
                   "as multigrid, with Aggregation::Parallel (a distance-2 maximal independent "
                   "set of roots in data-parallel rounds: the shape of a GPU build)",
                   num_threads(), 1, true, run_multigrid_parallel});
    out.push_back({"hypre_pcg_boomeramg",
                   "HYPRE PCG (2-norm rule) preconditioned by one BoomerAMG V-cycle", 1, 1,
                   hypre_built(), hypre_method(HypreMode::PcgAmg, false)});
    out.push_back({"hypre_pcg_boomeramg_rbm",
                   "as hypre_pcg_boomeramg, with the rigid rotations in the interpolation "
                   "(GM-2, Q truncated to 4)",
                   1, 1, hypre_built(), hypre_method(HypreMode::PcgAmg, true)});
    out.push_back({"hypre_boomeramg", "BoomerAMG V-cycles as the solver (no CG)", 1, 1,
                   hypre_built(), hypre_method(HypreMode::Amg, false)});
    return out;
}

/// The methods `o` asks for (all by default) that apply at `order` and are built; throws
/// edn::Error(Usage) for a name that is no method.
std::vector<SolveMethod> methods_for(const Options& o, int order) {
    const std::vector<SolveMethod> all = solve_methods();
    std::string names;
    for (const SolveMethod& m : all) names += (names.empty() ? "" : ", ") + m.name;
    for (const std::string& name : o.methods)
        EDN_VERIFY(std::any_of(all.begin(), all.end(),
                               [&](const SolveMethod& m) { return m.name == name; }),
                   ErrorCode::Usage, "--methods: no method '" << name << "' (" << names << ")");
    std::vector<SolveMethod> out;
    for (const SolveMethod& m : all)
        if (m.available && order >= m.min_order &&
            (o.methods.empty() ||
             std::find(o.methods.begin(), o.methods.end(), m.name) != o.methods.end()))
            out.push_back(m);
    return out;
}

/// ||P(b - A x)|| / ||P b|| with a fresh A x (x's pinned entries as given: zero).
double relative_residual(const SolveSystem& s, const std::vector<double>& x) {
    std::vector<double> ax(x.size());
    cpu::spmv(matrix_view(s), x.data(), ax.data());
    double r2 = 0, b2 = 0;
    for (std::size_t k = 0; k < x.size(); ++k) {
        if (s.fixed[k / 3]) continue;
        r2 += (s.rhs[k] - ax[k]) * (s.rhs[k] - ax[k]);
        b2 += s.rhs[k] * s.rhs[k];
    }
    return std::sqrt(r2 / b2);
}

double relative_difference(const std::vector<double>& x, const std::vector<double>& reference) {
    double d2 = 0, r2 = 0;
    for (std::size_t k = 0; k < x.size(); ++k)
        d2 += (x[k] - reference[k]) * (x[k] - reference[k]), r2 += reference[k] * reference[k];
    return r2 > 0 ? std::sqrt(d2 / r2) : std::sqrt(d2);
}

/// The 1, 5 and 15 minute load averages of the host (/proc/loadavg; empty where absent): timings
/// on a shared 2-core machine are only as good as the load they ran under.
std::vector<double> load_averages() {
    std::vector<double> out(3);
    if (FILE* file = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(file, "%lf %lf %lf", &out[0], &out[1], &out[2]) != 3) out.clear();
        std::fclose(file);
    } else {
        out.clear();
    }
    return out;
}

} // namespace

void run_solve_bench(const Options& o) {
    EDN_VERIFY(o.backend == "cpu", ErrorCode::Usage,
               "bench solve runs on the CPU (double); --backend " << o.backend
                                                                  << " is not offered");
    SolveSettings settings;
    settings.tolerance = o.tolerance;
    settings.max_iterations = o.max_iterations;
    const std::vector<int> orders = o.orders_given ? o.orders : std::vector<int>{1};
    const StepScene scene =
        o.mesh.empty() ? box_scene(step_box(std::min(o.max_tets, kBoxTets))) : file_scene(o.mesh);
    for (int order : orders) methods_for(o, order); // a bad --methods fails before the work
    if (!hypre_built()) std::cout << "hypre: not built" << std::endl;

    JsonObject header = bench_header(o, "cpu (" + std::to_string(num_threads()) + " threads)");
    header
        .add("scene",
             JsonObject()
                 .add("mesh", scene.name)
                 .add("tets", scene.mesh.num_cells())
                 .add("vertices", scene.mesh.num_vertices())
                 .add("matrix", "K + M/h^2: Newton tangent of the first iteration of a "
                                "backward-Euler step at rest (neo-Hookean = linear elastic "
                                "there), HRZ lumped mass")
                 .add("E", kYoung)
                 .add("nu", kPoisson)
                 .add("rho", kDensity)
                 .add("dt", o.dt)
                 .add("rhs", "gravity M g (free dofs)")
                 .add("pins", scene.is_box ? "nodes with rest z < a quarter cell (bottom face)"
                                           : "nodes with rest z in the lowest 2% of the height")
                 .add("relative_tolerance", settings.tolerance)
                 .add("max_iterations", settings.max_iterations)
                 .add("stopping_rule", "||P(b - A x)||_2 <= tol ||P b||_2 from x = 0")
                 .add("relative_residual", "recomputed here: ||P(b - A x)||_2 / ||P b||_2 with "
                                           "a fresh A x in double"))
        .add("load_average_at_start", load_averages())
        .add("hypre", hypre_settings())
        .add("hypre_built", hypre_built());

    std::vector<JsonObject> cases;
    for (int order : orders) {
        progress(scene.name + " p=" + std::to_string(order) + ": assembling");
        const std::unique_ptr<SolveSystem> system = make_solve_system(scene, order, o.dt);
        const SolveSystem& s = *system;
        const Index n = s.layout.num_nodes();
        JsonObject c;
        c.add("mesh", scene.name)
            .add("tets", scene.mesh.num_cells())
            .add("order", order)
            .add("nodes", n)
            .add("dofs", 3 * std::int64_t(n))
            .add("free_dofs", 3 * std::int64_t(n - s.pinned_nodes))
            .add("pinned_nodes", s.pinned_nodes)
            .add("nnz_blocks", s.pattern.nnz_blocks())
            .add("assemble_ms", s.assemble_ms)
            .add("newton_matrix_check", s.newton_check);
        std::cout
            << "bench solve: " << scene.name << " p=" << order << ", " << n << " nodes, "
            << 3 * std::int64_t(n - s.pinned_nodes) << " free dofs, K + M/h^2 (h = " << o.dt
            << "), tol " << settings.tolerance << "\n"
            << "  method                   setup ms (cpu)       solve ms (cpu)     its  ms/it  "
               "conv  rel.resid.  diff to first\n";
        std::vector<JsonObject> results;
        std::vector<double> reference;
        for (const SolveMethod& m : methods_for(o, order)) {
            progress("  " + m.name);
            std::vector<double> setup, solve, setup_cpu, solve_cpu;
            MethodRun run;
            std::vector<double> x;
            for (int rep = 0; rep < o.repeat; ++rep) {
                x.assign(3 * static_cast<std::size_t>(n), 0.0);
                run = m.run(s, settings, x);
                setup.push_back(run.setup.wall_ms);
                solve.push_back(run.solve.wall_ms);
                setup_cpu.push_back(run.setup.cpu_ms);
                solve_cpu.push_back(run.solve.cpu_ms);
            }
            const double residual = relative_residual(s, x);
            if (reference.empty()) reference = x;
            const double diff = relative_difference(x, reference);
            const double solve_ms = median(solve);
            JsonObject j;
            j.add("method", m.name)
                .add("description", m.description)
                .add("threads", m.threads)
                .add("setup_ms", median(setup))
                .add("solve_ms", solve_ms)
                .add("total_ms", median(setup) + solve_ms)
                .add("setup_cpu_ms", median(setup_cpu))
                .add("solve_cpu_ms", median(solve_cpu))
                .add("iterations", run.iterations)
                .add("ms_per_iteration", run.iterations > 0 ? solve_ms / run.iterations : 0.0)
                .add("converged", run.converged)
                .add("relative_residual", residual)
                .add("reported_relative_residual", run.reported_residual)
                .add("difference_to_reference", diff)
                .add("details", run.details);
            results.push_back(j);
            std::printf("  %-24s %8.1f (%8.1f) %8.1f (%8.1f) %5d %6.2f  %-4s  %9.2e  %.1e\n",
                        m.name.c_str(), median(setup), median(setup_cpu), solve_ms,
                        median(solve_cpu), run.iterations,
                        run.iterations > 0 ? solve_ms / run.iterations : 0.0,
                        run.converged ? "yes" : "NO", residual, diff);
            std::fflush(stdout);
        }
        c.add("load_average_at_end", load_averages());
        c.add("reference_method", results.empty() ? Json() : results.front().json()["method"])
            .add("methods", results);
        cases.push_back(c);
        write_bench_json(o, header, cases, false);
    }
    write_bench_json(o, header, cases, true);
}

} // namespace edn::bench
