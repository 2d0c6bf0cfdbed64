#pragma once
/// The colour map of the surface (stress, displacement) and its legend: one table, used by both
/// the shader (as uniforms) and the GUI legend, so the two cannot disagree.

#include <algorithm>
#include <array>
#include <cmath>
#include <glm/vec3.hpp>

namespace edn {

/// Control colours at t = 0, 1/4, 1/2, 3/4, 1: dark blue, cyan, green, yellow, red.
inline constexpr std::array<glm::vec3, 5> kColormap = {{{0.10f, 0.15f, 0.60f},
                                                        {0.10f, 0.70f, 0.85f},
                                                        {0.30f, 0.80f, 0.30f},
                                                        {0.95f, 0.85f, 0.20f},
                                                        {0.85f, 0.15f, 0.10f}}};

/// Piecewise-linear colour at t in [0, 1] (clamped), the same as shaders/surface.frag.
inline glm::vec3 colormap(float t) {
    const float x = std::clamp(t, 0.0f, 1.0f) * static_cast<float>(kColormap.size() - 1);
    const std::size_t i = std::min(static_cast<std::size_t>(x), kColormap.size() - 2);
    const float f = x - static_cast<float>(i);
    return kColormap[i] * (1.0f - f) + kColormap[i + 1] * f;
}

} // namespace edn
