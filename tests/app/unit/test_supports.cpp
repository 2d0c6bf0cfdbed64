// What holds a body in the app (app/supports.hpp): pins by a plane along each axis and side,
// the pin_plane / ground / drag radius script keys, and when the no-support warning is due.
#include "core/error.hpp"
#include "mesh/box_mesh.hpp"
#include "script.hpp"
#include "supports.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>

namespace edn {
namespace {

TEST(PinPlane, PinsTheRightVerticesForEveryAxisAndSide) {
    // A 2 x 3 x 4 box from (1, 2, 3) to (3, 5, 7) of unit cells: lattice 3 x 4 x 5.
    const TetMesh mesh = make_box_tet_mesh(2, 3, 4, {1, 2, 3}, {3, 5, 7});
    const Vec3 lower{1, 2, 3}, upper{3, 5, 7};
    for (int axis = 0; axis < 3; ++axis) {
        for (bool above : {false, true}) {
            for (double fraction : {0.0, 0.3, 0.5, 1.0}) {
                SCOPED_TRACE("axis " + std::to_string(axis) + (above ? " above " : " below ") +
                             std::to_string(fraction));
                PinPlane plane{axis, above, fraction, std::nullopt};
                const double at = pin_plane_coordinate(plane, lower, upper);
                const double extent = upper[axis] - lower[axis];
                EXPECT_DOUBLE_EQ(at, above ? upper[axis] - fraction * extent
                                           : lower[axis] + fraction * extent);
                const std::vector<Index> pinned = pin_plane_vertices(mesh, plane);
                // Brute force: every vertex on the side (the plane included), no other.
                std::vector<Index> expected;
                for (Index v = 0; v < mesh.num_vertices(); ++v) {
                    const double c = mesh.positions[v][axis];
                    if (above ? c >= at - 1e-12 : c <= at + 1e-12) expected.push_back(v);
                }
                EXPECT_EQ(pinned, expected);
                EXPECT_FALSE(pinned.empty()) << "fraction 0 pins the face's vertices";
                if (fraction == 0.0) {
                    const int layer = mesh.num_vertices() / (static_cast<int>(extent) + 1);
                    EXPECT_EQ(static_cast<int>(pinned.size()), layer);
                }
                if (fraction == 1.0) {
                    EXPECT_EQ(pinned.size(), mesh.positions.size());
                }
            }
        }
    }
    // A world coordinate: x <= 2 is the lower two of three x layers.
    const std::vector<Index> world = pin_plane_vertices(mesh, {0, false, std::nullopt, 2.0});
    EXPECT_EQ(world.size(), 2u * 4u * 5u);
    for (Index v : world) EXPECT_LE(mesh.positions[v][0], 2.0);
    EXPECT_THROW(pin_plane_coordinate({3, false, 0.0, std::nullopt}, lower, upper), Error);
}

TEST(PinPlane, ScriptKeysParseAndBadOnesAreRefused) {
    const std::vector<ScriptAction> actions = parse_script(R"({"actions": [
        {"frame": 0, "pin_plane": {"axis": "x", "side": "above", "fraction": 0.05}},
        {"frame": 1, "pin_plane": {"axis": "y", "at": -0.5}, "ground": false,
         "ground_height": 0.25, "ground_friction": 3},
        {"frame": 2, "drag": {"vertex": 3, "to": [0, 0, 1], "radius": 0.2}}]})",
                                                           "s.json");
    ASSERT_EQ(actions.size(), 3u);
    ASSERT_TRUE(actions[0].pin_plane);
    EXPECT_EQ(actions[0].pin_plane->axis, 0);
    EXPECT_TRUE(actions[0].pin_plane->above);
    EXPECT_EQ(actions[0].pin_plane->fraction, 0.05);
    ASSERT_TRUE(actions[1].pin_plane);
    EXPECT_EQ(actions[1].pin_plane->axis, 1);
    EXPECT_FALSE(actions[1].pin_plane->above);
    EXPECT_EQ(actions[1].pin_plane->coordinate, -0.5);
    EXPECT_EQ(actions[1].ground, false);
    EXPECT_EQ(actions[1].ground_height, 0.25);
    EXPECT_EQ(actions[1].ground_friction, 3.0);
    ASSERT_TRUE(actions[2].drag);
    EXPECT_EQ(actions[2].drag->radius, 0.2);
    for (const char* bad :
         {R"({"actions": [{"frame": 0, "pin_plane": {"axis": "w", "fraction": 0.1}}]})",
          R"({"actions": [{"frame": 0, "pin_plane": {"fraction": 0.1}}]})",
          R"({"actions": [{"frame": 0, "pin_plane": {"axis": "x"}}]})",
          R"({"actions": [{"frame": 0, "pin_plane": {"axis": "x", "fraction": 0.1, "at": 1}}]})",
          R"({"actions": [{"frame": 0, "pin_plane": {"axis": "x", "side": "left", "at": 1}}]})",
          R"({"actions": [{"frame": 0, "pin_plane": {"axis": "x", "fraction": 2}}]})",
          R"({"actions": [{"frame": 0, "ground": 1}]})",
          R"({"actions": [{"frame": 0, "ground_friction": -1}]})",
          R"({"actions": [{"frame": 0, "drag": {"vertex": 1, "to": [0, 0, 0], "radius": -1}}]})"})
        EXPECT_THROW(parse_script(bad, "bad.json"), Error) << bad;
}

TEST(Ground, AppStiffnessSinksTheWholeWeightOnOneNodeByHalfAPercent) {
    const double diagonal = std::sqrt(3.0), mass = 1000.0; // a 1 m water-density cube
    const double k = default_ground_stiffness(mass, diagonal);
    EXPECT_NEAR(mass * 9.81 / k, 0.005 * diagonal, 1e-12);
    // Light or degenerate bodies keep the engine's default.
    EXPECT_EQ(default_ground_stiffness(1e-3, 0.1), SimulationSettings{}.ground_stiffness);
    EXPECT_EQ(default_ground_stiffness(mass, 0.0), SimulationSettings{}.ground_stiffness);
}

TEST(SupportWarning, OnlyWhenNothingHoldsAFallingBody) {
    SimulationSettings s; // backward Euler under gravity, no ground
    EXPECT_FALSE(support_warning(s, 0).empty());
    EXPECT_TRUE(support_warning(s, 1).empty()) << "a pin holds it";
    s.ground_height = 0.0;
    EXPECT_TRUE(support_warning(s, 0).empty()) << "the ground holds it";
    s.ground_height.reset();
    s.gravity = {0, 0, 0};
    EXPECT_TRUE(support_warning(s, 0).empty()) << "nothing pulls it away";
    s.integrator = Integrator::Static;
    EXPECT_FALSE(support_warning(s, 0).empty()) << "a static solve needs a support anyway";
    EXPECT_TRUE(support_warning(s, 4).empty());
}

} // namespace
} // namespace edn
