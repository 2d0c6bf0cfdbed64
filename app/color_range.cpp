#include "color_range.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

namespace edn {
namespace {

/// Per-frame step of a shrinking range towards the measured one: about 1.5 s at 60 Hz to close
/// most of the gap (the old max-based range decayed by the same factor).
constexpr float kShrinkRate = 0.03f;

/// The smallest span of a range relative to its ends (the shader divides by the span).
constexpr float kMinRelativeSpan = 1e-5f;

/// The rank of percent (0..100) among n sorted values.
std::size_t rank(float percent, std::size_t n) {
    const float p = std::clamp(percent, 0.0f, 100.0f) / 100.0f;
    const auto r = static_cast<std::size_t>(std::lround(p * static_cast<float>(n - 1)));
    return std::min(r, n - 1);
}

} // namespace

ColorRange percentile_range(std::span<const float> values, float low_percent, float high_percent) {
    std::vector<float> finite;
    finite.reserve(values.size());
    for (float v : values)
        if (std::isfinite(v)) finite.push_back(v);
    if (finite.empty()) return {0.0f, 0.0f};
    const std::size_t lo = rank(std::min(low_percent, high_percent), finite.size());
    const std::size_t hi = rank(std::max(low_percent, high_percent), finite.size());
    std::nth_element(finite.begin(), finite.begin() + static_cast<std::ptrdiff_t>(hi),
                     finite.end());
    const float high = finite[hi];
    // The low rank lies in the part before hi, which nth_element left unsorted but bounded.
    std::nth_element(finite.begin(), finite.begin() + static_cast<std::ptrdiff_t>(lo),
                     finite.begin() + static_cast<std::ptrdiff_t>(hi) + 1);
    return {finite[lo], high};
}

ColorRange next_color_range(const ColorRange& previous, const ColorRange& measured,
                            const ColorRangeSettings& settings) {
    ColorRange range;
    if (settings.manual) {
        range = {settings.manual_low, settings.manual_high};
    } else {
        range.high = measured.high >= previous.high
                         ? measured.high
                         : previous.high + kShrinkRate * (measured.high - previous.high);
        range.low = measured.low <= previous.low
                        ? measured.low
                        : previous.low + kShrinkRate * (measured.low - previous.low);
    }
    if (!std::isfinite(range.low)) range.low = 0.0f;
    if (!std::isfinite(range.high)) range.high = range.low;
    const float min_span =
        std::max(kMinRelativeSpan * std::max(std::abs(range.low), std::abs(range.high)),
                 std::numeric_limits<float>::min() * 16.0f);
    if (range.high - range.low < min_span) range.high = range.low + min_span;
    return range;
}

std::string color_range_label(const ColorRangeSettings& settings) {
    if (settings.manual) return "range: manual";
    char text[64];
    std::snprintf(text, sizeof(text), "range: %g-%gth percentile",
                  static_cast<double>(settings.low_percent),
                  static_cast<double>(settings.high_percent));
    return text;
}

} // namespace edn
