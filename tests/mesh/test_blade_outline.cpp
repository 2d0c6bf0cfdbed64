// Blades limited by an outline (CutPlane::outline, BladeExtent): the prism test, the checks of
// check_blade, split_cut with a partial quad blade (conforming, nested volume, the opened faces
// on the plane and inside the outline, a crack not two parts), an outline covering the whole
// section (same as the unbounded plane), the bent blade's distance (CutPlane::bend), and two quad
// pieces at an angle joined as the app's cut stroke joins its pieces (the second reaches back
// over the joint by the cells there, bent to follow the first): they sever the box and every cut
// face lies on one of the two pieces; without the overlap the cells at the joint stay whole,
// without the bend a flap opens beside the first piece.

#include "core/error.hpp"
#include "mesh/split_cut.hpp"
#include "mesh/topology.hpp"
#include "support/mesh_fixtures.hpp"
#include "support/pattern_check.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <map>
#include <vector>

namespace edn {
namespace {

Vec3 sub(const Vec3& a, const Vec3& b) {
    return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
Vec3 add(const Vec3& a, const Vec3& b) {
    return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
Vec3 scale(double s, const Vec3& a) {
    return {s * a[0], s * a[1], s * a[2]};
}
Vec3 cross(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec3& a, const Vec3& b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
Vec3 unit(const Vec3& a) {
    return scale(1.0 / std::sqrt(dot(a, a)), a);
}

/// Faces (sorted triples) -> (cell, local vertex opposite) pairs, by brute force.
std::map<std::array<Index, 3>, std::vector<std::pair<Index, int>>> faces_of(const TetMesh& mesh) {
    std::map<std::array<Index, 3>, std::vector<std::pair<Index, int>>> faces;
    for (Index t = 0; t < mesh.num_cells(); ++t)
        for (int i = 0; i < 4; ++i) {
            const auto& l = kCellFaceVertices[i];
            std::array<Index, 3> f = {mesh.cells[t][l[0]], mesh.cells[t][l[1]],
                                      mesh.cells[t][l[2]]};
            std::sort(f.begin(), f.end());
            faces[f].push_back({t, i});
        }
    return faces;
}

/// Every face in one or two cells, an interior face's cells on opposite sides of it, all cells
/// positive.
void expect_conforming(const TetMesh& mesh) {
    const auto& x = mesh.positions;
    for (const Cell& c : mesh.cells)
        ASSERT_GT(signed_volume(x[c[0]], x[c[1]], x[c[2]], x[c[3]]), 0);
    for (const auto& [key, cells] : faces_of(mesh)) {
        ASSERT_LE(cells.size(), 2u);
        if (cells.size() != 2) continue;
        const Vec3 n = cross(sub(x[key[1]], x[key[0]]), sub(x[key[2]], x[key[0]]));
        const Vec3& p = x[mesh.cells[cells[0].first][cells[0].second]];
        const Vec3& q = x[mesh.cells[cells[1].first][cells[1].second]];
        ASSERT_LT(dot(n, sub(p, x[key[0]])) * dot(n, sub(q, x[key[0]])), 0) << "face on one side";
    }
}

/// Vertices of boundary faces that were interior before (opened by the cut): every vertex of a
/// boundary face not all of whose vertices lie on the box's outer boundary.
std::vector<Vec3> opened_face_vertices(const TetMesh& mesh, const Vec3& lower, const Vec3& upper) {
    auto on_box = [&](const Vec3& p) {
        for (int d = 0; d < 3; ++d)
            if (std::abs(p[d] - lower[d]) < 1e-12 || std::abs(p[d] - upper[d]) < 1e-12) return true;
        return false;
    };
    std::vector<Vec3> out;
    for (const auto& [key, cells] : faces_of(mesh)) {
        if (cells.size() != 1) continue;
        const bool outer =
            std::all_of(key.begin(), key.end(), [&](Index v) { return on_box(mesh.positions[v]); });
        if (outer) continue; // (a face on the box's boundary; a cut face is never all on it here)
        for (Index v : key) out.push_back(mesh.positions[v]);
    }
    return out;
}

SplitCutOptions unmoved() {
    SplitCutOptions options;
    options.move_snapped = false;
    return options;
}

/// A rectangle in the plane through `centre` spanned by unit `u` (from -back to +ahead) and unit
/// `w` (half-width `half`).
std::vector<Vec3> rectangle(const Vec3& centre, const Vec3& u, double back, double ahead,
                            const Vec3& w, double half) {
    return {add(centre, add(scale(-back, u), scale(-half, w))),
            add(centre, add(scale(ahead, u), scale(-half, w))),
            add(centre, add(scale(ahead, u), scale(half, w))),
            add(centre, add(scale(-back, u), scale(half, w)))};
}

double longest_edge(const TetMesh& mesh) {
    double longest = 0;
    for (const Cell& c : mesh.cells)
        for (int i = 0; i < 4; ++i)
            for (int j = i + 1; j < 4; ++j) {
                const Vec3 e = sub(mesh.positions[c[i]], mesh.positions[c[j]]);
                longest = std::max(longest, std::sqrt(dot(e, e)));
            }
    return longest;
}

TEST(BladeOutline, ExtentIsThePrismOverTheOutlineWithinTheRadius) {
    CutPlane plane;
    plane.point = {0.5, 0.5, 0};
    plane.normal = {0, 0, 2};
    EXPECT_FALSE(BladeExtent(plane).bounded());
    EXPECT_TRUE(BladeExtent(plane).holds({100, -50, 3}));
    plane.outline = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
    for (bool reversed : {false, true}) {
        if (reversed) std::reverse(plane.outline.begin(), plane.outline.end());
        const BladeExtent extent(plane);
        EXPECT_TRUE(extent.bounded());
        EXPECT_TRUE(extent.holds({0.5, 0.5, 0}));
        EXPECT_TRUE(extent.holds({0.9, 0.1, 0.3})); // off the plane: the prism counts
        EXPECT_TRUE(extent.holds({1, 0.5, 0}));     // on an edge
        EXPECT_FALSE(extent.holds({1.01, 0.5, 0}));
        EXPECT_FALSE(extent.holds({0.5, -0.01, 0}));
    }
    plane.radius = 0.5;
    const BladeExtent both(plane);
    EXPECT_TRUE(both.holds({0.5, 0.8, 0}));
    EXPECT_FALSE(both.holds({0.9, 0.9, 0})); // in the outline, beyond the radius
}

TEST(BladeOutline, CheckBladeRejectsBadOutlines) {
    const TetMesh mesh = test::make_box_mesh(1, 1, 1, 1, 1, 1);
    CutPlane plane;
    plane.point = {0.5, 0.5, 0.5};
    plane.normal = {0, 0, 1};
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<std::vector<Vec3>> bad = {
        {{0, 0, 0.5}, {1, 0, 0.5}},                               // two corners
        {{0, 0, 0.5}, {1, 0, 0.5}, {inf, 1, 0.5}},                // not finite
        {{0, 0, 0.5}, {1, 0, 0.5}, {2, 0, 0.5}},                  // no area
        {{0, 0, 0.5}, {1, 0, 0.5}, {0.2, 0.2, 0.5}, {0, 1, 0.5}}, // not convex
        {{0, 0, 0}, {1, 0, 0}, {1, 0, 1}},                        // no area across the normal
    };
    for (const std::vector<Vec3>& outline : bad) {
        plane.outline = outline;
        EXPECT_THROW(split_cut(mesh, plane), Error) << outline.size();
        EXPECT_THROW(cut_mesh(mesh, plane), Error) << outline.size();
    }
    plane.outline = {{0, 0, 0.7}, {1, 0, 0.1}, {1, 1, 0.5}, {0, 1, 0.5}}; // off-plane corners
    EXPECT_NO_THROW(check_blade(mesh, plane, {}));
}

TEST(BladeOutline, PartialQuadBladeOpensACrackInsideTheOutline) {
    const TetMesh mesh = test::make_random_perturbed_box(6, 6, 3, 1.2, 1.2, 0.6, 0.1, 4);
    CutPlane plane;
    plane.point = {0.61, 0.55, 0.3};
    plane.normal = {1, 0.1, 0.05};
    const Vec3 n = unit(plane.normal);
    const Vec3 w = unit(cross(n, {0, 1, 0})); // across the box's height, in the plane
    const Vec3 u = unit(cross(w, n));         // along y, in the plane
    // From beyond the y = 0 face to the box's middle, through its whole height.
    plane.outline = rectangle(plane.point, u, 2.0, 0.0, w, 2.0);
    if (dot(u, {0, 1, 0}) < 0) plane.outline = rectangle(plane.point, u, 0.0, 2.0, w, 2.0);
    const SplitCutResult r = split_cut(mesh, plane, {}, unmoved());
    expect_conforming(r.mesh);
    EXPECT_GT(r.cut_faces, 0);
    EXPECT_EQ(r.components, 1); // a crack ending inside, not two parts
    EXPECT_NEAR(total_volume(r.mesh), total_volume(mesh), 1e-12 * total_volume(mesh));
    const BladeExtent extent(plane);
    const std::vector<Vec3> opened = opened_face_vertices(r.mesh, {0, 0, 0}, {1.2, 1.2, 0.6});
    ASSERT_FALSE(opened.empty());
    for (const Vec3& p : opened) {
        EXPECT_LE(std::abs(dot(n, sub(p, plane.point))), r.max_snap_distance + 1e-12);
        EXPECT_TRUE(extent.holds(p));
    }
    // The whole section's faces open only without the outline's limit.
    CutPlane whole = plane;
    whole.outline = rectangle(plane.point, u, 5.0, 5.0, w, 5.0);
    const SplitCutResult covered = split_cut(mesh, whole, {}, unmoved());
    whole.outline.clear();
    const SplitCutResult unbounded = split_cut(mesh, whole, {}, unmoved());
    EXPECT_EQ(covered.components, 2);
    EXPECT_EQ(covered.cut_faces, unbounded.cut_faces);
    EXPECT_EQ(covered.cells_after, unbounded.cells_after);
    EXPECT_LT(r.cut_faces, unbounded.cut_faces);
    for (int p = 1; p <= 3; ++p) test::check_pattern(r.mesh, p);
}

/// Two quad pieces at an angle through the vertical line at (0.63, 0.58), each through the box's
/// height and past its side, as a cut stroke's: the first ends at the line, the second reaches
/// back over it by `overlap` and, when `bent`, follows the first there (CutPlane::bend).
struct TwoPieces {
    TetMesh mesh;
    double snap = 0; ///< largest snap distance of the two cuts
};

constexpr Vec3 kJoint = {0.63, 0.58, 0.3};
const std::array<Vec3, 2> kAlong = {unit({0.12, 1, 0}), unit({-0.2, 1, 0})};

TwoPieces two_pieces(const TetMesh& mesh, double overlap, bool bent) {
    const Vec3 up = {0, 0, 1};
    TwoPieces out{mesh, 0.0};
    for (int k = 0; k < 2; ++k) {
        CutPlane piece;
        piece.point = kJoint;
        piece.normal = cross(kAlong[k], up);
        // The first from beyond y = 0 to the joint, the second from there past y = 1.2.
        piece.outline = k == 0 ? rectangle(kJoint, kAlong[k], 2.0, 0.0, up, 2.0)
                               : rectangle(kJoint, kAlong[k], overlap, 2.0, up, 2.0);
        if (k == 1 && bent)
            piece.bend = BladeBend{kJoint, cross(kAlong[0], up), scale(-1, kAlong[1])};
        SplitCutResult r = split_cut(out.mesh, piece, {}, unmoved());
        out.snap = std::max(out.snap, r.max_snap_distance);
        out.mesh = std::move(r.mesh);
    }
    return out;
}

TEST(BladeOutline, BentPieceFollowsThePreviousOneBehindTheBend) {
    CutPlane plane;
    plane.point = {0, 0, 0};
    plane.normal = {0, 0, 2};                                  // z = 0 for x >= 0 ...
    plane.bend = BladeBend{{0, 0, 0}, {-1, 0, 1}, {-1, 0, 0}}; // ... bent up by 45 deg for x < 0
    const BladeExtent extent(plane);
    EXPECT_DOUBLE_EQ(extent.signed_distance({2, 5, 0.5}), 0.5);
    EXPECT_NEAR(extent.signed_distance({-1, 5, -1}), 0.0, 1e-15); // on the bent plane
    EXPECT_NEAR(extent.signed_distance({-1, 5, 0}), 1 / std::sqrt(2.0), 1e-15);
    // Continuous across the splitting plane (the bisector, x = z (sqrt 2 - 1) here).
    const double x = 0.3 * (std::sqrt(2.0) - 1);
    EXPECT_NEAR(extent.signed_distance({x + 1e-9, 0, 0.3}),
                extent.signed_distance({x - 1e-9, 0, 0.3}), 1e-8);
}

TEST(BladeOutline, BentPiecesMeetAtTheJointAndSeverTheBox) {
    const TetMesh mesh = test::make_random_perturbed_box(6, 6, 3, 1.2, 1.2, 0.6, 0.1, 7);
    // The app's overlap: the longest edge of a cell that could straddle the joint, with room.
    const double overlap = 1.05 * longest_edge(mesh);
    const TwoPieces severed = two_pieces(mesh, overlap, true);
    expect_conforming(severed.mesh);
    EXPECT_EQ(count_components(severed.mesh), 2);
    EXPECT_NEAR(total_volume(severed.mesh), total_volume(mesh), 1e-12 * total_volume(mesh));
    for (int p = 1; p <= 3; ++p) test::check_pattern(severed.mesh, p);
    // Every opened face lies on the first plane before the joint or on the second after it:
    // the overlap recut the first plane, no flap beside it.
    const Vec3 up = {0, 0, 1};
    const double along_tolerance = 0.05; // a quarter of a cell
    for (const Vec3& p : opened_face_vertices(severed.mesh, {0, 0, 0}, {1.2, 1.2, 0.6})) {
        const Vec3 r = sub(p, kJoint);
        const bool on_first =
            std::abs(dot(unit(cross(kAlong[0], up)), r)) <= severed.snap + 1e-12 &&
            dot(kAlong[0], r) <= along_tolerance;
        const bool on_second =
            std::abs(dot(unit(cross(kAlong[1], up)), r)) <= severed.snap + 1e-12 &&
            dot(kAlong[1], r) >= -along_tolerance;
        EXPECT_TRUE(on_first || on_second) << p[0] << " " << p[1] << " " << p[2];
    }
    // Without the overlap the cells across the joint are front cells of both pieces: whole.
    const TwoPieces joined = two_pieces(mesh, 0.0, true);
    expect_conforming(joined.mesh);
    EXPECT_EQ(count_components(joined.mesh), 1);
    // Overlapping unbent, the second piece opens a flap beside the first: a face off both.
    const TwoPieces flapped = two_pieces(mesh, overlap, false);
    expect_conforming(flapped.mesh);
    bool flap = false;
    for (const Vec3& p : opened_face_vertices(flapped.mesh, {0, 0, 0}, {1.2, 1.2, 0.6})) {
        const Vec3 r = sub(p, kJoint);
        flap = flap || (std::abs(dot(unit(cross(kAlong[0], up)), r)) > 0.01 &&
                        dot(kAlong[1], r) < -along_tolerance);
    }
    EXPECT_TRUE(flap);
}

} // namespace
} // namespace edn
