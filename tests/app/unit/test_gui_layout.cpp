// The real panels (build_gui) laid out by an ImGui context without any renderer or window: at
// 1280x720 and 1920x1080 no two panels overlap, all lie inside the window, no panel's content is
// wider than the panel (nothing clips), and content taller than its panel scrolls.

#include "gui.hpp"
#include "renderer.hpp"
#include "timings.hpp"

#include <GLFW/glfw3.h> // GLFW_KEY_F1: the GLFW backend's key codes index io.KeysDown
#include <array>
#include <gtest/gtest.h>
#include <imgui.h>
#include <imgui_internal.h>
#include <string>

namespace edn {
namespace {

constexpr std::array<const char*, kPanelCount> kTitles = {"Statistics", "Scene", "Simulation",
                                                          "Timings", "Legend"};

/// An ImGui context with a built font atlas: enough for NewFrame/Render without a backend.
class GuiLayout : public ::testing::Test {
protected:
    GuiLayout() : timings_(64) {
        ImGui::CreateContext();
        ImGuiIO& io = ImGui::GetIO();
        io.IniFilename = nullptr;
        unsigned char* pixels = nullptr;
        int width = 0, height = 0;
        io.Fonts->GetTexDataAsRGBA32(&pixels, &width, &height);
        apply_gui_style();
        // The state after a cut on a busy scene: the longest texts the panels show.
        state_.upload_method = "CUDA-GL interop, external memory (CUDA backend)";
        state_.gl_description = "OpenGL 4.5 (Core Profile) Mesa 22.3.6 on llvmpipe (LLVM 15.0.6, "
                                "256 bits) (EGL surfaceless)";
        state_.cut_mode = true;
        state_.cut_message = "cut: 812 faces opened, 1204 vertices duplicated, re-pattern 181.42 "
                             "ms (pattern 95.10 ms), 2 components";
        state_.sim_error = "CUDA backend: no usable CUDA device (no GPU or driver); use the CPU "
                           "backend";
        state_.cuda_unavailable_reason = "this elastodyn was built without CUDA";
        statistics_.name = "bunny_with_a_long_file_name.obj";
        statistics_.vertices = statistics_.nodes = 1234567;
        statistics_.cells = 7654321;
        statistics_.boundary_faces = statistics_.surface_vertices = 345678;
        statistics_.simulated = statistics_.stepped = true;
        statistics_.nnz_blocks = 123456789;
        statistics_.matrix_bytes = std::size_t{3} << 30;
        statistics_.cuts = 12;
        statistics_.undo_depth = 8;
        statistics_.last_repattern_ms = 1234.56;
        statistics_.last_pattern_build_ms = 789.01;
        statistics_.recent_convergence.frames = 120;
        statistics_.recent_convergence.converged = 17;
        statistics_.recent_convergence.worst_relative_decrement = 0.123456;
        statistics_.recent_convergence.worst_final_residual = 1.234e-5;
        statistics_.newton_tolerance = 1e-3;
    }
    ~GuiLayout() override { ImGui::DestroyContext(); }

    void frames(float width, float height, int count) {
        ImGuiIO& io = ImGui::GetIO();
        io.DisplaySize = ImVec2(width, height);
        io.DeltaTime = 1.0f / 60.0f;
        for (int i = 0; i < count; ++i) {
            ImGui::NewFrame();
            build_gui(state_, statistics_, timings_, render_);
            ImGui::Render();
        }
    }

    static ImGuiWindow* window(Panel panel) {
        return ImGui::FindWindowByName(kTitles[static_cast<std::size_t>(panel)]);
    }

    static PanelRect rect_of(const ImGuiWindow* w) {
        return {w->Pos.x, w->Pos.y, w->Size.x, w->Size.y};
    }

    void expect_tidy(float width, float height) {
        const ImGuiStyle& style = ImGui::GetStyle();
        for (std::size_t i = 0; i < kPanelCount; ++i) {
            SCOPED_TRACE(kTitles[i]);
            const ImGuiWindow* a = window(static_cast<Panel>(i));
            ASSERT_NE(a, nullptr);
            ASSERT_TRUE(a->Active);
            const PanelRect ra = rect_of(a);
            EXPECT_TRUE(inside(ra, width, height))
                << ra.x << ", " << ra.y << ", " << ra.width << " x " << ra.height;
            for (std::size_t j = i + 1; j < kPanelCount; ++j) {
                const ImGuiWindow* b = window(static_cast<Panel>(j));
                ASSERT_NE(b, nullptr);
                EXPECT_FALSE(overlaps(ra, rect_of(b))) << "overlaps " << kTitles[j];
            }
            // Nothing clipped at the right: the widest item fits the panel's inner width.
            const float inner = a->Size.x - 2.0f * style.WindowPadding.x -
                                (a->ScrollbarY ? style.ScrollbarSize : 0.0f);
            EXPECT_LE(a->ContentSizeIdeal.x, inner + 1.0f);
            // Content taller than the panel scrolls (the legend must simply fit).
            const float content =
                a->ContentSizeIdeal.y + 2.0f * style.WindowPadding.y + a->TitleBarHeight();
            if (content > a->Size.y + 1.0f) {
                EXPECT_TRUE(a->ScrollbarY) << content << " > " << a->Size.y;
                EXPECT_NE(static_cast<Panel>(i), Panel::Legend);
            }
        }
    }

    GuiState state_;
    SceneStatistics statistics_;
    TimingRecorder timings_;
    RenderSettings render_;
};

TEST_F(GuiLayout, PanelsAreTidyAt1280x720) {
    frames(1280.0f, 720.0f, 6);
    expect_tidy(1280.0f, 720.0f);
}

TEST_F(GuiLayout, PanelsAreTidyAt1920x1080) {
    frames(1920.0f, 1080.0f, 6);
    expect_tidy(1920.0f, 1080.0f);
    // At this size everything fits without scrolling.
    for (std::size_t i = 0; i < kPanelCount; ++i)
        EXPECT_FALSE(window(static_cast<Panel>(i))->ScrollbarY) << kTitles[i];
}

TEST_F(GuiLayout, ResizingTheWindowLaysThePanelsOutAgain) {
    frames(1920.0f, 1080.0f, 4);
    frames(1280.0f, 720.0f, 4);
    expect_tidy(1280.0f, 720.0f);
    const ImGuiWindow* simulation = window(Panel::Simulation);
    EXPECT_NEAR(simulation->Pos.x + simulation->Size.x, 1280.0f - LayoutOptions{}.margin, 1.5f);
}

TEST_F(GuiLayout, APanelMovedByHandStaysUntilTheWindowSizeChanges) {
    frames(1280.0f, 720.0f, 4);
    ImGui::SetWindowPos("Scene", ImVec2(500.0f, 300.0f)); // as a drag by hand leaves it
    frames(1280.0f, 720.0f, 3);
    EXPECT_EQ(window(Panel::Scene)->Pos.x, 500.0f);
    EXPECT_TRUE(state_.placement.user_placed[static_cast<std::size_t>(Panel::Scene)]);
    frames(1300.0f, 720.0f, 3);
    EXPECT_LT(window(Panel::Scene)->Pos.x, 20.0f); // back in the left column
    EXPECT_FALSE(state_.placement.user_placed[static_cast<std::size_t>(Panel::Scene)]);
}

TEST_F(GuiLayout, HiddenLegendTakesNoRoomAndPopupsAreOpaque) {
    state_.color_mode = ColorMode::None;
    frames(1280.0f, 720.0f, 3);
    EXPECT_FALSE(state_.placement.shown[static_cast<std::size_t>(Panel::Legend)]);
    EXPECT_EQ(ImGui::GetStyle().Colors[ImGuiCol_PopupBg].w, 1.0f);
}

/// Clicks along the Simulation panel's first row (backend and order radio buttons) from left to
/// right; returns the backend chosen at the end.
Backend click_along_backend_row(GuiState& state, SceneStatistics& statistics,
                                TimingRecorder& timings, RenderSettings& render) {
    ImGuiIO& io = ImGui::GetIO();
    auto frame = [&] {
        ImGui::NewFrame();
        build_gui(state, statistics, timings, render);
        ImGui::Render();
    };
    const ImGuiWindow* simulation = ImGui::FindWindowByName("Simulation");
    const ImGuiStyle& style = ImGui::GetStyle();
    const float y = simulation->Pos.y + simulation->TitleBarHeight() + style.WindowPadding.y +
                    0.5f * ImGui::GetFrameHeight();
    for (float x = simulation->Pos.x + style.WindowPadding.x;
         x < simulation->Pos.x + simulation->Size.x; x += 4.0f) {
        io.MousePos = ImVec2(x, y);
        io.MouseDown[0] = true;
        frame();
        io.MouseDown[0] = false;
        frame();
    }
    return state.settings.backend;
}

TEST_F(GuiLayout, F1TogglesTheHelpOverlay) {
    frames(1280.0f, 720.0f, 2);
    EXPECT_FALSE(state_.show_help);
    ImGui::GetIO().KeysDown[GLFW_KEY_F1] = true;
    frames(1280.0f, 720.0f, 1);
    ImGui::GetIO().KeysDown[GLFW_KEY_F1] = false;
    frames(1280.0f, 720.0f, 2);
    EXPECT_TRUE(state_.show_help);
    const ImGuiWindow* help = ImGui::FindWindowByName("Help (F1)");
    ASSERT_NE(help, nullptr);
    EXPECT_TRUE(help->Active);
    EXPECT_TRUE(inside(rect_of(help), 1280.0f, 720.0f));
    ImGui::GetIO().KeysDown[GLFW_KEY_F1] = true;
    frames(1280.0f, 720.0f, 1);
    EXPECT_FALSE(state_.show_help);
}

TEST_F(GuiLayout, CudaChoiceIsGreyedOutWithoutADevice) {
    frames(1280.0f, 720.0f, 3);
    state_.settings.backend = Backend::Cpu;
    state_.cuda_available = false;
    EXPECT_EQ(click_along_backend_row(state_, statistics_, timings_, render_), Backend::Cpu);
    // The same clicks with a device pick CUDA: the row is where the test clicks.
    state_.cuda_available = true;
    EXPECT_EQ(click_along_backend_row(state_, statistics_, timings_, render_), Backend::Cuda);
}

} // namespace
} // namespace edn
