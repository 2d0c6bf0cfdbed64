// Animation outputs (sim/frame_series.hpp, sim/frame_snapshot.hpp) driven in-process: the surface
// sequence's files read back (OBJ with the project's reader, PLY with its reader) hold exactly
// the simulation's boundary vertex positions at that frame, across a cut that changes the vertex
// count; --every; the .vtu series agrees; at p = 2 the faces are tessellated through their edge
// nodes, watertight; an uncommitted series removes what it wrote.

#include "core/error.hpp"
#include "fem/lagrange_tet.hpp"
#include "mesh/cut.hpp"
#include "mesh/obj_io.hpp"
#include "mesh/ply_io.hpp"
#include "mesh/topology.hpp"
#include "sim/frame_series.hpp"
#include "sim/simulation.hpp"
#include "support/files.hpp"
#include "support/mesh_fixtures.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <map>
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
                                           std::tuple{1, SurfaceFormat::Ply}));

TEST(CurvedSurfaceSeries, QuadraticFacesAreTessellatedThroughTheirEdgeNodesWatertight) {
    test::TempDir dir("edn_frame_series");
    Simulation sim(test::make_box_mesh(2, 2, 4, 1.0, 1.0, 2.0), beam_settings(2));
    // A curved state: every node moved by a smooth non-affine field.
    std::vector<double> x = sim.rest_positions();
    for (std::size_t i = 0; i < x.size(); i += 3) {
        x[i] += 0.1 * std::sin(2.0 * x[i + 2]);
        x[i + 2] += 0.05 * x[i] * x[i + 1];
    }
    sim.set_state(x, std::vector<double>(x.size(), 0.0));
    SurfaceSeries series(dir.path / "s", 1, SurfaceFormat::Ply);
    series.record(0, sim);
    series.commit();
    const SurfaceMesh s = read_ply_surface(dir.path / "s" / "frame_00000.ply");
    const Topology topology = build_topology(sim.mesh());
    constexpr int n = 4; // default_surface_subdivisions(2)
    EXPECT_EQ(default_surface_subdivisions(2), n);
    EXPECT_EQ(s.triangles.size(), topology.boundary_faces.size() * n * n);
    // The corners first: the boundary vertices in ascending order, bit for bit.
    const std::vector<std::pair<Index, Vec3>> corners = boundary_vertices(sim);
    for (std::size_t i = 0; i < corners.size(); ++i)
        EXPECT_EQ(s.positions[i], corners[i].second) << "corner " << i;
    // Every node on a boundary edge is a surface point (the lattice point at the edge's middle).
    std::set<Vec3> points(s.positions.begin(), s.positions.end());
    std::size_t edge_nodes = 0;
    for (std::size_t f = 0; f < topology.boundary_faces.size(); ++f) {
        const Index c = topology.boundary_face_cell[f];
        const Cell& cell = sim.mesh().cells[static_cast<std::size_t>(c)];
        const Tri& face = topology.boundary_faces[f];
        for (int e = 0; e < 6; ++e) {
            const Index a = cell[tet_edge_vertex(e, 0)], b = cell[tet_edge_vertex(e, 1)];
            if (std::count(face.begin(), face.end(), a) == 0 ||
                std::count(face.begin(), face.end(), b) == 0)
                continue;
            const Index node = sim.cell_nodes()[static_cast<std::size_t>(c) * 10 + 4 + e];
            const Vec3 p = {x[3 * node], x[3 * node + 1], x[3 * node + 2]};
            EXPECT_TRUE(points.count(p)) << "edge node " << node;
            ++edge_nodes;
        }
    }
    EXPECT_GT(edge_nodes, 0u);
    // Watertight and outward: every edge in two triangles, and a positive enclosed volume near
    // the box's (the field moves it by a little).
    std::map<std::pair<Index, Index>, int> edges;
    for (const Tri& t : s.triangles)
        for (int k = 0; k < 3; ++k) ++edges[std::minmax(t[k], t[(k + 1) % 3])];
    for (const auto& [edge, uses] : edges) ASSERT_EQ(uses, 2) << edge.first << "-" << edge.second;
    EXPECT_NEAR(enclosed_volume(s), 2.0, 0.2);
    // Corners are exact, the rest of the surface curves: more points than the flat boundary.
    EXPECT_GT(s.positions.size(), corners.size());
}

TEST(CurvedSurfaceSeries, CubicFacesAreWatertightAndEncloseTheAffinelyMovedVolume) {
    test::TempDir dir("edn_frame_series");
    Simulation sim(test::make_box_mesh(1, 1, 2, 1.0, 1.0, 2.0), beam_settings(3));
    // An affine motion keeps every face flat: the tessellation encloses det(A) times the volume.
    std::vector<double> x = sim.rest_positions();
    for (std::size_t i = 0; i < x.size(); i += 3) {
        const double px = x[i], py = x[i + 1], pz = x[i + 2];
        x[i] = 1.5 * px + 0.2 * py + 0.3;
        x[i + 1] = 0.1 * px + py - 0.2 * pz;
        x[i + 2] = 0.8 * pz + 1.0;
    }
    sim.set_state(x, std::vector<double>(x.size(), 0.0));
    const double det = 1.5 * (1.0 * 0.8) - 0.2 * (0.1 * 0.8);
    SurfaceSeries series(dir.path / "s", 1, SurfaceFormat::Ply);
    series.record(0, sim);
    series.commit();
    const SurfaceMesh s = read_ply_surface(dir.path / "s" / "frame_00000.ply");
    EXPECT_EQ(s.triangles.size(), build_topology(sim.mesh()).boundary_faces.size() * 36);
    std::map<std::pair<Index, Index>, int> edges;
    for (const Tri& t : s.triangles)
        for (int k = 0; k < 3; ++k) ++edges[std::minmax(t[k], t[(k + 1) % 3])];
    for (const auto& [edge, uses] : edges) ASSERT_EQ(uses, 2) << edge.first << "-" << edge.second;
    EXPECT_NEAR(enclosed_volume(s), det * 2.0, 1e-12);
}

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
