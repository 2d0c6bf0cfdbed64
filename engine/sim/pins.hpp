#pragma once
/// Pin regions by rest position, shared by the app (pin planes, app/supports.hpp), scenes
/// (sim/scene_file.hpp) and the CLI: a side of an axis-aligned plane or a box, resolved to the
/// mesh vertices they hold (Simulation::set_vertex_pins turns a vertex mask into node pins).

#include "core/types.hpp"
#include "mesh/tet_mesh.hpp"

#include <optional>
#include <string_view>
#include <vector>

namespace edn {

/// Pins every vertex on one side of an axis-aligned plane.
struct PinPlane {
    int axis = 2;       ///< 0: x, 1: y, 2: z
    bool above = false; ///< pin the side above the plane (larger coordinates), else below
    /// Where the plane is: the pinned slab's thickness as a fraction of the mesh's extent along
    /// the axis, measured from the pinned side's face (below 0.05: the lowest 5 %; above 0.05:
    /// the highest 5 %; 0: only the vertices on that face) ...
    std::optional<double> fraction;
    std::optional<double> coordinate; ///< ... or a world coordinate on the axis
};

/// Pins every vertex inside an axis-aligned box (its faces included).
struct PinBox {
    Vec3 lower{}; ///< smallest corner
    Vec3 upper{}; ///< largest corner
};

/// "x", "y", "z" -> 0, 1, 2; nullopt otherwise.
std::optional<int> parse_axis(std::string_view name);

/// "x", "y", "z" for 0, 1, 2.
const char* axis_name(int axis);

/// The plane's world coordinate on its axis for a mesh of bounding box [lower, upper]
/// (fraction 0 when neither fraction nor coordinate is given).
double pin_plane_coordinate(const PinPlane& plane, const Vec3& lower, const Vec3& upper);

/// The vertices of `mesh` (rest positions) on the plane's side, the plane itself included (to
/// a tolerance of 1e-9 of the mesh's extent, so fraction 0 pins a face's vertices).
std::vector<Index> pin_plane_vertices(const TetMesh& mesh, const PinPlane& plane);

/// The vertices of `mesh` (rest positions) inside `box`, its faces included (same tolerance).
std::vector<Index> pin_box_vertices(const TetMesh& mesh, const PinBox& box);

} // namespace edn
