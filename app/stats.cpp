#include "stats.hpp"

#include "core/atomic_file.hpp"

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
                                 bool stepped) {
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
        }
        result.refinements = static_cast<Index>(changes.refinements.size());
        result.last_repattern_ms = changes.last_repattern_ms;
        result.last_pattern_build_ms = changes.last_pattern_build_ms;
        result.undo_depth = simulation.undo_depth();
        result.pinned_vertices =
            static_cast<Index>(std::count(sim->vertex_pins().begin(), sim->vertex_pins().end(), 1));
        result.last_step = last_step;
        result.stepped = stepped;
    }
    return result;
}

void write_stats(const std::filesystem::path& path, const EditSession& session, std::int64_t frames,
                 const std::string& upload_method, const StepResult& last_step,
                 const std::vector<std::string>& errors) {
    const Scene* scene = session.scene();
    const SimDriver* sim = session.sim();
    auto number = [](double value) -> std::string {
        if (!std::isfinite(value)) return "null";
        char text[32];
        std::snprintf(text, sizeof(text), "%.17g", value);
        return text;
    };
    auto quoted = [](const std::string& text) {
        std::string out = "\"";
        for (char c : text) {
            if (c == '"' || c == '\\') {
                out += '\\';
                out += c;
            } else if (static_cast<unsigned char>(c) < 0x20) {
                char escape[8];
                std::snprintf(escape, sizeof(escape), "\\u%04x", c);
                out += escape;
            } else {
                out += c;
            }
        }
        return out + "\"";
    };
    const ChangeSummary changes = summarize(session.topology_changes());
    const std::size_t undo_depth = sim ? sim->simulation().undo_depth() : 0;
    write_file_atomically(path, [&](std::ostream& out) {
        out << "{\n  \"frames\": " << frames;
        out << ",\n  \"scene\": " << quoted(scene ? scene->path.string() : "");
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
            out << ",\n  \"order\": " << s.order;
            out << ",\n  \"material\": " << quoted(material_name(s.material));
            out << ",\n  \"summation\": " << quoted(summation_method_name(s.summation));
            out << ",\n  \"preconditioner\": " << quoted(preconditioner_name(s.preconditioner));
            out << ",\n  \"backend\": " << quoted(backend_name(s.backend));
            out << ",\n  \"upload\": " << quoted(upload_method);
            out << ",\n  \"vertices\": " << scene->mesh.num_vertices();
            out << ",\n  \"cells\": " << scene->mesh.num_cells();
            out << ",\n  \"nodes\": " << simulation.num_nodes();
            out << ",\n  \"components\": " << simulation.components();
            out << ",\n  \"pinned_vertices\": "
                << std::count(sim->vertex_pins().begin(), sim->vertex_pins().end(), 1);
            out << ",\n  \"finite\": " << (finite ? "true" : "false");
            out << ",\n  \"bbox\": {\"lower\": [" << number(lower[0]) << ", " << number(lower[1])
                << ", " << number(lower[2]) << "], \"upper\": [" << number(upper[0]) << ", "
                << number(upper[1]) << ", " << number(upper[2]) << "]}";
            out << ",\n  \"max_displacement\": " << number(max_displacement);
            out << ",\n  \"dragging\": " << (sim->drag() ? "true" : "false");
            out << ",\n  \"last_step\": {\"newton_iterations\": " << last_step.newton_iterations
                << ", \"cg_iterations\": " << last_step.cg_iterations
                << ", \"final_residual\": " << number(last_step.final_residual)
                << ", \"recovered\": " << (last_step.recovered ? "true" : "false") << "}";
        }
        out << ",\n  \"cuts\": [";
        for (std::size_t i = 0; i < changes.cuts.size(); ++i) {
            const TopologyChangeRecord& c = changes.cuts[i];
            out << (i ? ", " : "") << "{\"frame\": " << c.frame
                << ", \"cut_faces\": " << c.cut_faces
                << ", \"duplicated_vertices\": " << c.duplicated_vertices
                << ", \"repattern_ms\": " << number(c.repattern_ms) << "}";
        }
        out << "]";
        out << ",\n  \"refinements\": [";
        for (std::size_t i = 0; i < changes.refinements.size(); ++i) {
            const TopologyChangeRecord& r = changes.refinements[i];
            out << (i ? ", " : "") << "{\"frame\": " << r.frame << ", \"uniform\": "
                << (r.kind == TopologyChangeKind::RefineUniform ? "true" : "false")
                << ", \"cells_before\": " << r.cells_before
                << ", \"cells_after\": " << r.cells_after
                << ", \"min_dihedral_deg\": " << number(r.min_dihedral_deg)
                << ", \"refine_ms\": " << number(r.refine_ms)
                << ", \"repattern_ms\": " << number(r.repattern_ms)
                << ", \"pattern_build_ms\": " << number(r.pattern_build_ms) << "}";
        }
        out << "]";
        out << ",\n  \"last_repattern_ms\": " << number(changes.last_repattern_ms);
        out << ",\n  \"last_pattern_build_ms\": " << number(changes.last_pattern_build_ms);
        out << ",\n  \"undos\": " << changes.undos;
        out << ",\n  \"undo_depth\": " << undo_depth;
        out << ",\n  \"errors\": [";
        for (std::size_t i = 0; i < errors.size(); ++i) out << (i ? ", " : "") << quoted(errors[i]);
        out << "]\n}\n";
    });
}

} // namespace edn
