#pragma once
/// What Simulation's topology changes (cut, refine, undo; sim/topology_change.cpp) report and
/// the limits a caller may put on them. A change builds a new backend for the new mesh with the
/// same settings, carries positions, velocities and pins over (sim/state_transfer.hpp) and swaps
/// it in; on edn::Error nothing has changed. Records are what run.json's "cuts"/"refinements"
/// and the app's --stats report.

#include "core/types.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace edn {

/// Which topology change a record describes.
enum class TopologyChangeKind : std::uint8_t {
    Cut,           ///< Simulation::cut
    RefineSphere,  ///< Simulation::refine_sphere (brush)
    RefineUniform, ///< Simulation::refine_uniform (1 -> 8)
    Undo,          ///< Simulation::undo
};

/// "cut", "sphere", "uniform", "undo" (run.json's refinement "kind" uses the middle two).
const char* topology_change_kind_name(TopologyChangeKind kind);

/// How Simulation::cut opens the mesh.
enum class CutMode : std::uint8_t {
    Split, ///< split the crossed cells along the blade, then separate (mesh/split_cut.hpp)
    Faces, ///< separate along existing faces near the blade, no new cells (mesh/cut.hpp)
};

/// "split", "faces".
const char* cut_mode_name(CutMode mode);

/// The mode named `name` ("split", "faces"); throws edn::Error(Usage) naming `what` otherwise.
CutMode parse_cut_mode(const std::string& name, const std::string& what);

/// One applied topology change. Fields that do not apply to the kind stay 0.
struct TopologyChangeRecord {
    TopologyChangeKind kind = TopologyChangeKind::Cut;
    std::int64_t frame = 0;            ///< Simulation::frame() when it was applied
    Index cells_before = 0;            ///< cells of the mesh before
    Index cells_after = 0;             ///< cells of the mesh after
    CutMode cut_mode = CutMode::Split; ///< cut: how it was made
    Index cut_faces = 0;               ///< cut: interior faces opened
    Index duplicated_vertices = 0;     ///< cut: vertices added by the separation
    Index split_cells = 0;             ///< split cut: old cells subdivided
    Index snapped_vertices = 0;        ///< split cut: vertices treated as on the blade
    Index components = 0;              ///< cut: connected components after
    Index new_vertices = 0;            ///< refine: edge midpoints; split cut: edge crossings
    double min_dihedral_deg = 0;       ///< refine, cut: smallest dihedral angle after
    double input_min_dihedral_deg = 0; ///< refine, cut: smallest dihedral angle before
    double min_volume = 0;             ///< cut: smallest cell volume after [m^3]
    double input_min_volume = 0;       ///< cut: smallest cell volume before [m^3]
    double refine_ms = 0;              ///< refine, split cut: the mesh change and state transfer
    double repattern_ms = 0;           ///< building the new backend: topology .. summation plans
    double pattern_build_ms = 0;       ///< of which its pattern and plans (pattern_build_ms())
    /// Of repattern_ms: the preconditioner set-up the preparation built for the new backend with
    /// the pins it carried (Simulation::solver_setup; the multigrid hierarchy; 0: none) [ms].
    double hierarchy_ms = 0;
    /// Prepare phase (sim/prepared_change.hpp): the mesh change, the new backend and the
    /// transfer plan, off the frame when the caller prepares on another thread [ms].
    double prepare_ms = 0;
    /// Commit phase: the current state carried over and the backend swapped in [ms] (what the
    /// frame waits for when the change was prepared off the frame; undo: its whole rebuild).
    double commit_ms = 0;
};

/// Limits a caller puts on topology changes; a change that breaks one throws
/// edn::Error(Usage) and leaves the simulation unchanged.
struct TopologyChangeOptions {
    /// Snapshots (mesh, settings, node state) kept for undo(), oldest dropped first; 0 keeps
    /// none. 8 is the app's Ctrl+Z depth.
    std::size_t undo_depth = 8;
    /// A cut crossing no interior face or a brush touching no cell is an error (else it is
    /// applied and recorded with zero counts, as the CLI does).
    bool reject_no_op = false;
    /// Refinements that would make more cells are refused (0: no limit beyond refine's own).
    std::int64_t max_cells = 0;
    /// How cut() opens the mesh.
    CutMode cut_mode = CutMode::Split;
    /// Named in error messages (e.g. the scene's file name); may be empty.
    std::string mesh_name;
};

} // namespace edn
