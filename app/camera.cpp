#include "camera.hpp"

#include <algorithm>
#include <cmath>
#include <glm/ext/matrix_clip_space.hpp>
#include <glm/ext/matrix_transform.hpp>
#include <glm/geometric.hpp>

namespace edn {
namespace {
// Eye in front of and to the left of models facing -x (the bunny), a little above them.
constexpr float kDefaultYaw = -2.5f;
constexpr float kDefaultPitch = 0.35f;
constexpr float kRadiansPerPixel = 0.008f;
constexpr float kMaxPitch = 1.55f; // just short of straight up/down, where lookAt degenerates
} // namespace

void Camera::fit(const glm::vec3& lower, const glm::vec3& upper) {
    fit_lower_ = lower;
    fit_upper_ = upper;
    target_ = 0.5f * (lower + upper);
    scene_radius_ = std::max(0.5f * glm::length(upper - lower), 1e-6f);
    // The bounding sphere fills the vertical field of view with a 10 % margin.
    distance_ = 1.1f * scene_radius_ / std::sin(0.5f * fov_y_);
}

void Camera::reset() {
    yaw_ = kDefaultYaw;
    pitch_ = kDefaultPitch;
    fit(fit_lower_, fit_upper_);
}

void Camera::orbit(const glm::vec2& delta) {
    yaw_ -= delta.x * kRadiansPerPixel;
    pitch_ = std::clamp(pitch_ + delta.y * kRadiansPerPixel, -kMaxPitch, kMaxPitch);
}

void Camera::pan(const glm::vec2& delta, int viewport_height) {
    // World units per pixel at the target's depth.
    const float scale = 2.0f * distance_ * std::tan(0.5f * fov_y_) /
                        static_cast<float>(std::max(viewport_height, 1));
    const glm::vec3 forward = -direction();
    const glm::vec3 right = glm::normalize(glm::cross(forward, glm::vec3(0.0f, 0.0f, 1.0f)));
    const glm::vec3 up = glm::cross(right, forward);
    target_ += scale * (-delta.x * right + delta.y * up);
}

void Camera::zoom(float steps) {
    distance_ =
        std::clamp(distance_ * std::pow(0.9f, steps), 1e-4f * scene_radius_, 1e3f * scene_radius_);
}

glm::vec3 Camera::direction() const {
    return {std::cos(pitch_) * std::cos(yaw_), std::cos(pitch_) * std::sin(yaw_), std::sin(pitch_)};
}

glm::vec3 Camera::eye() const {
    return target_ + distance_ * direction();
}

glm::mat4 Camera::view() const {
    return glm::lookAt(eye(), target_, glm::vec3(0.0f, 0.0f, 1.0f));
}

glm::mat4 Camera::projection(float aspect) const {
    const float near_plane = std::max(distance_ - 2.0f * scene_radius_, 1e-3f * distance_);
    const float far_plane = distance_ + 4.0f * scene_radius_ + 10.0f * near_plane;
    return glm::perspective(fov_y_, std::max(aspect, 1e-3f), near_plane, far_plane);
}

} // namespace edn
