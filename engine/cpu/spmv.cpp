// CPU twin of the Bin-BCSR* SpMV and block-Jacobi kernels: one thread per bin range.
#include "sparse/spmv.hpp"

#include "core/parallel.hpp"
#include "sparse/block3.hpp"

#include <algorithm>
#include <cstdint>

namespace edn::cpu {

template <class T> void spmv(const BinBcsrMatrixView<T>& a, const T* x, T* y) {
    const BinBcsrPatternView& p = a.pattern;
    const std::int64_t n = p.num_rows;
    parallel_for(
        0, p.num_bins,
        [&](std::int64_t bin) {
            const Index begin = p.bin_offsets[bin];
            const Index width = (p.bin_offsets[bin + 1] - begin) / kBinRows;
            const T* values = a.values + 9 * static_cast<std::int64_t>(begin);
            const Index* columns = p.columns + begin;
            const std::int64_t plane = static_cast<std::int64_t>(width) * kBinRows;
            const std::int64_t first = bin * kBinRows;
            const int lanes = static_cast<int>(std::min<std::int64_t>(kBinRows, n - first));
            // Slot j of all 32 rows is contiguous in each of the 9 planes: walk j outside and the
            // lanes inside so every plane is read sequentially (the GPU's coalesced order).
            T acc[kBinRows][3];
            Index count[kBinRows];
            for (int lane = 0; lane < lanes; ++lane) {
                const std::int64_t row = first + lane;
                count[lane] = p.row_counts[row];
                for (int r = 0; r < 3; ++r)
                    acc[lane][r] = a.diag[(3 * r) * n + row] * x[3 * row] +
                                   a.diag[(3 * r + 1) * n + row] * x[3 * row + 1] +
                                   a.diag[(3 * r + 2) * n + row] * x[3 * row + 2];
            }
            for (Index j = 0; j < width; ++j) {
                const std::int64_t s0 = static_cast<std::int64_t>(j) * kBinRows;
                const Index* cols = columns + s0;
                const T* v = values + s0;
                for (int lane = 0; lane < lanes; ++lane) {
                    if (j >= count[lane]) continue; // padding: never read
                    const std::int64_t col = cols[lane];
                    const T x0 = x[3 * col], x1 = x[3 * col + 1], x2 = x[3 * col + 2];
                    for (int r = 0; r < 3; ++r)
                        acc[lane][r] += v[(3 * r) * plane + lane] * x0 +
                                        v[(3 * r + 1) * plane + lane] * x1 +
                                        v[(3 * r + 2) * plane + lane] * x2;
                }
            }
            for (int lane = 0; lane < lanes; ++lane)
                for (int r = 0; r < 3; ++r) y[3 * (first + lane) + r] = acc[lane][r];
        },
        kHeavyItems);
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

template void spmv(const BinBcsrMatrixView<float>&, const float*, float*);
template void spmv(const BinBcsrMatrixView<double>&, const double*, double*);
template void apply_block_jacobi(Index, const float*, const float*, float*);
template void apply_block_jacobi(Index, const double*, const double*, double*);
template void invert_diagonal(const BinBcsrMatrixView<float>&, float*);
template void invert_diagonal(const BinBcsrMatrixView<double>&, double*);

} // namespace edn::cpu
