#include "script_runner.hpp"

#include "sim/presets.hpp"

#include <utility>

namespace edn {

ScriptRunner::ScriptRunner(std::vector<ScriptAction> actions) : actions_(std::move(actions)) {}

const ScriptAction* ScriptRunner::next(std::int64_t frame) {
    if (next_ >= actions_.size() || actions_[next_].frame > frame) return nullptr;
    return &actions_[next_++];
}

std::optional<SimulationSettings> scripted_settings(const ScriptAction& action,
                                                    SimulationSettings settings) {
    bool changed = false;
    auto set = [&changed](auto& field, const auto& value) {
        if (value) {
            field = *value;
            changed = true;
        }
    };
    set(settings.order, action.order);
    set(settings.summation, action.summation);
    set(settings.preconditioner, action.preconditioner);
    set(settings.material, action.material);
    set(settings.backend, action.backend);
    set(settings.integrator, action.integrator);
    // The preset first: young, poisson, density in the same action win over it.
    if (action.preset) {
        apply_preset(*action.preset, settings);
        changed = true;
    }
    set(settings.young, action.young);
    set(settings.poisson, action.poisson);
    set(settings.density, action.density);
    set(settings.dt, action.dt);
    set(settings.mass_damping, action.damping);
    set(settings.max_newton_iterations, action.newton_iterations);
    set(settings.gravity, action.gravity);
    if (!changed) return std::nullopt;
    return settings;
}

} // namespace edn
