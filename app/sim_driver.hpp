#pragma once
/// The app's side of the engine: one edn::Simulation of the scene, the pins the user painted
/// (per mesh vertex, so they survive order changes and refinements), the drag spring, and host
/// caches of positions and stress. Settings changes, cuts, refinements and undo are the
/// Simulation's (sim/topology_change.hpp); the driver only forwards them and re-applies its pins.

#include "mesh/cut.hpp"
#include "sim/prepared_change.hpp"
#include "sim/simulation.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace edn {

struct Scene;

/// Owns the Simulation of one scene and everything the user attached to it.
class SimDriver {
public:
    /// Takes a Simulation; the pins start empty.
    explicit SimDriver(std::unique_ptr<Simulation> simulation);
    ~SimDriver();

    /// Builds a Simulation of `scene` with `settings`. Throws edn::Error.
    static std::unique_ptr<Simulation> build(const Scene& scene,
                                             const SimulationSettings& settings);

    /// Simulation::change_settings, keeping the vertex pins and the drag. Strong guarantee: on
    /// edn::Error the current Simulation stays.
    void rebuild(const SimulationSettings& settings);
    /// Simulation::cut stamped with `frame`; the drag ends, pins follow their vertices.
    TopologyChangeRecord cut(const CutPlane& plane, std::int64_t frame);
    /// Simulation::change_basis: what a cut prepared off this thread reads (in a turn).
    ChangeBasis change_basis() const;
    /// Simulation::commit stamped with `frame`; as cut. Throws edn::Error(Usage) when stale.
    TopologyChangeRecord commit(PreparedChange&& prepared, std::int64_t frame);
    /// Simulation::refine_sphere stamped with `frame`; as cut.
    TopologyChangeRecord refine_sphere(const Vec3& center, double radius, int levels,
                                       std::int64_t frame);
    /// Simulation::refine_uniform stamped with `frame`; as cut.
    TopologyChangeRecord refine_uniform(std::int64_t frame);
    /// Simulation::undo stamped with `frame`; as cut.
    TopologyChangeRecord undo(std::int64_t frame);
    /// Simulation::group_changes: open (true) or close a group that undo takes back as one.
    void group_changes(bool open) { simulation_->group_changes(open); }
    /// Limits of the Simulation's topology changes.
    void set_topology_options(TopologyChangeOptions options);
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

    /// Simulation::set_ground: the ground plane (none: nullopt), stiffness and friction, in place.
    void set_ground(std::optional<double> height, double stiffness, double friction);

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
    /// After a topology change: the vertex pins are the new vertex nodes' pins, then applied
    /// as vertex pins (so edge/face nodes follow the app's rule); the drag is gone.
    TopologyChangeRecord changed(TopologyChangeRecord record);

    std::unique_ptr<Simulation> simulation_;
    std::vector<std::uint8_t> vertex_pins_;
    std::optional<DragSpring> drag_;
    mutable std::vector<double> positions_; // cache of simulation_->positions()
    mutable bool positions_valid_ = false;
    std::vector<double> stress_;
    bool stress_valid_ = false;
};

} // namespace edn
