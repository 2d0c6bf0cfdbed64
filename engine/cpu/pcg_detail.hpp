#pragma once
// Shared pieces of the CPU PCG solvers (cpu/pcg.cpp, cpu/two_level.cpp): deterministic chunked
// dot products and the 3x3 block-Jacobi apply.
#include "core/parallel.hpp"
#include "core/types.hpp"

#include <algorithm>
#include <array>
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

} // namespace edn::cpu::detail
