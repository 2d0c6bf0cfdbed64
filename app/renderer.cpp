#include "renderer.hpp"

#include "camera.hpp"
#include "colormap.hpp"
#include "core/error.hpp"
#include "gl_check.hpp"

#include <algorithm>
#include <cmath>
#include <glm/geometric.hpp>
#include <glm/gtc/type_ptr.hpp>

namespace edn {
namespace {
/// Surface vertex layout: position (3), normal (3), colour-map coordinate (1).
constexpr int kFloatsPerVertex = 7;
} // namespace

void compute_vertex_normals(const std::vector<glm::vec3>& positions,
                            const std::vector<Tri>& triangles, std::vector<glm::vec3>& normals) {
    normals.assign(positions.size(), glm::vec3(0.0f));
    for (const Tri& tri : triangles) {
        const glm::vec3& a = positions[static_cast<std::size_t>(tri[0])];
        const glm::vec3& b = positions[static_cast<std::size_t>(tri[1])];
        const glm::vec3& c = positions[static_cast<std::size_t>(tri[2])];
        // The unnormalised cross product weights each face by twice its area.
        const glm::vec3 face_normal = glm::cross(b - a, c - a);
        for (Index v : tri) normals[static_cast<std::size_t>(v)] += face_normal;
    }
    for (glm::vec3& n : normals) {
        const float length = glm::length(n);
        n = length > 0.0f ? n / length : glm::vec3(0.0f);
    }
}

Renderer::Renderer() {
    glGenVertexArrays(1, &surface_vao_);
    glGenBuffers(1, &surface_vbo_);
    glGenBuffers(1, &surface_ebo_);
    glBindVertexArray(surface_vao_);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, surface_ebo_);
    glEnableVertexAttribArray(0);
    glEnableVertexAttribArray(1);
    glEnableVertexAttribArray(2);

    glGenVertexArrays(1, &pin_vao_);
    glGenBuffers(1, &pin_ebo_);
    glBindVertexArray(pin_vao_);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, pin_ebo_);
    glEnableVertexAttribArray(0);
    bind_surface_attributes(surface_vbo_);

    glGenVertexArrays(1, &marker_vao_);
    glGenBuffers(1, &marker_vbo_);
    glBindVertexArray(marker_vao_);
    glBindBuffer(GL_ARRAY_BUFFER, marker_vbo_);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), nullptr);

    glGenVertexArrays(1, &grid_vao_);
    glGenBuffers(1, &grid_vbo_);
    glBindVertexArray(grid_vao_);
    glBindBuffer(GL_ARRAY_BUFFER, grid_vbo_);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 3 * sizeof(float), nullptr);
    glBindVertexArray(0);
    detail::check_gl_error("creating the renderer's buffers", __FILE__, __LINE__);
}

Renderer::~Renderer() {
    release_offscreen();
    glDeleteBuffers(1, &marker_vbo_);
    glDeleteVertexArrays(1, &marker_vao_);
    glDeleteBuffers(1, &pin_ebo_);
    glDeleteVertexArrays(1, &pin_vao_);
    glDeleteBuffers(1, &grid_vbo_);
    glDeleteVertexArrays(1, &grid_vao_);
    glDeleteBuffers(1, &surface_ebo_);
    glDeleteBuffers(1, &surface_vbo_);
    glDeleteVertexArrays(1, &surface_vao_);
}

void Renderer::load_shaders(const std::filesystem::path& shader_dir) {
    // Compile both before replacing either, so a failure leaves a working set in place.
    ShaderProgram surface = ShaderProgram::load(shader_dir, "surface.vert", "surface.frag");
    ShaderProgram line = ShaderProgram::load(shader_dir, "line.vert", "line.frag");
    surface_program_ = std::move(surface);
    line_program_ = std::move(line);
}

void Renderer::bind_surface_attributes(unsigned vbo) {
    glBindVertexArray(surface_vao_);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, kFloatsPerVertex * sizeof(float), nullptr);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, kFloatsPerVertex * sizeof(float),
                          reinterpret_cast<const void*>(3 * sizeof(float)));
    glVertexAttribPointer(2, 1, GL_FLOAT, GL_FALSE, kFloatsPerVertex * sizeof(float),
                          reinterpret_cast<const void*>(6 * sizeof(float)));
    glBindVertexArray(pin_vao_);
    glBindBuffer(GL_ARRAY_BUFFER, vbo);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, kFloatsPerVertex * sizeof(float), nullptr);
    glBindVertexArray(0);
    bound_surface_vbo_ = vbo;
}

void Renderer::use_surface_buffer(unsigned vbo) {
    const unsigned target = vbo != 0 ? vbo : surface_vbo_;
    if (target != bound_surface_vbo_) bind_surface_attributes(target);
}

void Renderer::set_surface(const std::vector<Tri>& triangles, std::size_t num_vertices,
                           const glm::vec3& lower, const glm::vec3& upper) {
    use_surface_buffer(0);
    triangles_ = triangles;
    surface_vertices_ = num_vertices;
    surface_indices_ = 3 * triangles.size();
    pinned_.clear(); // indices of the old surface
    glBindVertexArray(surface_vao_);
    EDN_GL_CHECK(glBufferData(GL_ELEMENT_ARRAY_BUFFER,
                              static_cast<GLsizeiptr>(triangles.size() * sizeof(Tri)),
                              triangles.data(), GL_STATIC_DRAW));
    glBindBuffer(GL_ARRAY_BUFFER, surface_vbo_);
    EDN_GL_CHECK(glBufferData(
        GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(num_vertices * kFloatsPerVertex * sizeof(float)),
        nullptr, GL_DYNAMIC_DRAW));
    glBindVertexArray(0);

    grid_lower_ = lower;
    grid_upper_ = upper;
    set_grid_height(lower.z); // +z is up: the grid is the floor under the mesh
}

void Renderer::set_grid_height(float z) {
    const glm::vec3 lower = grid_lower_, upper = grid_upper_;
    // Grid on the plane z, about three bounding radii across, with a round spacing of roughly
    // a tenth of the mesh size.
    const float radius = std::max(0.5f * glm::length(upper - lower), 1e-6f);
    const float spacing = std::pow(10.0f, std::floor(std::log10(radius / 2.0f)));
    const int half_lines = static_cast<int>(std::ceil(3.0f * radius / spacing));
    const float half_extent = half_lines * spacing;
    const glm::vec3 centre = 0.5f * (lower + upper);
    const float cx = std::round(centre.x / spacing) * spacing;
    const float cy = std::round(centre.y / spacing) * spacing;
    std::vector<float> lines;
    lines.reserve(static_cast<std::size_t>(2 * half_lines + 1) * 12);
    for (int i = -half_lines; i <= half_lines; ++i) {
        const float offset = i * spacing;
        lines.insert(lines.end(),
                     {cx + offset, cy - half_extent, z, cx + offset, cy + half_extent, z});
        lines.insert(lines.end(),
                     {cx - half_extent, cy + offset, z, cx + half_extent, cy + offset, z});
    }
    grid_vertices_ = lines.size() / 3;
    glBindBuffer(GL_ARRAY_BUFFER, grid_vbo_);
    EDN_GL_CHECK(glBufferData(GL_ARRAY_BUFFER,
                              static_cast<GLsizeiptr>(lines.size() * sizeof(float)), lines.data(),
                              GL_STATIC_DRAW));
}

void Renderer::clear_surface() {
    triangles_.clear();
    surface_vertices_ = 0;
    surface_indices_ = 0;
    grid_vertices_ = 0;
    pinned_.clear();
    marker_drag_ = 0;
}

void Renderer::update_surface(const std::vector<glm::vec3>& positions,
                              const std::vector<float>& scalars) {
    use_surface_buffer(0);
    EDN_ASSERT(positions.size() == surface_vertices_,
               "update_surface: " << positions.size() << " positions for " << surface_vertices_
                                  << " surface vertices");
    compute_vertex_normals(positions, triangles_, normals_);
    EDN_ASSERT(scalars.empty() || scalars.size() == positions.size(),
               "update_surface: " << scalars.size() << " scalars for " << positions.size()
                                  << " positions");
    interleaved_.resize(kFloatsPerVertex * positions.size());
    for (std::size_t i = 0; i < positions.size(); ++i) {
        float* out = interleaved_.data() + kFloatsPerVertex * i;
        std::copy_n(glm::value_ptr(positions[i]), 3, out);
        std::copy_n(glm::value_ptr(normals_[i]), 3, out + 3);
        out[6] = scalars.empty() ? 0.0f : scalars[i];
    }
    glBindBuffer(GL_ARRAY_BUFFER, surface_vbo_);
    glBufferSubData(GL_ARRAY_BUFFER, 0,
                    static_cast<GLsizeiptr>(interleaved_.size() * sizeof(float)),
                    interleaved_.data());
}

void Renderer::upload_surface_vertices(const std::vector<float>& vertices) {
    use_surface_buffer(0);
    EDN_ASSERT(vertices.size() == kFloatsPerVertex * surface_vertices_,
               "upload_surface_vertices: " << vertices.size() << " floats for " << surface_vertices_
                                           << " surface vertices");
    glBindBuffer(GL_ARRAY_BUFFER, surface_vbo_);
    glBufferSubData(GL_ARRAY_BUFFER, 0, static_cast<GLsizeiptr>(vertices.size() * sizeof(float)),
                    vertices.data());
}

void Renderer::set_pinned_vertices(const std::vector<unsigned>& surface_vertices) {
    if (surface_vertices == pinned_) return;
    pinned_ = surface_vertices;
    glBindVertexArray(pin_vao_);
    EDN_GL_CHECK(glBufferData(GL_ELEMENT_ARRAY_BUFFER,
                              static_cast<GLsizeiptr>(pinned_.size() * sizeof(unsigned)),
                              pinned_.empty() ? nullptr : pinned_.data(), GL_DYNAMIC_DRAW));
    glBindVertexArray(0);
}

void Renderer::update_markers(const Markers& markers) {
    marker_drag_ = markers.drag.size();
    glBindBuffer(GL_ARRAY_BUFFER, marker_vbo_);
    EDN_GL_CHECK(glBufferData(
        GL_ARRAY_BUFFER, static_cast<GLsizeiptr>(markers.drag.size() * sizeof(glm::vec3)),
        markers.drag.empty() ? nullptr : markers.drag.data(), GL_STREAM_DRAW));
}

void Renderer::release_offscreen() {
    if (fbo_ != 0) glDeleteFramebuffers(1, &fbo_);
    if (fbo_color_ != 0) glDeleteRenderbuffers(1, &fbo_color_);
    if (fbo_depth_ != 0) glDeleteRenderbuffers(1, &fbo_depth_);
    fbo_ = fbo_color_ = fbo_depth_ = 0;
    fbo_size_ = {0, 0};
}

void Renderer::resize_offscreen(const glm::ivec2& size) {
    if (fbo_ != 0 && fbo_size_ == size) return;
    release_offscreen();
    glGenFramebuffers(1, &fbo_);
    glGenRenderbuffers(1, &fbo_color_);
    glGenRenderbuffers(1, &fbo_depth_);
    glBindRenderbuffer(GL_RENDERBUFFER, fbo_color_);
    EDN_GL_CHECK(glRenderbufferStorage(GL_RENDERBUFFER, GL_RGBA8, size.x, size.y));
    glBindRenderbuffer(GL_RENDERBUFFER, fbo_depth_);
    EDN_GL_CHECK(glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH24_STENCIL8, size.x, size.y));
    glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, fbo_color_);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_STENCIL_ATTACHMENT, GL_RENDERBUFFER,
                              fbo_depth_);
    const GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    EDN_VERIFY(status == GL_FRAMEBUFFER_COMPLETE, ErrorCode::Device,
               "offscreen framebuffer of " << size.x << " x " << size.y
                                           << " pixels incomplete (status 0x" << std::hex << status
                                           << ")");
    fbo_size_ = size;
}

void Renderer::begin_frame(const glm::ivec2& size, bool offscreen, const RenderSettings& settings) {
    offscreen_ = offscreen;
    target_size_ = size;
    if (offscreen) {
        resize_offscreen(size);
        glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
    } else {
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
    }
    glViewport(0, 0, size.x, size.y);
    glClearColor(settings.background.r, settings.background.g, settings.background.b, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
}

void Renderer::draw_scene(const Camera& camera, const RenderSettings& settings) {
    if (!has_shaders() || target_size_.x <= 0 || target_size_.y <= 0) return;
    const glm::mat4 view = camera.view();
    const glm::mat4 projection =
        camera.projection(static_cast<float>(target_size_.x) / static_cast<float>(target_size_.y));
    const glm::mat4 view_projection = projection * view;

    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glDisable(GL_CULL_FACE); // back faces are shaded darker instead (cuts, inverted elements)
    glDisable(GL_BLEND);

    line_program_.use();
    glUniformMatrix4fv(line_program_.uniform("u_view_projection"), 1, GL_FALSE,
                       glm::value_ptr(view_projection));
    if (settings.show_grid && grid_vertices_ > 0) {
        glUniform4fv(line_program_.uniform("u_color"), 1, glm::value_ptr(settings.grid_color));
        glBindVertexArray(grid_vao_);
        glDrawArrays(GL_LINES, 0, static_cast<GLsizei>(grid_vertices_));
    }

    if (surface_indices_ > 0) {
        surface_program_.use();
        glUniformMatrix4fv(surface_program_.uniform("u_view"), 1, GL_FALSE, glm::value_ptr(view));
        glUniformMatrix4fv(surface_program_.uniform("u_projection"), 1, GL_FALSE,
                           glm::value_ptr(projection));
        glUniform3fv(surface_program_.uniform("u_color"), 1,
                     glm::value_ptr(settings.surface_color));
        glUniform1i(surface_program_.uniform("u_use_colormap"), settings.use_colormap ? 1 : 0);
        glUniform1f(surface_program_.uniform("u_scalar_min"), settings.scalar_min);
        glUniform1f(surface_program_.uniform("u_scalar_scale"), settings.scalar_scale);
        glUniform3fv(surface_program_.uniform("u_colormap"), static_cast<GLsizei>(kColormap.size()),
                     glm::value_ptr(kColormap[0]));
        glBindVertexArray(surface_vao_);
        // Push the filled surface back a little so the wireframe drawn over it wins the depth test.
        glEnable(GL_POLYGON_OFFSET_FILL);
        glPolygonOffset(1.0f, 1.0f);
        glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(surface_indices_), GL_UNSIGNED_INT,
                       nullptr);
        glDisable(GL_POLYGON_OFFSET_FILL);

        if (settings.show_wireframe) {
            line_program_.use();
            glUniform4fv(line_program_.uniform("u_color"), 1,
                         glm::value_ptr(settings.wireframe_color));
            glPolygonMode(GL_FRONT_AND_BACK, GL_LINE);
            glDrawElements(GL_TRIANGLES, static_cast<GLsizei>(surface_indices_), GL_UNSIGNED_INT,
                           nullptr);
            glPolygonMode(GL_FRONT_AND_BACK, GL_FILL);
        }
    }
    if ((!pinned_.empty() && surface_indices_ > 0) || marker_drag_ > 0) {
        line_program_.use();
        glPointSize(settings.point_size);
        // Pins sit on the surface: LEQUAL and the fill's polygon offset keep them visible.
        glDepthFunc(GL_LEQUAL);
        if (!pinned_.empty() && surface_indices_ > 0) {
            glUniform4fv(line_program_.uniform("u_color"), 1, glm::value_ptr(settings.pin_color));
            glBindVertexArray(pin_vao_);
            glDrawElements(GL_POINTS, static_cast<GLsizei>(pinned_.size()), GL_UNSIGNED_INT,
                           nullptr);
        }
        glBindVertexArray(marker_vao_);
        if (marker_drag_ == 2) {
            // The spring is drawn through the mesh: the user must see where it pulls.
            glDisable(GL_DEPTH_TEST);
            glUniform4fv(line_program_.uniform("u_color"), 1, glm::value_ptr(settings.drag_color));
            glDrawArrays(GL_LINES, 0, 2);
            glPointSize(1.5f * settings.point_size);
            glDrawArrays(GL_POINTS, 0, 2);
        }
        glDepthFunc(GL_LESS);
    }
    glBindVertexArray(0);
    glDisable(GL_DEPTH_TEST);
}

Image Renderer::read_pixels() const {
    Image image;
    image.width = target_size_.x;
    image.height = target_size_.y;
    image.rgb.resize(static_cast<std::size_t>(image.width) * image.height * 3);
    std::vector<std::uint8_t> bottom_up(image.rgb.size());
    glBindFramebuffer(GL_READ_FRAMEBUFFER, offscreen_ ? fbo_ : 0);
    glReadBuffer(offscreen_ ? GL_COLOR_ATTACHMENT0 : GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    EDN_GL_CHECK(
        glReadPixels(0, 0, image.width, image.height, GL_RGB, GL_UNSIGNED_BYTE, bottom_up.data()));
    // GL rows start at the bottom; images start at the top.
    const std::size_t row = static_cast<std::size_t>(image.width) * 3;
    for (int y = 0; y < image.height; ++y) {
        std::copy_n(bottom_up.data() + static_cast<std::size_t>(image.height - 1 - y) * row, row,
                    image.rgb.data() + static_cast<std::size_t>(y) * row);
    }
    return image;
}

} // namespace edn
