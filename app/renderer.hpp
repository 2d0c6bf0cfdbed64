#pragma once
/// Draws the scene: the boundary surface with smooth normals, a ground grid and an optional
/// wireframe, into the window's back buffer or (headless) an offscreen framebuffer.

#include "core/types.hpp"
#include "png_writer.hpp"
#include "shader.hpp"

#include <filesystem>
#include <glm/vec2.hpp>
#include <glm/vec3.hpp>
#include <glm/vec4.hpp>
#include <vector>

namespace edn {

class Camera;

/// What to draw and in which colours; owned by the app, edited by the GUI.
struct RenderSettings {
    bool show_grid = true;                        ///< ground grid under the mesh
    bool show_wireframe = false;                  ///< surface edges on top of the shading
    glm::vec3 surface_color{0.95f, 0.60f, 0.25f}; ///< base colour of the surface
    glm::vec3 background{0.12f, 0.13f, 0.15f};    ///< clear colour
    glm::vec4 grid_color{0.36f, 0.37f, 0.40f, 1.0f};
    glm::vec4 wireframe_color{0.10f, 0.10f, 0.10f, 1.0f};
    bool use_colormap = false; ///< colour by the per-vertex scalar
    float scalar_min = 0.0f;   ///< scalar at colour-map coordinate 0
    float scalar_scale = 1.0f; ///< (scalar - scalar_min) times this: colour-map coordinate
    glm::vec4 pin_color{0.20f, 0.45f, 1.00f, 1.0f};  ///< pinned nodes
    glm::vec4 drag_color{1.00f, 0.95f, 0.30f, 1.0f}; ///< drag spring and handle
    float point_size = 6.0f;                         ///< pixels, pinned nodes and drag handle
};

/// Things drawn over the surface besides the pins (which come from the surface buffer).
struct Markers {
    std::vector<glm::vec3> drag; ///< empty, or {grabbed point, target}
};

/// Area-weighted vertex normals of a triangle surface (unit length; zero for unused vertices).
void compute_vertex_normals(const std::vector<glm::vec3>& positions,
                            const std::vector<Tri>& triangles, std::vector<glm::vec3>& normals);

/// Owns the GL objects of the scene. Needs a current GL context for its whole life.
class Renderer {
public:
    Renderer();
    ~Renderer();
    Renderer(const Renderer&) = delete;
    Renderer& operator=(const Renderer&) = delete;

    /// (Re)compiles the programs from `shader_dir`. On failure throws edn::Error naming the
    /// file and keeps the programs it had, so a broken edit does not blank the view.
    void load_shaders(const std::filesystem::path& shader_dir);
    /// True once a complete set of programs is loaded.
    bool has_shaders() const { return surface_program_.valid() && line_program_.valid(); }

    /// Sets the surface topology (#B triangles over #S surface vertices) and the grid under the
    /// box [lower, upper]. Positions come with update_surface.
    void set_surface(const std::vector<Tri>& triangles, std::size_t num_vertices,
                     const glm::vec3& lower, const glm::vec3& upper);
    /// Moves the grid to height z (the ground plane's; set_surface puts it under the mesh).
    void set_grid_height(float z);
    /// Removes the surface (empty scene).
    void clear_surface();
    /// Uploads #S surface positions, their smooth normals (recomputed here every call because
    /// the surface deforms) and #S colour scalars (empty: all 0; times
    /// RenderSettings::scalar_scale they are colour-map coordinates) with glBufferSubData.
    void update_surface(const std::vector<glm::vec3>& positions,
                        const std::vector<float>& scalars = {});
    /// Uploads #S surface vertices already interleaved (7 floats each: position, unit normal,
    /// scalar) with glBufferSubData: the curved surface, whose normals come from the geometry
    /// of the elements (curved_surface.hpp) instead of the triangles.
    void upload_surface_vertices(const std::vector<float>& vertices);
    /// The surface vertex buffer (#S x 7 floats: position, normal, scalar), for CUDA-GL interop,
    /// which writes it instead of update_surface. Reallocated by set_surface: register it again.
    unsigned surface_vertex_buffer() const { return surface_vbo_; }
    /// Draws the surface (and pin markers) from buffer `vbo` (same layout, #S vertices) instead
    /// of the renderer's own, e.g. the CUDA-written buffer of the external-memory interop path;
    /// 0 goes back to the own buffer (set_surface and update_surface do that themselves).
    void use_surface_buffer(unsigned vbo);
    /// Surface vertices drawn as pin markers (indices into the surface buffer, so the markers
    /// follow the surface whoever writes it). Uploaded only when the list changes.
    void set_pinned_vertices(const std::vector<unsigned>& surface_vertices);
    /// Uploads the markers drawn by the next draw_scene calls.
    void update_markers(const Markers& markers);

    /// Binds the target (offscreen FBO of `size` when `offscreen`, else the default framebuffer),
    /// sets the viewport and clears it.
    void begin_frame(const glm::ivec2& size, bool offscreen, const RenderSettings& settings);
    /// Draws grid, surface and wireframe as seen from `camera`.
    void draw_scene(const Camera& camera, const RenderSettings& settings);
    /// Reads the current target back (call before swapping buffers).
    Image read_pixels() const;

private:
    void resize_offscreen(const glm::ivec2& size);
    void release_offscreen();

    ShaderProgram surface_program_;
    ShaderProgram line_program_;

    unsigned surface_vao_ = 0;
    unsigned surface_vbo_ = 0;       // interleaved position, normal, scalar (7 floats per vertex)
    unsigned bound_surface_vbo_ = 0; // the buffer the surface and pin VAOs read from
    void bind_surface_attributes(unsigned vbo);
    unsigned surface_ebo_ = 0;
    std::size_t surface_vertices_ = 0;
    std::size_t surface_indices_ = 0;
    std::vector<Tri> triangles_;
    std::vector<glm::vec3> normals_; // scratch, reused every frame
    std::vector<float> interleaved_; // scratch, reused every frame

    unsigned pin_vao_ = 0; // the surface buffer's positions, indexed by pin_ebo_
    unsigned pin_ebo_ = 0;
    std::vector<unsigned> pinned_; // what pin_ebo_ holds

    unsigned marker_vao_ = 0;
    unsigned marker_vbo_ = 0; // the drag segment's two points
    std::size_t marker_drag_ = 0;

    unsigned grid_vao_ = 0;
    unsigned grid_vbo_ = 0;
    std::size_t grid_vertices_ = 0;
    glm::vec3 grid_lower_{0.0f}, grid_upper_{0.0f}; // the box the grid is sized for

    unsigned fbo_ = 0;
    unsigned fbo_color_ = 0;
    unsigned fbo_depth_ = 0;
    glm::ivec2 fbo_size_{0, 0};
    glm::ivec2 target_size_{0, 0};
    bool offscreen_ = false;
};

} // namespace edn
