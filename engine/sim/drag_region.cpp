#include "sim/drag_region.hpp"

#include "core/error.hpp"

#include <cmath>

namespace edn {

std::vector<DragNode> drag_region(const std::vector<double>& rest,
                                  const std::vector<double>& positions, Index num_vertices,
                                  const Vec3& rest_point, const Vec3& point, double radius) {
    EDN_VERIFY(rest.size() >= 3 * static_cast<std::size_t>(num_vertices) &&
                   positions.size() >= 3 * static_cast<std::size_t>(num_vertices),
               ErrorCode::Usage, "drag region: fewer positions than vertices");
    std::vector<DragNode> region;
    if (!(radius > 0)) return region;
    double total = 0;
    for (Index v = 0; v < num_vertices; ++v) {
        const std::size_t i = 3 * static_cast<std::size_t>(v);
        double d2 = 0;
        for (int d = 0; d < 3; ++d)
            d2 += (rest[i + d] - rest_point[d]) * (rest[i + d] - rest_point[d]);
        const double w = drag_falloff(std::sqrt(d2), radius);
        if (w <= 0) continue;
        DragNode node;
        node.node = v;
        node.weight = w;
        for (int d = 0; d < 3; ++d) node.offset[d] = positions[i + d] - point[d];
        region.push_back(node);
        total += w;
    }
    for (DragNode& node : region) node.weight /= total;
    return region;
}

DragSpring make_drag(const Simulation& simulation, const std::array<Index, 3>& vertices,
                     const std::array<double, 3>& weights, double radius, double stiffness) {
    const Index num_vertices = simulation.mesh().num_vertices();
    for (Index v : vertices)
        EDN_VERIFY(v >= 0 && v < num_vertices, ErrorCode::Usage,
                   "drag vertex " << v << " out of range");
    DragSpring drag;
    drag.vertices = vertices;
    drag.weights = weights;
    drag.stiffness = stiffness;
    const std::vector<double>& rest = simulation.rest_positions();
    const std::vector<double> x = simulation.positions();
    Vec3 rest_point{0, 0, 0};
    for (int k = 0; k < 3; ++k)
        for (int d = 0; d < 3; ++d) {
            const std::size_t i = 3 * static_cast<std::size_t>(vertices[k]) + d;
            rest_point[d] += weights[k] * rest[i];
            drag.target[d] += weights[k] * x[i];
        }
    drag.region = drag_region(rest, x, num_vertices, rest_point, drag.target, radius);
    return drag;
}

} // namespace edn
