#pragma once
/// POD views of a Bin-BCSR* matrix for kernels (host and device), and the index arithmetic of
/// the layout (mueller-roemer-2018 sec. 4.2):
///  - block rows are nodes, blocks are 3x3; rows are grouped in bins of kBinRows = 32 (a warp);
///  - bin b owns slots [bin_offsets[b], bin_offsets[b+1]); its width w = slots / 32 is the largest
///    off-diagonal block count of its rows; slot of (row, j) = bin_offsets[b] + j*32 + lane;
///  - values of bin b are 9 planes of its slots: value(row, j, k) at
///    9*bin_offsets[b] + (k*w + j)*32 + lane, k = 3*r + c (entry K_ij[r][c]);
///  - padding slots (j >= row length) hold column = the row itself and value 0, so kernels can
///    read them without a branch;
///  - the 3x3 diagonal blocks are stored apart, as 9 planes of all rows: diag[k*num_rows + row].

#include "core/types.hpp"

#include <cstdint>

namespace edn {

/// Rows per bin: one warp.
inline constexpr Index kBinRows = 32;

/// Read-only view of a Bin-BCSR* pattern.
struct BinBcsrPatternView {
    Index num_rows = 0;
    Index num_bins = 0;
    const Index* bin_offsets = nullptr; ///< #bins+1 slot offsets
    const Index* columns = nullptr;     ///< #slots column (node) index per slot
    const Index* row_counts = nullptr;  ///< #rows exact off-diagonal block count
    /// Identifies the pattern's contents for consumers that cache data derived from it (the
    /// CUDA PCG's upper part): a process-wide unique id from new_pattern_generation() given by
    /// the builder of a device pattern; 0 = unknown (such caches are rebuilt on every use).
    std::uint64_t generation = 0;

    /// Bin width (max off-diagonal blocks of its rows).
    EDN_HOST_DEVICE Index width(Index bin) const {
        return (bin_offsets[bin + 1] - bin_offsets[bin]) / kBinRows;
    }
    /// Slot of the j-th off-diagonal block of `row`.
    EDN_HOST_DEVICE Index slot(Index row, Index j) const {
        return bin_offsets[row / kBinRows] + j * kBinRows + (row % kBinRows);
    }
};

/// A process-wide unique pattern id, never 0 (thread-safe).
std::uint64_t new_pattern_generation();

/// The strictly upper off-diagonal blocks (column > row) of a Bin-BCSR* matrix whose blocks
/// satisfy A_ji = A_ij^T, in the same layout: the same bins of 32 rows, each bin as wide as its
/// longest upper row (slot of (row, j) = bin_offsets[bin] + j*32 + lane, 9 value planes per bin),
/// and the diagonal blocks shared with the full matrix. Row `row` holds the full row's blocks
/// first[row] .. first[row] + counts[row] - 1 (columns are sorted, so they are a suffix). An
/// SpMV reads each off-diagonal block once and applies it twice: y_i += A_ij x_j and
/// y_j += A_ij^T x_i (half the matrix bytes of the full layout).
template <class T> struct UpperBinBcsrView {
    Index num_rows = 0;
    Index num_bins = 0;
    const Index* bin_offsets = nullptr; ///< #bins+1 slot offsets
    const Index* columns = nullptr;     ///< #slots (padding: the row itself)
    const Index* counts = nullptr;      ///< #rows upper blocks per row
    const Index* first = nullptr;       ///< #rows index of the first upper block in the full row
    T* values = nullptr;                ///< 9 * #slots (padding values 0)
    const T* diag = nullptr;            ///< 9 * #rows, plane k at diag[k * num_rows] (full's)
};

/// Index of entry k (= 3*r + c) of the block at slot position (row, j) in the values array.
EDN_HOST_DEVICE inline std::int64_t bin_bcsr_value_index(const Index* bin_offsets, Index row,
                                                         Index j, int k) {
    const Index bin = row / kBinRows;
    const Index begin = bin_offsets[bin];
    const Index w = (bin_offsets[bin + 1] - begin) / kBinRows;
    return 9 * static_cast<std::int64_t>(begin) +
           (static_cast<std::int64_t>(k) * w + j) * kBinRows + (row % kBinRows);
}

/// Mutable view of a Bin-BCSR* matrix's values over a pattern.
template <class T> struct BinBcsrMatrixView {
    BinBcsrPatternView pattern;
    T* values = nullptr; ///< 9 * #slots
    T* diag = nullptr;   ///< 9 * #rows, plane k at diag[k * num_rows]
};

} // namespace edn
