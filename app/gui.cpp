#include "gui.hpp"

#include "colormap.hpp"
#include "core/device.hpp"
#include "renderer.hpp"
#include "sim/names.hpp"
#include "timings.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <imgui.h>

namespace edn {
namespace {

/// Frames averaged for the numbers shown (about half a second at 60 Hz: readable, still live).
constexpr std::size_t kAveragedFrames = 30;
/// Frames in the stacked timing plot.
constexpr std::size_t kPlotFrames = 300;

const ImVec4 kErrorColor(1.0f, 0.35f, 0.3f, 1.0f);

void error_text(const std::string& text) {
    if (text.empty()) return;
    ImGui::PushStyleColor(ImGuiCol_Text, kErrorColor);
    ImGui::TextWrapped("%s", text.c_str());
    ImGui::PopStyleColor();
}

ImU32 to_u32(const glm::vec3& c) {
    return ImGui::ColorConvertFloat4ToU32(ImVec4(c.r, c.g, c.b, 1.0f));
}

void statistics_panel(const GuiState& state, const SceneStatistics& statistics,
                      const TimingRecorder& timings) {
    ImGui::SetNextWindowPos(ImVec2(10, 10), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize(ImVec2(300, 0), ImGuiCond_FirstUseEver);
    ImGui::Begin("Statistics");
    ImGui::Text("Scene: %s", statistics.name.empty() ? "(none)" : statistics.name.c_str());
    ImGui::Text("upload: %s", state.upload_method.c_str()); // which surface path is active
    if (state.cut_mode) {
        ImGui::TextColored(ImVec4(1.0f, 0.6f, 0.2f, 1.0f), "CUT mode: left-drag a stroke (C: off)");
    }
    if (state.refine_mode) {
        ImGui::TextColored(ImVec4(0.4f, 0.9f, 1.0f, 1.0f), "REFINE brush: left-click (B: off)");
    }
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
        if (statistics.cuts > 0 || statistics.refinements > 0 || statistics.undo_depth > 0 ||
            statistics.last_repattern_ms > 0) {
            ImGui::Text("Cuts:            %d (undo depth %zu)", statistics.cuts,
                        statistics.undo_depth);
            ImGui::Text("Last cut:        %d faces, %d dup. vertices", statistics.last_cut_faces,
                        statistics.last_duplicated);
            ImGui::Text("Refinements:     %d", statistics.refinements);
            ImGui::Text("Re-pattern:      %.2f ms (pattern %.2f ms)", statistics.last_repattern_ms,
                        statistics.last_pattern_build_ms);
        }
        if (statistics.stepped) {
            const StepResult& step = statistics.last_step;
            ImGui::Text("Newton its:      %d%s%s", step.newton_iterations,
                        step.converged ? "" : " (not converged)",
                        step.recovered ? " RECOVERED" : "");
            // How the last seconds went: an unconverged frame is a mushy or laggy body.
            const ConvergenceTally& recent = statistics.recent_convergence;
            const bool all = recent.converged == recent.frames;
            ImGui::TextColored(all ? ImVec4(0.6f, 0.9f, 0.6f, 1.0f)
                                   : ImVec4(1.0f, 0.75f, 0.3f, 1.0f),
                               "Converged:       %lld/%lld recent frames (tol %.2g)",
                               static_cast<long long>(recent.converged),
                               static_cast<long long>(recent.frames), statistics.newton_tolerance);
            ImGui::Text("Worst:           %.3g rel. decrement, |g| %.3g",
                        recent.worst_relative_decrement, recent.worst_final_residual);
            ImGui::Text("CG its:          %d", step.cg_iterations);
            ImGui::Text("Residual:        %.3g -> %.3g", step.initial_residual,
                        step.final_residual);
            ImGui::Text("Energy: strain %.3g, kinetic %.3g", step.strain_energy,
                        step.kinetic_energy);
        }
    }
    ImGui::Separator();
    const double frame_ms = timings.mean_ms(Stage::Count, kAveragedFrames);
    // Two rates: the display's and the simulation's (on its own thread they differ).
    ImGui::Text("display %.1f fps (%.2f ms/frame)", frame_ms > 0.0 ? 1000.0 / frame_ms : 0.0,
                frame_ms);
    ImGui::Text("simulation %.1f steps/s (%s)", statistics.steps_per_second,
                statistics.sim_thread ? "own thread" : "lockstep, one per frame");
    ImGui::TextWrapped("%s", state.gl_description.c_str());
    ImGui::End();
}

void scene_panel(GuiState& state, RenderSettings& settings, GuiActions& actions) {
    ImGui::SetNextWindowPos(ImVec2(10, 330), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize(ImVec2(300, 0), ImGuiCond_FirstUseEver);
    ImGui::Begin("Scene");
    ImGui::TextUnformatted("Mesh file (.obj, .node/.ele, .msh)");
    const bool entered =
        ImGui::InputText("##scene", state.scene_input.data(), state.scene_input.size(),
                         ImGuiInputTextFlags_EnterReturnsTrue);
    ImGui::SameLine();
    const bool clicked = ImGui::Button("Load");
    actions.load_scene = (clicked || entered) && !state.loading;
    ImGui::SetNextItemWidth(100);
    ImGui::InputFloat("quality", &state.quality, 0.0f, 0.0f, "%.2f");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(100);
    ImGui::InputFloat("max vol", &state.max_volume, 0.0f, 0.0f, "%.2g");
    if (!state.mesh_hint.empty()) ImGui::TextWrapped("%s", state.mesh_hint.c_str());
    if (state.loading) {
        // TetGen runs in a child process without progress reports: an indeterminate bar.
        const float phase = static_cast<float>(std::fmod(state.loading_seconds, 2.0) / 2.0);
        ImGui::ProgressBar(phase, ImVec2(-1, 0), "meshing / loading ...");
        ImGui::Text("%.1f s", state.loading_seconds);
    }
    error_text(state.scene_error);
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
        ImGui::Checkbox("auto range", &state.auto_range);
        if (!state.auto_range) {
            ImGui::SameLine();
            ImGui::SetNextItemWidth(120);
            ImGui::InputFloat("max", &state.range_max, 0.0f, 0.0f, "%.3g");
            state.range_max = std::max(state.range_max, 1e-12f);
        }
    }
    actions.fit_view = ImGui::Button("Fit (F)");
    ImGui::SameLine();
    actions.reset_view = ImGui::Button("Reset view");
    ImGui::SameLine();
    actions.reload_shaders = ImGui::Button("Reload shaders");
    error_text(state.render_error);
    ImGui::TextDisabled("left drag: pull, shift drag: paint pins (ctrl: erase)");
    ImGui::TextDisabled("right: orbit, middle: pan, wheel: zoom");
    ImGui::TextDisabled("space: pause, S: step, R: reset, F: fit, Esc: quit");
    ImGui::TextDisabled("C: cut mode, B: refine brush, Ctrl+Z: undo");
    ImGui::End();
}

/// An InputDouble that reports a change only when editing ends (no rebuild per keystroke).
bool edit_double(const char* label, double* value, const char* format) {
    ImGui::InputDouble(label, value, 0.0, 0.0, format);
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

bool edit_int(const char* label, int* value) {
    ImGui::InputInt(label, value, 0, 0);
    return ImGui::IsItemDeactivatedAfterEdit();
}

void simulation_panel(GuiState& state, GuiActions& actions) {
    ImGui::SetNextWindowPos(ImVec2(ImGui::GetIO().DisplaySize.x - 330, 10), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize(ImVec2(320, 0), ImGuiCond_FirstUseEver);
    ImGui::Begin("Simulation");
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
        }
        if (unavailable) {
            ImGui::EndDisabled();
            if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
                ImGui::SetTooltip("no usable CUDA device (%s build)",
                                  built_with_cuda() ? "CUDA" : "CPU-only");
        }
    }

    ImGui::TextUnformatted("order");
    for (const NamedValue<int>& entry : kOrderNames) {
        ImGui::SameLine();
        changed |= ImGui::RadioButton(entry.label, &s.order, entry.value);
    }
    changed |= choice_combo("summation", s.summation);
    changed |= choice_combo("preconditioner", s.preconditioner);
    changed |= choice_combo("material", s.material);
    changed |= choice_combo("integrator", s.integrator);

    changed |= edit_double("E [Pa]", &s.young, "%.4g");
    changed |= edit_double("nu", &s.poisson, "%.3f");
    changed |= edit_double("rho [kg/m3]", &s.density, "%.4g");
    changed |= edit_double("dt [s]", &s.dt, "%.4g");
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
    ImGui::InputScalarN("gravity", ImGuiDataType_Double, s.gravity.data(), 3, nullptr, nullptr,
                        "%.2f");
    changed |= ImGui::IsItemDeactivatedAfterEdit();
    changed |= edit_double("damping [1/s]", &s.mass_damping, "%.3g");
    actions.settings_changed = changed;
    error_text(state.sim_error);

    ImGui::Separator();
    ImGui::Checkbox("Pause (space)", &state.paused);
    ImGui::SameLine();
    actions.step_once = ImGui::Button("Step (S)");
    ImGui::SameLine();
    actions.reset_simulation = ImGui::Button("Reset (R)");
    ImGui::SetNextItemWidth(120);
    ImGui::SliderFloat("##pin_height", &state.pin_height, 0.0f, 0.5f, "%.3f of height");
    ImGui::SameLine();
    actions.pin_below = ImGui::Button("Pin below");
    ImGui::SameLine();
    actions.clear_pins = ImGui::Button("Clear pins");
    ImGui::SliderFloat("brush [px]", &state.brush_radius, 2.0f, 200.0f, "%.0f");
    if (ImGui::Checkbox("Cut mode (C)", &state.cut_mode) && state.cut_mode)
        state.refine_mode = false; // one left-click tool at a time
    ImGui::SameLine();
    if (ImGui::Checkbox("Refine brush (B)", &state.refine_mode) && state.refine_mode)
        state.cut_mode = false;
    ImGui::SetNextItemWidth(120);
    ImGui::SliderFloat("##refine_radius", &state.refine_radius_fraction, 0.005f, 0.5f,
                       "r %.3f of diag.", ImGuiSliderFlags_Logarithmic);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(80);
    ImGui::SliderInt("levels", &state.refine_levels, 1, 5);
    actions.refine_uniform = ImGui::Button("Refine all (1->8)");
    ImGui::SameLine();
    actions.undo = ImGui::Button("Undo (Ctrl+Z)");
    if (!state.cut_message.empty()) ImGui::TextWrapped("%s", state.cut_message.c_str());
    ImGui::InputFloat("drag k [N/m]", &state.drag_stiffness, 0.0f, 0.0f, "%.4g");
    state.drag_stiffness = std::max(state.drag_stiffness, 0.0f);
    ImGui::End();
}

void timing_panel(GuiState& state, const TimingRecorder& timings, GuiActions& actions) {
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    ImGui::SetNextWindowPos(ImVec2(display.x - 430, display.y - 260), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowSize(ImVec2(420, 250), ImGuiCond_FirstUseEver);
    ImGui::Begin("Timings");
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
    const float height = 100.0f;
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
    for (std::size_t s = 0; s < segments.size(); ++s) {
        if (s % 2 == 1) ImGui::SameLine(200);
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
    ImGui::End();
}

void legend(const GuiState& state) {
    if (state.color_mode == ColorMode::None) return;
    const ImVec2 display = ImGui::GetIO().DisplaySize;
    ImGui::SetNextWindowPos(ImVec2(320, display.y - 80), ImGuiCond_FirstUseEver);
    ImGui::SetNextWindowBgAlpha(0.6f);
    ImGui::Begin("Legend", nullptr,
                 ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_AlwaysAutoResize |
                     ImGuiWindowFlags_NoFocusOnAppearing);
    const bool stress = state.color_mode == ColorMode::VonMises;
    ImGui::Text("%s", stress ? "von Mises stress [Pa]" : "displacement [m]");
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const float width = 240.0f;
    const float height = 14.0f;
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
    ImGui::Text("0");
    ImGui::SameLine(width - 50.0f);
    ImGui::Text("%.3g", state.range_max);
    ImGui::End();
}

} // namespace

GuiActions build_gui(GuiState& state, const SceneStatistics& statistics,
                     const TimingRecorder& timings, RenderSettings& settings) {
    GuiActions actions;
    statistics_panel(state, statistics, timings);
    scene_panel(state, settings, actions);
    simulation_panel(state, actions);
    timing_panel(state, timings, actions);
    legend(state);
    return actions;
}

} // namespace edn
