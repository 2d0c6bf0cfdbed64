#include "sim_driver.hpp"

#include "core/error.hpp"
#include "interop.hpp"
#include "scene.hpp"

#include <numeric>

namespace edn {

SimDriver::SimDriver(std::unique_ptr<Simulation> simulation)
    : simulation_(std::move(simulation)),
      vertex_pins_(static_cast<std::size_t>(simulation_->mesh().num_vertices()), 0) {
    refresh();
}

SimDriver::~SimDriver() = default;

std::unique_ptr<Simulation> SimDriver::build(const Scene& scene,
                                             const SimulationSettings& settings) {
    return std::make_unique<Simulation>(scene.mesh, settings);
}

void SimDriver::rebuild(const SimulationSettings& settings) {
    simulation_->change_settings(settings); // carries state, pins and the drag
    apply_pins();
    refresh();
}

TopologyChangeRecord SimDriver::cut(const CutPlane& plane, std::int64_t frame) {
    simulation_->set_frame(frame);
    return changed(simulation_->cut(plane));
}

ChangeBasis SimDriver::change_basis() const {
    return simulation_->change_basis();
}

TopologyChangeRecord SimDriver::commit(PreparedChange&& prepared, std::int64_t frame) {
    simulation_->set_frame(frame);
    return changed(simulation_->commit(std::move(prepared)));
}

TopologyChangeRecord SimDriver::refine_sphere(const Vec3& center, double radius, int levels,
                                              std::int64_t frame) {
    simulation_->set_frame(frame);
    return changed(simulation_->refine_sphere(center, radius, levels));
}

TopologyChangeRecord SimDriver::refine_uniform(std::int64_t frame) {
    simulation_->set_frame(frame);
    return changed(simulation_->refine_uniform());
}

TopologyChangeRecord SimDriver::undo(std::int64_t frame) {
    simulation_->set_frame(frame);
    return changed(simulation_->undo());
}

void SimDriver::set_topology_options(TopologyChangeOptions options) {
    simulation_->set_topology_options(std::move(options));
}

TopologyChangeRecord SimDriver::changed(TopologyChangeRecord record) {
    drag_.reset(); // the Simulation dropped it: its vertices are renumbered
    // Vertex nodes come first in the node order: their pins are the per-vertex pins.
    const std::vector<std::uint8_t>& pinned = simulation_->pinned();
    vertex_pins_.assign(pinned.begin(), pinned.begin() + simulation_->mesh().num_vertices());
    apply_pins();
    refresh();
    return record;
}

StepResult SimDriver::step() {
    StepResult result = simulation_->step();
    refresh();
    return result;
}

void SimDriver::reset() {
    const std::vector<double>& rest = simulation_->rest_positions();
    simulation_->set_state(rest, std::vector<double>(rest.size(), 0.0));
    refresh();
}

Index SimDriver::pin_below(double z) {
    const TetMesh& mesh = simulation_->mesh();
    for (Index v = 0; v < mesh.num_vertices(); ++v) {
        if (mesh.positions[static_cast<std::size_t>(v)][2] < z) {
            vertex_pins_[static_cast<std::size_t>(v)] = 1;
        }
    }
    apply_pins();
    return static_cast<Index>(std::accumulate(vertex_pins_.begin(), vertex_pins_.end(), 0));
}

void SimDriver::set_vertices_pinned(const std::vector<Index>& vertices, bool pinned) {
    bool changed = false;
    for (Index v : vertices) {
        std::uint8_t& pin = vertex_pins_[static_cast<std::size_t>(v)];
        changed = changed || pin != (pinned ? 1 : 0);
        pin = pinned ? 1 : 0;
    }
    if (changed) apply_pins();
}

void SimDriver::clear_pins() {
    std::fill(vertex_pins_.begin(), vertex_pins_.end(), 0);
    apply_pins();
}

void SimDriver::set_ground(std::optional<double> height, double stiffness, double friction) {
    simulation_->set_ground(height, stiffness, friction);
}

void SimDriver::set_drag(std::optional<DragSpring> drag) {
    drag_ = drag;
    simulation_->set_drag(std::move(drag));
}

const std::vector<double>& SimDriver::positions() const {
    if (!positions_valid_) {
        positions_ = simulation_->positions();
        positions_valid_ = true;
    }
    return positions_;
}

Vec3 SimDriver::vertex_position(Index v) const {
    const std::size_t i = 3 * static_cast<std::size_t>(v);
    if (!positions_valid_ && device_positions() != nullptr) {
        // Vertex nodes come first, so node v is mesh vertex v.
        float p[3];
        SurfaceInterop::download(device_positions() + i, 3, p);
        return {p[0], p[1], p[2]};
    }
    const std::vector<double>& x = positions();
    return {x[i], x[i + 1], x[i + 2]};
}

const std::vector<double>& SimDriver::von_mises_stress() {
    if (!stress_valid_) {
        stress_ = simulation_->von_mises_stress();
        stress_valid_ = true;
    }
    return stress_;
}

double SimDriver::total_mass() const {
    const std::vector<double>& mass = simulation_->lumped_mass();
    return std::accumulate(mass.begin(), mass.end(), 0.0);
}

void SimDriver::apply_pins() {
    simulation_->set_vertex_pins(vertex_pins_);
}

void SimDriver::refresh() {
    positions_valid_ = false;
    stress_valid_ = false;
}

} // namespace edn
