#include "panel_layout.hpp"

#include <algorithm>
#include <numeric>

namespace edn {
namespace {

/// Heights for panels stacked in `available` pixels (gaps already taken off): each gets its
/// request if all fit; otherwise the smallest requests are met first and the rest share what
/// is left equally, so one long panel cannot squeeze the short ones off the screen.
std::vector<float> share_height(const std::vector<float>& requested, float available) {
    std::vector<float> heights = requested;
    const float total = std::accumulate(requested.begin(), requested.end(), 0.0f);
    if (total <= available) return heights;
    std::vector<std::size_t> order(requested.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t b) { return requested[a] < requested[b]; });
    float remaining = std::max(available, 0.0f);
    std::size_t left = order.size();
    for (std::size_t i : order) {
        const float share = remaining / static_cast<float>(left);
        heights[i] = std::min(requested[i], share);
        remaining -= heights[i];
        --left;
    }
    return heights;
}

/// Total height of n stacked panels' gaps.
float gaps(std::size_t count, float gap) {
    return count > 1 ? gap * static_cast<float>(count - 1) : 0.0f;
}

} // namespace

PanelLayout layout_panels(float width, float height, std::span<const PanelRequest> requests,
                          const LayoutOptions& options) {
    const float m = options.margin;
    PanelLayout layout;
    layout.rects.resize(requests.size());

    // Column widths: the widest panel of each side column, capped so the view keeps the middle.
    float left = 0.0f;
    float right = 0.0f;
    bool middle = false;
    for (const PanelRequest& r : requests) {
        if (r.slot == PanelSlot::Left) left = std::max(left, r.width);
        if (r.slot == PanelSlot::Right) right = std::max(right, r.width);
        if (r.slot == PanelSlot::MiddleTop || r.slot == PanelSlot::MiddleBottom) middle = true;
    }
    const float cap = options.max_column_fraction * width;
    left = std::min(left, cap);
    right = std::min(right, cap);
    // Small windows: both columns give way in proportion until the middle keeps its minimum.
    const float outer = (left > 0 ? left + m : 0.0f) + (right > 0 ? right + m : 0.0f) + m;
    const float spare = width - outer - (middle ? options.min_middle_width + m : 0.0f);
    if (spare < 0.0f && left + right > 0.0f) {
        const float scale = std::max(0.0f, (left + right + spare) / (left + right));
        left *= scale;
        right *= scale;
    }
    const float middle_x0 = left > 0 ? m + left + m : m;
    const float middle_x1 = right > 0 ? width - m - right - m : width - m;
    const float middle_width = std::max(middle_x1 - middle_x0, 0.0f);

    // Side columns: stacked from the top in request order.
    for (PanelSlot slot : {PanelSlot::Left, PanelSlot::Right}) {
        std::vector<std::size_t> members;
        std::vector<float> wanted;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (requests[i].slot != slot) continue;
            members.push_back(i);
            wanted.push_back(requests[i].height);
        }
        const float column = slot == PanelSlot::Left ? left : right;
        const float x = slot == PanelSlot::Left ? m : width - m - column;
        const std::vector<float> heights =
            share_height(wanted, height - 2 * m - gaps(members.size(), options.gap));
        float y = m;
        for (std::size_t k = 0; k < members.size(); ++k) {
            const PanelRequest& r = requests[members[k]];
            PanelRect& rect = layout.rects[members[k]];
            rect = {x, y, column, heights[k], heights[k] < r.height, column < r.width};
            y += heights[k] + options.gap;
        }
    }

    // Middle: top panels from the top, bottom panels from the bottom (capped so the view shows),
    // sharing one height budget so the two stacks never meet.
    std::vector<std::size_t> members;
    std::vector<float> wanted;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const PanelRequest& r = requests[i];
        if (r.slot != PanelSlot::MiddleTop && r.slot != PanelSlot::MiddleBottom) continue;
        members.push_back(i);
        wanted.push_back(r.slot == PanelSlot::MiddleBottom
                             ? std::min(r.height, options.max_middle_height_fraction * height)
                             : r.height);
    }
    const std::vector<float> heights =
        share_height(wanted, height - 2 * m - gaps(members.size(), options.gap));
    float top = m;
    float bottom = height - m;
    for (std::size_t k = 0; k < members.size(); ++k) {
        const PanelRequest& r = requests[members[k]];
        PanelRect& rect = layout.rects[members[k]];
        const float w = std::min(r.width, middle_width);
        const float x = middle_x0 + 0.5f * (middle_width - w);
        float y = 0.0f;
        if (r.slot == PanelSlot::MiddleTop) {
            y = top;
            top += heights[k] + options.gap;
        } else {
            bottom -= heights[k];
            y = bottom;
            bottom -= options.gap;
        }
        rect = {x, y, w, heights[k], heights[k] < r.height, w < r.width};
    }
    return layout;
}

bool overlaps(const PanelRect& a, const PanelRect& b) {
    return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height &&
           b.y < a.y + a.height;
}

bool inside(const PanelRect& rect, float width, float height) {
    return rect.x >= 0.0f && rect.y >= 0.0f && rect.x + rect.width <= width &&
           rect.y + rect.height <= height;
}

} // namespace edn
