#pragma once
/// Helpers shared by the GUI's files (gui.cpp: placement, Statistics, Scene, legend, help;
/// gui_simulation.cpp: Simulation and Timings panels). Not part of the app's interface.

#include "gui.hpp"

#include <glm/vec3.hpp>
#include <imgui.h>
#include <string>

namespace edn {

class TimingRecorder;

namespace gui_detail {

/// Begins a panel at its layout rectangle (unless the user placed it by hand) and measures
/// what its content needed last frame, which the next layout uses. Pair with end_panel.
void begin_panel(GuiState& state, Panel panel, const char* title, ImGuiWindowFlags flags = 0);

/// Ends a panel begun with begin_panel.
void end_panel();

/// Width of input widgets: fixed (font-relative), so that a panel's content width does not
/// depend on the panel's width (the layout sizes panels from their content).
float item_width();

/// Text in the error colour, wrapped; nothing when empty.
void error_text(const std::string& text);

/// Packed ImGui colour of an RGB colour.
ImU32 to_u32(const glm::vec3& color);

/// The Simulation panel: backend, order, run controls and collapsible sections.
void simulation_panel(GuiState& state, GuiActions& actions);

/// The Scene panel's scene and state files section (app/gui_files.cpp).
void files_section(GuiState& state, GuiActions& actions);

/// The Timings panel: stacked per-stage plot, recording, screenshot.
void timing_panel(GuiState& state, const TimingRecorder& timings, GuiActions& actions);

/// The Record animation section (gui_record.cpp): outputs, every K, Record / Stop, status.
void record_section(GuiState& state, GuiActions& actions);

} // namespace gui_detail
} // namespace edn
