#include "sim_driver.hpp"

#include "core/error.hpp"
#include "interop.hpp"
#include "scene.hpp"

#include <numeric>

namespace edn {
namespace {

/// Vertices of the simplex node `node` belongs to (1, 2 or 3 of them) and the node's linear
/// interpolation weights on them.
int node_vertex_weights(const Topology& topology, const NodeLayout& layout, Index node,
                        std::array<Index, 3>& vertices, std::array<double, 3>& weights) {
    const Index simplex = node_simplex(layout, node);
    switch (node_kind(layout, node)) {
    case NodeKind::Vertex:
        vertices[0] = simplex;
        weights[0] = 1.0;
        return 1;
    case NodeKind::Edge: {
        // Edge node k lies at a + (k+1)/p (b - a), a the lower vertex (node_layout.hpp).
        const Edge& edge = topology.edges[static_cast<std::size_t>(simplex)];
        const double s = static_cast<double>(node_local_index(layout, node) + 1) / layout.order;
        vertices[0] = edge[0];
        vertices[1] = edge[1];
        weights[0] = 1.0 - s;
        weights[1] = s;
        return 2;
    }
    case NodeKind::Face: {
        // p = 3 has one face node, at the centroid.
        const Face& face = topology.faces[static_cast<std::size_t>(simplex)];
        for (int i = 0; i < 3; ++i) {
            vertices[static_cast<std::size_t>(i)] = face[static_cast<std::size_t>(i)];
            weights[static_cast<std::size_t>(i)] = 1.0 / 3.0;
        }
        return 3;
    }
    }
    return 0;
}

} // namespace

std::vector<double> transfer_node_values(const Topology& topology, const NodeLayout& from,
                                         const NodeLayout& to, const std::vector<double>& values) {
    EDN_VERIFY(values.size() == 3 * static_cast<std::size_t>(from.num_nodes()), ErrorCode::Internal,
               "transfer_node_values: " << values.size() << " values for " << from.num_nodes()
                                        << " nodes");
    if (from.order == to.order) return values;
    std::vector<double> out(3 * static_cast<std::size_t>(to.num_nodes()));
    std::array<Index, 3> vertices{};
    std::array<double, 3> weights{};
    for (Index node = 0; node < to.num_nodes(); ++node) {
        const int count = node_vertex_weights(topology, to, node, vertices, weights);
        for (int axis = 0; axis < 3; ++axis) {
            double sum = 0.0;
            for (int i = 0; i < count; ++i) {
                // Vertex nodes are numbered like the vertices in every order.
                sum += weights[static_cast<std::size_t>(i)] *
                       values[3 * static_cast<std::size_t>(vertices[static_cast<std::size_t>(i)]) +
                              static_cast<std::size_t>(axis)];
            }
            out[3 * static_cast<std::size_t>(node) + static_cast<std::size_t>(axis)] = sum;
        }
    }
    return out;
}

std::vector<std::uint8_t> node_pins_from_vertices(const Topology& topology,
                                                  const NodeLayout& layout,
                                                  const std::vector<std::uint8_t>& vertex_pins) {
    std::vector<std::uint8_t> pins(static_cast<std::size_t>(layout.num_nodes()), 0);
    std::array<Index, 3> vertices{};
    std::array<double, 3> weights{};
    for (Index node = 0; node < layout.num_nodes(); ++node) {
        const int count = node_vertex_weights(topology, layout, node, vertices, weights);
        bool all = true;
        for (int i = 0; i < count; ++i) {
            all =
                all && vertex_pins[static_cast<std::size_t>(vertices[static_cast<std::size_t>(i)])];
        }
        pins[static_cast<std::size_t>(node)] = all ? 1 : 0;
    }
    return pins;
}

SimDriver::SimDriver(const Scene& scene, std::unique_ptr<Simulation> simulation)
    : scene_(scene), simulation_(std::move(simulation)),
      layout_(make_node_layout(scene.topology, simulation_->settings().order)),
      vertex_pins_(static_cast<std::size_t>(scene.mesh.num_vertices()), 0) {
    refresh();
}

SimDriver::~SimDriver() = default;

std::unique_ptr<Simulation> SimDriver::build(const Scene& scene,
                                             const SimulationSettings& settings) {
    return std::make_unique<Simulation>(scene.mesh, settings);
}

void SimDriver::rebuild(const SimulationSettings& settings) {
    auto next = build(scene_, settings); // throws before anything changes
    const NodeLayout next_layout = make_node_layout(scene_.topology, settings.order);
    // Carry displacements (not positions) so edge/face nodes sit on the new rest geometry.
    std::vector<double> displacement = positions();
    const std::vector<double>& rest = simulation_->rest_positions();
    for (std::size_t i = 0; i < displacement.size(); ++i) displacement[i] -= rest[i];
    std::vector<double> x =
        transfer_node_values(scene_.topology, layout_, next_layout, displacement);
    const std::vector<double> v =
        transfer_node_values(scene_.topology, layout_, next_layout, simulation_->velocities());
    const std::vector<double>& next_rest = next->rest_positions();
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += next_rest[i];
    next->set_state(x, v);
    simulation_ = std::move(next);
    layout_ = next_layout;
    apply_pins();
    simulation_->set_drag(drag_);
    refresh();
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
    for (Index v = 0; v < scene_.mesh.num_vertices(); ++v) {
        if (scene_.mesh.positions[static_cast<std::size_t>(v)][2] < z) {
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
    const std::vector<std::uint8_t> wanted =
        node_pins_from_vertices(scene_.topology, layout_, vertex_pins_);
    const std::vector<std::uint8_t>& current = simulation_->pinned();
    for (Index node = 0; node < layout_.num_nodes(); ++node) {
        const std::size_t i = static_cast<std::size_t>(node);
        if ((current[i] != 0) != (wanted[i] != 0)) simulation_->set_pinned(node, wanted[i] != 0);
    }
}

void SimDriver::refresh() {
    positions_valid_ = false;
    stress_valid_ = false;
}

} // namespace edn
