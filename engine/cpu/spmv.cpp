// CPU twin of the Bin-BCSR* SpMV and block-Jacobi kernels: one thread per bin range.
#include "sparse/spmv.hpp"

#include "core/parallel.hpp"
#include "sparse/block3.hpp"

#include <cstdint>

namespace edn::cpu {

template <class T> void spmv(const BinBcsrMatrixView<T>& a, const T* x, T* y) {
    const BinBcsrPatternView& p = a.pattern;
    const std::int64_t n = p.num_rows;
    parallel_for(0, p.num_bins, [&](std::int64_t bin) {
        const Index begin = p.bin_offsets[bin];
        const Index width = (p.bin_offsets[bin + 1] - begin) / kBinRows;
        const T* values = a.values + 9 * static_cast<std::int64_t>(begin);
        const std::int64_t plane = static_cast<std::int64_t>(width) * kBinRows;
        for (Index lane = 0; lane < kBinRows; ++lane) {
            const std::int64_t row = bin * kBinRows + lane;
            if (row >= n) break;
            T acc[3];
            for (int r = 0; r < 3; ++r) {
                acc[r] = a.diag[(3 * r) * n + row] * x[3 * row] +
                         a.diag[(3 * r + 1) * n + row] * x[3 * row + 1] +
                         a.diag[(3 * r + 2) * n + row] * x[3 * row + 2];
            }
            const Index count = p.row_counts[row];
            for (Index j = 0; j < count; ++j) {
                const std::int64_t s = static_cast<std::int64_t>(j) * kBinRows + lane;
                const std::int64_t col = p.columns[begin + s];
                const T x0 = x[3 * col], x1 = x[3 * col + 1], x2 = x[3 * col + 2];
                for (int r = 0; r < 3; ++r)
                    acc[r] += values[(3 * r) * plane + s] * x0 +
                              values[(3 * r + 1) * plane + s] * x1 +
                              values[(3 * r + 2) * plane + s] * x2;
            }
            for (int r = 0; r < 3; ++r) y[3 * row + r] = acc[r];
        }
    });
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
