#pragma once
/// What holds a body up in the app: pins by an axis-aligned plane, the ground's default height
/// (the grid's: the two coincide), and the warning for a dynamic scene that nothing holds.

#include "core/types.hpp"
#include "mesh/tet_mesh.hpp"
#include "sim/simulation.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edn {

struct Scene;

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

/// "x", "y", "z" -> 0, 1, 2; nullopt otherwise.
std::optional<int> parse_axis(std::string_view name);

/// The plane's world coordinate on its axis for a mesh of bounding box [lower, upper]
/// (fraction 0 when neither fraction nor coordinate is given).
double pin_plane_coordinate(const PinPlane& plane, const Vec3& lower, const Vec3& upper);

/// The vertices of `mesh` (rest positions) on the plane's side, the plane itself included (to
/// a tolerance of 1e-9 of the mesh's extent, so fraction 0 pins a face's vertices).
std::vector<Index> pin_plane_vertices(const TetMesh& mesh, const PinPlane& plane);

/// The ground's default height: the bottom of the scene's bounding box, where the renderer
/// draws the grid (the app draws the grid at the ground height, so they coincide).
double default_ground_height(const Scene& scene);

/// The app's ground stiffness [N/m per node] for a body of `total_mass` [kg] and bounding-box
/// diagonal `diagonal` [m]: its whole weight (standard gravity) on one node sinks it by 0.5 % of
/// its size (the engine's fixed 1e5 N/m lets a 1 m, 1000 kg cube sink by 2 cm), and never below
/// the engine's default.
double default_ground_stiffness(double total_mass, double diagonal);

/// Why the body would drift or fall forever (a dynamic scene under gravity, or a static solve,
/// with no pinned vertex and no ground), or empty when something holds it.
std::string support_warning(const SimulationSettings& settings, Index pinned_vertices);

} // namespace edn
