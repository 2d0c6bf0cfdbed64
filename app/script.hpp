#pragma once
/// Timed action scripts for headless runs (`--script actions.json`): what a user would do with
/// the mouse and the panels, at given frames, so tests and benchmarks can drive the app.
///
///     {"actions": [{"frame": 0, "pin_below": 0.05},
///                  {"frame": 10, "drag": {"from": [640, 360], "to": [0.3, 0, 1.2]}},
///                  {"frame": 40, "release": true},
///                  {"frame": 50, "order": 2}, {"frame": 60, "summation": "per_simplex"},
///                  {"frame": 70, "material": "corotational"}, {"frame": 80, "backend": "cuda"}]}
///
/// Keys of one action (several may be combined): pin_below Z (world z; adds pins), pin_plane
/// {axis: x|y|z, side?: below|above (default below), fraction: f (the pinned slab's share of the
/// extent along the axis, from that side) | at: c (world coordinate)} (adds pins), unpin_all,
/// ground true|false, ground_height Z (world; default: the grid's, the mesh bottom),
/// ground_friction F [1/s], drag {from: [px, py] screen pixels | vertex: i, to: [x, y, z] world
/// | [px, py] screen at the picked depth, stiffness?, radius? (world, rest space: the region
/// that follows; 0: one point; default the GUI's)}, release, order 1..3, summation
/// auto|per_entry|per_simplex|inline, preconditioner two_level|block_jacobi, material
/// linear|corotational|neohookean, backend cpu|cuda, integrator, preset NAME (sim/presets.hpp;
/// sets young, poisson, density, which win when also given), young, poisson, density, dt,
/// damping, newton_iterations, gravity [x, y, z], pause, step, reset, color
/// none|von_mises|displacement, wireframe, help (the F1 overlay), cut {point: [x, y, z], normal:
/// [x, y, z], radius?} (world; cuts the mesh along the plane, faces within radius of point) or cut
/// {from: [px, py], to: [px, py]} (a screen stroke, as drawn in cut mode), refine {center: [x, y,
/// z] | pixel: [px, py], radius?, levels?} (refine brush: the cells within radius of the world
/// point or of the surface point under the pixel, levels 1..8 bisection rounds; defaults: the GUI's
/// brush), refine_uniform (every cell 1 -> 8), undo (back to the state before the last cut or
/// refinement), cut_tool stroke|plane (what cut mode's stroke does: cut as it is drawn, or one
/// plane at release; the panel's choice), stroke [px, py] (cut mode's stroke, as the mouse draws
/// it: the first presses the left button there, each further one moves it there, cutting the swept
/// piece when it moved far enough), stroke_release (lets go at the last stroke pixel; a whole
/// stroke undoes as one step). Cut, stroke, stroke_release, refine, refine_uniform and undo apply
/// in that order, after the other keys. record true|false|"DIR" starts (into the panel's folder, or
/// DIR) or stops recording the animation (app/recorder.hpp). color_range [low, high] sets a manual
/// colour range, color_range "auto" goes back to the 2-98th percentile of the surface values (the
/// default). save_scene FILE, save_state FILE and load_state FILE do what the Scene panel's buttons
/// do (app/app_files.cpp), last, in that order.

#include "core/types.hpp"
#include "cut_stroke.hpp"
#include "sim/presets.hpp"
#include "sim/simulation.hpp"
#include "supports.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace edn {

/// What the surface colour shows.
enum class ColorMode : std::uint8_t { None, VonMises, Displacement };

/// "none", "von_mises", "displacement".
const char* color_mode_name(ColorMode mode);
/// Parses a colour mode name; nullopt when unknown.
std::optional<ColorMode> parse_color_mode(std::string_view name);

/// A scripted drag: where it grabs and where it pulls.
struct ScriptDrag {
    std::optional<std::array<double, 2>> from_pixel; ///< grab the surface under this pixel
    std::optional<Index> from_vertex;                ///< or grab this mesh vertex
    std::optional<std::array<double, 3>> to_world;   ///< pull towards this point
    std::optional<std::array<double, 2>> to_pixel;   ///< or towards this pixel at the grab depth
    std::optional<double> stiffness;                 ///< spring stiffness [N/m]; default: app's
    std::optional<double> radius; ///< region radius [m] (rest space; 0: a point); default: GUI's
};

/// A scripted cut: the blade plane in world coordinates (edn::CutPlane), or a screen stroke.
struct ScriptCut {
    std::array<double, 3> point{};  ///< a point on the plane
    std::array<double, 3> normal{}; ///< plane normal
    std::optional<double> radius;   ///< only faces within this distance of point; default all
    std::optional<std::array<double, 2>> from_pixel; ///< stroke start (instead of the plane)
    std::optional<std::array<double, 2>> to_pixel;   ///< stroke end
};

/// A scripted refine brush: a sphere around a world point or around the picked surface point.
struct ScriptRefine {
    std::optional<Vec3> center;                 ///< world centre
    std::optional<std::array<double, 2>> pixel; ///< or the surface point under this pixel
    std::optional<double> radius;               ///< world radius; default: the GUI brush's
    std::optional<int> levels;                  ///< bisection rounds 1..8; default: the GUI's
};

/// A manual colour range of the surface scalars (low < high).
struct ScriptColorRange {
    double low = 0.0;  ///< scalar at the bottom of the colour map
    double high = 1.0; ///< scalar at the top of the colour map
};

/// One scripted action; every present member is applied at `frame`.
struct ScriptAction {
    std::int64_t frame = 0;                       ///< frame at whose start it applies
    std::optional<double> pin_below;              ///< pin vertices with rest z below this
    std::optional<PinPlane> pin_plane;            ///< pin one side of an axis-aligned plane
    std::optional<bool> ground;                   ///< ground plane on or off
    std::optional<double> ground_height;          ///< ground plane height [m]
    std::optional<double> ground_friction;        ///< ground friction [1/s]
    bool unpin_all = false;                       ///< remove every pin
    std::optional<ScriptDrag> drag;               ///< start (or move) a drag
    bool release = false;                         ///< end the drag
    std::optional<int> order;                     ///< element order
    std::optional<SummationMethod> summation;     ///< summation method
    std::optional<Preconditioner> preconditioner; ///< PCG preconditioner (p >= 2)
    std::optional<Material> material;             ///< material model
    std::optional<Backend> backend;               ///< backend
    std::optional<Integrator> integrator;         ///< time integrator
    /// Material preset (sim/presets.hpp): E, nu, rho; young/poisson/density keys win over it.
    const MaterialPreset* preset = nullptr;
    std::optional<double> young;                  ///< Young's modulus
    std::optional<double> poisson;                ///< Poisson's ratio
    std::optional<double> density;                ///< density
    std::optional<double> dt;                     ///< time step
    std::optional<double> damping;                ///< mass damping
    std::optional<int> newton_iterations;         ///< Newton iterations per frame
    std::optional<std::array<double, 3>> gravity; ///< gravity vector
    std::optional<bool> pause;                    ///< pause or resume
    bool step = false;                            ///< one step while paused
    bool reset = false;                           ///< back to rest, pins kept
    std::optional<ColorMode> color;               ///< surface colour
    std::optional<bool> wireframe;                ///< wireframe overlay
    std::optional<bool> help;                     ///< the mouse and key help overlay (F1)
    std::optional<ScriptColorRange> color_range;  ///< manual colour range
    bool color_range_auto = false;                ///< percentile colour range again ("auto")
    std::optional<ScriptCut> cut;                 ///< cut the mesh (after the other keys)
    std::optional<CutTool> cut_tool;              ///< cut mode's tool (before the stroke)
    /// Cut mode's stroke: the left button held at this pixel (pressed at the first), after cut.
    std::optional<std::array<double, 2>> stroke;
    bool stroke_release = false;                     ///< release the stroke (after stroke)
    std::optional<ScriptRefine> refine;              ///< refine brush (after the cut)
    bool refine_uniform = false;                     ///< refine every cell 1 -> 8 (after refine)
    bool undo = false;                               ///< undo the last cut or refinement (last)
    std::optional<std::filesystem::path> save_scene; ///< write a scene file (after undo)
    std::optional<std::filesystem::path> save_state; ///< write a state file (after save_scene)
    std::optional<std::filesystem::path> load_state; ///< resume a state file (very last)
    /// Start (true) or stop (false) recording the animation, as the Record button (after all the
    /// other keys), with the panel's outputs (--record-every, --record-outputs).
    std::optional<bool> record;
    std::optional<std::filesystem::path> record_dir; ///< the folder of "record": "DIR"
};

/// Parses a script (see the file comment). Throws edn::Error(Parse) with one line naming the
/// file, the action and the problem. Actions come back sorted by frame (stable).
std::vector<ScriptAction> parse_script(const std::string& text, const std::string& source);

/// Reads and parses a script file; Io error when it cannot be read.
std::vector<ScriptAction> load_script(const std::filesystem::path& path);

} // namespace edn
