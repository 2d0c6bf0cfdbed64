// `elastodyn-cli simulate`: runs frames of the engine without a window and records what every
// frame did (run.json), the final state (.vtu for ParaView) and, with --series and
// --surface-series, an animation (sim/frame_series.hpp).
#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "mesh/cut.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/vtu_io.hpp"
#include "sim/convergence.hpp"
#include "sim/frame_series.hpp"
#include "sim/names.hpp"
#include "sim/presets.hpp"
#include "sim/scene_file.hpp"
#include "sim/settings_json.hpp"
#include "sim/settings_options.hpp"
#include "sim/simulation.hpp"
#include "sim/state_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <utility>

namespace edn::cli {
namespace {

/// Finite numbers separated by spaces and/or commas; calls usage_error(expected) on anything else.
std::vector<double> parse_numbers(const std::string& text, const std::string& expected) {
    std::optional<std::vector<double>> values = parse_number_list(text);
    if (!values) usage_error(expected);
    return std::move(*values);
}

/// "px py pz nx ny nz" (spaces and/or commas): a point on the plane and its normal.
CutPlane parse_cut_plane(const std::string& text) {
    const std::string expected = "simulate: option '--cut-plane': expected \"px py pz nx ny nz\" "
                                 "with a non-zero normal, got '" +
                                 text + "'";
    const std::vector<double> values = parse_numbers(text, expected);
    if (values.size() != 6 || (values[3] == 0 && values[4] == 0 && values[5] == 0))
        usage_error(expected);
    CutPlane plane;
    plane.point = {values[0], values[1], values[2]};
    plane.normal = {values[3], values[4], values[5]};
    return plane;
}

/// A --refine-sphere request.
struct RefineSphere {
    Vec3 center{};
    double radius = 0;
};

/// "cx cy cz r" (spaces and/or commas): the sphere whose cells are refined.
RefineSphere parse_refine_sphere(const std::string& text) {
    const std::string expected = "simulate: option '--refine-sphere': expected \"cx cy cz r\" "
                                 "with a finite center and a radius > 0, got '" +
                                 text + "'";
    const std::vector<double> values = parse_numbers(text, expected);
    if (values.size() != 4 || !(values[3] > 0)) usage_error(expected);
    return {{values[0], values[1], values[2]}, values[3]};
}

/// Per vertex: 1 when its connected component (cells sharing a vertex) holds no pinned vertex
/// node, i.e. the vertex belongs to a part that can fall away. Pins of higher-order nodes imply
/// pinned vertices for --pin-below (an edge/face node below Z has a vertex below Z).
std::vector<std::uint8_t> free_vertices(const Simulation& sim) {
    const TetMesh& mesh = sim.mesh();
    std::vector<Index> parent(mesh.num_vertices());
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](Index v) {
        while (parent[v] != v) v = parent[v] = parent[parent[v]];
        return v;
    };
    for (const Cell& c : mesh.cells)
        for (int i = 1; i < 4; ++i) parent[find(c[i])] = find(c[0]);
    std::vector<std::uint8_t> pinned_root(mesh.num_vertices(), 0);
    for (Index v = 0; v < mesh.num_vertices(); ++v)
        if (sim.pinned()[v]) pinned_root[find(v)] = 1;
    std::vector<std::uint8_t> result(mesh.num_vertices());
    for (Index v = 0; v < mesh.num_vertices(); ++v) result[v] = pinned_root[find(v)] ? 0 : 1;
    return result;
}

JsonObject times_json(const StageTimes& t) {
    JsonObject j;
    j.add("element", t.element)
        .add("summation", t.summation)
        .add("pcg", t.pcg)
        .add("line_search", t.line_search)
        .add("total", t.total);
    return j;
}

} // namespace

int run_simulate(const std::vector<std::string>& arguments) {
    std::vector<OptionSpec> specs = meshing_option_specs();
    const std::vector<OptionSpec> own = {
        {"scene", "FILE",
         "run the scene FILE (docs/SCENES.md): mesh, meshing, settings, pins, frames, timed "
         "actions; MESH and any option given here override the scene's value (--pin-below "
         "replaces its pins; --cut-plane, --refine-* add to its actions; default none)"},
        {"preset", "NAME",
         preset_names() + ": sets E, nu and rho (sim/presets.cpp; default none); explicit --E, "
                          "--nu, --rho win over it"},
        {"order", "P", "polynomial order 1..3 (default 1)"},
        {"material", "M", names_list<Material>() + " (default neohookean)"},
        {"E", "E", "Young's modulus [Pa] (default 1e5)"},
        {"nu", "NU", "Poisson's ratio in (-1, 0.5) (default 0.3)"},
        {"rho", "RHO", "density [kg/m^3] (default 1000)"},
        {"frames", "N", "number of steps (default 60)"},
        {"dt", "H", "time step [s] (default 1/60)"},
        {"static", "", "solve for equilibrium instead of stepping in time"},
        {"integrator", "I", "backward_euler | midpoint (default backward_euler)"},
        {"backend", "B", names_list<Backend>() + " (default cpu)"},
        {"summation", "S", names_list<SummationMethod>() + " (default auto)"},
        {"preconditioner", "P",
         "multigrid (smoothed aggregation, p-multigrid for p >= 2) | two_level (p >= 2: "
         "block Jacobi + P1 coarse correction; at p = 1 multigrid) | block_jacobi "
         "(default multigrid)"},
        {"pin-below", "Z", "pin every node whose rest z is below Z (default none: nothing pinned)"},
        {"gravity", "G", "g along -z, or gx,gy,gz (default 9.81)"},
        {"damping", "A", "mass-proportional damping [1/s] (default 0)"},
        {"stiffness-damping", "B",
         "stiffness-proportional (Rayleigh beta) damping [s] (default 0)"},
        {"newton", "K",
         "cap on Newton iterations per frame (default 40); Newton stops when it meets "
         "--newton-tol"},
        {"newton-tol", "T", "Newton decrement tolerance, relative to the first (default 1e-3)"},
        {"frame-budget-ms", "MS",
         "wall-clock budget of a frame's Newton iterations, checked between iterations (default "
         "0: none, deterministic)"},
        {"cg-tol", "T", "PCG relative tolerance; with --cg-forcing its floor (default 1e-4)"},
        {"cg-max", "K", "PCG iteration cap (default 1000)"},
        {"cg-forcing", "on|off",
         "inexact Newton: each solve's CG tolerance follows the gradient's decrease (Eisenstat-"
         "Walker, at most 0.1), at least --cg-tol; off: every solve to --cg-tol (default on)"},
        {"multigrid-refresh", "step|iteration",
         "multigrid: re-value the hierarchy once per frame (reused by the frame's later Newton "
         "iterations; default) or at every Newton iteration"},
        {"multigrid-lag", "N",
         "multigrid: at most N time steps share one re-value of the hierarchy, which is re-valued "
         "sooner when its solves slow down or fail (default 2; 1: every step)"},
        {"multigrid-modes", "current|rest",
         "multigrid: the tentative prolongators' rigid-body modes follow the current positions "
         "(recomputed at each re-value; default) or stay those of the rest positions"},
        {"projection", "on_demand|always|never",
         "PSD projection of the element Hessians (per quadrature point): on_demand takes the exact "
         "Hessian and projects for the rest of a frame (and a few more) once a solve shows it is "
         "not positive definite (default); always projects at every Newton iteration (robust, but "
         "Newton converges only linearly where elements are compressed); never: exact"},
        {"exact-hessian", "", "do not project element Hessians to PSD (= --projection never)"},
        {"deterministic", "",
         "cuda: bitwise-reproducible runs (sorted summation maps, and large p = 1 solves skip "
         "the faster upper-part SpMV, whose float atomics vary in the last bits)"},
        {"ground", "Z", "penalty ground plane at height Z (default none: no ground)"},
        {"ground-friction", "F",
         "viscous friction [1/s] of the nodes on the --ground plane (default 0)"},
        {"cut-plane", "PLANE",
         "cut along the plane \"px py pz nx ny nz\" (or comma-separated; default none)"},
        {"cut-frame", "K", "cut before frame K (default 0: before the first frame)"},
        {"cut-mode", "M",
         "split (split the crossed cells along the blade; default) or faces (open existing "
         "faces near it)"},
        {"refine-sphere", "SPHERE",
         "refine the cells touching the sphere \"cx cy cz r\" (or comma-separated; default none)"},
        {"refine-levels", "L", "bisection rounds of --refine-sphere, 1..8 (default 3)"},
        {"refine-uniform", "", "refine every cell into 8 instead"},
        {"refine-frame", "K",
         "refine before frame K (default 0); after the cut when both are at frame K"},
        {"out", "run.json", "per-frame record (default none: not written)"},
        {"vtu", "out.vtu",
         "final state: every node, displacement, velocity, pinned, von Mises stress per cell "
         "(default none)"},
        {"series", "DIR",
         "ParaView time series: DIR/frame_NNNNN.vtu (the arrays of --vtu, binary) every --every "
         "frames, frame 0 the initial state, and DIR/series.pvd (time = frame * dt); DIR is "
         "created if missing (default none)"},
        {"surface-series", "DIR",
         "surface sequence for DCC tools (Blender, Houdini): DIR/frame_NNNNN.obj (or .ply) every "
         "--every frames, the deformed boundary triangles over their corner vertices (p >= 2: "
         "each face curved through its nodes, 4 x 4 or 6 x 6 triangles), each file "
         "self-contained (a cut or refinement mid-run changes the counts of the later files); DIR "
         "is created if missing (default none)"},
        {"surface-format", "obj|ply",
         "with --surface-series: OBJ text or binary little-endian PLY (default obj)"},
        {"every", "K", "with --series / --surface-series: record every K-th frame (default 1)"},
        {"save-state", "FILE",
         "write the final state (mesh after cuts and refinements, node state, pins, settings) "
         "for --load-state or the app (default none)"},
        {"load-state", "FILE",
         "resume from a saved state instead of MESH: its mesh, node state, pins and settings; "
         "options given here override its settings, --pin-below adds pins (default none)"},
    };
    specs.insert(specs.begin(), own.begin(), own.end());
    const Args args("simulate", arguments, specs);
    if (args.help_requested()) {
        std::cout << args.usage("MESH [options] | --scene FILE [MESH] [options]")
                  << "Runs the simulation headless. Defaults: the options' own, or with --scene "
                     "the scene's values (which default to the options')\n";
        return 0;
    }
    // A scene supplies the mesh, the settings' and meshing options' starting values, pins,
    // frames and actions; the command line overrides them.
    std::optional<SceneFile> scene;
    if (args.has("scene")) scene = load_scene_file(args.string_or("scene", ""));
    // A saved state supplies the mesh, settings, node state and pins instead.
    std::optional<SimulationState> loaded;
    std::string state_path;
    if (args.has("load-state")) {
        if (scene) usage_error("simulate: options '--load-state' and '--scene' exclude each other");
        if (!args.positionals().empty())
            usage_error("simulate: MESH and option '--load-state' exclude each other");
        state_path = args.string_or("load-state", "");
        loaded = read_state_file(state_path);
    }
    if ((!scene && !loaded) || !args.positionals().empty()) args.expect_positionals({"MESH"});
    constexpr double huge = std::numeric_limits<double>::max();
    // The settings options are parsed by the app's parser too (sim/settings_options.hpp).
    SimulationSettings s = scene    ? scene->settings
                           : loaded ? loaded->settings
                                    : SimulationSettings{};
    std::vector<std::pair<std::string, std::string>> given;
    for (const SettingsOption& option : settings_options())
        if (args.has(option.name)) given.emplace_back(option.name, args.string_or(option.name, ""));
    apply_settings_options(given, s, "simulate");
    const long long frames =
        args.integer_or("frames", scene ? scene->frames.value_or(60) : 60, 0, 100000000);
    const std::string path = !args.positionals().empty() ? args.positionals()[0]
                             : scene                     ? scene->mesh.string()
                                                         : state_path;

    std::optional<CutPlane> cut_plane;
    if (args.has("cut-plane")) cut_plane = parse_cut_plane(args.string_or("cut-plane", ""));
    if (args.has("cut-frame") && !cut_plane)
        usage_error("simulate: option '--cut-frame' needs '--cut-plane'");
    if (args.has("cut-mode") && !cut_plane)
        usage_error("simulate: option '--cut-mode' needs '--cut-plane'");
    const CutMode cut_mode =
        parse_cut_mode(args.string_or("cut-mode", "split"), "simulate: option '--cut-mode'");
    const long long cut_frame = args.integer_or("cut-frame", 0, 0, frames);
    std::optional<RefineSphere> refine_sphere_request;
    if (args.has("refine-sphere"))
        refine_sphere_request = parse_refine_sphere(args.string_or("refine-sphere", ""));
    const bool refine_uniform_request = args.flag("refine-uniform");
    if (refine_sphere_request && refine_uniform_request)
        usage_error(
            "simulate: options '--refine-sphere' and '--refine-uniform' exclude each other");
    if (args.has("refine-levels") && !refine_sphere_request)
        usage_error("simulate: option '--refine-levels' needs '--refine-sphere'");
    const bool refine = refine_sphere_request || refine_uniform_request;
    if (args.has("refine-frame") && !refine)
        usage_error(
            "simulate: option '--refine-frame' needs '--refine-sphere' or '--refine-uniform'");
    const int refine_levels = static_cast<int>(args.integer_or("refine-levels", 3, 1, 8));
    const long long refine_frame = args.integer_or("refine-frame", 0, 0, frames);
    if (args.has("every") && !args.has("series") && !args.has("surface-series"))
        usage_error("simulate: option '--every' needs '--series' or '--surface-series'");
    if (args.has("surface-format") && !args.has("surface-series"))
        usage_error("simulate: option '--surface-format' needs '--surface-series'");
    const std::string format_name = args.string_or("surface-format", "obj");
    const std::optional<SurfaceFormat> surface_format = parse_surface_format(format_name);
    if (!surface_format)
        usage_error("simulate: option '--surface-format': expected obj or ply, got '" +
                    format_name + "'");
    const long long every = args.integer_or("every", 1, 1, std::numeric_limits<long long>::max());

    // Every output is checked before the run, and published only when all are written.
    OutputFiles outputs;
    if (loaded)
        outputs.add_input(path, "--load-state");
    else
        add_mesh_inputs(outputs, path);
    if (scene) outputs.add_input(scene->path, "--scene");
    std::optional<std::filesystem::path> state_file;
    if (args.has("save-state"))
        state_file = outputs.add(args.string_or("save-state", ""), "--save-state");
    std::optional<std::filesystem::path> run_file, vtu_file;
    if (args.has("out")) run_file = outputs.add(args.string_or("out", ""), "--out");
    if (args.has("vtu")) vtu_file = outputs.add(args.string_or("vtu", ""), "--vtu");
    // Directories written as the run goes (so ParaView can follow it); their files are removed
    // again when the run fails (SeriesDirectory).
    std::optional<VtuSeries> series;
    if (args.has("series")) {
        const std::string dir = args.string_or("series", "");
        if (dir.empty()) usage_error("simulate: option '--series': expected a directory");
        series.emplace(dir, every);
    }
    std::optional<SurfaceSeries> surface_series;
    if (args.has("surface-series")) {
        const std::string dir = args.string_or("surface-series", "");
        if (dir.empty()) usage_error("simulate: option '--surface-series': expected a directory");
        surface_series.emplace(dir, every, *surface_format);
    }

    std::unique_ptr<Simulation> owned;
    if (loaded) {
        owned = restore_simulation(*loaded, path);
        // Only a real change rebuilds (carrying the state over): the same settings resume
        // bit for bit.
        Json before = Json::object(), after = Json::object();
        write_settings_json(loaded->settings, nullptr, before);
        write_settings_json(s, nullptr, after);
        if (before != after) owned->change_settings(s);
    } else {
        owned = std::make_unique<Simulation>(
            load_tet_mesh(path,
                          meshing_options(args, scene ? scene->meshing : TetrahedralizeOptions{})),
            s);
    }
    Simulation& sim = *owned;
    // No undo here: keep no snapshot of the mesh before a cut or refinement.
    TopologyChangeOptions topology_options;
    topology_options.undo_depth = 0;
    topology_options.cut_mode = cut_mode;
    sim.set_topology_options(topology_options);
    // One snapshot of frame f for both sequences.
    auto record_frame = [&](long long f) {
        if (!(series && series->wants(f)) && !(surface_series && surface_series->wants(f))) return;
        const FrameSnapshot snapshot = take_snapshot(sim, series && series->wants(f));
        if (series) series->record(f, static_cast<double>(f) * s.dt, snapshot);
        if (surface_series) surface_series->record(f, snapshot);
    };
    Index pinned = 0;
    if (args.has("pin-below")) {
        pinned = sim.pin_below(args.real_or("pin-below", 0.0, -huge, huge));
    } else if (scene && !scene->pins.empty()) {
        sim.set_vertex_pins(scene_vertex_pins(*scene, sim.mesh()));
        pinned = static_cast<Index>(std::count(sim.pinned().begin(), sim.pinned().end(), 1));
    } else if (loaded) {
        pinned = static_cast<Index>(std::count(sim.pinned().begin(), sim.pinned().end(), 1));
    }
    // The scene's actions due before frame f (all of them left when f is the end).
    std::size_t next_action = 0;
    auto apply_scene_actions = [&](long long f) {
        for (;
             scene && next_action < scene->actions.size() && scene->actions[next_action].frame <= f;
             ++next_action)
            apply_scene_action(sim, scene->actions[next_action]);
    };

    Json frame_records = Json::array();
    bool cut_done = false, refine_done = false;
    // Applies the requested refinement (the Simulation records it).
    auto apply_refine = [&] {
        if (refine_sphere_request)
            sim.refine_sphere(refine_sphere_request->center, refine_sphere_request->radius,
                              refine_levels);
        else
            sim.refine_uniform();
        refine_done = true;
    };
    std::vector<std::uint8_t> is_free = free_vertices(sim);
    StageTimes sum{};
    long long newton_total = 0, cg_total = 0, recovered = 0;
    ConvergenceTally convergence;
    const long long steps =
        s.integrator == Integrator::Static ? std::max(1LL, std::min(frames, 1LL)) : frames;
    for (long long f = 0; f < steps; ++f) {
        if (scene && next_action < scene->actions.size() &&
            scene->actions[next_action].frame <= f) {
            apply_scene_actions(f);
            is_free = free_vertices(sim);
        }
        if (cut_plane && !cut_done && f == cut_frame) {
            sim.cut(*cut_plane);
            cut_done = true;
            is_free = free_vertices(sim);
        }
        // Cut first, then refine: the refinement sees the cut mesh.
        if (refine && !refine_done && f == refine_frame) {
            apply_refine();
            is_free = free_vertices(sim);
        }
        // Frame f: the state after f steps, with the topology changes requested before frame f.
        record_frame(f);
        // A static solve of a part that nothing holds has no equilibrium: the system is singular.
        if (s.integrator == Integrator::Static && !s.ground_height) {
            const auto free = std::count(is_free.begin(), is_free.end(), std::uint8_t{1});
            if (free > 0)
                usage_error("simulate: --static: " + std::to_string(free) + " of " +
                            std::to_string(is_free.size()) +
                            " vertices belong to parts with no pinned node, which have no "
                            "equilibrium (pin them with --pin-below Z or add --ground Z)");
        }
        const StepResult r = sim.step();
        // Lowest node, and lowest vertex of the parts holding no pin (null when none).
        const std::vector<double> xf = sim.positions();
        // Every number reported must be finite; a run that is not fails at its first such frame
        // and writes nothing (run.json of a failed run would be all nulls after that frame).
        const std::pair<const char*, double> reported[] = {{"initial_residual", r.initial_residual},
                                                           {"final_residual", r.final_residual},
                                                           {"potential", r.potential},
                                                           {"strain_energy", r.strain_energy},
                                                           {"kinetic_energy", r.kinetic_energy}};
        const char* scale_hint = " (mesh size, dt, rho, E or gravity out of scale?)";
        for (const auto& [key, value] : reported)
            EDN_VERIFY(std::isfinite(value), ErrorCode::Numerical,
                       path << ": frame " << f << ": " << key << " is "
                            << (std::isnan(value) ? "NaN" : "infinite") << scale_hint);
        EDN_VERIFY(std::all_of(xf.begin(), xf.end(), [](double v) { return std::isfinite(v); }),
                   ErrorCode::Numerical,
                   path << ": frame " << f << ": positions are not finite" << scale_hint);
        double min_z = std::numeric_limits<double>::infinity(), free_min_z = min_z;
        for (std::size_t i = 2; i < xf.size(); i += 3) min_z = std::min(min_z, xf[i]);
        for (std::size_t v = 0; v < is_free.size(); ++v)
            if (is_free[v]) free_min_z = std::min(free_min_z, xf[3 * v + 2]);
        newton_total += r.newton_iterations;
        cg_total += r.cg_iterations;
        recovered += r.recovered;
        convergence.add(r);
        sum.element += r.times.element, sum.summation += r.times.summation, sum.pcg += r.times.pcg,
            sum.line_search += r.times.line_search, sum.total += r.times.total;
        JsonObject j;
        j.add("frame", f)
            .add("newton_iterations", r.newton_iterations)
            .add("cg_iterations", r.cg_iterations)
            .add("initial_residual", r.initial_residual)
            .add("final_residual", r.final_residual)
            .add("potential", r.potential)
            .add("strain_energy", r.strain_energy)
            .add("kinetic_energy", r.kinetic_energy)
            .add("converged", r.converged)
            .add("stop", name_of(r.stop))
            .add("relative_decrement", r.relative_decrement)
            .add("line_search_failures", r.line_search_failures)
            .add("recovered", r.recovered)
            .add("components", sim.components())
            .add("min_z", min_z)
            .add("free_min_z", free_min_z)
            .add("ms", times_json(r.times))
            .add("newton", JsonObject()
                               .add("residuals", r.residuals)
                               .add("relative_decrements", r.relative_decrements)
                               .add("cg_iterations", r.solve_iterations)
                               .add("step_lengths", r.step_lengths)
                               .add("projection_fallbacks", r.projection_fallbacks)
                               .add("truncated_solves", r.truncated_solves)
                               .add("projected", r.projected));
        frame_records.push_back(j.json());
    }
    // Requested after the last frame (Simulation::frame() == steps).
    apply_scene_actions(steps);
    if (cut_plane && !cut_done) sim.cut(*cut_plane);
    if (refine && !refine_done) apply_refine();
    record_frame(steps);
    const std::vector<double> x = sim.positions();
    bool finite = true;
    for (double v : x) finite = finite && std::isfinite(v);
    // Checked per frame above; a refinement or cut after the last frame moves no node.
    EDN_VERIFY(finite, ErrorCode::Numerical, path << ": the final positions are not finite");

    JsonObject settings;
    settings.add("order", s.order)
        .add("material", material_name(s.material))
        .add("E", s.young)
        .add("nu", s.poisson)
        .add("rho", s.density)
        .add("dt", s.dt)
        .add("integrator", integrator_name(s.integrator))
        .add("backend", backend_name(s.backend))
        .add("summation", summation_method_name(s.summation))
        .add("summation_in_use", summation_method_name(sim.summation()))
        // the CG's and cycle's order-p products: the matrix's blocks or matrix-free (CUDA p >= 2)
        .add("products", sim.matrix_free_bytes() > 0 ? "matrix_free" : "matrix")
        .add("matrix_free_mib", double(sim.matrix_free_bytes()) / (1024.0 * 1024.0))
        .add("preconditioner", preconditioner_name(preconditioner_in_use(s, s.order)))
        .add("newton", s.max_newton_iterations)
        .add("newton_tol", s.newton_tolerance)
        .add("frame_budget_ms", s.frame_budget_ms)
        .add("cg_tol", s.pcg.relative_tolerance)
        .add("cg_max", s.pcg.max_iterations)
        .add("cg_forcing", s.cg_forcing)
        .add("multigrid_refresh", s.multigrid_every_iteration ? "iteration" : "step")
        .add("multigrid_lag", s.multigrid_lag)
        .add("multigrid_modes", s.multigrid_rest_modes ? "rest" : "current")
        .add("deterministic", s.deterministic)
        .add("pinned_nodes", pinned);
    JsonObject summary;
    const double n = static_cast<double>(std::max(1LL, steps));
    summary.add("frames", steps)
        .add("frames_converged", convergence.converged)
        .add("worst_residual", convergence.worst_relative_decrement)
        .add("worst_final_residual", convergence.worst_final_residual)
        .add("finite", finite)
        .add("recovered_frames", recovered)
        .add("mean_newton_iterations", newton_total / n)
        .add("mean_cg_iterations", cg_total / n)
        .add("mean_ms", times_json({sum.element / n, sum.summation / n, sum.pcg / n,
                                    sum.line_search / n, sum.total / n}));
    JsonObject run;
    run.add("mesh", path)
        .add("vertices", sim.mesh().num_vertices())
        .add("cells", sim.mesh().num_cells())
        .add("nodes", sim.num_nodes())
        .add("nnz_blocks", static_cast<std::int64_t>(sim.nnz_blocks()))
        .add("components", sim.components())
        .add("settings", settings)
        .add("summary", summary);
    run.add("frames", frame_records);
    Json cuts_json = Json::array(), refinements_json = Json::array();
    for (const TopologyChangeRecord& r : sim.topology_changes()) {
        if (r.kind == TopologyChangeKind::Cut) {
            cuts_json.push_back(JsonObject()
                                    .add("frame", r.frame)
                                    .add("cut_faces", r.cut_faces)
                                    .add("duplicated_vertices", r.duplicated_vertices)
                                    .add("repattern_ms", r.repattern_ms)
                                    .add("mode", cut_mode_name(r.cut_mode))
                                    .add("cells_before", r.cells_before)
                                    .add("cells_after", r.cells_after)
                                    .add("split_cells", r.split_cells)
                                    .add("new_cells", r.cells_after - r.cells_before)
                                    .add("new_vertices", r.new_vertices)
                                    .add("snapped_vertices", r.snapped_vertices)
                                    .add("components", r.components)
                                    .add("min_dihedral_deg_before", r.input_min_dihedral_deg)
                                    .add("min_dihedral_deg_after", r.min_dihedral_deg)
                                    .add("min_volume_before", r.input_min_volume)
                                    .add("min_volume_after", r.min_volume)
                                    .add("cut_ms", r.refine_ms)
                                    .add("prepare_ms", r.prepare_ms)
                                    .add("commit_ms", r.commit_ms)
                                    .add("hierarchy_ms", r.hierarchy_ms)
                                    .json());
        } else if (r.kind == TopologyChangeKind::RefineSphere ||
                   r.kind == TopologyChangeKind::RefineUniform) {
            refinements_json.push_back(JsonObject()
                                           .add("frame", r.frame)
                                           .add("kind", topology_change_kind_name(r.kind))
                                           .add("cells_before", r.cells_before)
                                           .add("cells_after", r.cells_after)
                                           .add("new_vertices", r.new_vertices)
                                           .add("min_dihedral_deg", r.min_dihedral_deg)
                                           .add("input_min_dihedral_deg", r.input_min_dihedral_deg)
                                           .add("refine_ms", r.refine_ms)
                                           .add("repattern_ms", r.repattern_ms)
                                           .add("hierarchy_ms", r.hierarchy_ms)
                                           .json());
        }
    }
    run.add("cuts", cuts_json);
    run.add("refinements", refinements_json);

    // Outputs last, all complete or none.
    if (run_file) {
        write_json_file(*run_file, run.json());
    }
    if (vtu_file) write_state_vtu(*vtu_file, sim);
    if (state_file) write_state_file(*state_file, capture_state(sim));
    if (series) series->commit();
    if (surface_series) surface_series->commit();
    outputs.commit();
    // For people: the JSON on stdout stays one document for scripts.
    std::cerr << convergence_line(convergence, s.newton_tolerance) << std::endl;
    std::cout << to_json_text(summary.json()) << std::endl;
    return 0;
}

} // namespace edn::cli
