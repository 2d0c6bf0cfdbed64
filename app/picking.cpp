#include "picking.hpp"

#include <algorithm>
#include <cmath>
#include <glm/common.hpp>
#include <glm/geometric.hpp>
#include <glm/matrix.hpp>
#include <limits>

namespace edn {
namespace {

/// Leaves hold at most this many triangles (a few cheap tests beat another box test).
constexpr Index kLeafSize = 4;

/// Slab test: does the ray meet the box before `t_max`?
bool hits_box(const Ray& ray, const glm::vec3& inverse_direction, const glm::vec3& lower,
              const glm::vec3& upper, float t_max) {
    float t0 = 0.0f;
    float t1 = t_max;
    for (int axis = 0; axis < 3; ++axis) {
        float near_t = (lower[axis] - ray.origin[axis]) * inverse_direction[axis];
        float far_t = (upper[axis] - ray.origin[axis]) * inverse_direction[axis];
        if (near_t > far_t) std::swap(near_t, far_t);
        // NaN (0 * inf on a slab boundary) compares false and leaves the interval unchanged.
        if (near_t > t0) t0 = near_t;
        if (far_t < t1) t1 = far_t;
        if (t0 > t1) return false;
    }
    return true;
}

} // namespace

Ray pixel_ray(const glm::mat4& view_projection, const glm::vec2& pixel, const glm::vec2& viewport) {
    const glm::mat4 inverse = glm::inverse(view_projection);
    const float x = 2.0f * pixel.x / std::max(viewport.x, 1.0f) - 1.0f;
    const float y = 1.0f - 2.0f * pixel.y / std::max(viewport.y, 1.0f);
    glm::vec4 near_point = inverse * glm::vec4(x, y, -1.0f, 1.0f);
    glm::vec4 far_point = inverse * glm::vec4(x, y, 1.0f, 1.0f);
    near_point /= near_point.w;
    far_point /= far_point.w;
    Ray ray;
    ray.origin = glm::vec3(near_point);
    ray.direction = glm::normalize(glm::vec3(far_point) - glm::vec3(near_point));
    return ray;
}

std::optional<glm::vec2> project_to_pixel(const glm::mat4& view_projection, const glm::vec3& point,
                                          const glm::vec2& viewport) {
    const glm::vec4 clip = view_projection * glm::vec4(point, 1.0f);
    if (clip.w <= 0.0f) return std::nullopt;
    const glm::vec3 ndc = glm::vec3(clip) / clip.w;
    return glm::vec2((ndc.x + 1.0f) * 0.5f * viewport.x, (1.0f - ndc.y) * 0.5f * viewport.y);
}

std::optional<SurfaceHit> intersect_triangle(const Ray& ray, const glm::vec3& a, const glm::vec3& b,
                                             const glm::vec3& c) {
    const glm::vec3 edge1 = b - a;
    const glm::vec3 edge2 = c - a;
    const glm::vec3 p = glm::cross(ray.direction, edge2);
    const float determinant = glm::dot(edge1, p);
    // Relative threshold: the scale of the scene must not decide what counts as parallel.
    const float scale = glm::length(edge1) * glm::length(edge2);
    if (std::abs(determinant) <= 1e-8f * scale || scale == 0.0f) return std::nullopt;
    const float inverse = 1.0f / determinant;
    const glm::vec3 s = ray.origin - a;
    const float u = glm::dot(s, p) * inverse;
    if (u < 0.0f || u > 1.0f) return std::nullopt;
    const glm::vec3 q = glm::cross(s, edge1);
    const float v = glm::dot(ray.direction, q) * inverse;
    if (v < 0.0f || u + v > 1.0f) return std::nullopt;
    const float t = glm::dot(edge2, q) * inverse;
    if (t < 0.0f) return std::nullopt;
    SurfaceHit hit;
    hit.t = t;
    hit.barycentric = glm::vec3(1.0f - u - v, u, v);
    hit.point = ray.origin + t * ray.direction;
    return hit;
}

void TriangleBvh::build(const std::vector<glm::vec3>& positions,
                        const std::vector<Tri>& triangles) {
    triangles_ = triangles;
    nodes_.clear();
    order_.resize(triangles.size());
    for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<Index>(i);
    if (triangles.empty()) return;
    std::vector<glm::vec3> centroids(triangles.size());
    for (std::size_t i = 0; i < triangles.size(); ++i) {
        const Tri& tri = triangles[i];
        centroids[i] = (positions[static_cast<std::size_t>(tri[0])] +
                        positions[static_cast<std::size_t>(tri[1])] +
                        positions[static_cast<std::size_t>(tri[2])]) /
                       3.0f;
    }
    nodes_.reserve(2 * triangles.size() / static_cast<std::size_t>(kLeafSize) + 2);
    build_node(centroids, 0, static_cast<Index>(triangles.size()));
    refit(positions);
}

Index TriangleBvh::build_node(const std::vector<glm::vec3>& centroids, Index first, Index count) {
    const Index id = static_cast<Index>(nodes_.size());
    nodes_.push_back(Node{});
    if (count <= kLeafSize) {
        nodes_[static_cast<std::size_t>(id)].first = first;
        nodes_[static_cast<std::size_t>(id)].count = count;
        return id;
    }
    glm::vec3 lower(std::numeric_limits<float>::max());
    glm::vec3 upper(std::numeric_limits<float>::lowest());
    for (Index i = first; i < first + count; ++i) {
        lower = glm::min(lower,
                         centroids[static_cast<std::size_t>(order_[static_cast<std::size_t>(i)])]);
        upper = glm::max(upper,
                         centroids[static_cast<std::size_t>(order_[static_cast<std::size_t>(i)])]);
    }
    const glm::vec3 extent = upper - lower;
    const int axis =
        extent.x >= extent.y && extent.x >= extent.z ? 0 : (extent.y >= extent.z ? 1 : 2);
    const Index half = count / 2;
    std::nth_element(order_.begin() + first, order_.begin() + first + half,
                     order_.begin() + first + count, [&](Index a, Index b) {
                         return centroids[static_cast<std::size_t>(a)][axis] <
                                centroids[static_cast<std::size_t>(b)][axis];
                     });
    const Index left = build_node(centroids, first, half);
    const Index right = build_node(centroids, first + half, count - half);
    nodes_[static_cast<std::size_t>(id)].left = left;
    nodes_[static_cast<std::size_t>(id)].right = right;
    return id;
}

void TriangleBvh::refit(const std::vector<glm::vec3>& positions) {
    // Children have larger ids than their parent, so one backward sweep sees children first.
    for (std::size_t n = nodes_.size(); n-- > 0;) {
        Node& node = nodes_[n];
        if (node.left < 0) {
            node.lower = glm::vec3(std::numeric_limits<float>::max());
            node.upper = glm::vec3(std::numeric_limits<float>::lowest());
            for (Index i = node.first; i < node.first + node.count; ++i) {
                for (Index v :
                     triangles_[static_cast<std::size_t>(order_[static_cast<std::size_t>(i)])]) {
                    node.lower = glm::min(node.lower, positions[static_cast<std::size_t>(v)]);
                    node.upper = glm::max(node.upper, positions[static_cast<std::size_t>(v)]);
                }
            }
        } else {
            const Node& left = nodes_[static_cast<std::size_t>(node.left)];
            const Node& right = nodes_[static_cast<std::size_t>(node.right)];
            node.lower = glm::min(left.lower, right.lower);
            node.upper = glm::max(left.upper, right.upper);
        }
    }
}

std::optional<SurfaceHit> TriangleBvh::intersect(const Ray& ray,
                                                 const std::vector<glm::vec3>& positions) const {
    if (nodes_.empty()) return std::nullopt;
    const glm::vec3 inverse_direction(1.0f / ray.direction.x, 1.0f / ray.direction.y,
                                      1.0f / ray.direction.z);
    std::optional<SurfaceHit> best;
    float best_t = std::numeric_limits<float>::max();
    std::vector<Index> stack{0};
    while (!stack.empty()) {
        const Node& node = nodes_[static_cast<std::size_t>(stack.back())];
        stack.pop_back();
        if (!hits_box(ray, inverse_direction, node.lower, node.upper, best_t)) continue;
        if (node.left >= 0) {
            stack.push_back(node.left);
            stack.push_back(node.right);
            continue;
        }
        for (Index i = node.first; i < node.first + node.count; ++i) {
            const Index triangle = order_[static_cast<std::size_t>(i)];
            const Tri& tri = triangles_[static_cast<std::size_t>(triangle)];
            auto hit = intersect_triangle(ray, positions[static_cast<std::size_t>(tri[0])],
                                          positions[static_cast<std::size_t>(tri[1])],
                                          positions[static_cast<std::size_t>(tri[2])]);
            if (hit && hit->t < best_t) {
                best_t = hit->t;
                hit->triangle = triangle;
                best = hit;
            }
        }
    }
    return best;
}

glm::vec3 ViewState::forward() const {
    return -glm::vec3(view[0][2], view[1][2], view[2][2]);
}

Ray ViewState::ray(const glm::vec2& pixel) const {
    return pixel_ray(view_projection, pixel, viewport);
}

float ViewState::depth(const glm::vec3& point) const {
    return glm::dot(point - eye, forward());
}

std::optional<glm::vec3> ViewState::at_depth(const glm::vec2& pixel, float target_depth) const {
    const Ray r = ray(pixel);
    const glm::vec3 ahead = forward();
    const float along = glm::dot(r.direction, ahead);
    if (along <= 1e-6f) return std::nullopt;
    return r.origin + ((target_depth - glm::dot(r.origin - eye, ahead)) / along) * r.direction;
}

void SurfacePicker::build(const std::vector<glm::vec3>& positions,
                          const std::vector<Tri>& triangles) {
    positions_ = positions;
    bvh_.build(positions_, triangles);
    dirty_ = false;
    stale_ = false;
}

void SurfacePicker::clear() {
    positions_.clear();
    bvh_ = TriangleBvh();
    dirty_ = false;
    stale_ = false;
}

void SurfacePicker::moved() {
    stale_ = false;
    dirty_ = true;
}

std::optional<SurfaceHit> SurfacePicker::pick(const Ray& ray) {
    if (bvh_.empty()) return std::nullopt;
    if (dirty_) {
        bvh_.refit(positions_);
        dirty_ = false;
    }
    return bvh_.intersect(ray, positions_);
}

} // namespace edn
