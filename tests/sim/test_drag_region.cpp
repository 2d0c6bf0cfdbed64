// Region drag (DragSpring::region, sim/drag_region.hpp): the region's nodes and weights, its
// energy, gradient and Hessian against finite differences in double (CPU), and the grabbed
// neighbourhood following the target on every backend (the point spring pulls a spike).
#include "core/error.hpp"
#include "mesh/box_mesh.hpp"
#include "sim/drag_region.hpp"
#include "sim/simulation.hpp"
#include "support/backend.hpp"
#include "support/random.hpp"
#include "support/term_difference.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace edn {
namespace {

double distance(const std::vector<double>& x, Index node, const Vec3& p) {
    double d2 = 0;
    for (int d = 0; d < 3; ++d) d2 += (x[3 * node + d] - p[d]) * (x[3 * node + d] - p[d]);
    return std::sqrt(d2);
}

TEST(DragRegion, FalloffIsOneAtTheCentreZeroAtTheRadiusAndDecreasing) {
    EXPECT_EQ(drag_falloff(0.0, 2.0), 1.0);
    EXPECT_EQ(drag_falloff(2.0, 2.0), 0.0);
    EXPECT_EQ(drag_falloff(3.0, 2.0), 0.0);
    EXPECT_NEAR(drag_falloff(1.0, 2.0), 0.5625, 1e-15); // (1 - 1/4)^2
    for (double d = 0.0; d < 1.9; d += 0.1)
        EXPECT_GT(drag_falloff(d, 2.0), drag_falloff(d + 0.1, 2.0));
}

TEST(DragRegion, TakesTheVerticesWithinTheRadiusWithNormalisedFallingWeights) {
    const TetMesh mesh = make_box_tet_mesh(4, 4, 4, {0, 0, 0}, {0.4, 0.4, 0.4});
    SimulationSettings s;
    s.order = 2; // edge nodes exist but the region holds vertex nodes only
    Simulation sim(mesh, s);
    std::vector<double> x = sim.rest_positions();
    for (std::size_t k = 0; k < x.size(); ++k) x[k] += 0.01 * std::sin(1.3 * k);
    sim.set_state(x, std::vector<double>(x.size(), 0.0));
    const Vec3 rest_point{0.2, 0.2, 0.4}; // the top face's centre vertex
    const Vec3 point{0.25, 0.2, 0.45};
    const double radius = 0.15;
    const std::vector<DragNode> region =
        drag_region(sim.rest_positions(), x, mesh.num_vertices(), rest_point, point, radius);
    std::vector<std::uint8_t> in(static_cast<std::size_t>(mesh.num_vertices()), 0);
    double total = 0;
    for (const DragNode& n : region) {
        ASSERT_GE(n.node, 0);
        ASSERT_LT(n.node, mesh.num_vertices());
        EXPECT_FALSE(in[n.node]) << "node " << n.node << " twice";
        in[n.node] = 1;
        total += n.weight;
        for (int d = 0; d < 3; ++d) EXPECT_DOUBLE_EQ(n.offset[d], x[3 * n.node + d] - point[d]);
    }
    EXPECT_NEAR(total, 1.0, 1e-12);
    Index inside = 0;
    for (Index v = 0; v < mesh.num_vertices(); ++v) {
        const double d = distance(sim.rest_positions(), v, rest_point);
        EXPECT_EQ(bool(in[v]), d < radius) << "vertex " << v << " at " << d;
        inside += d < radius;
    }
    EXPECT_GT(inside, 9); // the top layer's centre patch and the layer below
    // Weights follow the falloff of the rest distance.
    for (const DragNode& a : region)
        for (const DragNode& b : region) {
            const double wa =
                drag_falloff(distance(sim.rest_positions(), a.node, rest_point), radius);
            const double wb =
                drag_falloff(distance(sim.rest_positions(), b.node, rest_point), radius);
            EXPECT_NEAR(a.weight * wb, b.weight * wa, 1e-14);
        }
    EXPECT_TRUE(
        drag_region(sim.rest_positions(), x, mesh.num_vertices(), rest_point, point, 0.0).empty());
}

TEST(DragRegion, MakeDragTargetsTheGrabbedPointWithZeroForceAtTheGrab) {
    Simulation sim(make_box_tet_mesh(2, 2, 2, {0, 0, 0}, {0.2, 0.2, 0.2}), SimulationSettings{});
    std::vector<double> x = sim.rest_positions();
    for (std::size_t k = 0; k < x.size(); ++k) x[k] += 0.003 * std::cos(0.7 * k);
    sim.set_state(x, std::vector<double>(x.size(), 0.0));
    // Vertex i + 3 j + 9 k of the 3 x 3 x 3 lattice: a top face around the centre (22).
    const DragSpring drag = make_drag(sim, {22, 23, 25}, {0.5, 0.3, 0.2}, 0.12, 300.0);
    ASSERT_FALSE(drag.region.empty());
    for (int d = 0; d < 3; ++d)
        EXPECT_NEAR(drag.target[d], 0.5 * x[66 + d] + 0.3 * x[69 + d] + 0.2 * x[75 + d], 1e-15);
    for (const DragNode& n : drag.region)
        for (int d = 0; d < 3; ++d)
            EXPECT_NEAR(drag.target[d] + n.offset[d], x[3 * n.node + d], 1e-15);
    EXPECT_THROW(make_drag(sim, {22, 23, 99}, {0.5, 0.3, 0.2}, 0.1, 1.0), Error);
}

TEST(DragRegion, SimulationRejectsBadRegions) {
    Simulation sim(make_box_tet_mesh(1, 1, 1, {0, 0, 0}, {1, 1, 1}), SimulationSettings{});
    DragSpring drag;
    drag.region = {{0, 0.5, {}}, {0, 0.5, {}}};
    EXPECT_THROW(sim.set_drag(drag), Error); // twice
    drag.region = {{0, 0.5, {}}, {8, 0.5, {}}};
    EXPECT_THROW(sim.set_drag(drag), Error); // not a vertex
    drag.region = {{0, -0.5, {}}};
    EXPECT_THROW(sim.set_drag(drag), Error); // negative weight
    drag.region = {{0, 1.0, {0, std::nan(""), 0}}};
    EXPECT_THROW(sim.set_drag(drag), Error);
    drag.region = {{0, 0.5, {}}, {7, 0.5, {}}};
    EXPECT_NO_THROW(sim.set_drag(drag));
}

TEST(DragRegion, EnergyGradientAndHessianMatchFiniteDifferences) {
    for (const auto& [radius, order] : {std::pair{0.0, 1}, {0.15, 1}, {0.15, 2}}) {
        // The point spring and a region (p = 2: vertex nodes among edge nodes).
        SCOPED_TRACE("radius " + std::to_string(radius) + " p" + std::to_string(order));
        const TetMesh mesh = make_box_tet_mesh(3, 3, 3, {0, 0, 0}, {0.3, 0.3, 0.3});
        SimulationSettings s;
        s.order = order;
        Simulation with(mesh, s), without(mesh, s);
        // Three vertices of one cell (the point spring couples them), the top corner's.
        const Cell& cell = mesh.cells.back();
        DragSpring drag =
            make_drag(with, {cell[0], cell[1], cell[2]}, {0.2, 0.5, 0.3}, radius, 700.0);
        EXPECT_EQ(drag.region.empty(), radius == 0.0);
        drag.target = {0.2, 0.1, 0.4}; // pulled away from the grab
        with.set_drag(drag);
        std::vector<double> y = with.rest_positions();
        const std::vector<double> shift = test::random_vector(y.size(), 5);
        for (std::size_t k = 0; k < y.size(); ++k) y[k] += 0.01 * shift[k];
        const std::vector<double> dir = test::random_vector(y.size(), 9);
        const test::TermParts t = test::expect_term_derivatives(with, without, y, dir);
        EXPECT_GT(t.energy, 0);
    }
}

class DragRegionPerBackend : public test::BackendTest {};

/// Displacement along z of every vertex node of a 0.4 m cube pinned at its base, pulled up by
/// 5 cm at its top face's centre with a drag of `radius`, at equilibrium.
std::vector<double> pulled_up(Backend backend, double radius, const TetMesh& mesh) {
    SimulationSettings s;
    s.backend = backend;
    s.integrator = Integrator::Static;
    s.gravity = {0, 0, 0};
    s.max_newton_iterations = 40;
    Simulation sim(mesh, s);
    sim.pin_below(1e-9);
    // Vertex i + 5 j + 25 k of the 5 x 5 x 5 lattice: the top centre is 112.
    DragSpring drag = make_drag(sim, {112, 113, 117}, {1, 0, 0}, radius, 5e4);
    drag.target[2] += 0.05;
    sim.set_drag(drag);
    for (int i = 0; i < 3; ++i) sim.step();
    const std::vector<double> x = sim.positions();
    std::vector<double> dz;
    for (Index v = 0; v < mesh.num_vertices(); ++v)
        dz.push_back(x[3 * v + 2] - sim.rest_positions()[3 * v + 2]);
    return dz;
}

TEST_P(DragRegionPerBackend, TheNeighbourhoodFollowsTheTargetFallingOffWithDistance) {
    const TetMesh mesh = make_box_tet_mesh(4, 4, 4, {0, 0, 0}, {0.4, 0.4, 0.4});
    const double radius = 0.25;
    const std::vector<double> region = pulled_up(backend(), radius, mesh);
    const std::vector<double> point = pulled_up(backend(), 0.0, mesh);
    const Index centre = 112, near = 113, far = 114; // 0.1 m and 0.2 m away on the top face
    // The grabbed neighbourhood rises with the target: near nodes almost as far as the centre.
    EXPECT_GT(region[centre], 0.5 * 0.05);
    EXPECT_GT(region[near], 0.8 * region[centre]);
    EXPECT_GT(region[far], 0.3 * region[centre]);
    EXPECT_LT(region[far], region[near]);
    EXPECT_LT(region[near], region[centre] + 1e-12);
    // The point spring pulls a spike: its neighbour lags the centre much more.
    EXPECT_LT(point[near] / point[centre], region[near] / region[centre] - 0.2);
    // Outside the radius (a top corner, 0.28 m away) the body follows only elastically.
    EXPECT_LT(region[124], region[far]);
}

INSTANTIATE_TEST_SUITE_P(Backends, DragRegionPerBackend, test::all_backends(),
                         test::backend_param_name);

} // namespace
} // namespace edn
