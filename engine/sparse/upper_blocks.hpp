#pragma once
/// The upper-triangle layout of element Hessian blocks (cuda::BlockLayout::Upper): of an element's
/// m x m blocks only (a, b) with a <= b are stored, row by row; (b, a) is the transpose of (a, b).
/// A per-entry map in this layout names upper blocks, bitwise complemented (negative) where the
/// target takes the transpose.

#include "core/types.hpp"

namespace edn {

/// Blocks of one element in the upper layout: m (m + 1) / 2 (p = 1, 2, 3: 10, 55, 210).
EDN_HOST_DEVICE constexpr int upper_block_count(int m) {
    return m * (m + 1) / 2;
}

/// Place of block (a, b), a <= b, among its element's upper blocks (row a starts after the
/// m + (m - 1) + ... + (m - a + 1) blocks of rows 0 .. a - 1).
EDN_HOST_DEVICE constexpr int upper_block_index(int m, int a, int b) {
    return a * m - a * (a - 1) / 2 + (b - a);
}

/// The block (a, b), a <= b, at place u of an element's upper blocks.
EDN_HOST_DEVICE constexpr void upper_block_pair(int m, int u, int& a, int& b) {
    a = 0;
    while (u >= m - a) u -= m - a, ++a;
    b = a + u;
}

/// Element block s = (t * m + a) * m + b of the full layout as a source of the upper layout:
/// t * m (m + 1) / 2 + upper_block_index(min, max), complemented when a > b (transposed).
EDN_HOST_DEVICE constexpr Index upper_source(Index s, int m) {
    const Index t = s / (m * m);
    const int a = (s % (m * m)) / m, b = s % m;
    const Index u = t * upper_block_count(m) +
                    (a <= b ? upper_block_index(m, a, b) : upper_block_index(m, b, a));
    return a <= b ? u : ~u;
}

/// The inverse of upper_source: the full layout's element block.
EDN_HOST_DEVICE constexpr Index full_source(Index source, int m) {
    const bool transposed = source < 0;
    const Index u = transposed ? ~source : source;
    const int count = upper_block_count(m);
    const Index t = u / count;
    int a = 0, b = 0;
    upper_block_pair(m, static_cast<int>(u % count), a, b);
    return transposed ? (t * m + b) * m + a : (t * m + a) * m + b;
}

} // namespace edn
