// The Scene panel's files section: a path and four buttons for scene files (docs/SCENES.md) and
// saved states; App::apply_file_actions (app/app_files.cpp) carries them out.

#include "gui_detail.hpp"

#include <imgui.h>

namespace edn::gui_detail {

void files_section(GuiState& state, GuiActions& actions) {
    ImGui::Separator();
    ImGui::TextUnformatted("Scene (.json) or state (.edns) file");
    ImGui::SetNextItemWidth(1.5f * item_width());
    ImGui::InputText("##file", state.file_input.data(), state.file_input.size());
    const bool busy = state.loading;
    if (busy) ImGui::BeginDisabled();
    actions.load_scene_file = ImGui::Button("Load scene");
    ImGui::SameLine();
    actions.save_scene_file = ImGui::Button("Save scene");
    ImGui::SameLine();
    actions.save_state = ImGui::Button("Save state");
    ImGui::SameLine();
    actions.load_state = ImGui::Button("Load state");
    if (busy) ImGui::EndDisabled();
    if (state.file_error)
        error_text(state.file_message);
    else if (!state.file_message.empty())
        ImGui::TextWrapped("%s", state.file_message.c_str());
}

} // namespace edn::gui_detail
