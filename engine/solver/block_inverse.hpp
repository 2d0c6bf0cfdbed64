#pragma once
/// The inverse of a symmetric positive semidefinite B x B block, shared by the CPU multigrid and
/// its CUDA twin (host and device; the block smoother's D^-1). Dofs whose Cholesky pivot is not
/// above `relative_pivot` times the largest diagonal entry (or not finite) are inert: zero rows
/// and columns in the result. Arithmetic in double whatever the input and output types.

#include "core/types.hpp"

#include <cfloat>
#include <cmath>

namespace edn {

template <int B, class In, class Out>
EDN_HOST_DEVICE inline void semidefinite_block_inverse(const In* a, Out* inv,
                                                       double relative_pivot) {
    double l[B * B] = {};
    bool inert[B] = {};
    double scale = 0;
    for (int i = 0; i < B; ++i) scale = fmax(scale, fabs(double(a[i * B + i])));
    for (int j = 0; j < B; ++j) {
        double d = a[j * B + j];
        for (int k = 0; k < j; ++k) d -= l[j * B + k] * l[j * B + k];
        if (!(d > relative_pivot * scale && d <= DBL_MAX)) { // also NaN and infinity
            inert[j] = true;
            continue; // column j of L stays zero
        }
        l[j * B + j] = sqrt(d);
        for (int i = j + 1; i < B; ++i) {
            double s = a[i * B + j];
            for (int k = 0; k < j; ++k) s -= l[i * B + k] * l[j * B + k];
            l[i * B + j] = s / l[j * B + j];
        }
    }
    // inv = L^-T L^-1 on the active dofs, column by column.
    for (int c = 0; c < B; ++c) {
        double y[B] = {};
        for (int i = 0; i < B; ++i) {
            if (inert[i]) continue;
            double s = (i == c) ? 1.0 : 0.0;
            for (int k = 0; k < i; ++k) s -= l[i * B + k] * y[k];
            y[i] = s / l[i * B + i];
        }
        for (int i = B - 1; i >= 0; --i) {
            if (inert[i]) {
                y[i] = 0;
                continue;
            }
            double s = y[i];
            for (int k = i + 1; k < B; ++k) s -= l[k * B + i] * y[k];
            y[i] = s / l[i * B + i];
        }
        for (int i = 0; i < B; ++i) inv[i * B + c] = Out(inert[c] ? 0.0 : y[i]);
    }
}

} // namespace edn
