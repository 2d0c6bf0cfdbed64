#pragma once
/// Scalar pieces of the multigrid smoother shared by the CPU reference and the CUDA twin (host and
/// device): lambda_max of the tridiagonal that m steps of (block-Jacobi) PCG define (Lanczos), and
/// the Chebyshev smoother's coefficients on [lambda_max / ratio, 1.1 lambda_max].

#include "core/types.hpp"

#include <cmath>
#include <cstdint>

namespace edn {

inline constexpr int kMaxLanczosSteps = 64;   ///< MultigridSettings::power_iterations at most
inline constexpr int kMaxChebyshevDegree = 8; ///< MultigridSettings::smoother_degree at most

/// Entry i of the fixed pseudo-random start vector of the multigrid's Lanczos runs (a 64-bit
/// mix of i, uniform in [-0.5, 0.5)): the same on the host and the device.
EDN_HOST_DEVICE inline double lanczos_start_value(std::int64_t i) {
    std::uint64_t x = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return static_cast<double>(x >> 11) * 0x1.0p-53 - 0.5;
}

/// The Gershgorin interval [lo, hi] of the symmetric tridiagonal (d, e) of size m (lo <= 0 <= hi).
EDN_HOST_DEVICE inline void tridiagonal_bounds(const double* d, const double* e, int m, double& lo,
                                               double& hi) {
    lo = 0;
    hi = 0;
    for (int i = 0; i < m; ++i) {
        const double radius = (i > 0 ? fabs(e[i - 1]) : 0.0) + (i + 1 < m ? fabs(e[i]) : 0.0);
        hi = fmax(hi, d[i] + radius);
        lo = fmin(lo, d[i] - radius);
    }
}

/// How many eigenvalues of the symmetric tridiagonal (d, e) of size m lie below x (Sturm count).
EDN_HOST_DEVICE inline int tridiagonal_count_below(const double* d, const double* e, int m,
                                                   double x) {
    int below = 0;
    double q = 1;
    for (int i = 0; i < m; ++i) {
        q = d[i] - x - (i > 0 ? e[i - 1] * e[i - 1] / q : 0.0);
        if (q == 0) q = 1e-300;
        if (q < 0) ++below;
    }
    return below;
}

/// The largest eigenvalue of the symmetric tridiagonal (d, e) of size m (bisection on Sturm
/// counts inside the Gershgorin interval).
EDN_HOST_DEVICE inline double tridiagonal_max(const double* d, const double* e, int m) {
    double lo, hi;
    tridiagonal_bounds(d, e, m, lo, hi);
    for (int it = 0; it < 200 && hi - lo > 1e-12 * fabs(hi); ++it) {
        const double mid = 0.5 * (lo + hi);
        if (tridiagonal_count_below(d, e, m, mid) < m)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

/// The tridiagonal (d, e) of the Lanczos process that m PCG steps (alphas, betas) define.
EDN_HOST_DEVICE inline void lanczos_tridiagonal(const double* alphas, const double* betas, int m,
                                                double* d, double* e) {
    for (int k = 0; k < m; ++k) {
        d[k] = 1.0 / alphas[k] + (k > 0 ? betas[k - 1] / alphas[k - 1] : 0.0);
        if (k + 1 < m) e[k] = sqrt(betas[k]) / alphas[k];
    }
}

/// lambda_max from the alpha and beta coefficients of m PCG steps (m <= kMaxLanczosSteps); 0 when
/// m = 0.
EDN_HOST_DEVICE inline double lanczos_lambda_max(const double* alphas, const double* betas, int m) {
    if (m <= 0) return 0.0;
    double d[kMaxLanczosSteps], e[kMaxLanczosSteps];
    lanczos_tridiagonal(alphas, betas, m, d, e);
    return tridiagonal_max(d, e, m);
}

/// The Chebyshev smoother of `degree` on D^-1 A: d = c[1] D^-1 r, then for k = 1 .. degree - 1:
/// x += d, r -= A d, d = c[2k] d + c[2k + 1] D^-1 r; finally x += d. c[0] = 0 (the first d has no
/// previous term). All zero when lambda_max <= 0 (no smoothing).
EDN_HOST_DEVICE inline void chebyshev_coefficients(double lambda_max, double ratio, int degree,
                                                   double* c) {
    for (int k = 0; k < 2 * degree; ++k) c[k] = 0;
    const double hi = 1.1 * lambda_max, lo = hi / ratio;
    if (!(hi > 0)) return;
    const double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
    double rho = 1.0 / sigma;
    c[1] = 1.0 / theta;
    for (int k = 1; k < degree; ++k) {
        const double rho_new = 1.0 / (2.0 * sigma - rho);
        c[2 * k] = rho_new * rho;
        c[2 * k + 1] = 2.0 * rho_new / delta;
        rho = rho_new;
    }
}

} // namespace edn
