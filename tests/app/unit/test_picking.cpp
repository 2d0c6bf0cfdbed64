// The app's picking without a window: the surface picker (BVH over the boundary, refitted when
// the positions move), the blade of a screen stroke and the pin brush, on a box scene seen by
// the app's camera.

#include "camera.hpp"
#include "edit_session.hpp"
#include "input.hpp"
#include "mesh/box_mesh.hpp"
#include "picking.hpp"
#include "scene.hpp"

#include <cmath>
#include <glm/geometric.hpp>
#include <gtest/gtest.h>

namespace edn {
namespace {

class Picking : public ::testing::Test {
protected:
    void SetUp() override {
        scene_ = make_scene("box.node", make_box_tet_mesh(2, 2, 2, {0, 0, 0}, {1, 1, 1}));
        camera_.fit(scene_.lower, scene_.upper);
        camera_.reset();
        view_.view = camera_.view();
        view_.view_projection = camera_.projection(640.0f / 480.0f) * view_.view;
        view_.eye = camera_.eye();
        view_.target = camera_.target();
        view_.viewport = {640.0f, 480.0f};
        std::vector<glm::vec3> positions;
        gather_surface_positions(scene_.mesh.positions, scene_.surface, positions);
        picker_.build(positions, scene_.surface.triangles);
    }

    /// The pixel the box centre projects to.
    glm::vec2 centre_pixel() const {
        const std::optional<glm::vec2> pixel =
            project_to_pixel(view_.view_projection, glm::vec3(0.5f), view_.viewport);
        EXPECT_TRUE(pixel.has_value());
        return pixel.value_or(glm::vec2(0.0f));
    }

    Scene scene_;
    Camera camera_;
    ViewState view_;
    SurfacePicker picker_;
};

/// Distance of `p` to the boundary of the unit box.
float box_boundary_distance(const glm::vec3& p) {
    float d = 1e9f;
    for (int axis = 0; axis < 3; ++axis)
        d = std::min({d, std::abs(p[axis]), std::abs(1 - p[axis])});
    return d;
}

TEST_F(Picking, TheRayThroughTheCentreHitsTheNearSurface) {
    ASSERT_FALSE(picker_.empty());
    const glm::vec2 pixel = centre_pixel();
    const std::optional<SurfaceHit> hit = picker_.pick(view_.ray(pixel));
    ASSERT_TRUE(hit.has_value());
    EXPECT_LT(box_boundary_distance(hit->point), 1e-5f);
    EXPECT_NEAR(hit->barycentric.x + hit->barycentric.y + hit->barycentric.z, 1.0f, 1e-5f);
    // Nearer than the centre, and on the eye's side.
    EXPECT_LT(glm::length(hit->point - view_.eye), glm::length(glm::vec3(0.5f) - view_.eye));
    EXPECT_GE(hit->triangle, 0);
    // A corner of the window sees past the box.
    EXPECT_FALSE(picker_.pick(view_.ray({0.0f, 0.0f})).has_value());
}

TEST_F(Picking, MovedPositionsAreRefittedBeforeTheNextPick) {
    const Ray ray = view_.ray(centre_pixel());
    ASSERT_TRUE(picker_.pick(ray).has_value());
    for (glm::vec3& p : picker_.positions()) p.x += 10.0f; // the body moves out of view
    picker_.moved();
    EXPECT_FALSE(picker_.pick(ray).has_value());
    for (glm::vec3& p : picker_.positions()) p.x -= 10.0f;
    picker_.mark_stale(); // interop: the host copy is behind, the caller refreshes it
    EXPECT_TRUE(picker_.stale());
    picker_.moved();
    EXPECT_FALSE(picker_.stale());
    EXPECT_TRUE(picker_.pick(ray).has_value());
    picker_.clear();
    EXPECT_TRUE(picker_.empty());
    EXPECT_FALSE(picker_.pick(ray).has_value());
}

TEST_F(Picking, AStrokeBecomesThePlaneSweptAlongTheView) {
    const glm::vec2 centre = centre_pixel();
    const glm::vec2 from = centre - glm::vec2(60.0f, 0.0f), to = centre + glm::vec2(60.0f, 0.0f);
    const std::optional<SurfaceHit> hit = picker_.pick(view_.ray(centre));
    ASSERT_TRUE(hit.has_value());
    const std::optional<CutPlane> plane = stroke_plane(view_, from, to, hit->point);
    ASSERT_TRUE(plane.has_value());
    const glm::vec3 normal =
        glm::normalize(glm::vec3(plane->normal[0], plane->normal[1], plane->normal[2]));
    const glm::vec3 point(plane->point[0], plane->point[1], plane->point[2]);
    // The plane holds the eye and the rays through both stroke ends.
    EXPECT_NEAR(glm::dot(view_.eye - point, normal), 0.0f, 1e-4f);
    for (const glm::vec2& end : {from, to})
        EXPECT_NEAR(glm::dot(view_.ray(end).direction, normal), 0.0f, 1e-4f);
    // Its point is at the picked surface's view depth, its radius half the stroke's length there.
    EXPECT_NEAR(view_.depth(point), view_.depth(hit->point), 1e-4f);
    const glm::vec3 a = *view_.at_depth(from, view_.depth(hit->point));
    const glm::vec3 b = *view_.at_depth(to, view_.depth(hit->point));
    EXPECT_NEAR(plane->radius, 0.5 * glm::length(b - a), 1e-5);
    // Without a surface point the blade sits at the orbit target's depth.
    const std::optional<CutPlane> at_target = stroke_plane(view_, from, to, std::nullopt);
    ASSERT_TRUE(at_target.has_value());
    const glm::vec3 target_point(at_target->point[0], at_target->point[1], at_target->point[2]);
    EXPECT_NEAR(view_.depth(target_point), view_.depth(view_.target), 1e-4f);
    // A click is not a stroke.
    EXPECT_FALSE(stroke_plane(view_, centre, centre + glm::vec2(1.0f, 1.0f), hit->point));
}

TEST_F(Picking, ThePinBrushTakesTheSurfaceVerticesWithinItsRadius) {
    const glm::vec2 pixel = centre_pixel();
    const std::optional<SurfaceHit> hit = picker_.pick(view_.ray(pixel));
    ASSERT_TRUE(hit.has_value());
    const std::vector<Index> all =
        brush_vertices(view_, *hit, pixel, 1000.0f, picker_.positions(), scene_.surface);
    EXPECT_EQ(all.size(), scene_.surface.mesh_vertex.size());
    const std::vector<Index> few =
        brush_vertices(view_, *hit, pixel, 120.0f, picker_.positions(), scene_.surface);
    EXPECT_GT(few.size(), 0u);
    EXPECT_LT(few.size(), all.size());
    // Each is a surface vertex near the hit.
    for (Index v : few) {
        const Vec3& x = scene_.mesh.positions[static_cast<std::size_t>(v)];
        EXPECT_LT(glm::length(to_glm(x) - hit->point), 1.0f) << v;
    }
}

} // namespace
} // namespace edn
