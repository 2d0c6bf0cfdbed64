#pragma once
// Brute-force check of the exact Bin-BCSR* pattern of a mesh (shared by the cut and refinement
// tests).

#include "mesh/node_layout.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/topology.hpp"
#include "sparse/bin_bcsr_pattern.hpp"

#include <gtest/gtest.h>
#include <set>
#include <vector>

namespace edn::test {

/// All node pairs sharing a cell (brute force) against the exact Bin-BCSR* pattern of `mesh` at
/// `order`: row counts and sorted columns of every row.
inline void check_pattern(const TetMesh& mesh, int order) {
    const Topology topology = build_topology(mesh);
    const NodeLayout layout = make_node_layout(topology, order);
    const BinBcsrPattern p = build_bin_bcsr_pattern(topology, mesh.cells, layout);
    const std::vector<Index> nodes = cell_node_table(topology, mesh.cells, layout);
    const int m = nodes_per_cell(order);
    std::vector<std::set<Index>> neighbours(layout.num_nodes());
    for (Index t = 0; t < mesh.num_cells(); ++t)
        for (int a = 0; a < m; ++a)
            for (int b = 0; b < m; ++b)
                if (a != b) neighbours[nodes[t * m + a]].insert(nodes[t * m + b]);
    ASSERT_EQ(p.num_rows, layout.num_nodes());
    for (Index row = 0; row < p.num_rows; ++row) {
        ASSERT_EQ(p.row_counts[row], static_cast<Index>(neighbours[row].size())) << "row " << row;
        std::vector<Index> cols;
        for (Index j = 0; j < p.row_counts[row]; ++j)
            cols.push_back(p.columns[p.view().slot(row, j)]);
        ASSERT_EQ(cols, std::vector<Index>(neighbours[row].begin(), neighbours[row].end()));
    }
}

} // namespace edn::test
