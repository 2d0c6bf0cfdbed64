// Simulation's topology changes (sim/topology_change.cpp): cut then undo restores the exact
// previous mesh and node state, refinement keeps the deformed shape (deformed volume), an order
// change 1 -> 2 -> 1 keeps the vertex positions, and every failed change leaves the simulation
// as it was. Also the order-change transfers of sim/state_transfer.hpp.

#include "core/error.hpp"
#include "mesh/cut.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sim/simulation.hpp"
#include "sim/state_transfer.hpp"
#include "support/mesh_fixtures.hpp"
#include "support/soft_settings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

using test::beam_settings;

TetMesh beam() {
    return test::make_box_mesh(2, 2, 4, 1.0, 1.0, 2.0);
}

/// A horizontal blade at z = 1.05 through the whole beam.
CutPlane middle_plane() {
    CutPlane plane;
    plane.point = {0.5, 0.5, 1.05};
    plane.normal = {0.0, 0.0, 1.0};
    return plane;
}

/// Everything a failed change must leave alone.
struct Observed {
    std::vector<Vec3> rest_vertices;
    std::vector<Cell> cells;
    std::vector<double> positions, velocities;
    std::vector<std::uint8_t> pinned;
    int order = 0;
    double young = 0;
    std::size_t undo_depth = 0, changes = 0;
};

Observed observe(const Simulation& sim) {
    return {sim.mesh().positions, sim.mesh().cells, sim.positions(),
            sim.velocities(),     sim.pinned(),     sim.settings().order,
            sim.settings().young, sim.undo_depth(), sim.topology_changes().size()};
}

void expect_same(const Observed& a, const Observed& b) {
    EXPECT_EQ(a.rest_vertices, b.rest_vertices);
    EXPECT_EQ(a.cells, b.cells);
    EXPECT_EQ(a.positions, b.positions); // bit for bit
    EXPECT_EQ(a.velocities, b.velocities);
    EXPECT_EQ(a.pinned, b.pinned);
    EXPECT_EQ(a.order, b.order);
    EXPECT_EQ(a.young, b.young);
    EXPECT_EQ(a.undo_depth, b.undo_depth);
    EXPECT_EQ(a.changes, b.changes);
}

/// Sum of the deformed cells' signed volumes, with vertex positions from `positions`.
double deformed_volume(const TetMesh& mesh, const std::vector<double>& positions) {
    auto at = [&](Index v) {
        const std::size_t i = 3 * static_cast<std::size_t>(v);
        return Vec3{positions[i], positions[i + 1], positions[i + 2]};
    };
    double volume = 0;
    for (const Cell& c : mesh.cells)
        volume += signed_volume(at(c[0]), at(c[1]), at(c[2]), at(c[3]));
    return volume;
}

class TopologyChange : public ::testing::TestWithParam<int> {};

TEST_P(TopologyChange, CutThenUndoRestoresTheExactPreviousState) {
    Simulation sim(beam(), beam_settings(GetParam()));
    TopologyChangeOptions faces = sim.topology_options();
    faces.cut_mode = CutMode::Faces; // the face cut; the split cut below
    sim.set_topology_options(faces);
    ASSERT_GT(sim.pin_below(1e-9), 0);
    for (int f = 0; f < 3; ++f) sim.step();
    const Observed before = observe(sim);
    const double momentum_before = [&] {
        double p = 0;
        for (Index i = 0; i < sim.num_nodes(); ++i)
            p += sim.lumped_mass()[i] * before.velocities[3 * i];
        return p;
    }();

    const TopologyChangeRecord cut = sim.cut(middle_plane());
    EXPECT_EQ(cut.kind, TopologyChangeKind::Cut);
    EXPECT_EQ(cut.frame, 3);
    EXPECT_GT(cut.cut_faces, 0);
    EXPECT_GT(cut.duplicated_vertices, 0);
    EXPECT_EQ(cut.cells_before, cut.cells_after); // a cut separates faces, it adds no cell
    EXPECT_GT(cut.repattern_ms, 0.0);
    EXPECT_EQ(sim.components(), 2);
    EXPECT_EQ(sim.mesh().num_vertices(),
              static_cast<Index>(before.rest_vertices.size()) + cut.duplicated_vertices);
    EXPECT_EQ(sim.undo_depth(), 1u);
    // The state is copied: momentum is conserved (a split node's mass is shared by its copies).
    double momentum_after = 0;
    const std::vector<double> v = sim.velocities();
    for (Index i = 0; i < sim.num_nodes(); ++i) momentum_after += sim.lumped_mass()[i] * v[3 * i];
    EXPECT_NEAR(momentum_after, momentum_before, 1e-12 * std::abs(momentum_before) + 1e-15);
    sim.step();

    const TopologyChangeRecord undo = sim.undo();
    EXPECT_EQ(undo.kind, TopologyChangeKind::Undo);
    EXPECT_EQ(undo.frame, 4);
    EXPECT_EQ(sim.components(), 1);
    Observed after = observe(sim);
    after.undo_depth = before.undo_depth;
    after.changes = before.changes;
    expect_same(before, after);
    EXPECT_EQ(sim.undo_depth(), 0u);
    ASSERT_EQ(sim.topology_changes().size(), 2u); // the log survives the undo
    EXPECT_EQ(sim.topology_changes()[0].kind, TopologyChangeKind::Cut);
    EXPECT_EQ(sim.topology_changes()[1].kind, TopologyChangeKind::Undo);
    // Stepping from the restored state goes on.
    sim.step();
    for (double x : sim.positions()) ASSERT_TRUE(std::isfinite(x));
    EXPECT_THROW(sim.undo(), Error);
}

TEST_P(TopologyChange, SplitCutKeepsTheFieldAndUndoRestoresTheExactPreviousState) {
    Simulation sim(beam(), beam_settings(GetParam()));
    EXPECT_EQ(sim.topology_options().cut_mode, CutMode::Split); // the default
    ASSERT_GT(sim.pin_below(1e-9), 0);
    for (int f = 0; f < 3; ++f) sim.step();
    const Observed before = observe(sim);
    auto momentum = [&] {
        double p = 0;
        const std::vector<double> v = sim.velocities();
        for (Index i = 0; i < sim.num_nodes(); ++i) p += sim.lumped_mass()[i] * v[3 * i];
        return p;
    };
    const double momentum_before = momentum();
    const double volume_before = deformed_volume(sim.mesh(), before.positions);
    const Index old_vertices = sim.mesh().num_vertices();

    const TopologyChangeRecord cut = sim.cut(middle_plane());
    EXPECT_EQ(cut.cut_mode, CutMode::Split);
    EXPECT_GT(cut.split_cells, 0);
    EXPECT_GT(cut.cells_after, cut.cells_before);
    EXPECT_GT(cut.cut_faces, 0);
    EXPECT_EQ(cut.components, 2);
    EXPECT_EQ(sim.components(), 2);
    EXPECT_EQ(sim.mesh().num_vertices(), old_vertices + cut.new_vertices + cut.duplicated_vertices);
    EXPECT_GE(cut.min_dihedral_deg, std::min(2.0, 0.5 * cut.input_min_dihedral_deg));
    EXPECT_GT(cut.min_volume, 0.0);
    EXPECT_NEAR(total_volume(sim.mesh()), 2.0, 2e-12);
    if (GetParam() == 1) {
        // p = 1: the field is carried exactly, so the deformed shape, the momentum (row-sum
        // lumped mass) and the blade's placement on the deformed shape are exact.
        const std::vector<double> x = sim.positions();
        EXPECT_NEAR(deformed_volume(sim.mesh(), x), volume_before, 1e-12 * volume_before);
        EXPECT_NEAR(momentum(), momentum_before, 1e-12 * std::abs(momentum_before) + 1e-15);
        for (Index v = old_vertices; v < old_vertices + cut.new_vertices; ++v)
            EXPECT_NEAR(x[3 * v + 2], 1.05, 1e-12) << "new vertex " << v;
    }
    sim.step();
    for (double x : sim.positions()) ASSERT_TRUE(std::isfinite(x));

    sim.undo();
    Observed after = observe(sim);
    after.undo_depth = before.undo_depth;
    after.changes = before.changes;
    expect_same(before, after);
}

/// A blade just off a deformed vertex: the crossings near it snap, and the snapped vertices
/// move onto the blade in the deformed shape too, so the whole cut surface lies on the blade
/// (p = 1: vertex positions are the deformed shape) and the rest body keeps its volume.
TEST_P(TopologyChange, SplitCutPutsTheCutSurfaceOnTheDeformedBlade) {
    Simulation sim(beam(), beam_settings(GetParam()));
    ASSERT_GT(sim.pin_below(1e-9), 0);
    for (int f = 0; f < 3; ++f) sim.step();
    Index middle = -1; // the beam's one interior vertex at z = 1
    for (Index v = 0; v < sim.mesh().num_vertices(); ++v)
        if (sim.mesh().positions[v] == Vec3{0.5, 0.5, 1.0}) middle = v;
    ASSERT_GE(middle, 0);
    const std::vector<double> before = sim.positions();
    CutPlane plane;
    plane.normal = {0.05, 0.02, 1.0};
    const double length = std::sqrt(0.05 * 0.05 + 0.02 * 0.02 + 1.0);
    for (int d = 0; d < 3; ++d)
        plane.point[d] = before[3 * middle + d] + 1e-4 * plane.normal[d] / length;
    const TopologyChangeRecord cut = sim.cut(plane);
    EXPECT_GT(cut.split_cells, 0);
    EXPECT_EQ(cut.components, 2);
    EXPECT_NEAR(total_volume(sim.mesh()), 2.0, 2e-12);
    const std::vector<double> x = sim.positions();
    if (GetParam() == 1) {
        const Topology topology = build_topology(sim.mesh());
        int checked = 0;
        for (const Tri& face : topology.boundary_faces) {
            Vec3 c{};
            for (Index v : face)
                for (int d = 0; d < 3; ++d) c[d] += sim.mesh().positions[v][d] / 3;
            if (c[0] < 1e-9 || c[0] > 1 - 1e-9 || c[1] < 1e-9 || c[1] > 1 - 1e-9 || c[2] < 1e-9 ||
                c[2] > 2 - 1e-9)
                continue; // on the beam's own surface
            for (Index v : face) {
                double distance = 0;
                for (int d = 0; d < 3; ++d)
                    distance += plane.normal[d] / length * (x[3 * v + d] - plane.point[d]);
                EXPECT_LE(std::abs(distance), 1e-12) << "vertex " << v;
                ++checked;
            }
        }
        EXPECT_GT(checked, 0);
    }
    sim.step();
    for (double value : sim.positions()) ASSERT_TRUE(std::isfinite(value));
}

/// Random split cuts (full and partial, on the deformed shape) interleaved with brush
/// refinements, undos and steps, through Simulation: every mesh stays valid and the rest volume
/// is kept; undo goes back to the mesh it replaced. EDN_SPLIT_CUT_STRESS=200 runs 200 cuts.
TEST_P(TopologyChange, RandomSplitCutsRefinementsAndUndos) {
    int cuts_wanted = GetParam() == 1 ? 8 : 3;
    if (const char* env = std::getenv("EDN_SPLIT_CUT_STRESS")) cuts_wanted = std::atoi(env);
    Simulation sim(test::make_random_perturbed_box(3, 3, 4, 1.0, 1.0, 2.0, 0.1, 5),
                   beam_settings(GetParam()));
    ASSERT_GT(sim.pin_below(1e-9), 0);
    const double volume = total_volume(sim.mesh());
    std::mt19937 rng(GetParam());
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<std::vector<Cell>> meshes = {sim.mesh().cells}; // what undo must return to
    int cuts = 0;
    for (int op = 0; cuts < cuts_wanted; ++op) {
        SCOPED_TRACE("op " + std::to_string(op));
        sim.step();
        const double roll = u(rng);
        const Vec3 point = {0.2 + 0.6 * u(rng), 0.2 + 0.6 * u(rng), 0.3 + 1.4 * u(rng)};
        try {
            if ((roll < 0.25 || sim.mesh().num_cells() > 4000) && sim.undo_depth() > 0) {
                sim.undo();
                meshes.pop_back();
                ASSERT_EQ(sim.mesh().cells, meshes.back());
                continue;
            }
            if (roll < 0.4) {
                sim.refine_sphere(point, 0.15 + 0.15 * u(rng), 1);
            } else {
                CutPlane plane;
                plane.point = point;
                plane.normal = {u(rng) - 0.5, u(rng) - 0.5, u(rng) - 0.5};
                if (u(rng) < 0.6) plane.radius = 0.2 + 0.4 * u(rng);
                const TopologyChangeRecord r = sim.cut(plane);
                ++cuts;
                EXPECT_GE(r.min_dihedral_deg, std::min(2.0, 0.5 * r.input_min_dihedral_deg));
            }
        } catch (const Error& e) {
            // Only the cell limit may refuse a change; the simulation is unchanged then.
            ASSERT_EQ(e.code(), ErrorCode::Usage) << e.what();
            continue;
        }
        if (meshes.size() > sim.topology_options().undo_depth) meshes.erase(meshes.begin());
        meshes.push_back(sim.mesh().cells);
        TetMesh copy = sim.mesh();
        const TetMeshValidation v = validate_tet_mesh(copy, "cut");
        ASSERT_EQ(v.reoriented_cells, 0);
        ASSERT_EQ(v.dropped_vertices, 0);
        ASSERT_NEAR(total_volume(sim.mesh()), volume, 1e-12 * volume);
        for (double x : sim.positions()) ASSERT_TRUE(std::isfinite(x));
    }
}

class OrderChange : public ::testing::TestWithParam<int> {};

TEST_P(OrderChange, OneToPAndBackKeepsVertexPositionsPinsAndDrag) {
    const int order = GetParam();
    Simulation sim(beam(), beam_settings(1));
    sim.pin_below(1e-9);
    DragSpring drag;
    drag.vertices = {sim.mesh().num_vertices() - 1, sim.mesh().num_vertices() - 1,
                     sim.mesh().num_vertices() - 1};
    drag.weights = {1, 0, 0};
    drag.target = {1.5, 1.0, 2.0};
    sim.set_drag(drag);
    for (int f = 0; f < 3; ++f) sim.step();
    const Index vertices = sim.mesh().num_vertices();
    const std::vector<double> x1 = sim.positions(), v1 = sim.velocities();
    const std::vector<std::uint8_t> pins1 = sim.pinned();

    sim.change_order(order);
    EXPECT_EQ(sim.settings().order, order);
    EXPECT_GT(sim.num_nodes(), vertices);
    const std::vector<double> x2 = sim.positions(), v2 = sim.velocities();
    for (std::size_t i = 0; i < 3 * static_cast<std::size_t>(vertices); ++i) {
        EXPECT_NEAR(x2[i], x1[i], 1e-14) << i;
        EXPECT_EQ(v2[i], v1[i]) << i;
    }
    // Edge and face nodes: pinned iff all vertices of their simplex are (here: on the foot).
    const std::vector<double>& rest = sim.rest_positions();
    for (Index i = 0; i < sim.num_nodes(); ++i)
        EXPECT_EQ(sim.pinned()[i] != 0, std::abs(rest[3 * i + 2]) < 1e-12) << "node " << i;
    EXPECT_EQ(sim.topology_changes().size(), 0u); // not a topology change
    ASSERT_TRUE(sim.settings().order == order);
    sim.step();
    // The drag went along: the dragged corner moves towards its target (+x).
    const std::size_t corner = 3 * static_cast<std::size_t>(vertices - 1);
    EXPECT_GT(sim.positions()[corner], x2[corner]);

    // Back to p = 1: the vertex nodes keep the p = order state's positions and pins.
    const std::vector<double> xp = sim.positions();
    sim.change_order(1);
    EXPECT_EQ(sim.num_nodes(), vertices);
    EXPECT_EQ(std::vector<std::uint8_t>(sim.pinned()), pins1);
    const std::vector<double> x3 = sim.positions();
    for (std::size_t i = 0; i < x3.size(); ++i) EXPECT_NEAR(x3[i], xp[i], 1e-14) << i;

    // 1 -> order -> 1 without a step in between gives back the p = 1 positions.
    Simulation again(beam(), beam_settings(1));
    again.set_state(x1, v1);
    again.change_order(order);
    again.change_order(1);
    const std::vector<double> x4 = again.positions();
    for (std::size_t i = 0; i < x1.size(); ++i) EXPECT_NEAR(x4[i], x1[i], 1e-14) << i;
    EXPECT_EQ(again.velocities(), v1);
}

TEST_P(TopologyChange, RefinementKeepsTheDeformedShape) {
    Simulation sim(beam(), beam_settings(GetParam()));
    sim.pin_below(1e-9);
    for (int f = 0; f < 4; ++f) sim.step();
    const double volume = deformed_volume(sim.mesh(), sim.positions());
    const std::vector<double> x = sim.positions();
    const Index vertices = sim.mesh().num_vertices();

    const TopologyChangeRecord brush = sim.refine_sphere({0.5, 0.5, 1.5}, 0.4, 2);
    EXPECT_EQ(brush.kind, TopologyChangeKind::RefineSphere);
    EXPECT_EQ(brush.frame, 4);
    EXPECT_GT(brush.cells_after, brush.cells_before);
    EXPECT_EQ(brush.cells_after, sim.mesh().num_cells());
    EXPECT_EQ(sim.mesh().num_vertices(), vertices + brush.new_vertices);
    EXPECT_GT(brush.min_dihedral_deg, 0.0);
    // Old vertices come first and keep their positions; a piecewise polynomial field evaluated
    // on a nested mesh is the same field: for p = 1 the deformed volume is the same.
    const std::vector<double> y = sim.positions();
    for (std::size_t i = 0; i < 3 * static_cast<std::size_t>(vertices); ++i)
        EXPECT_NEAR(y[i], x[i], 1e-12) << i;
    if (GetParam() == 1) {
        EXPECT_NEAR(deformed_volume(sim.mesh(), y), volume, 1e-12 * volume);
    }

    const TopologyChangeRecord uniform = sim.refine_uniform();
    EXPECT_EQ(uniform.kind, TopologyChangeKind::RefineUniform);
    EXPECT_EQ(uniform.cells_after, 8 * brush.cells_after);
    const std::vector<double> z = sim.positions();
    for (std::size_t i = 0; i < 3 * static_cast<std::size_t>(vertices); ++i)
        EXPECT_NEAR(z[i], x[i], 1e-12) << i;
    if (GetParam() == 1) {
        EXPECT_NEAR(deformed_volume(sim.mesh(), z), volume, 1e-12 * volume);
    }
    sim.step();
    for (double value : sim.positions()) ASSERT_TRUE(std::isfinite(value));

    // Two undos go back to the beam as it was before the brush.
    sim.undo();
    sim.undo();
    EXPECT_EQ(sim.mesh().num_vertices(), vertices);
    EXPECT_EQ(sim.positions(), x);
}

INSTANTIATE_TEST_SUITE_P(Orders, TopologyChange, ::testing::Values(1, 2, 3));
INSTANTIATE_TEST_SUITE_P(Orders, OrderChange, ::testing::Values(2, 3));

TEST(TopologyChangeFailure, FailedChangesLeaveTheSimulationUnchanged) {
    Simulation sim(beam(), beam_settings(1));
    sim.pin_below(1e-9);
    for (int f = 0; f < 2; ++f) sim.step();
    const Observed before = observe(sim);

    EXPECT_THROW(sim.change_order(4), Error);
    expect_same(before, observe(sim));
    SimulationSettings bad = sim.settings();
    bad.young = -1;
    EXPECT_THROW(sim.change_settings(bad), Error);
    expect_same(before, observe(sim));
    EXPECT_THROW(sim.refine_sphere({0.5, 0.5, 1.0}, -1.0, 2), Error);
    expect_same(before, observe(sim));
    EXPECT_THROW(sim.refine_sphere({0.5, 0.5, 1.0}, 0.3, 9), Error);
    expect_same(before, observe(sim));
    CutPlane no_normal = middle_plane();
    no_normal.normal = {0, 0, 0};
    EXPECT_THROW(sim.cut(no_normal), Error);
    expect_same(before, observe(sim));
    EXPECT_THROW(sim.undo(), Error);
    expect_same(before, observe(sim));

    // The caller's limits: no-op changes and too many cells are refused the same way.
    TopologyChangeOptions options;
    options.reject_no_op = true;
    options.max_cells = 8 * sim.mesh().num_cells() - 1;
    options.mesh_name = "beam";
    sim.set_topology_options(options);
    CutPlane beside = middle_plane();
    beside.point = {5.0, 5.0, 5.0};
    try {
        sim.cut(beside);
        ADD_FAILURE() << "a cut beside the mesh was applied";
    } catch (const Error& error) {
        EXPECT_NE(std::string(error.what()).find("crosses no interior face of beam"),
                  std::string::npos)
            << error.what();
    }
    expect_same(before, observe(sim));
    EXPECT_THROW(sim.refine_sphere({5.0, 5.0, 5.0}, 0.1, 1), Error);
    expect_same(before, observe(sim));
    EXPECT_THROW(sim.refine_uniform(), Error);
    expect_same(before, observe(sim));

    // Without the limits the same cut is applied and recorded with zero counts (the CLI's way).
    sim.set_topology_options({});
    const TopologyChangeRecord record = sim.cut(beside);
    EXPECT_EQ(record.cut_faces, 0);
    EXPECT_EQ(sim.topology_changes().size(), 1u);
}

TEST(TopologyChangeHistory, UndoDepthIsBoundedAndRestoresTheSettingsOfItsTime) {
    Simulation sim(beam(), beam_settings(1));
    TopologyChangeOptions options;
    options.undo_depth = 2;
    sim.set_topology_options(options);
    const Index cells = sim.mesh().num_cells();
    sim.refine_sphere({0.5, 0.5, 0.5}, 0.3, 1);
    const Index after_first = sim.mesh().num_cells();
    sim.refine_sphere({0.5, 0.5, 1.5}, 0.3, 1);
    sim.change_order(2); // not on the history, but undo goes back to the settings of its time
    sim.cut(middle_plane());
    EXPECT_EQ(sim.undo_depth(), 2u);
    sim.undo();
    EXPECT_EQ(sim.settings().order, 2);
    sim.undo();
    EXPECT_EQ(sim.settings().order, 1);
    EXPECT_EQ(sim.mesh().num_cells(), after_first);
    EXPECT_EQ(sim.undo_depth(), 0u);
    EXPECT_THROW(sim.undo(), Error);
    EXPECT_GT(after_first, cells);

    // No history at all: changes still work, undo has nothing.
    Simulation plain(beam(), beam_settings(1));
    TopologyChangeOptions none;
    none.undo_depth = 0;
    plain.set_topology_options(none);
    plain.cut(middle_plane());
    EXPECT_EQ(plain.undo_depth(), 0u);
    EXPECT_THROW(plain.undo(), Error);
    EXPECT_EQ(plain.components(), 2);
}

TEST(OrderTransfer, LinearFieldsAreExactAndPinsFollowTheVertices) {
    const TetMesh mesh = test::make_random_perturbed_box(2, 2, 2, 1.0, 1.0, 1.0, 0.1, 5);
    const Topology topology = build_topology(mesh);
    const NodeLayout p1 = make_node_layout(topology, 1);
    auto field = [](const Vec3& x) {
        return Vec3{0.3 + 2 * x[0] - x[1], x[2] * 0.5 + 1, x[0] + x[1] + x[2]};
    };
    std::vector<double> values;
    for (const Vec3& x : mesh.positions)
        for (int d = 0; d < 3; ++d) values.push_back(field(x)[d]);
    std::vector<std::uint8_t> vertex_pins(mesh.positions.size());
    for (std::size_t v = 0; v < vertex_pins.size(); ++v)
        vertex_pins[v] = mesh.positions[v][2] < 0.6 ? 1 : 0;
    for (int order = 2; order <= 3; ++order) {
        const NodeLayout to = make_node_layout(topology, order);
        const std::vector<double> out = transfer_node_values(topology, p1, to, values);
        const std::vector<Vec3> nodes = node_positions(mesh, topology, to);
        ASSERT_EQ(out.size(), 3 * nodes.size());
        for (std::size_t i = 0; i < nodes.size(); ++i)
            for (int d = 0; d < 3; ++d) EXPECT_NEAR(out[3 * i + d], field(nodes[i])[d], 1e-13);
        // Back to p = 1: the vertex values are untouched.
        EXPECT_EQ(transfer_node_values(topology, to, p1, out), values);

        const std::vector<std::uint8_t> pins = node_pins_from_vertices(topology, to, vertex_pins);
        ASSERT_EQ(pins.size(), nodes.size());
        for (Index node = 0; node < to.num_nodes(); ++node) {
            // Every simplex corner pinned <=> the node is pinned; here all lie below 0.6 then,
            // and a node with an unpinned corner has a barycentric weight on it.
            if (node < to.num_vertices) {
                EXPECT_EQ(pins[node], vertex_pins[node]);
            } else if (pins[node]) {
                EXPECT_LT(nodes[node][2], 0.6) << node;
            }
        }
        EXPECT_GT(std::count(pins.begin() + to.num_vertices, pins.end(), 1), 0);
    }
    EXPECT_THROW(transfer_node_values(topology, p1, p1, std::vector<double>(3)), Error);
    EXPECT_THROW(node_pins_from_vertices(topology, p1, std::vector<std::uint8_t>(2)), Error);
}

TEST(OrderTransfer, SetVertexPinsDerivesNodePins) {
    Simulation sim(beam(), beam_settings(2));
    std::vector<std::uint8_t> vertex_pins(sim.mesh().positions.size(), 0);
    for (std::size_t v = 0; v < vertex_pins.size(); ++v)
        vertex_pins[v] = sim.mesh().positions[v][2] < 1e-9 ? 1 : 0;
    sim.set_vertex_pins(vertex_pins);
    const std::vector<double>& rest = sim.rest_positions();
    for (Index i = 0; i < sim.num_nodes(); ++i)
        EXPECT_EQ(sim.pinned()[i] != 0, std::abs(rest[3 * i + 2]) < 1e-12) << "node " << i;
    EXPECT_THROW(sim.set_vertex_pins({1, 0}), Error);
}

} // namespace
} // namespace edn
