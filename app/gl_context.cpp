#include "gl_context.hpp"

#include "core/error.hpp"

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <glad/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <array>
#include <utility>
#include <vector>

namespace edn {
namespace {

/// OpenGL versions to ask for, best first. Everything the app draws needs only 3.3 core (the
/// shaders are #version 330 core); 4.5 is preferred because later CUDA-GL interop and debug
/// output are better there, and llvmpipe and the NVIDIA driver both provide it.
constexpr std::array<std::pair<int, int>, 2> kGlVersions = {{{4, 5}, {3, 3}}};

// ---- GLFW window ---------------------------------------------------------------------------

/// Last message from GLFW's error callback; GLFW reports failures only through the callback.
std::string g_glfw_error;

void on_glfw_error(int code, const char* description) {
    g_glfw_error = description ? description : "unknown GLFW error " + std::to_string(code);
}

class WindowContext final : public GlContext {
public:
    explicit WindowContext(const GlContextOptions& options) {
        glfwSetErrorCallback(on_glfw_error);
        if (!glfwInit()) {
            EDN_THROW(ErrorCode::Device,
                      "cannot open a window (" << g_glfw_error << "); no display? use --headless");
        }
        for (auto [major, minor] : kGlVersions) {
            glfwDefaultWindowHints();
            glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, major);
            glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, minor);
            glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
            glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
            glfwWindowHint(GLFW_SAMPLES, 4);
            window_ = glfwCreateWindow(options.width, options.height, options.title.c_str(),
                                       nullptr, nullptr);
            if (window_) break;
        }
        if (!window_) {
            glfwTerminate();
            EDN_THROW(ErrorCode::Device,
                      "cannot create an OpenGL 3.3 core window (" << g_glfw_error << ")");
        }
        glfwMakeContextCurrent(window_);
        glfwSwapInterval(1);
        if (gladLoadGL(reinterpret_cast<GLADloadfunc>(glfwGetProcAddress)) == 0) {
            glfwDestroyWindow(window_);
            glfwTerminate();
            EDN_THROW(ErrorCode::Device, "cannot load OpenGL functions through GLFW");
        }
    }
    ~WindowContext() override {
        glfwDestroyWindow(window_);
        glfwTerminate();
    }
    WindowContext(const WindowContext&) = delete;
    WindowContext& operator=(const WindowContext&) = delete;

    bool headless() const override { return false; }
    GLFWwindow* window() const override { return window_; }
    void poll_events() override { glfwPollEvents(); }
    bool should_close() const override { return glfwWindowShouldClose(window_); }
    void swap_buffers() override { glfwSwapBuffers(window_); }
    glm::ivec2 framebuffer_size() const override {
        glm::ivec2 size{0, 0};
        glfwGetFramebufferSize(window_, &size.x, &size.y);
        return size;
    }
    std::string platform() const override { return "GLFW window"; }

private:
    GLFWwindow* window_ = nullptr;
};

// ---- EGL headless --------------------------------------------------------------------------

/// An initialised EGL display and a description of where it came from.
struct EglDisplay {
    EGLDisplay display = EGL_NO_DISPLAY;
    std::string platform;
};

/// GPU devices first (EGL_PLATFORM_DEVICE_EXT: the NVIDIA driver without an X server), then
/// Mesa's surfaceless platform (llvmpipe in CI). Neither needs a display.
EglDisplay open_egl_display() {
    auto query_devices =
        reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
    if (query_devices) {
        std::array<EGLDeviceEXT, 16> devices{};
        EGLint count = 0;
        if (query_devices(static_cast<EGLint>(devices.size()), devices.data(), &count)) {
            for (EGLint i = 0; i < count; ++i) {
                EGLDisplay display =
                    eglGetPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, devices[i], nullptr);
                if (display != EGL_NO_DISPLAY && eglInitialize(display, nullptr, nullptr)) {
                    return {display, "EGL device " + std::to_string(i)};
                }
            }
        }
    }
    EGLDisplay display =
        eglGetPlatformDisplay(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    if (display != EGL_NO_DISPLAY && eglInitialize(display, nullptr, nullptr)) {
        return {display, "EGL surfaceless"};
    }
    EDN_THROW(ErrorCode::Device, "headless: no EGL device or surfaceless platform (EGL error 0x"
                                     << std::hex << eglGetError() << ")");
}

class HeadlessContext final : public GlContext {
public:
    explicit HeadlessContext(const GlContextOptions& options)
        : size_(options.width, options.height) {
        EglDisplay opened = open_egl_display();
        display_ = opened.display;
        platform_ = opened.platform;
        try {
            create_context();
        } catch (...) {
            eglTerminate(display_);
            throw;
        }
    }
    ~HeadlessContext() override {
        eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        if (context_ != EGL_NO_CONTEXT) eglDestroyContext(display_, context_);
        eglTerminate(display_);
    }
    HeadlessContext(const HeadlessContext&) = delete;
    HeadlessContext& operator=(const HeadlessContext&) = delete;

    bool headless() const override { return true; }
    GLFWwindow* window() const override { return nullptr; }
    void poll_events() override {}
    bool should_close() const override { return false; }
    // No buffers to swap offscreen. Finishing here bounds the queued GPU work to one frame, so
    // per-frame timings (and the next frame's interop map) do not absorb earlier frames' draws.
    void swap_buffers() override { glFinish(); }
    glm::ivec2 framebuffer_size() const override { return size_; }
    std::string platform() const override { return platform_; }

private:
    void create_context() {
        EDN_VERIFY(eglBindAPI(EGL_OPENGL_API), ErrorCode::Device,
                   "headless: " << platform_ << " does not support desktop OpenGL");
        // Rendering goes to an FBO, so the config needs no surface type at all.
        const EGLint config_attributes[] = {
            EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_SURFACE_TYPE, 0, EGL_RED_SIZE, 8, EGL_NONE};
        EGLConfig config = nullptr;
        EGLint num_configs = 0;
        EDN_VERIFY(eglChooseConfig(display_, config_attributes, &config, 1, &num_configs) &&
                       num_configs > 0,
                   ErrorCode::Device, "headless: " << platform_ << " has no OpenGL config");
        for (auto [major, minor] : kGlVersions) {
            const EGLint context_attributes[] = {EGL_CONTEXT_MAJOR_VERSION,
                                                 major,
                                                 EGL_CONTEXT_MINOR_VERSION,
                                                 minor,
                                                 EGL_CONTEXT_OPENGL_PROFILE_MASK,
                                                 EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                                 EGL_NONE};
            context_ = eglCreateContext(display_, config, EGL_NO_CONTEXT, context_attributes);
            if (context_ != EGL_NO_CONTEXT) break;
        }
        EDN_VERIFY(context_ != EGL_NO_CONTEXT, ErrorCode::Device,
                   "headless: " << platform_ << " cannot create an OpenGL 3.3 core context");
        EDN_VERIFY(eglMakeCurrent(display_, EGL_NO_SURFACE, EGL_NO_SURFACE, context_),
                   ErrorCode::Device,
                   "headless: " << platform_ << " cannot make a surfaceless context current");
        // EGL 1.5 returns core GL functions too, so one loader serves the whole context.
        EDN_VERIFY(gladLoadGL(reinterpret_cast<GLADloadfunc>(eglGetProcAddress)) != 0,
                   ErrorCode::Device, "headless: cannot load OpenGL functions through EGL");
    }

    glm::ivec2 size_;
    EGLDisplay display_ = EGL_NO_DISPLAY;
    EGLContext context_ = EGL_NO_CONTEXT;
    std::string platform_;
};

} // namespace

std::unique_ptr<GlContext> create_gl_context(const GlContextOptions& options) {
    if (options.headless) return std::make_unique<HeadlessContext>(options);
    return std::make_unique<WindowContext>(options);
}

} // namespace edn
