#pragma once
/// Where the GUI panels go: a pure function of the window size and what each panel needs, so
/// that the placement can be tested without a window. Panels stand in three regions: a left
/// column, a right column, and the middle between them (stacked from its top and from its
/// bottom); no two rectangles overlap and all lie inside the window. A column whose panels do
/// not fit shares its height out (short panels keep their height, tall ones scroll).

#include <span>
#include <vector>

namespace edn {

/// Where a panel stands.
enum class PanelSlot {
    Left,        ///< left column, stacked from the top
    Right,       ///< right column, stacked from the top
    MiddleTop,   ///< between the columns, stacked from the top
    MiddleBottom ///< between the columns, stacked from the bottom
};

/// What a panel asks for (pixels, decorations included).
struct PanelRequest {
    PanelSlot slot = PanelSlot::Left; ///< region
    float width = 300.0f;             ///< width that shows its content unclipped
    float height = 200.0f;            ///< height that shows its content without scrolling
};

/// A rectangle in window pixels (origin top left).
struct PanelRect {
    float x = 0.0f;      ///< left edge
    float y = 0.0f;      ///< top edge
    float width = 0.0f;  ///< width
    float height = 0.0f; ///< height
    bool scroll = false; ///< shorter than requested: the content scrolls
    bool narrow = false; ///< narrower than requested: the content must wrap
};

/// Margins and limits of the layout.
struct LayoutOptions {
    float margin = 8.0f;               ///< between the window edge and the panels
    float gap = 6.0f;                  ///< between neighbouring panels
    float max_column_fraction = 0.34f; ///< a side column takes at most this part of the width
    float min_middle_width = 160.0f;   ///< the middle keeps at least this much for the view
    float max_middle_height_fraction = 0.45f; ///< middle-bottom panels take at most this height
};

/// The rectangles, one per request in request order.
struct PanelLayout {
    std::vector<PanelRect> rects; ///< one per request
};

/// Places the panels in a window of width x height pixels; see the file comment.
PanelLayout layout_panels(float width, float height, std::span<const PanelRequest> requests,
                          const LayoutOptions& options = {});

/// True when the two rectangles share interior area (touching edges do not overlap).
bool overlaps(const PanelRect& a, const PanelRect& b);

/// True when the rectangle lies inside a window of width x height.
bool inside(const PanelRect& rect, float width, float height);

} // namespace edn
