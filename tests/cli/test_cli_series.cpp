// `elastodyn-cli simulate --series DIR [--every K]`: the frames written and the .pvd index that
// lists them, the files' structure and arrays, a cut mid-run (the point count changes between
// frames), usage errors, and no series left behind by a failed run.

#include "mesh/box_mesh.hpp"
#include "mesh/tetgen_io.hpp"
#include "mesh/vtu_io.hpp"
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

/// The beam's vertices: a 2 x 2 x 12 grid of cells has 3 x 3 x 13 vertices.
constexpr int kBeamVertices = 3 * 3 * 13;

/// One <DataSet> of a .pvd.
struct DataSet {
    double time = 0;
    std::string file;
};

std::vector<DataSet> read_pvd(const std::string& text) {
    std::vector<DataSet> sets;
    const std::regex pattern(R"re(<DataSet timestep="([^"]+)"[^>]*file="([^"]+)"/>)re");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern);
         it != std::sregex_iterator(); ++it)
        sets.push_back({std::stod((*it)[1]), (*it)[2]});
    return sets;
}

/// Occurrences of `needle` in `text`.
std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + needle.size()))
        ++n;
    return n;
}

/// The values of field `name` (empty when absent).
std::vector<double> field(const std::vector<VtuField>& fields, const std::string& name) {
    for (const VtuField& f : fields)
        if (f.name == name) return f.values;
    return {};
}

/// The points of a series frame, read back with read_vtu after checking the outline of its XML
/// part (-1 when malformed).
long points_of(const fs::path& path) {
    const std::string text = read_text(path);
    const std::string xml = text.substr(0, text.find("<AppendedData encoding=\"raw\">"));
    if (xml.size() == text.size() || xml.rfind("<?xml", 0) != 0 ||
        xml.find("<VTKFile type=\"UnstructuredGrid\"") == std::string::npos ||
        xml.find("</UnstructuredGrid>") == std::string::npos ||
        count(xml, "<DataArray") != count(xml, "format=\"appended\"") ||
        !text.ends_with("</AppendedData>\n</VTKFile>\n"))
        return -1;
    return static_cast<long>(read_vtu(path).points.size());
}

class CliSeries : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = scratch_.path;
        // Vertical beam 0.4 x 0.4 x 2.4, cells of 0.2, pinned at its foot (9 vertices).
        write_node_ele(dir_ / "beam.node", make_box_tet_mesh(2, 2, 12, {0, 0, 0}, {0.4, 0.4, 2.4}));
    }
    test::CliRun simulate(const std::string& frames, std::vector<std::string> extra) const {
        std::vector<std::string> a = {"simulate",    (dir_ / "beam.node").string(),
                                      "--frames",    frames,
                                      "--dt",        "0.01",
                                      "--pin-below", "0.01",
                                      "--E",         "1e6"};
        a.insert(a.end(), extra.begin(), extra.end());
        return test::run_cli_captured(dir_, a);
    }
    std::vector<std::string> listing(const fs::path& dir) const {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
        std::sort(names.begin(), names.end());
        return names;
    }
    test::TempDir scratch_{"edn_cli_series"};
    fs::path dir_;
};

TEST_F(CliSeries, EveryOtherOfFiveFramesWritesFramesZeroTwoFourAndTheirIndex) {
    const fs::path out = dir_ / "new" / "series"; // created, parents too
    const test::CliRun r = simulate("5", {"--series", out.string(), "--every", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(listing(out), (std::vector<std::string>{"frame_00000.vtu", "frame_00002.vtu",
                                                      "frame_00004.vtu", "series.pvd"}));
    const std::string pvd = read_text(out / "series.pvd");
    EXPECT_NE(pvd.find("<VTKFile type=\"Collection\""), std::string::npos);
    EXPECT_NE(pvd.find("</Collection>"), std::string::npos);
    const std::vector<DataSet> sets = read_pvd(pvd);
    ASSERT_EQ(sets.size(), 3u) << pvd;
    for (int k = 0; k < 3; ++k) {
        EXPECT_DOUBLE_EQ(sets[k].time, 2 * k * 0.01);
        EXPECT_EQ(sets[k].file, "frame_0000" + std::to_string(2 * k) + ".vtu");
    }
    for (int k = 0; k < 3; ++k) {
        ASSERT_EQ(points_of(out / sets[k].file), kBeamVertices) << sets[k].file;
        const VtuData vtu = read_vtu(out / sets[k].file);
        const std::vector<double> u = field(vtu.point_fields, "displacement");
        const std::vector<double> v = field(vtu.point_fields, "velocity");
        const std::vector<double> pinned = field(vtu.point_fields, "pinned");
        const std::vector<double> stress = field(vtu.cell_fields, "von_mises");
        EXPECT_EQ(vtu.types, std::vector<std::uint8_t>(2 * 2 * 12 * 6, 10)) << "VTK_TETRA";
        ASSERT_EQ(u.size(), 3u * kBeamVertices);
        ASSERT_EQ(v.size(), 3u * kBeamVertices);
        ASSERT_EQ(pinned.size(), static_cast<std::size_t>(kBeamVertices));
        EXPECT_EQ(stress.size(), 2u * 2 * 12 * 6) << "one value per cell (6 tets per cube)";
        EXPECT_EQ(std::count(pinned.begin(), pinned.end(), 1.0), 9) << "the foot's vertices";
        double largest_u = 0, largest_v = 0;
        for (double x : u) largest_u = std::max(largest_u, std::abs(x));
        for (double x : v) largest_v = std::max(largest_v, std::abs(x));
        if (k == 0) {
            EXPECT_EQ(largest_u, 0.0) << "frame 0 is the initial state";
            EXPECT_EQ(largest_v, 0.0);
        } else {
            EXPECT_GT(largest_u, 0.0) << "gravity moved the beam by frame " << 2 * k;
            EXPECT_GT(largest_v, 0.0);
        }
    }
}

TEST_F(CliSeries, ACutMidRunChangesThePointCountBetweenFrames) {
    const fs::path out = dir_ / "cut";
    const test::CliRun r = simulate("4", {"--series", out.string(), "--cut-plane",
                                          "0.2 0.2 1.2 0 0 1", "--cut-frame", "2", "--order", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::vector<DataSet> sets = read_pvd(read_text(out / "series.pvd"));
    ASSERT_EQ(sets.size(), 5u);
    std::vector<long> points;
    for (const DataSet& set : sets) {
        points.push_back(points_of(out / set.file));
        ASSERT_GT(points.back(), kBeamVertices) << set.file << ": p = 2 writes every node";
        for (std::uint8_t type : read_vtu(out / set.file).types)
            ASSERT_EQ(type, 24) << set.file << ": VTK_QUADRATIC_TETRA";
    }
    // Frame K holds the topology changes requested before frame K.
    EXPECT_EQ(points[0], points[1]);
    EXPECT_GT(points[2], points[1]) << "the cut duplicates the nodes on the plane";
    EXPECT_EQ(points[2], points[3]);
    EXPECT_EQ(points[3], points[4]);
}

TEST_F(CliSeries, UsageErrorsAndAFailedRunLeaveNoSeries) {
    const fs::path out = dir_ / "s";
    for (const std::string bad : {"0", "-1", "1.5", "two", ""}) {
        const test::CliRun r = simulate("2", {"--series", out.string(), "--every", bad});
        EXPECT_EQ(r.exit_code, 2) << "--every '" << bad << "': " << r.err;
        EXPECT_FALSE(fs::exists(out)) << "--every '" << bad << "'";
    }
    {
        const test::CliRun r = simulate("2", {"--every", "2"});
        EXPECT_EQ(r.exit_code, 2);
        EXPECT_NE(r.err.find("'--every' needs '--series'"), std::string::npos) << r.err;
    }
    {
        test::write_text(out, "not a directory");
        const test::CliRun r = simulate("2", {"--series", out.string()});
        EXPECT_EQ(r.exit_code, 2) << r.err;
        EXPECT_NE(r.err.find("is not a directory"), std::string::npos) << r.err;
        EXPECT_EQ(read_text(out), "not a directory");
        fs::remove(out);
    }
    {
        // A directory under a file cannot be created: an I/O error before the run.
        test::write_text(dir_ / "file", "x");
        const test::CliRun r = simulate("2", {"--series", (dir_ / "file" / "s").string()});
        EXPECT_EQ(r.exit_code, 3) << r.err;
    }
    {
        // A run that fails at frame 0 (overflow) removes the directory it created.
        std::ofstream(dir_ / "huge.node")
            << "4 3 0 0\n0 0 0 0\n1 1e90 0 0\n2 0 1e90 0\n3 0 0 1e90\n";
        std::ofstream(dir_ / "huge.ele") << "1 4 0\n0 0 1 2 3\n";
        const test::CliRun r =
            test::run_cli_captured(dir_, {"simulate", (dir_ / "huge.node").string(), "--frames",
                                          "3", "--rho", "1e38", "--series", out.string()});
        EXPECT_EQ(r.exit_code, 4) << r.err;
        EXPECT_FALSE(fs::exists(out));
    }
}

} // namespace
} // namespace edn
