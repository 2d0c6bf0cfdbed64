// `elastodyn-cli simulate --scene`: a scene runs exactly as the equivalent command line (same
// final positions bit for bit on the CPU, across a drag, a cut and a refinement), options given
// on the command line override the scene's values, and a bad scene is exit 3 with one line.

#include "core/json.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/tetgen_io.hpp"
#include "support/cli.hpp"
#include "support/files.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace edn {
namespace {

namespace fs = std::filesystem;

class CliScene : public ::testing::Test {
protected:
    void SetUp() override {
        fs::create_directories(dir_.path / "capture");
        fs::create_directories(dir_.path / "meshes");
        fs::create_directories(dir_.path / "scenes");
        // A 0.2 x 0.2 x 0.6 beam standing on z = 0; no vertex near z = 0.01.
        write_node_ele(dir_.path / "meshes" / "beam.node",
                       make_box_tet_mesh(2, 2, 6, {0, 0, 0}, {0.2, 0.2, 0.6}));
    }
    test::CliRun run(const std::vector<std::string>& arguments) {
        return test::run_cli_captured(dir_.path / "capture", arguments, std::chrono::seconds(300));
    }
    /// run.json's frames without their timings.
    static Json frames_of(const fs::path& run_json) {
        Json frames = read_json_file(run_json).at("frames");
        for (Json& frame : frames) frame.erase("ms");
        return frames;
    }
    test::TempDir dir_{"edn_cli_scene"};
};

constexpr const char* kScene = R"({
  "version": 1,
  "mesh": "../meshes/beam.node",
  "order": 1,
  "material": {"preset": "silicone", "model": "corotational", "E": 2e5},
  "time": {"dt": 0.01, "gravity": [0, 9.81, 0], "damping": 0.5},
  "solver": {"newton_tol": 1e-4, "cg_tol": 1e-6, "cg_forcing": false},
  "pins": [{"plane": {"axis": "z", "side": "below", "at": 0.01}}],
  "frames": 8,
  "actions": [
    {"frame": 2, "cut": {"point": [0, 0, 0.3], "normal": [0, 0, 1]}},
    {"frame": 5, "refine": {"center": [0.1, 0.1, 0.5], "radius": 0.12, "levels": 2}}
  ]
})";

TEST_F(CliScene, SceneRunsExactlyAsTheSameFlags) {
    const fs::path scene = dir_.path / "scenes" / "beam.json";
    test::write_text(scene, kScene);
    const test::CliRun a =
        run({"simulate", "--scene", scene.string(), "--out", (dir_.path / "a.json").string(),
             "--vtu", (dir_.path / "a.vtu").string()});
    ASSERT_EQ(a.exit_code, 0) << a.err;
    const test::CliRun b = run({"simulate",
                                (dir_.path / "meshes" / "beam.node").string(),
                                "--preset",
                                "silicone",
                                "--material",
                                "corotational",
                                "--E",
                                "2e5",
                                "--dt",
                                "0.01",
                                "--gravity",
                                "0,9.81,0",
                                "--damping",
                                "0.5",
                                "--newton-tol",
                                "1e-4",
                                "--cg-tol",
                                "1e-6",
                                "--cg-forcing",
                                "off",
                                "--pin-below",
                                "0.01",
                                "--frames",
                                "8",
                                "--cut-plane",
                                "0 0 0.3 0 0 1",
                                "--cut-frame",
                                "2",
                                "--refine-sphere",
                                "0.1 0.1 0.5 0.12",
                                "--refine-levels",
                                "2",
                                "--refine-frame",
                                "5",
                                "--out",
                                (dir_.path / "b.json").string(),
                                "--vtu",
                                (dir_.path / "b.vtu").string()});
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const Json run_a = read_json_file(dir_.path / "a.json");
    EXPECT_EQ(run_a.at("cuts").size(), 1u);
    EXPECT_EQ(run_a.at("refinements").size(), 1u);
    EXPECT_EQ(run_a.at("summary").at("frames"), 8);
    EXPECT_EQ(run_a.at("settings"), read_json_file(dir_.path / "b.json").at("settings"));
    EXPECT_TRUE(frames_of(dir_.path / "a.json") == frames_of(dir_.path / "b.json"));
    // Every position, velocity and stress bit for bit (the VTU holds 17 significant digits).
    EXPECT_TRUE(test::read_text(dir_.path / "a.vtu") == test::read_text(dir_.path / "b.vtu"));
    EXPECT_EQ(run_a.at("frames").back().at("components"), 2); // the cut went through
}

TEST_F(CliScene, CommandLineOverridesTheScene) {
    const fs::path scene = dir_.path / "scenes" / "beam.json";
    test::write_text(scene, kScene);
    const fs::path out = dir_.path / "run.json";
    const test::CliRun r = run({"simulate", "--scene", scene.string(), "--E", "5e4", "--frames",
                                "3", "--material", "neohookean", "--out", out.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json run_json = read_json_file(out);
    EXPECT_EQ(run_json.at("settings").at("E"), 5e4);
    EXPECT_EQ(run_json.at("settings").at("material"), "neohookean");
    EXPECT_EQ(run_json.at("settings").at("dt"), 0.01); // the scene's
    EXPECT_EQ(run_json.at("summary").at("frames"), 3);
    EXPECT_EQ(run_json.at("cuts").size(), 1u);        // frame 2 < 3
    EXPECT_EQ(run_json.at("refinements").size(), 0u); // frame 5: after the run's end
}

TEST_F(CliScene, SaveStateThenLoadStateIsOneRunBitForBit) {
    const std::vector<std::string> flags = {(dir_.path / "meshes" / "beam.node").string(),
                                            "--gravity",
                                            "0,9.81,0",
                                            "--dt",
                                            "0.01",
                                            "--pin-below",
                                            "0.01",
                                            "--cut-plane",
                                            "0 0 0.3 0 0 1",
                                            "--cut-frame",
                                            "1"};
    auto simulate = [&](std::vector<std::string> extra, bool with_flags = true) {
        std::vector<std::string> a = {"simulate"};
        if (with_flags) a.insert(a.end(), flags.begin(), flags.end());
        a.insert(a.end(), extra.begin(), extra.end());
        const test::CliRun r = run(a);
        EXPECT_EQ(r.exit_code, 0) << r.err;
    };
    const fs::path state = dir_.path / "half.edns";
    simulate({"--frames", "6", "--vtu", (dir_.path / "whole.vtu").string()});
    simulate({"--frames", "3", "--save-state", state.string()});
    // --backend cpu is the state's own backend: no rebuild, still bit for bit.
    simulate({"--load-state", state.string(), "--backend", "cpu", "--frames", "3", "--vtu",
              (dir_.path / "resumed.vtu").string(), "--out", (dir_.path / "run.json").string()},
             false);
    EXPECT_TRUE(test::read_text(dir_.path / "whole.vtu") ==
                test::read_text(dir_.path / "resumed.vtu"));
    EXPECT_EQ(read_json_file(dir_.path / "run.json").at("components"), 2); // the cut mesh
    // A state that is not one: exit 3, one line.
    test::write_text(dir_.path / "bogus.edns", "hello");
    const test::CliRun bad = run({"simulate", "--load-state", (dir_.path / "bogus.edns").string()});
    EXPECT_EQ(bad.exit_code, 3) << bad.err;
    EXPECT_NE(bad.err.find("not an elastodyn state file"), std::string::npos) << bad.err;
}

TEST_F(CliScene, BadSceneIsExit3WithOneLine) {
    const fs::path scene = dir_.path / "scenes" / "bad.json";
    test::write_text(scene, "{\"version\": 1, \"mesh\": \"../meshes/beam.node\",\n"
                            "  \"time\": {\"damping\": -2}}\n");
    const test::CliRun r = run({"simulate", "--scene", scene.string()});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find(scene.string() + ":2: time.damping: -2 is out of range"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    const test::CliRun missing = run({"simulate", "--scene", (dir_.path / "none.json").string()});
    EXPECT_EQ(missing.exit_code, 3) << missing.err;
}

} // namespace
} // namespace edn
