#include "sim/material_tangent.hpp"

#include "core/dispatch.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "sim/element_kernels.hpp"
#include "sim/material_dispatch.hpp"
#include "sparse/spmv.hpp"
#include "sparse/summation.hpp"

namespace edn {

namespace {

/// Element energies, gradients and exact Hessians at x = rest + u of a nonlinear material;
/// returns the total energy and fills the assembled gradient.
template <int P, class Material>
double nonlinear_elements(const Material& material, const TetMesh& mesh,
                          const std::vector<Index>& cell_nodes, const std::vector<Vec3>& rest,
                          const std::vector<double>& displacement, std::vector<double>& blocks,
                          std::vector<double>& gradient) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const QuadratureTet<double> rule = quadrature_for_degree<double>(element_quadrature_degree(P));
    std::vector<double> energies(mesh.num_cells()),
        forces(static_cast<std::size_t>(mesh.num_cells()) * m * 3);
    parallel_for(0, mesh.num_cells(), [&](std::int64_t t) {
        double X[4][3];
        for (int v = 0; v < 4; ++v)
            for (int d = 0; d < 3; ++d) X[v][d] = mesh.positions[mesh.cells[t][v]][d];
        const TetGeometry<double> g = tet_geometry(X);
        RestElement<double> r{};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) r.inverse_jacobian[i][j] = g.inverse_jacobian.m[i][j];
        r.abs_det = std::abs(g.det_jacobian);
        double x[m][3];
        for (int a = 0; a < m; ++a) {
            const Index node = cell_nodes[t * m + a];
            for (int d = 0; d < 3; ++d) x[a][d] = rest[node][d] + displacement[3 * node + d];
        }
        double e = 0;
        evaluate_element<P>(material, r, rule, x, kEnergy | kGradient | kHessian, /*project=*/false,
                            e, reinterpret_cast<double(*)[3]>(forces.data() + t * m * 3),
                            blocks.data() + t * m * m * 9);
        energies[t] = e;
    });
    gradient.assign(displacement.size(), 0.0);
    double total = 0;
    for (Index t = 0; t < mesh.num_cells(); ++t) {
        total += energies[t];
        for (int a = 0; a < m; ++a)
            for (int d = 0; d < 3; ++d)
                gradient[3 * cell_nodes[t * m + a] + d] += forces[(t * m + a) * 3 + d];
    }
    return total;
}

} // namespace

MaterialTangent material_tangent(Material kind, const LameParameters<double>& lame,
                                 const TetMesh& mesh, const Topology& topology,
                                 const NodeLayout& layout, const BinBcsrPattern& pattern,
                                 const std::vector<Vec3>& rest,
                                 const std::vector<double>& displacement) {
    const int m = nodes_per_cell(layout.order);
    const std::vector<Index> cell_nodes = cell_node_table(topology, mesh.cells, layout);
    const CellNodesView nodes_view{cell_nodes.data(), m, mesh.num_cells()};
    MaterialTangent out{0.0, {}, BinBcsrMatrix<double>(pattern), {}};
    std::vector<double>& blocks = out.element_blocks;
    blocks.resize(static_cast<std::size_t>(mesh.num_cells()) * m * m * 9);
    const PerEntryMap map = cpu::build_per_entry_map(pattern, nodes_view);
    if (kind == Material::Linear) {
        // W = 1/2 u^T K u: the tangent is K at any u, the gradient K u.
        cpu::linear_elastic_element_blocks(mesh.positions, mesh.cells, layout.order, lame,
                                           blocks.data());
        cpu::sum_per_entry(map.view(), blocks.data(), out.stiffness.view());
        out.gradient.resize(displacement.size());
        cpu::spmv(out.stiffness.view(), displacement.data(), out.gradient.data());
        for (std::size_t i = 0; i < displacement.size(); ++i)
            out.energy += 0.5 * displacement[i] * out.gradient[i];
        return out;
    }
    // Co-rotational: the exact tangent, dR/dF included (fem/corotational.hpp), unprojected.
    // Neo-Hookean: W = mu/2 (tr F^T F - 3) - mu ln J + lambda/2 (ln J)^2 wherever J >= J0 = 1e-3
    // (fem/neo_hookean.hpp extends ln J below J0).
    out.energy = with_material(kind, lame, [&](const auto& material) {
        return with_order(layout.order, [&]<int P>() {
            return nonlinear_elements<P>(material, mesh, cell_nodes, rest, displacement, blocks,
                                         out.gradient);
        });
    });
    cpu::sum_per_entry(map.view(), blocks.data(), out.stiffness.view());
    return out;
}

} // namespace edn
