#include "mesh/shell_nesting.hpp"

#include "core/error.hpp"
#include "core/vec3_ops.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <utility>

namespace edn {
namespace {

/// Cavity triangles tried for a hole point before giving up (each try costs a few winding numbers
/// over the whole surface).
constexpr std::size_t kMaxHoleTriangles = 64;
/// Steps from a triangle's centroid along its normal, in units of sqrt(triangle area): large
/// first (far from the facet, TetGen locates it without trouble), smaller when a nested shell is
/// in the way.
constexpr double kHoleSteps[] = {0.1, 1e-2, 1e-3, 1e-4, 1e-5};

using vec3::cross;
using vec3::dot;
using vec3::sub;

/// Axis-aligned bounding box.
struct Box {
    Vec3 lo{}, hi{};
    bool contains(const Vec3& p) const {
        for (int k = 0; k < 3; ++k)
            if (p[k] < lo[k] || p[k] > hi[k]) return false;
        return true;
    }
    bool contains(const Box& inner) const { return contains(inner.lo) && contains(inner.hi); }
};

/// Triangles and bounding box of each shell.
struct Shells {
    std::vector<std::vector<Index>> triangles;
    std::vector<Box> boxes;
};

/// Groups the triangles by `shell_of_triangle` and measures each group.
Shells gather(const SurfaceMesh& surface, const std::vector<Index>& shell_of_triangle,
              Index num_shells) {
    Shells shells;
    shells.triangles.resize(static_cast<std::size_t>(num_shells));
    shells.boxes.resize(static_cast<std::size_t>(num_shells));
    std::vector<char> seen(static_cast<std::size_t>(num_shells), 0);
    for (std::size_t t = 0; t < surface.triangles.size(); ++t) {
        const Index s = shell_of_triangle[t];
        shells.triangles[s].push_back(static_cast<Index>(t));
        Box& box = shells.boxes[s];
        for (Index v : surface.triangles[t]) {
            const Vec3& p = surface.positions[v];
            if (!seen[s]) {
                box.lo = box.hi = p;
                seen[s] = 1;
            }
            for (int k = 0; k < 3; ++k) {
                box.lo[k] = std::min(box.lo[k], p[k]);
                box.hi[k] = std::max(box.hi[k], p[k]);
            }
        }
    }
    return shells;
}

/// Whether shell `s` winds around `point` (bounding box first, then the winding number).
bool encloses(const SurfaceMesh& surface, const Shells& shells, Index s, const Vec3& point) {
    return shells.boxes[s].contains(point) &&
           std::abs(winding_number(surface, shells.triangles[s], point)) > 0.5;
}

/// Number of shells that wind around `point`, or -1 when a winding number is far from an integer
/// (|w| in (1/4, 3/4): the point is on or very near a shell, and must not become a hole point).
Index enclosing_count(const SurfaceMesh& surface, const Shells& shells, const Vec3& point) {
    Index count = 0;
    for (std::size_t s = 0; s < shells.triangles.size(); ++s) {
        if (!shells.boxes[s].contains(point)) continue;
        const double winding = std::abs(winding_number(surface, shells.triangles[s], point));
        if (winding > 0.25 && winding < 0.75) return -1;
        count += winding >= 0.75;
    }
    return count;
}

} // namespace

double winding_number(const SurfaceMesh& surface, const std::vector<Index>& triangles,
                      const Vec3& point) {
    double solid_angle = 0;
    for (Index t : triangles) {
        const Tri& tri = surface.triangles[t];
        Vec3 u[3];
        bool at_vertex = false;
        for (int k = 0; k < 3; ++k) {
            u[k] = sub(surface.positions[tri[k]], point);
            // Unit vectors: no overflow for coordinates up to kMaxCoordinate, any scale alike.
            const double length = std::sqrt(dot(u[k], u[k]));
            at_vertex = at_vertex || length == 0;
            if (length > 0)
                for (double& x : u[k]) x /= length;
        }
        if (at_vertex) continue;
        // Solid angle of a triangle seen from the origin, unit corner vectors a, b, c:
        // tan(omega / 2) = a.(b x c) / (1 + a.b + b.c + c.a) (Van Oosterom and Strackee, 1983).
        const double numerator = dot(u[0], cross(u[1], u[2]));
        const double denominator = 1 + dot(u[0], u[1]) + dot(u[1], u[2]) + dot(u[2], u[0]);
        solid_angle += 2 * std::atan2(numerator, denominator);
    }
    return solid_angle / (4 * std::numbers::pi);
}

ShellNesting find_shell_nesting(const SurfaceMesh& surface) {
    // Shells: union-find over vertices, joined by the triangles.
    std::vector<Index> parent(surface.positions.size());
    std::iota(parent.begin(), parent.end(), Index{0});
    auto root = [&](Index v) {
        while (parent[v] != v) {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        return v;
    };
    for (const Tri& tri : surface.triangles)
        for (int k = 1; k < 3; ++k) {
            const Index a = root(tri[0]);
            const Index b = root(tri[k]);
            if (a != b) parent[std::max(a, b)] = std::min(a, b);
        }

    ShellNesting nesting;
    nesting.shell_of_triangle.resize(surface.triangles.size());
    std::vector<Index> shell_of_root(surface.positions.size(), -1);
    Index num_shells = 0;
    for (std::size_t t = 0; t < surface.triangles.size(); ++t) {
        Index& shell = shell_of_root[root(surface.triangles[t][0])];
        if (shell < 0) shell = num_shells++;
        nesting.shell_of_triangle[t] = shell;
    }
    nesting.depth.assign(static_cast<std::size_t>(num_shells), 0);
    if (num_shells < 2) return nesting;

    // Shells that do not intersect are either nested or apart, so one vertex of A decides whether
    // B encloses A; the box test skips most pairs and keeps overlapping (intersecting) shells
    // whose boxes are not nested from being counted.
    const Shells shells = gather(surface, nesting.shell_of_triangle, num_shells);
    for (Index a = 0; a < num_shells; ++a) {
        const Vec3& probe = surface.positions[surface.triangles[shells.triangles[a][0]][0]];
        for (Index b = 0; b < num_shells; ++b)
            if (b != a && shells.boxes[b].contains(shells.boxes[a]) &&
                encloses(surface, shells, b, probe))
                ++nesting.depth[a];
    }
    return nesting;
}

std::vector<Vec3> cavity_points(const SurfaceMesh& surface, const ShellNesting& nesting,
                                const std::string& source) {
    std::vector<Vec3> points;
    const Index num_shells = nesting.num_shells();
    bool any_cavity = false;
    for (Index s = 0; s < num_shells; ++s) any_cavity = any_cavity || nesting.is_cavity(s);
    if (!any_cavity) return points;

    const Shells shells = gather(surface, nesting.shell_of_triangle, num_shells);
    for (Index s = 0; s < num_shells; ++s) {
        if (!nesting.is_cavity(s)) continue;
        // Largest triangles first: the farthest a step can go from the cavity's wall.
        std::vector<std::pair<double, Index>> by_area;
        by_area.reserve(shells.triangles[s].size());
        for (Index t : shells.triangles[s]) {
            const Tri& tri = surface.triangles[t];
            const Vec3 normal = cross(sub(surface.positions[tri[1]], surface.positions[tri[0]]),
                                      sub(surface.positions[tri[2]], surface.positions[tri[0]]));
            by_area.push_back({-std::sqrt(dot(normal, normal)), t});
        }
        std::sort(by_area.begin(), by_area.end());

        bool found = false;
        const std::size_t tries = std::min(by_area.size(), kMaxHoleTriangles);
        for (std::size_t i = 0; i < tries && !found; ++i) {
            const Tri& tri = surface.triangles[by_area[i].second];
            const Vec3& a = surface.positions[tri[0]];
            const Vec3& b = surface.positions[tri[1]];
            const Vec3& c = surface.positions[tri[2]];
            const Vec3 centroid{(a[0] + b[0] + c[0]) / 3, (a[1] + b[1] + c[1]) / 3,
                                (a[2] + b[2] + c[2]) / 3};
            Vec3 normal = cross(sub(b, a), sub(c, a));
            const double twice_area = std::sqrt(dot(normal, normal));
            if (!(twice_area > 0)) continue;
            for (double& x : normal) x /= twice_area;
            const double size = std::sqrt(0.5 * twice_area);
            // Either side: the orientation of the shell is not relied on, the winding numbers say
            // which side is the cavity.
            for (double step : kHoleSteps) {
                for (double side : {1.0, -1.0}) {
                    Vec3 point{};
                    for (int k = 0; k < 3; ++k)
                        point[k] = centroid[k] + side * step * size * normal[k];
                    // Inside shell s and its depth(s) enclosers, and in no shell nested in s.
                    if (encloses(surface, shells, s, point) &&
                        enclosing_count(surface, shells, point) == nesting.depth[s] + 1) {
                        points.push_back(point);
                        found = true;
                        break;
                    }
                }
                if (found) break;
            }
        }
        EDN_VERIFY(found, ErrorCode::MeshingFailed,
                   source << ": found no point inside the cavity bounded by surface shell " << s
                          << " (" << shells.triangles[s].size()
                          << " triangles) that lies outside the shells nested in it (gap much "
                             "thinner than the cavity's triangles?)");
    }
    return points;
}

} // namespace edn
