#pragma once
/// Simulation settings shared by the topology-change tests: a soft material that sags visibly in
/// a few frames of a 1 x 1 x 2 beam.

#include "sim/simulation.hpp"

namespace edn::test {

/// E = 2e4, dt = 1/60, the rest as SimulationSettings' defaults.
inline SimulationSettings soft_settings() {
    SimulationSettings s;
    s.young = 2e4;
    s.dt = 1.0 / 60.0;
    return s;
}

/// soft_settings() at order `order`, neo-Hookean, with gravity sideways too (no symmetry hides a
/// wrong transfer).
inline SimulationSettings beam_settings(int order) {
    SimulationSettings s = soft_settings();
    s.order = order;
    s.material = Material::NeoHookean;
    s.gravity = {1.0, 0.0, -9.81};
    return s;
}

} // namespace edn::test
