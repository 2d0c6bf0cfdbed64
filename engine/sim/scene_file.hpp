#pragma once
/// Scene files: one JSON document with everything a run needs (docs/SCENES.md) - the mesh and
/// its meshing options, the settings (sim/settings_json.hpp: material or preset, order, backend,
/// summation, integrator, solver, ground), pins (planes, boxes, 1-based vertex lists), the frame
/// count and timed actions (drag, release, cut, refine, refine_uniform: the engine-level part of
/// the app's --script vocabulary, in world coordinates). `elastodyn-cli simulate --scene` runs
/// one, the app loads and saves them. Reading is strict: an unknown key, a wrong type or a bad
/// value is one edn::Error(Parse) "FILE:LINE: key: problem".

#include "core/json.hpp"
#include "mesh/cut.hpp"
#include "mesh/tetrahedralize.hpp"
#include "sim/pins.hpp"
#include "sim/simulation.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edn {

/// The scene format version this build reads and writes.
inline constexpr int kSceneVersion = 1;

/// One pin entry: exactly one of a plane, a box or a vertex list.
struct ScenePin {
    std::optional<PinPlane> plane; ///< one side of an axis-aligned plane
    std::optional<PinBox> box;     ///< an axis-aligned box
    std::vector<Index> vertices;   ///< 0-based here, 1-based in the file (as in OBJ)
    std::string where;             ///< "FILE:LINE: pins[i]" for messages
};

/// A scripted drag of one vertex towards a world point (a region of `radius` around it follows).
struct SceneDrag {
    Index vertex = 0;                          ///< 0-based here, 1-based in the file
    Vec3 target{};                             ///< world point it is pulled to [m]
    double stiffness = DragSpring{}.stiffness; ///< [N/m]
    double radius = 0;                         ///< rest-space region radius (0: one point)
};

/// A refinement brush: the cells touching a sphere.
struct SceneRefine {
    Vec3 center{};             ///< world centre [m]
    double radius = 0;         ///< > 0
    std::optional<int> levels; ///< bisection rounds 1..8; default Simulation::refine_sphere's
};

/// What happens before one frame; applied in the order drag/release, cut, refine,
/// refine_uniform (the app script's order).
struct SceneAction {
    std::int64_t frame = 0;            ///< applied before this frame's step (frame 0: at the start)
    std::optional<SceneDrag> drag;     ///< start (or replace) the drag
    bool release = false;              ///< end the drag
    std::optional<CutPlane> cut;       ///< cut along a plane
    std::optional<SceneRefine> refine; ///< refine brush
    bool refine_uniform = false;       ///< every cell 1 -> 8
    std::string where;                 ///< "FILE:LINE: actions[i]" for messages
};

/// A scene: what a scene file holds, read onto given default settings.
struct SceneFile {
    std::filesystem::path path;         ///< the scene file (empty when made in code)
    std::filesystem::path mesh;         ///< the mesh file, resolved against the scene's folder
    TetrahedralizeOptions meshing;      ///< for OBJ meshes (TetrahedralizeOptions' defaults)
    SimulationSettings settings;        ///< the defaults it was read onto, with the scene's values
    std::vector<ScenePin> pins;         ///< applied together at the start
    std::optional<std::int64_t> frames; ///< steps to run (simulate's --frames)
    std::vector<SceneAction> actions;   ///< sorted by frame (stable)
};

/// Parses scene text; `path` names it in messages and relative mesh paths resolve against its
/// folder. Settings the scene leaves out keep `defaults`' values.
SceneFile parse_scene(std::string_view text, const std::filesystem::path& path,
                      const SimulationSettings& defaults = {});

/// Reads and parses a scene file (Io error when it cannot be read).
SceneFile load_scene_file(const std::filesystem::path& path,
                          const SimulationSettings& defaults = {});

/// The scene as JSON for a file in `directory` (the mesh path is written relative to it).
/// Settings: see write_settings_json (`defaults`: members equal to it are left out, except the
/// physics). Parsed back onto the same defaults it gives an equal scene.
Json scene_to_json(const SceneFile& scene, const std::filesystem::path& directory,
                   const SimulationSettings* defaults = nullptr);

/// Writes scene_to_json atomically to `path`.
void write_scene_file(const std::filesystem::path& path, const SceneFile& scene,
                      const SimulationSettings* defaults = nullptr);

/// The per-vertex pin mask (#V of `mesh`) of the scene's pins. Throws edn::Error(Parse) naming
/// the entry when a listed vertex is not in 1..#V.
std::vector<std::uint8_t> scene_vertex_pins(const SceneFile& scene, const TetMesh& mesh);

/// Applies `action` to `simulation`: drag or release, then cut, refine, refine_uniform. Throws
/// edn::Error naming the action when its vertex is out of range (others as Simulation's).
void apply_scene_action(Simulation& simulation, const SceneAction& action);

} // namespace edn
