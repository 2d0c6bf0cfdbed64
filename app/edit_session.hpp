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
#include <memory>
#include <optional>
#include <string>
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

/// Owns the scene and its Simulation; applies topology edits through the engine.
class EditSession {
public:
    /// The scene shown (null when none is loaded).
    Scene* scene() const { return scene_.get(); }
    /// Its simulation (null when none could be built).
    SimDriver* sim() const { return sim_.get(); }

    /// Replaces the scene and its simulation (null: none); the undo history goes with the old
    /// simulation, its records are kept.
    void load(std::unique_ptr<Scene> scene, std::unique_ptr<Simulation> simulation);
    /// Gives the current scene a simulation (after it had none).
    void attach(std::unique_ptr<Simulation> simulation);

    /// Cuts along `plane` at `frame`; on success the scene is rebuilt.
    EditResult cut(const CutPlane& plane, std::int64_t frame);
    /// Refines inside the sphere (`center`, `radius`, `levels`) or, without a center, every
    /// cell 1 -> 8; on success the scene is rebuilt.
    EditResult refine(const std::optional<Vec3>& center, double radius, int levels,
                      std::int64_t frame);
    /// Goes back before the last cut or refinement; on success the scene is rebuilt.
    EditResult undo(std::int64_t frame);

    /// Every cut, refinement and undo of this run, oldest first.
    std::vector<TopologyChangeRecord> topology_changes() const;

private:
    void rebuild_scene();

    std::unique_ptr<Scene> scene_;
    std::unique_ptr<SimDriver> sim_;
    // Records of simulations a scene load replaced (the current one keeps its own).
    std::vector<TopologyChangeRecord> earlier_changes_;
};

} // namespace edn
