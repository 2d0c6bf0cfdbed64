// The app's scene files and saved states (app/app_files.cpp), run headless: `--scene FILE.json`
// takes the scene's settings, pins and actions; a state saved mid-run and loaded in another run
// continues bit for bit on the CPU (the two runs' later state files are byte-equal); Save scene
// writes what loads back; failed loads are reported and the scene stays. Skipped when the app
// was not built.

#include "core/json.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/tetgen_io.hpp"
#include "support/app_binary.hpp"
#include "support/files.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace edn {
namespace {

namespace fs = std::filesystem;

constexpr const char* kRun = "--headless --no-gui --width 64 --height 48 --backend cpu "
                             "--frame-budget-ms 0 ";

constexpr const char* kScene = R"({
  "version": 1,
  "mesh": "beam.node",
  "material": {"model": "corotational", "E": 3e5},
  "time": {"dt": 0.01, "gravity": [0, 9.81, 0]},
  "ground": {"height": -0.01, "friction": 2},
  "pins": [{"plane": {"axis": "z", "side": "below", "at": 0.01}}],
  "actions": [{"frame": 2, "drag": {"vertex": 40, "to": [0.3, 0.1, 0.5], "radius": 0.1}},
              {"frame": 3, "cut": {"point": [0, 0, 0.3], "normal": [0, 0, 1]}}]
})";

class AppFiles : public ::testing::Test {
protected:
    void SetUp() override {
        app_ = edn::test::app_binary();
        if (app_.empty()) GTEST_SKIP() << "elastodyn app not built";
        write_node_ele(dir_.path / "beam.node",
                       make_box_tet_mesh(2, 2, 6, {0, 0, 0}, {0.2, 0.2, 0.6}));
        test::write_text(dir_.path / "beam.json", kScene);
    }
    /// Runs the app with `arguments` in the test folder; returns the exit code.
    int run(const std::string& arguments) {
        const std::string command = "cd '" + dir_.path.string() + "' && '" + app_.string() + "' " +
                                    kRun + arguments + " > out.txt 2> err.txt";
        const int status = std::system(command.c_str());
        err_ = test::read_text(dir_.path / "err.txt");
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    }
    /// Writes a script of `actions` (JSON array text) and returns its name.
    std::string script(const std::string& name, const std::string& actions) {
        test::write_text(dir_.path / name, "{\"actions\": " + actions + "}");
        return name;
    }
    Json stats() { return read_json_file(dir_.path / "stats.json"); }

    fs::path app_;
    test::TempDir dir_{"edn_app_files"};
    std::string err_;
};

TEST_F(AppFiles, SceneFileSetsSettingsPinsGroundAndActions) {
    ASSERT_EQ(run("--scene beam.json --frames 6 --stats stats.json"), 0) << err_;
    const Json s = stats();
    EXPECT_EQ(s.at("finite"), true);
    EXPECT_EQ(s.at("pinned_vertices"), 9); // the z = 0 layer of 3 x 3 vertices
    EXPECT_EQ(s.at("components"), 2);      // the scene's cut at frame 3
    EXPECT_EQ(s.at("errors"), Json::array()) << s;
}

TEST_F(AppFiles, StateSavedMidRunResumesBitForBit) {
    // Run A saves at frames 4 and 7; run B loads A's frame-4 state and saves 3 frames later.
    ASSERT_EQ(run("--scene beam.json --frames 8 --script " +
                  script("a.json", R"([{"frame": 4, "save_state": "a4.edns"},
                                       {"frame": 7, "save_state": "a7.edns"}])")),
              0)
        << err_;
    ASSERT_EQ(run("--scene beam.node --frames 4 --stats stats.json --script " +
                  script("b.json", R"([{"frame": 0, "load_state": "a4.edns"},
                                       {"frame": 3, "save_state": "b3.edns"}])")),
              0)
        << err_;
    EXPECT_EQ(stats().at("components"), 2); // the cut mesh came with the state
    const std::string a7 = test::read_text(dir_.path / "a7.edns");
    ASSERT_FALSE(a7.empty());
    EXPECT_TRUE(a7 == test::read_text(dir_.path / "b3.edns"));
    // The same through --scene FILE.edns.
    ASSERT_EQ(run("--scene a4.edns --frames 4 --script " +
                  script("c.json", R"([{"frame": 3, "save_state": "c3.edns"}])")),
              0)
        << err_;
    EXPECT_TRUE(a7 == test::read_text(dir_.path / "c3.edns"));
}

TEST_F(AppFiles, SavedSceneLoadsBackAndFailedLoadsKeepTheScene) {
    ASSERT_EQ(run("--scene beam.json --frames 2 --script " +
                  script("save.json", R"([{"frame": 1, "save_scene": "saved.json"}])")),
              0)
        << err_;
    const Json saved = read_json_file(dir_.path / "saved.json");
    EXPECT_EQ(saved.at("material").at("E"), 3e5);
    EXPECT_EQ(saved.at("pins").at(0).at("vertices").size(), 9u);
    EXPECT_EQ(saved.at("ground").at("height"), -0.01);
    // The backend is the machine's and the frame budget the run's, not the scene's.
    EXPECT_FALSE(saved.contains("solver") && saved.at("solver").contains("backend")) << saved;
    ASSERT_EQ(run("--scene saved.json --frames 1 --stats stats.json"), 0) << err_;
    EXPECT_EQ(stats().at("pinned_vertices"), 9);
    // A missing and a foreign state file: one error each, the scene stays.
    test::write_text(dir_.path / "bogus.edns", "not a state");
    ASSERT_EQ(run("--scene beam.json --frames 2 --stats stats.json --script " +
                  script("bad.json", R"([{"frame": 0, "load_state": "none.edns"},
                                         {"frame": 1, "load_state": "bogus.edns"}])")),
              0)
        << err_;
    const Json s = stats();
    ASSERT_EQ(s.at("errors").size(), 2u) << s;
    EXPECT_NE(s.at("errors").at(1).get<std::string>().find("not an elastodyn state file"),
              std::string::npos);
    EXPECT_EQ(s.at("pinned_vertices"), 9);
    // A bad scene file on the command line: exit 3, one line naming file, line and key.
    test::write_text(dir_.path / "bad_scene.json",
                     "{\"version\": 1, \"mesh\": \"beam.node\",\n \"time\": {\"dt\": -1}}");
    EXPECT_EQ(run("--scene bad_scene.json --frames 1"), 3);
    EXPECT_NE(err_.find("bad_scene.json:2: time.dt:"), std::string::npos) << err_;
}

} // namespace
} // namespace edn
