// Topology changes in two phases (sim/prepared_change.hpp): a cut prepared on another thread
// and committed equals the one-phase cut (mesh, state, pins, pattern) for full and partial
// blades at p = 1..3; with steps (and a pin change) between prepare and commit the committed
// state is the transfer of the state at the commit; a preparation made stale by a change in
// between is refused and leaves the simulation as it was; changes prepared on top of one another
// (a stroke's pieces) commit in order and equal the one-phase cuts one after the other.

#include "core/error.hpp"
#include "mesh/cut.hpp"
#include "mesh/split_cut.hpp"
#include "sim/prepared_change.hpp"
#include "sim/simulation.hpp"
#include "sim/state_transfer.hpp"
#include "support/mesh_fixtures.hpp"
#include "support/prepared_cuts.hpp"
#include "support/soft_settings.hpp"

#include <gtest/gtest.h>
#include <thread>

namespace edn {
namespace {

using test::beam_settings;

/// The 1 x 1 x 2 beam pinned at its foot after a few frames of sagging.
std::unique_ptr<Simulation> sagging_beam(int order) {
    auto sim = std::make_unique<Simulation>(test::make_box_mesh(2, 2, 4, 1.0, 1.0, 2.0),
                                            beam_settings(order));
    sim->pin_below(1e-9);
    for (int f = 0; f < 3; ++f) sim->step();
    return sim;
}

using test::blade;
using test::prepare_on_thread;

void expect_same_simulation(const Simulation& a, const Simulation& b) {
    EXPECT_EQ(a.mesh().cells, b.mesh().cells);
    EXPECT_EQ(a.mesh().positions, b.mesh().positions);
    EXPECT_EQ(a.positions(), b.positions()); // bit for bit
    EXPECT_EQ(a.velocities(), b.velocities());
    EXPECT_EQ(a.pinned(), b.pinned());
    EXPECT_EQ(a.cell_nodes(), b.cell_nodes());
    EXPECT_EQ(a.nnz_blocks(), b.nnz_blocks());
    EXPECT_EQ(a.lumped_mass(), b.lumped_mass());
    EXPECT_EQ(a.components(), b.components());
    EXPECT_EQ(a.undo_depth(), b.undo_depth());
}

class PreparedChangeOrders : public ::testing::TestWithParam<int> {};

TEST_P(PreparedChangeOrders, PrepareOnAThreadThenCommitEqualsTheOnePhaseCut) {
    for (bool partial : {false, true}) {
        SCOPED_TRACE(partial ? "partial blade" : "full blade");
        const std::unique_ptr<Simulation> one = sagging_beam(GetParam());
        const std::unique_ptr<Simulation> two = sagging_beam(GetParam());
        const TetMesh old_mesh = one->mesh();
        const std::vector<double> x = one->positions();
        const CutPlane plane = blade(1.05, partial);

        const TopologyChangeRecord direct = one->cut(plane);
        PreparedChange prepared = prepare_on_thread(two->change_basis(), plane);
        ASSERT_TRUE(prepared);
        EXPECT_TRUE(two->is_current(prepared));
        EXPECT_GT(prepared.record().prepare_ms, 0.0);
        const TopologyChangeRecord committed = two->commit(std::move(prepared));
        EXPECT_FALSE(prepared); // taken
        EXPECT_TRUE(prepared.holds_retired());
        expect_same_simulation(*one, *two);
        EXPECT_EQ(committed.cells_after, direct.cells_after);
        EXPECT_EQ(committed.split_cells, direct.split_cells);
        EXPECT_EQ(committed.components, direct.components);
        EXPECT_EQ(committed.frame, 3);
        EXPECT_GE(committed.commit_ms, 0.0);
        EXPECT_GT(committed.split_cells, 0);

        // Independently of the driver: the split of the deformed shape and the nested transfer.
        std::vector<Vec3> deformed(old_mesh.positions.size());
        for (std::size_t v = 0; v < deformed.size(); ++v)
            deformed[v] = {x[3 * v], x[3 * v + 1], x[3 * v + 2]};
        const SplitCutResult split = split_cut(old_mesh, plane, deformed);
        EXPECT_EQ(two->mesh().cells, split.mesh.cells);
        EXPECT_EQ(two->mesh().positions, split.mesh.positions);
        // The undo snapshot is the state at the commit.
        two->undo();
        EXPECT_EQ(two->positions(), x);
        EXPECT_EQ(two->mesh().cells, old_mesh.cells);
    }
}

TEST_P(PreparedChangeOrders, StepsBetweenPrepareAndCommitCarryTheStateOfTheCommit) {
    const std::unique_ptr<Simulation> sim = sagging_beam(GetParam());
    const TetMesh old_mesh = sim->mesh();
    const CutPlane plane = blade(1.05, true);
    const ChangeBasis basis = sim->change_basis();
    // The preparation runs while the simulation steps on this thread (it reads only the basis).
    PreparedChange prepared;
    std::thread thread([&] { prepared = Simulation::prepare_cut(basis, plane); });
    for (int f = 0; f < 3; ++f) sim->step();
    thread.join();
    // And the user pins a node in between: the commit carries the pins of its time.
    Index top = 0; // a node on the beam's top face
    for (Index i = 0; i < sim->num_nodes(); ++i)
        if (sim->rest_positions()[3 * i + 2] > sim->rest_positions()[3 * top + 2]) top = i;
    sim->set_pinned(top, true);
    const NodeState now{sim->positions(), sim->velocities(), sim->pinned()};
    ASSERT_NE(now.positions, basis.positions()); // it did move

    const TopologyChangeRecord record = sim->commit(std::move(prepared));
    EXPECT_EQ(record.frame, 6); // stamped at the commit
    // The mesh is the one the blade cut on the shape seen at the prepare...
    std::vector<Vec3> deformed(old_mesh.positions.size());
    for (std::size_t v = 0; v < deformed.size(); ++v)
        for (int d = 0; d < 3; ++d) deformed[v][d] = basis.positions()[3 * v + d];
    const SplitCutResult split = split_cut(old_mesh, plane, deformed);
    ASSERT_EQ(sim->mesh().cells, split.mesh.cells);
    ASSERT_EQ(sim->mesh().positions, split.mesh.positions);
    // ... and the state the old field of the commit's time carried onto it.
    const StateTransfer expected =
        transfer_node_state_nested(old_mesh, split.mesh, split.cell_parent, GetParam(), now);
    EXPECT_EQ(sim->positions(), expected.state.positions);
    EXPECT_EQ(sim->velocities(), expected.state.velocities);
    EXPECT_EQ(sim->pinned(), expected.state.pinned);
    // The pin set after the preparation is there (the beam's top is the only pinned node high up).
    bool top_pinned = false;
    for (Index i = 0; i < sim->num_nodes(); ++i)
        top_pinned = top_pinned || (sim->pinned()[i] && sim->rest_positions()[3 * i + 2] > 1.9);
    EXPECT_TRUE(top_pinned);
    sim->step();
    for (double value : sim->positions()) ASSERT_TRUE(std::isfinite(value));
    // Undo goes back to the state at the commit, the pin included.
    sim->undo();
    EXPECT_EQ(sim->positions(), now.positions);
    EXPECT_EQ(sim->pinned(), now.pinned);
}

TEST_P(PreparedChangeOrders, PiecesPreparedOnTopOfEachOtherEqualCutsOneAfterTheOther) {
    const std::unique_ptr<Simulation> one = sagging_beam(GetParam());
    const std::unique_ptr<Simulation> two = sagging_beam(GetParam());
    const CutPlane first = blade(1.05, true), second = blade(0.55, true);
    one->group_changes(true);
    one->cut(first);
    one->cut(second);
    one->group_changes(false);

    two->group_changes(true);
    const ChangeBasis basis = two->change_basis();
    PreparedChange a = prepare_on_thread(basis, first);
    const ChangeBasis on_a = Simulation::chain_basis(a, basis);
    EXPECT_EQ(on_a.mesh().cells, a.mesh().cells);
    PreparedChange b = prepare_on_thread(on_a, second);
    EXPECT_FALSE(two->is_current(b)); // its turn comes after a's
    EXPECT_THROW(two->commit(std::move(b)), Error);
    EXPECT_TRUE(b); // a refused commit leaves the change
    two->commit(std::move(a));
    EXPECT_TRUE(two->is_current(b));
    two->commit(std::move(b));
    two->group_changes(false);
    expect_same_simulation(*one, *two);
    EXPECT_EQ(two->undo_depth(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Orders, PreparedChangeOrders, ::testing::Values(1, 2, 3));

TEST(PreparedChange, AStalePreparationIsRefusedAndChangesNothing) {
    const std::unique_ptr<Simulation> sim = sagging_beam(1);
    const CutPlane plane = blade(1.05, false);
    PreparedChange cut = prepare_on_thread(sim->change_basis(), plane);
    PreparedChange refine =
        Simulation::prepare_refine_sphere(sim->change_basis(), {0.5, 0.5, 1.5}, 0.3, 1);
    // Another change lands first: both preparations are of a mesh that is gone.
    sim->refine_sphere({0.5, 0.5, 0.5}, 0.3, 1);
    const TetMesh mesh = sim->mesh();
    const std::vector<double> x = sim->positions();
    const std::size_t changes = sim->topology_changes().size();
    EXPECT_FALSE(sim->is_current(cut));
    try {
        sim->commit(std::move(cut));
        ADD_FAILURE() << "a stale cut was committed";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::Usage);
        EXPECT_NE(std::string(error.what()).find("prepare it again"), std::string::npos)
            << error.what();
    }
    EXPECT_THROW(sim->commit(std::move(refine)), Error);
    EXPECT_EQ(sim->mesh().cells, mesh.cells);
    EXPECT_EQ(sim->positions(), x);
    EXPECT_EQ(sim->topology_changes().size(), changes);
    // An undo and a settings change make a preparation stale too; a fresh one commits.
    PreparedChange before_undo = Simulation::prepare_cut(sim->change_basis(), plane);
    sim->undo();
    EXPECT_THROW(sim->commit(std::move(before_undo)), Error);
    PreparedChange before_rebuild = Simulation::prepare_cut(sim->change_basis(), plane);
    SimulationSettings stiffer = sim->settings();
    stiffer.young *= 2;
    sim->change_settings(stiffer);
    EXPECT_THROW(sim->commit(std::move(before_rebuild)), Error);
    EXPECT_EQ(sim->commit(Simulation::prepare_cut(sim->change_basis(), plane)).components, 2);
    EXPECT_THROW(sim->commit(PreparedChange{}), Error); // nothing prepared
}

TEST(PreparedChange, APreparationOutlivesTheSimulationItsBasisCameFrom) {
    ChangeBasis basis;
    {
        const std::unique_ptr<Simulation> sim = sagging_beam(2);
        basis = sim->change_basis();
    }
    // The basis keeps the mesh and node tables it needs: the preparation still works.
    const PreparedChange prepared = Simulation::prepare_cut(basis, blade(1.05, false));
    EXPECT_EQ(prepared.record().components, 2);
    EXPECT_GT(prepared.mesh().num_cells(), basis.mesh().num_cells());
}

TEST(PreparedChange, CommitTakesTheSettingsInForceAndRefinementsPrepareToo) {
    const std::unique_ptr<Simulation> one = sagging_beam(2);
    const std::unique_ptr<Simulation> two = sagging_beam(2);
    PreparedChange prepared =
        Simulation::prepare_refine_sphere(two->change_basis(), {0.5, 0.5, 1.5}, 0.3, 1);
    // A ground set in place between prepare and commit stays in force.
    two->set_ground(0.25, 3e4, 0.5);
    one->set_ground(0.25, 3e4, 0.5);
    two->commit(std::move(prepared));
    one->refine_sphere({0.5, 0.5, 1.5}, 0.3, 1);
    expect_same_simulation(*one, *two);
    ASSERT_TRUE(two->settings().ground_height.has_value());
    EXPECT_EQ(*two->settings().ground_height, 0.25);
    EXPECT_EQ(two->settings().ground_friction, 0.5);
    one->step();
    two->step();
    EXPECT_EQ(one->positions(), two->positions());
    // refine_uniform in two phases.
    two->commit(Simulation::prepare_refine_uniform(two->change_basis()));
    one->refine_uniform();
    expect_same_simulation(*one, *two);
}

} // namespace
} // namespace edn
