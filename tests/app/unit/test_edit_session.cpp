// The edit session's cuts in two phases (app/edit_session.hpp): a cut is prepared on a
// background thread while the simulation steps and committed in a later turn, with the new
// scene built beside it; a stroke's pieces asked for in a row are prepared one after the other
// and, with the group closed before they are committed, still undo as one step; an error of the
// preparation comes back as the cut's message; a preparation made stale by a settings change is
// prepared again; another edit first commits the pending cuts, in order; with multigrid the
// hierarchy is built by the preparation, not in the first step after the commit.

#include "edit_session.hpp"
#include "mesh/box_mesh.hpp"
#include "sim/simulation.hpp"
#include "support/soft_settings.hpp"

#include <chrono>
#include <gtest/gtest.h>
#include <memory>
#include <thread>

namespace edn {
namespace {

using test::soft_settings;

/// A session of the 0.5 x 0.5 x 2 beam, pinned at its foot, after a few steps.
void load_beam(EditSession& session, const SimulationSettings& settings = soft_settings()) {
    const TetMesh mesh = make_box_tet_mesh(2, 2, 8, {0, 0, 0}, {0.5, 0.5, 2.0});
    session.load(std::make_unique<Scene>(make_scene("beam.node", mesh)),
                 std::make_unique<Simulation>(mesh, settings));
    TopologyChangeOptions options;
    options.reject_no_op = true; // as the app: a blade that cuts nothing is an error
    session.sim()->set_topology_options(options);
    session.sim()->pin_below(0.01);
    for (int f = 0; f < 2; ++f) session.sim()->step();
}

/// A blade across the beam at height z; `x_end`: a piece ending there (a partial blade).
CutPlane across(double z, double x_end = 10.0) {
    CutPlane plane;
    plane.point = {0.25, 0.25, z};
    plane.normal = {0.05, 0.0, 1.0};
    plane.outline = {{-1, -1, z}, {x_end, -1, z}, {x_end, 2, z}, {-1, 2, z}};
    return plane;
}

/// finish_cut without waiting, in "turns" until it commits (the preparation is short).
CutCommit commit_in_a_later_turn(EditSession& session, std::int64_t frame) {
    for (int turn = 0; turn < 20000; ++turn) {
        if (std::optional<CutCommit> done = session.finish_cut(frame, false)) return *done;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ADD_FAILURE() << "the cut was never prepared";
    return {};
}

TEST(EditSessionCuts, APreparedCutIsCommittedInALaterTurnWithItsScene) {
    EditSession session;
    load_beam(session);
    const Index cells = session.sim()->simulation().mesh().num_cells();
    session.start_cut(across(1.02), false);
    EXPECT_TRUE(session.cut_pending());
    // The simulation steps while the cut is prepared.
    for (int f = 0; f < 3; ++f) session.sim()->step();
    const std::vector<double> state_at_commit = session.sim()->positions();
    const CutCommit done = commit_in_a_later_turn(session, 7);
    EXPECT_FALSE(done.piece);
    ASSERT_TRUE(done.result.record) << done.result.message;
    EXPECT_EQ(done.result.record->frame, 7);
    EXPECT_EQ(done.result.record->components, 2);
    EXPECT_GT(done.result.record->prepare_ms, 0.0);
    EXPECT_EQ(done.result.message.rfind("cut: ", 0), 0u) << done.result.message;
    EXPECT_FALSE(session.cut_pending());
    // The scene built on the preparing thread is the committed mesh's.
    const TetMesh& mesh = session.sim()->simulation().mesh();
    EXPECT_GT(mesh.num_cells(), cells);
    EXPECT_EQ(session.scene()->mesh.cells, mesh.cells);
    EXPECT_EQ(session.scene()->mesh.positions, mesh.positions);
    // Undo goes back to the state of the commit's turn.
    ASSERT_TRUE(session.undo(8).record);
    EXPECT_EQ(session.sim()->positions(), state_at_commit);
    EXPECT_EQ(session.scene()->mesh.num_cells(), cells);
}

class EditSessionMultigrid : public ::testing::TestWithParam<int> {};

TEST_P(EditSessionMultigrid, ACutCommitsAHierarchyBuiltOffTheTurn) {
    SimulationSettings settings = soft_settings();
    settings.preconditioner = Preconditioner::Multigrid;
    settings.order = GetParam();
    EditSession session;
    load_beam(session, settings);
    session.start_cut(across(1.02), false);
    for (int f = 0; f < 2; ++f) session.sim()->step();
    const CutCommit done = commit_in_a_later_turn(session, 5);
    ASSERT_TRUE(done.result.record) << done.result.message;
    EXPECT_GT(done.result.record->hierarchy_ms, 0.0);
    // The first step after the commit builds no hierarchy: the preparing thread built it.
    session.sim()->step();
    const SolverSetupStats setup = session.sim()->simulation().solver_setup();
    EXPECT_EQ(setup.builds, 1);
    EXPECT_EQ(setup.builds_in_step, 0);
}

INSTANTIATE_TEST_SUITE_P(Orders, EditSessionMultigrid, ::testing::Values(1, 2));

TEST(EditSessionCuts, StrokePiecesInARowUndoAsOneStepAlsoWhenReleasedBeforeTheirCommit) {
    EditSession session;
    load_beam(session);
    const TetMesh before = session.sim()->simulation().mesh();
    session.group_changes(true, 2);
    session.start_cut(across(1.02, 0.2), true);
    session.start_cut(across(1.02, 0.4), true); // waits for the first
    session.start_cut(across(1.02, 10.0), true);
    session.group_changes(false, 2); // released: the group closes after the last commit
    int committed = 0;
    while (session.cut_pending()) {
        const std::optional<CutCommit> done = session.finish_cut(3 + committed, true);
        ASSERT_TRUE(done);
        EXPECT_TRUE(done->piece);
        ASSERT_TRUE(done->result.record) << done->result.message;
        EXPECT_EQ(done->result.record->frame, 3 + committed);
        ++committed;
    }
    EXPECT_EQ(committed, 3);
    EXPECT_EQ(session.sim()->simulation().components(), 2);
    EXPECT_EQ(session.sim()->simulation().undo_depth(), 1u);
    // Closed: a cut after it is a step of its own.
    EXPECT_TRUE(session.cut(across(0.52), 9).record);
    EXPECT_EQ(session.sim()->simulation().undo_depth(), 2u);
    session.undo(10);
    session.undo(11);
    EXPECT_EQ(session.sim()->simulation().mesh().cells, before.cells);
}

TEST(EditSessionCuts, AnErrorOfThePreparationIsTheCutsMessage) {
    EditSession session;
    load_beam(session);
    CutPlane beside = across(5.0); // above the beam
    beside.outline.clear();
    session.start_cut(beside, false);
    const std::optional<CutCommit> done = session.finish_cut(3, true);
    ASSERT_TRUE(done);
    EXPECT_FALSE(done->result.record);
    ASSERT_TRUE(done->result.error);
    EXPECT_EQ(*done->result.error, ErrorCode::Usage);
    EXPECT_NE(done->result.message.find("crosses no interior face"), std::string::npos)
        << done->result.message;
    EXPECT_FALSE(session.cut_pending());
}

TEST(EditSessionCuts, AStalePreparationIsPreparedAgainAndOtherEditsComeAfterThePendingCuts) {
    EditSession session;
    load_beam(session);
    session.start_cut(across(1.02), false);
    // A settings change rebuilds the simulation while the cut is prepared.
    SimulationSettings stiffer = session.sim()->simulation().settings();
    stiffer.young *= 3;
    session.sim()->rebuild(stiffer);
    const std::optional<CutCommit> done = session.finish_cut(4, true);
    ASSERT_TRUE(done);
    ASSERT_TRUE(done->result.record) << done->result.message;
    EXPECT_EQ(session.sim()->simulation().settings().young, stiffer.young);
    EXPECT_EQ(session.sim()->simulation().components(), 2);

    // A refinement asked for after a cut that is still being prepared lands after it.
    session.start_cut(across(0.52), false);
    ASSERT_TRUE(session.refine(Vec3{0.25, 0.25, 1.5}, 0.2, 1, 5).record);
    EXPECT_FALSE(session.cut_pending());
    const std::vector<TopologyChangeRecord> changes = session.topology_changes();
    ASSERT_EQ(changes.size(), 3u);
    EXPECT_EQ(changes[1].kind, TopologyChangeKind::Cut);
    EXPECT_EQ(changes[2].kind, TopologyChangeKind::RefineSphere);
    EXPECT_EQ(session.sim()->simulation().components(), 3);
    EXPECT_EQ(session.scene()->mesh.cells, session.sim()->simulation().mesh().cells);
}

} // namespace
} // namespace edn
