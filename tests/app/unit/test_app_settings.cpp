// The app's simulation settings: its defaults are SimulationSettings' (the CLI's) except the
// documented frame budget, and the script key `preset` sets E, nu, rho with young / poisson /
// density of the same action winning over it.

#include "app.hpp"
#include "core/error.hpp"
#include "script.hpp"
#include "script_runner.hpp"
#include "sim/presets.hpp"

#include <gtest/gtest.h>
#include <optional>

namespace edn {
namespace {

TEST(AppSettings, DefaultsAreTheClisExceptTheFrameBudget) {
    SimulationSettings expected;
    EXPECT_EQ(expected.frame_budget_ms, 0.0); // the CLI: no budget, deterministic
    expected.frame_budget_ms = kAppFrameBudgetMs;
    const SimulationSettings app = default_app_settings();
    EXPECT_EQ(app.frame_budget_ms, kAppFrameBudgetMs);
    EXPECT_EQ(app.order, expected.order);
    EXPECT_EQ(app.material, expected.material);
    EXPECT_EQ(app.young, expected.young);
    EXPECT_EQ(app.poisson, expected.poisson);
    EXPECT_EQ(app.density, expected.density);
    EXPECT_EQ(app.dt, expected.dt);
    EXPECT_EQ(app.integrator, expected.integrator);
    EXPECT_EQ(app.backend, expected.backend);
    EXPECT_EQ(app.summation, expected.summation);
    EXPECT_EQ(app.gravity, expected.gravity);
    EXPECT_EQ(app.mass_damping, expected.mass_damping);
    EXPECT_EQ(app.stiffness_damping, expected.stiffness_damping);
    EXPECT_EQ(app.max_newton_iterations, expected.max_newton_iterations);
    EXPECT_EQ(app.newton_tolerance, expected.newton_tolerance);
    EXPECT_EQ(app.pcg.relative_tolerance, expected.pcg.relative_tolerance);
    EXPECT_EQ(app.pcg.max_iterations, expected.pcg.max_iterations);
    EXPECT_EQ(app.cg_forcing, expected.cg_forcing);
    EXPECT_EQ(app.coarse_iterations, expected.coarse_iterations);
    EXPECT_EQ(app.preconditioner, expected.preconditioner);
    EXPECT_EQ(app.multigrid_every_iteration, expected.multigrid_every_iteration);
    EXPECT_EQ(app.multigrid_lag, expected.multigrid_lag);
    EXPECT_EQ(app.multigrid_rest_modes, expected.multigrid_rest_modes);
    EXPECT_EQ(app.projection, expected.projection);
    EXPECT_EQ(app.deterministic, expected.deterministic);
    EXPECT_EQ(app.ground_height, expected.ground_height);
    EXPECT_EQ(app.ground_stiffness, expected.ground_stiffness);
    EXPECT_EQ(app.ground_friction, expected.ground_friction);
}

TEST(AppSettings, ScriptPresetSetsTheMaterialNumbersAndExplicitKeysWin) {
    const std::vector<ScriptAction> actions = parse_script(R"({"actions": [
        {"frame": 0, "preset": "foam"},
        {"frame": 1, "density": 45, "preset": "silicone"}]})",
                                                           "test.json");
    const SimulationSettings base;
    const MaterialPreset& foam = *find_preset("foam");
    const std::optional<SimulationSettings> first = scripted_settings(actions[0], base);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->young, foam.young);
    EXPECT_EQ(first->poisson, foam.poisson);
    EXPECT_EQ(first->density, foam.density);
    const std::optional<SimulationSettings> second = scripted_settings(actions[1], base);
    ASSERT_TRUE(second.has_value());
    EXPECT_EQ(second->young, find_preset("silicone")->young);
    EXPECT_EQ(second->density, 45.0);
    try {
        parse_script(R"({"actions": [{"frame": 0, "preset": "jelly"}]})", "bad.json");
        ADD_FAILURE() << "an unknown preset was accepted";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("unknown preset 'jelly' (" + preset_names(", ")),
                  std::string::npos)
            << e.what();
    }
}

} // namespace
} // namespace edn
