// The panel layout as a pure function: rectangles inside the window and disjoint at the window
// sizes people use, columns that share their height when the content is too tall.

#include "panel_layout.hpp"

#include <gtest/gtest.h>
#include <vector>

namespace edn {
namespace {

/// The app's panels with sizes like the measured ones (Statistics, Scene, Simulation, Timings,
/// Legend).
std::vector<PanelRequest> app_like_requests(float statistics_height) {
    return {{PanelSlot::Left, 330.0f, statistics_height},
            {PanelSlot::Left, 320.0f, 260.0f},
            {PanelSlot::Right, 340.0f, 520.0f},
            {PanelSlot::MiddleBottom, 416.0f, 250.0f},
            {PanelSlot::MiddleTop, 260.0f, 80.0f}};
}

void expect_disjoint_inside(const PanelLayout& layout, float width, float height) {
    for (std::size_t i = 0; i < layout.rects.size(); ++i) {
        const PanelRect& a = layout.rects[i];
        EXPECT_TRUE(inside(a, width, height))
            << "panel " << i << " at " << a.x << ", " << a.y << " size " << a.width << " x "
            << a.height << " in " << width << " x " << height;
        for (std::size_t j = i + 1; j < layout.rects.size(); ++j)
            EXPECT_FALSE(overlaps(a, layout.rects[j])) << "panels " << i << " and " << j;
    }
}

TEST(PanelLayout, PanelsAreDisjointAndInsideAtCommonWindowSizes) {
    for (const auto& [width, height] : {std::pair{1280.0f, 720.0f}, std::pair{1920.0f, 1080.0f}}) {
        SCOPED_TRACE(width);
        const std::vector<PanelRequest> requests = app_like_requests(380.0f);
        const PanelLayout layout = layout_panels(width, height, requests);
        ASSERT_EQ(layout.rects.size(), requests.size());
        expect_disjoint_inside(layout, width, height);
        // Everything fits: each panel gets what it asked for, nothing scrolls or wraps.
        for (std::size_t i = 0; i < requests.size(); ++i) {
            EXPECT_FLOAT_EQ(layout.rects[i].height, requests[i].height) << i;
            EXPECT_FALSE(layout.rects[i].scroll) << i;
            EXPECT_FALSE(layout.rects[i].narrow) << i;
        }
        // Left column at the left edge, right column at the right edge, middle in between.
        EXPECT_LT(layout.rects[0].x, 20.0f);
        EXPECT_GT(layout.rects[2].x + layout.rects[2].width, width - 20.0f);
        EXPECT_GT(layout.rects[3].x, layout.rects[0].x + layout.rects[0].width);
        EXPECT_LT(layout.rects[3].x + layout.rects[3].width, layout.rects[2].x);
        // The timings stand at the bottom, the legend at the top.
        EXPECT_GT(layout.rects[3].y + layout.rects[3].height, height - 20.0f);
        EXPECT_LT(layout.rects[4].y, 20.0f);
    }
}

TEST(PanelLayout, TallColumnSharesHeightShortPanelsKeepTheirs) {
    // Statistics asks for 900 px at 720: the Scene panel keeps its 260, Statistics scrolls.
    const std::vector<PanelRequest> requests = app_like_requests(900.0f);
    const PanelLayout layout = layout_panels(1280.0f, 720.0f, requests);
    expect_disjoint_inside(layout, 1280.0f, 720.0f);
    EXPECT_FLOAT_EQ(layout.rects[1].height, 260.0f);
    EXPECT_FALSE(layout.rects[1].scroll);
    EXPECT_TRUE(layout.rects[0].scroll);
    EXPECT_LT(layout.rects[0].height, 900.0f);
    // The column is used to its bottom margin.
    EXPECT_NEAR(layout.rects[1].y + layout.rects[1].height, 720.0f - LayoutOptions{}.margin, 0.5f);
}

TEST(PanelLayout, WideColumnsAreCappedAndMarkedNarrow) {
    std::vector<PanelRequest> requests = app_like_requests(300.0f);
    requests[0].width = 2000.0f; // a panel with a very long line
    const PanelLayout layout = layout_panels(1280.0f, 720.0f, requests);
    expect_disjoint_inside(layout, 1280.0f, 720.0f);
    EXPECT_TRUE(layout.rects[0].narrow);
    EXPECT_LE(layout.rects[0].width, LayoutOptions{}.max_column_fraction * 1280.0f);
    EXPECT_FLOAT_EQ(layout.rects[1].width, layout.rects[0].width); // one column width
}

TEST(PanelLayout, SmallWindowsStillGiveDisjointRectanglesInside) {
    for (const auto& [width, height] :
         {std::pair{800.0f, 600.0f}, std::pair{640.0f, 360.0f}, std::pair{320.0f, 200.0f}}) {
        SCOPED_TRACE(width);
        const PanelLayout layout = layout_panels(width, height, app_like_requests(380.0f));
        expect_disjoint_inside(layout, width, height);
    }
}

TEST(PanelLayout, MiddleBottomPanelIsCappedSoTheViewShows) {
    std::vector<PanelRequest> requests = app_like_requests(300.0f);
    requests[3].height = 2000.0f;
    const PanelLayout layout = layout_panels(1280.0f, 720.0f, requests);
    expect_disjoint_inside(layout, 1280.0f, 720.0f);
    EXPECT_LE(layout.rects[3].height, LayoutOptions{}.max_middle_height_fraction * 720.0f + 0.5f);
    EXPECT_TRUE(layout.rects[3].scroll);
}

TEST(PanelLayout, OverlapAndInsideAreStrict) {
    const PanelRect a{0, 0, 10, 10};
    EXPECT_FALSE(overlaps(a, {10, 0, 10, 10})); // touching edges
    EXPECT_TRUE(overlaps(a, {9, 9, 10, 10}));
    EXPECT_TRUE(inside(a, 10, 10));
    EXPECT_FALSE(inside({1, 0, 10, 10}, 10, 10));
}

} // namespace
} // namespace edn
