#pragma once
/// 3x3 block helpers shared by the CPU and CUDA kernels (planar storage: entry k = 3r+c).

#include "core/types.hpp"

namespace edn {

/// Inverse of the 3x3 block a[0..8] (row-major) into inv[0..8]. A (near-)singular block falls
/// back to the inverse of its diagonal entries, and zero diagonal entries to 1, so that a
/// block-Jacobi preconditioner stays finite on any input.
template <class T> EDN_HOST_DEVICE inline void invert_block3(const T a[9], T inv[9]) {
    const T c00 = a[4] * a[8] - a[5] * a[7];
    const T c01 = a[5] * a[6] - a[3] * a[8];
    const T c02 = a[3] * a[7] - a[4] * a[6];
    const T det = a[0] * c00 + a[1] * c01 + a[2] * c02;
    T scale = T(0);
    for (int k = 0; k < 9; ++k)
        scale = scale > (a[k] < 0 ? -a[k] : a[k]) ? scale : (a[k] < 0 ? -a[k] : a[k]);
    const T tiny = T(1e-12) * scale * scale * scale;
    if (det > tiny || det < -tiny) {
        const T r = T(1) / det;
        inv[0] = c00 * r;
        inv[1] = (a[2] * a[7] - a[1] * a[8]) * r;
        inv[2] = (a[1] * a[5] - a[2] * a[4]) * r;
        inv[3] = c01 * r;
        inv[4] = (a[0] * a[8] - a[2] * a[6]) * r;
        inv[5] = (a[2] * a[3] - a[0] * a[5]) * r;
        inv[6] = c02 * r;
        inv[7] = (a[1] * a[6] - a[0] * a[7]) * r;
        inv[8] = (a[0] * a[4] - a[1] * a[3]) * r;
        return;
    }
    for (int k = 0; k < 9; ++k) inv[k] = T(0);
    for (int d = 0; d < 3; ++d) {
        const T v = a[4 * d];
        inv[4 * d] = (v > T(0) || v < T(0)) ? T(1) / v : T(1);
    }
}

} // namespace edn
