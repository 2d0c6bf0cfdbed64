#pragma once
/// Region drag: the vertex nodes around a grabbed point, each pulled by its own spring so the
/// neighbourhood follows the cursor (DragSpring::region). Weights fall off smoothly with the
/// rest-space distance, (1 - (d/r)^2)^2, and are normalised to sum 1, so the region's total
/// stiffness is the DragSpring's, as for the single point spring.
///
/// All vertex nodes within the radius are taken, interior ones included: pulling only the
/// surface leaves the interior behind and shears the surface layer's elements (the spike moves
/// into a thin sheet); a ball of material moves as a lump, like a hand grabbing it. Vertex nodes
/// only: their indices survive order changes (Simulation::change_settings carries the drag), and
/// the edge/face nodes of p >= 2 follow through their elements.

#include "core/types.hpp"
#include "sim/simulation.hpp"

#include <vector>

namespace edn {

/// The region weight's falloff: (1 - (d/r)^2)^2 for distance d < radius r, else 0 (C1 at r).
inline double drag_falloff(double distance, double radius) {
    if (!(distance < radius)) return 0.0;
    const double s = 1.0 - (distance / radius) * (distance / radius);
    return s * s;
}

/// The region nodes of a drag grabbing `rest_point` (rest space; now at `point`).
/// @param rest         3 #nodes rest positions (vertex nodes first)
/// @param positions    3 #nodes current positions
/// @param num_vertices vertex nodes (the first num_vertices nodes)
/// @param radius       rest-space radius; <= 0 gives no region (the point spring)
/// @return the vertex nodes within `radius` of `rest_point`, weights drag_falloff normalised to
///         sum 1, offsets = current position - `point` (zero force at the grab); empty when no
///         vertex is within the radius.
std::vector<DragNode> drag_region(const std::vector<double>& rest,
                                  const std::vector<double>& positions, Index num_vertices,
                                  const Vec3& rest_point, const Vec3& point, double radius);

/// A drag grabbing the barycentric point (`vertices`, `weights`) of `simulation`'s current
/// state: target at the point's current position, and a region of `radius` (rest space) around
/// it (none for radius <= 0 or when no vertex is within it: then the point spring pulls).
DragSpring make_drag(const Simulation& simulation, const std::array<Index, 3>& vertices,
                     const std::array<double, 3>& weights, double radius, double stiffness);

} // namespace edn
