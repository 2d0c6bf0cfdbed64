#pragma once
/// Saving and resuming a simulation exactly (the app's "Save state" / "Load state",
/// `simulate --save-state / --load-state`): the current mesh after cuts and refinements (rest
/// positions, cells), the settings (order, ground, solver, ...), node positions, velocities,
/// pins, the drag spring, the frame number and what the Newton loop carries between steps
/// (SolverMemory), so that on the CPU a resumed run steps bit for bit as the original. The undo
/// history and the topology change records are not saved.
///
/// File layout (docs/SCENES.md): "EDNSTATE", u32 version, u32 byte-order mark 0x01020304, u64
/// header length, the JSON header (settings as in scenes, counts, frame, drag), then raw arrays
/// (rest positions f64 3V, cells i32 4T, positions f64 3N, velocities f64 3N, pins u8 N, the
/// solver memory f64 2 and, when the header says so, the warm start f64 3N), then a u64 FNV-1a
/// checksum of everything before it. Written atomically; a truncated, corrupt or foreign file is
/// one edn::Error(Parse) naming it.

#include "sim/simulation.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace edn {

/// The state file format version this build reads and writes.
inline constexpr std::uint32_t kStateVersion = 1;

/// Everything a Simulation needs to resume exactly.
struct SimulationState {
    TetMesh mesh;                     ///< the current rest mesh (after cuts and refinements)
    SimulationSettings settings;      ///< order, material, ground, solver, ...
    std::vector<double> positions;    ///< 3 #nodes
    std::vector<double> velocities;   ///< 3 #nodes
    std::vector<std::uint8_t> pinned; ///< #nodes
    std::optional<DragSpring> drag;   ///< the drag in force
    SolverMemory memory;              ///< what the next step takes over from the last
    std::int64_t frame = 0;           ///< Simulation::frame()
};

/// The state of `simulation` now.
SimulationState capture_state(const Simulation& simulation);

/// A Simulation in `state` (with `state.settings`; change them first to resume on another
/// backend). Throws edn::Error(Parse) "SOURCE: ..." when the state does not fit its mesh, others
/// as Simulation's constructor.
std::unique_ptr<Simulation> restore_simulation(const SimulationState& state,
                                               const std::string& source = "state");

/// Writes `state` to `path` atomically.
void write_state_file(const std::filesystem::path& path, const SimulationState& state);

/// Reads a state file. Throws edn::Error: Io when it cannot be read, Parse (one line naming the
/// file) when it is not a state file, of another version, truncated or corrupt.
SimulationState read_state_file(const std::filesystem::path& path);

} // namespace edn
