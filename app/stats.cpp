#include "stats.hpp"

#include "core/json.hpp"
#include "sim/names.hpp"
#include "sim/presets.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace edn {
namespace {

/// The app's topology changes as --stats and the GUI report them.
struct ChangeSummary {
    std::vector<TopologyChangeRecord> cuts;        ///< every cut
    std::vector<TopologyChangeRecord> refinements; ///< every brush or uniform refinement
    std::int64_t undos = 0;                        ///< undos applied
    double last_repattern_ms = 0.0;                ///< of the last cut, refinement or undo
    double last_pattern_build_ms = 0.0;            ///< its pattern and summation plans
};

ChangeSummary summarize(const std::vector<TopologyChangeRecord>& changes) {
    ChangeSummary summary;
    for (const TopologyChangeRecord& record : changes) {
        if (record.kind == TopologyChangeKind::Cut) summary.cuts.push_back(record);
        if (record.kind == TopologyChangeKind::RefineSphere ||
            record.kind == TopologyChangeKind::RefineUniform)
            summary.refinements.push_back(record);
        if (record.kind == TopologyChangeKind::Undo) ++summary.undos;
        summary.last_repattern_ms = record.repattern_ms;
        summary.last_pattern_build_ms = record.pattern_build_ms;
    }
    return summary;
}

} // namespace

SceneStatistics scene_statistics(const EditSession& session, const StepResult& last_step,
                                 bool stepped, const ConvergenceTally& recent) {
    const Scene* scene = session.scene();
    const SimDriver* sim = session.sim();
    SceneStatistics result;
    if (!scene) return result;
    result.name = scene->path.filename().string();
    result.vertices = scene->mesh.num_vertices();
    result.cells = scene->mesh.num_cells();
    result.boundary_faces = static_cast<Index>(scene->surface.triangles.size());
    result.surface_vertices = static_cast<Index>(scene->surface.mesh_vertex.size());
    if (sim) {
        const Simulation& simulation = sim->simulation();
        result.simulated = true;
        result.nodes = simulation.num_nodes();
        result.nnz_blocks = simulation.nnz_blocks();
        result.matrix_bytes = simulation.matrix_bytes();
        result.components = simulation.components();
        const ChangeSummary changes = summarize(session.topology_changes());
        result.cuts = static_cast<Index>(changes.cuts.size());
        if (!changes.cuts.empty()) {
            result.last_cut_faces = changes.cuts.back().cut_faces;
            result.last_duplicated = changes.cuts.back().duplicated_vertices;
            result.last_split_cells = changes.cuts.back().split_cells;
            result.last_cut_dihedral = changes.cuts.back().min_dihedral_deg;
        }
        result.refinements = static_cast<Index>(changes.refinements.size());
        result.last_repattern_ms = changes.last_repattern_ms;
        result.last_pattern_build_ms = changes.last_pattern_build_ms;
        result.undo_depth = simulation.undo_depth();
        result.pinned_vertices =
            static_cast<Index>(std::count(sim->vertex_pins().begin(), sim->vertex_pins().end(), 1));
        result.last_step = last_step;
        result.stepped = stepped;
        result.recent_convergence = recent;
        result.newton_tolerance = simulation.settings().newton_tolerance;
    }
    return result;
}

void write_stats(const std::filesystem::path& path, const EditSession& session, std::int64_t frames,
                 const std::string& upload_method, const StepResult& last_step,
                 const ConvergenceTally& convergence, const std::vector<std::string>& errors,
                 double wall_seconds) {
    const Scene* scene = session.scene();
    const SimDriver* sim = session.sim();
    const ChangeSummary changes = summarize(session.topology_changes());
    const std::size_t undo_depth = sim ? sim->simulation().undo_depth() : 0;
    Json stats = Json::object();
    stats["frames"] = frames;
    stats["scene"] = scene ? scene->path.string() : "";
    if (sim) {
        const Simulation& simulation = sim->simulation();
        const SimulationSettings& s = simulation.settings();
        const std::vector<double>& x = sim->positions();
        bool finite = true;
        Vec3 lower = {std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                      std::numeric_limits<double>::max()};
        Vec3 upper = {-lower[0], -lower[1], -lower[2]};
        double max_displacement = 0.0;
        const std::vector<double>& rest = simulation.rest_positions();
        for (std::size_t i = 0; i < x.size(); i += 3) {
            double d2 = 0.0;
            for (std::size_t a = 0; a < 3; ++a) {
                finite = finite && std::isfinite(x[i + a]);
                lower[a] = std::min(lower[a], x[i + a]);
                upper[a] = std::max(upper[a], x[i + a]);
                d2 += (x[i + a] - rest[i + a]) * (x[i + a] - rest[i + a]);
            }
            max_displacement = std::max(max_displacement, std::sqrt(d2));
        }
        stats["order"] = s.order;
        stats["material"] = material_name(s.material);
        stats["E"] = s.young;
        stats["nu"] = s.poisson;
        stats["rho"] = s.density;
        // The preset whose E, nu and rho these are (null: a custom material).
        const MaterialPreset* preset = matching_preset(s);
        stats["preset"] = preset ? Json(preset->name) : Json(nullptr);
        stats["dt"] = s.dt;
        stats["integrator"] = integrator_name(s.integrator);
        stats["damping"] = s.mass_damping;
        stats["cg_tol"] = s.pcg.relative_tolerance;
        stats["cg_max"] = s.pcg.max_iterations;
        stats["cg_forcing"] = s.cg_forcing;
        stats["summation"] = summation_method_name(s.summation);
        stats["summation_in_use"] = summation_method_name(simulation.summation());
        stats["products"] = simulation.matrix_free_bytes() > 0 ? "matrix_free" : "matrix";
        stats["preconditioner"] = preconditioner_name(preconditioner_in_use(s, s.order));
        stats["backend"] = backend_name(s.backend);
        stats["upload"] = upload_method;
        stats["vertices"] = scene->mesh.num_vertices();
        stats["cells"] = scene->mesh.num_cells();
        stats["volume"] = total_volume(scene->mesh); // rest volume: cuts keep it
        stats["nodes"] = simulation.num_nodes();
        stats["components"] = simulation.components();
        stats["pinned_vertices"] =
            std::count(sim->vertex_pins().begin(), sim->vertex_pins().end(), 1);
        stats["finite"] = finite;
        stats["bbox"] = {{"lower", {lower[0], lower[1], lower[2]}},
                         {"upper", {upper[0], upper[1], upper[2]}}};
        stats["max_displacement"] = max_displacement;
        stats["dragging"] = sim->drag().has_value();
        // The region drag's nodes (0: the point spring, or no drag).
        stats["drag_region_nodes"] = sim->drag() ? sim->drag()->region.size() : std::size_t{0};
        stats["ground"] = s.ground_height.has_value();
        stats["ground_height"] = s.ground_height ? Json(*s.ground_height) : Json(nullptr);
        stats["ground_friction"] = s.ground_friction;
        stats["ground_stiffness"] = s.ground_stiffness;
        stats["last_step"] = {{"newton_iterations", last_step.newton_iterations},
                              {"cg_iterations", last_step.cg_iterations},
                              {"final_residual", last_step.final_residual},
                              {"converged", last_step.converged},
                              {"stop", name_of(last_step.stop)},
                              {"relative_decrement", last_step.relative_decrement},
                              {"recovered", last_step.recovered}};
        // As simulate's run.json summary: every step of the run against the Newton tolerance.
        stats["convergence"] = {{"frames", convergence.frames},
                                {"frames_converged", convergence.converged},
                                {"worst_residual", convergence.worst_relative_decrement},
                                {"worst_final_residual", convergence.worst_final_residual},
                                {"newton_tol", s.newton_tolerance},
                                {"newton", s.max_newton_iterations},
                                {"frame_budget_ms", s.frame_budget_ms}};
        // Over the whole run (loading included): what --sim-thread sustains on this machine.
        const double seconds = std::max(wall_seconds, 1e-9);
        stats["rate"] = {{"wall_s", wall_seconds},
                         {"display_fps", double(frames) / seconds},
                         {"steps_per_second", double(convergence.frames) / seconds},
                         {"converged_steps_per_second", double(convergence.converged) / seconds}};
    }
    Json cuts = Json::array(), refinements = Json::array();
    for (const TopologyChangeRecord& c : changes.cuts)
        cuts.push_back({{"frame", c.frame},
                        {"cut_faces", c.cut_faces},
                        {"duplicated_vertices", c.duplicated_vertices},
                        {"repattern_ms", c.repattern_ms},
                        {"prepare_ms", c.prepare_ms},
                        {"commit_ms", c.commit_ms},
                        {"mode", cut_mode_name(c.cut_mode)},
                        {"cells_before", c.cells_before},
                        {"cells_after", c.cells_after},
                        {"split_cells", c.split_cells},
                        {"components", c.components},
                        {"min_dihedral_deg_before", c.input_min_dihedral_deg},
                        {"min_dihedral_deg_after", c.min_dihedral_deg},
                        {"min_volume_before", c.input_min_volume},
                        {"min_volume_after", c.min_volume}});
    for (const TopologyChangeRecord& r : changes.refinements)
        refinements.push_back({{"frame", r.frame},
                               {"uniform", r.kind == TopologyChangeKind::RefineUniform},
                               {"cells_before", r.cells_before},
                               {"cells_after", r.cells_after},
                               {"min_dihedral_deg", r.min_dihedral_deg},
                               {"refine_ms", r.refine_ms},
                               {"repattern_ms", r.repattern_ms},
                               {"pattern_build_ms", r.pattern_build_ms}});
    stats["cuts"] = std::move(cuts);
    stats["refinements"] = std::move(refinements);
    stats["last_repattern_ms"] = changes.last_repattern_ms;
    stats["last_pattern_build_ms"] = changes.last_pattern_build_ms;
    stats["undos"] = changes.undos;
    stats["undo_depth"] = undo_depth;
    stats["errors"] = errors;
    write_json_file(path, stats);
}

} // namespace edn
