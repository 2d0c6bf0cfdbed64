#pragma once
/// What the simulation thread publishes after each step for the UI to draw until its next turn
/// (through a SnapshotExchange, app/snapshot_exchange.hpp): the node positions and, when the
/// surface is coloured by it, the per-cell von Mises stress, on the host (CPU backend) or as
/// device copies that the next step does not write (CUDA backend: the interop upload reads them
/// on the UI thread's stream, no device-to-host copy), and the drag markers.

#include "interop.hpp"

#include <glm/vec3.hpp>
#include <vector>

namespace edn {

/// The state after one completed step, as the UI's surface upload reads it.
struct SimSnapshot {
    bool device = false;           ///< CUDA backend: the device_ arrays hold the state
    std::vector<double> positions; ///< CPU backend: 3 per node
    std::vector<double> stress;    ///< CPU backend: per cell, when has_stress
    DeviceFloats device_positions; ///< CUDA backend: 3 floats per node
    DeviceFloats device_stress;    ///< CUDA backend: per cell, when has_stress
    bool has_stress = false;       ///< the von Mises stress was published
    bool dragging = false;         ///< a drag spring is set (grabbed, target below)
    glm::vec3 grabbed{0.0f};       ///< the grabbed point (drag marker)
    glm::vec3 target{0.0f};        ///< the drag target (drag marker)
};

} // namespace edn
