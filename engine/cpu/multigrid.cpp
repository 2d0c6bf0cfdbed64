// Numeric phase, V-cycle and CG of the smoothed-aggregation multigrid on the CPU
// (solver/multigrid.hpp). Every re-value walks the fixed maps of the symbolic phase; every loop
// over rows writes only its own rows (deterministic whatever the thread count).
#include "solver/multigrid.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cpu/pcg_detail.hpp"
#include "cpu/simd_loop.hpp"
#include "solver/block_inverse.hpp"
#include "solver/lanczos.hpp"
#include "sparse/spmv.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace edn::cpu {
namespace {

constexpr int kMaxBlock = 6;

// A square operator of one level: the fine Bin-BCSR* matrix (block 3) or a coarse BlockMatrix.
struct Op {
    int block = 3;
    BinBcsrPatternView p;
    const double* values = nullptr;
    const double* diag = nullptr;
    const std::uint8_t* fixed = nullptr; // fine level only

    Index slots() const { return p.bin_offsets[p.num_bins]; }
    bool is_free(Index row) const { return fixed == nullptr || fixed[row] == 0; }
    // The block of operator entry `e` of `row` (slot, or #slots + row), row-major.
    void load(Index row, Index e, double* out) const {
        const int bb = block * block;
        if (e >= slots()) {
            for (int k = 0; k < bb; ++k)
                out[k] = diag[static_cast<std::int64_t>(k) * p.num_rows + row];
            return;
        }
        const Index bin = row / kBinRows;
        const std::int64_t begin = p.bin_offsets[bin], stride = p.bin_offsets[bin + 1] - begin;
        const double* v = values + bb * begin + (e - begin);
        for (int k = 0; k < bb; ++k) out[k] = v[k * stride];
    }
};

Op fine_op(const BinBcsrMatrixView<double>& a, const std::uint8_t* fixed) {
    return {3, a.pattern, a.values, a.diag, fixed};
}
Op coarse_op(const BlockMatrix& m) {
    return {m.block, m.pattern.view(), m.values.data(), m.diag.data(), nullptr};
}
Op level_op(const MultigridHierarchy& h, const BinBcsrMatrixView<double>& a, int l) {
    return l == 0 ? fine_op(a, h.fixed.data()) : coarse_op(h.coarse[l - 1]);
}

// y = A x over all rows (pinned rows too: callers mask). Bin by bin with the 32 lanes as
// vectors (as cpu::spmv, which does the 3x3 case): padding slots add 0.
template <int B> void apply_op(const Op& op, const double* x, double* y) {
    if constexpr (B == 3) {
        const BinBcsrMatrixView<double> a{op.p, const_cast<double*>(op.values),
                                          const_cast<double*>(op.diag)};
        spmv(a, x, y);
    } else {
        // (each bin's lanes compiled for AVX2 where the CPU has it: simd_loop.hpp, same bits)
        const std::int64_t n = op.p.num_rows;
        parallel_simd_for(
            op.p.num_bins,
            [&](std::int64_t bin) {
                const std::int64_t first = bin * kBinRows;
                const int lanes = static_cast<int>(std::min<std::int64_t>(kBinRows, n - first));
                const std::int64_t begin = op.p.bin_offsets[bin];
                const std::int64_t plane = op.p.bin_offsets[bin + 1] - begin;
                const Index width = static_cast<Index>(plane / kBinRows);
                double acc[B][kBinRows] = {};
                for (int r = 0; r < B; ++r)
                    for (int c = 0; c < B; ++c) {
                        const double* d = op.diag + (r * B + c) * n + first;
                        for (int lane = 0; lane < lanes; ++lane)
                            acc[r][lane] += d[lane] * x[B * (first + lane) + c];
                    }
                for (Index j = 0; j < width; ++j) {
                    const std::int64_t s0 = begin + static_cast<std::int64_t>(j) * kBinRows;
                    double xg[B][kBinRows];
                    for (int lane = 0; lane < kBinRows; ++lane) {
                        const std::int64_t col = lane < lanes ? op.p.columns[s0 + lane] : 0;
                        for (int c = 0; c < B; ++c) xg[c][lane] = x[B * col + c];
                    }
                    const double* v = op.values + B * B * begin + j * kBinRows;
                    for (int r = 0; r < B; ++r)
                        for (int c = 0; c < B; ++c) {
                            const double* vk = v + (r * B + c) * plane;
                            for (int lane = 0; lane < kBinRows; ++lane)
                                acc[r][lane] += vk[lane] * xg[c][lane];
                        }
                }
                for (int lane = 0; lane < lanes; ++lane)
                    for (int r = 0; r < B; ++r) y[B * (first + lane) + r] = acc[r][lane];
            });
    }
}

template <class F> void with_block(int b, F&& f) {
    if (b == 3)
        f.template operator()<3>();
    else if (b == 6)
        f.template operator()<6>();
    else
        EDN_VERIFY(false, ErrorCode::Internal, "multigrid: block size " << b);
}

// z_row = D_row^-1 r_row (the row's B values each).
template <int B>
void apply_inverse_diag(const MultigridLevel& level, Index row, const double* r_row,
                        double* z_row) {
    const double* inv = level.inverse_diag.data() + static_cast<std::size_t>(row) * B * B;
    for (int i = 0; i < B; ++i) {
        double s = 0;
        for (int k = 0; k < B; ++k) s += inv[i * B + k] * r_row[k];
        z_row[i] = s;
    }
}

// Largest eigenvalue of a symmetric tridiagonal matrix (diagonal d, off-diagonal e) by
// bisection on the Sturm sequence count.
// lambda_max(D^-1 A) on the free dofs by Lanczos: `its` steps of block-Jacobi PCG from a fixed
// pseudo-random right-hand side, then the largest eigenvalue of the tridiagonal its coefficients
// form. Far sharper than as many power iterations (on the 187K-tet bunny 10 power iterations
// were 19% low): the Chebyshev smoother needs an upper bound, and an underestimate makes the
// cycle indefinite (CG breaks down).
template <int B>
double estimate_lambda_max(const Op& op, const MultigridLevel& level, int its,
                           std::vector<double>& r, std::vector<double>& z, std::vector<double>& p,
                           std::vector<double>& q) {
    const std::int64_t n = op.p.num_rows, dofs = B * n;
    std::vector<double> partials;
    const double rz0 = detail::chunked_sums<1>(Index(n), partials, [&](std::int64_t row) {
        for (int k = 0; k < B; ++k)
            r[B * row + k] = op.is_free(Index(row)) ? lanczos_start(B * row + k) : 0.0;
        apply_inverse_diag<B>(level, Index(row), r.data() + B * row, z.data() + B * row);
        double t = 0;
        for (int k = 0; k < B; ++k) {
            p[B * row + k] = z[B * row + k];
            t += r[B * row + k] * z[B * row + k];
        }
        return std::array<double, 1>{t};
    })[0];
    std::vector<double> alphas, betas;
    double rz = rz0;
    for (int it = 0; it < its && rz > 0; ++it) {
        apply_op<B>(op, p.data(), q.data());
        const double pq = detail::chunked_sums<1>(Index(n), partials, [&](std::int64_t row) {
            double t = 0;
            for (int k = 0; k < B; ++k) t += p[B * row + k] * q[B * row + k];
            return std::array<double, 1>{t};
        })[0];
        if (!(pq > 0) || !std::isfinite(pq)) break;
        const double alpha = rz / pq;
        const double rz_new = detail::chunked_sums<1>(Index(n), partials, [&](std::int64_t row) {
            for (int k = 0; k < B; ++k) r[B * row + k] -= alpha * q[B * row + k];
            apply_inverse_diag<B>(level, Index(row), r.data() + B * row, z.data() + B * row);
            double t = 0;
            for (int k = 0; k < B; ++k) t += r[B * row + k] * z[B * row + k];
            return std::array<double, 1>{t};
        })[0];
        const double beta = rz_new / rz;
        alphas.push_back(alpha);
        betas.push_back(beta);
        if (!(rz_new > 1e-30 * rz0)) break; // the Krylov space is exhausted (tiny systems)
        rz = rz_new;
        parallel_for(0, dofs, [&](std::int64_t i) { p[i] = z[i] + beta * p[i]; });
    }
    return lanczos_lambda_max(alphas, betas);
}

template <int B, int K>
void revalue_level(const Op& op, MultigridLevel& level, double damping, int power_iterations,
                   BlockMatrix& coarse, std::vector<double>* scratch[4]) {
    const Index n = op.p.num_rows;
    level.inverse_diag.assign(static_cast<std::size_t>(n) * B * B, 0.0);
    parallel_for(0, n, [&](std::int64_t row) {
        if (!op.is_free(Index(row))) return;
        double d[B * B];
        op.load(Index(row), op.slots() + Index(row), d);
        semidefinite_block_inverse<B>(d, level.inverse_diag.data() + row * B * B, 1e-12);
    });
    level.lambda_max = estimate_lambda_max<B>(op, level, power_iterations, *scratch[0], *scratch[1],
                                              *scratch[2], *scratch[3]);
    const double omega = level.lambda_max > 0 ? damping / level.lambda_max : 0.0;

    // P = T - w D^-1 A T through smooth_target (a given P stays).
    BlockCsr& pro = level.prolongator;
    const std::size_t pb = static_cast<std::size_t>(B) * K;
    if (!level.fixed_prolongator)
        parallel_for(0, n, [&](std::int64_t i) {
            const Index begin = pro.offsets[i], end = pro.offsets[i + 1];
            if (begin == end) return;
            std::fill(pro.values.begin() + begin * pb, pro.values.begin() + end * pb, 0.0);
            const double* ti = level.tentative.data() + i * pb;
            const Index own =
                static_cast<Index>(std::lower_bound(pro.columns.begin() + begin,
                                                    pro.columns.begin() + end, level.aggregate[i]) -
                                   pro.columns.begin());
            std::copy_n(ti, pb, pro.values.begin() + own * pb);
            if (omega == 0 || level.smooth_target.empty()) return;
            const double* inv = level.inverse_diag.data() + i * B * B;
            auto smooth = [&](Index e, Index col) {
                const Index t = level.smooth_target[e];
                if (t < 0) return;
                double a[B * B], at[B * K];
                op.load(Index(i), e, a);
                const double* tc = level.tentative.data() + static_cast<std::size_t>(col) * pb;
                for (int r = 0; r < B; ++r)
                    for (int c = 0; c < K; ++c) {
                        double s = 0;
                        for (int k = 0; k < B; ++k) s += a[r * B + k] * tc[k * K + c];
                        at[r * K + c] = s;
                    }
                double* out = pro.values.data() + static_cast<std::size_t>(t) * pb;
                for (int r = 0; r < B; ++r)
                    for (int c = 0; c < K; ++c) {
                        double s = 0;
                        for (int k = 0; k < B; ++k) s += inv[r * B + k] * at[k * K + c];
                        out[r * K + c] -= omega * s;
                    }
            };
            smooth(op.slots() + Index(i), Index(i));
            for (Index j = 0; j < op.p.row_counts[i]; ++j) {
                const Index s = op.p.slot(Index(i), j);
                smooth(s, op.p.columns[s]);
            }
        });

    // A P through the product pairs.
    BlockCsr& ap = level.product;
    parallel_for(0, n, [&](std::int64_t i) {
        for (Index q = ap.offsets[i]; q < ap.offsets[i + 1]; ++q) {
            double acc[B * K] = {};
            for (Index k = level.product_offsets[q]; k < level.product_offsets[q + 1]; ++k) {
                double a[B * B];
                op.load(Index(i), level.product_entry[k], a);
                const double* pv =
                    pro.values.data() + static_cast<std::size_t>(level.product_p[k]) * pb;
                for (int r = 0; r < B; ++r)
                    for (int m = 0; m < B; ++m) {
                        const double arm = a[r * B + m];
                        for (int c = 0; c < K; ++c) acc[r * K + c] += arm * pv[m * K + c];
                    }
            }
            std::copy_n(acc, pb, ap.values.begin() + static_cast<std::ptrdiff_t>(q * pb));
        }
    });

    // A_c = P^T (A P) through the Galerkin pairs, row by coarse row.
    const BinBcsrPatternView cp = coarse.pattern.view();
    const Index cslots = coarse.pattern.num_slots();
    const Index nc = level.coarse_nodes;
    parallel_for(0, nc, [&](std::int64_t I) {
        auto sum_entry = [&](Index e, double* acc) {
            std::fill(acc, acc + K * K, 0.0);
            for (Index k = level.galerkin_offsets[e]; k < level.galerkin_offsets[e + 1]; ++k) {
                const double* pv =
                    pro.values.data() + static_cast<std::size_t>(level.galerkin_p[k]) * pb;
                const double* av =
                    ap.values.data() + static_cast<std::size_t>(level.galerkin_ap[k]) * pb;
                for (int m = 0; m < B; ++m)
                    for (int r = 0; r < K; ++r) {
                        const double pmr = pv[m * K + r];
                        for (int c = 0; c < K; ++c) acc[r * K + c] += pmr * av[m * K + c];
                    }
            }
        };
        double acc[K * K];
        sum_entry(cslots + Index(I), acc);
        for (int k = 0; k < K * K; ++k) coarse.diag[static_cast<std::size_t>(k) * nc + I] = acc[k];
        auto value_at = [&](Index row, Index s, int k) -> double& { // plane k of slot s
            const Index bin = row / kBinRows;
            const std::int64_t begin = cp.bin_offsets[bin], end = cp.bin_offsets[bin + 1];
            return coarse.values[K * K * begin + k * (end - begin) + (s - begin)];
        };
        const std::vector<Index>& mirror = level.galerkin_mirror;
        for (Index j = 0; j < coarse.pattern.row_counts[I]; ++j) {
            const Index s = cp.slot(Index(I), j);
            if (!mirror.empty() && mirror[s] < 0) continue; // a lower slot: its mirror's writes
            sum_entry(s, acc);
            for (int k = 0; k < K * K; ++k) value_at(Index(I), s, k) = acc[k];
            if (mirror.empty()) continue;
            const Index J = cp.columns[s];
            for (int r = 0; r < K; ++r)
                for (int c = 0; c < K; ++c) value_at(J, mirror[s], c * K + r) = acc[r * K + c];
        }
    });
}

// Dense lower Cholesky of a small operator (n x n row-major into f), inert dofs split off (unit
// pivot, no coupling; inert[i] = 1): pinned rows, zero rows, non-positive pivots.
void factor_dense(const Op& op, std::vector<double>& f, std::vector<std::uint8_t>& inert) {
    const int b = op.block;
    const Index rows = op.p.num_rows;
    const std::int64_t n = static_cast<std::int64_t>(rows) * b;
    f.assign(static_cast<std::size_t>(n * n), 0.0);
    double blk[kMaxBlock * kMaxBlock];
    for (Index row = 0; row < rows; ++row) {
        if (!op.is_free(row)) continue;
        auto put = [&](Index e, Index col) {
            if (!op.is_free(col)) return;
            op.load(row, e, blk);
            for (int r = 0; r < b; ++r)
                for (int c = 0; c < b; ++c) f[(row * b + r) * n + col * b + c] = blk[r * b + c];
        };
        put(op.slots() + row, row);
        for (Index j = 0; j < op.p.row_counts[row]; ++j) {
            const Index s = op.p.slot(row, j);
            put(s, op.p.columns[s]);
        }
    }
    inert.assign(static_cast<std::size_t>(n), 0);
    double scale = 0;
    for (std::int64_t i = 0; i < n; ++i) scale = std::max(scale, std::abs(f[i * n + i]));
    for (std::int64_t j = 0; j < n; ++j) {
        const double orig = f[j * n + j];
        double d = orig;
        for (std::int64_t k = 0; k < j; ++k) d -= f[j * n + k] * f[j * n + k];
        if (!(d > 1e-10 * std::max(orig, 1e-300)) || !(orig > 1e-12 * scale)) {
            inert[j] = 1;
            f[j * n + j] = 1;
            for (std::int64_t i = j + 1; i < n; ++i) f[i * n + j] = 0;
            for (std::int64_t k = 0; k < j; ++k) f[j * n + k] = 0;
            continue;
        }
        const double ljj = std::sqrt(d);
        f[j * n + j] = ljj;
        parallel_for(
            j + 1, n,
            [&](std::int64_t i) {
                double s = f[i * n + j];
                const double* li = f.data() + i * n;
                const double* lj = f.data() + j * n;
                for (std::int64_t k = 0; k < j; ++k) s -= li[k] * lj[k];
                f[i * n + j] = s / ljj;
            },
            256);
    }
    // the upper triangle is scratch: clear it so the factor is exactly lower
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t k = i + 1; k < n; ++k) f[i * n + k] = 0;
}

// x = A^+ b with the factor of factor_dense (inert dofs 0).
void solve_dense(const std::vector<double>& f, const std::vector<std::uint8_t>& inert,
                 std::int64_t n, const double* b, double* x) {
    for (std::int64_t i = 0; i < n; ++i) {
        if (inert[i]) {
            x[i] = 0;
            continue;
        }
        double s = b[i];
        for (std::int64_t k = 0; k < i; ++k) s -= f[i * n + k] * x[k];
        x[i] = s / f[i * n + i];
    }
    for (std::int64_t i = n - 1; i >= 0; --i) {
        if (inert[i]) continue;
        double s = x[i];
        for (std::int64_t k = i + 1; k < n; ++k) s -= f[k * n + i] * x[k];
        x[i] = s / f[i * n + i];
    }
}

void factor_coarsest(MultigridHierarchy& h, const Op& op) {
    factor_dense(op, h.coarsest_factor, h.coarsest_inert);
}

void solve_coarsest(const MultigridHierarchy& h, const double* b, double* x) {
    solve_dense(h.coarsest_factor, h.coarsest_inert, h.coarsest_dofs, b, x);
}

// Chebyshev smoothing of A x = b on D^-1 A: x = 0 on entry when zero_start; r = b - A x on
// entry when residual_given (not computed again).
template <int B>
void chebyshev(const Op& op, const MultigridLevel& level, const MultigridSettings& s,
               const double* b, double* x, double* r, double* d, double* ad, bool zero_start,
               bool residual_given = false) {
    const std::int64_t n = op.p.num_rows, dofs = B * n;
    double c[2 * kMaxChebyshevDegree];
    const int degree = smoother_degree(s, level.fixed_prolongator);
    chebyshev_coefficients(level.lambda_max, s.smoother_ratio, degree, c);
    if (c[1] == 0) return; // lambda_max <= 0: no smoothing
    if (zero_start)
        std::copy_n(b, dofs, r);
    else if (!residual_given) {
        apply_op<B>(op, x, r);
        parallel_for(0, dofs, [&](std::int64_t i) { r[i] = b[i] - r[i]; });
    }
    parallel_for(0, n, [&](std::int64_t row) {
        apply_inverse_diag<B>(level, Index(row), r + B * row, d + B * row);
        for (int k = 0; k < B; ++k) d[B * row + k] *= c[1];
    });
    for (int k = 1;; ++k) {
        parallel_for(0, dofs, [&](std::int64_t i) { x[i] += d[i]; });
        if (k == degree) break;
        // r -= A d; d = c1 d + c2 D^-1 r
        const double c1 = c[2 * k], c2 = c[2 * k + 1];
        apply_op<B>(op, d, ad);
        parallel_for(0, n, [&](std::int64_t row) {
            for (int j = 0; j < B; ++j) r[B * row + j] -= ad[B * row + j];
            double z[B];
            apply_inverse_diag<B>(level, Index(row), r + B * row, z);
            for (int j = 0; j < B; ++j) d[B * row + j] = c1 * d[B * row + j] + c2 * z[j];
        });
    }
}

void cycle(const MultigridHierarchy& h, const BinBcsrMatrixView<double>& a, int l, const double* b,
           double* x) {
    if (l == h.num_levels() - 1) {
        solve_coarsest(h, b, x);
        return;
    }
    // The fine level smooths the re-valued matrix (MultigridHierarchy::fine_values).
    const Op op = l == 0
                      ? Op{3, a.pattern, h.fine_values.data(), h.fine_diag.data(), h.fixed.data()}
                      : level_op(h, a, l);
    const MultigridLevel& level = h.levels[l];
    const int K = h.coarse[l].block;
    double* r = h.r[l].data();
    double* d = h.d[l].data();
    double* q = h.q[l].data();
    double* bc = h.b[l + 1].data();
    double* xc = h.x[l + 1].data();
    with_block(op.block, [&]<int B>() {
        const std::int64_t n = op.p.num_rows;
        std::fill(x, x + B * n, 0.0);
        chebyshev<B>(op, level, h.settings, b, x, r, d, q, true);
        apply_op<B>(op, x, r);
        parallel_for(0, B * n, [&](std::int64_t i) { r[i] = b[i] - r[i]; });
        // b_c = P^T r
        const BlockCsr& pro = level.prolongator;
        const std::size_t pb = static_cast<std::size_t>(B) * K;
        parallel_for(0, level.coarse_nodes, [&](std::int64_t I) {
            double s[kMaxBlock] = {};
            for (Index t = level.restriction_offsets[I]; t < level.restriction_offsets[I + 1];
                 ++t) {
                const double* pv = pro.values.data() + level.restriction_blocks[t] * pb;
                const double* ri = r + static_cast<std::size_t>(B) * level.restriction_rows[t];
                for (int m = 0; m < B; ++m)
                    for (int c = 0; c < K; ++c) s[c] += pv[m * K + c] * ri[m];
            }
            for (int c = 0; c < K; ++c) bc[K * I + c] = s[c];
        });
        cycle(h, a, l + 1, bc, xc);
        // x += P x_c; on a level with a given P also r -= (A P) x_c, the post-smoother's
        // residual b - A (x + P x_c) without a product with A (A P has about a third of A's
        // blocks there; the aggregated levels' A P rows are longer than A's)
        const bool ap_residual = level.fixed_prolongator;
        // y_i += sign (M x_c)_i over row i of M (P or A P, B x K blocks)
        const auto add_row = [&](const BlockCsr& mat, std::int64_t i, double sign, double* y) {
            for (Index k = mat.offsets[i]; k < mat.offsets[i + 1]; ++k) {
                const double* v = mat.values.data() + k * pb;
                const double* xj = xc + static_cast<std::size_t>(K) * mat.columns[k];
                for (int m = 0; m < B; ++m) {
                    double s = 0;
                    for (int c = 0; c < K; ++c) s += v[m * K + c] * xj[c];
                    y[B * i + m] += sign * s;
                }
            }
        };
        parallel_for(0, n, [&](std::int64_t i) {
            add_row(pro, i, 1.0, x);
            if (ap_residual) add_row(level.product, i, -1.0, r);
        });
        chebyshev<B>(op, level, h.settings, b, x, r, d, q, false, ap_residual);
    });
}

} // namespace

void revalue_multigrid(MultigridHierarchy& h, const BinBcsrMatrixView<double>& a) {
    EDN_VERIFY(a.pattern.num_rows == static_cast<Index>(h.fixed.size()), ErrorCode::Usage,
               "multigrid: the matrix has " << a.pattern.num_rows << " rows, the hierarchy "
                                            << h.fixed.size());
    const bool given = !h.levels.empty() && h.levels[0].fixed_prolongator; // p-multigrid
    for (std::size_t l = 0; l < h.levels.size(); ++l) {
        const Op op = level_op(h, a, static_cast<int>(l));
        with_block(op.block, [&]<int B>() {
            with_block(h.coarse[l].block, [&]<int KK>() {
                std::vector<double>* scratch[4] = {&h.x[l], &h.r[l], &h.d[l], &h.q[l]};
                revalue_level<B, KK>(op, h.levels[l], h.settings.prolongator_damping,
                                     lanczos_steps(h.settings, static_cast<int>(l), given),
                                     h.coarse[l], scratch);
            });
        });
    }
    factor_coarsest(h, level_op(h, a, h.num_levels() - 1));
    const std::size_t slots = static_cast<std::size_t>(a.pattern.bin_offsets[a.pattern.num_bins]);
    h.fine_values.assign(a.values, a.values + 9 * slots);
    h.fine_diag.assign(a.diag, a.diag + 9 * static_cast<std::size_t>(a.pattern.num_rows));
}

double lanczos_start(std::int64_t i) {
    return lanczos_start_value(i);
}

double lanczos_lambda_max(const std::vector<double>& alphas, const std::vector<double>& betas) {
    return edn::lanczos_lambda_max(alphas.data(), betas.data(), static_cast<int>(alphas.size()));
}

std::vector<double> dense_semidefinite_inverse(int block, const BinBcsrPatternView& p,
                                               const double* values, const double* diag,
                                               const std::uint8_t* fixed) {
    const Op op{block, p, values, diag, fixed};
    std::vector<double> f;
    std::vector<std::uint8_t> inert;
    factor_dense(op, f, inert);
    const std::int64_t n = static_cast<std::int64_t>(p.num_rows) * block;
    std::vector<double> inv(static_cast<std::size_t>(n * n)), e(static_cast<std::size_t>(n));
    for (std::int64_t c = 0; c < n; ++c) {
        std::fill(e.begin(), e.end(), 0.0);
        e[c] = 1;
        std::vector<double> x(static_cast<std::size_t>(n));
        solve_dense(f, inert, n, e.data(), x.data());
        for (std::int64_t r = 0; r < n; ++r) inv[r * n + c] = x[r];
    }
    return inv;
}

void apply_multigrid(const MultigridHierarchy& h, const BinBcsrMatrixView<double>& a,
                     const double* r, double* z) {
    cycle(h, a, 0, r, z);
    const Index n = a.pattern.num_rows;
    parallel_for(0, n, [&](std::int64_t i) {
        if (h.fixed[i]) z[3 * i] = z[3 * i + 1] = z[3 * i + 2] = 0;
    });
}

PcgResult pcg_multigrid(const BinBcsrMatrixView<double>& a, const MultigridHierarchy& h,
                        const double* b, double* x, const PcgSettings& settings,
                        PcgWorkspace<double>& ws, const std::uint8_t* fixed) {
    return detail::flexible_pcg(a, b, x, settings, ws, fixed,
                                [&](const double* r, double* z) { apply_multigrid(h, a, r, z); });
}

} // namespace edn::cpu
