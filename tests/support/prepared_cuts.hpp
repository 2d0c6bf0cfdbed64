#pragma once
// Cuts for the two-phase topology change tests (sim/prepared_change.hpp).
#include "sim/prepared_change.hpp"
#include "sim/simulation.hpp"

#include <thread>

namespace edn::test {

/// A tilted blade through the whole test beam at height z (`partial`: a disc of radius 0.4
/// ending inside it).
inline CutPlane blade(double z, bool partial = false) {
    CutPlane plane;
    plane.point = {0.3, 0.5, z};
    plane.normal = {0.1, 0.05, 1.0};
    if (partial) plane.radius = 0.4;
    return plane;
}

/// Prepares `plane` on a thread of its own, as the app does.
inline PreparedChange prepare_on_thread(const ChangeBasis& basis, const CutPlane& plane) {
    PreparedChange prepared;
    std::thread thread([&] { prepared = Simulation::prepare_cut(basis, plane); });
    thread.join();
    return prepared;
}

} // namespace edn::test
