#pragma once
/// Mouse picking on the deformed surface: camera rays through pixels, and a bounding volume
/// hierarchy over the boundary triangles that is built once per topology and refitted to the
/// deformed positions before each query.

#include "core/types.hpp"

#include <glm/mat4x4.hpp>
#include <glm/vec2.hpp>
#include <glm/vec3.hpp>
#include <optional>
#include <vector>

namespace edn {

/// A half-line origin + t * direction, t >= 0.
struct Ray {
    glm::vec3 origin{0.0f};    ///< world space
    glm::vec3 direction{0.0f}; ///< world space, unit length
};

/// The ray through `pixel` (origin top-left, in the units of `viewport`) for the given
/// view-projection matrix.
Ray pixel_ray(const glm::mat4& view_projection, const glm::vec2& pixel, const glm::vec2& viewport);

/// Window position (origin top-left) of world point `point`; nullopt behind the camera.
std::optional<glm::vec2> project_to_pixel(const glm::mat4& view_projection, const glm::vec3& point,
                                          const glm::vec2& viewport);

/// Where a ray meets the surface.
struct SurfaceHit {
    Index triangle = -1;         ///< surface triangle index
    float t = 0.0f;              ///< ray parameter of the hit
    glm::vec3 barycentric{0.0f}; ///< weights of the triangle's three vertices
    glm::vec3 point{0.0f};       ///< world position
};

/// Ray/triangle intersection (Moller-Trumbore, both sides); nullopt for a miss or a parallel ray.
std::optional<SurfaceHit> intersect_triangle(const Ray& ray, const glm::vec3& a, const glm::vec3& b,
                                             const glm::vec3& c);

/// Binary BVH over triangles: topology built once (median splits), boxes refitted per frame.
class TriangleBvh {
public:
    /// Builds the hierarchy for `triangles` over `positions`.
    void build(const std::vector<glm::vec3>& positions, const std::vector<Tri>& triangles);
    /// Recomputes every box for new positions of the same vertices (O(#triangles)).
    void refit(const std::vector<glm::vec3>& positions);
    /// Nearest hit along the ray, or nullopt.
    std::optional<SurfaceHit> intersect(const Ray& ray,
                                        const std::vector<glm::vec3>& positions) const;
    /// True once built over a non-empty surface.
    bool empty() const { return nodes_.empty(); }

private:
    struct Node {
        glm::vec3 lower{0.0f};
        glm::vec3 upper{0.0f};
        Index left = -1; // children; -1 for a leaf
        Index right = -1;
        Index first = 0; // leaf: triangles order_[first, first + count)
        Index count = 0;
    };
    Index build_node(const std::vector<glm::vec3>& centroids, Index first, Index count);

    std::vector<Tri> triangles_;
    std::vector<Index> order_; // triangle ids, grouped by leaf
    std::vector<Node> nodes_;  // parents before children (refit runs backwards)
};

} // namespace edn
