#pragma once
/// The colour range of the surface scalars (von Mises stress, displacement): robust
/// percentiles of the data, so that one outlier (a sliver after a cut) does not turn the rest of
/// the body dark blue, smoothed over frames so the legend stays readable, or a manual range.

#include <span>
#include <string>

namespace edn {

/// A scalar range [low, high] mapped onto the colour map's [0, 1].
struct ColorRange {
    float low = 0.0f;  ///< scalar at the bottom of the colour map
    float high = 1.0f; ///< scalar at the top of the colour map
};

/// How the range is chosen; part of the GUI state.
struct ColorRangeSettings {
    bool manual = false;        ///< use manual_low..manual_high instead of the data
    float manual_low = 0.0f;    ///< manual bottom
    float manual_high = 1.0f;   ///< manual top
    float low_percent = 2.0f;   ///< automatic bottom: this percentile of the surface scalars
    float high_percent = 98.0f; ///< automatic top: this percentile of the surface scalars
};

/// The low_percent and high_percent percentiles (nearest rank, 0..100) of the finite values;
/// {0, 0} when there is none. O(n) (std::nth_element on a copy).
ColorRange percentile_range(std::span<const float> values, float low_percent, float high_percent);

/// The range to show this frame: the manual one, or `measured` smoothed against `previous`
/// (a wider range is taken at once, a narrower one approached slowly, so the colours do not
/// flicker while the body wobbles). The result always has high > low.
ColorRange next_color_range(const ColorRange& previous, const ColorRange& measured,
                            const ColorRangeSettings& settings);

/// The legend's line saying where the range comes from, e.g. "range: 2-98th percentile".
std::string color_range_label(const ColorRangeSettings& settings);

} // namespace edn
