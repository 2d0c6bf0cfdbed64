// CPU twins of the summation kernels: rows (or targets) in parallel, each written by one thread.
#include "sparse/summation.hpp"

#include "core/dispatch.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cpu/summation_rows.hpp"
#include "fem/quadrature_tet.hpp"

#include <algorithm>
#include <cstring>

namespace edn {

NodeCellsView node_cells_view(const Topology& topology, const NodeLayout& layout) {
    return {layout,
            {topology.vertex_cells.offsets.data(), topology.vertex_cells.indices.data()},
            {topology.edge_cells.offsets.data(), topology.edge_cells.indices.data()},
            {topology.face_cells.offsets.data(), topology.face_cells.indices.data()}};
}

BinWidths bin_widths(const std::vector<Index>& bin_offsets) {
    std::vector<Index> w;
    for (std::size_t b = 0; b + 1 < bin_offsets.size(); ++b)
        w.push_back(bin_offsets[b + 1] - bin_offsets[b]);
    if (w.empty()) return {};
    BinWidths out;
    out.widest = *std::max_element(w.begin(), w.end());
    const auto at = w.begin() + static_cast<std::ptrdiff_t>((w.size() - 1) * 95 / 100);
    std::nth_element(w.begin(), at, w.end());
    out.common = *at;
    return out;
}

namespace cpu {

template <class T>
void linear_elastic_element_blocks(const std::vector<Vec3>& positions,
                                   const std::vector<Cell>& cells, int order,
                                   const LameParameters<T>& lame, T* element_blocks) {
    auto run = [&]<int P>() {
        constexpr int m = lagrange_tet_num_nodes(P);
        const QuadratureTet<T> rule = quadrature_for_degree<T>(stiffness_quadrature_degree(P));
        parallel_for(
            0, static_cast<std::int64_t>(cells.size()),
            [&](std::int64_t t) {
                T X[4][3];
                for (int v = 0; v < 4; ++v)
                    for (int d = 0; d < 3; ++d) X[v][d] = static_cast<T>(positions[cells[t][v]][d]);
                T(*K)[m][3][3] = reinterpret_cast<T(*)[m][3][3]>(element_blocks + t * m * m * 9);
                if constexpr (P == 1)
                    linear_elastic_stiffness_tet4(X, lame, K);
                else
                    linear_elastic_stiffness<P>(X, lame, rule, K);
            },
            kHeavyItems);
    };
    with_order(order, run);
}

template <class T>
void sum_per_entry(const PerEntryMapView& map, const T* element_blocks, BinBcsrMatrixView<T> out) {
    const BinBcsrPatternView& p = out.pattern;
    // Off-diagonal: one target per slot; padding slots have no sources and become 0.
    parallel_for(
        0, p.num_bins,
        [&](std::int64_t bin) {
            const Index begin = p.bin_offsets[bin], end = p.bin_offsets[bin + 1];
            const std::int64_t plane = end - begin;
            T* values = out.values + 9 * static_cast<std::int64_t>(begin);
            for (Index s = begin; s < end; ++s) {
                T acc[9] = {};
                for (Index e = map.offsets[s]; e < map.offsets[s + 1]; ++e) {
                    const T* block = element_blocks + 9 * static_cast<std::int64_t>(map.sources[e]);
                    for (int k = 0; k < 9; ++k) acc[k] += block[k];
                }
                for (int k = 0; k < 9; ++k) values[k * plane + (s - begin)] = acc[k];
            }
        },
        kHeavyItems);
    parallel_for(0, p.num_rows, [&](std::int64_t row) {
        const Index target = map.num_slots + static_cast<Index>(row);
        T acc[9] = {};
        for (Index e = map.offsets[target]; e < map.offsets[target + 1]; ++e) {
            const T* block = element_blocks + 9 * static_cast<std::int64_t>(map.sources[e]);
            for (int k = 0; k < 9; ++k) acc[k] += block[k];
        }
        for (int k = 0; k < 9; ++k)
            out.diag[k * static_cast<std::int64_t>(p.num_rows) + row] = acc[k];
    });
}

template <class T>
void sum_per_simplex(const NodeCellsView& node_cells, const CellNodesView& cell_nodes,
                     const T* element_blocks, BinBcsrMatrixView<T> out) {
    const int m = cell_nodes.per_cell;
    sum_cell_rows(
        node_cells, cell_nodes,
        [&](Index t, int a, T(*)[9]) {
            return element_blocks + (static_cast<std::int64_t>(t) * m + a) * m * 9;
        },
        out);
}

template <class T>
void sum_inline_linear_p1(const NodeCellsView& node_cells, const Cell* cells, const T* positions,
                          const LameParameters<T>& lame, BinBcsrMatrixView<T> out) {
    EDN_VERIFY(node_cells.layout.order == 1, ErrorCode::Unsupported,
               "inline summation is implemented for p = 1 only");
    zero(out);
    parallel_for(
        0, out.pattern.num_rows,
        [&](std::int64_t row_) {
            const Index row = static_cast<Index>(row_);
            const CsrView& csr = node_cells.vertex_cells;
            for (Index e = csr.offsets[row]; e < csr.offsets[row + 1]; ++e) {
                const Cell& cell = cells[csr.indices[e]];
                T X[4][3];
                for (int v = 0; v < 4; ++v)
                    for (int d = 0; d < 3; ++d) X[v][d] = positions[3 * cell[v] + d];
                int a = 0;
                while (cell[a] != row) ++a;
                T K[4][4][3][3];
                linear_elastic_stiffness_tet4(X, lame, K);
                for (int b = 0; b < 4; ++b) add_block(out, row, cell[b], &K[a][b][0][0]);
            }
        },
        256);
}

#define EDN_INSTANTIATE(T)                                                                         \
    template void linear_elastic_element_blocks(                                                   \
        const std::vector<Vec3>&, const std::vector<Cell>&, int, const LameParameters<T>&, T*);    \
    template void sum_per_entry(const PerEntryMapView&, const T*, BinBcsrMatrixView<T>);           \
    template void sum_per_simplex(const NodeCellsView&, const CellNodesView&, const T*,            \
                                  BinBcsrMatrixView<T>);                                           \
    template void sum_inline_linear_p1(const NodeCellsView&, const Cell*, const T*,                \
                                       const LameParameters<T>&, BinBcsrMatrixView<T>);
EDN_INSTANTIATE(float)
EDN_INSTANTIATE(double)
#undef EDN_INSTANTIATE

} // namespace cpu
} // namespace edn
