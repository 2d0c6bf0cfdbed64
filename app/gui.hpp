#pragma once
/// The ImGui panels. All UI state lives in GuiState (owned by App), never in static locals.

#include "core/types.hpp"
#include "script.hpp"
#include "sim/convergence.hpp"
#include "sim/simulation.hpp"

#include <array>
#include <cstdint>
#include <string>

namespace edn {

class TimingRecorder;
struct RenderSettings;

/// Numbers the Statistics panel shows.
struct SceneStatistics {
    std::string name;             ///< file name of the scene, empty when none is loaded
    Index vertices = 0;           ///< tet-mesh vertices
    Index cells = 0;              ///< tetrahedra
    Index boundary_faces = 0;     ///< triangles of the boundary surface
    Index surface_vertices = 0;   ///< vertices of the boundary surface
    bool simulated = false;       ///< a Simulation exists (the numbers below are meaningful)
    Index nodes = 0;              ///< simulation nodes (order-dependent)
    Index pinned_vertices = 0;    ///< vertices pinned by the user
    std::int64_t nnz_blocks = 0;  ///< non-zero 3x3 blocks of the system matrix
    std::size_t matrix_bytes = 0; ///< bytes of the system matrix
    Index components = 0;         ///< connected components
    Index cuts = 0;               ///< cuts applied in this run
    Index last_cut_faces = 0;     ///< interior faces the last cut opened
    Index last_duplicated = 0;    ///< vertices the last cut duplicated
    Index refinements = 0;        ///< refinements applied in this run
    double last_repattern_ms = 0; ///< building the Simulation after the last cut, refine or undo
    double last_pattern_build_ms = 0;    ///< its pattern and summation plans
    std::size_t undo_depth = 0;          ///< snapshots Ctrl+Z can go back to
    StepResult last_step;                ///< the most recent step's outcome
    bool stepped = false;                ///< last_step holds a step
    ConvergenceTally recent_convergence; ///< the last steps against the Newton tolerance
    double newton_tolerance = 0;         ///< the tolerance they were held to
    double steps_per_second = 0;         ///< completed simulation steps per second
    bool sim_thread = false;             ///< steps run on their own thread (else lockstep)
};

/// UI state that persists between frames.
struct GuiState {
    std::array<char, 1024> scene_input{}; ///< text of the scene loader field
    float quality = 1.4f;                 ///< TetGen radius-edge bound for OBJ files
    float max_volume = 0.0f;              ///< TetGen max tet volume (0: unbounded)
    bool loading = false;                 ///< a scene is being loaded on the worker thread
    double loading_seconds = 0.0;         ///< how long it has been loading
    std::string scene_error;              ///< last scene loading error, shown under the field
    std::string render_error;             ///< shader or GL error, shown in red
    std::string gl_description;           ///< "OpenGL 4.5 (Core Profile) ... on llvmpipe"
    /// A CUDA device can be used; without one the CUDA backend is shown greyed out, not offered.
    bool cuda_available = false;

    SimulationSettings settings; ///< settings being edited (the active ones after rebuild)
    std::string sim_error;       ///< last simulation build or step error
    bool paused = false;         ///< space
    float pin_height = 0.02f;    ///< "pin below" height, fraction of the mesh height
    float brush_radius = 20.0f;  ///< pin brush radius in pixels (shift-drag)
    float drag_stiffness = 0.0f; ///< drag spring stiffness [N/m]; 0 = not yet chosen
    ColorMode color_mode = ColorMode::VonMises; ///< what the surface colour shows
    bool auto_range = true;                     ///< colour range follows the data
    float range_max = 1.0f;                     ///< top of the colour range (von Mises [Pa] or [m])
    std::string upload_method = "glBufferSubData (CPU backend)"; ///< surface upload path (overlay)
    bool recording = false;     ///< per-frame timings are being recorded
    std::string status_message; ///< last screenshot/record file written
    bool cut_mode = false;      ///< C: a left drag draws a cutting stroke instead of pulling
    std::string cut_message;    ///< outcome of the last cut, refinement or undo (or why it failed)
    bool refine_mode = false;   ///< B: a left click refines the cells around the picked point
    float refine_radius_fraction = 0.05f; ///< refine brush radius, fraction of the bbox diagonal
    int refine_levels = 2;                ///< bisection rounds of the refine brush
    /// How OBJ scenes are meshed and how to get the full mesh (a line in the Scene panel).
    std::string mesh_hint;
};

/// What the user asked for in this frame's UI; the app carries it out.
struct GuiActions {
    bool load_scene = false;       ///< load the file in GuiState::scene_input
    bool fit_view = false;         ///< frame the mesh
    bool reset_view = false;       ///< default view angles, framing the mesh
    bool reload_shaders = false;   ///< recompile shaders/ (for editing them live)
    bool settings_changed = false; ///< rebuild the simulation with GuiState::settings
    bool step_once = false;        ///< one step while paused
    bool reset_simulation = false; ///< back to rest, pins kept
    bool pin_below = false;        ///< pin below GuiState::pin_height
    bool clear_pins = false;       ///< remove all pins
    bool toggle_record = false;    ///< start or stop recording timings
    bool screenshot = false;       ///< write a PNG of the next frame
    bool undo = false;             ///< undo the last cut or refinement
    bool refine_uniform = false;   ///< refine every cell 1 -> 8
};

/// Builds this frame's panels (between ImGui::NewFrame and ImGui::Render).
GuiActions build_gui(GuiState& state, const SceneStatistics& statistics,
                     const TimingRecorder& timings, RenderSettings& settings);

} // namespace edn
