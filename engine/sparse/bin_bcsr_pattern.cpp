// The Bin-BCSR* pattern's queries; its build is cpu/pattern.cpp (CUDA: cuda/pattern.cu).
#include "sparse/bin_bcsr_pattern.hpp"

#include <atomic>

namespace edn {

std::uint64_t new_pattern_generation() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

std::int64_t BinBcsrPattern::nnz_blocks() const {
    std::int64_t total = num_rows;
    for (Index count : row_counts) total += count;
    return total;
}

std::size_t BinBcsrPattern::matrix_bytes(std::size_t scalar_bytes) const {
    return scalar_bytes * 9 * (static_cast<std::size_t>(num_slots()) + num_rows) +
           sizeof(Index) * (static_cast<std::size_t>(num_slots()) + bin_offsets.size());
}

Index BinBcsrPattern::find_slot(Index row, Index col) const {
    // Columns of a row are sorted and its padding (== row) sits after them, so a lower-bound
    // search over the first row_counts[row] entries finds col.
    Index lo = 0, hi = row_counts[row];
    const Index bin = row / kBinRows, lane = row % kBinRows, begin = bin_offsets[bin];
    while (lo < hi) {
        const Index mid = (lo + hi) / 2;
        if (columns[begin + mid * kBinRows + lane] < col)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < row_counts[row] && columns[begin + lo * kBinRows + lane] == col)
        return begin + lo * kBinRows + lane;
    return -1;
}

} // namespace edn
