#include "gui.hpp"

#include "renderer.hpp"
#include "timings.hpp"

#include <imgui.h>

namespace edn {
namespace {

/// Frames averaged for the numbers shown (about half a second at 60 Hz: readable, still live).
constexpr std::size_t kAveragedFrames = 30;

const ImVec4 kErrorColor(1.0f, 0.35f, 0.3f, 1.0f);

void statistics_panel(const GuiState& state, const SceneStatistics& statistics,
                      const TimingRecorder& timings) {
    ImGui::SetNextWindowPos(ImVec2(10, 10), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize(ImVec2(300, 0), ImGuiCond_FirstUseEver);
    ImGui::Begin("Statistics");
    ImGui::Text("Scene: %s", statistics.name.empty() ? "(none)" : statistics.name.c_str());
    ImGui::Text("Vertices:        %d", statistics.vertices);
    ImGui::Text("Cells:           %d", statistics.cells);
    ImGui::Text("Boundary faces:  %d", statistics.boundary_faces);
    ImGui::Text("Surface verts:   %d", statistics.surface_vertices);
    ImGui::Separator();
    const double frame_ms = timings.mean_ms(Stage::Count, kAveragedFrames);
    ImGui::Text("%.1f fps (%.2f ms/frame)", frame_ms > 0.0 ? 1000.0 / frame_ms : 0.0, frame_ms);
    if (ImGui::TreeNode("Stages (ms)")) {
        for (std::size_t s = 0; s < kStageCount; ++s) {
            const auto stage = static_cast<Stage>(s);
            ImGui::Text("%-10s %7.3f", stage_name(stage), timings.mean_ms(stage, kAveragedFrames));
        }
        ImGui::TreePop();
    }
    ImGui::TextWrapped("%s", state.gl_description.c_str());
    ImGui::End();
}

void scene_panel(GuiState& state, RenderSettings& settings, GuiActions& actions) {
    ImGui::SetNextWindowPos(ImVec2(10, 250), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize(ImVec2(300, 0), ImGuiCond_FirstUseEver);
    ImGui::Begin("Scene");
    ImGui::TextUnformatted("Mesh file (.obj, .node/.ele, .msh)");
    const bool entered =
        ImGui::InputText("##scene", state.scene_input.data(), state.scene_input.size(),
                         ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    actions.load_scene = ImGui::Button("Load") || entered;
    if (!state.scene_error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
        ImGui::TextWrapped("%s", state.scene_error.c_str());
        ImGui::PopStyleColor();
    }
    ImGui::Separator();
    ImGui::Checkbox("Wireframe", &settings.show_wireframe);
    ImGui::SameLine();
    ImGui::Checkbox("Grid", &settings.show_grid);
    ImGui::ColorEdit3("Surface", &settings.surface_color.x, ImGuiColorEditFlags_NoInputs);
    actions.fit_view = ImGui::Button("Fit (F)");
    ImGui::SameLine();
    actions.reset_view = ImGui::Button("Reset view (R)");
    ImGui::SameLine();
    actions.reload_shaders = ImGui::Button("Reload shaders");
    if (!state.render_error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
        ImGui::TextWrapped("%s", state.render_error.c_str());
        ImGui::PopStyleColor();
    }
    ImGui::TextDisabled("right drag: orbit, middle drag: pan, wheel: zoom, Esc: quit");
    ImGui::End();
}

} // namespace

GuiActions build_gui(GuiState& state, const SceneStatistics& statistics,
                     const TimingRecorder& timings, RenderSettings& settings) {
    GuiActions actions;
    statistics_panel(state, statistics, timings);
    scene_panel(state, settings, actions);
    return actions;
}

} // namespace edn
