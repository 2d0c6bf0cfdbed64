#pragma once
/// Row-owned summation on the CPU: zeroing a matrix, finding a row's column slot, adding a block,
/// and the row-owned walk over each row's cells (sum_cell_rows), shared by the summation
/// stage (summation.cpp) and the CPU backend's inline assembly of every material and order.

#include "core/parallel.hpp"
#include "sparse/bin_bcsr_view.hpp"
#include "sparse/summation.hpp"

namespace edn::cpu {

/// Zeroes the values and the diagonal of `out`.
template <class T> void zero(BinBcsrMatrixView<T> out) {
    const std::int64_t values =
        9 * static_cast<std::int64_t>(out.pattern.bin_offsets[out.pattern.num_bins]);
    const std::int64_t diag = 9 * static_cast<std::int64_t>(out.pattern.num_rows);
    parallel_for(0, values, [&](std::int64_t i) { out.values[i] = T(0); });
    parallel_for(0, diag, [&](std::int64_t i) { out.diag[i] = T(0); });
}

/// Position of `col` among the first `count` (sorted) columns of row's lane, or -1.
/// Position of `col` among the row's (sorted) columns.
inline Index find_column(const BinBcsrPatternView& p, Index row, Index col) {
    const Index begin = p.bin_offsets[row / kBinRows], lane = row % kBinRows;
    Index lo = 0, hi = p.row_counts[row];
    while (lo < hi) {
        const Index mid = (lo + hi) / 2;
        if (p.columns[begin + mid * kBinRows + lane] < col)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/// Adds the 3x3 block `block` at (row, col) of `out`; row is owned by the calling thread.
template <class T>
inline void add_block(BinBcsrMatrixView<T>& out, Index row, Index col, const T* block) {
    const BinBcsrPatternView& p = out.pattern;
    if (row == col) {
        for (int k = 0; k < 9; ++k)
            out.diag[static_cast<std::int64_t>(k) * p.num_rows + row] += block[k];
        return;
    }
    const Index j = find_column(p, row, col);
    EDN_ASSERT(j < p.row_counts[row], "column " << col << " missing in row " << row);
    for (int k = 0; k < 9; ++k)
        out.values[bin_bcsr_value_index(p.bin_offsets, row, j, k)] += block[k];
}

/// Row-owned summation over the cells of each row's node (per-simplex and inline): for each
/// incident cell t, where the row is the cell's node a, row_of(t, a, scratch) returns row a of the
/// cell's Hessian (m blocks of 9: stored blocks, or computed into scratch[20][9] and returned),
/// and its blocks are added at the cell's nodes' columns.
template <class T, class RowOf>
void sum_cell_rows(const NodeCellsView& node_cells, const CellNodesView& cell_nodes, RowOf&& row_of,
                   BinBcsrMatrixView<T> out) {
    zero(out);
    const int m = cell_nodes.per_cell;
    parallel_for(
        0, out.pattern.num_rows,
        [&](std::int64_t row_) {
            const Index row = static_cast<Index>(row_);
            Index simplex = 0;
            const CsrView& csr = node_cells.csr_of(row, simplex);
            T scratch[20][9];
            for (Index e = csr.offsets[simplex]; e < csr.offsets[simplex + 1]; ++e) {
                const Index t = csr.indices[e];
                const Index* nodes = cell_nodes.nodes + static_cast<std::int64_t>(t) * m;
                int a = 0;
                while (nodes[a] != row) ++a;
                const T* blocks = row_of(t, a, scratch);
                for (int b = 0; b < m; ++b) add_block(out, row, nodes[b], blocks + 9 * b);
            }
        },
        256);
}

} // namespace edn::cpu
