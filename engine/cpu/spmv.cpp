// CPU twin of the Bin-BCSR* SpMV and block-Jacobi kernels (cuda/spmv.cu): one thread per bin
// range; the upper part's product serially (the reference of the CUDA kernel).
#include "sparse/spmv.hpp"

#include "core/parallel.hpp"
#include "sparse/block3.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace edn::cpu {

namespace {

/// A vector of Bytes / sizeof(T) lanes of T through the GCC/Clang vector extension: 16 bytes is
/// one SSE2 register (the x86-64 baseline), 32 one AVX2 register (spmv_bins_avx2). The product's
/// lanes are rows, so each lane computes exactly what the scalar loop computes, and without
/// fused multiply-adds (not enabled for either) both widths give the same bits.
template <class T, int Bytes> struct Lanes { typedef T V __attribute__((vector_size(Bytes))); };

/// v = p[0 .. lanes), an unaligned load (a view may start anywhere).
template <class V, class T> [[gnu::always_inline]] inline void load_lanes(V& v, const T* p) {
    std::memcpy(&v, p, sizeof(v));
}

// GCC 12 takes the lane-by-lane fill of a zeroed vector for a read of an uninitialized one.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/// Rows [row0, row0 + W) of a full bin (W = the lanes of a vector) over their first `count`
/// slots, the longest of these rows (so the other rows' padding is skipped too: padding slots
/// hold column = the row itself and value 0, so reading them adds 0). Each row's sum runs in the
/// order of the per-row reference (diagonal block, then the off-diagonal blocks in slot order,
/// each block row as (v0 x0 + v1 x1) + v2 x2): lanes do not change the result.
template <class T, int Bytes>
[[gnu::always_inline]] inline void spmv_lanes(const T* values, const Index* columns,
                                              std::int64_t plane, Index count, const T* diag,
                                              std::int64_t n, std::int64_t row0, const T* x, T* y) {
    using V = typename Lanes<T, Bytes>::V;
    constexpr int W = sizeof(V) / sizeof(T);
    V xr[3];
    for (int lane = 0; lane < W; ++lane)
        for (int c = 0; c < 3; ++c) xr[c][lane] = x[3 * (row0 + lane) + c];
    V acc[3];
    for (int r = 0; r < 3; ++r) {
        V d0, d1, d2;
        load_lanes(d0, diag + (3 * r) * n + row0);
        load_lanes(d1, diag + (3 * r + 1) * n + row0);
        load_lanes(d2, diag + (3 * r + 2) * n + row0);
        acc[r] = d0 * xr[0] + d1 * xr[1] + d2 * xr[2];
    }
    const T* v[9];
    for (int k = 0; k < 9; ++k) v[k] = values + k * plane;
    for (Index j = 0; j < count; ++j) {
        const std::int64_t s = static_cast<std::int64_t>(j) * kBinRows;
        V xc[3];
        for (int lane = 0; lane < W; ++lane) {
            const std::int64_t col = 3 * static_cast<std::int64_t>(columns[s + lane]);
            xc[0][lane] = x[col];
            xc[1][lane] = x[col + 1];
            xc[2][lane] = x[col + 2];
        }
        for (int r = 0; r < 3; ++r) {
            V v0, v1, v2;
            load_lanes(v0, v[3 * r] + s);
            load_lanes(v1, v[3 * r + 1] + s);
            load_lanes(v2, v[3 * r + 2] + s);
            acc[r] += v0 * xc[0] + v1 * xc[1] + v2 * xc[2];
        }
    }
    for (int lane = 0; lane < W; ++lane)
        for (int r = 0; r < 3; ++r) y[3 * (row0 + lane) + r] = acc[r][lane];
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/// One full bin (all 32 rows exist), a vector of rows at a time.
template <class T, int Bytes>
[[gnu::always_inline]] inline void spmv_full_bin(const T* values, const Index* columns, Index width,
                                                 const Index* counts, const T* diag, std::int64_t n,
                                                 std::int64_t first, const T* x, T* y) {
    constexpr int W = Bytes / sizeof(T);
    static_assert(kBinRows % W == 0);
    const std::int64_t plane = static_cast<std::int64_t>(width) * kBinRows;
    for (int lane0 = 0; lane0 < kBinRows; lane0 += W) {
        Index count = 0;
        for (int lane = 0; lane < W; ++lane) count = std::max(count, counts[first + lane0 + lane]);
        spmv_lanes<T, Bytes>(values + lane0, columns + lane0, plane, count, diag, n, first + lane0,
                             x, y);
    }
}

/// The last bin when it is partial: rows past the end have no x entry, so lanes are checked.
template <class T>
inline void spmv_partial_bin(const BinBcsrMatrixView<T>& a, const T* x, T* y, std::int64_t bin) {
    const BinBcsrPatternView& p = a.pattern;
    const std::int64_t n = p.num_rows;
    const Index begin = p.bin_offsets[bin];
    const Index width = (p.bin_offsets[bin + 1] - begin) / kBinRows;
    const T* values = a.values + 9 * static_cast<std::int64_t>(begin);
    const Index* columns = p.columns + begin;
    const std::int64_t plane = static_cast<std::int64_t>(width) * kBinRows;
    const std::int64_t first = bin * kBinRows;
    const int lanes = static_cast<int>(std::min<std::int64_t>(kBinRows, n - first));
    for (int lane = 0; lane < lanes; ++lane) {
        const std::int64_t row = first + lane;
        T acc[3];
        for (int r = 0; r < 3; ++r)
            acc[r] = a.diag[(3 * r) * n + row] * x[3 * row] +
                     a.diag[(3 * r + 1) * n + row] * x[3 * row + 1] +
                     a.diag[(3 * r + 2) * n + row] * x[3 * row + 2];
        for (Index j = 0; j < p.row_counts[row]; ++j) {
            const std::int64_t s = static_cast<std::int64_t>(j) * kBinRows + lane;
            const std::int64_t col = columns[s];
            for (int r = 0; r < 3; ++r)
                acc[r] += values[(3 * r) * plane + s] * x[3 * col] +
                          values[(3 * r + 1) * plane + s] * x[3 * col + 1] +
                          values[(3 * r + 2) * plane + s] * x[3 * col + 2];
        }
        for (int r = 0; r < 3; ++r) y[3 * row + r] = acc[r];
    }
}

/// spmv_bins with Bytes-wide vectors.
template <class T, int Bytes>
[[gnu::always_inline]] inline void spmv_bins_with(const BinBcsrMatrixView<T>& a, const T* x, T* y,
                                                  std::int64_t bin_begin, std::int64_t bin_end) {
    const BinBcsrPatternView& p = a.pattern;
    const std::int64_t n = p.num_rows;
    for (std::int64_t bin = bin_begin; bin < bin_end; ++bin) {
        if ((bin + 1) * kBinRows > n) {
            spmv_partial_bin(a, x, y, bin);
            continue;
        }
        const Index begin = p.bin_offsets[bin];
        spmv_full_bin<T, Bytes>(a.values + 9 * static_cast<std::int64_t>(begin), p.columns + begin,
                                (p.bin_offsets[bin + 1] - begin) / kBinRows, p.row_counts, a.diag,
                                n, bin * kBinRows, x, y);
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EDN_SPMV_AVX2 1
/// The AVX2 build of spmv_bins (4 doubles or 8 floats a vector; no FMA, so the same bits), for
/// CPUs that have it: the product build targets the x86-64 baseline.
template <class T>
__attribute__((target("avx2"))) void spmv_bins_avx2(const BinBcsrMatrixView<T>& a, const T* x, T* y,
                                                    std::int64_t bin_begin, std::int64_t bin_end) {
    spmv_bins_with<T, 32>(a, x, y, bin_begin, bin_end);
}
#endif

} // namespace

template <class T>
void spmv_bins(const BinBcsrMatrixView<T>& a, const T* x, T* y, std::int64_t bin_begin,
               std::int64_t bin_end) {
#ifdef EDN_SPMV_AVX2
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) {
        spmv_bins_avx2(a, x, y, bin_begin, bin_end);
        return;
    }
#endif
    spmv_bins_with<T, 16>(a, x, y, bin_begin, bin_end);
}

template <class T>
void spmv(const BinBcsrMatrixView<T>& a, const T* x, T* y, std::int64_t min_parallel_slots) {
    const BinBcsrPatternView& p = a.pattern;
    const std::int64_t bins = p.num_bins;
    // A few parts per thread, each a bin range of about equal slot count (the work, padding
    // included): bins differ in width (at p >= 2, vertex-node bins are about twice as wide as
    // edge-node bins, and vertex nodes come first), so equal bin counts would not balance.
    const std::int64_t parts = std::min<std::int64_t>(bins, 4 * std::int64_t(num_threads()));
    const std::int64_t slots = bins > 0 ? p.bin_offsets[bins] : 0;
    if (parts <= 1 || slots < min_parallel_slots) {
        spmv_bins(a, x, y, 0, bins);
        return;
    }
    const auto bound = [&](std::int64_t part) -> std::int64_t {
        if (part >= parts) return bins;
        const std::int64_t target = slots * part / parts;
        return std::lower_bound(p.bin_offsets, p.bin_offsets + bins, target,
                                [](Index offset, std::int64_t t) { return offset < t; }) -
               p.bin_offsets;
    };
    parallel_for(
        0, parts, [&](std::int64_t part) { spmv_bins(a, x, y, bound(part), bound(part + 1)); }, 2);
}

template <class T>
void apply_block_jacobi(Index num_rows, const T* inverse_diag, const T* x, T* y) {
    const std::int64_t n = num_rows;
    parallel_for(0, n, [&](std::int64_t row) {
        for (int r = 0; r < 3; ++r)
            y[3 * row + r] = inverse_diag[(3 * r) * n + row] * x[3 * row] +
                             inverse_diag[(3 * r + 1) * n + row] * x[3 * row + 1] +
                             inverse_diag[(3 * r + 2) * n + row] * x[3 * row + 2];
    });
}

template <class T> void invert_diagonal(const BinBcsrMatrixView<T>& a, T* inverse_diag) {
    const std::int64_t n = a.pattern.num_rows;
    parallel_for(0, n, [&](std::int64_t row) {
        T block[9], inv[9];
        for (int k = 0; k < 9; ++k) block[k] = a.diag[k * n + row];
        invert_block3(block, inv);
        for (int k = 0; k < 9; ++k) inverse_diag[k * n + row] = inv[k];
    });
}

template <class T> void spmv_upper(const UpperBinBcsrView<T>& a, const T* x, T* y) {
    const std::int64_t n = a.num_rows;
    for (std::int64_t row = 0; row < n; ++row)
        for (int i = 0; i < 3; ++i) {
            const T* d = a.diag + 3 * i * n + row;
            y[3 * row + i] = d[0] * x[3 * row] + d[n] * x[3 * row + 1] + d[2 * n] * x[3 * row + 2];
        }
    for (std::int64_t row = 0; row < n; ++row) {
        const Index bin = static_cast<Index>(row / kBinRows);
        const Index begin = a.bin_offsets[bin];
        const std::int64_t plane = a.bin_offsets[bin + 1] - begin;
        const T* v = a.values + 9 * static_cast<std::int64_t>(begin) + row % kBinRows;
        const Index* cols = a.columns + begin + row % kBinRows;
        for (Index j = 0; j < a.counts[row]; ++j) {
            const std::int64_t col = cols[j * kBinRows];
            const T* e = v + j * kBinRows;
            for (int r = 0; r < 3; ++r) {
                T acc = 0, acc_t = 0;
                for (int c = 0; c < 3; ++c) {
                    acc += e[(3 * r + c) * plane] * x[3 * col + c];   // (A_ij x_j)_r
                    acc_t += e[(3 * c + r) * plane] * x[3 * row + c]; // (A_ij^T x_i)_r
                }
                y[3 * row + r] += acc;
                y[3 * col + r] += acc_t;
            }
        }
    }
}

template void spmv(const BinBcsrMatrixView<float>&, const float*, float*, std::int64_t);
template void spmv_bins(const BinBcsrMatrixView<float>&, const float*, float*, std::int64_t,
                        std::int64_t);
template void spmv_bins(const BinBcsrMatrixView<double>&, const double*, double*, std::int64_t,
                        std::int64_t);
template void spmv(const BinBcsrMatrixView<double>&, const double*, double*, std::int64_t);
template void apply_block_jacobi(Index, const float*, const float*, float*);
template void apply_block_jacobi(Index, const double*, const double*, double*);
template void invert_diagonal(const BinBcsrMatrixView<float>&, float*);
template void invert_diagonal(const BinBcsrMatrixView<double>&, double*);
template void spmv_upper(const UpperBinBcsrView<float>&, const float*, float*);
template void spmv_upper(const UpperBinBcsrView<double>&, const double*, double*);

} // namespace edn::cpu
