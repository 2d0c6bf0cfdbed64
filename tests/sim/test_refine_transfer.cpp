// State transfer onto a nested refinement: polynomial fields of degree p are reproduced exactly
// at order p (checked against the polynomial at the new nodes' rest positions), linear momentum
// and mass from the two simulations' own lumped masses (p = 1), pins against the pinned region,
// and a simulation refined mid-run keeps running.

#include "core/error.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/refine.hpp"
#include "mesh/topology.hpp"
#include "sim/simulation.hpp"
#include "sim/state_transfer.hpp"
#include "support/mesh_fixtures.hpp"

#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

using Field = std::function<Vec3(const Vec3&)>;

/// A random polynomial vector field of total degree `degree` (all monomials x^i y^j z^k).
Field random_polynomial(int degree, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    struct Term {
        int i, j, k;
        Vec3 c;
    };
    std::vector<Term> terms;
    for (int i = 0; i <= degree; ++i)
        for (int j = 0; i + j <= degree; ++j)
            for (int k = 0; i + j + k <= degree; ++k)
                terms.push_back({i, j, k, {u(rng), u(rng), u(rng)}});
    return [terms](const Vec3& x) {
        Vec3 value{};
        for (const Term& t : terms) {
            const double m = std::pow(x[0], t.i) * std::pow(x[1], t.j) * std::pow(x[2], t.k);
            for (int d = 0; d < 3; ++d) value[d] += t.c[d] * m;
        }
        return value;
    };
}

std::vector<Vec3> rest_nodes(const TetMesh& mesh, int order) {
    const Topology topology = build_topology(mesh);
    return node_positions(mesh, topology, make_node_layout(topology, order));
}

/// Node state sampling `position` (x = X + u(X)) and `velocity` at the rest nodes.
NodeState sample(const std::vector<Vec3>& nodes, const Field& displacement, const Field& velocity) {
    NodeState s;
    for (const Vec3& x : nodes) {
        const Vec3 u = displacement(x), v = velocity(x);
        for (int d = 0; d < 3; ++d) {
            s.positions.push_back(x[d] + u[d]);
            s.velocities.push_back(v[d]);
        }
        s.pinned.push_back(0);
    }
    return s;
}

class NestedTransfer : public ::testing::TestWithParam<int> {};

TEST_P(NestedTransfer, ReproducesPolynomialsOfTheOrder) {
    const int order = GetParam();
    const TetMesh mesh =
        test::shuffle_mesh(test::make_random_perturbed_box(3, 2, 2, 1.5, 1.0, 1.0, 0.12, 11), 5);
    const Field u = random_polynomial(order, 100 + order),
                v = random_polynomial(order, 200 + order);
    const NodeState old_state = sample(rest_nodes(mesh, order), u, v);
    const std::vector<RefineResult> refinements = {refine_sphere(mesh, {0.6, 0.4, 0.5}, 0.35, 2),
                                                   refine_uniform(mesh)};
    for (const RefineResult& r : refinements) {
        const StateTransfer t =
            transfer_node_state_nested(mesh, r.mesh, r.cell_parent, order, old_state);
        const std::vector<Vec3> nodes = rest_nodes(r.mesh, order);
        ASSERT_EQ(t.state.positions.size(), 3 * nodes.size());
        ASSERT_EQ(t.state.pinned.size(), nodes.size());
        Index moved = 0;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const Vec3 ue = u(nodes[i]), ve = v(nodes[i]);
            for (int d = 0; d < 3; ++d) {
                EXPECT_NEAR(t.state.positions[3 * i + d], nodes[i][d] + ue[d], 1e-12) << i;
                EXPECT_NEAR(t.state.velocities[3 * i + d], ve[d], 1e-12) << i;
            }
            EXPECT_EQ(t.state.pinned[i], 0);
        }
        // Old vertices are old vertex nodes: copied bit for bit.
        for (Index vtx = 0; vtx < mesh.num_vertices(); ++vtx)
            for (int d = 0; d < 3; ++d) {
                moved += t.state.positions[3 * vtx + d] != old_state.positions[3 * vtx + d];
                moved += t.state.velocities[3 * vtx + d] != old_state.velocities[3 * vtx + d];
            }
        EXPECT_EQ(moved, 0);
        EXPECT_GT(t.interpolated_nodes, 0);
    }
}

INSTANTIATE_TEST_SUITE_P(Orders, NestedTransfer, ::testing::Values(1, 2, 3));

std::array<double, 3> momentum(const std::vector<double>& mass, const std::vector<double>& v) {
    std::array<double, 3> p{};
    for (std::size_t i = 0; i < mass.size(); ++i)
        for (int d = 0; d < 3; ++d) p[d] += mass[i] * v[3 * i + d];
    return p;
}

/// Runs a pinned box for a few frames, refines it mid-run as the CLI does (classification on
/// the deformed vertices), checks mass, momentum (p = 1) and pins, then runs `frames` more.
void refine_mid_run(int order, bool uniform, int frames) {
    SimulationSettings s;
    s.order = order;
    s.young = 2e4;
    s.gravity = {0.4, -0.3, -9.81};
    // Uniform refinement multiplies the cells by 8: a smaller start keeps the test fast.
    const TetMesh mesh = test::shuffle_mesh(
        uniform ? test::make_random_perturbed_box(2, 2, 1, 1.0, 1.0, 0.5, 0.1, 13)
                : test::make_random_perturbed_box(3, 2, 2, 1.5, 1.0, 1.0, 0.1, 13),
        7);
    Simulation sim(mesh, s);
    // Pins exactly the bottom face z = 0 (the perturbation keeps boundary vertices on it).
    ASSERT_GT(sim.pin_below(1e-9), 0);
    for (int f = 0; f < 4; ++f) sim.step();
    const NodeState before{sim.positions(), sim.velocities(), sim.pinned()};
    std::vector<Vec3> deformed(mesh.num_vertices());
    for (Index v = 0; v < mesh.num_vertices(); ++v)
        for (int d = 0; d < 3; ++d) deformed[v][d] = before.positions[3 * v + d];
    const RefineResult r = uniform ? refine_uniform(sim.mesh())
                                   : refine_sphere(sim.mesh(), {0.7, 0.5, 0.0}, 0.5, 2, deformed);
    ASSERT_GT(r.cells_after, r.cells_before);
    const StateTransfer t =
        transfer_node_state_nested(sim.mesh(), r.mesh, r.cell_parent, order, before);
    Simulation next(r.mesh, s);
    ASSERT_EQ(t.state.pinned.size(), static_cast<std::size_t>(next.num_nodes()));
    next.set_state(t.state.positions, t.state.velocities);
    for (Index i = 0; i < next.num_nodes(); ++i)
        if (t.state.pinned[i]) next.set_pinned(i, true);

    // Pins: the pinned region is the face z = 0; a new node is pinned iff it lies on it.
    const std::vector<double>& rest = next.rest_positions();
    Index pinned = 0;
    for (Index i = 0; i < next.num_nodes(); ++i) {
        EXPECT_EQ(next.pinned()[i] != 0, std::abs(rest[3 * i + 2]) < 1e-12) << "node " << i;
        pinned += next.pinned()[i];
        if (next.pinned()[i]) {
            for (int d = 0; d < 3; ++d)
                EXPECT_NEAR(next.positions()[3 * i + d], rest[3 * i + d], 1e-14) << "node " << i;
        }
    }
    EXPECT_GT(pinned, std::count(before.pinned.begin(), before.pinned.end(), 1));

    double old_mass = 0, new_mass = 0;
    for (double m : sim.lumped_mass()) old_mass += m;
    for (double m : next.lumped_mass()) new_mass += m;
    EXPECT_NEAR(new_mass, old_mass, 1e-12 * old_mass);
    if (order == 1) {
        // Row-sum lumping: sum m_i v_i = integral(rho v_h), and v_h is unchanged.
        const auto p_old = momentum(sim.lumped_mass(), before.velocities);
        const auto p_new = momentum(next.lumped_mass(), next.velocities());
        double max_speed = 0;
        for (double v : before.velocities) max_speed = std::max(max_speed, std::abs(v));
        const double scale = old_mass * max_speed;
        ASSERT_GT(scale, 0);
        for (int d = 0; d < 3; ++d) EXPECT_NEAR(p_new[d], p_old[d], 1e-12 * scale) << "axis " << d;
    }

    for (int f = 0; f < frames; ++f) next.step();
    for (double x : next.positions()) ASSERT_TRUE(std::isfinite(x));
    for (Index i = 0; i < next.num_nodes(); ++i)
        if (next.pinned()[i]) {
            for (int d = 0; d < 3; ++d)
                EXPECT_NEAR(next.positions()[3 * i + d], rest[3 * i + d], 1e-14);
        }
}

TEST(RefineTransfer, SphereMidRunP1KeepsMomentumAndRuns100Frames) {
    refine_mid_run(1, false, 100);
}

TEST(RefineTransfer, UniformMidRunP1KeepsMomentumAndRuns100Frames) {
    refine_mid_run(1, true, 100);
}

TEST(RefineTransfer, SphereMidRunP2) {
    refine_mid_run(2, false, 20);
}

TEST(RefineTransfer, RejectsMismatchedSizes) {
    const TetMesh mesh = test::make_single_tet();
    const RefineResult r = refine_uniform(mesh);
    NodeState state{std::vector<double>(12), std::vector<double>(12), std::vector<std::uint8_t>(4)};
    EXPECT_NO_THROW(transfer_node_state_nested(mesh, r.mesh, r.cell_parent, 1, state));
    EXPECT_THROW(transfer_node_state_nested(mesh, r.mesh, r.cell_parent, 2, state), Error);
    std::vector<Index> bad = r.cell_parent;
    bad[3] = 1;
    EXPECT_THROW(transfer_node_state_nested(mesh, r.mesh, bad, 1, state), Error);
    bad.pop_back();
    EXPECT_THROW(transfer_node_state_nested(mesh, r.mesh, bad, 1, state), Error);
}

} // namespace
} // namespace edn
