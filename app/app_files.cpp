// App members for scene files (sim/scene_file.hpp, docs/SCENES.md) and saved states
// (sim/state_file.hpp): the Scene panel's Load scene / Save scene / Save state / Load state and
// `--scene FILE.json`. A failed load changes nothing: files are read and the new Simulation is
// built completely before the current scene is replaced.
#include "app.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "mesh/mesh_loader.hpp"
#include "sim/settings_options.hpp"
#include "sim/state_file.hpp"
#include "supports.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace edn {
namespace {

std::string lower_extension(const std::filesystem::path& path) {
    std::string extension = path.extension().string();
    for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return extension;
}

/// The vertices whose mask entry is set.
std::vector<Index> set_vertices(const std::vector<std::uint8_t>& mask, std::size_t count) {
    std::vector<Index> vertices;
    for (std::size_t v = 0; v < std::min(count, mask.size()); ++v)
        if (mask[v]) vertices.push_back(static_cast<Index>(v));
    return vertices;
}

/// The double a user means by the float `value` of a GUI field (1.4f: 1.4, not 1.39999998).
double decimal(float value) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.7g", static_cast<double>(value));
    return std::strtod(text, nullptr);
}

} // namespace

bool is_scene_file(const std::filesystem::path& path) {
    return lower_extension(path) == ".json";
}

bool is_state_file(const std::filesystem::path& path) {
    return lower_extension(path) == ".edns";
}

LoadedScene load_state_with_simulation(const std::filesystem::path& path) {
    SimulationState state = read_state_file(path);
    // A state saved on a GPU machine resumes on the CPU backend where there is none.
    if (state.settings.backend == Backend::Cuda && !cuda_device_available())
        state.settings.backend = Backend::Cpu;
    LoadedScene loaded;
    loaded.simulation = restore_simulation(state, path.string());
    loaded.scene = std::make_unique<Scene>(make_scene(path, std::move(state.mesh)));
    state.positions.clear();
    state.velocities.clear();
    loaded.state = std::move(state);
    return loaded;
}

SimulationSettings scene_defaults(const SimulationSettings& current) {
    SimulationSettings defaults = default_app_settings();
    defaults.backend = current.backend;
    defaults.frame_budget_ms = current.frame_budget_ms;
    defaults.ground_height.reset();
    return defaults;
}

LoadedScene
load_scene_file_with_simulation(const std::filesystem::path& path,
                                const SimulationSettings& current,
                                const std::vector<std::pair<std::string, std::string>>& overrides) {
    SceneFile file = load_scene_file(path, scene_defaults(current));
    apply_settings_options(overrides, file.settings); // the command line wins, as in simulate
    LoadedScene loaded;
    loaded.scene =
        std::make_unique<Scene>(make_scene(file.mesh, load_tet_mesh(file.mesh, file.meshing)));
    try {
        loaded.simulation = SimDriver::build(*loaded.scene, file.settings);
        // The scene's pins name vertices: check them before anything is replaced.
        scene_vertex_pins(file, loaded.scene->mesh);
    } catch (const Error& error) {
        if (error.code() == ErrorCode::Parse) throw;
        loaded.simulation_error = error.what();
    }
    loaded.scene_file = std::move(file);
    return loaded;
}

LoadedScene
load_with_simulation(const std::filesystem::path& path, const TetrahedralizeOptions& options,
                     const SimulationSettings& settings,
                     const std::vector<std::pair<std::string, std::string>>& overrides) {
    if (is_scene_file(path)) return load_scene_file_with_simulation(path, settings, overrides);
    if (is_state_file(path)) return load_state_with_simulation(path);
    LoadedScene loaded;
    loaded.scene = std::make_unique<Scene>(load_scene(path, options));
    try {
        loaded.simulation = SimDriver::build(*loaded.scene, settings);
    } catch (const Error& error) {
        loaded.simulation_error = error.what();
    }
    return loaded;
}

void App::file_outcome(std::string message, bool error) {
    gui_.file_message = std::move(message);
    gui_.file_error = error;
    if (error) errors_.push_back(gui_.file_message);
    if (options_.headless)
        std::cerr << "elastodyn: " << (error ? "error: " : "") << gui_.file_message << '\n';
}

void App::apply_file_actions(const GuiActions& actions) {
    const std::filesystem::path path = gui_.file_input.data();
    const bool any = actions.load_scene_file || actions.save_scene_file || actions.save_state ||
                     actions.load_state;
    if (any && path.empty()) {
        file_outcome("enter a file name first", true);
        return;
    }
    if (actions.load_scene_file && !gui_.loading) {
        if (!is_scene_file(path)) {
            file_outcome(path.string() + ": a scene file ends in .json (meshes load above)", true);
        } else {
            try {
                start_loading(resolve_scene_path(paths_, path));
                file_outcome("loading " + path.string() + " (a failure shows above)", false);
            } catch (const Error& error) {
                file_outcome(error.what(), true);
            }
        }
    }
    // In the UI's turn: the simulation thread is between steps there.
    if (actions.save_scene_file) post([this, path] { save_scene_file(path); });
    if (actions.save_state) post([this, path] { save_state_file(path); });
    if (actions.load_state) post([this, path] { load_state_file(path); });
}

void App::apply_scene_setup(const SceneFile& scene) {
    gui_.quality = static_cast<float>(scene.meshing.quality);
    gui_.max_volume = static_cast<float>(scene.meshing.max_volume);
    std::snprintf(gui_.file_input.data(), gui_.file_input.size(), "%s", scene.path.c_str());
    SimDriver* sim = session_.sim();
    if (!sim) return;
    // The scene's pins replace the default ones; its ground (or none) the grid's.
    sim->clear_pins();
    const TetMesh& mesh = session_.scene()->mesh;
    sim->set_vertices_pinned(set_vertices(scene_vertex_pins(scene, mesh), mesh.positions.size()),
                             true);
    // The scene's ground, not the simulation's: show_scene already put that at the grid.
    const SimulationSettings& s = scene.settings;
    gui_.ground = s.ground_height.has_value();
    if (s.ground_height) gui_.ground_height = *s.ground_height;
    gui_.ground_friction = s.ground_friction;
    apply_ground();
    gui_.settings = sim->simulation().settings();
    script_.add(script_actions_of(scene, frame_index_));
    file_outcome("loaded scene " + scene.path.string(), false);
}

void App::save_scene_file(const std::filesystem::path& path) {
    const Scene* scene = session_.scene();
    const SimDriver* sim = session_.sim();
    if (!scene || !sim) {
        file_outcome("nothing to save: no simulation", true);
        return;
    }
    if (lower_extension(scene->path) == ".edns") {
        file_outcome("this mesh came from a state file: Save state keeps it, a scene cannot", true);
        return;
    }
    try {
        SceneFile file;
        file.path = path;
        file.mesh = std::filesystem::absolute(scene->path);
        file.meshing.quality = decimal(gui_.quality);
        file.meshing.max_volume = decimal(gui_.max_volume);
        file.settings = sim->simulation().settings();
        // Pins of the mesh as loaded (cuts and refinements append vertices after them).
        ScenePin pins;
        pins.vertices =
            set_vertices(sim->vertex_pins(), static_cast<std::size_t>(loaded_vertices_));
        if (!pins.vertices.empty()) file.pins.push_back(pins);
        const SimulationSettings defaults = scene_defaults(gui_.settings);
        write_scene_file(path, file, &defaults);
        const bool edited = !sim->simulation().topology_changes().empty();
        file_outcome(
            "saved scene " + path.string() +
                (edited ? " (of the mesh as loaded: Save state keeps cuts and refinements)" : ""),
            false);
    } catch (const Error& error) {
        file_outcome(error.what(), true);
    }
}

void App::save_state_file(const std::filesystem::path& path) {
    const SimDriver* sim = session_.sim();
    if (!sim) {
        file_outcome("nothing to save: no simulation", true);
        return;
    }
    try {
        write_state_file(path, capture_state(sim->simulation()));
        file_outcome("saved state " + path.string(), false);
    } catch (const Error& error) {
        file_outcome(error.what(), true);
    }
}

void App::load_state_file(const std::filesystem::path& path) {
    LoadedScene loaded;
    try {
        loaded = load_state_with_simulation(path);
    } catch (const Error& error) {
        file_outcome(error.what(), true); // the current scene stays
        return;
    }
    show_scene(std::move(loaded));
}

void App::apply_state_setup(const SimulationState& state) {
    std::snprintf(gui_.file_input.data(), gui_.file_input.size(), "%s",
                  session_.scene()->path.c_str());
    // show_scene gave the new scene the default pins and ground: the state's instead.
    SimDriver* sim = session_.sim();
    if (!sim) return;
    sim->clear_pins();
    sim->set_vertices_pinned(
        set_vertices(state.pinned, static_cast<std::size_t>(session_.scene()->mesh.num_vertices())),
        true);
    gui_.ground = state.settings.ground_height.has_value();
    if (state.settings.ground_height) gui_.ground_height = *state.settings.ground_height;
    gui_.ground_friction = state.settings.ground_friction;
    apply_ground();
    if (state.drag) sim->set_drag(state.drag);
    gui_.settings = sim->simulation().settings();
    file_outcome("loaded state " + session_.scene()->path.string() + " (frame " +
                     std::to_string(state.frame) + ")",
                 false);
}

} // namespace edn
