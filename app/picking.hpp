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

/// The camera as picking and strokes need it (no GL): matrices, eye and window size.
struct ViewState {
    glm::mat4 view_projection{1.0f}; ///< projection * view
    glm::mat4 view{1.0f};            ///< world -> view
    glm::vec3 eye{0.0f};             ///< camera position
    glm::vec3 target{0.0f};          ///< orbit target
    glm::vec2 viewport{1.0f};        ///< window size in the units of pixels (origin top-left)

    /// Unit view direction (world).
    glm::vec3 forward() const;
    /// The ray through `pixel`.
    Ray ray(const glm::vec2& pixel) const;
    /// Distance of `point` along forward() from the eye (its view depth).
    float depth(const glm::vec3& point) const;
    /// Where the ray through `pixel` reaches view depth `depth`; nullopt when it points away.
    std::optional<glm::vec3> at_depth(const glm::vec2& pixel, float depth) const;
};

/// The deformed boundary surface as picking sees it: a host copy of the surface vertex
/// positions and a BVH over the triangles, refitted lazily when the positions moved. With
/// CUDA-GL interop the host copy lags behind the drawn surface (stale) until refreshed.
class SurfacePicker {
public:
    /// Takes new triangles and positions (a new scene or topology): builds the BVH.
    void build(const std::vector<glm::vec3>& positions, const std::vector<Tri>& triangles);
    /// Forgets the surface (no scene).
    void clear();
    /// The host copy of the surface vertex positions; call moved() after writing them.
    std::vector<glm::vec3>& positions() { return positions_; }
    /// The host copy (read only).
    const std::vector<glm::vec3>& positions() const { return positions_; }
    /// The positions were rewritten: fresh, and the BVH needs a refit before the next pick.
    void moved();
    /// The drawn surface moved without the host copy (interop): refresh before picking.
    void mark_stale() { stale_ = true; }
    /// Whether the host copy lags behind the drawn surface.
    bool stale() const { return stale_; }
    /// Nearest hit of `ray` on the surface (refits first when needed), or nullopt.
    std::optional<SurfaceHit> pick(const Ray& ray);
    /// True when there is no surface to pick.
    bool empty() const { return bvh_.empty(); }

private:
    std::vector<glm::vec3> positions_;
    TriangleBvh bvh_;
    bool dirty_ = false; // positions moved since the last refit
    bool stale_ = false; // the host copy is behind the drawn surface
};

} // namespace edn
