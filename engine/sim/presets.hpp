#pragma once
/// Named materials (E, nu, rho) for the CLI (`simulate --preset`), the app (the Model section's
/// preset list, `--preset`, the script key `preset`) and scenes: one table, so every front end
/// offers the same materials with the same numbers.

#include "sim/simulation.hpp"

#include <span>
#include <string>
#include <string_view>

namespace edn {

/// One named material. The numbers are representative values inside published ranges, not
/// measurements of a particular product or specimen.
struct MaterialPreset {
    const char* name;   ///< CLI, script and scene spelling: lower case, underscores
    const char* label;  ///< GUI label
    double young;       ///< Young's modulus E [Pa]
    double poisson;     ///< Poisson's ratio
    double density;     ///< rho [kg/m^3]
    const char* source; ///< where the range comes from (one line)
};

/// Every preset, in the order the GUI lists them.
std::span<const MaterialPreset> material_presets();

/// The preset named `name`, or nullptr.
const MaterialPreset* find_preset(std::string_view name);

/// The preset whose E, nu and rho equal those of `settings`, or nullptr (a custom material).
const MaterialPreset* matching_preset(const SimulationSettings& settings);

/// Sets E, nu and rho of `settings` to those of `preset` (the model and the rest stay).
void apply_preset(const MaterialPreset& preset, SimulationSettings& settings);

/// Every preset name joined by `separator`, for usage text and error messages.
std::string preset_names(std::string_view separator = " | ");

} // namespace edn
