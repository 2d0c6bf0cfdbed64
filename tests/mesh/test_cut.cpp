// Plane cuts by vertex duplication: checked against brute-force references (face counts from
// sorted vertex triples, the side of every cell recomputed here, all node pairs sharing a cell
// for the Bin-BCSR* pattern), on perturbed boxes and a TetGen-meshed sphere.

#include "core/error.hpp"
#include "mesh/cut.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sparse/bin_bcsr_pattern.hpp"
#include "support/files.hpp"
#include "support/mesh_fixtures.hpp"
#include "support/pattern_check.hpp"
#include "support/random.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <map>
#include <random>
#include <set>

namespace edn {
namespace {

using FaceKey = std::array<Index, 3>;
using test::random_unit;

FaceKey sorted_face(Index a, Index b, Index c) {
    FaceKey f = {a, b, c};
    std::sort(f.begin(), f.end());
    return f;
}

/// Brute force: every face (sorted triple) of every cell -> the cells holding it.
std::map<FaceKey, std::vector<Index>> face_cells_brute(const TetMesh& mesh) {
    std::map<FaceKey, std::vector<Index>> faces;
    for (Index t = 0; t < mesh.num_cells(); ++t) {
        const Cell& c = mesh.cells[t];
        for (int i = 0; i < 4; ++i) {
            const auto& l = kCellFaceVertices[i];
            faces[sorted_face(c[l[0]], c[l[1]], c[l[2]])].push_back(t);
        }
    }
    return faces;
}

/// A random plane through a random vertex-centroid-ish point inside the mesh's bounding box.
CutPlane random_plane(const TetMesh& mesh, std::mt19937& rng) {
    Vec3 lo = mesh.positions[0], hi = mesh.positions[0];
    for (const Vec3& p : mesh.positions)
        for (int d = 0; d < 3; ++d) lo[d] = std::min(lo[d], p[d]), hi[d] = std::max(hi[d], p[d]);
    std::uniform_real_distribution<double> u(0.25, 0.75);
    CutPlane plane;
    for (int d = 0; d < 3; ++d) plane.point[d] = lo[d] + u(rng) * (hi[d] - lo[d]);
    plane.normal = random_unit(rng);
    return plane;
}

bool cell_positive(const TetMesh& mesh, const Cell& c, const CutPlane& plane) {
    double s = 0;
    for (Index v : c)
        for (int d = 0; d < 3; ++d)
            s += plane.normal[d] * (0.25 * mesh.positions[v][d] - 0.25 * plane.point[d]);
    return s >= 0;
}

/// All the properties a cut must have; `infinite` adds the complete-separation checks.
void check_cut(const TetMesh& old_mesh, const CutPlane& plane, const CutResult& r) {
    const TetMesh& mesh = r.mesh;
    ASSERT_EQ(mesh.num_cells(), old_mesh.num_cells());
    ASSERT_EQ(r.vertex_origin.size(), mesh.positions.size());
    EXPECT_EQ(r.duplicated_vertices, mesh.num_vertices() - old_mesh.num_vertices());
    // New vertices copy their origin; cells map back to the old cells vertex by vertex.
    for (Index v = 0; v < mesh.num_vertices(); ++v) {
        ASSERT_GE(r.vertex_origin[v], 0);
        ASSERT_LT(r.vertex_origin[v], old_mesh.num_vertices());
        if (v < old_mesh.num_vertices()) {
            EXPECT_EQ(r.vertex_origin[v], v);
        }
        EXPECT_EQ(mesh.positions[v], old_mesh.positions[r.vertex_origin[v]]);
    }
    for (Index t = 0; t < mesh.num_cells(); ++t)
        for (int j = 0; j < 4; ++j)
            ASSERT_EQ(r.vertex_origin[mesh.cells[t][j]], old_mesh.cells[t][j]) << "cell " << t;

    // Valid mesh: nothing reoriented or dropped, no zero volume; volume conserved per cell.
    TetMesh copy = mesh;
    TetMeshValidation validation;
    ASSERT_NO_THROW(validation = validate_tet_mesh(copy, "cut"));
    EXPECT_EQ(validation.reoriented_cells, 0);
    EXPECT_EQ(validation.dropped_vertices, 0);
    EXPECT_NEAR(total_volume(mesh), total_volume(old_mesh), 1e-12 * total_volume(old_mesh));

    // Faces: every face in one or two cells; exactly `cut_faces` interior faces became two
    // boundary faces; uncut faces stay shared.
    const auto old_faces = face_cells_brute(old_mesh);
    const auto new_faces = face_cells_brute(mesh);
    Index old_interior = 0, new_interior = 0, new_boundary = 0, old_boundary = 0;
    for (const auto& [f, cells] : old_faces) (cells.size() == 2 ? old_interior : old_boundary)++;
    for (const auto& [f, cells] : new_faces) {
        ASSERT_LE(cells.size(), 2u);
        (cells.size() == 2 ? new_interior : new_boundary)++;
    }
    EXPECT_EQ(new_interior, old_interior - r.cut_faces);
    EXPECT_EQ(new_boundary, old_boundary + 2 * r.cut_faces);
    const Topology topology = build_topology(mesh);
    EXPECT_EQ(topology.num_faces(), static_cast<Index>(new_faces.size()));
    EXPECT_EQ(static_cast<Index>(topology.boundary_faces.size()), new_boundary);

    std::set<std::pair<Index, Index>> still_shared;
    for (const auto& [f, cells] : new_faces)
        if (cells.size() == 2) still_shared.insert({cells[0], cells[1]});
    const bool infinite = !std::isfinite(plane.radius);
    for (const auto& [f, cells] : old_faces) {
        if (cells.size() != 2) continue;
        const bool same_side = cell_positive(old_mesh, old_mesh.cells[cells[0]], plane) ==
                               cell_positive(old_mesh, old_mesh.cells[cells[1]], plane);
        const bool shared = still_shared.count({cells[0], cells[1]}) > 0;
        if (same_side) {
            EXPECT_TRUE(shared) << "uncut face separated";
        }
        if (infinite && !same_side) {
            EXPECT_FALSE(shared) << "face across the plane kept";
        }
    }
    if (infinite) {
        // Complete separation: no vertex is used by cells of both sides.
        std::vector<int> side(mesh.num_vertices(), -1);
        for (Index t = 0; t < mesh.num_cells(); ++t) {
            const int s = cell_positive(old_mesh, old_mesh.cells[t], plane) ? 1 : 0;
            for (Index v : mesh.cells[t]) {
                EXPECT_TRUE(side[v] == -1 || side[v] == s) << "vertex " << v << " on both sides";
                side[v] = s;
            }
        }
    }
}

using test::check_pattern;

TEST(Cut, RandomPlanesOnPerturbedBoxes) {
    std::mt19937 rng(2024);
    for (std::uint32_t seed = 1; seed <= 6; ++seed) {
        const TetMesh mesh = test::shuffle_mesh(
            test::make_random_perturbed_box(5, 4, 3, 2.0, 1.5, 1.0, 0.12, seed), seed + 100);
        for (int trial = 0; trial < 4; ++trial) {
            const CutPlane plane = random_plane(mesh, rng);
            const CutResult r = cut_mesh(mesh, plane);
            SCOPED_TRACE("seed " + std::to_string(seed) + " trial " + std::to_string(trial));
            EXPECT_GT(r.cut_faces, 0);
            EXPECT_GT(r.duplicated_vertices, 0);
            check_cut(mesh, plane, r);
            if (trial == 0)
                for (int order = 1; order <= 3; ++order) check_pattern(r.mesh, order);
        }
    }
}

TEST(Cut, RandomPlanesOnTetGenSphere) {
    const TetMesh mesh = load_tet_mesh(test::source_dir() / "assets" / "sphere.obj");
    std::mt19937 rng(7);
    for (int trial = 0; trial < 4; ++trial) {
        CutPlane plane = random_plane(mesh, rng);
        const CutResult r = cut_mesh(mesh, plane);
        SCOPED_TRACE("trial " + std::to_string(trial));
        EXPECT_GT(r.cut_faces, 0);
        check_cut(mesh, plane, r);
        check_pattern(r.mesh, trial % 3 + 1);
        EXPECT_GE(num_components(build_topology(r.mesh)), 2);
    }
}

TEST(Cut, RadiusLimitsTheCutToABlade) {
    std::mt19937 rng(99);
    const TetMesh mesh = test::make_random_perturbed_box(8, 4, 4, 2.0, 1.0, 1.0, 0.1, 3);
    CutPlane plane;
    plane.point = {1.0, 0.0, 0.5}; // on the y = 0 side, the blade enters half way
    plane.normal = {1.0, 0.0, 0.0};
    const CutResult full = cut_mesh(mesh, plane);
    plane.radius = 0.5;
    const CutResult partial = cut_mesh(mesh, plane);
    check_cut(mesh, plane, partial);
    EXPECT_GT(partial.cut_faces, 0);
    EXPECT_LT(partial.cut_faces, full.cut_faces);
    EXPECT_LT(partial.duplicated_vertices, full.duplicated_vertices);
    // A partial cut leaves the solid in one piece; the full one splits it.
    EXPECT_EQ(num_components(build_topology(partial.mesh)), 1);
    EXPECT_EQ(num_components(build_topology(full.mesh)), 2);
    // Brute force: every separated face lies within the radius.
    const auto old_faces = face_cells_brute(mesh);
    const auto new_faces = face_cells_brute(partial.mesh);
    std::set<std::pair<Index, Index>> still_shared;
    for (const auto& [f, cells] : new_faces)
        if (cells.size() == 2) still_shared.insert({cells[0], cells[1]});
    for (const auto& [f, cells] : old_faces) {
        if (cells.size() != 2 || still_shared.count({cells[0], cells[1]})) continue;
        double d2 = 0;
        for (int d = 0; d < 3; ++d) {
            const double c =
                (mesh.positions[f[0]][d] + mesh.positions[f[1]][d] + mesh.positions[f[2]][d]) / 3.0;
            d2 += (c - plane.point[d]) * (c - plane.point[d]);
        }
        EXPECT_LE(d2, plane.radius * plane.radius);
    }
    check_pattern(partial.mesh, 2);
}

TEST(Cut, BeamCutThroughTheMiddleGivesTwoComponents) {
    const TetMesh beam = test::make_box_mesh(10, 2, 2, 5.0, 1.0, 1.0);
    ASSERT_EQ(num_components(build_topology(beam)), 1);
    CutPlane plane;
    plane.point = {2.5, 0.5, 0.5};
    plane.normal = {1, 0, 0};
    const CutResult r = cut_mesh(beam, plane);
    check_cut(beam, plane, r);
    EXPECT_EQ(num_components(build_topology(r.mesh)), 2);
    // The plane x = 2.5 is the grid plane i = 5: its 3x3 vertices are duplicated, and the
    // 2x2 squares there (two triangles each) are cut.
    EXPECT_EQ(r.duplicated_vertices, 9);
    EXPECT_EQ(r.cut_faces, 8);
}

TEST(Cut, ClassifiesOnTheGivenPositions) {
    // Classifying on positions moved by `shift` equals cutting the rest mesh with the plane moved
    // back by `shift`.
    std::mt19937 rng(5);
    const TetMesh mesh = test::make_random_perturbed_box(4, 4, 4, 1.0, 1.0, 1.0, 0.1, 11);
    const Vec3 shift = {0.3, -0.2, 0.7};
    std::vector<Vec3> moved = mesh.positions;
    for (Vec3& p : moved)
        for (int d = 0; d < 3; ++d) p[d] += shift[d];
    for (int trial = 0; trial < 3; ++trial) {
        CutPlane plane = random_plane(mesh, rng);
        CutPlane moved_plane = plane;
        for (int d = 0; d < 3; ++d) moved_plane.point[d] += shift[d];
        const CutResult a = cut_mesh(mesh, plane);
        const CutResult b = cut_mesh(mesh, moved_plane, moved);
        EXPECT_EQ(a.mesh.cells, b.mesh.cells);
        EXPECT_EQ(a.vertex_origin, b.vertex_origin);
        EXPECT_EQ(b.mesh.positions, a.mesh.positions); // rest positions, not the moved ones
    }
}

TEST(Cut, PlaneMissingTheMeshChangesNothing) {
    const TetMesh mesh = test::make_box_mesh(3, 3, 3, 1, 1, 1);
    CutPlane plane;
    plane.point = {5, 0, 0};
    plane.normal = {1, 1, 0};
    const CutResult r = cut_mesh(mesh, plane);
    EXPECT_EQ(r.cut_faces, 0);
    EXPECT_EQ(r.duplicated_vertices, 0);
    EXPECT_EQ(r.mesh.cells, mesh.cells);
}

TEST(Cut, PreExistingPinchIsKept) {
    // Two Kuhn boxes touching only at one vertex (a non-manifold vertex, the corner (1,1,1)).
    // The plane x = y is a union of Kuhn faces through that corner: it halves both boxes. The
    // corner's star has four cut-separated groups in two face-connected parts; each part keeps
    // the corner once, so it gets 2 copies (not 3) and one half of each box stay pinched
    // together: 3 components (not 4).
    const TetMesh a = test::make_box_mesh(2, 2, 2, 1, 1, 1);
    TetMesh b = test::make_box_mesh(2, 2, 2, 1, 1, 1);
    for (Vec3& p : b.positions)
        for (double& x : p) x += 1.0;
    TetMesh joined = test::concatenate_meshes(a, b);
    const Index a_corner = 2 + 3 * (2 + 3 * 2), b_corner = a.num_vertices();
    ASSERT_EQ(joined.positions[a_corner], (Vec3{1, 1, 1}));
    ASSERT_EQ(joined.positions[b_corner], (Vec3{1, 1, 1}));
    for (Cell& c : joined.cells)
        for (Index& v : c)
            if (v == b_corner) v = a_corner;
    joined.positions[b_corner] = {-5, -5, -5}; // unreferenced now; keeps the numbering
    ASSERT_EQ(num_components(build_topology(joined)), 1);
    CutPlane plane;
    plane.point = {1, 1, 1};
    plane.normal = {1, -1, 0};
    const CutResult r = cut_mesh(joined, plane);
    EXPECT_EQ(r.cut_faces, 2 * 8); // per box: the diagonal plane holds 4 squares' 2 triangles
    EXPECT_EQ(num_components(build_topology(r.mesh)), 3);
    EXPECT_EQ(std::count(r.vertex_origin.begin(), r.vertex_origin.end(), a_corner), 3);
}

TEST(Cut, RejectsBadPlanes) {
    const TetMesh mesh = test::make_single_tet();
    CutPlane plane;
    EXPECT_THROW(cut_mesh(mesh, plane), Error); // zero normal
    plane.normal = {0, 0, 1};
    plane.radius = 0;
    EXPECT_THROW(cut_mesh(mesh, plane), Error);
    plane.radius = 1;
    const std::vector<Vec3> few(2);
    EXPECT_THROW(cut_mesh(mesh, plane, few), Error);
}

} // namespace
} // namespace edn
