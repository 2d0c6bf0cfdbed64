// CPU twin of the pattern build (cuda/pattern.cu): exact row counts (Eq. 6), bins of 32 rows,
// one exact allocation, sorted columns per row (mueller-roemer-2018 sec. 3 and 4.3).
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "sparse/bin_bcsr_pattern.hpp"

#include <algorithm>
#include <limits>
#include <span>

namespace edn {

std::vector<Index> cpu::bin_bcsr_row_counts(const Topology& topology, const NodeLayout& layout) {
    std::vector<Index> counts = row_counts_eq6(topology, layout);
    parallel_for(0, static_cast<std::int64_t>(counts.size()), [&](std::int64_t i) {
        counts[i] -= 1; // the diagonal block is stored apart
    });
    return counts;
}

std::vector<Index> cpu::bin_bcsr_bin_offsets(const std::vector<Index>& row_counts) {
    const std::int64_t rows = static_cast<std::int64_t>(row_counts.size());
    const std::int64_t bins = (rows + kBinRows - 1) / kBinRows;
    std::vector<std::int64_t> widths(bins, 0);
    parallel_for(
        0, bins,
        [&](std::int64_t b) {
            Index width = 0;
            const std::int64_t end = std::min<std::int64_t>(rows, (b + 1) * kBinRows);
            for (std::int64_t r = b * kBinRows; r < end; ++r)
                width = std::max(width, row_counts[r]);
            widths[b] = width;
        },
        kHeavyItems);
    std::vector<Index> offsets(bins + 1, 0);
    std::int64_t total = 0;
    for (std::int64_t b = 0; b < bins; ++b) {
        offsets[b] = static_cast<Index>(total);
        total += widths[b] * kBinRows;
        EDN_VERIFY(9 * total < std::numeric_limits<std::int64_t>::max() / 2 &&
                       total <= std::numeric_limits<Index>::max(),
                   ErrorCode::OutOfMemory,
                   "matrix too large: " << total << " block slots exceed the 32-bit index range");
    }
    offsets[bins] = static_cast<Index>(total);
    return offsets;
}

std::vector<Index> cell_node_table(const Topology& topology, const std::vector<Cell>& cells,
                                   const NodeLayout& layout) {
    const int m = nodes_per_cell(layout.order);
    std::vector<Index> table(static_cast<std::size_t>(cells.size()) * m);
    parallel_for(0, static_cast<std::int64_t>(cells.size()), [&](std::int64_t c) {
        cell_nodes(topology, cells, layout, static_cast<Index>(c), table.data() + c * m);
    });
    return table;
}

namespace {

/// The cells whose closure contains node `node`.
std::span<const Index> node_cells(const Topology& topology, const NodeLayout& layout, Index node) {
    const Index simplex = node_simplex(layout, node);
    switch (node_kind(layout, node)) {
    case NodeKind::Vertex:
        return topology.vertex_cells.row(simplex);
    case NodeKind::Edge:
        return topology.edge_cells.row(simplex);
    case NodeKind::Face:
        return topology.face_cells.row(simplex);
    }
    return {};
}

} // namespace

void cpu::fill_bin_bcsr_columns(const Topology& topology, const std::vector<Cell>& cells,
                                const NodeLayout& layout, BinBcsrPattern& pattern) {
    const int m = nodes_per_cell(layout.order);
    const Index rows = pattern.num_rows;
    const Index bins = pattern.num_bins();
    parallel_for(
        0, bins,
        [&](std::int64_t b) {
            std::vector<Index> row_columns;
            Index local[20];
            const Index begin = pattern.bin_offsets[b];
            const Index width = (pattern.bin_offsets[b + 1] - begin) / kBinRows;
            for (Index lane = 0; lane < kBinRows; ++lane) {
                const Index row = static_cast<Index>(b) * kBinRows + lane;
                if (row >= rows) break;
                row_columns.clear();
                for (Index cell : node_cells(topology, layout, row)) {
                    cell_nodes(topology, cells, layout, cell, local);
                    for (int a = 0; a < m; ++a)
                        if (local[a] != row) row_columns.push_back(local[a]);
                }
                std::sort(row_columns.begin(), row_columns.end());
                row_columns.erase(std::unique(row_columns.begin(), row_columns.end()),
                                  row_columns.end());
                EDN_VERIFY(static_cast<Index>(row_columns.size()) == pattern.row_counts[row],
                           ErrorCode::Internal,
                           "Bin-BCSR* pattern: row " << row << " has " << row_columns.size()
                                                     << " neighbours but Eq. 6 predicted "
                                                     << pattern.row_counts[row]
                                                     << " (mesh not a valid simplicial complex?)");
                for (Index j = 0; j < width; ++j) {
                    const Index col =
                        j < static_cast<Index>(row_columns.size()) ? row_columns[j] : row;
                    pattern.columns[begin + j * kBinRows + lane] = col;
                }
            }
            // Rows past the end of the last bin are padding too: point them at a valid node.
            for (Index lane = 0; lane < kBinRows; ++lane) {
                const Index row = static_cast<Index>(b) * kBinRows + lane;
                if (row < rows) continue;
                for (Index j = 0; j < width; ++j) pattern.columns[begin + j * kBinRows + lane] = 0;
            }
        },
        kHeavyItems);
}

BinBcsrPattern build_bin_bcsr_pattern(const Topology& topology, const std::vector<Cell>& cells,
                                      const NodeLayout& layout) {
    BinBcsrPattern pattern;
    pattern.num_rows = layout.num_nodes();
    pattern.row_counts = cpu::bin_bcsr_row_counts(topology, layout);
    pattern.bin_offsets = cpu::bin_bcsr_bin_offsets(pattern.row_counts);
    pattern.columns.resize(pattern.num_slots());
    cpu::fill_bin_bcsr_columns(topology, cells, layout, pattern);
    return pattern;
}

} // namespace edn
