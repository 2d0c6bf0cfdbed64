// `elastodyn-cli simulate --refine-sphere ... | --refine-uniform --refine-frame k` on a generated
// vertical beam pinned at its foot: run.json's "refinements" record (cell counts against the grid
// for uniform refinement, the final mesh's cell count), finite frames after the change, a cut
// and a refinement in the same frame, and one-line usage errors (exit 2, no output file).

#include "mesh/box_mesh.hpp"
#include "mesh/tetgen_io.hpp"
#include "support/cli.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace edn {
namespace {

namespace fs = std::filesystem;

using test::read_text;
using test::run_cli;

/// The refinement records of run.json (only the fields these tests read).
struct RefineRecord {
    long long frame = 0;
    std::string kind;
    long long cells_before = 0, cells_after = 0, new_vertices = 0;
    double min_dihedral_deg = 0;
};

std::vector<RefineRecord> read_refinements(const std::string& json) {
    std::vector<RefineRecord> records;
    const std::regex pattern(
        R"re(\{"frame":(\d+), "kind":"(\w+)", "cells_before":(\d+), "cells_after":(\d+), "new_vertices":(\d+), "min_dihedral_deg":([0-9.e+-]+), )re");
    for (auto it = std::sregex_iterator(json.begin(), json.end(), pattern);
         it != std::sregex_iterator(); ++it) {
        RefineRecord r;
        r.frame = std::stoll((*it)[1]);
        r.kind = (*it)[2];
        r.cells_before = std::stoll((*it)[3]);
        r.cells_after = std::stoll((*it)[4]);
        r.new_vertices = std::stoll((*it)[5]);
        r.min_dihedral_deg = std::stod((*it)[6]);
        records.push_back(r);
    }
    return records;
}

/// A top-level integer of run.json ("cells", "vertices").
long long top_level(const std::string& json, const std::string& key) {
    std::smatch m;
    const std::regex pattern("\n  \"" + key + "\": (\\d+)");
    if (!std::regex_search(json, m, pattern)) return -1;
    return std::stoll(m[1]);
}

class CliRefine : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = scratch_.path;
        // Vertical beam 0.4 x 0.4 x 2.4 of 2 x 2 x 12 cubes, 6 tets each: 288 cells.
        write_node_ele(dir_ / "beam.node", make_box_tet_mesh(2, 2, 12, {0, 0, 0}, {0.4, 0.4, 2.4}));
    }
    std::vector<std::string> simulate(std::vector<std::string> extra,
                                      const std::string& frames = "12") const {
        std::vector<std::string> a = {"simulate",    (dir_ / "beam.node").string(),
                                      "--frames",    frames,
                                      "--pin-below", "0.01",
                                      "--gravity",   "9.81",
                                      "--E",         "1e6",
                                      "--out",       (dir_ / "run.json").string()};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    std::string run_ok(const std::vector<std::string>& arguments) const {
        EXPECT_EQ(run_cli(dir_, arguments), 0) << read_text(dir_ / "stderr.txt");
        return read_text(dir_ / "run.json");
    }
    test::TempDir scratch_{"edn_cli_refine"};
    fs::path dir_;
};

TEST_F(CliRefine, SphereRefinementMidRun) {
    const std::string json =
        run_ok(simulate({"--refine-sphere", "0.2 0.2 1.2 0.25", "--refine-frame", "4"}));
    const std::vector<RefineRecord> r = read_refinements(json);
    ASSERT_EQ(r.size(), 1u) << json.substr(0, 3000);
    EXPECT_EQ(r[0].frame, 4);
    EXPECT_EQ(r[0].kind, "sphere");
    EXPECT_EQ(r[0].cells_before, 288);
    EXPECT_GT(r[0].cells_after, r[0].cells_before);
    EXPECT_LT(r[0].cells_after, 64 * 288);
    EXPECT_GT(r[0].new_vertices, 0);
    EXPECT_GT(r[0].min_dihedral_deg, 0);
    EXPECT_EQ(top_level(json, "cells"), r[0].cells_after);
    EXPECT_EQ(top_level(json, "vertices"), 3 * 3 * 13 + r[0].new_vertices);
    EXPECT_NE(json.find("\"finite\":true"), std::string::npos);
    EXPECT_NE(json.find("\"cuts\": []"), std::string::npos);
}

TEST_F(CliRefine, UniformRefinementAndCommaSeparatedDefaults) {
    std::string json = run_ok(simulate({"--refine-uniform"}, "3"));
    std::vector<RefineRecord> r = read_refinements(json);
    ASSERT_EQ(r.size(), 1u) << json.substr(0, 3000);
    EXPECT_EQ(r[0].frame, 0);
    EXPECT_EQ(r[0].kind, "uniform");
    EXPECT_EQ(r[0].cells_after, 8 * 288);
    // One new vertex per edge: the midpoints of the grid edges, of the one diagonal per square
    // face and of the one diagonal per cube are exactly the points of the twice-finer grid.
    EXPECT_EQ(3 * 3 * 13 + r[0].new_vertices, 5 * 5 * 25);
    EXPECT_NE(json.find("\"finite\":true"), std::string::npos);

    json = run_ok(simulate({"--refine-sphere", "0.2,0.2,2.4,0.3", "--refine-levels", "1"}, "2"));
    r = read_refinements(json);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].frame, 0);
    EXPECT_GT(r[0].cells_after, 288);

    json = run_ok(simulate({}, "2"));
    EXPECT_NE(json.find("\"refinements\": []"), std::string::npos) << json.substr(0, 3000);
}

TEST_F(CliRefine, CutThenRefineInTheSameFrame) {
    const std::string json =
        run_ok(simulate({"--cut-plane", "0.2 0.2 1.2 0 0 1", "--cut-frame", "3", "--refine-sphere",
                         "0.2 0.2 1.2 0.2", "--refine-frame", "3", "--refine-levels", "2"}));
    const std::vector<RefineRecord> r = read_refinements(json);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].frame, 3);
    // run.json lists records one per line (core/json.hpp JsonLayout::Lines).
    EXPECT_NE(json.find("\"cuts\": [\n    {\"frame\":3"), std::string::npos);
    EXPECT_NE(json.find("\"components\": 2"), std::string::npos);
    EXPECT_NE(json.find("\"finite\":true"), std::string::npos);
}

TEST_F(CliRefine, BadRefineOptionsAreOneLineUsageErrors) {
    const fs::path out = dir_ / "run.json";
    for (const std::vector<std::string>& extra :
         {std::vector<std::string>{"--refine-sphere", "1 2 3"},
          std::vector<std::string>{"--refine-sphere", "0 0 1 0"},
          std::vector<std::string>{"--refine-sphere", "0 0 1 -2"},
          std::vector<std::string>{"--refine-sphere", "0 0 x 1"},
          std::vector<std::string>{"--refine-sphere", "0 0 nan 1"},
          std::vector<std::string>{"--refine-sphere", "0 0 1 1 5"},
          std::vector<std::string>{"--refine-frame", "3"},
          std::vector<std::string>{"--refine-levels", "2"},
          std::vector<std::string>{"--refine-sphere", "0 0 1 1", "--refine-levels", "9"},
          std::vector<std::string>{"--refine-sphere", "0 0 1 1", "--refine-levels", "0"},
          std::vector<std::string>{"--refine-sphere", "0 0 1 1", "--refine-uniform"},
          std::vector<std::string>{"--refine-uniform", "--refine-frame", "13"}}) {
        EXPECT_EQ(run_cli(dir_, simulate(extra)), 2) << extra[0] << " " << extra[1];
        const std::string err = read_text(dir_ / "stderr.txt");
        EXPECT_NE(err.find("refine-"), std::string::npos) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
        EXPECT_FALSE(fs::exists(out));
    }
}

} // namespace
} // namespace edn
