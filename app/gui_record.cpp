// The Record animation section of the Timings panel (app/recorder.hpp does the writing).
#include "gui_detail.hpp"

#include <algorithm>
#include <imgui.h>

namespace edn::gui_detail {

void record_section(GuiState& state, GuiActions& actions) {
    RecordGuiState& record = state.record;
    // Open while recording, so that Stop is in sight.
    if (record.active) ImGui::SetNextItemOpen(true);
    if (!ImGui::CollapsingHeader("Record animation")) return;
    RecordOptions& options = record.options;
    // What to write cannot change while a recording runs: the files would not match.
    ImGui::BeginDisabled(record.active);
    ImGui::SetNextItemWidth(1.5f * item_width());
    ImGui::InputTextWithHint("folder", "elastodyn-record-<date-time>", record.dir.data(),
                             record.dir.size());
    ImGui::Checkbox("ParaView .vtu", &options.vtu);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("frame_NNNNN.vtu per step + series.pvd: every node, displacement,\n"
                          "velocity, pinned, von Mises");
    ImGui::SameLine();
    ImGui::Checkbox("surface", &options.surface);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("surface/frame_NNNNN.obj|ply: the deformed boundary (Blender, Houdini);\n"
                          "each file complete, so cuts and refinements need nothing special");
    ImGui::SameLine();
    int format = options.surface_format == SurfaceFormat::Ply ? 1 : 0;
    const char* formats[] = {"obj", "ply"};
    ImGui::SetNextItemWidth(0.4f * item_width());
    if (ImGui::Combo("##format", &format, formats, 2))
        options.surface_format = format == 1 ? SurfaceFormat::Ply : SurfaceFormat::Obj;
    ImGui::Checkbox("PNG frames", &options.png);
    ImGui::SameLine();
    ImGui::BeginDisabled(!record.ffmpeg || !options.png);
    bool video = options.video && record.ffmpeg && options.png;
    if (ImGui::Checkbox("mp4", &video)) options.video = video;
    ImGui::EndDisabled();
    if (!record.ffmpeg && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("ffmpeg is not on the PATH: the PNG frames are kept");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(0.6f * item_width());
    if (ImGui::InputInt("every", &options.every)) options.every = std::max(options.every, 1);
    ImGui::EndDisabled();
    if (record.active) ImGui::PushStyleColor(ImGuiCol_Button, ImVec4(0.75f, 0.15f, 0.15f, 1.0f));
    actions.toggle_animation = ImGui::Button(record.active ? "Stop" : "Record");
    if (record.active) ImGui::PopStyleColor();
    if (!record.ffmpeg) {
        ImGui::SameLine();
        ImGui::TextDisabled("(no ffmpeg: no mp4)");
    }
    if (!record.status.empty()) ImGui::TextWrapped("%s", record.status.c_str());
}

} // namespace edn::gui_detail
