// Cut mode's stroke without a window (app/cut_stroke.hpp): the blade piece of a stroke segment
// (the plane through both rays and the eye, its outline), the joint overlap, and strokes of
// several pieces cut one after the other on a bar seen by the app's camera, as the app does: a
// zig-zag across the bar severs it into two parts, a stroke ending over the bar leaves a crack,
// a straight stroke in pieces cuts as its single blade does; the mesh stays valid and keeps its
// volume.

#include "camera.hpp"
#include "cut_stroke.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/split_cut.hpp"
#include "mesh/topology.hpp"
#include "picking.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <glm/geometric.hpp>
#include <gtest/gtest.h>
#include <map>
#include <vector>

namespace edn {
namespace {

double plane_distance(const CutPlane& plane, const glm::dvec3& p) {
    const glm::dvec3 n =
        glm::normalize(glm::dvec3(plane.normal[0], plane.normal[1], plane.normal[2]));
    return glm::dot(n, p - glm::dvec3(plane.point[0], plane.point[1], plane.point[2]));
}

/// Every face in at most two cells and every cell positive: no hanging node, no inverted cell.
void expect_valid(const TetMesh& mesh) {
    std::map<std::array<Index, 3>, int> faces;
    for (const Cell& c : mesh.cells) {
        const auto& x = mesh.positions;
        ASSERT_GT(signed_volume(x[c[0]], x[c[1]], x[c[2]], x[c[3]]), 0);
        for (int i = 0; i < 4; ++i) {
            const auto& l = kCellFaceVertices[i];
            std::array<Index, 3> f = {c[l[0]], c[l[1]], c[l[2]]};
            std::sort(f.begin(), f.end());
            ASSERT_LE(++faces[f], 2);
        }
    }
}

class CutStrokeTest : public ::testing::Test {
protected:
    void SetUp() override {
        // A beam 0.5 x 0.5 x 2 of 0.125 cubes, standing, framed by the camera.
        mesh_ = make_box_tet_mesh(4, 4, 16, {0, 0, 0}, {0.5, 0.5, 2});
        Camera camera;
        camera.fit(glm::vec3(0.0f), glm::vec3(0.5f, 0.5f, 2.0f));
        view_.view = camera.view();
        view_.view_projection = camera.projection(640.0f / 480.0f) * view_.view;
        view_.eye = camera.eye();
        view_.target = camera.target();
        view_.viewport = {640.0f, 480.0f};
    }

    glm::vec2 pixel_of(const glm::vec3& point) const {
        const std::optional<glm::vec2> pixel =
            project_to_pixel(view_.view_projection, point, view_.viewport);
        EXPECT_TRUE(pixel.has_value());
        return pixel.value_or(glm::vec2(0.0f));
    }

    /// Moves the cursor through `points` (the first presses, the last releases) and cuts the
    /// pieces as App::cut_stroke_piece does; returns how many pieces cut something.
    int cut_stroke(const std::vector<glm::vec2>& points) {
        int cuts = 0;
        glm::vec2 cut_to = points.front();
        std::optional<Vec3> previous;
        for (std::size_t i = 1; i < points.size(); ++i) {
            const StrokePiece piece = plan_stroke_piece(
                view_, mesh_, mesh_.positions, cut_to, points[i], previous, i + 1 == points.size());
            if (!piece.ready) continue;
            cut_to = points[i];
            if (!piece.blade) continue;
            previous = piece.blade->normal;
            SplitCutResult r = split_cut(mesh_, *piece.blade);
            if (r.cut_faces == 0) continue; // beside the bar
            mesh_ = std::move(r.mesh);
            ++cuts;
        }
        return cuts;
    }

    /// A zig-zag stroke across the bar's middle from `left` to `right` pixels in `pieces`.
    std::vector<glm::vec2> zig_zag(float left, float right, int pieces) const {
        const glm::vec2 middle = pixel_of({0.25f, 0.25f, 1.0f});
        std::vector<glm::vec2> points;
        for (int i = 0; i <= pieces; ++i) {
            const float s = static_cast<float>(i) / static_cast<float>(pieces);
            points.push_back({left + s * (right - left), middle.y + (i % 2 == 0 ? -6.0f : 6.0f)});
        }
        return points;
    }

    TetMesh mesh_;
    ViewState view_;
};

TEST_F(CutStrokeTest, PieceIsThePlaneThroughBothRaysOutlinedByTheirQuad) {
    const glm::vec2 from(300.0f, 200.0f), to(340.0f, 230.0f);
    const std::optional<CutPlane> piece = stroke_piece(view_, from, to, 10.0, 0.1, 0.2);
    ASSERT_TRUE(piece.has_value());
    const double scale = glm::length(glm::dvec3(view_.eye));
    EXPECT_NEAR(plane_distance(*piece, glm::dvec3(view_.eye)), 0.0, 1e-5 * scale);
    for (const glm::vec2& pixel : {from, to, 0.5f * (from + to)}) {
        const Ray ray = view_.ray(pixel);
        for (float t : {1.0f, 3.0f, 8.0f}) {
            const glm::dvec3 p(ray.origin + t * ray.direction);
            EXPECT_NEAR(plane_distance(*piece, p), 0.0, 1e-5 * scale);
            // Inside the swept quad: within the outline (between the two rays).
            EXPECT_TRUE(BladeExtent(*piece).holds({p.x, p.y, p.z}));
        }
    }
    ASSERT_EQ(piece->outline.size(), 4u);
    for (const Vec3& corner : piece->outline)
        EXPECT_NEAR(plane_distance(*piece, {corner[0], corner[1], corner[2]}), 0.0, 1e-5 * scale);
    // Beyond `from` by less than its margin: held; by more: not.
    const Ray a = view_.ray(from);
    const Ray b = view_.ray(to);
    const glm::dvec3 back = glm::normalize(glm::dvec3(a.direction - b.direction));
    const glm::dvec3 on_a(a.origin + 3.0f * a.direction);
    auto held = [&](const glm::dvec3& p) { return BladeExtent(*piece).holds({p.x, p.y, p.z}); };
    EXPECT_TRUE(held(on_a + 0.05 * back));
    EXPECT_FALSE(held(on_a + 0.15 * back));
    // Behind the eye and past the reach: not held.
    EXPECT_FALSE(held(glm::dvec3(a.origin - 1.0f * a.direction)));
    EXPECT_FALSE(held(glm::dvec3(a.origin + 11.0f * a.direction)));
    EXPECT_FALSE(stroke_piece(view_, from, from, 10.0, 0.1, 0.1).has_value());
}

TEST_F(CutStrokeTest, JointMarginIsTheCellSizeAtTheRay) {
    // The bar's cells are 0.125 cubes (6 tets each): the longest edge is the cube's diagonal.
    const Ray through = view_.ray(pixel_of({0.25f, 0.25f, 1.0f}));
    EXPECT_NEAR(joint_margin(mesh_, mesh_.positions, through), 1.05 * 0.125 * std::sqrt(3.0), 1e-9);
    const Ray beside = view_.ray({5.0f, 5.0f});
    EXPECT_EQ(joint_margin(mesh_, mesh_.positions, beside), 0.0);
}

TEST_F(CutStrokeTest, ZigZagStrokeAcrossTheBarSeversIt) {
    const double volume = total_volume(mesh_);
    const float left = pixel_of({-1.0f, 0.25f, 1.0f}).x;
    const float right = pixel_of({1.5f, 0.25f, 1.0f}).x;
    const int cuts = cut_stroke(zig_zag(std::min(left, right), std::max(left, right), 40));
    EXPECT_GE(cuts, 3);
    expect_valid(mesh_);
    EXPECT_EQ(count_components(mesh_), 2);
    EXPECT_NEAR(total_volume(mesh_), volume, 1e-12 * volume);
}

TEST_F(CutStrokeTest, StrokeEndingOverTheBarLeavesACrack) {
    const double volume = total_volume(mesh_);
    const Index vertices = mesh_.num_vertices();
    const float left = pixel_of({-1.0f, 0.25f, 1.0f}).x;
    const float middle = pixel_of({0.25f, 0.25f, 1.0f}).x;
    // From beside the bar to its middle.
    EXPECT_GE(cut_stroke(zig_zag(left, middle, 20)), 1);
    expect_valid(mesh_);
    EXPECT_EQ(count_components(mesh_), 1);
    EXPECT_GT(mesh_.num_vertices(), vertices);
    EXPECT_NEAR(total_volume(mesh_), volume, 1e-12 * volume);
}

TEST_F(CutStrokeTest, StraightStrokeInPiecesCutsAsTheStrokeInOne) {
    // All pieces of a straight stroke lie in one plane: together they must open what the
    // stroke's single blade opens (no bridge at a joint, no flap beside one).
    const float left = pixel_of({-1.0f, 0.25f, 0.9f}).x;
    const float right = pixel_of({1.5f, 0.25f, 0.9f}).x;
    const float row = pixel_of({0.25f, 0.25f, 0.9f}).y;
    std::vector<glm::vec2> points;
    for (int i = 0; i <= 40; ++i)
        points.push_back({left + static_cast<float>(i) / 40.0f * (right - left), row});
    const TetMesh bar = mesh_;
    const std::optional<CutPlane> whole = stroke_piece(view_, points.front(), points.back(),
                                                       stroke_reach(view_, bar.positions), 0, 0);
    ASSERT_TRUE(whole.has_value());
    const SplitCutResult one = split_cut(bar, *whole);
    EXPECT_GE(cut_stroke(points), 2);
    expect_valid(mesh_);
    EXPECT_EQ(count_components(mesh_), one.components);
    EXPECT_EQ(count_components(mesh_), 2);
    EXPECT_NEAR(total_volume(mesh_), total_volume(bar), 1e-12 * total_volume(bar));
}

} // namespace
} // namespace edn
