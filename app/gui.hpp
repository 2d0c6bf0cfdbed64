#pragma once
/// The ImGui panels. All UI state lives in GuiState (owned by App), never in static locals.

#include "color_range.hpp"
#include "core/types.hpp"
#include "panel_layout.hpp"
#include "recorder.hpp"
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
    Index last_split_cells = 0;   ///< cells the last cut split
    double last_cut_dihedral = 0; ///< smallest dihedral angle after the last cut [deg]
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

/// Whether a simulation backend can be chosen here, and if not, why (the tooltip of the greyed-out
/// choice and the warning of --backend and the script's `backend`).
struct BackendAvailability {
    bool usable = true; ///< the backend can be built on this machine
    std::string reason; ///< why not (one line), empty when usable
};

/// Availability of `backend` given what the build and the machine offer (pure; tests pass the
/// facts in).
BackendAvailability backend_availability(Backend backend, bool built_with_cuda,
                                         bool cuda_device_usable);

/// Availability of `backend` on this build and machine (probes the CUDA runtime for devices).
BackendAvailability backend_availability(Backend backend);

/// The panels the layout places, in the order of their rectangles.
enum class Panel { Statistics, Scene, Simulation, Timings, Legend, Count };

/// Number of panels.
inline constexpr std::size_t kPanelCount = static_cast<std::size_t>(Panel::Count);

/// Where the panels are: the layout of the current window size from the panels' measured
/// content, and which panels the user moved or resized by hand (those stay where the user put
/// them until the window size changes, then the layout takes them back).
struct PanelPlacement {
    float display_width = 0.0f;                   ///< window size the layout was made for
    float display_height = 0.0f;                  ///< window size the layout was made for
    std::array<PanelRequest, kPanelCount> wanted; ///< each panel's measured content size
    std::array<bool, kPanelCount> measured{};     ///< wanted holds a measurement (not a guess)
    std::array<bool, kPanelCount> shown{};        ///< drawn this frame (the legend may not be)
    std::array<PanelRect, kPanelCount> applied{}; ///< rectangle last given to ImGui
    std::array<bool, kPanelCount> user_placed{};  ///< moved or resized by hand
    PanelLayout layout;                           ///< this frame's layout, one rect per panel
};

/// The Record animation section (app/gui_record.cpp).
struct RecordGuiState {
    std::array<char, 1024> dir{}; ///< output folder; empty: elastodyn-record-<date-time>
    RecordOptions options = default_record_options(); ///< what to write (dir comes from `dir`)
    bool active = false;                              ///< a recording runs (the button says Stop)
    bool ffmpeg = false; ///< ffmpeg is on the PATH (the mp4 is offered)
    std::string status;  ///< the recorder's status line
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
    std::string cuda_unavailable_reason; ///< tooltip of the greyed-out CUDA choice
    std::string backend_notice;          ///< why the backend differs from --backend (until a pick)
    bool show_help = false;              ///< the help overlay (F1 or "?")
    PanelPlacement placement;            ///< panel rectangles (app/panel_layout.hpp)

    SimulationSettings settings; ///< settings being edited (the active ones after rebuild)
    std::string sim_error;       ///< last simulation build or step error
    bool paused = false;         ///< space
    float pin_height = 0.02f;    ///< "pin below" height, fraction of the mesh height
    float brush_radius = 20.0f;  ///< pin brush radius in pixels (shift-drag)
    float drag_stiffness = 0.0f; ///< drag spring stiffness [N/m]; 0 = not yet chosen
    ColorMode color_mode = ColorMode::VonMises;   ///< what the surface colour shows
    ColorRangeSettings color_range_settings;      ///< percentiles or a manual range
    ColorRange color_range;                       ///< range shown (von Mises [Pa] or [m])
    ColorMode color_range_mode = ColorMode::None; ///< mode color_range was measured for
    std::string upload_method = "glBufferSubData (CPU backend)"; ///< surface upload path (overlay)
    bool recording = false;     ///< per-frame timings are being recorded
    std::string status_message; ///< last screenshot/record file written
    bool cut_mode = false;      ///< C: a left drag draws a cutting stroke instead of pulling
    CutTool cut_tool = CutTool::Stroke; ///< the stroke cuts as drawn, or one plane at release
    std::string cut_message;  ///< outcome of the last cut, refinement or undo (or why it failed)
    bool refine_mode = false; ///< B: a left click refines the cells around the picked point
    float refine_radius_fraction = 0.05f; ///< refine brush radius, fraction of the bbox diagonal
    int refine_levels = 2;                ///< bisection rounds of the refine brush
    // Supports and drag (app/supports.hpp): the ground, pins by a plane, the drag's region.
    bool ground = true;            ///< the ground plane is on (SimulationSettings::ground_height)
    double ground_height = 0.0;    ///< its z [m]; a new scene puts it at the grid (the mesh bottom)
    double ground_friction = 10.0; ///< SimulationSettings::ground_friction [1/s]
    int pin_axis = 2;              ///< pin plane axis: 0 x, 1 y, 2 z
    bool pin_above = false;        ///< pin the side above the plane (else below)
    float pin_plane_fraction = 0.02f; ///< pinned slab, fraction of the extent along the axis
    /// Region drag radius, fraction of the bbox diagonal (rest space; 0: a single point).
    float drag_radius_fraction = 0.1f;
    std::string support_warning; ///< why the body would fall forever (support_warning), or empty
    /// How OBJ scenes are meshed and how to get the full mesh (a line in the Scene panel).
    std::string mesh_hint;
    RecordGuiState record; ///< the Record animation section
    /// Scene and state files (app/gui_files.cpp): the path field, the last outcome and whether
    /// it was an error (then shown in red).
    std::array<char, 1024> file_input{};
    std::string file_message;
    bool file_error = false;
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
    bool toggle_animation = false; ///< start or stop recording the animation (RecordGuiState)
    bool screenshot = false;       ///< write a PNG of the next frame
    bool undo = false;             ///< undo the last cut or refinement
    bool refine_uniform = false;   ///< refine every cell 1 -> 8
    bool ground_changed = false;   ///< apply GuiState::ground, ground_height, ground_friction
    bool pin_plane = false;        ///< pin the side of GuiState's pin plane
    // Scene and state files, the path in GuiState::file_input (app/app_files.cpp).
    bool load_scene_file = false; ///< load a scene (.json): mesh, settings, pins, actions
    bool save_scene_file = false; ///< save the setup as a scene (.json)
    bool save_state = false;      ///< save the current state (mesh after edits, node state)
    bool load_state = false;      ///< resume a saved state
};

/// The app's ImGui style: dark, with opaque popups (a combo list must not show text through).
void apply_gui_style();

/// Builds this frame's panels (between ImGui::NewFrame and ImGui::Render).
GuiActions build_gui(GuiState& state, const SceneStatistics& statistics,
                     const TimingRecorder& timings, RenderSettings& settings);

} // namespace edn
