#pragma once
/// What holds a body up in the app: pins by an axis-aligned plane (sim/pins.hpp), the ground's
/// default height (the grid's: the two coincide), and the warning for a dynamic scene that nothing
/// holds.

#include "core/types.hpp"
#include "mesh/tet_mesh.hpp"
#include "sim/pins.hpp"
#include "sim/simulation.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edn {

struct Scene;

/// The ground's default height: the bottom of the scene's bounding box, where the renderer
/// draws the grid (the app draws the grid at the ground height, so they coincide).
double default_ground_height(const Scene& scene);

/// The app's ground stiffness [N/m per node] for a body of `total_mass` [kg] and bounding-box
/// diagonal `diagonal` [m]: its whole weight (standard gravity) on one node sinks it by 0.5 % of
/// its size (the engine's fixed 1e5 N/m lets a 1 m, 1000 kg cube sink by 2 cm), and never below
/// the engine's default.
double default_ground_stiffness(double total_mass, double diagonal);

/// Why the body would drift or fall forever (a dynamic scene under gravity, or a static solve,
/// with no pinned vertex and no ground), or empty when something holds it.
std::string support_warning(const SimulationSettings& settings, Index pinned_vertices);

} // namespace edn
