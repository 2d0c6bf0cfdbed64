#pragma once
// Shared pieces of the CPU PCG solvers (cpu/pcg.cpp, cpu/two_level.cpp): deterministic chunked
// dot products and the 3x3 block-Jacobi apply.
#include "core/parallel.hpp"
#include "core/types.hpp"
#include "solver/pcg.hpp"
#include "sparse/spmv.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace edn::cpu::detail {

// Rows per chunk of a dot product: the unit of work and of summation order.
constexpr std::int64_t kChunkRows = 2048;

/// Runs body(row) -> std::array<double, N> over all rows and returns the N sums, each summed
/// per chunk in row order and then over chunks in chunk order (deterministic).
template <int N, class Body>
std::array<double, N> chunked_sums(Index rows, std::vector<double>& partials, Body&& body) {
    const std::int64_t chunks = (rows + kChunkRows - 1) / kChunkRows;
    partials.assign(static_cast<std::size_t>(chunks) * N, 0.0);
    parallel_for(0, chunks, [&](std::int64_t c) {
        std::array<double, N> acc{};
        const std::int64_t end = std::min<std::int64_t>(rows, (c + 1) * kChunkRows);
        for (std::int64_t row = c * kChunkRows; row < end; ++row) {
            const std::array<double, N> t = body(row);
            for (int k = 0; k < N; ++k) acc[k] += t[k];
        }
        for (int k = 0; k < N; ++k) partials[c * N + k] = acc[k];
    });
    std::array<double, N> sum{};
    for (std::int64_t c = 0; c < chunks; ++c)
        for (int k = 0; k < N; ++k) sum[k] += partials[c * N + k];
    return sum;
}

/// z(row) = M^-1 r(row) with the 9 inverse-diagonal planes.
template <class T>
inline void apply_block(const T* inv, std::int64_t n, std::int64_t row, const T* r, T* z) {
    for (int i = 0; i < 3; ++i)
        z[3 * row + i] = inv[(3 * i) * n + row] * r[3 * row] +
                         inv[(3 * i + 1) * n + row] * r[3 * row + 1] +
                         inv[(3 * i + 2) * n + row] * r[3 * row + 2];
}
/// The common start of a solve (solver/pcg.hpp): returns ||P b||^2 and sets the free dofs of x
/// to 0 for a cold start or when P b = 0.
template <class T>
double start_solve(Index rows, const T* b, T* x, bool warm_start, const std::uint8_t* fixed,
                   std::vector<double>& partials) {
    auto is_free = [fixed](std::int64_t row) { return fixed == nullptr || fixed[row] == 0; };
    const double bb = chunked_sums<1>(rows, partials, [&](std::int64_t row) {
        double s = 0;
        if (is_free(row))
            for (int i = 0; i < 3; ++i) s += double(b[3 * row + i]) * double(b[3 * row + i]);
        return std::array<double, 1>{s};
    })[0];
    if (!warm_start || bb == 0)
        parallel_for(0, rows, [&](std::int64_t row) {
            if (is_free(row)) x[3 * row] = x[3 * row + 1] = x[3 * row + 2] = T(0);
        });
    return bb;
}

/// Flexible CG (Polak-Ribiere beta = z_new.(r_new - r_old) / z_old.r_old = -alpha z_new.q / rz)
/// on A x = b with the preconditioner precondition(r, z) (z must be zero on fixed nodes): the
/// stopping rule, pins and outcome of cpu::pcg (solver/pcg.hpp). Equal to standard PCG for a
/// fixed symmetric preconditioner; robust to one that varies between applications.
template <class Precondition>
PcgResult flexible_pcg(const BinBcsrMatrixView<double>& a, const double* b, double* x,
                       const PcgSettings& settings, PcgWorkspace<double>& f,
                       const std::uint8_t* fixed, Precondition&& precondition) {
    const Index rows = a.pattern.num_rows;
    const std::int64_t n = rows;
    PcgResult result;
    if (rows == 0) {
        result.converged = true;
        return result;
    }
    f.resize(rows);
    double* r = f.r.data();
    double* z = f.z.data();
    double* p = f.p.data();
    double* q = f.q.data();
    auto is_free = [fixed](std::int64_t row) { return fixed == nullptr || fixed[row] == 0; };
    const double bb = start_solve(rows, b, x, settings.warm_start, fixed, f.partials);
    spmv(a, x, q);
    const double rr = chunked_sums<1>(rows, f.partials, [&](std::int64_t row) {
        const bool free = is_free(row);
        double s = 0;
        for (int i = 0; i < 3; ++i) {
            r[3 * row + i] = free ? b[3 * row + i] - q[3 * row + i] : 0.0;
            s += r[3 * row + i] * r[3 * row + i];
        }
        return std::array<double, 1>{s};
    })[0];
    const double tol2 = settings.relative_tolerance * settings.relative_tolerance;
    const double ref2 = bb > 0 ? bb : rr;
    result.initial_residual = std::sqrt(rr);
    result.final_residual = result.initial_residual;
    result.reference_norm = std::sqrt(ref2);
    if (rr <= tol2 * ref2) {
        result.converged = true;
        return result;
    }
    precondition(static_cast<const double*>(r), z);
    double rz = chunked_sums<1>(rows, f.partials, [&](std::int64_t row) {
        double s = 0;
        for (int i = 0; i < 3; ++i) {
            p[3 * row + i] = z[3 * row + i];
            s += r[3 * row + i] * z[3 * row + i];
        }
        return std::array<double, 1>{s};
    })[0];
    if (!(rz > 0) || !std::isfinite(rz)) {
        result.breakdown = true;
        return result;
    }
    while (result.iterations < settings.max_iterations) {
        spmv(a, p, q);
        const double pq = chunked_sums<1>(rows, f.partials, [&](std::int64_t row) {
            double s = 0;
            for (int i = 0; i < 3; ++i) s += p[3 * row + i] * q[3 * row + i];
            return std::array<double, 1>{s};
        })[0];
        const double alpha = rz / pq;
        if (!(pq > 0) || !std::isfinite(alpha)) {
            result.breakdown = true;
            break;
        }
        const double rr_new = chunked_sums<1>(rows, f.partials, [&](std::int64_t row) {
            const bool free = is_free(row);
            double s = 0;
            for (int i = 0; i < 3; ++i) {
                x[3 * row + i] += alpha * p[3 * row + i];
                r[3 * row + i] = free ? r[3 * row + i] - alpha * q[3 * row + i] : 0.0;
                s += r[3 * row + i] * r[3 * row + i];
            }
            return std::array<double, 1>{s};
        })[0];
        ++result.iterations;
        result.final_residual = std::sqrt(rr_new);
        if (rr_new <= tol2 * ref2) {
            result.converged = true;
            break;
        }
        precondition(static_cast<const double*>(r), z);
        // r_new - r_old = -alpha P q: Polak-Ribiere beta without storing r_old.
        const auto [rz_new, zq] = chunked_sums<2>(rows, f.partials, [&](std::int64_t row) {
            const bool free = is_free(row);
            std::array<double, 2> t{};
            for (int i = 0; i < 3; ++i) {
                t[0] += r[3 * row + i] * z[3 * row + i];
                if (free) t[1] += z[3 * row + i] * q[3 * row + i];
            }
            return t;
        });
        if (!(rz_new > 0) || !std::isfinite(rz_new)) {
            result.breakdown = true;
            break;
        }
        const double beta = -alpha * zq / rz;
        rz = rz_new;
        parallel_for(0, 3 * n, [&](std::int64_t i) { p[i] = z[i] + beta * p[i]; });
    }
    return result;
}

} // namespace edn::cpu::detail
