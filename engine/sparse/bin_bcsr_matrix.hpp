#pragma once
/// Host Bin-BCSR* matrix: values over a BinBcsrPattern (layout: sparse/bin_bcsr_view.hpp).

#include "sparse/bin_bcsr_pattern.hpp"

#include <filesystem>
#include <vector>

namespace edn {

/// Values of a Bin-BCSR* matrix on the host; the pattern is shared and must outlive it.
template <class T> struct BinBcsrMatrix {
    const BinBcsrPattern* pattern = nullptr;
    std::vector<T> values; ///< 9 * #slots (per bin: 9 planes of its slots)
    std::vector<T> diag;   ///< 9 * #rows (9 planes)

    BinBcsrMatrix() = default;
    /// Exactly sized for `p`, zero-filled.
    explicit BinBcsrMatrix(const BinBcsrPattern& p)
        : pattern(&p), values(9 * static_cast<std::size_t>(p.num_slots()), T(0)),
          diag(9 * static_cast<std::size_t>(p.num_rows), T(0)) {}

    /// Kernel view.
    BinBcsrMatrixView<T> view() { return {pattern->view(), values.data(), diag.data()}; }
    /// Entry (r, c) of block (row, col), 0 when the block is not stored.
    T entry(Index row, Index col, int r, int c) const;
};

/// One scalar entry of a sparse matrix in coordinate form.
template <class T> struct CooEntry {
    std::int64_t row, col;
    T value;
};

/// Every entry of every stored block (diagonal and off-diagonal, padding excluded) as scalar
/// COO with dof index 3*node + axis, sorted by (row, col).
template <class T> std::vector<CooEntry<T>> to_coo(const BinBcsrMatrix<T>& matrix);

/// Writes `matrix` as a 3n x 3n MatrixMarket coordinate real general file (atomically).
template <class T>
void write_matrix_market(const std::filesystem::path& path, const BinBcsrMatrix<T>& matrix);

extern template struct BinBcsrMatrix<float>;
extern template struct BinBcsrMatrix<double>;

} // namespace edn
