// Animation outputs (sim/frame_series.hpp, sim/frame_snapshot.hpp) driven in-process: the surface
// sequence's files read back (OBJ with the project's reader, PLY with its reader) hold exactly
// the simulation's boundary vertex positions at that frame, across a cut that changes the vertex
// count; --every; the .vtu series agrees; an uncommitted series removes what it wrote.

#include "core/error.hpp"
#include "mesh/cut.hpp"
#include "mesh/obj_io.hpp"
#include "mesh/ply_io.hpp"
#include "mesh/topology.hpp"
#include "sim/frame_series.hpp"
#include "sim/simulation.hpp"
#include "support/files.hpp"
#include "support/mesh_fixtures.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <set>

namespace edn {
namespace {

namespace fs = std::filesystem;

SimulationSettings beam_settings(int order) {
    SimulationSettings s;
    s.order = order;
    s.young = 2e4;
    s.gravity = {1.0, 0.0, -9.81};
    return s;
}

/// The positions of the vertices the boundary faces of `sim` use, by mesh vertex.
std::vector<std::pair<Index, Vec3>> boundary_vertices(const Simulation& sim) {
    const Topology topology = build_topology(sim.mesh());
    std::set<Index> used;
    for (const Tri& t : topology.boundary_faces) used.insert(t.begin(), t.end());
    const std::vector<double> x = sim.positions();
    std::vector<std::pair<Index, Vec3>> result;
    for (Index v : used) result.push_back({v, {x[3 * v], x[3 * v + 1], x[3 * v + 2]}});
    return result;
}

/// Volume enclosed by a closed, outward oriented triangle surface (divergence theorem).
double enclosed_volume(const SurfaceMesh& s) {
    double six_v = 0;
    for (const Tri& t : s.triangles) {
        const Vec3 &a = s.positions[t[0]], &b = s.positions[t[1]], &c = s.positions[t[2]];
        six_v += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                 a[2] * (b[0] * c[1] - b[1] * c[0]);
    }
    return six_v / 6;
}

class FrameSeries : public ::testing::TestWithParam<std::tuple<int, SurfaceFormat>> {};

TEST_P(FrameSeries, SurfaceFilesHoldTheSimulationsBoundaryAcrossACut) {
    const auto [order, format] = GetParam();
    test::TempDir dir("edn_frame_series");
    Simulation sim(test::make_box_mesh(2, 2, 4, 1.0, 1.0, 2.0), beam_settings(order));
    sim.pin_below(0.01);
    const fs::path out = dir.path / "surface";
    SurfaceSeries series(out, 2, format);
    VtuSeries vtu(dir.path / "vtu", 1);
    // Frames 0..6, the cut before frame 3: files 0, 2, 4, 6.
    std::vector<std::vector<std::pair<Index, Vec3>>> expected(7);
    std::vector<std::size_t> boundary_faces(7);
    for (long long f = 0; f <= 6; ++f) {
        if (f == 3) {
            CutPlane plane;
            plane.point = {0.5, 0.5, 1.05};
            plane.normal = {0.0, 0.0, 1.0};
            sim.cut(plane);
        }
        const FrameSnapshot snapshot = take_snapshot(sim);
        series.record(f, snapshot);
        vtu.record(f, 0.5 * static_cast<double>(f), snapshot);
        expected[f] = boundary_vertices(sim);
        boundary_faces[f] = build_topology(sim.mesh()).boundary_faces.size();
        if (f < 6) sim.step();
    }
    series.commit();
    vtu.commit();
    EXPECT_EQ(series.frames(), 4u);
    EXPECT_EQ(vtu.frames(), 7u);
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(out)) ++files;
    EXPECT_EQ(files, 4u) << "frames 0, 2, 4, 6 only";
    EXPECT_GT(expected[4].size(), expected[2].size()) << "the cut duplicated boundary vertices";
    for (long long f = 0; f <= 6; f += 2) {
        const fs::path path = out / SurfaceSeries::frame_file_name(f, format);
        ASSERT_TRUE(fs::exists(path)) << path;
        SCOPED_TRACE(path.string());
        const std::vector<std::pair<Index, Vec3>>& want = expected[f];
        if (format == SurfaceFormat::Ply) {
            // Binary: every vertex as written, in ascending mesh vertex order.
            const SurfaceMesh back = read_ply_surface(path);
            ASSERT_EQ(back.positions.size(), want.size());
            for (std::size_t i = 0; i < want.size(); ++i)
                EXPECT_EQ(back.positions[i], want[i].second) << "surface vertex " << i;
            EXPECT_EQ(back.triangles.size(), boundary_faces[f]);
            EXPECT_GT(enclosed_volume(back), 0.0) << "outward triangles";
        } else {
            // The OBJ reader welds coincident vertices (the two sides of a fresh cut), so map
            // each read vertex to the file vertex it came from.
            SurfaceOrigin origin;
            const SurfaceMesh back = read_obj_surface(path, &origin);
            EXPECT_EQ(back.triangles.size(), boundary_faces[f]);
            for (std::size_t i = 0; i < back.positions.size(); ++i) {
                const std::size_t file_vertex = static_cast<std::size_t>(origin.file_vertex[i]);
                ASSERT_LT(file_vertex, want.size());
                EXPECT_EQ(back.positions[i], want[file_vertex].second) << "vertex " << i;
            }
            EXPECT_GT(enclosed_volume(back), 0.0) << "outward triangles";
            // Every written vertex line is one of them (welding changes none of the values).
            const std::string text = test::read_text(path);
            EXPECT_EQ(static_cast<std::size_t>(std::count(text.begin(), text.end(), 'v')),
                      want.size() + 1)
                << "one 'v' line per boundary vertex (+ the header's 'vertices')";
        }
        // The .vtu of the same frame has the same positions at those vertex nodes.
        const VtuData data = read_vtu(dir.path / "vtu" / VtuSeries::frame_file_name(f));
        for (const auto& [v, p] : want) EXPECT_EQ(data.points[static_cast<std::size_t>(v)], p);
    }
}

INSTANTIATE_TEST_SUITE_P(OrdersAndFormats, FrameSeries,
                         ::testing::Values(std::tuple{1, SurfaceFormat::Obj},
                                           std::tuple{1, SurfaceFormat::Ply},
                                           std::tuple{2, SurfaceFormat::Obj}));

TEST(FrameSeriesDirectory, UncommittedSeriesRemoveTheirFilesAndTheDirectoryTheyMade) {
    test::TempDir dir("edn_frame_series");
    Simulation sim(test::make_box_mesh(1, 1, 1, 1.0, 1.0, 1.0), beam_settings(1));
    test::write_text(dir.path / "old", "");
    fs::create_directories(dir.path / "kept");
    test::write_text(dir.path / "kept" / "notes.txt", "mine");
    {
        SurfaceSeries made(dir.path / "made" / "deep", 1, SurfaceFormat::Ply);
        VtuSeries kept(dir.path / "kept", 1);
        made.record(0, sim);
        kept.record(0, 0.0, sim);
        EXPECT_TRUE(fs::exists(dir.path / "made" / "deep" / "frame_00000.ply"));
        EXPECT_TRUE(fs::exists(dir.path / "kept" / "series.pvd"));
    }
    EXPECT_FALSE(fs::exists(dir.path / "made" / "deep"));
    EXPECT_FALSE(fs::exists(dir.path / "kept" / "frame_00000.vtu"));
    EXPECT_FALSE(fs::exists(dir.path / "kept" / "series.pvd"));
    EXPECT_EQ(test::read_text(dir.path / "kept" / "notes.txt"), "mine") << "not ours: kept";
    EXPECT_THROW(SurfaceSeries s(dir.path / "old", 1, SurfaceFormat::Obj), Error)
        << "a file is not a directory";
    EXPECT_EQ(parse_surface_format("ply"), SurfaceFormat::Ply);
    EXPECT_EQ(parse_surface_format("obj"), SurfaceFormat::Obj);
    EXPECT_FALSE(parse_surface_format("stl"));
}

} // namespace
} // namespace edn
