// Cut mode's stroke in the headless app (app/cut_stroke.hpp, app_cut.cpp), driven by the script's
// stroke keys as the mouse would: a wavering stroke of several segments down the standing beam
// cuts piece by piece while it is held (several cuts, volume kept, more cells) and splits it
// into two halves; the whole stroke undoes as one step; a stroke ending over the beam leaves a
// crack; the plane tool cuts once, at release; cuts, prepared off the frame, land reproducibly in
// lockstep runs. Skipped when the app was not built.

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

namespace edn {
namespace {

namespace fs = std::filesystem;

/// A 160 x 120 headless view of the standing beam: the camera frames it, so the image's middle
/// column runs down its middle.
constexpr const char* kRun = "--headless --no-gui --width 160 --height 120 --backend cpu "
                             "--scene beam.node ";

/// A stroke down the image's middle column from row 2 to row `end`, wavering by 2 pixels, one
/// point every 8 rows and every frame from frame 2, released the frame after the last.
std::string stroke_actions(int end) {
    std::string actions;
    int frame = 2;
    for (int y = 2, i = 0; y <= end; y += 8, ++i, ++frame) {
        actions += ", {\"frame\": " + std::to_string(frame) + ", \"stroke\": [" +
                   std::to_string(i % 2 == 0 ? 79 : 81) + ", " + std::to_string(y) + "]}";
    }
    return actions + ", {\"frame\": " + std::to_string(frame) + ", \"stroke_release\": true}";
}

/// Frame of the release of stroke_actions(end).
int release_frame(int end) {
    return 2 + (end - 2) / 8 + 1;
}

class AppCutStroke : public ::testing::Test {
protected:
    void SetUp() override {
        app_ = edn::test::app_binary();
        if (app_.empty()) GTEST_SKIP() << "elastodyn app not built";
        // 0.5 x 0.5 x 2: 4 x 4 x 16 sub-cubes of 0.125 (425 vertices, 1536 cells); volume 0.5.
        write_node_ele(dir_.path / "beam.node",
                       make_box_tet_mesh(4, 4, 16, {0, 0, 0}, {0.5, 0.5, 2.0}));
    }
    /// Runs the app with `arguments` and the script of `actions` (JSON array text, after a stiff
    /// material at frame 0); returns the exit code.
    int run(const std::string& arguments, const std::string& actions) {
        test::write_text(dir_.path / "script.json",
                         R"({"actions": [{"frame": 0, "young": 1e7})" + actions + "]}");
        const std::string command = "cd '" + dir_.path.string() + "' && '" + app_.string() + "' " +
                                    kRun + arguments +
                                    " --script script.json --stats stats.json > out.txt 2> err.txt";
        const int status = std::system(command.c_str());
        err_ = test::read_text(dir_.path / "err.txt");
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    }
    Json stats() { return read_json_file(dir_.path / "stats.json"); }

    fs::path app_;
    test::TempDir dir_{"edn_app_cut_stroke"};
    std::string err_;
};

TEST_F(AppCutStroke, StrokeCutsAsItIsHeldAndSeversTheBeam) {
    // Down the whole beam: it splits lengthwise into two halves (each keeps pins at its foot).
    ASSERT_EQ(run("--frames 20", stroke_actions(118)), 0) << err_;
    const Json s = stats();
    EXPECT_EQ(s.at("finite"), true) << s;
    EXPECT_EQ(s.at("errors"), Json::array()) << s;
    EXPECT_EQ(s.at("components"), 2) << s;
    // Several pieces cut, each on its own frame while the stroke was held.
    const Json& cuts = s.at("cuts");
    ASSERT_GE(cuts.size(), 3u) << s;
    for (std::size_t i = 0; i < cuts.size(); ++i) {
        EXPECT_GT(cuts[i].at("cut_faces").get<int>(), 0) << cuts[i];
        EXPECT_GE(cuts[i].at("frame").get<int>(), 3) << cuts[i];
        EXPECT_LE(cuts[i].at("frame").get<int>(), release_frame(118)) << cuts[i];
        if (i > 0) {
            EXPECT_GT(cuts[i].at("frame").get<int>(), cuts[i - 1].at("frame").get<int>());
        }
    }
    EXPECT_EQ(s.at("undo_depth"), 1) << s; // the stroke is one step
    EXPECT_NEAR(s.at("volume").get<double>(), 0.5, 1e-12) << s;
    EXPECT_GT(s.at("cells").get<int>(), 1536) << s; // split, not only separated
}

TEST_F(AppCutStroke, WholeStrokeUndoesAsOneStep) {
    ASSERT_EQ(run("--frames 20", stroke_actions(118) + R"(, {"frame": 18, "undo": true})"), 0)
        << err_;
    const Json s = stats();
    EXPECT_EQ(s.at("components"), 1) << s;
    EXPECT_EQ(s.at("vertices"), 425) << s;
    EXPECT_EQ(s.at("cells"), 1536) << s;
    EXPECT_EQ(s.at("undos"), 1) << s;
    EXPECT_EQ(s.at("undo_depth"), 0) << s;
    EXPECT_GE(s.at("cuts").size(), 3u) << s;
}

TEST_F(AppCutStroke, StrokeEndingOverTheBeamLeavesACrack) {
    // From above the beam down to the image's middle: half way down the beam.
    ASSERT_EQ(run("--frames 14", stroke_actions(58)), 0) << err_;
    const Json s = stats();
    EXPECT_EQ(s.at("finite"), true) << s;
    EXPECT_EQ(s.at("components"), 1) << s;
    EXPECT_GE(s.at("cuts").size(), 2u) << s;
    EXPECT_GT(s.at("vertices").get<int>(), 425) << s;
    EXPECT_NEAR(s.at("volume").get<double>(), 0.5, 1e-12) << s;
}

TEST_F(AppCutStroke, PlaneToolCutsOnceAtRelease) {
    // Across the beam's middle: the plane through the stroke severs it, at the release only.
    ASSERT_EQ(run("--frames 8", R"(, {"frame": 1, "cut_tool": "plane"},
                                   {"frame": 2, "stroke": [2, 60]}, {"frame": 3, "stroke": [80, 61]},
                                   {"frame": 4, "stroke": [158, 60]},
                                   {"frame": 5, "stroke_release": true})"),
              0)
        << err_;
    const Json s = stats();
    EXPECT_EQ(s.at("components"), 2) << s;
    ASSERT_EQ(s.at("cuts").size(), 1u) << s;
    EXPECT_EQ(s.at("cuts")[0].at("frame"), 5) << s;
    EXPECT_EQ(s.at("undo_depth"), 1) << s;
}

TEST_F(AppCutStroke, CutsArePreparedOffTheFrameAndCommittedReproducibly) {
    // Lockstep runs (--frames, --script) wait for each preparation in the turn that asked for
    // it: two runs of the same script cut at the same frames and end in the same state (no
    // wall-clock Newton budget, whose stops would differ).
    const std::string actions =
        stroke_actions(118) +
        R"(, {"frame": 18, "cut": {"point": [0.25, 0.25, 1.5], "normal": [0.1, 0, 1]}})";
    ASSERT_EQ(run("--frames 22 --frame-budget-ms 0", actions), 0) << err_;
    const Json first = stats();
    ASSERT_EQ(run("--frames 22 --frame-budget-ms 0", actions), 0) << err_;
    const Json second = stats();
    const Json& cuts = first.at("cuts");
    ASSERT_GE(cuts.size(), 4u) << first;
    ASSERT_EQ(cuts.size(), second.at("cuts").size());
    for (std::size_t i = 0; i < cuts.size(); ++i) {
        // Both phases are timed: the preparation (off the frame) and the commit (in the turn).
        EXPECT_GT(cuts[i].at("prepare_ms").get<double>(), 0.0) << cuts[i];
        EXPECT_GE(cuts[i].at("commit_ms").get<double>(), 0.0) << cuts[i];
        EXPECT_EQ(cuts[i].at("frame"), second.at("cuts")[i].at("frame"));
        EXPECT_EQ(cuts[i].at("cells_after"), second.at("cuts")[i].at("cells_after"));
    }
    EXPECT_EQ(cuts.back().at("frame"), 18) << first; // the plane cut lands in its own frame
    for (const char* key : {"cells", "vertices", "components", "bbox", "max_displacement"})
        EXPECT_EQ(first.at(key), second.at(key)) << key;
    EXPECT_EQ(first.at("errors"), Json::array()) << first;
    EXPECT_GE(first.at("components").get<int>(), 3) << first;
}

TEST_F(AppCutStroke, OnTheSimulationThreadCutsAreCommittedInLaterTurns) {
    // The app as on a display: steps on their own thread, each cut prepared off the frame and
    // committed in a later turn. A plane cut, a stroke, and a second stroke pressed right after
    // the first's release (its last piece may still be pending: committed and shown first).
    // Timing decides the frames and the pieces, not what must hold.
    std::string second;
    for (int i = 0, x = 2; x <= 158; x += 12, ++i)
        second += ", {\"frame\": " + std::to_string(20 + i) + ", \"stroke\": [" +
                  std::to_string(x) + ", 30]}";
    second += R"(, {"frame": 34, "stroke_release": true})";
    ASSERT_EQ(run("--frames 120 --sim-thread",
                  R"(, {"frame": 1, "cut": {"point": [0.25, 0.25, 1.5], "normal": [0.1, 0, 1]}})" +
                      stroke_actions(118) + second),
              0)
        << err_;
    const Json s = stats();
    EXPECT_EQ(s.at("finite"), true) << s;
    EXPECT_EQ(s.at("errors"), Json::array()) << s;
    EXPECT_GE(s.at("cuts").size(), 3u) << s;
    EXPECT_GE(s.at("components").get<int>(), 3) << s;
    EXPECT_NEAR(s.at("volume").get<double>(), 0.5, 1e-12) << s;
    EXPECT_LE(s.at("undo_depth").get<int>(), 3) << s; // the plane cut and at most two strokes
    for (const Json& cut : s.at("cuts")) EXPECT_GT(cut.at("prepare_ms").get<double>(), 0.0);
}

} // namespace
} // namespace edn
