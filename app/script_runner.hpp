#pragma once
/// Runs a timed action script (app/script.hpp) against the frame counter: hands out the actions
/// due at each frame, in order, and turns an action's settings keys into new Simulation settings.
/// Free of GL and of the App, so tests drive it directly.

#include "script.hpp"
#include "sim/scene_file.hpp"
#include "sim/simulation.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace edn {

/// The actions of one script and how far the run has got.
class ScriptRunner {
public:
    /// Takes the actions sorted by frame (as parse_script returns them).
    explicit ScriptRunner(std::vector<ScriptAction> actions = {});

    /// The next action due at `frame` (its frame <= `frame`), or nullptr when none is; each
    /// action is handed out once, in script order.
    const ScriptAction* next(std::int64_t frame);
    /// Adds `actions` to those not yet handed out (merged by frame, stable).
    void add(std::vector<ScriptAction> actions);
    /// True once every action has been handed out.
    bool done() const { return next_ >= actions_.size(); }
    /// Actions in the script.
    std::size_t size() const { return actions_.size(); }

private:
    std::vector<ScriptAction> actions_;
    std::size_t next_ = 0;
};

/// A scene file's actions (sim/scene_file.hpp) as script actions, their frames counted from
/// `first_frame` (the frame the scene was loaded at); vertices stay 0-based (ScriptDrag's).
std::vector<ScriptAction> script_actions_of(const SceneFile& scene, std::int64_t first_frame);

/// `settings` with the action's settings keys (order, summation, preconditioner, material,
/// backend, integrator, young, poisson, density, dt, damping, newton_iterations, gravity)
/// applied; nullopt when the action has none of them.
std::optional<SimulationSettings> scripted_settings(const ScriptAction& action,
                                                    SimulationSettings settings);

} // namespace edn
