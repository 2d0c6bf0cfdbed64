#include "core/error.hpp"
#include "mesh/tet_mesh.hpp"
#include "support/errors.hpp"
#include "support/mesh_fixtures.hpp"

#include <algorithm>
#include <functional>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

using test::expect_error;

/// The unit cube split into 5 positively oriented tetrahedra (corner index = x + 2y + 4z).
TetMesh unit_cube() {
    TetMesh mesh;
    for (int z = 0; z < 2; ++z)
        for (int y = 0; y < 2; ++y)
            for (int x = 0; x < 2; ++x) mesh.positions.push_back({double(x), double(y), double(z)});
    mesh.cells = {{0, 1, 2, 4}, {3, 2, 1, 7}, {5, 1, 4, 7}, {6, 4, 2, 7}, {1, 2, 4, 7}};
    return mesh;
}

double cell_volume(const TetMesh& mesh, const Cell& c) {
    return signed_volume(mesh.positions[c[0]], mesh.positions[c[1]], mesh.positions[c[2]],
                         mesh.positions[c[3]]);
}

/// A cell as its sorted corner coordinates: identity of a cell independent of numbering.
std::array<Vec3, 4> corners(const TetMesh& mesh, const Cell& c) {
    std::array<Vec3, 4> out{mesh.positions[c[0]], mesh.positions[c[1]], mesh.positions[c[2]],
                            mesh.positions[c[3]]};
    std::sort(out.begin(), out.end());
    return out;
}

TEST(TetMesh, SignedVolumeOfUnitTetAndPermutations) {
    const Vec3 a{0, 0, 0}, b{1, 0, 0}, c{0, 1, 0}, d{0, 0, 1};
    EXPECT_DOUBLE_EQ(signed_volume(a, b, c, d), 1.0 / 6.0);
    EXPECT_DOUBLE_EQ(signed_volume(a, c, b, d), -1.0 / 6.0);

    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-2.0, 2.0);
    auto random_point = [&] { return Vec3{u(rng), u(rng), u(rng)}; };
    for (int trial = 0; trial < 100; ++trial) {
        const Vec3 p = random_point(), q = random_point(), r = random_point(), s = random_point();
        const double v = signed_volume(p, q, r, s);
        // Even permutations keep the sign, odd ones flip it; translation changes nothing.
        EXPECT_NEAR(signed_volume(q, r, p, s), v, 1e-12);
        EXPECT_NEAR(signed_volume(q, p, s, r), v, 1e-12);
        EXPECT_NEAR(signed_volume(q, p, r, s), -v, 1e-12);
        const Vec3 t{3.0, -1.0, 0.5};
        auto shift = [&](const Vec3& x) { return Vec3{x[0] + t[0], x[1] + t[1], x[2] + t[2]}; };
        EXPECT_NEAR(signed_volume(shift(p), shift(q), shift(r), shift(s)), v, 1e-12);
        // Reference: 6V = det of the rows [1 x y z], by cofactor expansion along column 0.
        const double m[4][4] = {{1, p[0], p[1], p[2]},
                                {1, q[0], q[1], q[2]},
                                {1, r[0], r[1], r[2]},
                                {1, s[0], s[1], s[2]}};
        auto det3 = [&](int skip) {
            int rows[3], n = 0;
            for (int i = 0; i < 4; ++i)
                if (i != skip) rows[n++] = i;
            auto e = [&](int i, int j) { return m[rows[i]][j + 1]; };
            return e(0, 0) * (e(1, 1) * e(2, 2) - e(1, 2) * e(2, 1)) -
                   e(0, 1) * (e(1, 0) * e(2, 2) - e(1, 2) * e(2, 0)) +
                   e(0, 2) * (e(1, 0) * e(2, 1) - e(1, 1) * e(2, 0));
        };
        const double det4 = det3(0) - det3(1) + det3(2) - det3(3);
        EXPECT_NEAR(v, det4 / 6.0, 1e-12);
    }
}

TEST(TetMesh, ValidCubePassesUnchanged) {
    TetMesh mesh = unit_cube();
    const TetMesh before = mesh;
    const TetMeshValidation result = validate_tet_mesh(mesh, "cube");
    EXPECT_EQ(result.reoriented_cells, 0);
    EXPECT_EQ(result.dropped_vertices, 0);
    EXPECT_EQ(result.components, 1);
    EXPECT_EQ(mesh.cells, before.cells);
    EXPECT_NEAR(total_volume(mesh), 1.0, 1e-14);
}

TEST(TetMesh, InvertedCellsAreFlipped) {
    TetMesh mesh = unit_cube();
    std::swap(mesh.cells[1][0], mesh.cells[1][1]);
    std::swap(mesh.cells[4][2], mesh.cells[4][3]);
    ASSERT_LT(cell_volume(mesh, mesh.cells[1]), 0.0);
    const TetMesh before = mesh;
    const TetMeshValidation result = validate_tet_mesh(mesh, "cube");
    EXPECT_EQ(result.reoriented_cells, 2);
    for (Index c = 0; c < mesh.num_cells(); ++c) {
        EXPECT_GT(cell_volume(mesh, mesh.cells[c]), 0.0) << "cell " << c;
        EXPECT_EQ(corners(mesh, mesh.cells[c]), corners(before, before.cells[c]));
    }
    EXPECT_NEAR(total_volume(mesh), 1.0, 1e-14);
}

TEST(TetMesh, UnreferencedVerticesAreDropped) {
    TetMesh mesh = unit_cube();
    // Insert unused vertices at the front and in the middle; shift the cells accordingly.
    mesh.positions.insert(mesh.positions.begin(), Vec3{9, 9, 9});
    mesh.positions.insert(mesh.positions.begin() + 5, Vec3{-4, 0, 0});
    for (Cell& c : mesh.cells)
        for (Index& v : c) v = v + 1 + (v + 1 >= 5 ? 1 : 0);
    const TetMesh before = mesh;
    const TetMeshValidation result = validate_tet_mesh(mesh, "cube");
    EXPECT_EQ(result.dropped_vertices, 2);
    EXPECT_EQ(mesh.num_vertices(), 8);
    EXPECT_EQ(mesh.positions, unit_cube().positions);
    for (Index c = 0; c < mesh.num_cells(); ++c)
        EXPECT_EQ(corners(mesh, mesh.cells[c]), corners(before, before.cells[c]));
}

TEST(TetMesh, DuplicateCellInAnyOrderIsRejected) {
    TetMesh mesh = unit_cube();
    mesh.cells.push_back({7, 4, 1, 5}); // cell 2 permuted
    expect_error([&] { validate_tet_mesh(mesh, "dup.node"); }, ErrorCode::DuplicateElement,
                 "dup.node: 1 duplicate cells, first is cell 6 (1-based, in file order)");
}

TEST(TetMesh, ZeroVolumeCellIsRejected) {
    TetMesh mesh = unit_cube();
    mesh.positions.push_back({0.5, 0.5, 0.0}); // on the bottom face: flat with 0, 1, 2
    mesh.cells.push_back({0, 1, 2, 8});
    mesh.cells.push_back({0, 1, 3, 8});
    expect_error([&] { validate_tet_mesh(mesh, "flat.ele"); }, ErrorCode::DegenerateElement,
                 "flat.ele: 2 zero-volume cells, first is cell 6 (1-based, in file order)");
}

TEST(TetMesh, ZeroVolumeToleranceIsScaleInvariant) {
    // A tiny but well-shaped cell far from the others is not degenerate.
    TetMesh mesh = unit_cube();
    const double h = 1e-7;
    const Index base = mesh.num_vertices();
    for (const Vec3& p : {Vec3{5, 5, 5}, Vec3{5 + h, 5, 5}, Vec3{5, 5 + h, 5}, Vec3{5, 5, 5 + h}})
        mesh.positions.push_back(p);
    mesh.cells.push_back({base, base + 1, base + 2, base + 3});
    const TetMeshValidation result = validate_tet_mesh(mesh, "tiny");
    EXPECT_EQ(result.components, 2);
    // The same cell squashed to a sliver of relative height 1e-12 is degenerate.
    TetMesh sliver = unit_cube();
    sliver.positions.push_back({0.5, 0.5, 1e-12});
    sliver.cells.push_back({0, 1, 2, 8});
    expect_error([&] { validate_tet_mesh(sliver, "sliver"); }, ErrorCode::DegenerateElement,
                 "1 zero-volume cells, first is cell 6");
}

TEST(TetMesh, InputErrors) {
    TetMesh empty;
    expect_error([&] { validate_tet_mesh(empty, "e.msh"); }, ErrorCode::EmptyMesh, "e.msh");

    TetMesh out_of_range = unit_cube();
    out_of_range.cells[1][2] = 8;
    expect_error([&] { validate_tet_mesh(out_of_range, "o.ele"); }, ErrorCode::IndexOutOfRange,
                 "o.ele: cell 2 (1-based, in file order) references vertex 9 of 8");
    out_of_range.cells[1][2] = -1;
    expect_error([&] { validate_tet_mesh(out_of_range, "o.ele"); }, ErrorCode::IndexOutOfRange,
                 "cell 2 (1-based, in file order) references vertex 0 of 8");

    TetMesh repeated = unit_cube();
    repeated.cells[3] = {6, 4, 6, 7};
    expect_error([&] { validate_tet_mesh(repeated, "r.ele"); }, ErrorCode::DegenerateElement,
                 "r.ele: cell 4 (1-based, in file order) repeats vertex 7");

    TetMesh nan = unit_cube();
    nan.positions[5][1] = std::numeric_limits<double>::quiet_NaN();
    expect_error([&] { validate_tet_mesh(nan, "n.node"); }, ErrorCode::NonFinite,
                 "n.node: vertex 6 (1-based, in file order) has a non-finite coordinate");
    nan.positions[5][1] = std::numeric_limits<double>::infinity();
    expect_error([&] { validate_tet_mesh(nan, "n.node"); }, ErrorCode::NonFinite, "vertex 6 ");

    // Finite but so large that volumes overflow: named as such, not as zero-volume cells.
    TetMesh huge = unit_cube();
    for (Vec3& p : huge.positions)
        for (double& x : p) x *= 1e200;
    expect_error([&] { validate_tet_mesh(huge, "h.node"); }, ErrorCode::NonFinite,
                 "h.node: vertex 2 (1-based, in file order) has coordinate 1e+200, out of range "
                 "(|x| <= 1e+100");
    TetMesh large = unit_cube();
    for (Vec3& p : large.positions)
        for (double& x : p) x *= 1e90;
    EXPECT_NO_THROW(validate_tet_mesh(large, "l.node"));
}

TEST(TetMesh, CellsOnTheSameSideOfTheirSharedFaceOverlap) {
    // 0123 and 0124 with vertex 4 inside the first: both lie above face (0,1,2).
    TetMesh folded;
    folded.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.1, 0.1, 0.1}};
    folded.cells = {{0, 1, 2, 3}, {0, 1, 2, 4}};
    expect_error([&] { validate_tet_mesh(folded, "folded.node"); }, ErrorCode::DegenerateElement,
                 "folded.node: cells 1 and 2 overlap (both lie on the same side of their shared "
                 "face (1,2,3)) (1-based, in file order)");
    // The same pair with the apex below the face is a valid two-cell mesh, in either order.
    TetMesh apart = folded;
    apart.positions[4] = {0.1, 0.1, -0.5};
    EXPECT_NO_THROW(validate_tet_mesh(apart, "apart.node"));
    std::swap(apart.cells[0], apart.cells[1]);
    EXPECT_NO_THROW(validate_tet_mesh(apart, "apart.node"));
    // Every interior face of the cube passes.
    TetMesh cube = unit_cube();
    EXPECT_NO_THROW(validate_tet_mesh(cube, "cube"));
}

TEST(TetMesh, FaceOfThreeCellsIsRejectedNamingTheFile) {
    TetMesh mesh;
    mesh.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}, {0.2, 0.2, 0.2}};
    mesh.cells = {{0, 1, 2, 3}, {1, 2, 3, 4}, {1, 2, 3, 5}};
    expect_error(
        [&] { validate_tet_mesh(mesh, "face3.node"); }, ErrorCode::NonManifold,
        "face3.node: face (2,3,4) is shared by 3 cells (1, 2, 3) (1-based, in file order)");
}

TEST(TetMesh, ComponentsOfDisjointAndTouchingTets) {
    TetMesh two;
    two.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1},
                     {5, 0, 0}, {6, 0, 0}, {5, 1, 0}, {5, 0, 1}};
    two.cells = {{0, 1, 2, 3}, {4, 5, 6, 7}};
    EXPECT_EQ(count_components(two), 2);
    EXPECT_EQ(validate_tet_mesh(two, "two").components, 2);

    // Sharing a single vertex connects them.
    TetMesh touching = two;
    touching.positions[4] = touching.positions[1];
    touching.cells[1][0] = 1;
    EXPECT_EQ(count_components(touching), 1);

    // Brute force on random cell sets: flood fill over the cell adjacency matrix.
    std::mt19937 rng(3);
    for (int trial = 0; trial < 20; ++trial) {
        TetMesh mesh;
        mesh.positions.resize(40, Vec3{0, 0, 0});
        std::uniform_int_distribution<Index> pick(0, 39);
        for (int c = 0; c < 12; ++c)
            mesh.cells.push_back({pick(rng), pick(rng), pick(rng), pick(rng)});
        const auto n = mesh.cells.size();
        std::vector<int> label(n, -1);
        int components = 0;
        for (std::size_t seed = 0; seed < n; ++seed) {
            if (label[seed] >= 0) continue;
            std::vector<std::size_t> stack{seed};
            label[seed] = components;
            while (!stack.empty()) {
                const std::size_t c = stack.back();
                stack.pop_back();
                for (std::size_t o = 0; o < n; ++o) {
                    if (label[o] >= 0) continue;
                    bool shares = false;
                    for (Index a : mesh.cells[c])
                        for (Index b : mesh.cells[o]) shares = shares || a == b;
                    if (shares) {
                        label[o] = components;
                        stack.push_back(o);
                    }
                }
            }
            ++components;
        }
        EXPECT_EQ(count_components(mesh), components);
    }
}

} // namespace
} // namespace edn
