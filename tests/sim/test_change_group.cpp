// Simulation::group_changes: the pieces of a cut stroke undo as one step. Inside an open group
// only the first change snapshots; undo goes back before the whole group, exactly; changes
// outside a group snapshot one by one as before; an undo inside an open group lets the group's
// next change snapshot again.

#include "core/error.hpp"
#include "mesh/cut.hpp"
#include "sim/simulation.hpp"
#include "support/mesh_fixtures.hpp"
#include "support/soft_settings.hpp"

#include <gtest/gtest.h>

namespace edn {
namespace {

using test::soft_settings;

/// A blade across the 1 x 1 x 2 beam at height z, limited to x < x_end (a partial piece).
CutPlane piece(double z, double x_end) {
    CutPlane plane;
    plane.point = {0.5, 0.5, z};
    plane.normal = {0.0, 0.05, 1.0};
    plane.outline = {{-1, -1, z}, {x_end, -1, z}, {x_end, 2, z}, {-1, 2, z}};
    return plane;
}

TEST(ChangeGroup, AStrokeOfPiecesUndoesAsOneStep) {
    Simulation sim(test::make_box_mesh(2, 2, 4, 1.0, 1.0, 2.0), soft_settings());
    sim.pin_below(0.01);
    sim.step();
    const TetMesh before = sim.mesh();
    const std::vector<double> positions = sim.positions();
    sim.refine_sphere({0.5, 0.5, 1.5}, 0.3, 1); // a change before the group: its own step
    ASSERT_EQ(sim.undo_depth(), 1u);
    const TetMesh refined = sim.mesh();
    const std::vector<double> refined_positions = sim.positions();

    sim.group_changes(true);
    sim.cut(piece(1.05, 0.3));
    sim.cut(piece(1.05, 0.7));
    sim.cut(piece(1.05, 1.5));
    sim.group_changes(false);
    EXPECT_EQ(sim.undo_depth(), 2u);              // the refinement and the whole stroke
    EXPECT_EQ(sim.topology_changes().size(), 4u); // every piece still recorded
    EXPECT_EQ(sim.components(), 2);

    sim.undo(); // the stroke: back to the refined mesh and its state, exactly
    EXPECT_EQ(sim.mesh().cells, refined.cells);
    EXPECT_EQ(sim.mesh().positions, refined.positions);
    EXPECT_EQ(sim.positions(), refined_positions);
    EXPECT_EQ(sim.components(), 1);
    sim.undo();
    EXPECT_EQ(sim.mesh().cells, before.cells);
    EXPECT_EQ(sim.positions(), positions);
    EXPECT_THROW(sim.undo(), Error);

    // Closed again: each cut is its own step.
    sim.cut(piece(1.05, 0.3));
    sim.cut(piece(1.05, 0.7));
    EXPECT_EQ(sim.undo_depth(), 2u);
}

TEST(ChangeGroup, UndoInsideAnOpenGroupLetsItsNextChangeSnapshot) {
    Simulation sim(test::make_box_mesh(2, 2, 4, 1.0, 1.0, 2.0), soft_settings());
    const TetMesh before = sim.mesh();
    sim.group_changes(true);
    sim.cut(piece(0.55, 0.4));
    sim.cut(piece(0.55, 1.5));
    EXPECT_EQ(sim.undo_depth(), 1u);
    sim.undo();
    EXPECT_EQ(sim.mesh().cells, before.cells);
    sim.cut(piece(1.55, 1.5));
    sim.cut(piece(1.3, 1.5));
    EXPECT_EQ(sim.undo_depth(), 1u);
    sim.undo();
    EXPECT_EQ(sim.mesh().cells, before.cells);
    EXPECT_EQ(sim.undo_depth(), 0u);
    sim.group_changes(false);
}

} // namespace
} // namespace edn
