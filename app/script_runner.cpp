#include "script_runner.hpp"

#include "sim/presets.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

namespace edn {

ScriptRunner::ScriptRunner(std::vector<ScriptAction> actions) : actions_(std::move(actions)) {}

void ScriptRunner::add(std::vector<ScriptAction> actions) {
    actions_.erase(actions_.begin(), actions_.begin() + static_cast<std::ptrdiff_t>(next_));
    next_ = 0;
    actions_.insert(actions_.end(), std::make_move_iterator(actions.begin()),
                    std::make_move_iterator(actions.end()));
    std::stable_sort(
        actions_.begin(), actions_.end(),
        [](const ScriptAction& a, const ScriptAction& b) { return a.frame < b.frame; });
}

std::vector<ScriptAction> script_actions_of(const SceneFile& scene, std::int64_t first_frame) {
    std::vector<ScriptAction> actions;
    for (const SceneAction& a : scene.actions) {
        ScriptAction action;
        action.frame = first_frame + a.frame;
        action.release = a.release;
        if (a.drag) {
            ScriptDrag drag;
            drag.from_vertex = a.drag->vertex;
            drag.to_world = a.drag->target;
            drag.stiffness = a.drag->stiffness;
            drag.radius = a.drag->radius;
            action.drag = drag;
        }
        if (a.cut) {
            ScriptCut cut;
            cut.point = a.cut->point;
            cut.normal = a.cut->normal;
            if (std::isfinite(a.cut->radius)) cut.radius = a.cut->radius;
            action.cut = cut;
        }
        if (a.refine) {
            ScriptRefine refine;
            refine.center = a.refine->center;
            refine.radius = a.refine->radius;
            refine.levels = a.refine->levels;
            action.refine = refine;
        }
        action.refine_uniform = a.refine_uniform;
        actions.push_back(std::move(action));
    }
    return actions;
}

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
