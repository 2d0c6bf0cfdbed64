#include "edit_session.hpp"

#include "core/error.hpp"

#include <cstdio>
#include <glm/geometric.hpp>
#include <utility>

namespace edn {

std::optional<CutPlane> stroke_plane(const ViewState& view, const glm::vec2& from,
                                     const glm::vec2& to,
                                     const std::optional<glm::vec3>& surface_point) {
    if (glm::length(to - from) < kMinStrokePixels) return std::nullopt;
    const glm::vec2 middle = 0.5f * (from + to);
    // The blade sits at the depth of the surface under the stroke's middle (else the orbit
    // target): there the stroke's world length is what the user sees.
    const float depth = view.depth(surface_point ? *surface_point : view.target);
    const std::optional<glm::vec3> a = view.at_depth(from, depth);
    const std::optional<glm::vec3> b = view.at_depth(to, depth);
    const std::optional<glm::vec3> m = view.at_depth(middle, depth);
    if (!a || !b || !m) return std::nullopt;
    // The plane holds the stroke and the view ray through its middle, so it holds the eye and
    // both end rays: the stroke swept along the view.
    const glm::vec3 normal = glm::cross(*b - *a, view.ray(middle).direction);
    if (!(glm::length(normal) > 0.0f)) return std::nullopt;
    CutPlane plane;
    plane.point = {m->x, m->y, m->z};
    plane.normal = {normal.x, normal.y, normal.z};
    plane.radius = 0.5 * static_cast<double>(glm::length(*b - *a));
    return plane;
}

void EditSession::load(std::unique_ptr<Scene> scene, std::unique_ptr<Simulation> simulation) {
    if (sim_) {
        const std::vector<TopologyChangeRecord>& changes = sim_->simulation().topology_changes();
        earlier_changes_.insert(earlier_changes_.end(), changes.begin(), changes.end());
        sim_.reset();
    }
    scene_ = std::move(scene);
    if (simulation) attach(std::move(simulation));
}

void EditSession::attach(std::unique_ptr<Simulation> simulation) {
    EDN_ASSERT(scene_ && !sim_, "attach: needs a scene without a simulation");
    sim_ = std::make_unique<SimDriver>(std::move(simulation));
    TopologyChangeOptions options;
    options.undo_depth = kMaxUndo;
    options.reject_no_op = true; // a cut or brush that changes nothing is reported, not applied
    options.max_cells = kMaxRefineCells;
    options.mesh_name = scene_->path.filename().string();
    sim_->set_topology_options(std::move(options));
}

EditResult EditSession::cut(const CutPlane& plane, std::int64_t frame) {
    if (!sim_ || !scene_) return {std::nullopt, "cut: no simulation to cut", std::nullopt};
    try {
        const TopologyChangeRecord record = sim_->cut(plane, frame);
        rebuild_scene();
        return {record,
                "cut: " + std::to_string(record.cut_faces) + " faces, " +
                    std::to_string(record.duplicated_vertices) + " vertices duplicated, " +
                    std::to_string(sim_->simulation().components()) + " components",
                std::nullopt};
    } catch (const Error& error) {
        return {std::nullopt, error.what(), error.code()}; // the current scene stays
    }
}

EditResult EditSession::refine(const std::optional<Vec3>& center, double radius, int levels,
                               std::int64_t frame) {
    if (!sim_ || !scene_) return {std::nullopt, "refine: no simulation to refine", std::nullopt};
    try {
        const TopologyChangeRecord record =
            center ? sim_->refine_sphere(*center, radius, levels, frame)
                   : sim_->refine_uniform(frame);
        rebuild_scene();
        char text[256];
        std::snprintf(text, sizeof(text),
                      "refine%s: %d -> %d cells, worst dihedral %.1f deg, refine %.2f ms, "
                      "re-pattern %.2f ms (pattern %.2f ms)",
                      center ? "" : " 1->8", record.cells_before, record.cells_after,
                      record.min_dihedral_deg, record.refine_ms, record.repattern_ms,
                      record.pattern_build_ms);
        return {record, text, std::nullopt};
    } catch (const Error& error) {
        return {std::nullopt, error.what(), error.code()}; // the current scene stays
    }
}

EditResult EditSession::undo(std::int64_t frame) {
    if (!sim_ || sim_->simulation().undo_depth() == 0)
        return {std::nullopt, "undo: no cut to undo", std::nullopt};
    try {
        const TopologyChangeRecord record = sim_->undo(frame);
        rebuild_scene();
        return {record,
                "undo: back to " + std::to_string(scene_->mesh.num_vertices()) + " vertices, " +
                    std::to_string(scene_->mesh.num_cells()) + " cells, " +
                    std::to_string(sim_->simulation().components()) + " components",
                std::nullopt};
    } catch (const Error& error) {
        return {std::nullopt, error.what(), error.code()};
    }
}

std::vector<TopologyChangeRecord> EditSession::topology_changes() const {
    std::vector<TopologyChangeRecord> all = earlier_changes_;
    if (sim_) {
        const std::vector<TopologyChangeRecord>& changes = sim_->simulation().topology_changes();
        all.insert(all.end(), changes.begin(), changes.end());
    }
    return all;
}

void EditSession::rebuild_scene() {
    scene_ = std::make_unique<Scene>(make_scene(scene_->path, sim_->simulation().mesh()));
}

} // namespace edn
