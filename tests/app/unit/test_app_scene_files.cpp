// Scene files in the app (app/app_files.cpp, app/script_runner.hpp): a scene is read onto the
// CLI's defaults except the app's run-time ones (backend, frame budget), its actions become
// script actions counted from the load, and ScriptRunner merges them with a running script.

#include "app.hpp"
#include "script_runner.hpp"
#include "sim/scene_file.hpp"
#include "sim/settings_json.hpp"

#include <gtest/gtest.h>

namespace edn {
namespace {

Json all_settings(const SimulationSettings& s) {
    Json root = Json::object();
    write_settings_json(s, nullptr, root);
    return root;
}

TEST(AppSceneFiles, SceneDefaultsAreTheClisExceptBackendAndFrameBudget) {
    constexpr const char* kText = R"({"version": 1, "mesh": "m.node", "order": 2})";
    SimulationSettings current = default_app_settings();
    current.backend = Backend::Cuda;
    current.frame_budget_ms = 100;
    current.ground_height = 0.5; // the app's ground is no scene default
    current.young = 7e5;         // nor is what the panel was edited to
    SimulationSettings app = parse_scene(kText, "s.json", scene_defaults(current)).settings;
    const SimulationSettings cli = parse_scene(kText, "s.json").settings;
    EXPECT_EQ(app.backend, Backend::Cuda);
    EXPECT_EQ(app.frame_budget_ms, 100.0);
    app.backend = cli.backend;
    app.frame_budget_ms = cli.frame_budget_ms;
    EXPECT_EQ(all_settings(app), all_settings(cli));
}

TEST(AppSceneFiles, SceneActionsBecomeScriptActionsFromTheLoadFrame) {
    const SceneFile scene = parse_scene(R"({"version": 1, "mesh": "m.node", "actions": [
        {"frame": 4, "drag": {"vertex": 3, "to": [1, 2, 3], "stiffness": 20, "radius": 0.5}},
        {"frame": 6, "release": true, "cut": {"point": [0, 0, 1], "normal": [0, 0, 1]}},
        {"frame": 7, "refine": {"center": [1, 1, 1], "radius": 0.25, "levels": 2},
         "refine_uniform": true}]})",
                                        "s.json");
    const std::vector<ScriptAction> actions = script_actions_of(scene, 10);
    ASSERT_EQ(actions.size(), 3u);
    EXPECT_EQ(actions[0].frame, 14);
    ASSERT_TRUE(actions[0].drag);
    EXPECT_EQ(actions[0].drag->from_vertex, 2); // 1-based in the scene, 0-based in scripts
    EXPECT_EQ(actions[0].drag->to_world, (std::array<double, 3>{1, 2, 3}));
    EXPECT_EQ(actions[0].drag->stiffness, 20.0);
    EXPECT_EQ(actions[0].drag->radius, 0.5);
    EXPECT_TRUE(actions[1].release);
    ASSERT_TRUE(actions[1].cut);
    EXPECT_FALSE(actions[1].cut->radius); // every face
    EXPECT_EQ(actions[1].cut->normal, (std::array<double, 3>{0, 0, 1}));
    ASSERT_TRUE(actions[2].refine);
    EXPECT_EQ(actions[2].refine->radius, 0.25);
    EXPECT_EQ(actions[2].refine->levels, 2);
    EXPECT_TRUE(actions[2].refine_uniform);
}

TEST(AppSceneFiles, ScriptRunnerMergesAddedActionsWithThePendingOnes) {
    std::vector<ScriptAction> script(3);
    script[0].frame = 0, script[1].frame = 5, script[2].frame = 9;
    script[1].step = true;
    ScriptRunner runner(script);
    ASSERT_NE(runner.next(0), nullptr);
    std::vector<ScriptAction> added(2);
    added[0].frame = 5, added[1].frame = 7;
    added[0].reset = true;
    runner.add(added);
    EXPECT_EQ(runner.size(), 4u); // the one handed out is gone
    EXPECT_EQ(runner.next(4), nullptr);
    const ScriptAction* a = runner.next(5);
    ASSERT_NE(a, nullptr);
    EXPECT_TRUE(a->step); // the script's own first at the same frame
    a = runner.next(5);
    ASSERT_NE(a, nullptr);
    EXPECT_TRUE(a->reset);
    EXPECT_EQ(runner.next(9)->frame, 7);
    EXPECT_EQ(runner.next(9)->frame, 9);
    EXPECT_TRUE(runner.done());
}

} // namespace
} // namespace edn
