// The app's script runner without a window: actions handed out by frame in script order, once
// each, and an action's settings keys turned into Simulation settings.

#include "core/error.hpp"
#include "script.hpp"
#include "script_runner.hpp"

#include <gtest/gtest.h>

namespace edn {
namespace {

TEST(ScriptRunner, HandsOutDueActionsInOrderOnce) {
    ScriptRunner runner(parse_script(R"({"actions": [
        {"frame": 5, "pause": true},
        {"frame": 0, "pin_below": 0.1},
        {"frame": 5, "undo": true},
        {"frame": 9, "step": true}]})",
                                     "test.json"));
    ASSERT_EQ(runner.size(), 4u);
    const ScriptAction* first = runner.next(0);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->frame, 0);
    EXPECT_TRUE(first->pin_below.has_value());
    EXPECT_EQ(runner.next(0), nullptr);
    EXPECT_EQ(runner.next(4), nullptr);
    const ScriptAction* second = runner.next(5);
    ASSERT_NE(second, nullptr);
    EXPECT_TRUE(second->pause.value_or(false)); // stable: the frame-5 actions in script order
    const ScriptAction* third = runner.next(5);
    ASSERT_NE(third, nullptr);
    EXPECT_TRUE(third->undo);
    EXPECT_FALSE(runner.done());
    // A late frame takes what was missed.
    const ScriptAction* fourth = runner.next(100);
    ASSERT_NE(fourth, nullptr);
    EXPECT_TRUE(fourth->step);
    EXPECT_TRUE(runner.done());
    EXPECT_EQ(runner.next(100), nullptr);
    EXPECT_TRUE(ScriptRunner().done());
}

TEST(ScriptRunner, SettingsKeysBecomeSimulationSettings) {
    const std::vector<ScriptAction> actions = parse_script(R"({"actions": [
        {"frame": 0, "order": 2, "young": 1e7, "material": "corotational",
         "gravity": [0, 0, -1], "damping": 0.5},
        {"frame": 1, "pause": true, "undo": true}]})",
                                                           "test.json");
    SimulationSettings base;
    base.order = 1;
    const std::optional<SimulationSettings> changed = scripted_settings(actions[0], base);
    ASSERT_TRUE(changed.has_value());
    EXPECT_EQ(changed->order, 2);
    EXPECT_EQ(changed->young, 1e7);
    EXPECT_EQ(changed->material, Material::Corotational);
    EXPECT_EQ(changed->gravity[2], -1.0);
    EXPECT_EQ(changed->mass_damping, 0.5);
    EXPECT_EQ(changed->poisson, base.poisson); // untouched keys stay
    EXPECT_FALSE(scripted_settings(actions[1], base).has_value());
}

TEST(ScriptRunner, BadScriptsAreParseErrors) {
    EXPECT_THROW(parse_script(R"({"actions": [{"frame": -1}]})", "bad.json"), Error);
    EXPECT_THROW(parse_script(R"({"actions": [{"frame": 0, "order": 7}]})", "bad.json"), Error);
}

TEST(ScriptRunner, ColorRangeIsManualOrAuto) {
    const std::vector<ScriptAction> actions = parse_script(R"({"actions": [
        {"frame": 0, "color_range": [10, 2000]},
        {"frame": 1, "color_range": "auto"}]})",
                                                           "test.json");
    ASSERT_TRUE(actions[0].color_range.has_value());
    EXPECT_EQ(actions[0].color_range->low, 10.0);
    EXPECT_EQ(actions[0].color_range->high, 2000.0);
    EXPECT_FALSE(actions[0].color_range_auto);
    EXPECT_TRUE(actions[1].color_range_auto);
    EXPECT_FALSE(actions[1].color_range.has_value());
    for (const char* bad : {R"("max")", "[5, 1]", "[1]", "true"}) {
        const std::string text =
            std::string(R"({"actions": [{"frame": 0, "color_range": )") + bad + "}]}";
        EXPECT_THROW(parse_script(text, "test.json"), Error) << bad;
    }
}

TEST(ScriptRunner, HelpOpensAndClosesTheOverlay) {
    const std::vector<ScriptAction> actions = parse_script(
        R"({"actions": [{"frame": 0, "help": true}, {"frame": 1, "help": false}, {"frame": 2}]})",
        "test.json");
    ASSERT_EQ(actions.size(), 3u);
    EXPECT_EQ(actions[0].help, std::optional<bool>(true));
    EXPECT_EQ(actions[1].help, std::optional<bool>(false));
    EXPECT_FALSE(actions[2].help.has_value());
    EXPECT_THROW(parse_script(R"({"actions": [{"frame": 0, "help": 1}]})", "test.json"), Error);
}

} // namespace
} // namespace edn
