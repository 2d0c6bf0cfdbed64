#include "sim/pins.hpp"

#include "core/error.hpp"

#include <algorithm>

namespace edn {
namespace {

/// Bounding box of the rest positions and the tolerance 1e-9 x its largest extent.
struct Bounds {
    Vec3 lower{}, upper{};
    double tolerance = 0;
};

Bounds bounds_of(const TetMesh& mesh) {
    Bounds b;
    if (mesh.positions.empty()) return b;
    b.lower = mesh.positions.front(), b.upper = b.lower;
    for (const Vec3& p : mesh.positions)
        for (int d = 0; d < 3; ++d) {
            b.lower[d] = std::min(b.lower[d], p[d]);
            b.upper[d] = std::max(b.upper[d], p[d]);
        }
    double extent = 0;
    for (int d = 0; d < 3; ++d) extent = std::max(extent, b.upper[d] - b.lower[d]);
    b.tolerance = 1e-9 * extent;
    return b;
}

} // namespace

std::optional<int> parse_axis(std::string_view name) {
    if (name == "x") return 0;
    if (name == "y") return 1;
    if (name == "z") return 2;
    return std::nullopt;
}

const char* axis_name(int axis) {
    static constexpr const char* kNames[] = {"x", "y", "z"};
    return axis >= 0 && axis <= 2 ? kNames[axis] : "?";
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
    const Bounds b = bounds_of(mesh);
    const double at = pin_plane_coordinate(plane, b.lower, b.upper);
    for (Index v = 0; v < mesh.num_vertices(); ++v) {
        const double c = mesh.positions[static_cast<std::size_t>(v)][plane.axis];
        if (plane.above ? c >= at - b.tolerance : c <= at + b.tolerance) vertices.push_back(v);
    }
    return vertices;
}

std::vector<Index> pin_box_vertices(const TetMesh& mesh, const PinBox& box) {
    std::vector<Index> vertices;
    if (mesh.positions.empty()) return vertices;
    const double tolerance = bounds_of(mesh).tolerance;
    for (Index v = 0; v < mesh.num_vertices(); ++v) {
        const Vec3& p = mesh.positions[static_cast<std::size_t>(v)];
        bool inside = true;
        for (int d = 0; d < 3; ++d)
            inside = inside && p[d] >= box.lower[d] - tolerance && p[d] <= box.upper[d] + tolerance;
        if (inside) vertices.push_back(v);
    }
    return vertices;
}

} // namespace edn
