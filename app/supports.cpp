#include "supports.hpp"

#include "core/error.hpp"
#include "scene.hpp"

#include <algorithm>
#include <cmath>

namespace edn {

std::optional<int> parse_axis(std::string_view name) {
    if (name == "x") return 0;
    if (name == "y") return 1;
    if (name == "z") return 2;
    return std::nullopt;
}

double pin_plane_coordinate(const PinPlane& plane, const Vec3& lower, const Vec3& upper) {
    EDN_VERIFY(plane.axis >= 0 && plane.axis <= 2, ErrorCode::Usage,
               "pin plane axis " << plane.axis << " not in 0..2");
    if (plane.coordinate) return *plane.coordinate;
    const double extent = upper[plane.axis] - lower[plane.axis];
    const double fraction = plane.fraction.value_or(0.0);
    return plane.above ? upper[plane.axis] - fraction * extent
                       : lower[plane.axis] + fraction * extent;
}

std::vector<Index> pin_plane_vertices(const TetMesh& mesh, const PinPlane& plane) {
    std::vector<Index> vertices;
    if (mesh.positions.empty()) return vertices;
    Vec3 lower = mesh.positions.front(), upper = lower;
    for (const Vec3& p : mesh.positions)
        for (int d = 0; d < 3; ++d) {
            lower[d] = std::min(lower[d], p[d]);
            upper[d] = std::max(upper[d], p[d]);
        }
    const double at = pin_plane_coordinate(plane, lower, upper);
    double extent = 0;
    for (int d = 0; d < 3; ++d) extent = std::max(extent, upper[d] - lower[d]);
    const double tolerance = 1e-9 * extent;
    for (Index v = 0; v < mesh.num_vertices(); ++v) {
        const double c = mesh.positions[static_cast<std::size_t>(v)][plane.axis];
        if (plane.above ? c >= at - tolerance : c <= at + tolerance) vertices.push_back(v);
    }
    return vertices;
}

double default_ground_height(const Scene& scene) {
    return static_cast<double>(scene.lower.z);
}

double default_ground_stiffness(double total_mass, double diagonal) {
    constexpr double kStandardGravity = 9.81; // [m/s^2]
    constexpr double kSinkFraction = 0.005;   // of the diagonal, under the whole weight on a node
    const double floor = SimulationSettings{}.ground_stiffness;
    if (!(diagonal > 0)) return floor;
    return std::max(floor, total_mass * kStandardGravity / (kSinkFraction * diagonal));
}

std::string support_warning(const SimulationSettings& settings, Index pinned_vertices) {
    if (pinned_vertices > 0 || settings.ground_height) return {};
    if (settings.integrator == Integrator::Static)
        return "nothing holds the body: a static solve needs pins or the ground";
    const bool gravity = std::any_of(settings.gravity.begin(), settings.gravity.end(),
                                     [](double g) { return g != 0.0; });
    if (!gravity) return {};
    return "no pins and no ground: the body falls forever (pin a plane or turn the ground on)";
}

} // namespace edn
