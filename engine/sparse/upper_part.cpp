#include "sparse/upper_part.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <cstdint>

namespace edn {

UpperPattern build_upper_pattern(const BinBcsrPattern& full) {
    UpperPattern up;
    const Index n = full.num_rows;
    up.num_rows = n;
    up.counts.assign(n, 0);
    up.first.assign(n, 0);
    const BinBcsrPatternView v = full.view();
    for (Index row = 0; row < n; ++row) {
        const Index count = full.row_counts[row];
        Index j = 0;
        while (j < count && full.columns[v.slot(row, j)] < row) ++j;
        up.first[row] = j;
        up.counts[row] = count - j;
    }
    const Index bins = (n + kBinRows - 1) / kBinRows;
    up.bin_offsets.assign(bins + 1, 0);
    for (Index b = 0; b < bins; ++b) {
        Index width = 0;
        for (Index row = b * kBinRows; row < std::min(n, (b + 1) * kBinRows); ++row)
            width = std::max(width, up.counts[row]);
        up.bin_offsets[b + 1] = up.bin_offsets[b] + kBinRows * width;
    }
    up.columns.assign(up.num_slots(), 0);
    for (Index b = 0; b < bins; ++b) {
        const Index begin = up.bin_offsets[b];
        const Index width = (up.bin_offsets[b + 1] - begin) / kBinRows;
        for (Index lane = 0; lane < kBinRows; ++lane) {
            const Index row = b * kBinRows + lane;
            for (Index j = 0; j < width; ++j)
                up.columns[begin + j * kBinRows + lane] =
                    row < n && j < up.counts[row] ? full.columns[v.slot(row, up.first[row] + j)]
                                                  : std::min(row, n - 1);
        }
    }
    return up;
}

template <class T>
std::vector<T> gather_upper_values(const BinBcsrMatrix<T>& full, const UpperPattern& upper) {
    EDN_VERIFY(full.pattern != nullptr && full.pattern->num_rows == upper.num_rows,
               ErrorCode::Usage, "gather_upper_values: matrix and upper pattern differ");
    std::vector<T> out(9 * static_cast<std::size_t>(upper.num_slots()), T(0));
    const Index* full_offsets = full.pattern->bin_offsets.data();
    for (Index row = 0; row < upper.num_rows; ++row) {
        const Index bin = row / kBinRows;
        const Index begin = upper.bin_offsets[bin];
        const Index width = (upper.bin_offsets[bin + 1] - begin) / kBinRows;
        for (Index j = 0; j < upper.counts[row]; ++j)
            for (int k = 0; k < 9; ++k)
                out[9 * static_cast<std::size_t>(begin) +
                    (static_cast<std::size_t>(k) * width + j) * kBinRows + row % kBinRows] =
                    full.values[bin_bcsr_value_index(full_offsets, row, upper.first[row] + j, k)];
    }
    return out;
}

template std::vector<float> gather_upper_values(const BinBcsrMatrix<float>&, const UpperPattern&);
template std::vector<double> gather_upper_values(const BinBcsrMatrix<double>&, const UpperPattern&);

} // namespace edn
