// `elastodyn-cli simulate --cut-plane ... --cut-frame k` on a generated vertical beam pinned at
// its foot: the cut separates it into two components and the free upper part falls (checked
// against free fall), the cut's counts against the grid (brute force), and usage errors.

#include "mesh/box_mesh.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/tetgen_io.hpp"
#include "mesh/vtu_io.hpp"
#include "support/cli.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace edn {
namespace {

namespace fs = std::filesystem;

using test::read_text;
using test::run_cli;

/// One frame record of run.json (only what these tests read).
struct FrameRecord {
    int components = 0;
    std::optional<double> free_min_z; ///< absent when the JSON holds null
};

std::vector<FrameRecord> read_frames(const std::string& json) {
    std::vector<FrameRecord> frames;
    const std::regex pattern(R"re("components":(\d+), "min_z":[^,]*, "free_min_z":([^,]*),)re");
    for (auto it = std::sregex_iterator(json.begin(), json.end(), pattern);
         it != std::sregex_iterator(); ++it) {
        FrameRecord r;
        r.components = std::stoi((*it)[1]);
        if ((*it)[2] != "null") r.free_min_z = std::stod((*it)[2]);
        frames.push_back(r);
    }
    return frames;
}

class CliCut : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = scratch_.path;
        // Vertical beam 0.4 x 0.4 x 2.4, cells of 0.2: the plane z = 1.2 is grid layer 6.
        write_node_ele(dir_ / "beam.node", make_box_tet_mesh(2, 2, 12, {0, 0, 0}, {0.4, 0.4, 2.4}));
    }
    std::vector<std::string> simulate(std::vector<std::string> extra,
                                      const std::string& frames = "40") const {
        std::vector<std::string> a = {"simulate",    (dir_ / "beam.node").string(),
                                      "--frames",    frames,
                                      "--pin-below", "0.01",
                                      "--gravity",   "9.81",
                                      "--E",         "1e7"};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    test::TempDir scratch_{"edn_cli_cut"};
    fs::path dir_;
};

TEST_F(CliCut, PlaneCutSeparatesPinnedBeamAndTheFreePartFalls) {
    const fs::path out = dir_ / "run.json";
    ASSERT_EQ(run_cli(dir_, simulate({"--cut-plane", "0.2 0.2 1.2 0 0 1", "--cut-frame", "5",
                                      "--out", out.string()})),
              0)
        << read_text(dir_ / "stderr.txt");
    const std::string json = read_text(out);
    const std::vector<FrameRecord> frames = read_frames(json);
    ASSERT_EQ(frames.size(), 40u);
    for (int f = 0; f < 5; ++f) {
        EXPECT_EQ(frames[f].components, 1) << "frame " << f;
        EXPECT_FALSE(frames[f].free_min_z) << "frame " << f; // everything hangs on the pins
    }
    for (int f = 5; f < 40; ++f) {
        EXPECT_EQ(frames[f].components, 2) << "frame " << f;
        ASSERT_TRUE(frames[f].free_min_z) << "frame " << f;
        if (f > 5) {
            EXPECT_LT(*frames[f].free_min_z, *frames[f - 1].free_min_z) << "frame " << f;
        }
    }
    // The free half starts near z = 1.2 and falls: over 34 frames free fall drops 0.5 g t^2;
    // backward Euler damps a little, so ask for 80% of it.
    const double t = 34.0 / 60.0;
    EXPECT_NEAR(*frames[5].free_min_z, 1.2, 0.05);
    EXPECT_LT(*frames[39].free_min_z, *frames[5].free_min_z - 0.8 * 0.5 * 9.81 * t * t);
    // Brute force for a cut along grid layer 6: its 3 x 3 vertices doubled, its 2 x 2 squares of
    // two triangles each separated.
    // (One record per line since run.json is written by core/json.hpp: whitespace around it.)
    const std::regex cut(
        R"re("cuts": \[\s*\{"frame":5, "cut_faces":8, "duplicated_vertices":9, "repattern_ms":[0-9.e+-]+, "mode":"split", "cells_before":([0-9]+), "cells_after":\1, "split_cells":0, "new_cells":0, "new_vertices":0, "snapped_vertices":[0-9]+, "components":2, "min_dihedral_deg_before":[0-9.e+-]+, "min_dihedral_deg_after":[0-9.e+-]+, "min_volume_before":[0-9.e+-]+, "min_volume_after":[0-9.e+-]+, "cut_ms":[0-9.e+-]+, "prepare_ms":[0-9.e+-]+, "commit_ms":[0-9.e+-]+, "hierarchy_ms":[0-9.e+-]+\}\s*\])re");
    EXPECT_TRUE(std::regex_search(json, cut)) << json.substr(0, 2000);
    EXPECT_NE(json.find("\"vertices\": 126"), std::string::npos); // 3*3*13 + 9
}

TEST_F(CliCut, CommaSeparatedPlaneAndCutBeforeTheFirstFrame) {
    const fs::path out = dir_ / "run.json";
    ASSERT_EQ(
        run_cli(dir_, simulate({"--cut-plane", "0.2,0.2,1.2,0,0,1", "--out", out.string()}, "3")),
        0)
        << read_text(dir_ / "stderr.txt");
    const std::vector<FrameRecord> frames = read_frames(read_text(out));
    ASSERT_EQ(frames.size(), 3u);
    for (const FrameRecord& f : frames) EXPECT_EQ(f.components, 2);
}

TEST_F(CliCut, BadCutOptionsAreUsageErrors) {
    const fs::path out = dir_ / "run.json";
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{"--cut-plane", "1 2 3"},
          std::vector<std::string>{"--cut-plane", "0 0 1 0 0 0"},
          std::vector<std::string>{"--cut-plane", "0 0 1 0 0 x"},
          std::vector<std::string>{"--cut-frame", "3"},
          std::vector<std::string>{"--cut-plane", "0 0 1 0 0 1", "--cut-frame", "41"}}) {
        std::vector<std::string> with_out = extra;
        with_out.insert(with_out.end(), {"--out", out.string()});
        EXPECT_EQ(run_cli(dir_, simulate(with_out)), 2) << extra[0] << " " << extra[1];
        const std::string err = read_text(dir_ / "stderr.txt");
        EXPECT_NE(err.find("cut-"), std::string::npos) << err;
        EXPECT_FALSE(fs::exists(out));
    }
}

TEST_F(CliCut, TwoLevelPreconditionerOptionAtOrderTwo) {
    // (The beam fixture serves any simulate test.) The option is recorded in run.json, a cut
    // rebuilds its coarse space with the new mesh, and a bad name is a usage error.
    const fs::path out = dir_ / "run.json";
    ASSERT_EQ(
        run_cli(dir_, simulate({"--order", "2", "--preconditioner", "two_level", "--cut-plane",
                                "0.2 0.2 1.2 0 0 1", "--cut-frame", "2", "--out", out.string()},
                               "4")),
        0)
        << read_text(dir_ / "stderr.txt");
    const std::string json = read_text(out);
    EXPECT_NE(json.find("\"preconditioner\":\"two_level\""), std::string::npos)
        << json.substr(0, 1500);
    // the summation setting (auto) and the method it resolved to (per-entry on the CPU)
    EXPECT_NE(json.find("\"summation\":\"auto\""), std::string::npos);
    EXPECT_NE(json.find("\"summation_in_use\":\"per_entry\""), std::string::npos);
    // the CPU's products read the matrix
    EXPECT_NE(json.find("\"products\":\"matrix\""), std::string::npos);
    const std::vector<FrameRecord> frames = read_frames(json);
    ASSERT_EQ(frames.size(), 4u);
    EXPECT_EQ(frames[3].components, 2);
    // multigrid: the hierarchy of the cut mesh is built for the new pattern
    ASSERT_EQ(
        run_cli(dir_, simulate({"--order", "2", "--preconditioner", "multigrid", "--cut-plane",
                                "0.2 0.2 1.2 0 0 1", "--cut-frame", "2", "--out", out.string()},
                               "4")),
        0)
        << read_text(dir_ / "stderr.txt");
    const std::string mg = read_text(out);
    EXPECT_NE(mg.find("\"preconditioner\":\"multigrid\""), std::string::npos);
    EXPECT_EQ(read_frames(mg).size(), 4u);
    EXPECT_EQ(run_cli(dir_, simulate({"--preconditioner", "magic", "--out", out.string()}, "2")),
              2);
    EXPECT_NE(read_text(dir_ / "stderr.txt").find("preconditioner"), std::string::npos);
}

TEST_F(CliCut, CutModeSplitsCellsOrOpensFaces) {
    // z = 1.25 is a quarter of a cell above layer 6: the split cut splits the cells it crosses,
    // the face cut opens existing faces.
    const fs::path out = dir_ / "run.json";
    for (const std::string mode : {"split", "faces"}) {
        ASSERT_EQ(run_cli(dir_, simulate({"--cut-plane", "0.2 0.2 1.25 0 0 1", "--cut-mode", mode,
                                          "--out", out.string()},
                                         "2")),
                  0)
            << read_text(dir_ / "stderr.txt");
        const std::string json = read_text(out);
        EXPECT_NE(json.find("\"mode\":\"" + mode + "\""), std::string::npos) << json;
        const std::regex split_cells(R"re("split_cells":([0-9]+))re");
        std::smatch m;
        ASSERT_TRUE(std::regex_search(json, m, split_cells)) << json;
        if (mode == "split")
            EXPECT_EQ(std::stoi(m[1]), 2 * 2 * 6); // the 4 hexahedra of the layer, 6 tets each
        else
            EXPECT_EQ(std::stoi(m[1]), 0);
        for (const FrameRecord& f : read_frames(json)) EXPECT_EQ(f.components, 2);
    }
    EXPECT_EQ(run_cli(dir_, simulate({"--cut-plane", "0 0 1 0 0 1", "--cut-mode", "jagged"})), 2);
    EXPECT_NE(read_text(dir_ / "stderr.txt").find("cut mode"), std::string::npos);
    EXPECT_EQ(run_cli(dir_, simulate({"--cut-mode", "split"})), 2);
}

TEST_F(CliCut, CutCommandWritesTheCutMeshAndItsQualityReport) {
    const fs::path node = dir_ / "cut.node";
    const test::CliRun r =
        test::run_cli_captured(dir_, {"cut", (dir_ / "beam.node").string(), "--plane",
                                      "0.2 0.2 1.25 0.1 0.05 1", node.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const char* key :
         {"\"cells_before\":288", "\"components\":2",
          "\"min_dihedral_deg_before\":", "\"min_dihedral_deg_after\":", "\"min_volume_before\":",
          "\"min_volume_after\":", "\"new_cells\":", "\"split_cells\":"})
        EXPECT_NE(r.out.find(key), std::string::npos) << key << " in " << r.out;
    EXPECT_NE(r.err.find("worst dihedral"), std::string::npos) << r.err;
    TetMesh cut = read_node_ele(node);
    const TetMeshValidation v = validate_tet_mesh(cut, "cut.node");
    EXPECT_EQ(v.components, 2);
    EXPECT_EQ(v.reoriented_cells, 0);
    EXPECT_GT(cut.num_cells(), 288);
    EXPECT_NEAR(total_volume(cut), 0.4 * 0.4 * 2.4, 1e-12);

    // A partial cut (a crack) to .vtu, and the face cut.
    const fs::path vtu = dir_ / "crack.vtu";
    const test::CliRun crack = test::run_cli_captured(
        dir_, {"cut", (dir_ / "beam.node").string(), "--plane", "0 0 1.25 0 0 1", "--radius", "0.3",
               "--center", "0 0 1.3", vtu.string()});
    ASSERT_EQ(crack.exit_code, 0) << crack.err;
    EXPECT_NE(crack.out.find("\"components\":1"), std::string::npos) << crack.out;
    EXPECT_GT(read_vtu(vtu).types.size(), 288u);
    const test::CliRun faces =
        test::run_cli_captured(dir_, {"cut", (dir_ / "beam.node").string(), "--plane",
                                      "0 0 1.25 0 0 1", "--mode", "faces", node.string()});
    ASSERT_EQ(faces.exit_code, 0) << faces.err;
    EXPECT_NE(faces.out.find("\"cells_after\":288"), std::string::npos) << faces.out;

    // Usage errors.
    for (const std::vector<std::string>& bad : {std::vector<std::string>{"--plane", "0 0 1"},
                                                {"--plane", "0 0 1 0 0 0"},
                                                {"--plane", "0 0 1 0 0 1", "--center", "0 0 1"},
                                                {"--plane", "0 0 1 0 0 1", "--mode", "x"},
                                                {"--radius", "1"}}) {
        std::vector<std::string> a = {"cut", (dir_ / "beam.node").string()};
        a.insert(a.end(), bad.begin(), bad.end());
        a.push_back((dir_ / "bad.node").string());
        EXPECT_EQ(run_cli(dir_, a), 2) << bad[0] << " " << bad[1];
        EXPECT_FALSE(fs::exists(dir_ / "bad.node"));
    }
}

} // namespace
} // namespace edn
