#pragma once
/// Input tools of the app that act on the simulation: the mouse drag spring (grab a surface
/// point or a vertex, pull it at its view depth) and the pin brush (surface vertices within a
/// screen-space radius). Mouse and keyboard dispatch is App::handle_input (app/input.cpp).

#include "picking.hpp"
#include "scene.hpp"
#include "sim_driver.hpp"

#include <glm/vec2.hpp>
#include <glm/vec3.hpp>
#include <optional>
#include <vector>

namespace edn {

/// The drag spring the mouse (or a script) pulls with.
class DragTool {
public:
    /// Grabs the surface point `hit` (a triangle of `scene`'s surface) with `stiffness` [N/m]
    /// and the vertex nodes within `radius` [m] of it in rest space (edn::make_drag: they follow
    /// the target, less with distance; radius 0: the point alone).
    void begin_at(SimDriver& sim, const Scene& scene, const SurfaceHit& hit, const ViewState& view,
                  double stiffness, double radius);
    /// Grabs mesh vertex `vertex` (and its neighbourhood as begin_at); throws
    /// edn::Error(Usage) when it is out of range.
    void begin_vertex(SimDriver& sim, Index vertex, const ViewState& view, double stiffness,
                      double radius);
    /// Moves the target under `pixel`, at the grabbed point's view depth.
    void move(SimDriver& sim, const ViewState& view, const glm::vec2& pixel);
    /// The target under `pixel` at the grabbed point's view depth (nothing when no drag is in
    /// progress or the pixel's ray misses that depth); reads no simulation.
    std::optional<glm::vec3> target_at(const ViewState& view, const glm::vec2& pixel) const;
    /// Moves the target to world point `target` (touches only `sim`: the simulation thread
    /// calls it with the latest cursor target).
    static void move_to(SimDriver& sim, const glm::vec3& target);
    /// Lets go (and removes the spring from `sim` when there is one).
    void end(SimDriver* sim);
    /// Whether a drag is in progress.
    bool active() const { return dragging_; }

private:
    bool dragging_ = false;
    float depth_ = 0.0f; // view depth of the grabbed point
};

/// The current position of the drag spring's grabbed point.
glm::vec3 grabbed_point(const SimDriver& sim);

/// Mesh vertices of the surface points within the pin brush: a sphere around `hit` whose radius
/// is `radius_pixels` at the hit's depth (`pixel` is where the hit was picked).
std::vector<Index> brush_vertices(const ViewState& view, const SurfaceHit& hit,
                                  const glm::vec2& pixel, float radius_pixels,
                                  const std::vector<glm::vec3>& surface_positions,
                                  const BoundarySurface& surface);

/// `v` as a float vector.
glm::vec3 to_glm(const Vec3& v);

} // namespace edn
