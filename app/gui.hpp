#pragma once
/// The ImGui panels. All UI state lives in GuiState (owned by App), never in static locals.

#include "core/types.hpp"

#include <array>
#include <string>

namespace edn {

class TimingRecorder;
struct RenderSettings;

/// Numbers the Statistics panel shows.
struct SceneStatistics {
    std::string name;           ///< file name of the scene, empty when none is loaded
    Index vertices = 0;         ///< tet-mesh vertices
    Index cells = 0;            ///< tetrahedra
    Index boundary_faces = 0;   ///< triangles of the boundary surface
    Index surface_vertices = 0; ///< vertices of the boundary surface
};

/// UI state that persists between frames.
struct GuiState {
    std::array<char, 1024> scene_input{}; ///< text of the scene loader field
    std::string scene_error;              ///< last scene loading error, shown under the field
    std::string render_error;             ///< shader or GL error, shown in red
    std::string gl_description;           ///< "OpenGL 4.5 (Core Profile) ... on llvmpipe"
};

/// What the user asked for in this frame's UI; the app carries it out.
struct GuiActions {
    bool load_scene = false;     ///< load the file in GuiState::scene_input
    bool fit_view = false;       ///< frame the mesh
    bool reset_view = false;     ///< default view angles, framing the mesh
    bool reload_shaders = false; ///< recompile shaders/ (for editing them live)
};

/// Builds this frame's panels (between ImGui::NewFrame and ImGui::Render).
GuiActions build_gui(GuiState& state, const SceneStatistics& statistics,
                     const TimingRecorder& timings, RenderSettings& settings);

} // namespace edn
