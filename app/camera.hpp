#pragma once
/// Orbit camera: rotates around a target point, pans in the view plane, zooms along the view
/// direction. +z is up (the project's convention, see assets/README.md).

#include <glm/mat4x4.hpp>
#include <glm/vec2.hpp>
#include <glm/vec3.hpp>

namespace edn {

/// Orbit/pan/zoom camera with a vertical field of view.
class Camera {
public:
    /// Frames the axis-aligned box [lower, upper] and remembers it for reset().
    void fit(const glm::vec3& lower, const glm::vec3& upper);
    /// Default viewing angles, framing the last fitted box.
    void reset();
    /// Rotates around the target by a mouse drag of `delta` pixels.
    void orbit(const glm::vec2& delta);
    /// Moves the target in the view plane so that the point under the mouse follows a drag of
    /// `delta` pixels in a viewport `viewport_height` pixels high.
    void pan(const glm::vec2& delta, int viewport_height);
    /// Moves towards (steps > 0) or away from the target; one wheel step is 10 %.
    void zoom(float steps);

    /// World-to-view transform.
    glm::mat4 view() const;
    /// Perspective projection for `aspect` = width / height; near/far follow the distance.
    glm::mat4 projection(float aspect) const;
    /// Camera position in world space.
    glm::vec3 eye() const;
    /// The point the camera orbits around.
    const glm::vec3& target() const { return target_; }

private:
    glm::vec3 direction() const; // unit vector from target to eye

    glm::vec3 target_{0.0f};
    float distance_ = 3.0f;
    float yaw_ = -2.5f;       // radians around +z, from +x
    float pitch_ = 0.35f;     // radians above the xy plane
    float fov_y_ = 0.785398f; // 45 degrees
    float scene_radius_ = 1.0f;
    glm::vec3 fit_lower_{-1.0f};
    glm::vec3 fit_upper_{1.0f};
};

} // namespace edn
