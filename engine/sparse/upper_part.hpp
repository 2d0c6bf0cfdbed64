#pragma once
/// The strictly upper part of a symmetric Bin-BCSR* matrix (layout: UpperBinBcsrView in
/// sparse/bin_bcsr_view.hpp), built on the host: the reference of the CUDA PCG's upper part
/// (cuda/cuda_pcg.hpp, UpperMatrix); its serial SpMV is cpu::spmv_upper (sparse/spmv.hpp).

#include "sparse/bin_bcsr_matrix.hpp"

#include <vector>

namespace edn {

/// Pattern of the upper part of a full Bin-BCSR* pattern.
struct UpperPattern {
    Index num_rows = 0;
    std::vector<Index> bin_offsets; ///< #bins+1 (exclusive scan of 32 * max upper count)
    std::vector<Index> columns;     ///< #slots; padding slots hold the row itself
    std::vector<Index> counts;      ///< #rows upper blocks per row
    std::vector<Index> first;       ///< #rows position of the first upper block in the full row

    Index num_bins() const { return static_cast<Index>(bin_offsets.size()) - 1; }
    Index num_slots() const { return bin_offsets.empty() ? 0 : bin_offsets.back(); }
};

/// The upper part of `full` (its columns sorted per row, as every Bin-BCSR* pattern's are).
UpperPattern build_upper_pattern(const BinBcsrPattern& full);

/// Values of the upper part (9 planes per bin, padding 0) gathered from `full`.
template <class T>
std::vector<T> gather_upper_values(const BinBcsrMatrix<T>& full, const UpperPattern& upper);

/// View of `upper` with `values` and the diagonal of `full`.
template <class T>
UpperBinBcsrView<T> upper_view(const UpperPattern& upper, std::vector<T>& values,
                               const BinBcsrMatrix<T>& full) {
    return {upper.num_rows,       upper.num_bins(),    upper.bin_offsets.data(),
            upper.columns.data(), upper.counts.data(), upper.first.data(),
            values.data(),        full.diag.data()};
}

} // namespace edn
