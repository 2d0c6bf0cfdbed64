#include "supports.hpp"

#include "core/error.hpp"
#include "scene.hpp"

#include <algorithm>
#include <cmath>

namespace edn {

double default_ground_height(const Scene& scene) {
    return static_cast<double>(scene.lower.z);
}

double default_ground_stiffness(double total_mass, double diagonal) {
    constexpr double kStandardGravity = 9.81; // [m/s^2]
    constexpr double kSinkFraction = 0.005;   // of the diagonal, under the whole weight on a node
    const double floor = SimulationSettings{}.ground_stiffness;
    if (!(diagonal > 0)) return floor;
    return std::max(floor, total_mass * kStandardGravity / (kSinkFraction * diagonal));
}

std::string support_warning(const SimulationSettings& settings, Index pinned_vertices) {
    if (pinned_vertices > 0 || settings.ground_height) return {};
    if (settings.integrator == Integrator::Static)
        return "nothing holds the body: a static solve needs pins or the ground";
    const bool gravity = std::any_of(settings.gravity.begin(), settings.gravity.end(),
                                     [](double g) { return g != 0.0; });
    if (!gravity) return {};
    return "no pins and no ground: the body falls forever (pin a plane or turn the ground on)";
}

} // namespace edn
