#pragma once
/// The app's side of the engine: one edn::Simulation of the scene, the pins the user painted
/// (per mesh vertex, so they survive order changes), the drag spring, and rebuilds that carry the
/// current displacement and velocity over to a new Simulation (new settings, new order).

#include "mesh/node_layout.hpp"
#include "sim/simulation.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace edn {

struct Scene;

/// Per-node values of an order-`to` mesh from an order-`from` field (3 per node): vertex nodes
/// keep their values; edge and face nodes get the linear interpolation of their simplex's
/// vertex values (exact for linear fields, what the brief asks for on order changes).
/// @param[in] values  3 * #nodes(from) values in the node order of mesh/node_layout.hpp
/// @return            3 * #nodes(to) values
std::vector<double> transfer_node_values(const Topology& topology, const NodeLayout& from,
                                         const NodeLayout& to, const std::vector<double>& values);

/// Node pin mask of `layout` from a per-vertex mask: a vertex node is pinned with its vertex, an
/// edge or face node when all vertices of its simplex are pinned.
std::vector<std::uint8_t> node_pins_from_vertices(const Topology& topology,
                                                  const NodeLayout& layout,
                                                  const std::vector<std::uint8_t>& vertex_pins);

/// Owns the Simulation of one scene and everything the user attached to it.
class SimDriver {
public:
    /// Takes a Simulation built for `scene` (the scene must outlive the driver); the pins start
    /// empty.
    SimDriver(const Scene& scene, std::unique_ptr<Simulation> simulation);
    ~SimDriver();

    /// Builds a Simulation of `scene` with `settings`. Throws edn::Error.
    static std::unique_ptr<Simulation> build(const Scene& scene,
                                             const SimulationSettings& settings);

    /// Replaces the Simulation by one with `settings`, carrying positions, velocities, pins and
    /// the drag over. Strong guarantee: on edn::Error the current Simulation stays.
    void rebuild(const SimulationSettings& settings);
    /// One time step; positions() is fetched again when next asked for.
    StepResult step();
    /// Back to the rest state with zero velocity; pins and drag kept.
    void reset();

    /// Pins every vertex whose rest z is below `z` (adding to the current pins); returns how
    /// many vertices are pinned afterwards.
    Index pin_below(double z);
    /// Pins (or frees) the given mesh vertices.
    void set_vertices_pinned(const std::vector<Index>& vertices, bool pinned);
    /// Frees every node.
    void clear_pins();
    /// Per-vertex pin mask.
    const std::vector<std::uint8_t>& vertex_pins() const { return vertex_pins_; }

    /// Sets or removes the drag spring.
    void set_drag(std::optional<DragSpring> drag);
    /// The current drag spring.
    const std::optional<DragSpring>& drag() const { return drag_; }

    /// Current node positions (3 per node). Fetched from the Simulation on the first call after
    /// a step, rebuild or reset (with the CUDA backend that is a device-to-host copy, so the
    /// interop path asks only on clicks and at exit, never per frame).
    const std::vector<double>& positions() const;
    /// The CUDA backend's node positions in device memory (Simulation::device_positions), or
    /// nullptr on the CPU backend.
    const float* device_positions() const { return simulation_->device_positions(); }
    /// Per-cell von Mises stress in device memory (Simulation::device_von_mises_stress; CUDA
    /// backend), nullptr otherwise.
    const float* device_von_mises_stress() const { return simulation_->device_von_mises_stress(); }
    /// Current position of mesh vertex v (copies only that vertex from the device when the
    /// host positions are stale).
    Vec3 vertex_position(Index v) const;
    /// Per-cell von Mises stress of the current state (computed on demand, cached per state).
    const std::vector<double>& von_mises_stress();
    /// The simulation.
    const Simulation& simulation() const { return *simulation_; }
    /// Total lumped mass [kg].
    double total_mass() const;

private:
    void apply_pins();
    void refresh();

    const Scene& scene_;
    std::unique_ptr<Simulation> simulation_;
    NodeLayout layout_;
    std::vector<std::uint8_t> vertex_pins_;
    std::optional<DragSpring> drag_;
    mutable std::vector<double> positions_; // cache of simulation_->positions()
    mutable bool positions_valid_ = false;
    std::vector<double> stress_;
    bool stress_valid_ = false;
};

} // namespace edn
