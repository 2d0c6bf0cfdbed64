#pragma once
// Shared set-up for sparse tests: a mesh with its topology, layout, pattern and element blocks,
// and a brute-force COO reference assembly.

#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sparse/bin_bcsr_matrix.hpp"
#include "sparse/summation.hpp"
#include "support/mesh_fixtures.hpp"

#include <map>
#include <utility>
#include <vector>

namespace edn::test {

/// Everything needed to assemble one mesh at one order.
struct AssemblyFixture {
    TetMesh mesh;
    Topology topology;
    NodeLayout layout;
    BinBcsrPattern pattern;
    std::vector<Index> cell_nodes;
    std::vector<double> element_blocks;

    AssemblyFixture(TetMesh m, int order) : mesh(std::move(m)) {
        topology = build_topology(mesh);
        layout = make_node_layout(topology, order);
        pattern = build_bin_bcsr_pattern(topology, mesh.cells, layout);
        cell_nodes = cell_node_table(topology, mesh.cells, layout);
        const int npc = nodes_per_cell(order);
        element_blocks.resize(mesh.cells.size() * npc * npc * 9);
        cpu::linear_elastic_element_blocks(mesh.positions, mesh.cells, order,
                                           lame_from_young_poisson(1000.0, 0.3),
                                           element_blocks.data());
    }
    int per_cell() const { return nodes_per_cell(layout.order); }
    CellNodesView cell_nodes_view() const {
        return {cell_nodes.data(), per_cell(), mesh.num_cells()};
    }
    NodeCellsView node_cells() const { return node_cells_view(topology, layout); }
};

/// Dense-block reference: (row node, col node) -> 3x3 block, summed straight from the element
/// blocks (the COO "sort by key + reduce" assembly).
inline std::map<std::pair<Index, Index>, std::array<double, 9>>
reference_blocks(const AssemblyFixture& f) {
    std::map<std::pair<Index, Index>, std::array<double, 9>> blocks;
    const int m = f.per_cell();
    for (Index t = 0; t < f.mesh.num_cells(); ++t)
        for (int a = 0; a < m; ++a)
            for (int b = 0; b < m; ++b) {
                auto& block = blocks[{f.cell_nodes[t * m + a], f.cell_nodes[t * m + b]}];
                for (int k = 0; k < 9; ++k)
                    block[k] += f.element_blocks[((std::size_t(t) * m + a) * m + b) * 9 + k];
            }
    return blocks;
}

} // namespace edn::test
