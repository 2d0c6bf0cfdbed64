#pragma once
/// The one parser of the simulation settings given on a command line: `elastodyn-cli simulate`
/// and the app (`elastodyn`) both turn `--name value` into SimulationSettings here, so the same
/// flags mean the same settings in both and cannot drift apart.

#include "sim/simulation.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace edn {

/// One settings option.
struct SettingsOption {
    const char* name;       ///< without the leading "--", e.g. "newton-tol"
    const char* value_name; ///< e.g. "T"; empty for a flag such as --static
    const char* help;       ///< one line for usage text, with the default

    /// Whether the option needs a value.
    bool takes_value() const { return value_name[0] != '\0'; }
};

/// Every settings option, in the order they are applied (--preset first, --static after
/// --integrator).
std::span<const SettingsOption> settings_options();

/// The settings option named `name` (without "--"), or nullptr.
const SettingsOption* find_settings_option(std::string_view name);

/// Applies one option to `settings`; `value` is ignored for flags. Throws edn::Error(Usage)
/// "<command>: option '--name': ..." on an unknown name or a bad value (no "<command>: " when
/// `command` is empty).
void apply_settings_option(std::string_view name, std::string_view value,
                           SimulationSettings& settings, std::string_view command = {});

/// Applies `given` (name, value) pairs in the table's order, whatever their order in `given`:
/// --preset first, so explicit --E / --nu / --rho win over the preset wherever they stand.
/// Throws edn::Error(Usage) on an option given twice or any apply_settings_option error.
void apply_settings_options(const std::vector<std::pair<std::string, std::string>>& given,
                            SimulationSettings& settings, std::string_view command = {});

/// Finite numbers separated by spaces and/or commas ("1,2 3"); std::nullopt when a token is not
/// one (the gravity option here, simulate's cut planes and spheres).
std::optional<std::vector<double>> parse_number_list(const std::string& text);

} // namespace edn
