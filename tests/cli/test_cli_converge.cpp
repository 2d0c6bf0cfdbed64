// `elastodyn-cli simulate` iterates Newton to the tolerance within a per-frame budget: run.json's
// summary (frames, frames_converged, worst_residual, worst_final_residual) agrees with its
// per-frame records, the settings record the defaults, and the console line tells people.

#include "core/json.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/tetgen_io.hpp"
#include "support/cli.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace edn {
namespace {

namespace fs = std::filesystem;

class CliConverge : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(dir_.path / "capture");
        // A beam 0.2 x 0.2 x 0.6 standing on its clamped foot, bent by sideways gravity.
        write_node_ele(dir_.path / "beam.node",
                       make_box_tet_mesh(2, 2, 6, {0, 0, 0}, {0.2, 0.2, 0.6}));
    }
    /// Runs simulate on the beam with `extra` options; returns run.json (the test fails when
    /// the run does).
    Json simulate(std::vector<std::string> extra) {
        const fs::path out = dir_.path / "run.json";
        std::vector<std::string> a = {"simulate",    (dir_.path / "beam.node").string(),
                                      "--frames",    "8",
                                      "--pin-below", "0.01",
                                      "--gravity",   "9.81,0,0",
                                      "--E",         "2e4",
                                      "--out",       out.string()};
        a.insert(a.end(), extra.begin(), extra.end());
        last_ = test::run_cli_captured(dir_.path / "capture", a, std::chrono::seconds(120));
        EXPECT_EQ(last_.exit_code, 0) << last_.err;
        return read_json_file(out);
    }
    test::TempDir dir_{"edn_cli_converge"};
    test::CliRun last_;
};

/// The summary's convergence numbers recomputed from the frame records.
void expect_consistent(const Json& run) {
    const Json& frames = run.at("frames");
    const Json& summary = run.at("summary");
    const double tolerance = run.at("settings").at("newton_tol").get<double>();
    ASSERT_EQ(summary.at("frames").get<std::size_t>(), frames.size());
    std::int64_t converged = 0;
    double worst = 0, worst_g = 0;
    for (const Json& f : frames) {
        const bool c = f.at("converged").get<bool>();
        const double measure = f.at("relative_decrement").get<double>();
        converged += c;
        worst = std::max(worst, measure);
        worst_g = std::max(worst_g, f.at("final_residual").get<double>());
        // Converged frames stopped for that reason and met the tolerance; the others stopped at
        // a budget and did not.
        EXPECT_EQ(c, f.at("stop").get<std::string>() == "converged") << f;
        if (c)
            EXPECT_LE(measure, tolerance) << f;
        else
            EXPECT_GT(measure, tolerance) << f;
    }
    EXPECT_EQ(summary.at("frames_converged").get<std::int64_t>(), converged);
    EXPECT_EQ(summary.at("worst_residual").get<double>(), worst);
    EXPECT_EQ(summary.at("worst_final_residual").get<double>(), worst_g);
}

TEST_F(CliConverge, DefaultsIterateToTheToleranceAndReportIt) {
    const Json run = simulate({});
    const Json& settings = run.at("settings");
    EXPECT_EQ(settings.at("newton").get<int>(), 40);
    EXPECT_EQ(settings.at("newton_tol").get<double>(), 1e-3);
    EXPECT_EQ(settings.at("frame_budget_ms").get<double>(), 0.0);
    EXPECT_EQ(settings.at("cg_max").get<int>(), 1000);
    EXPECT_EQ(settings.at("cg_forcing").get<bool>(), true);
    expect_consistent(run);
    // Newton stops at the tolerance, far below the cap, and every frame gets there.
    EXPECT_EQ(run.at("summary").at("frames_converged").get<int>(), 8);
    for (const Json& f : run.at("frames")) EXPECT_LT(f.at("newton_iterations").get<int>(), 40);
    EXPECT_NE(last_.err.find("8/8 frames met the tolerance 0.001 (worst relative decrement "),
              std::string::npos)
        << last_.err;
}

TEST_F(CliConverge, ACapBelowWhatTheToleranceNeedsIsReportedAsUnconverged) {
    const Json run = simulate({"--newton", "1", "--newton-tol", "1e-9", "--cg-forcing", "off"});
    EXPECT_EQ(run.at("settings").at("cg_forcing").get<bool>(), false);
    expect_consistent(run);
    EXPECT_EQ(run.at("summary").at("frames_converged").get<int>(), 0);
    for (const Json& f : run.at("frames")) {
        EXPECT_EQ(f.at("newton_iterations").get<int>(), 1);
        EXPECT_EQ(f.at("stop").get<std::string>(), "iteration_cap");
    }
    EXPECT_GT(run.at("summary").at("worst_residual").get<double>(), 1e-9);
    EXPECT_NE(last_.err.find("0/8 frames met the tolerance 1e-09"), std::string::npos) << last_.err;
}

TEST_F(CliConverge, AFrameBudgetIsRecordedAndKeepsAtLeastOneIteration) {
    // A budget no iteration fits in: each frame runs exactly one Newton iteration.
    const Json run = simulate({"--frame-budget-ms", "1e-9", "--newton-tol", "1e-9"});
    EXPECT_EQ(run.at("settings").at("frame_budget_ms").get<double>(), 1e-9);
    expect_consistent(run);
    for (const Json& f : run.at("frames")) {
        EXPECT_EQ(f.at("newton_iterations").get<int>(), 1);
        EXPECT_EQ(f.at("stop").get<std::string>(), "time_budget");
    }
}

TEST_F(CliConverge, BadConvergenceOptionsAreUsageErrors) {
    const std::string mesh = (dir_.path / "beam.node").string();
    for (const std::vector<std::string>& bad : {std::vector<std::string>{"--cg-forcing", "maybe"},
                                                {"--frame-budget-ms", "-1"},
                                                {"--newton", "0"},
                                                {"--multigrid-refresh", "sometimes"}}) {
        std::vector<std::string> a = {"simulate", mesh, "--frames", "1"};
        a.insert(a.end(), bad.begin(), bad.end());
        const test::CliRun r =
            test::run_cli_captured(dir_.path / "capture", a, std::chrono::seconds(60));
        EXPECT_EQ(r.exit_code, 2) << bad[0] << ": " << r.err;
        EXPECT_NE(r.err.find(bad[0]), std::string::npos) << r.err;
    }
}

} // namespace
} // namespace edn
