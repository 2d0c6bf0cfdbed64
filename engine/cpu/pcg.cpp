// CPU twin of the block-Jacobi PCG (solver/pcg.hpp): parallel_for over fixed row chunks, so every
// dot product sums the same chunk partials in the same order whatever the thread count.
#include "solver/pcg.hpp"

#include "core/parallel.hpp"
#include "cpu/pcg_detail.hpp"
#include "sparse/spmv.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace edn {

template <class T> void PcgWorkspace<T>::resize(Index num_rows) {
    const std::size_t n3 = 3 * static_cast<std::size_t>(num_rows);
    for (std::vector<T>* v : {&r, &z, &p, &q})
        if (v->size() != n3) v->assign(n3, T(0));
    if (inverse_diag.size() != 3 * n3) inverse_diag.assign(3 * n3, T(0));
}

template struct PcgWorkspace<float>;
template struct PcgWorkspace<double>;

namespace cpu {

using detail::apply_block;
using detail::chunked_sums;

template <class T>
PcgResult pcg(const BinBcsrMatrixView<T>& a, const T* b, T* x, const PcgSettings& settings,
              PcgWorkspace<T>& ws, const std::uint8_t* fixed) {
    const Index rows = a.pattern.num_rows;
    const std::int64_t n = rows;
    PcgResult result;
    if (rows == 0) {
        result.converged = true;
        return result;
    }
    ws.resize(rows);
    T* r = ws.r.data();
    T* z = ws.z.data();
    T* p = ws.p.data();
    T* q = ws.q.data();
    const T* inv = ws.inverse_diag.data();
    invert_diagonal(a, ws.inverse_diag.data());
    auto is_free = [fixed](std::int64_t row) { return fixed == nullptr || fixed[row] == 0; };

    const double bb = detail::start_solve(rows, b, x, settings.warm_start, fixed, ws.partials);

    // r = P (b - A x), z = P M^-1 r, p = z.
    spmv(a, x, q);
    auto [rz, rr] = chunked_sums<2>(rows, ws.partials, [&](std::int64_t row) {
        const bool free = is_free(row);
        for (int i = 0; i < 3; ++i) r[3 * row + i] = free ? b[3 * row + i] - q[3 * row + i] : T(0);
        apply_block(inv, n, row, r, z);
        std::array<double, 2> t{};
        for (int i = 0; i < 3; ++i) {
            p[3 * row + i] = z[3 * row + i];
            t[0] += double(r[3 * row + i]) * double(z[3 * row + i]);
            t[1] += double(r[3 * row + i]) * double(r[3 * row + i]);
        }
        return t;
    });
    const double tol2 = settings.relative_tolerance * settings.relative_tolerance;
    const double ref2 = bb > 0 ? bb : rr;
    result.initial_residual = std::sqrt(rr);
    result.final_residual = result.initial_residual;
    result.reference_norm = std::sqrt(ref2);
    if (rr <= tol2 * ref2) {
        result.converged = true;
        return result;
    }

    while (result.iterations < settings.max_iterations) {
        spmv(a, p, q);
        const double pq = chunked_sums<1>(rows, ws.partials, [&](std::int64_t row) {
            double s = 0;
            for (int i = 0; i < 3; ++i) s += double(p[3 * row + i]) * double(q[3 * row + i]);
            return std::array<double, 1>{s};
        })[0];
        const double alpha_d = rz / pq;
        if (!(pq > 0) || !std::isfinite(alpha_d)) {
            result.breakdown = true;
            break;
        }
        const T alpha = static_cast<T>(alpha_d);
        // x += alpha p; r = P (r - alpha q); z = P M^-1 r (z is 0 on fixed rows since r is).
        const auto [rz_new, rr_new] = chunked_sums<2>(rows, ws.partials, [&](std::int64_t row) {
            const bool free = is_free(row);
            for (int i = 0; i < 3; ++i) {
                x[3 * row + i] += alpha * p[3 * row + i];
                r[3 * row + i] = free ? r[3 * row + i] - alpha * q[3 * row + i] : T(0);
            }
            apply_block(inv, n, row, r, z);
            std::array<double, 2> t{};
            for (int i = 0; i < 3; ++i) {
                t[0] += double(r[3 * row + i]) * double(z[3 * row + i]);
                t[1] += double(r[3 * row + i]) * double(r[3 * row + i]);
            }
            return t;
        });
        ++result.iterations;
        result.final_residual = std::sqrt(rr_new);
        if (rr_new <= tol2 * ref2) {
            result.converged = true;
            break;
        }
        if (!(rz_new > 0) || !std::isfinite(rz_new)) {
            result.breakdown = true; // M^-1 not positive on r: no further direction
            break;
        }
        const T beta = static_cast<T>(rz_new / rz);
        rz = rz_new;
        parallel_for(0, 3 * n, [&](std::int64_t i) { p[i] = z[i] + beta * p[i]; });
    }
    return result;
}

template PcgResult pcg(const BinBcsrMatrixView<float>&, const float*, float*, const PcgSettings&,
                       PcgWorkspace<float>&, const std::uint8_t*);
template PcgResult pcg(const BinBcsrMatrixView<double>&, const double*, double*, const PcgSettings&,
                       PcgWorkspace<double>&, const std::uint8_t*);

} // namespace cpu
} // namespace edn
