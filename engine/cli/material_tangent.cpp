#include "cli/material_tangent.hpp"

#include "core/error.hpp"
#include "sparse/spmv.hpp"
#include "sparse/summation.hpp"

namespace edn::cli {

std::optional<MaterialKind> parse_material(std::string_view name) {
    if (name == "linear") return MaterialKind::Linear;
    if (name == "corotational") return MaterialKind::Corotational;
    if (name == "neohookean") return MaterialKind::NeoHookean;
    return std::nullopt;
}

MaterialTangent material_tangent(MaterialKind kind, const LameParameters<double>& lame,
                                 const TetMesh& mesh, const Topology& topology,
                                 const NodeLayout& layout, const BinBcsrPattern& pattern,
                                 const std::vector<Vec3>& rest,
                                 const std::vector<double>& displacement) {
    const int m = nodes_per_cell(layout.order);
    const std::vector<Index> cell_nodes = cell_node_table(topology, mesh.cells, layout);
    const CellNodesView nodes_view{cell_nodes.data(), m, mesh.num_cells()};
    std::vector<double> blocks(static_cast<std::size_t>(mesh.num_cells()) * m * m * 9);
    MaterialTangent out{0.0, {}, BinBcsrMatrix<double>(pattern)};
    switch (kind) {
    case MaterialKind::Linear: {
        // W = 1/2 u^T K u: the tangent is K at any u, the gradient K u.
        cpu::linear_elastic_element_blocks(mesh.positions, mesh.cells, layout.order, lame,
                                           blocks.data());
        const PerEntryMap map = cpu::build_per_entry_map(pattern, nodes_view);
        cpu::sum_per_entry(map.view(), blocks.data(), out.stiffness.view());
        out.gradient.resize(displacement.size());
        cpu::spmv(out.stiffness.view(), displacement.data(), out.gradient.data());
        for (std::size_t i = 0; i < displacement.size(); ++i)
            out.energy += 0.5 * displacement[i] * out.gradient[i];
        break;
    }
    case MaterialKind::Corotational:
    case MaterialKind::NeoHookean:
        EDN_THROW(ErrorCode::Unsupported,
                  "export: nonlinear materials are not available in this build yet");
    }
    (void)rest;
    return out;
}

} // namespace edn::cli
