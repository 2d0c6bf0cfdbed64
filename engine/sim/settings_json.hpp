#pragma once
/// SimulationSettings as JSON members (scenes, sim/scene_file.hpp; the state file's header,
/// sim/state_file.hpp): "order" and the groups "material", "time", "solver", "ground". Every
/// member is read through the command line's parser (sim/settings_options.hpp), so a scene key
/// accepts exactly what its flag accepts, and what it leaves out keeps the default of the
/// settings it is read onto: one defaults table for the CLI, the app and scenes.
///
///     "order": 2,
///     "material": {"preset": "silicone", "model": "neohookean", "E": 1e5, "nu": 0.3, "rho": 1000},
///     "time": {"integrator": "backward_euler" | "midpoint" | "static", "dt": 0.01,
///              "gravity": 9.81 | [gx, gy, gz], "damping": 0, "stiffness_damping": 0},
///     "solver": {"backend": "cpu", "summation": "per_entry", "preconditioner": "two_level",
///                "newton": 40, "newton_tol": 1e-3, "frame_budget_ms": 0, "cg_tol": 1e-4,
///                "cg_max": 1000, "cg_forcing": true, "multigrid_refresh": "step",
///                "exact_hessian": false, "deterministic": false, "coarse_iterations": 0},
///     "ground": {"height": 0, "friction": 0, "stiffness": 1e5} | false (no ground)

#include "core/json.hpp"
#include "sim/json_fields.hpp"
#include "sim/simulation.hpp"

#include <string_view>

namespace edn {

/// One settings member of a scene and the command-line option it goes through.
struct SettingsKey {
    const char* group;  ///< "" (top level), "material", "time", "solver" or "ground"
    const char* key;    ///< member name in the group
    const char* option; ///< sim/settings_options.hpp option name, without "--"
};

/// Every settings member that maps to a command-line option (each option appears once; the
/// flag --static is time.integrator "static").
std::span<const SettingsKey> settings_keys();

/// Whether `key` is a top-level member read_settings_json reads.
bool is_settings_member(std::string_view key);

/// Applies the settings members of `root` (an object) to `settings`, through
/// apply_settings_options: a preset first, then the rest. Throws edn::Error(Parse)
/// "SOURCE:LINE: key: problem" (unknown key in a group, wrong type, bad value).
void read_settings_json(const JsonFieldReader& reader, const JsonField& root,
                        SimulationSettings& settings);

/// Adds the settings members of `settings` to object `root`: order, material and time always;
/// solver and ground members only where they differ from `base` (every one when `base` is
/// null). Read back onto `base` (or anything when null) they give `settings` exactly.
void write_settings_json(const SimulationSettings& settings, const SimulationSettings* base,
                         Json& root);

} // namespace edn
