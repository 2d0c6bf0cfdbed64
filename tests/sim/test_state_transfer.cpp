// State transfer across a cut: nodes matched to old nodes by brute force on rest positions
// (independent of the edge/face lookup), linear momentum from the two simulations' own lumped
// masses, pins, and the next 100 frames finite.

#include "core/error.hpp"
#include "mesh/cut.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sim/simulation.hpp"
#include "sim/state_transfer.hpp"
#include "support/mesh_fixtures.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

NodeState state_of(const Simulation& sim) {
    return {sim.positions(), sim.velocities(), sim.pinned()};
}

std::array<double, 3> momentum(const std::vector<double>& mass, const std::vector<double>& v) {
    std::array<double, 3> p{};
    for (std::size_t i = 0; i < mass.size(); ++i)
        for (int d = 0; d < 3; ++d) p[d] += mass[i] * v[3 * i + d];
    return p;
}

class StateTransferTest : public ::testing::TestWithParam<int> {};

TEST_P(StateTransferTest, CutCarriesPositionsVelocitiesPinsAndMomentum) {
    const int order = GetParam();
    SimulationSettings s;
    s.order = order;
    s.material = Material::NeoHookean;
    s.young = 2e4;
    s.dt = 1.0 / 60;
    s.gravity = {0.3, 0.5, -9.81};
    const TetMesh mesh =
        test::shuffle_mesh(test::make_random_perturbed_box(6, 2, 2, 3.0, 1.0, 1.0, 0.1, 17), 4);
    Simulation sim(mesh, s);
    sim.pin_below(0.2);
    for (int f = 0; f < 4; ++f) sim.step();
    const NodeState before = state_of(sim);

    // Cut on the current state, as the CLI does.
    std::vector<Vec3> deformed(mesh.num_vertices());
    for (Index v = 0; v < mesh.num_vertices(); ++v)
        for (int d = 0; d < 3; ++d) deformed[v][d] = before.positions[3 * v + d];
    CutPlane plane;
    plane.point = {1.45, 0.5, 0.5};
    plane.normal = {1, 0.2, 0.1};
    const CutResult cut = cut_mesh(sim.mesh(), plane, deformed);
    ASSERT_GT(cut.duplicated_vertices, 0);
    const StateTransfer t =
        transfer_node_state(sim.mesh(), cut.mesh, cut.vertex_origin, order, before);
    EXPECT_EQ(t.interpolated_nodes, 0);

    Simulation next(cut.mesh, s);
    ASSERT_EQ(t.state.pinned.size(), static_cast<std::size_t>(next.num_nodes()));
    next.set_state(t.state.positions, t.state.velocities);
    for (Index i = 0; i < next.num_nodes(); ++i)
        if (t.state.pinned[i]) next.set_pinned(i, true);

    // Brute force: each new node sits at the rest position of exactly one old node, and carries
    // exactly that node's position, velocity and pin.
    const std::vector<double>& old_rest = sim.rest_positions();
    const std::vector<double>& new_rest = next.rest_positions();
    const Index old_nodes = sim.num_nodes();
    std::vector<int> copies(old_nodes, 0);
    for (Index i = 0; i < next.num_nodes(); ++i) {
        Index match = -1;
        for (Index j = 0; j < old_nodes; ++j) {
            double d2 = 0;
            for (int d = 0; d < 3; ++d)
                d2 += std::pow(new_rest[3 * i + d] - old_rest[3 * j + d], 2);
            if (d2 < 1e-20) {
                ASSERT_EQ(match, -1) << "two old nodes at new node " << i;
                match = j;
            }
        }
        ASSERT_GE(match, 0) << "new node " << i << " matches no old node";
        ++copies[match];
        for (int d = 0; d < 3; ++d) {
            EXPECT_EQ(next.positions()[3 * i + d], before.positions[3 * match + d]);
            EXPECT_EQ(next.velocities()[3 * i + d], before.velocities[3 * match + d]);
        }
        EXPECT_EQ(next.pinned()[i], before.pinned[match]);
    }
    for (Index j = 0; j < old_nodes; ++j) EXPECT_GE(copies[j], 1) << "old node " << j << " lost";

    // Mass and momentum from the simulations' own lumped masses.
    double old_mass = 0, new_mass = 0;
    for (double m : sim.lumped_mass()) old_mass += m;
    for (double m : next.lumped_mass()) new_mass += m;
    EXPECT_NEAR(new_mass, old_mass, 1e-12 * old_mass);
    const auto p_old = momentum(sim.lumped_mass(), before.velocities);
    const auto p_new = momentum(next.lumped_mass(), next.velocities());
    double max_speed = 0;
    for (double v : before.velocities) max_speed = std::max(max_speed, std::abs(v));
    const double scale = old_mass * max_speed;
    ASSERT_GT(scale, 0);
    for (int d = 0; d < 3; ++d) EXPECT_NEAR(p_new[d], p_old[d], 1e-12 * scale);
    EXPECT_EQ(next.components(), 2);

    // The simulation goes on: 100 finite frames.
    const int frames = order == 3 ? 5 : 100; // p = 3 steps are slow (seconds in Debug)
    for (int f = 0; f < frames; ++f) next.step();
    for (double x : next.positions()) ASSERT_TRUE(std::isfinite(x));
}

INSTANTIATE_TEST_SUITE_P(Orders, StateTransferTest, ::testing::Values(1, 2, 3));

TEST(StateTransfer, MissingSimplicesAreInterpolated) {
    // Old: two tets sharing face (1,2,3). New: one tet on old vertices 0, 1, 2, 4, whose edges
    // (0,4), (1,4)... partly exist in the old mesh: (0,4) does not.
    const TetMesh old_mesh = test::make_two_tets();
    TetMesh new_mesh;
    const std::vector<Index> origin = {0, 1, 2, 4};
    for (Index o : origin) new_mesh.positions.push_back(old_mesh.positions[o]);
    new_mesh.cells = {{0, 1, 2, 3}};
    const int order = 2;
    const Topology old_topology = build_topology(old_mesh);
    const NodeLayout old_layout = make_node_layout(old_topology, order);
    NodeState old_state;
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1, 1);
    for (Index i = 0; i < old_layout.num_nodes(); ++i) {
        for (int d = 0; d < 3; ++d) {
            old_state.positions.push_back(u(rng));
            old_state.velocities.push_back(u(rng));
        }
        old_state.pinned.push_back(i == 0 || i == 4 || i == 1 ? 1 : 0);
    }
    const StateTransfer t = transfer_node_state(old_mesh, new_mesh, origin, order, old_state);
    const Topology topology = build_topology(new_mesh);
    const NodeLayout layout = make_node_layout(topology, order);
    Index interpolated = 0;
    for (Index e = 0; e < topology.num_edges(); ++e) {
        const Index a = topology.edges[e][0], b = topology.edges[e][1];
        const Index node = layout.edge_node(e, 0);
        const Index old_edge = find_edge(old_topology, origin[a], origin[b]);
        for (int d = 0; d < 3; ++d) {
            const double expected =
                old_edge >= 0 ? old_state.positions[3 * old_layout.edge_node(old_edge, 0) + d]
                              : 0.5 * (old_state.positions[3 * origin[a] + d] +
                                       old_state.positions[3 * origin[b] + d]);
            EXPECT_DOUBLE_EQ(t.state.positions[3 * node + d], expected) << "edge " << e;
        }
        if (old_edge < 0) {
            ++interpolated;
            EXPECT_EQ(t.state.pinned[node],
                      old_state.pinned[origin[a]] && old_state.pinned[origin[b]]);
        }
    }
    EXPECT_EQ(interpolated, 1); // only (0, 4)
    EXPECT_EQ(t.interpolated_nodes, 1);
}

TEST(StateTransfer, EdgeNodeOrderFollowsTheRenumbering) {
    // p = 3: the new mesh numbers the old vertices backwards, so every edge's lower end flips;
    // the two edge nodes must swap to stay at the same place.
    const TetMesh old_mesh = test::make_single_tet();
    const std::vector<Index> origin = {3, 2, 1, 0};
    TetMesh new_mesh;
    for (Index o : origin) new_mesh.positions.push_back(old_mesh.positions[o]);
    new_mesh.cells = {{3, 2, 1, 0}}; // the same tet
    const int order = 3;
    const Topology old_topology = build_topology(old_mesh);
    const NodeLayout old_layout = make_node_layout(old_topology, order);
    NodeState old_state;
    old_state.positions.resize(3 * old_layout.num_nodes());
    old_state.velocities.assign(3 * old_layout.num_nodes(), 0.0);
    old_state.pinned.assign(old_layout.num_nodes(), 0);
    const std::vector<Vec3> rest = node_positions(old_mesh, old_topology, old_layout);
    for (Index i = 0; i < old_layout.num_nodes(); ++i)
        for (int d = 0; d < 3; ++d) old_state.positions[3 * i + d] = rest[i][d];
    const StateTransfer t = transfer_node_state(old_mesh, new_mesh, origin, order, old_state);
    const Topology topology = build_topology(new_mesh);
    const NodeLayout layout = make_node_layout(topology, order);
    const std::vector<Vec3> new_rest = node_positions(new_mesh, topology, layout);
    for (Index i = 0; i < layout.num_nodes(); ++i)
        for (int d = 0; d < 3; ++d)
            EXPECT_NEAR(t.state.positions[3 * i + d], new_rest[i][d], 1e-14) << "node " << i;
}

TEST(StateTransfer, RejectsMismatchedSizes) {
    const TetMesh mesh = test::make_single_tet();
    NodeState state{std::vector<double>(12), std::vector<double>(12), std::vector<std::uint8_t>(4)};
    const std::vector<Index> origin = {0, 1, 2, 3};
    EXPECT_NO_THROW(transfer_node_state(mesh, mesh, origin, 1, state));
    EXPECT_THROW(transfer_node_state(mesh, mesh, origin, 2, state), Error);
    const std::vector<Index> bad = {0, 1, 2, 7};
    EXPECT_THROW(transfer_node_state(mesh, mesh, bad, 1, state), Error);
}

} // namespace
} // namespace edn
