#include "gui.hpp"

#include "colormap.hpp"
#include "core/device.hpp"
#include "gui_detail.hpp"
#include "renderer.hpp"
#include "timings.hpp"

#include <GLFW/glfw3.h> // GLFW_KEY_F1: the GLFW backend fills io.KeysDown by GLFW key code
#include <algorithm>
#include <array>
#include <cmath>
#include <imgui.h>
#include <imgui_internal.h> // ImGuiWindow::ContentSizeIdeal: what a panel's content needs

namespace edn {

BackendAvailability backend_availability(Backend backend, bool built_with_cuda,
                                         bool cuda_device_usable) {
    if (backend != Backend::Cuda) return {};
    if (!built_with_cuda)
        return {false, "this elastodyn was built without CUDA (ELASTODYN_CUDA=OFF)"};
    if (!cuda_device_usable)
        return {false, "no usable CUDA device (no GPU, or no or an old driver)"};
    return {};
}

BackendAvailability backend_availability(Backend backend) {
    if (backend != Backend::Cuda) return {};
    return backend_availability(backend, built_with_cuda(), cuda_device_available());
}

void apply_gui_style() {
    ImGui::StyleColorsDark();
    ImGuiStyle& style = ImGui::GetStyle();
    // Opaque popups: a combo list over a panel's text must be readable.
    style.Colors[ImGuiCol_PopupBg] = ImVec4(0.09f, 0.09f, 0.10f, 1.0f);
}

namespace gui_detail {
namespace {

constexpr std::size_t index(Panel panel) {
    return static_cast<std::size_t>(panel);
}

/// Rectangles this close count as the same (ImGui floors positions and sizes).
constexpr float kSameTolerance = 1.0f;

bool same(const PanelRect& a, const PanelRect& b) {
    return std::abs(a.x - b.x) <= kSameTolerance && std::abs(a.y - b.y) <= kSameTolerance &&
           std::abs(a.width - b.width) <= kSameTolerance &&
           std::abs(a.height - b.height) <= kSameTolerance;
}

} // namespace

void begin_panel(GuiState& state, Panel panel, const char* title, ImGuiWindowFlags flags) {
    PanelPlacement& placement = state.placement;
    const std::size_t i = index(panel);
    PanelRect rect = placement.layout.rects[i];
    rect.x = std::floor(rect.x);
    rect.y = std::floor(rect.y);
    rect.width = std::floor(rect.width);
    rect.height = std::floor(rect.height);
    // Only a changed rectangle is given to ImGui, so a drag by hand is not undone next frame.
    if (!placement.user_placed[i] && !same(rect, placement.applied[i])) {
        ImGui::SetNextWindowPos(ImVec2(rect.x, rect.y), ImGuiCond_Always);
        ImGui::SetNextWindowSize(ImVec2(rect.width, rect.height), ImGuiCond_Always);
        placement.applied[i] = rect;
    }
    ImGui::Begin(title, nullptr,
                 flags | ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings);
    const ImVec2 pos = ImGui::GetWindowPos();
    const ImVec2 size = ImGui::GetWindowSize();
    if (!placement.user_placed[i] && !same({pos.x, pos.y, size.x, size.y}, placement.applied[i])) {
        placement.user_placed[i] = true; // moved or resized by hand: it stays there
    }
    // Last frame's content (ImGui measures it while the items are submitted): the size that
    // shows it all, which the next layout asks for.
    const ImGuiWindow* window = ImGui::GetCurrentWindow();
    if (window->ContentSizeIdeal.y > 0.0f) {
        const ImGuiStyle& style = ImGui::GetStyle();
        PanelRequest& wanted = placement.wanted[i];
        wanted.width = window->ContentSizeIdeal.x + 2.0f * style.WindowPadding.x +
                       (window->ScrollbarY ? style.ScrollbarSize : 0.0f);
        wanted.height =
            window->ContentSizeIdeal.y + 2.0f * style.WindowPadding.y + window->TitleBarHeight();
        placement.measured[i] = true;
    }
    placement.shown[i] = true;
    ImGui::PushItemWidth(item_width());
}

void end_panel() {
    ImGui::PopItemWidth();
    ImGui::End();
}

float item_width() {
    return 11.0f * ImGui::GetFontSize();
}

void error_text(const std::string& text) {
    if (text.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.35f, 0.3f, 1.0f));
    ImGui::TextWrapped("%s", text.c_str());
    ImGui::PopStyleColor();
}

ImU32 to_u32(const glm::vec3& color) {
    return ImGui::ColorConvertFloat4ToU32(ImVec4(color.r, color.g, color.b, 1.0f));
}

} // namespace gui_detail

namespace {

using namespace gui_detail;

/// Frames averaged for the numbers shown (about half a second at 60 Hz: readable, still live).
constexpr std::size_t kAveragedFrames = 30;

/// Where each panel goes, and its size before it was first measured.
struct PanelDefault {
    PanelSlot slot;
    float width;  ///< in font heights
    float height; ///< in font heights
};
constexpr std::array<PanelDefault, kPanelCount> kPanelDefaults = {{
    {PanelSlot::Left, 25.0f, 32.0f},         // Statistics
    {PanelSlot::Left, 25.0f, 20.0f},         // Scene
    {PanelSlot::Right, 26.0f, 50.0f},        // Simulation
    {PanelSlot::MiddleBottom, 32.0f, 19.0f}, // Timings
    {PanelSlot::MiddleTop, 20.0f, 6.0f},     // Legend
}};

/// This frame's layout from the window size and the panels' measured needs.
void place_panels(GuiState& state) {
    PanelPlacement& placement = state.placement;
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    if (display.x != placement.display_width || display.y != placement.display_height) {
        // A new window size: every panel goes back to the layout, hand placement included.
        placement.display_width = display.x;
        placement.display_height = display.y;
        placement.user_placed.fill(false);
        placement.applied.fill(PanelRect{});
    }
    const float font = ImGui::GetFontSize();
    std::array<PanelRequest, kPanelCount> requests{};
    for (std::size_t i = 0; i < kPanelCount; ++i) {
        const PanelDefault& d = kPanelDefaults[i];
        requests[i] = placement.measured[i] ? placement.wanted[i]
                                            : PanelRequest{d.slot, d.width * font, d.height * font};
        requests[i].slot = d.slot;
    }
    // The plot fills what it is given: its width is chosen, not measured (it would never shrink).
    requests[index(Panel::Timings)].width = kPanelDefaults[index(Panel::Timings)].width * font;
    // A hidden legend takes no room.
    if (state.color_mode == ColorMode::None) requests[index(Panel::Legend)].height = 0.0f;
    placement.layout = layout_panels(display.x, display.y, requests);
    placement.shown.fill(false);
}

/// "?" that opens the help overlay.
void help_button(GuiState& state) {
    if (ImGui::SmallButton("?")) state.show_help = !state.show_help;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("mouse and keys (F1)");
}

void statistics_panel(GuiState& state, const SceneStatistics& statistics,
                      const TimingRecorder& timings) {
    begin_panel(state, Panel::Statistics, "Statistics");
    ImGui::Text("Scene: %s", statistics.name.empty() ? "(none)" : statistics.name.c_str());
    ImGui::TextWrapped("upload: %s", state.upload_method.c_str()); // which surface path is active
    if (state.cut_mode) {
        ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.2f, 1.0f), "CUT mode: left-drag a stroke (C: off)");
    }
    if (state.refine_mode) {
        ImGui::TextColored(ImVec4(0.4f, 0.9f, 1.0f, 1.0f), "REFINE brush: left-click (B: off)");
    }
    const double frame_ms = timings.mean_ms(Stage::Count, kAveragedFrames);
    // Two rates: the display's and the simulation's (on its own thread they differ).
    ImGui::Text("display %.1f fps (%.2f ms/frame)", frame_ms > 0.0 ? 1000.0 / frame_ms : 0.0,
                frame_ms);
    ImGui::Text("simulation %.1f steps/s (%s)", statistics.steps_per_second,
                statistics.sim_thread ? "own thread" : "lockstep, one per frame");
    if (ImGui::CollapsingHeader("Mesh", ImGuiTreeNodeFlags_DefaultOpen)) {
        ImGui::Text("Vertices:        %d", statistics.vertices);
        ImGui::Text("Cells:           %d", statistics.cells);
        ImGui::Text("Boundary faces:  %d", statistics.boundary_faces);
        ImGui::Text("Surface verts:   %d", statistics.surface_vertices);
        if (statistics.simulated) {
            ImGui::Text("Nodes:           %d", statistics.nodes);
            ImGui::Text("Pinned vertices: %d", statistics.pinned_vertices);
            ImGui::Text("NNZ blocks:      %lld", static_cast<long long>(statistics.nnz_blocks));
            ImGui::Text("Matrix memory:   %.2f MiB",
                        static_cast<double>(statistics.matrix_bytes) / (1024.0 * 1024.0));
            ImGui::Text("Components:      %d", statistics.components);
        }
    }
    if (statistics.simulated &&
        (statistics.cuts > 0 || statistics.refinements > 0 || statistics.undo_depth > 0 ||
         statistics.last_repattern_ms > 0) &&
        ImGui::CollapsingHeader("Edits", ImGuiTreeNodeFlags_DefaultOpen)) {
        ImGui::Text("Cuts:            %d (undo depth %zu)", statistics.cuts, statistics.undo_depth);
        ImGui::Text("Last cut:        %d faces, %d dup. vertices", statistics.last_cut_faces,
                    statistics.last_duplicated);
        ImGui::Text("                 %d cells split, worst dihedral %.2f deg",
                    statistics.last_split_cells, statistics.last_cut_dihedral);
        ImGui::Text("Refinements:     %d", statistics.refinements);
        ImGui::Text("Re-pattern:      %.2f ms (pattern %.2f ms)", statistics.last_repattern_ms,
                    statistics.last_pattern_build_ms);
    }
    if (statistics.simulated && statistics.stepped &&
        ImGui::CollapsingHeader("Solver", ImGuiTreeNodeFlags_DefaultOpen)) {
        const StepResult& step = statistics.last_step;
        ImGui::Text("Newton its:      %d%s%s", step.newton_iterations,
                    step.converged ? "" : " (not converged)", step.recovered ? " RECOVERED" : "");
        // How the last seconds went: an unconverged frame is a mushy or laggy body.
        const ConvergenceTally& recent = statistics.recent_convergence;
        const bool all = recent.converged == recent.frames;
        ImGui::TextColored(all ? ImVec4(0.6f, 0.9f, 0.6f, 1.0f) : ImVec4(1.0f, 0.75f, 0.3f, 1.0f),
                           "Converged:       %lld/%lld recent frames",
                           static_cast<long long>(recent.converged),
                           static_cast<long long>(recent.frames));
        ImGui::Text("Newton tol:      %.2g", statistics.newton_tolerance);
        ImGui::Text("Worst:           %.3g rel. decrement", recent.worst_relative_decrement);
        ImGui::Text("Worst |g|:       %.3g", recent.worst_final_residual);
        ImGui::Text("CG its:          %d", step.cg_iterations);
        ImGui::Text("Residual:        %.3g -> %.3g", step.initial_residual, step.final_residual);
        ImGui::Text("Strain energy:   %.3g", step.strain_energy);
        ImGui::Text("Kinetic energy:  %.3g", step.kinetic_energy);
    }
    if (ImGui::CollapsingHeader("Renderer")) ImGui::TextWrapped("%s", state.gl_description.c_str());
    end_panel();
}

void scene_panel(GuiState& state, RenderSettings& settings, GuiActions& actions) {
    begin_panel(state, Panel::Scene, "Scene");
    ImGui::TextUnformatted("Mesh file (.obj, .node/.ele, .msh)");
    ImGui::SameLine();
    help_button(state);
    ImGui::SetNextItemWidth(1.5f * item_width());
    const bool entered =
        ImGui::InputText("##scene", state.scene_input.data(), state.scene_input.size(),
                         ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    const bool clicked = ImGui::Button("Load");
    actions.load_scene = (clicked || entered) && !state.loading;
    const float half = 0.5f * item_width();
    ImGui::SetNextItemWidth(half);
    ImGui::InputFloat("quality", &state.quality, 0.0f, 0.0f, "%.2f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(half);
    ImGui::InputFloat("max vol", &state.max_volume, 0.0f, 0.0f, "%.2g");
    if (!state.mesh_hint.empty()) ImGui::TextWrapped("%s", state.mesh_hint.c_str());
    if (state.loading) {
        // TetGen runs in a child process without progress reports: an indeterminate bar.
        const float phase = static_cast<float>(std::fmod(state.loading_seconds, 2.0) / 2.0);
        ImGui::ProgressBar(phase, ImVec2(1.5f * item_width(), 0), "meshing / loading ...");
        ImGui::SameLine();
        ImGui::Text("%.1f s", state.loading_seconds);
    }
    error_text(state.scene_error);
    files_section(state, actions);
    ImGui::Separator();
    ImGui::Checkbox("Wireframe", &settings.show_wireframe);
    ImGui::SameLine();
    ImGui::Checkbox("Grid", &settings.show_grid);
    ImGui::SameLine();
    ImGui::ColorEdit3("Surface", &settings.surface_color.x, ImGuiColorEditFlags_NoInputs);
    int mode = static_cast<int>(state.color_mode);
    const char* modes[] = {"flat", "von Mises stress", "displacement"};
    ImGui::Combo("colour", &mode, modes, 3);
    state.color_mode = static_cast<ColorMode>(mode);
    if (state.color_mode != ColorMode::None) {
        ColorRangeSettings& range = state.color_range_settings;
        if (ImGui::Checkbox("manual range", &range.manual) && range.manual) {
            // Start from what is shown, so ticking the box changes nothing yet.
            range.manual_low = state.color_range.low;
            range.manual_high = state.color_range.high;
        }
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("off: the %g-%gth percentile of the surface values",
                              static_cast<double>(range.low_percent),
                              static_cast<double>(range.high_percent));
        if (range.manual) {
            ImGui::SetNextItemWidth(half);
            ImGui::InputFloat("min", &range.manual_low, 0.0f, 0.0f, "%.3g");
            ImGui::SameLine();
            ImGui::SetNextItemWidth(half);
            ImGui::InputFloat("max", &range.manual_high, 0.0f, 0.0f, "%.3g");
        }
    }
    actions.fit_view = ImGui::Button("Fit (F)");
    ImGui::SameLine();
    actions.reset_view = ImGui::Button("Reset view");
    ImGui::SameLine();
    actions.reload_shaders = ImGui::Button("Reload shaders");
    error_text(state.render_error);
    ImGui::TextDisabled("F1 or ?: mouse and keys");
    end_panel();
}

void legend(GuiState& state) {
    if (state.color_mode == ColorMode::None) return;
    ImGui::SetNextWindowBgAlpha(0.6f);
    begin_panel(state, Panel::Legend, "Legend",
                ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoFocusOnAppearing |
                    ImGuiWindowFlags_NoScrollbar);
    const bool stress = state.color_mode == ColorMode::VonMises;
    ImGui::Text("%s", stress ? "von Mises stress [Pa]" : "displacement [m]");
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float width = 18.0f * ImGui::GetFontSize();
    const float height = ImGui::GetFontSize();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    constexpr int kSteps = 32;
    for (int i = 0; i < kSteps; ++i) {
        const float t0 = static_cast<float>(i) / kSteps;
        const float t1 = static_cast<float>(i + 1) / kSteps;
        draw->AddRectFilledMultiColor(ImVec2(origin.x + t0 * width, origin.y),
                                      ImVec2(origin.x + t1 * width, origin.y + height),
                                      to_u32(colormap(t0)), to_u32(colormap(t1)),
                                      to_u32(colormap(t1)), to_u32(colormap(t0)));
    }
    ImGui::Dummy(ImVec2(width, height));
    char high[32];
    std::snprintf(high, sizeof(high), "%.3g", static_cast<double>(state.color_range.high));
    ImGui::Text("%.3g", static_cast<double>(state.color_range.low));
    ImGui::SameLine(std::max(width - ImGui::CalcTextSize(high).x, 0.0f) +
                    ImGui::GetStyle().WindowPadding.x);
    ImGui::TextUnformatted(high);
    ImGui::TextDisabled("%s", color_range_label(state.color_range_settings).c_str());
    end_panel();
}

/// The mouse and key help, over everything (F1 or the "?" button; replaces the help lines that
/// did not fit the Scene panel).
void help_overlay(GuiState& state) {
    if (ImGui::IsKeyPressed(GLFW_KEY_F1, false)) state.show_help = !state.show_help;
    if (!state.show_help) return;
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    ImGui::SetNextWindowPos(ImVec2(0.5f * display.x, 0.5f * display.y), ImGuiCond_Always,
                            ImVec2(0.5f, 0.5f));
    ImGui::Begin("Help (F1)", &state.show_help,
                 ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse |
                     ImGuiWindowFlags_NoSavedSettings);
    static constexpr std::array<std::array<const char*, 2>, 15> kLines = {{
        {"left drag", "pull the body (a spring to the cursor)"},
        {"shift + left drag", "paint pins (brush radius in the Simulation panel)"},
        {"ctrl + shift + left drag", "erase pins"},
        {"right drag", "orbit"},
        {"middle drag", "pan"},
        {"wheel", "zoom"},
        {"space", "pause / run"},
        {"S", "one step while paused"},
        {"R", "reset the simulation to rest (pins kept)"},
        {"F", "fit the view to the mesh"},
        {"C", "cut mode: a left drag cuts along the stroke (or one plane at release)"},
        {"B", "refine brush: a left click refines around the point"},
        {"Ctrl+Z", "undo the last cut or refinement"},
        {"F1", "this help"},
        {"Esc", "quit"},
    }};
    // The description column starts after the widest key (a fixed width clipped the longest).
    float column = 0.0f;
    for (const auto& line : kLines) column = std::max(column, ImGui::CalcTextSize(line[0]).x);
    column += ImGui::GetStyle().WindowPadding.x + 2.0f * ImGui::GetStyle().ItemSpacing.x;
    for (const auto& [key, what] : kLines) {
        ImGui::TextUnformatted(key);
        ImGui::SameLine(column);
        ImGui::TextUnformatted(what);
    }
    ImGui::Separator();
    ImGui::TextDisabled("Panels follow the window size; one moved by hand stays put until the");
    ImGui::TextDisabled("window is resized. Section headers fold (click them).");
    if (ImGui::Button("Close")) state.show_help = false;
    ImGui::End();
}

} // namespace

GuiActions build_gui(GuiState& state, const SceneStatistics& statistics,
                     const TimingRecorder& timings, RenderSettings& settings) {
    GuiActions actions;
    place_panels(state);
    statistics_panel(state, statistics, timings);
    scene_panel(state, settings, actions);
    simulation_panel(state, actions);
    timing_panel(state, timings, actions);
    legend(state);
    help_overlay(state);
    return actions;
}

} // namespace edn
