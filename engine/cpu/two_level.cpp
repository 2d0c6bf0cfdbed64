// Two-level (order p -> P1) preconditioner and flexible PCG on the CPU (solver/two_level.hpp).
#include "solver/two_level.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cpu/pcg_detail.hpp"
#include "sparse/bin_bcsr_pattern.hpp"
#include "sparse/spmv.hpp"

#include <array>
#include <cmath>
#include <utility>
#include <vector>

namespace edn {

CoarseSpace make_coarse_space(const TetMesh& mesh, const Topology& topology,
                              const NodeLayout& layout, bool host_plans) {
    EDN_VERIFY(layout.order >= 2 && layout.order <= kMaxOrder, ErrorCode::Usage,
               "two-level preconditioner: order " << layout.order << " has no coarse space");
    CoarseSpace c;
    c.order = layout.order;
    c.num_nodes = layout.num_nodes();
    c.num_vertices = layout.num_vertices;
    const int m = nodes_per_cell(layout.order);
    c.local.resize(static_cast<std::size_t>(m) * 4);
    for (int a = 0; a < m; ++a) {
        const std::array<double, 4> w = local_node_barycentric(layout.order, a);
        for (int v = 0; v < 4; ++v) c.local[4 * a + v] = w[v];
    }
    // Prolongation from the cells: local node a of cell t interpolates the cell's vertices with
    // local[a] (the same weights from every cell that holds the node).
    c.pro_vertex.assign(3 * static_cast<std::size_t>(c.num_nodes), -1);
    c.pro_weight.assign(3 * static_cast<std::size_t>(c.num_nodes), 0.0);
    std::vector<Index> nodes(static_cast<std::size_t>(m));
    for (Index t = 0; t < mesh.num_cells(); ++t) {
        cell_nodes(topology, mesh.cells, layout, t, nodes.data());
        for (int a = 0; a < m; ++a) {
            const std::size_t at = 3 * static_cast<std::size_t>(nodes[a]);
            if (c.pro_vertex[at] >= 0) continue; // done from another cell
            int k = 0;
            for (int v = 0; v < 4; ++v) {
                const double w = c.local[4 * a + v];
                if (w == 0) continue;
                c.pro_vertex[at + k] = mesh.cells[t][v];
                c.pro_weight[at + k] = w;
                ++k;
            }
        }
    }
    // Restriction: the transpose, by count + scan + fill in fine-node order (ascending rows).
    c.restriction.offsets.assign(static_cast<std::size_t>(c.num_vertices) + 1, 0);
    for (std::size_t k = 0; k < c.pro_vertex.size(); ++k)
        if (c.pro_vertex[k] >= 0) ++c.restriction.offsets[c.pro_vertex[k] + 1];
    for (Index v = 0; v < c.num_vertices; ++v)
        c.restriction.offsets[v + 1] += c.restriction.offsets[v];
    c.restriction.indices.resize(c.restriction.offsets.back());
    c.restriction_weight.resize(c.restriction.offsets.back());
    std::vector<Index> fill(c.restriction.offsets.begin(), c.restriction.offsets.end() - 1);
    for (std::size_t k = 0; k < c.pro_vertex.size(); ++k) {
        const Index v = c.pro_vertex[k];
        if (v < 0) continue;
        const Index at = fill[v]++;
        c.restriction.indices[at] = static_cast<Index>(k / 3);
        c.restriction_weight[at] = c.pro_weight[k];
    }
    if (!host_plans) return c;
    const NodeLayout p1 = make_node_layout(topology, 1);
    c.pattern = build_bin_bcsr_pattern(topology, mesh.cells, p1);
    c.cell_vertices = cell_node_table(topology, mesh.cells, p1);
    c.map = cpu::build_per_entry_map(c.pattern, {c.cell_vertices.data(), 4, mesh.num_cells()});
    return c;
}

namespace cpu {

using detail::apply_block;
using detail::chunked_sums;

void coarse_element_blocks(const CoarseSpace& space, const double* fine, Index cells, double* out) {
    const int m = nodes_per_cell(space.order);
    // Per local vertex A: the local nodes with a nonzero weight on it (p = 2: 4, p = 3: 10 of m).
    std::array<std::vector<std::pair<int, double>>, 4> on;
    for (int A = 0; A < 4; ++A)
        for (int a = 0; a < m; ++a)
            if (const double w = space.local[4 * a + A]; w != 0) on[A].push_back({a, w});
    parallel_for(0, cells, [&](std::int64_t t) {
        const double* h = fine + static_cast<std::size_t>(t) * m * m * 9;
        double* o = out + static_cast<std::size_t>(t) * 16 * 9;
        for (int A = 0; A < 4; ++A)
            for (int B = 0; B < 4; ++B) {
                double acc[9] = {};
                for (const auto& [a, wa] : on[A])
                    for (const auto& [b, wb] : on[B]) {
                        const double* blk = h + (a * m + b) * 9;
                        const double w = wa * wb;
                        for (int k = 0; k < 9; ++k) acc[k] += w * blk[k];
                    }
                for (int k = 0; k < 9; ++k) o[(A * 4 + B) * 9 + k] = acc[k];
            }
    });
}

void assemble_coarse(const CoarseSpace& space, const double* fine_blocks, Index cells,
                     const std::vector<double>& node_diagonal, std::vector<double>& scratch,
                     BinBcsrMatrix<double>& coarse) {
    scratch.resize(static_cast<std::size_t>(cells) * 16 * 9);
    coarse_element_blocks(space, fine_blocks, cells, scratch.data());
    sum_per_entry(space.map.view(), scratch.data(), coarse.view());
    if (node_diagonal.empty()) return;
    const std::int64_t nv = space.num_vertices;
    parallel_for(0, nv, [&](std::int64_t v) {
        double add = 0;
        for (Index k = space.restriction.offsets[v]; k < space.restriction.offsets[v + 1]; ++k)
            add += space.restriction_weight[k] * node_diagonal[space.restriction.indices[k]];
        for (int k : {0, 4, 8}) coarse.diag[k * nv + v] += add;
    });
}

PcgResult pcg_two_level(const BinBcsrMatrixView<double>& a, const CoarseSpace& space,
                        const BinBcsrMatrixView<double>& coarse, const double* b, double* x,
                        const PcgSettings& settings, const PcgSettings& inner,
                        TwoLevelWorkspace& ws, const std::uint8_t* fixed) {
    const Index rows = a.pattern.num_rows;
    const std::int64_t n = rows, nv = space.num_vertices;
    EDN_VERIFY(rows == space.num_nodes && coarse.pattern.num_rows == space.num_vertices,
               ErrorCode::Usage, "pcg_two_level: matrix and coarse space sizes differ");
    ws.inner_iterations = 0;
    PcgWorkspace<double>& f = ws.fine;
    f.resize(rows);
    const double* inv = f.inverse_diag.data();
    invert_diagonal(a, f.inverse_diag.data());
    auto is_free = [fixed](std::int64_t row) { return fixed == nullptr || fixed[row] == 0; };
    ws.coarse_fixed.assign(static_cast<std::size_t>(nv), 0);
    if (fixed)
        for (Index v = 0; v < nv; ++v) ws.coarse_fixed[v] = fixed[v]; // vertex node v is node v
    ws.rc.resize(3 * static_cast<std::size_t>(nv));
    ws.xc.resize(3 * static_cast<std::size_t>(nv));
    PcgSettings cold = inner;
    cold.warm_start = false;

    // z = P (M^-1 r + P_c A_c^-1 P_c^T r).
    auto precondition = [&](const double* r, double* z) {
        parallel_for(0, nv, [&](std::int64_t v) {
            double s[3] = {0, 0, 0};
            for (Index k = space.restriction.offsets[v]; k < space.restriction.offsets[v + 1];
                 ++k) {
                const double w = space.restriction_weight[k];
                const std::int64_t i = space.restriction.indices[k];
                for (int d = 0; d < 3; ++d) s[d] += w * r[3 * i + d];
            }
            for (int d = 0; d < 3; ++d) ws.rc[3 * v + d] = s[d];
        });
        const PcgResult c =
            pcg(coarse, ws.rc.data(), ws.xc.data(), cold, ws.coarse, ws.coarse_fixed.data());
        ws.inner_iterations += c.iterations;
        parallel_for(0, n, [&](std::int64_t i) {
            apply_block(inv, n, i, r, z);
            if (!is_free(i)) {
                z[3 * i] = z[3 * i + 1] = z[3 * i + 2] = 0;
                return;
            }
            for (int k = 0; k < 3; ++k) {
                const Index v = space.pro_vertex[3 * i + k];
                if (v < 0) break;
                const double w = space.pro_weight[3 * i + k];
                for (int d = 0; d < 3; ++d) z[3 * i + d] += w * ws.xc[3 * v + d];
            }
        });
    };
    return detail::flexible_pcg(a, b, x, settings, f, fixed, precondition);
}

} // namespace cpu
} // namespace edn
