// The surface colour range: percentiles ignore outliers, the manual range is used as given,
// smoothing takes a wider range at once.

#include "color_range.hpp"
#include "gui.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <vector>

namespace edn {
namespace {

std::vector<float> ramp(int count) {
    std::vector<float> values;
    for (int i = 1; i <= count; ++i) values.push_back(static_cast<float>(i));
    return values;
}

TEST(ColorRange, PercentilesOfARamp) {
    const ColorRange range = percentile_range(ramp(101), 2.0f, 98.0f);
    EXPECT_FLOAT_EQ(range.low, 3.0f); // ranks 2 and 98 of 0..100
    EXPECT_FLOAT_EQ(range.high, 99.0f);
    const ColorRange full = percentile_range(ramp(101), 0.0f, 100.0f);
    EXPECT_FLOAT_EQ(full.low, 1.0f);
    EXPECT_FLOAT_EQ(full.high, 101.0f);
}

TEST(ColorRange, AnOutlierDoesNotMoveTheRange) {
    std::vector<float> values = ramp(1000);
    const ColorRange before = percentile_range(values, 2.0f, 98.0f);
    values[500] = 1e9f; // a sliver after a cut
    values.push_back(std::numeric_limits<float>::quiet_NaN());
    values.push_back(std::numeric_limits<float>::infinity());
    const ColorRange after = percentile_range(values, 2.0f, 98.0f);
    EXPECT_NEAR(after.high, before.high, 2.0f);
    EXPECT_NEAR(after.low, before.low, 2.0f);
    EXPECT_LT(after.high, 1000.0f);
    // The old rule, the maximum, would have put every other value in the bottom 1e-6 of the map.
}

TEST(ColorRange, NoFiniteValuesGiveAnEmptyRange) {
    const std::vector<float> values = {std::numeric_limits<float>::quiet_NaN()};
    const ColorRange range = percentile_range(values, 2.0f, 98.0f);
    EXPECT_EQ(range.low, 0.0f);
    EXPECT_EQ(range.high, 0.0f);
    EXPECT_EQ(percentile_range({}, 2.0f, 98.0f).high, 0.0f);
}

TEST(ColorRange, ManualRangeIsUsedAsGiven) {
    ColorRangeSettings settings;
    settings.manual = true;
    settings.manual_low = 10.0f;
    settings.manual_high = 500.0f;
    const ColorRange range = next_color_range({0.0f, 1e6f}, {-5.0f, 2e6f}, settings);
    EXPECT_EQ(range.low, 10.0f);
    EXPECT_EQ(range.high, 500.0f);
    // An empty or inverted manual range still gives the shader a positive span.
    settings.manual_high = 10.0f;
    const ColorRange flat = next_color_range({}, {}, settings);
    EXPECT_GT(flat.high, flat.low);
}

TEST(ColorRange, WiderIsTakenAtOnceNarrowerSlowly) {
    const ColorRangeSettings automatic;
    const ColorRange wider = next_color_range({10.0f, 100.0f}, {5.0f, 200.0f}, automatic);
    EXPECT_EQ(wider.low, 5.0f);
    EXPECT_EQ(wider.high, 200.0f);
    const ColorRange narrower = next_color_range({10.0f, 100.0f}, {20.0f, 50.0f}, automatic);
    EXPECT_GT(narrower.high, 50.0f);
    EXPECT_LT(narrower.high, 100.0f);
    EXPECT_GT(narrower.low, 10.0f);
    EXPECT_LT(narrower.low, 20.0f);
    // Repeated frames converge to the measured range.
    ColorRange range{10.0f, 100.0f};
    for (int frame = 0; frame < 1000; ++frame)
        range = next_color_range(range, {20.0f, 50.0f}, automatic);
    EXPECT_NEAR(range.high, 50.0f, 0.01f);
    EXPECT_NEAR(range.low, 20.0f, 0.01f);
    // All zero (a body at rest coloured by displacement): still a positive span.
    const ColorRange zero = next_color_range({0.0f, 0.0f}, {0.0f, 0.0f}, automatic);
    EXPECT_GT(zero.high, zero.low);
}

TEST(ColorRange, LegendSaysWhereTheRangeComesFrom) {
    ColorRangeSettings settings;
    EXPECT_EQ(color_range_label(settings), "range: 2-98th percentile");
    settings.low_percent = 5.0f;
    settings.high_percent = 95.0f;
    EXPECT_EQ(color_range_label(settings), "range: 5-95th percentile");
    settings.manual = true;
    EXPECT_EQ(color_range_label(settings), "range: manual");
}

TEST(BackendAvailability, CudaNeedsABuildAndADeviceWithAReason) {
    EXPECT_TRUE(backend_availability(Backend::Cpu, false, false).usable);
    EXPECT_TRUE(backend_availability(Backend::Cuda, true, true).usable);
    EXPECT_TRUE(backend_availability(Backend::Cuda, true, true).reason.empty());
    const BackendAvailability no_build = backend_availability(Backend::Cuda, false, false);
    EXPECT_FALSE(no_build.usable);
    EXPECT_NE(no_build.reason.find("built without CUDA"), std::string::npos) << no_build.reason;
    const BackendAvailability no_device = backend_availability(Backend::Cuda, true, false);
    EXPECT_FALSE(no_device.usable);
    EXPECT_NE(no_device.reason.find("no usable CUDA device"), std::string::npos)
        << no_device.reason;
    EXPECT_EQ(no_device.reason.find('\n'), std::string::npos); // one line
}

} // namespace
} // namespace edn
