#pragma once
/// The OpenGL context the app draws into: a GLFW window, or a headless EGL context that needs no
/// display (the app then renders into an FBO). GL functions are loaded through GLAD on creation.

#include <glm/vec2.hpp>
#include <memory>
#include <string>

struct GLFWwindow;

namespace edn {

/// What context to create.
struct GlContextOptions {
    int width = 1280;                ///< window or offscreen framebuffer width in pixels
    int height = 720;                ///< window or offscreen framebuffer height in pixels
    bool headless = false;           ///< EGL without a window instead of a GLFW window
    std::string title = "elastodyn"; ///< window title
};

/// One interface over a window and a headless context, so the frame loop is the same for both.
class GlContext {
public:
    virtual ~GlContext() = default;
    /// True for the EGL context without a window: render into an FBO.
    virtual bool headless() const = 0;
    /// The GLFW window for the ImGui platform backend; nullptr when headless.
    virtual GLFWwindow* window() const = 0;
    /// Processes pending window events (nothing to do headless).
    virtual void poll_events() = 0;
    /// True once the user asked the window to close.
    virtual bool should_close() const = 0;
    /// Presents the back buffer (nothing to do headless).
    virtual void swap_buffers() = 0;
    /// Size in pixels of the framebuffer to render into.
    virtual glm::ivec2 framebuffer_size() const = 0;
    /// How the context was made, e.g. "GLFW window", "EGL device 0", "EGL surfaceless".
    virtual std::string platform() const = 0;
};

/// Creates the window or headless context, makes it current and loads GL (4.5 core, else 3.3
/// core). Throws edn::Error (Device) with a one-line message; without a display the message
/// suggests --headless.
std::unique_ptr<GlContext> create_gl_context(const GlContextOptions& options);

} // namespace edn
