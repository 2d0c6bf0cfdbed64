// The curved surface map (app/surface_map.hpp): nodes placed on a known polynomial map X of
// degree p are reproduced exactly by order-p elements, so the tessellated boundary must lie on
// X(face) with the normal of the curved geometry, dX/du x dX/dv, at every render vertex.

#include "curved_surface.hpp"
#include "mesh/box_mesh.hpp"
#include "renderer.hpp"
#include "scene.hpp"
#include "sim/simulation.hpp"
#include "surface_map.hpp"

#include <array>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>

namespace edn {
namespace {

using Map3 = std::function<Vec3(const Vec3&)>;
using Jacobian = std::function<std::array<Vec3, 3>(const Vec3&)>; // columns dX/dx_k

Vec3 cross(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

double norm(const Vec3& a) {
    return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

Vec3 jacobian_times(const std::array<Vec3, 3>& columns, const Vec3& d) {
    Vec3 out{0, 0, 0};
    for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 3; ++i) out[i] += columns[k][i] * d[k];
    return out;
}

/// A quadratic map (exact for p = 2) and its Jacobian.
Vec3 quadratic(const Vec3& x) {
    return {x[0] + 0.3 * x[1] * x[1], x[1] + 0.4 * x[0] * x[2],
            x[2] + 0.25 * x[0] * x[0] - 0.2 * x[1] * x[2]};
}
std::array<Vec3, 3> quadratic_jacobian(const Vec3& x) {
    return {Vec3{1.0, 0.4 * x[2], 0.5 * x[0]}, Vec3{0.6 * x[1], 1.0, -0.2 * x[2]},
            Vec3{0.0, 0.4 * x[0], 1.0 - 0.2 * x[1]}};
}

/// A cubic map (exact for p = 3, not for p = 2) and its Jacobian.
Vec3 cubic(const Vec3& x) {
    return {x[0] + 0.3 * x[1] * x[1] * x[1], x[1] + 0.5 * x[0] * x[0] * x[2],
            x[2] + 0.4 * x[0] * x[1] * x[2]};
}
std::array<Vec3, 3> cubic_jacobian(const Vec3& x) {
    return {Vec3{1.0, 1.0 * x[0] * x[2], 0.4 * x[1] * x[2]},
            Vec3{0.9 * x[1] * x[1], 1.0, 0.4 * x[0] * x[2]},
            Vec3{0.0, 0.5 * x[0] * x[0], 1.0 + 0.4 * x[0] * x[1]}};
}

/// The nodes of `sim` (rest, straight-sided) moved by X; the map built and evaluated on them.
struct Curved {
    Scene scene;
    SurfaceMap map;
    std::vector<double> rest;
    std::vector<float> vertices;
};

Curved curve(TetMesh mesh, int order, const Map3& X, int subdivisions) {
    Curved c;
    SimulationSettings settings;
    settings.order = order;
    const Simulation sim(mesh, settings);
    c.scene = make_scene("test", mesh);
    c.rest = sim.rest_positions();
    std::vector<double> x(c.rest.size());
    for (std::size_t i = 0; i < x.size(); i += 3) {
        const Vec3 p = X({c.rest[i], c.rest[i + 1], c.rest[i + 2]});
        for (int d = 0; d < 3; ++d) x[i + d] = p[d];
    }
    c.map =
        build_surface_map(c.scene.surface, sim.mesh().cells, order, sim.cell_nodes(), subdivisions);
    evaluate_surface_map(c.map, x.data(), c.vertices);
    return c;
}

/// Checks every render vertex against X and its curved normal; returns how many were checked.
int expect_on_analytic_surface(const Curved& c, const Map3& X, const Jacobian& J) {
    const SurfaceMap& map = c.map;
    const std::vector<Vec3>& p = c.scene.mesh.positions;
    EXPECT_EQ(c.vertices.size(), 7u * static_cast<std::size_t>(map.num_vertices()));
    int checked = 0;
    for (Index r = 0; r < map.num_vertices(); ++r) {
        Vec3 expected_normal{0, 0, 0};
        Vec3 expected_position{0, 0, 0};
        for (Index s = map.sample_offsets[r]; s < map.sample_offsets[r + 1]; ++s) {
            const Index face = map.samples[s] / map.pattern_points;
            const int q = map.samples[s] % map.pattern_points;
            double u = 0, v = 0;
            map.pattern_uv(q, u, v);
            const Tri& tri = c.scene.surface.triangles[static_cast<std::size_t>(face)];
            const Vec3& a = p[static_cast<std::size_t>(c.scene.surface.mesh_vertex[tri[0]])];
            const Vec3& b = p[static_cast<std::size_t>(c.scene.surface.mesh_vertex[tri[1]])];
            const Vec3& e = p[static_cast<std::size_t>(c.scene.surface.mesh_vertex[tri[2]])];
            Vec3 rest_point, ab, ae;
            for (int d = 0; d < 3; ++d) {
                rest_point[d] = (1 - u - v) * a[d] + u * b[d] + v * e[d];
                ab[d] = b[d] - a[d];
                ae[d] = e[d] - a[d];
            }
            const Vec3 position = X(rest_point);
            if (s == map.sample_offsets[r]) expected_position = position;
            for (int d = 0; d < 3; ++d)
                EXPECT_NEAR(position[d], expected_position[d], 1e-12) << "faces disagree at " << r;
            const std::array<Vec3, 3> jac = J(rest_point);
            const Vec3 n = cross(jacobian_times(jac, ab), jacobian_times(jac, ae));
            for (int d = 0; d < 3; ++d) expected_normal[d] += n[d];
        }
        const double length = norm(expected_normal);
        const float* out = c.vertices.data() + 7 * static_cast<std::size_t>(r);
        for (int d = 0; d < 3; ++d) {
            EXPECT_NEAR(out[d], expected_position[d], 2e-6) << "render vertex " << r;
            EXPECT_NEAR(out[3 + d], expected_normal[d] / length, 2e-5) << "render vertex " << r;
        }
        ++checked;
    }
    return checked;
}

TEST(SurfaceMap, QuadraticElementReproducesAQuadraticSurfaceAndItsNormals) {
    TetMesh tet;
    tet.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    tet.cells = {{0, 1, 2, 3}};
    const Curved c = curve(tet, 2, quadratic, 4);
    // 4 corners, 6 edges x 3 shared points, 4 faces x 3 interior points.
    EXPECT_EQ(c.map.num_vertices(), 4 + 6 * 3 + 4 * 3);
    EXPECT_EQ(c.map.triangles.size(), 4u * 16u);
    EXPECT_EQ(expect_on_analytic_surface(c, quadratic, quadratic_jacobian), c.map.num_vertices());
}

TEST(SurfaceMap, CubicElementReproducesACubicSurfaceAndItsNormals) {
    // The same tet with its vertices in another local order (still positively oriented).
    TetMesh tet;
    tet.positions = {{0, 0, 0}, {0, 1, 0}, {1, 0, 0}, {0, 0, 1}};
    tet.cells = {{1, 0, 2, 3}};
    const Curved c = curve(tet, 3, cubic, 6);
    EXPECT_EQ(expect_on_analytic_surface(c, cubic, cubic_jacobian), c.map.num_vertices());
}

TEST(SurfaceMap, BoxMeshesShareEdgePointsAndFollowTheCurvedMapEverywhere) {
    for (int order : {2, 3}) {
        const Map3 X = order == 2 ? Map3(quadratic) : Map3(cubic);
        const Jacobian J = order == 2 ? Jacobian(quadratic_jacobian) : Jacobian(cubic_jacobian);
        const int n = surface_subdivisions(order);
        const Curved c = curve(make_box_tet_mesh(2, 2, 1, {0, 0, 0}, {1, 1, 0.5}), order, X, n);
        // A closed surface: every edge is shared by two faces, so its n - 1 points appear once.
        const std::size_t faces = c.scene.surface.triangles.size();
        const std::size_t expected = c.scene.surface.mesh_vertex.size() +
                                     (3 * faces / 2) * static_cast<std::size_t>(n - 1) +
                                     faces * static_cast<std::size_t>((n - 1) * (n - 2) / 2);
        EXPECT_EQ(static_cast<std::size_t>(c.map.num_vertices()), expected) << "order " << order;
        expect_on_analytic_surface(c, X, J);
        // Render triangles face the way their vertex normals do (outward, counter-clockwise).
        for (const Tri& t : c.map.triangles) {
            const float* a = c.vertices.data() + 7 * t[0];
            const float* b = c.vertices.data() + 7 * t[1];
            const float* e = c.vertices.data() + 7 * t[2];
            const Vec3 geometric = cross({b[0] - a[0], b[1] - a[1], b[2] - a[2]},
                                         {e[0] - a[0], e[1] - a[1], e[2] - a[2]});
            const double along = geometric[0] * (a[3] + b[3] + e[3]) +
                                 geometric[1] * (a[4] + b[4] + e[4]) +
                                 geometric[2] * (a[5] + b[5] + e[5]);
            EXPECT_GT(along, 0.0);
        }
    }
}

TEST(SurfaceMap, ALinearMapIsTheIdentityOnTheSurfaceVertices) {
    const TetMesh mesh = make_box_tet_mesh(2, 1, 1, {0, 0, 0}, {2, 1, 1});
    const Curved c = curve(
        mesh, 1, [](const Vec3& x) { return x; }, 1);
    ASSERT_EQ(c.map.num_vertices(), static_cast<Index>(c.scene.surface.mesh_vertex.size()));
    EXPECT_EQ(c.map.triangles, c.scene.surface.triangles);
    std::vector<glm::vec3> positions, normals;
    gather_surface_positions(mesh.positions, c.scene.surface, positions);
    compute_vertex_normals(positions, c.scene.surface.triangles, normals);
    for (std::size_t r = 0; r < positions.size(); ++r) {
        const float* out = c.vertices.data() + 7 * r;
        for (int d = 0; d < 3; ++d) {
            EXPECT_EQ(out[d], positions[r][d]) << r;
            EXPECT_NEAR(out[3 + d], normals[r][d], 1e-6f) << r;
        }
    }
}

TEST(SurfaceMap, ANonQuadraticFieldIsNotReproducedByQuadraticElements) {
    // The check above can fail: p = 2 elements cannot carry the cubic map exactly.
    TetMesh tet;
    tet.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    tet.cells = {{0, 1, 2, 3}};
    const Curved c = curve(tet, 2, cubic, 4);
    double worst = 0;
    for (Index r = 0; r < c.map.num_vertices(); ++r) {
        const Index face = c.map.samples[c.map.sample_offsets[r]] / c.map.pattern_points;
        const int q = c.map.samples[c.map.sample_offsets[r]] % c.map.pattern_points;
        double u = 0, v = 0;
        c.map.pattern_uv(q, u, v);
        const Tri& tri = c.scene.surface.triangles[static_cast<std::size_t>(face)];
        Vec3 rest{0, 0, 0};
        for (int d = 0; d < 3; ++d)
            rest[d] = (1 - u - v) * tet.positions[c.scene.surface.mesh_vertex[tri[0]]][d] +
                      u * tet.positions[c.scene.surface.mesh_vertex[tri[1]]][d] +
                      v * tet.positions[c.scene.surface.mesh_vertex[tri[2]]][d];
        const Vec3 exact = cubic(rest);
        for (int d = 0; d < 3; ++d)
            worst = std::max(worst, std::abs(exact[d] - c.vertices[7 * r + d]));
    }
    EXPECT_GT(worst, 1e-3);
}

TEST(CurvedSurface, FollowsTheSimulationsOrderAndColoursTheRenderVertices) {
    const TetMesh mesh = make_box_tet_mesh(2, 1, 1, {0, 0, 0}, {2, 1, 1});
    const Scene scene = make_scene("box", mesh);
    SimulationSettings settings;
    Simulation sim(mesh, settings);
    CurvedSurface curved;
    EXPECT_FALSE(curved.sync(sim, scene)); // p = 1: nothing to draw differently
    EXPECT_FALSE(curved.active());
    sim.change_order(2);
    EXPECT_TRUE(curved.sync(sim, scene));
    ASSERT_TRUE(curved.active());
    EXPECT_FALSE(curved.sync(sim, scene)); // unchanged: no rebuild
    curved.invalidate();
    EXPECT_TRUE(curved.sync(sim, scene));
    const SurfaceMap& map = curved.map();
    EXPECT_EQ(map.num_corners, static_cast<Index>(scene.surface.mesh_vertex.size()));
    EXPECT_EQ(curved.rest().size(), 3 * static_cast<std::size_t>(map.num_vertices()));

    // A rigid translation by (0.3, 0, 0.4): every render vertex moves by 0.5.
    std::vector<double> x = sim.rest_positions();
    for (std::size_t i = 0; i < x.size(); i += 3) {
        x[i] += 0.3;
        x[i + 2] += 0.4;
    }
    EXPECT_NEAR(curved.evaluate(x, InteropScalar::Displacement), 0.5f, 1e-6f);
    for (Index r = 0; r < map.num_vertices(); ++r)
        EXPECT_NEAR(curved.vertices()[7 * r + 6], 0.5f, 1e-6f) << r;
    // Cell values = cell index: a vertex inside a face shows its face's cell, a shared one the
    // mean over its faces' cells.
    std::vector<double> cells(mesh.cells.size());
    for (std::size_t c = 0; c < cells.size(); ++c) cells[c] = static_cast<double>(c);
    curved.evaluate(x, InteropScalar::Cells, cells.data());
    for (Index r = 0; r < map.num_vertices(); ++r) {
        double mean = 0;
        const Index begin = map.sample_offsets[r], end = map.sample_offsets[r + 1];
        for (Index s = begin; s < end; ++s)
            mean += scene.surface.face_cell[map.samples[s] / map.pattern_points];
        EXPECT_NEAR(curved.vertices()[7 * r + 6], mean / (end - begin), 1e-5) << r;
    }
    EXPECT_EQ(curved.evaluate(x, InteropScalar::None), 0.0f);
    sim.change_order(1);
    EXPECT_TRUE(curved.sync(sim, scene)); // flat again: the renderer must be told
    EXPECT_FALSE(curved.active());
}

} // namespace
} // namespace edn
