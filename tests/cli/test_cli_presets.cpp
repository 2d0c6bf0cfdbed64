// `elastodyn-cli simulate --preset` and the settings flags it shares with the app: run.json
// records what sim/settings_options.hpp's parser makes of the same flags, explicit --E/--nu/--rho
// win over a preset, an unknown preset is a usage error listing the names, and --help lists
// every shared option.

#include "core/json.hpp"
#include "sim/names.hpp"
#include "sim/presets.hpp"
#include "sim/settings_options.hpp"
#include "support/cli.hpp"
#include "support/files.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <utility>
#include <vector>

namespace edn {
namespace {

namespace fs = std::filesystem;

class CliPresets : public ::testing::Test {
protected:
    void SetUp() override { fs::create_directories(dir_.path / "capture"); }
    /// Runs simulate on the test cube for one frame with `extra`; returns run.json's settings.
    Json settings(const std::vector<std::string>& extra) {
        const fs::path out = dir_.path / "run.json";
        fs::remove(out);
        std::vector<std::string> a = {"simulate", test::data_path("good/cube.node").string(),
                                      "--frames", "1",
                                      "--out",    out.string()};
        a.insert(a.end(), extra.begin(), extra.end());
        last_ = run(a);
        EXPECT_EQ(last_.exit_code, 0) << last_.err;
        return read_json_file(out).at("settings");
    }
    test::CliRun run(const std::vector<std::string>& arguments) {
        return test::run_cli_captured(dir_.path / "capture", arguments, std::chrono::seconds(120));
    }
    test::TempDir dir_{"edn_cli_presets"};
    test::CliRun last_;
};

TEST_F(CliPresets, PresetSetsTheMaterialNumbersAndExplicitOnesWin) {
    const MaterialPreset& gel = *find_preset("gel");
    const Json plain = settings({"--preset", "gel"});
    EXPECT_EQ(plain.at("E").get<double>(), gel.young);
    EXPECT_EQ(plain.at("nu").get<double>(), gel.poisson);
    EXPECT_EQ(plain.at("rho").get<double>(), gel.density);
    for (const std::vector<std::string>& order :
         {std::vector<std::string>{"--preset", "gel", "--E", "5e4"},
          std::vector<std::string>{"--E", "5e4", "--preset", "gel"}}) {
        const Json s = settings(order);
        EXPECT_EQ(s.at("E").get<double>(), 5e4);
        EXPECT_EQ(s.at("nu").get<double>(), gel.poisson);
        EXPECT_EQ(s.at("rho").get<double>(), gel.density);
    }
}

TEST_F(CliPresets, UnknownPresetIsAUsageErrorListingTheNames) {
    const test::CliRun r = run({"simulate", test::data_path("good/cube.node").string(), "--preset",
                                "jelly", "--out", (dir_.path / "run.json").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("simulate: option '--preset': unknown preset 'jelly' (" +
                         preset_names(", ") + ")"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir_.path / "run.json"));
}

TEST_F(CliPresets, RunJsonRecordsWhatTheSharedParserMakesOfTheFlags) {
    const std::vector<std::pair<std::string, std::string>> given = {
        {"preset", "silicone"},       {"nu", "0.4"},         {"order", "2"},
        {"material", "corotational"}, {"dt", "0.01"},        {"newton", "7"},
        {"newton-tol", "1e-4"},       {"cg-tol", "1e-5"},    {"cg-max", "300"},
        {"summation", "per_simplex"}, {"cg-forcing", "off"}, {"integrator", "midpoint"}};
    std::vector<std::string> flags;
    for (const auto& [name, value] : given) flags.insert(flags.end(), {"--" + name, value});
    const Json recorded = settings(flags);
    SimulationSettings s;
    apply_settings_options(given, s);
    EXPECT_EQ(recorded.at("order").get<int>(), s.order);
    EXPECT_EQ(recorded.at("material").get<std::string>(), name_of(s.material));
    EXPECT_EQ(recorded.at("E").get<double>(), s.young);
    EXPECT_EQ(recorded.at("E").get<double>(), find_preset("silicone")->young);
    EXPECT_EQ(recorded.at("nu").get<double>(), 0.4);
    EXPECT_EQ(recorded.at("rho").get<double>(), s.density);
    EXPECT_EQ(recorded.at("dt").get<double>(), s.dt);
    EXPECT_EQ(recorded.at("integrator").get<std::string>(), name_of(s.integrator));
    EXPECT_EQ(recorded.at("summation").get<std::string>(), name_of(s.summation));
    EXPECT_EQ(recorded.at("newton").get<int>(), s.max_newton_iterations);
    EXPECT_EQ(recorded.at("newton_tol").get<double>(), s.newton_tolerance);
    EXPECT_EQ(recorded.at("cg_tol").get<double>(), s.pcg.relative_tolerance);
    EXPECT_EQ(recorded.at("cg_max").get<int>(), s.pcg.max_iterations);
    EXPECT_EQ(recorded.at("cg_forcing").get<bool>(), s.cg_forcing);
    EXPECT_FALSE(s.cg_forcing);
}

TEST_F(CliPresets, HelpListsEverySharedSettingsOption) {
    const test::CliRun r = run({"simulate", "--help"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const SettingsOption& option : settings_options())
        EXPECT_NE(r.out.find(std::string("  --") + option.name + " "), std::string::npos)
            << option.name;
    EXPECT_NE(r.out.find(preset_names()), std::string::npos) << r.out;
}

} // namespace
} // namespace edn
