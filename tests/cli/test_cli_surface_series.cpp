// `elastodyn-cli simulate --surface-series DIR [--every K] [--surface-format obj|ply]`: the files
// written (frame numbers with --every, across a cut that changes the vertex count), read back
// with the project's OBJ and PLY readers and compared with the same run's --series frames (the
// simulation's node positions), usage errors, and nothing left behind by a failed run.

#include "mesh/box_mesh.hpp"
#include "mesh/obj_io.hpp"
#include "mesh/ply_io.hpp"
#include "mesh/tetgen_io.hpp"
#include "mesh/topology.hpp"
#include "mesh/vtu_io.hpp"
#include "support/cli.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <string>
#include <vector>

namespace edn {
namespace {

namespace fs = std::filesystem;

/// The boundary vertices (ascending) of the linear tets of a .vtu frame and its boundary faces.
struct VtuBoundary {
    std::vector<Index> vertices;
    std::size_t faces = 0;
};

VtuBoundary boundary_of(const VtuData& vtu) {
    std::vector<Cell> cells;
    for (std::size_t c = 0; c < vtu.offsets.size(); ++c) {
        const std::int64_t begin = c == 0 ? 0 : vtu.offsets[c - 1];
        // Linear tets (p = 1) only: the corner vertices are the first four of each cell.
        cells.push_back({static_cast<Index>(vtu.connectivity[begin]),
                         static_cast<Index>(vtu.connectivity[begin + 1]),
                         static_cast<Index>(vtu.connectivity[begin + 2]),
                         static_cast<Index>(vtu.connectivity[begin + 3])});
    }
    const Topology t = cpu::build_topology(cells, static_cast<Index>(vtu.points.size()));
    std::set<Index> used;
    for (const Tri& f : t.boundary_faces) used.insert(f.begin(), f.end());
    return {{used.begin(), used.end()}, t.boundary_faces.size()};
}

std::vector<std::string> listing(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
}

class CliSurfaceSeries : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = scratch_.path;
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
    /// Runs 6 frames with the cut before frame 3, writing the surface (every 2) and the .vtu
    /// series, and checks every surface file against the .vtu frame of the same number.
    void check_against_series(const std::string& format) {
        const fs::path surface = dir_ / "surface", series = dir_ / "series";
        const test::CliRun r =
            simulate("6", {"--surface-series", surface.string(), "--every", "2", "--surface-format",
                           format, "--series", series.string(), "--cut-plane", "0.2 0.2 1.2 0 0 1",
                           "--cut-frame", "3"});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const std::vector<std::string> want = {"frame_00000." + format, "frame_00002." + format,
                                               "frame_00004." + format, "frame_00006." + format};
        EXPECT_EQ(listing(surface), want);
        std::vector<std::size_t> counts;
        for (const int f : {0, 2, 4, 6}) {
            const std::string number = "frame_0000" + std::to_string(f);
            SCOPED_TRACE(number);
            const VtuData vtu = read_vtu(series / (number + ".vtu"));
            const VtuBoundary boundary = boundary_of(vtu);
            const fs::path file = surface / (number + "." + format);
            counts.push_back(boundary.vertices.size());
            if (format == "ply") {
                const SurfaceMesh s = read_ply_surface(file);
                ASSERT_EQ(s.positions.size(), boundary.vertices.size());
                EXPECT_EQ(s.triangles.size(), boundary.faces);
                for (std::size_t i = 0; i < s.positions.size(); ++i)
                    ASSERT_EQ(s.positions[i], vtu.points[boundary.vertices[i]]) << "vertex " << i;
            } else {
                SurfaceOrigin origin;
                const SurfaceMesh s = read_obj_surface(file, &origin);
                EXPECT_EQ(s.triangles.size(), boundary.faces);
                for (std::size_t i = 0; i < s.positions.size(); ++i) {
                    const auto k = static_cast<std::size_t>(origin.file_vertex[i]);
                    ASSERT_LT(k, boundary.vertices.size());
                    ASSERT_EQ(s.positions[i], vtu.points[boundary.vertices[k]]) << "vertex " << i;
                }
            }
        }
        EXPECT_EQ(counts[0], counts[1]);
        EXPECT_GT(counts[2], counts[1]) << "the cut before frame 3 duplicated surface vertices";
        EXPECT_EQ(counts[2], counts[3]);
    }
    test::TempDir scratch_{"edn_cli_surface"};
    fs::path dir_;
};

TEST_F(CliSurfaceSeries, ObjFramesAcrossACutHoldTheSimulationsPositions) {
    check_against_series("obj");
}

TEST_F(CliSurfaceSeries, PlyFramesAcrossACutHoldTheSimulationsPositions) {
    check_against_series("ply");
}

TEST_F(CliSurfaceSeries, UsageErrorsAndAFailedRunLeaveNothing) {
    const fs::path out = dir_ / "s";
    for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
             {"--surface-series", out.string(), "--surface-format", "stl"},
             {"--surface-format", "ply"},
             {"--surface-series", ""},
             {"--surface-series", out.string(), "--every", "0"}}) {
        const test::CliRun r = simulate("2", extra);
        EXPECT_EQ(r.exit_code, 2) << extra[0] << " " << extra[1] << ": " << r.err;
        EXPECT_FALSE(fs::exists(out));
    }
    {
        const test::CliRun r = simulate("2", {"--every", "2"});
        EXPECT_NE(r.err.find("'--every' needs '--series' or '--surface-series'"), std::string::npos)
            << r.err;
    }
    {
        std::ofstream(dir_ / "huge.node")
            << "4 3 0 0\n0 0 0 0\n1 1e90 0 0\n2 0 1e90 0\n3 0 0 1e90\n";
        std::ofstream(dir_ / "huge.ele") << "1 4 0\n0 0 1 2 3\n";
        const test::CliRun r =
            test::run_cli_captured(dir_, {"simulate", (dir_ / "huge.node").string(), "--frames",
                                          "3", "--rho", "1e38", "--surface-series", out.string()});
        EXPECT_EQ(r.exit_code, 4) << r.err;
        EXPECT_FALSE(fs::exists(out)) << "a failed run removes its frames and the directory";
    }
    {
        const test::CliRun r = test::run_cli_captured(dir_, {"simulate", "--help"});
        EXPECT_NE(r.out.find("--surface-series"), std::string::npos);
        EXPECT_NE(r.out.find("self-contained"), std::string::npos);
    }
}

} // namespace
} // namespace edn
