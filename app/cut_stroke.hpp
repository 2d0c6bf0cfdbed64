#pragma once
/// Progressive cutting: while the left button is held in cut mode, the stroke cuts as it is
/// drawn. Each stroke segment (from the last point cut to the cursor, once it moved
/// kStrokeStepPixels and is longer than the next joint's overlap) sweeps a planar blade piece:
/// the plane through the camera rays of its two ends, outlined by the quad they sweep through
/// the body (CutPlane::outline, a partial split cut). The joints: a cell straddling the ray two
/// pieces share would be a crack-front cell of both partial cuts and keep the sides joined, so
/// each piece reaches back over its start by the size of the cells there (joint_margin), and
/// there the blade bends to follow the previous piece (CutPlane::bend): the overlap recuts the
/// previous plane instead of opening a flap beside it (a flap near the body's side would cut
/// off a sliver). A whole stroke is one undo step (Simulation::group_changes). The plane tool
/// cuts one plane at release instead (edit_session.hpp's stroke_plane). App's side: app_cut.cpp.

#include "core/types.hpp"
#include "mesh/cut.hpp"
#include "mesh/tet_mesh.hpp"
#include "picking.hpp"

#include <cstdint>
#include <glm/vec2.hpp>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace edn {

/// What a left drag does in cut mode.
enum class CutTool : std::uint8_t {
    Stroke, ///< the stroke cuts frame by frame while it is drawn (the default)
    Plane,  ///< one plane through the stroke, cut at release
};

/// "stroke", "plane".
const char* cut_tool_name(CutTool tool);
/// Parses a cut tool name; nullopt when unknown.
std::optional<CutTool> parse_cut_tool(std::string_view name);

/// Pixels the cursor moves from the last point cut before the stroke cuts the next piece.
inline constexpr float kStrokeStepPixels = 8.0f;
/// The last piece at release needs at least this many pixels (shorter: nothing more to cut).
inline constexpr float kStrokeEndPixels = 1.0f;

/// The blade piece a stroke segment sweeps: the plane through the rays of `from` and `to`
/// (pixels), outlined by the quad those rays sweep from their origins to distance `reach`,
/// widened in the plane by `margin_from` beyond `from` and `margin_to` beyond `to` [m] (the
/// overlaps with the neighbouring pieces); its normal is oriented as cross(ray of `from`, ray of
/// `to`), so consecutive pieces of a stroke agree. nullopt for rays too close to span a plane.
std::optional<CutPlane> stroke_piece(const ViewState& view, const glm::vec2& from,
                                     const glm::vec2& to, double reach, double margin_from,
                                     double margin_to);

/// How far a stroke piece must reach from the eye to pass the whole body: beyond the farthest
/// of `vertex_positions` (#V deformed vertex positions).
double stroke_reach(const ViewState& view, std::span<const Vec3> vertex_positions);

/// The overlap a piece needs across the joint at `ray` [m]: the longest edge of any cell that
/// could straddle the ray's line (all its vertices within its longest edge of the line), on the
/// deformed `vertex_positions` (#V), a little more for rounding; 0 when no cell is near.
double joint_margin(const TetMesh& mesh, std::span<const Vec3> vertex_positions, const Ray& ray);

/// The next piece of a stroke, from the last point cut `from` to the cursor `to`.
struct StrokePiece {
    /// False while the segment is shorter than the overlaps at its two ends: the cursor must
    /// move further (else the overlaps of neighbouring joints would cross).
    bool ready = false;
    std::optional<CutPlane> blade; ///< the piece's blade (none: the rays span no plane)
};

/// Plans the piece from `from` to `to` on `mesh` at its deformed `vertex_positions` (#V):
/// stroke_piece reaching past the body, overlapping back over the joint at `from` by
/// joint_margin and, after a first piece (`previous_normal`: its blade's normal), bent there to
/// follow it (CutPlane::bend), so the two pieces meet along the joint with no flap. Ready when
/// its width at the body's nearest depth exceeds the next piece's overlap, or when `last` (the
/// release).
StrokePiece plan_stroke_piece(const ViewState& view, const TetMesh& mesh,
                              std::span<const Vec3> vertex_positions, const glm::vec2& from,
                              const glm::vec2& to, const std::optional<Vec3>& previous_normal,
                              bool last);

/// The stroke being drawn in cut mode, as the simulation's turn cut it: the pixels it was cut
/// to so far (the first: where it started) and the last piece's normal. The UI draws it; the
/// turn extends it.
class CutStroke {
public:
    /// Starts a stroke at `pixel`.
    void begin(const glm::vec2& pixel);
    /// The last piece's blade normal (none before the first piece).
    const std::optional<Vec3>& last_normal() const { return last_normal_; }
    /// A piece with blade normal `normal` was cut (or tried).
    void set_last_normal(const Vec3& normal) { last_normal_ = normal; }
    /// Ends (or abandons) the stroke.
    void end();
    /// Whether a stroke is in progress.
    bool active() const { return !points_.empty(); }
    /// Where it started.
    const glm::vec2& start() const { return points_.front(); }
    /// The last point it was cut to (the start before the first piece).
    const glm::vec2& cut_to() const { return points_.back(); }
    /// The stroke was cut (or tried) up to `pixel`.
    void add_point(const glm::vec2& pixel) { points_.push_back(pixel); }
    /// Every point cut to, the start first.
    const std::vector<glm::vec2>& points() const { return points_; }

private:
    std::vector<glm::vec2> points_;
    std::optional<Vec3> last_normal_;
};

} // namespace edn
