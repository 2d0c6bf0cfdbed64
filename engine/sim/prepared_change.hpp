#pragma once
/// A topology change in two phases, so that its cost stays off the frame:
///
///   basis    = sim.change_basis();                      // between steps: a copy of positions
///   prepared = Simulation::prepare_cut(basis, plane);   // any thread, while sim steps
///   record   = sim.commit(std::move(prepared));         // between steps: a few ms
///
/// prepare does everything that depends only on the rest mesh and the settings: the split (or
/// refinement) placed on the basis's deformed positions, the new backend (topology, pattern,
/// maps, mass, device uploads; CUDA: finished on the preparing thread) and the plan of the state
/// transfer (sim/state_transfer.hpp, TransferPlan), and the new backend's preconditioner set-up
/// for the basis's pins carried by the plan (SimulationBackend::prepare_solver: the multigrid
/// hierarchy, else built by the first step after the commit). It reads only the basis: the backend
/// it holds (kept alive, its rest mesh and node tables never change) and copies of the settings,
/// the topology options, the positions and the pins. commit carries the state the simulation has
/// THEN (positions, velocities, pins) through the plan into the prepared backend, swaps it in with
/// the settings then in force (e.g. a ground changed in between) and records the change and its
/// undo snapshot as the one-phase change does (Simulation::cut is prepare + commit).
///
/// What prepare read of the state: the deformed positions of the basis (the blade and the brush
/// are placed on the shape the user saw when asking; the split's deformed-blade moves use them).
/// A preparation is stale when the simulation's topology changed since its basis was taken (a
/// cut, refinement, undo or settings change committed in between): commit refuses it
/// (edn::Error(Usage)), the caller prepares again on a fresh basis. Changes prepared one on top
/// of another (chain_basis: the pieces of a stroke) commit in order.

#include "mesh/tet_mesh.hpp"
#include "sim/simulation.hpp"
#include "sim/state_transfer.hpp"
#include "sim/topology_change.hpp"

#include <memory>
#include <vector>

namespace edn {

class SimulationBackend;

/// What a preparation reads, captured from a Simulation between steps (change_basis).
class ChangeBasis {
public:
    /// An empty basis (nothing to prepare on).
    ChangeBasis();
    ~ChangeBasis();
    /// Copies share the backend (read only).
    ChangeBasis(const ChangeBasis&);
    ChangeBasis& operator=(const ChangeBasis&);
    ChangeBasis(ChangeBasis&&) noexcept;
    ChangeBasis& operator=(ChangeBasis&&) noexcept;

    /// Whether it holds a simulation's topology.
    explicit operator bool() const { return backend_ != nullptr; }
    /// The rest mesh a change is prepared on.
    const TetMesh& mesh() const;
    /// The deformed node positions (3 per node) the change is placed on.
    const std::vector<double>& positions() const { return positions_; }
    /// The settings of the backend to build.
    const SimulationSettings& settings() const { return settings_; }
    /// The node pins (1 per node) the preconditioner's set-up is prepared with (a commit with
    /// other pins builds it again at the first step).
    const std::vector<std::uint8_t>& pinned() const { return pinned_; }

private:
    friend class Simulation;
    std::shared_ptr<const SimulationBackend> backend_;
    SimulationSettings settings_;
    TopologyChangeOptions options_;
    std::vector<double> positions_;
    std::vector<std::uint8_t> pinned_;
};

/// A topology change prepared off the step thread, waiting for Simulation::commit.
class PreparedChange {
public:
    /// Nothing prepared.
    PreparedChange();
    ~PreparedChange();
    PreparedChange(PreparedChange&&) noexcept;
    PreparedChange& operator=(PreparedChange&&) noexcept;
    PreparedChange(const PreparedChange&) = delete;
    PreparedChange& operator=(const PreparedChange&) = delete;

    /// Whether it holds a change (false after commit took it).
    explicit operator bool() const { return next_ != nullptr; }
    /// After a commit: it holds what the swap retired (the old backend unless the history or a
    /// basis keeps it, the plan), freed with it, so that a caller can free them off the frame.
    bool holds_retired() const { return retired_ != nullptr; }
    /// The change's record so far (commit stamps frame and commit_ms).
    const TopologyChangeRecord& record() const { return record_; }
    /// The new rest mesh.
    const TetMesh& mesh() const;

private:
    friend class Simulation;
    std::shared_ptr<const SimulationBackend> base_; // prepared on (the staleness check)
    std::shared_ptr<SimulationBackend> next_;       // built; state and pins set by commit
    TransferPlan plan_;                             // base_'s nodes -> next_'s nodes
    NodeState carried_; // the commit's transfer, sized (and touched) by the preparation
    TopologyChangeRecord record_;
    std::shared_ptr<SimulationBackend> retired_; // the backend commit swapped out
};

} // namespace edn
