#include "cpu/element_sum.hpp"

#include "core/parallel.hpp"

#include <algorithm>

namespace edn::cpu {

ElementSum::ElementSum(const BinBcsrPattern& pattern, const CellNodesView& cells)
    : pattern_(&pattern), blocks_per_cell_(cells.per_cell * cells.per_cell),
      targets_(static_cast<std::size_t>(cells.num_cells) * blocks_per_cell_) {
    const int m = cells.per_cell;
    parallel_for(0, cells.num_cells, [&](std::int64_t t) {
        const Index* nodes = cells.nodes + t * m;
        for (int a = 0; a < m; ++a)
            for (int b = 0; b < m; ++b)
                targets_[(t * m + a) * m + b] =
                    nodes[a] == nodes[b] ? -1 - nodes[a] : pattern.find_slot(nodes[a], nodes[b]);
    });
}

void ElementSum::clear() {
    values_.assign(9 * static_cast<std::size_t>(pattern_->num_slots()), 0.0);
    diag_.assign(9 * static_cast<std::size_t>(pattern_->num_rows), 0.0);
}

void ElementSum::copy_to(BinBcsrMatrixView<double> out) const {
    const BinBcsrPatternView& p = out.pattern;
    for (Index bin = 0; bin < p.num_bins; ++bin) {
        const std::int64_t begin = p.bin_offsets[bin];
        const std::int64_t plane = p.bin_offsets[bin + 1] - begin;
        double* values = out.values + 9 * begin;
        const double* sum = values_.data() + 9 * begin;
        for (std::int64_t s = 0; s < plane; ++s)
            for (int k = 0; k < 9; ++k) values[k * plane + s] = sum[9 * s + k];
    }
    const std::int64_t n = p.num_rows;
    for (std::int64_t row = 0; row < n; ++row)
        for (int k = 0; k < 9; ++k) out.diag[k * n + row] = diag_[9 * row + k];
}

} // namespace edn::cpu
