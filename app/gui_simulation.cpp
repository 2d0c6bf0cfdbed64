// The Simulation and Timings panels (the rest of the GUI is in gui.cpp). The Simulation panel is
// a column of sections, one function each, so a new control goes into the section it belongs
// to (or a new section) without touching the others.

#include "gui_detail.hpp"
#include "sim/names.hpp"
#include "sim/presets.hpp"
#include "timings.hpp"

#include <algorithm>
#include <array>
#include <imgui.h>
#include <span>

namespace edn::gui_detail {
namespace {

/// Frames averaged for the numbers shown (about half a second at 60 Hz: readable, still live).
constexpr std::size_t kAveragedFrames = 30;
/// Frames in the stacked timing plot.
constexpr std::size_t kPlotFrames = 300;

/// An InputDouble that reports a change only when editing ends (no rebuild per keystroke).
bool edit_double(const char* label, double* value, const char* format) {
    ImGui::InputDouble(label, value, 0.0, 0.0, format);
    return ImGui::IsItemDeactivatedAfterEdit();
}

bool edit_int(const char* label, int* value) {
    ImGui::InputInt(label, value, 0, 0);
    return ImGui::IsItemDeactivatedAfterEdit();
}

/// A combo box over the names table of E (sim/names.hpp), showing the GUI labels; true when the
/// user picked a value.
template <class E> bool choice_combo(const char* title, E& value) {
    constexpr auto& entries = Names<E>::values;
    std::array<const char*, entries.size()> labels{};
    for (std::size_t i = 0; i < entries.size(); ++i) labels[i] = entries[i].label;
    int index = index_of(value);
    const bool changed =
        ImGui::Combo(title, &index, labels.data(), static_cast<int>(labels.size()));
    value = entries[index].value;
    return changed;
}

/// Backend and order radio buttons; true when one changed.
bool backend_and_order(GuiState& state) {
    SimulationSettings& s = state.settings;
    bool changed = false;
    for (const NamedValue<Backend>& entry : Names<Backend>::values) {
        if (entry.value != Names<Backend>::values.front().value) ImGui::SameLine();
        // Without a usable device the CUDA choice could only fail: show it, greyed out, and say
        // why.
        const bool unavailable = entry.value == Backend::Cuda && !state.cuda_available;
        if (unavailable) ImGui::BeginDisabled();
        if (ImGui::RadioButton(entry.label, s.backend == entry.value)) {
            changed = true;
            s.backend = entry.value;
            state.backend_notice.clear(); // the user chose
        }
        if (unavailable) {
            ImGui::EndDisabled();
            if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
                ImGui::SetTooltip("CUDA unavailable: %s", state.cuda_unavailable_reason.c_str());
        }
    }
    ImGui::SameLine();
    ImGui::TextUnformatted("  order");
    for (const NamedValue<int>& entry : kOrderNames) {
        ImGui::SameLine();
        changed |= ImGui::RadioButton(entry.label, &s.order, entry.value);
    }
    if (!state.backend_notice.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.75f, 0.3f, 1.0f));
        ImGui::TextWrapped("%s", state.backend_notice.c_str());
        ImGui::PopStyleColor();
    }
    return changed;
}

/// Pause, step, reset.
void run_controls(GuiState& state, GuiActions& actions) {
    ImGui::Checkbox("Pause (space)", &state.paused);
    ImGui::SameLine();
    actions.step_once = ImGui::Button("Step (S)");
    ImGui::SameLine();
    actions.reset_simulation = ImGui::Button("Reset (R)");
}

/// The material presets (sim/presets.hpp) with "custom" first: shows the preset whose E, nu,
/// rho are set; picking one sets them (a rebuild, as editing them does). True when one was picked.
bool preset_combo(SimulationSettings& s) {
    const std::span<const MaterialPreset> presets = material_presets();
    const MaterialPreset* current = matching_preset(s);
    bool changed = false;
    if (ImGui::BeginCombo("preset", current ? current->label : "custom")) {
        for (const MaterialPreset& preset : presets) {
            if (ImGui::Selectable(preset.label, &preset == current) && &preset != current) {
                apply_preset(preset, s);
                changed = true;
            }
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", preset.source);
        }
        ImGui::EndCombo();
    }
    if (current && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", current->source);
    return changed;
}

/// Material, time step and loads; true when a setting changed.
bool model_section(SimulationSettings& s) {
    if (!ImGui::CollapsingHeader("Model", ImGuiTreeNodeFlags_DefaultOpen)) return false;
    // Model and preset share a row: the panel keeps its height (at 1280 x 720 one more row
    // makes it scroll, and the scroll bar clips its widest row).
    ImGui::SetNextItemWidth(0.55f * item_width());
    bool changed = choice_combo("material", s.material);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(0.7f * item_width());
    changed |= preset_combo(s);
    changed |= edit_double("E [Pa]", &s.young, "%.4g");
    changed |= edit_double("nu", &s.poisson, "%.3f");
    changed |= edit_double("rho [kg/m3]", &s.density, "%.4g");
    changed |= choice_combo("integrator", s.integrator);
    changed |= edit_double("dt [s]", &s.dt, "%.4g");
    ImGui::InputScalarN("gravity", ImGuiDataType_Double, s.gravity.data(), 3, nullptr, nullptr,
                        "%.2f");
    changed |= ImGui::IsItemDeactivatedAfterEdit();
    changed |= edit_double("damping [1/s]", &s.mass_damping, "%.3g");
    return changed;
}

/// Assembly, Newton and CG; folded by default (the defaults suit most scenes).
bool solver_section(SimulationSettings& s) {
    if (!ImGui::CollapsingHeader("Solver")) return false;
    bool changed = choice_combo("summation", s.summation);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("auto: per-simplex on CUDA for p = 1 meshes whose element matrices "
                          "exceed 4x the GPU's L2 cache (about 400K tets on an H100), "
                          "per-entry otherwise");
    changed |= choice_combo("preconditioner", s.preconditioner);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("multigrid (default): smoothed aggregation (p-multigrid to P1 first "
                          "at p >= 2); two-level: block Jacobi + a P1 coarse correction at "
                          "p >= 2, the multigrid at p = 1");
    changed |= choice_combo("PSD projection", s.projection);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("on demand: exact Hessians (Newton converges fast); an iteration whose "
                          "exact solve gives no descent direction is redone projected; always: "
                          "projected");
    changed |= edit_double("Newton tol", &s.newton_tolerance, "%.2g");
    changed |= edit_int("Newton cap", &s.max_newton_iterations);
    changed |= edit_double("budget [ms]", &s.frame_budget_ms, "%.3g");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("wall-clock budget of a frame's Newton iterations (0: none)");
    changed |= edit_double("CG tol", &s.pcg.relative_tolerance, "%.2g");
    changed |= edit_int("CG cap", &s.pcg.max_iterations);
    changed |= ImGui::Checkbox("CG forcing term", &s.cg_forcing);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("inexact Newton: loose early solves, CG tol as the floor");
    return changed;
}

/// Pins and the drag spring.
void pins_section(GuiState& state, GuiActions& actions) {
    if (!ImGui::CollapsingHeader("Pins and drag", ImGuiTreeNodeFlags_DefaultOpen)) return;
    ImGui::SetNextItemWidth(item_width());
    ImGui::SliderFloat("##pin_height", &state.pin_height, 0.0f, 0.5f, "%.3f of height");
    ImGui::SameLine();
    actions.pin_below = ImGui::Button("Pin below");
    actions.clear_pins = ImGui::Button("Clear pins");
    ImGui::SliderFloat("brush [px]", &state.brush_radius, 2.0f, 200.0f, "%.0f");
    ImGui::InputFloat("drag k [N/m]", &state.drag_stiffness, 0.0f, 0.0f, "%.4g");
    state.drag_stiffness = std::max(state.drag_stiffness, 0.0f);
    ImGui::SetNextItemWidth(item_width());
    ImGui::SliderFloat("drag radius", &state.drag_radius_fraction, 0.0f, 0.5f, "%.3f of diag.");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("nodes within this rest distance of the grabbed point follow the "
                          "cursor, less with distance (0: one point)");
}

const ImVec4 kWarningColor(1.0f, 0.8f, 0.3f, 1.0f);

/// What holds the body: the ground (toggle, height, friction), pins by a plane along any axis
/// and side, and the warning when nothing holds it.
void supports_section(GuiState& state, GuiActions& actions) {
    if (!state.support_warning.empty()) { // shown even with the section folded
        ImGui::PushStyleColor(ImGuiCol_Text, kWarningColor);
        ImGui::TextWrapped("%s", state.support_warning.c_str());
        ImGui::PopStyleColor();
    }
    if (!ImGui::CollapsingHeader("Ground and pin planes", ImGuiTreeNodeFlags_DefaultOpen)) return;
    bool ground = ImGui::Checkbox("Ground", &state.ground);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(0.6f * item_width());
    ground |= edit_double("z [m]##ground", &state.ground_height, "%.4g");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("ground plane height (drawn as the grid)");
    ImGui::SetNextItemWidth(item_width());
    ground |= edit_double("friction [1/s]##ground", &state.ground_friction, "%.3g");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("tangential damping of nodes on the ground [1/s] (0: frictionless)");
    state.ground_friction = std::max(state.ground_friction, 0.0);
    actions.ground_changed = ground;

    constexpr std::array<const char*, 3> kAxes = {"x", "y", "z"};
    constexpr std::array<const char*, 2> kSides = {"below", "above"};
    ImGui::SetNextItemWidth(45);
    ImGui::Combo("##pin_axis", &state.pin_axis, kAxes.data(), static_cast<int>(kAxes.size()));
    ImGui::SameLine();
    int side = state.pin_above ? 1 : 0;
    ImGui::SetNextItemWidth(70);
    ImGui::Combo("##pin_side", &side, kSides.data(), static_cast<int>(kSides.size()));
    state.pin_above = side == 1;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(70);
    ImGui::SliderFloat("##pin_plane", &state.pin_plane_fraction, 0.0f, 0.5f, "%.3f");
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("pinned slab: fraction of the extent along the axis, from that side");
    ImGui::SameLine();
    actions.pin_plane = ImGui::Button("Pin side");
}

/// Cut mode, refine brush, uniform refinement, undo, and the outcome of the last of them.
void edit_section(GuiState& state, GuiActions& actions) {
    if (!ImGui::CollapsingHeader("Cut and refine", ImGuiTreeNodeFlags_DefaultOpen)) return;
    // Cut mode and its tool in one combo (a row of its own would push the panel into a
    // scrollbar): the stroke cuts as it is drawn, the plane once at release.
    int cut = state.cut_mode ? (state.cut_tool == CutTool::Plane ? 2 : 1) : 0;
    ImGui::SetNextItemWidth(ImGui::CalcTextSize("stroke").x + ImGui::GetFrameHeight() +
                            2.0f * ImGui::GetStyle().FramePadding.x);
    if (ImGui::Combo("Cut (C)", &cut, "off\0stroke\0plane\0")) {
        state.cut_mode = cut != 0;
        if (cut != 0) {
            state.cut_tool = cut == 2 ? CutTool::Plane : CutTool::Stroke;
            state.refine_mode = false; // one left-click tool at a time
        }
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("left drag: stroke cuts as it is drawn, plane cuts once at release");
    ImGui::SameLine();
    if (ImGui::Checkbox("Refine brush (B)", &state.refine_mode) && state.refine_mode)
        state.cut_mode = false;
    ImGui::SetNextItemWidth(item_width());
    ImGui::SliderFloat("##refine_radius", &state.refine_radius_fraction, 0.005f, 0.5f,
                       "r %.3f of diag.", ImGuiSliderFlags_Logarithmic);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(0.5f * item_width());
    ImGui::SliderInt("levels", &state.refine_levels, 1, 5);
    actions.refine_uniform = ImGui::Button("Refine all (1->8)");
    ImGui::SameLine();
    actions.undo = ImGui::Button("Undo (Ctrl+Z)");
    if (!state.cut_message.empty()) ImGui::TextWrapped("%s", state.cut_message.c_str());
}

} // namespace

void simulation_panel(GuiState& state, GuiActions& actions) {
    begin_panel(state, Panel::Simulation, "Simulation");
    SimulationSettings& s = state.settings;
    bool changed = backend_and_order(state);
    run_controls(state, actions);
    error_text(state.sim_error);
    changed |= model_section(s);
    changed |= solver_section(s);
    actions.settings_changed = changed;
    pins_section(state, actions);
    supports_section(state, actions);
    edit_section(state, actions);
    end_panel();
}

void timing_panel(GuiState& state, const TimingRecorder& timings, GuiActions& actions) {
    begin_panel(state, Panel::Timings, "Timings");
    const std::vector<FrameTimings> frames = timings.recent(kPlotFrames);
    // Stacked segments, bottom to top.
    struct Segment {
        const char* name;
        glm::vec3 color;
    };
    const std::array<Segment, 8> segments = {{{"element", {0.90f, 0.35f, 0.30f}},
                                              {"summation", {0.95f, 0.65f, 0.20f}},
                                              {"pcg", {0.35f, 0.70f, 0.95f}},
                                              {"line search", {0.60f, 0.45f, 0.90f}},
                                              {"sim other", {0.55f, 0.55f, 0.55f}},
                                              {"surface/upload", {0.35f, 0.85f, 0.45f}},
                                              {"render", {0.95f, 0.90f, 0.35f}},
                                              {"ui/poll/swap", {0.30f, 0.30f, 0.35f}}}};
    auto split = [](const FrameTimings& f) {
        std::array<double, 8> v{};
        double sim_parts = 0.0;
        for (std::size_t s = 0; s < kSimStageCount; ++s) {
            v[s] = f.sim_ms[s];
            sim_parts += f.sim_ms[s];
        }
        v[4] = std::max(0.0, f.stage_ms[static_cast<std::size_t>(Stage::Simulate)] - sim_parts);
        v[5] = f.stage_ms[static_cast<std::size_t>(Stage::Surface)];
        v[6] = f.stage_ms[static_cast<std::size_t>(Stage::Render)];
        v[7] = std::max(0.0, f.total_ms - f.stage_ms[static_cast<std::size_t>(Stage::Simulate)] -
                                 v[5] - v[6]);
        return v;
    };
    double peak = 1.0;
    for (const FrameTimings& f : frames) peak = std::max(peak, f.total_ms);
    const double frame_ms = timings.mean_ms(Stage::Count, kAveragedFrames);
    ImGui::Text("%.1f fps, %.2f ms/frame, scale %.1f ms", frame_ms > 0 ? 1000.0 / frame_ms : 0.0,
                frame_ms, peak);
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float width = std::max(ImGui::GetContentRegionAvail().x, 50.0f);
    const float height = 6.0f * ImGui::GetFontSize();
    ImDrawList* draw = ImGui::GetWindowDrawList();
    draw->AddRectFilled(origin, ImVec2(origin.x + width, origin.y + height),
                        IM_COL32(20, 20, 24, 255));
    const float bar = width / static_cast<float>(kPlotFrames);
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const std::array<double, 8> parts = split(frames[i]);
        const float x0 = origin.x + width - static_cast<float>(frames.size() - i) * bar;
        float y = origin.y + height;
        for (std::size_t s = 0; s < parts.size(); ++s) {
            const float h = static_cast<float>(parts[s] / peak) * height;
            if (h <= 0.0f) continue;
            draw->AddRectFilled(ImVec2(x0, y - h), ImVec2(x0 + std::max(bar, 1.0f), y),
                                to_u32(segments[s].color));
            y -= h;
        }
    }
    ImGui::Dummy(ImVec2(width, height));
    const std::array<double, 8> latest =
        frames.empty() ? std::array<double, 8>{} : split(frames.back());
    const float second_column = 15.0f * ImGui::GetFontSize();
    for (std::size_t s = 0; s < segments.size(); ++s) {
        if (s % 2 == 1) ImGui::SameLine(second_column);
        ImGui::ColorButton(segments[s].name,
                           ImVec4(segments[s].color.r, segments[s].color.g, segments[s].color.b, 1),
                           ImGuiColorEditFlags_NoTooltip, ImVec2(10, 10));
        ImGui::SameLine();
        ImGui::Text("%s %.2f", segments[s].name, latest[s]);
    }
    // Re-patterning happens once per cut or refinement: show the latest one in the plotted window.
    for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
        if (f->repattern_ms > 0.0) {
            ImGui::Text("repattern %.2f (frame %lld)", f->repattern_ms,
                        static_cast<long long>(f->frame));
            break;
        }
    }
    actions.toggle_record = ImGui::Button(state.recording ? "Stop recording" : "Record CSV");
    ImGui::SameLine();
    actions.screenshot = ImGui::Button("Screenshot");
    if (!state.status_message.empty()) ImGui::TextWrapped("%s", state.status_message.c_str());
    record_section(state, actions);
    end_panel();
}

} // namespace edn::gui_detail
