#pragma once
/// Bin-BCSR* sparsity pattern on the host (layout: see sparse/bin_bcsr_view.hpp) and its exact
/// construction from topology (mueller-roemer-2018 sec. 3, Eq. 6, and sec. 4.3).

#include "cuda/cuda_only.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sparse/bin_bcsr_view.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace edn {

/// Exact Bin-BCSR* pattern: row counts from Eq. 6, bins of 32 rows, columns sorted per row.
struct BinBcsrPattern {
    Index num_rows = 0;             ///< block rows = nodes
    std::vector<Index> row_counts;  ///< #rows off-diagonal blocks per row (Eq. 6 minus 1)
    std::vector<Index> bin_offsets; ///< #bins+1 slot offsets (exclusive scan of 32 * width)
    std::vector<Index> columns;     ///< #slots; padding slots hold the row's own index

    /// Number of bins.
    Index num_bins() const { return static_cast<Index>(bin_offsets.size()) - 1; }
    /// Allocated off-diagonal block slots (padding included).
    Index num_slots() const { return bin_offsets.empty() ? 0 : bin_offsets.back(); }
    /// Stored non-zero blocks: off-diagonal blocks plus the diagonal.
    std::int64_t nnz_blocks() const;
    /// Slots that are padding (inside bins only, by construction).
    std::int64_t padded_blocks() const { return num_slots() - (nnz_blocks() - num_rows); }
    /// Bytes of a matrix with this pattern and scalars of `scalar_bytes` (values, diagonal,
    /// columns, bin offsets; row counts are not needed by the matrix).
    std::size_t matrix_bytes(std::size_t scalar_bytes) const;
    /// Slot of block (row, col) or -1 when col is not in the row (binary search); col != row.
    Index find_slot(Index row, Index col) const;
    /// View for kernels.
    BinBcsrPatternView view() const {
        return {num_rows, num_bins(), bin_offsets.data(), columns.data(), row_counts.data()};
    }
};

namespace cpu {

/// Exact off-diagonal block counts per node for order `layout.order` (Eq. 6 minus the diagonal).
std::vector<Index> bin_bcsr_row_counts(const Topology& topology, const NodeLayout& layout);

/// Slot offsets of the bins: exclusive scan of 32 * (max row count in the bin).
std::vector<Index> bin_bcsr_bin_offsets(const std::vector<Index>& row_counts);

/// Fills pattern.columns (already sized to num_slots) with the sorted node neighbours of every
/// row, gathered through vertexCells/edgeCells/faceCells; padding = the row itself.
void fill_bin_bcsr_columns(const Topology& topology, const std::vector<Cell>& cells,
                           const NodeLayout& layout, BinBcsrPattern& pattern);

} // namespace cpu

/// Device twins (cuda/pattern.cu): every pointer device memory, `layout`'s node slot order
/// pointers too; work on the default stream. The caller allocates the outputs (the one exact
/// allocation happens between bin offsets and columns).
namespace cuda {

/// cpu::bin_bcsr_row_counts on the device: per-simplex counts with atomics (paper sec. 4.1),
/// then #nodes counts into `row_counts`. `scratch_bytes` (optional) receives the temporary
/// device bytes it held.
EDN_CUDA_FN void bin_bcsr_row_counts(const TopologyView& topology, const NodeLayout& layout,
                                     Index* row_counts,
                                     std::size_t* scratch_bytes = nullptr) EDN_CUDA_ONLY;

/// cpu::bin_bcsr_bin_offsets on the device: #bins + 1 offsets into `bin_offsets` from the
/// `num_rows` row counts; returns the total slot count (read back: synchronises), or -1 with
/// `read_total` false (no wait: the total is bin_offsets[#bins] on the device).
/// `scratch_bytes` (optional) receives the temporary device bytes it held.
EDN_CUDA_FN Index bin_bcsr_bin_offsets(const Index* row_counts, Index num_rows, Index* bin_offsets,
                                       std::size_t* scratch_bytes = nullptr,
                                       bool read_total = true) EDN_CUDA_ONLY;

/// cpu::fill_bin_bcsr_columns on the device: `cell_nodes` the #T x nodes_per_cell(order) cell
/// node table, `pattern` the counts and bin offsets, `columns` its #slots; one lane per row,
/// bins handed out through the one-element `bin_counter` (zeroed here).
EDN_CUDA_FN void fill_bin_bcsr_columns(const TopologyView& topology, const Index* cell_nodes,
                                       const NodeLayout& layout, const BinBcsrPatternView& pattern,
                                       Index* columns, unsigned int* bin_counter) EDN_CUDA_ONLY;

} // namespace cuda

/// All four steps: counts, bin offsets, one exact allocation, columns.
BinBcsrPattern build_bin_bcsr_pattern(const Topology& topology, const std::vector<Cell>& cells,
                                      const NodeLayout& layout);

} // namespace edn

namespace edn {

/// #T x nodes_per_cell(order) table of every cell's global nodes in canonical local order
/// (cell_nodes for all cells, in parallel).
std::vector<Index> cell_node_table(const Topology& topology, const std::vector<Cell>& cells,
                                   const NodeLayout& layout);

} // namespace edn
