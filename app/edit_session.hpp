#pragma once
/// The edit session: the scene being edited and its Simulation, and the edits the user makes to
/// its topology (cut, refine brush, refine all, undo). The edits are the engine's
/// (Simulation::cut, refine_sphere, refine_uniform, undo; sim/topology_change.hpp); the session
/// rebuilds the scene (boundary surface) after each and keeps the records of simulations a
/// scene load replaced, so --stats covers the whole run. Also: a screen stroke -> blade plane.

#include "core/error.hpp"
#include "mesh/cut.hpp"
#include "picking.hpp"
#include "scene.hpp"
#include "sim_driver.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace edn {

/// Cuts and refinements Ctrl+Z can take back; each snapshot holds a mesh and its node state.
inline constexpr std::size_t kMaxUndo = 8;
/// Largest mesh a refinement may produce in the app (cells): beyond it a frame takes seconds
/// and the matrix gigabytes.
inline constexpr std::int64_t kMaxRefineCells = 4'000'000;
/// Strokes shorter than this (pixels) are clicks, not cuts.
inline constexpr float kMinStrokePixels = 3.0f;

/// The blade of a screen stroke from `from` to `to` (pixels): the plane holding the stroke
/// swept along the view, at the view depth of `surface_point` (the surface under the stroke's
/// middle) or else of the orbit target; its radius half the stroke's world length. nullopt for
/// a stroke shorter than kMinStrokePixels or one that points away from the view.
std::optional<CutPlane> stroke_plane(const ViewState& view, const glm::vec2& from,
                                     const glm::vec2& to,
                                     const std::optional<glm::vec3>& surface_point);

/// What an edit did: its record, or why it failed, and the panel's message line either way.
struct EditResult {
    std::optional<TopologyChangeRecord> record; ///< set when the edit was applied
    std::string message;                        ///< the panel's message (or the error)
    std::optional<ErrorCode> error;             ///< the engine's error code when it failed
};

/// A cut committed by EditSession::finish_cut.
struct CutCommit {
    EditResult result;  ///< as EditSession::cut's
    bool piece = false; ///< a stroke piece (start_cut's `piece`)
};

/// A cut asked for: the blade and whether it is a stroke piece.
struct CutRequest {
    CutPlane plane;     ///< the blade
    bool piece = false; ///< a stroke piece (CutCommit::piece)
};

/// Owns the scene and its Simulation; applies topology edits through the engine.
///
/// Cuts run in two phases (sim/prepared_change.hpp): start_cut prepares the cut on a background
/// thread (the split, the new backend and the new scene's boundary) while the simulation keeps
/// stepping; finish_cut, in a later turn, commits it with the state of that turn. One cut is
/// prepared at a time; cuts asked for meanwhile wait in order and each is prepared on the mesh
/// its predecessor left. Every other edit (refine, undo) first waits for and commits the pending
/// cuts, so edits apply in the order they were asked for; a scene load drops them. A caller that
/// shows the scene commits them itself first (finish_cut), so that it sees every scene change.
class EditSession {
public:
    EditSession();
    /// Waits for a cut being prepared and drops it.
    ~EditSession();
    EditSession(const EditSession&) = delete;
    EditSession& operator=(const EditSession&) = delete;

    /// The scene shown (null when none is loaded).
    Scene* scene() const { return scene_.get(); }
    /// Its simulation (null when none could be built).
    SimDriver* sim() const { return sim_.get(); }

    /// Replaces the scene and its simulation (null: none); the undo history goes with the old
    /// simulation, its records are kept.
    void load(std::unique_ptr<Scene> scene, std::unique_ptr<Simulation> simulation);
    /// Gives the current scene a simulation (after it had none).
    void attach(std::unique_ptr<Simulation> simulation);

    /// Cuts along `plane` at `frame`, now (start_cut + finish_cut waiting); on success the
    /// scene is rebuilt.
    EditResult cut(const CutPlane& plane, std::int64_t frame);
    /// Starts preparing a cut along `plane` on a background thread (call in a turn); behind a
    /// pending cut it waits its turn. `piece`: a stroke piece (CutCommit::piece).
    void start_cut(const CutPlane& plane, bool piece);
    /// Whether a cut is being prepared or waits to be.
    bool cut_pending() const { return job_ != nullptr || !waiting_.empty(); }
    /// Whether the oldest pending cut is prepared: finish_cut commits it without waiting.
    bool cut_ready() const;
    /// In a turn: commits the oldest pending cut at `frame` once it is prepared (`wait`: waits
    /// for it), rebuilds the scene and starts preparing the next; nullopt while it is being
    /// prepared or when none is pending. A preparation made stale by a change in between (a
    /// settings change: a new backend) is prepared again on the current simulation. An error of
    /// the preparation or the commit comes back in the result (the current scene stays).
    std::optional<CutCommit> finish_cut(std::int64_t frame, bool wait);
    /// Opens (true) or closes a group of topology changes undo takes back as one (a stroke's
    /// pieces, Simulation::group_changes). Closing waits for the pending cuts: it happens when
    /// the last of them is committed. Opening first commits the pending cuts of an earlier group.
    void group_changes(bool open, std::int64_t frame);
    /// Refines inside the sphere (`center`, `radius`, `levels`) or, without a center, every
    /// cell 1 -> 8; on success the scene is rebuilt.
    EditResult refine(const std::optional<Vec3>& center, double radius, int levels,
                      std::int64_t frame);
    /// Goes back before the last cut or refinement; on success the scene is rebuilt.
    EditResult undo(std::int64_t frame);

    /// Every cut, refinement and undo of this run, oldest first.
    std::vector<TopologyChangeRecord> topology_changes() const;

private:
    struct CutJob;
    void rebuild_scene();
    /// Starts preparing `request` on a background thread (CutJob::prepare).
    void launch(const CutRequest& request);
    /// Starts the next waiting cut, or closes a group whose close waited for the cuts.
    void next_cut();
    /// Waits for and commits every pending cut (before another edit).
    void settle_cuts(std::int64_t frame);
    /// Waits for the cut being prepared and drops it and the waiting ones (a scene change).
    void drop_cuts();
    /// Frees a committed job (the retired backend, the plan) on a thread of its own.
    void retire(std::unique_ptr<CutJob> job);

    std::unique_ptr<Scene> scene_;
    std::unique_ptr<SimDriver> sim_;
    // Records of simulations a scene load replaced (the current one keeps its own).
    std::vector<TopologyChangeRecord> earlier_changes_;
    std::unique_ptr<CutJob> job_;      // the cut being prepared (or prepared, not committed)
    std::deque<CutRequest> waiting_;   // cuts asked for behind it, oldest first
    bool close_group_pending_ = false; // group_changes(false) waits for the pending cuts
    std::thread retiring_;             // frees the last committed job's leftovers
};

} // namespace edn
