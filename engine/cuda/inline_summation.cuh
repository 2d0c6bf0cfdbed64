#pragma once
/// Inline summation of every material and order on the GPU: one lane per matrix row walks its
/// node's incident cells and computes row a of each cell's float Hessian on the spot
/// (element_hessian_row: the tangent in its SVD frame, node a's row operators, the stiffness
/// damping row), adding the blocks into the row's slots. No element matrices are stored or read.
/// The linear p = 1 case keeps its reference-integral kernel (Assembly::sum).
#include "cuda/assembly_impl.cuh"
#include "cuda/simulation_kernels.cuh"

namespace edn::cuda_simulation {

template <int P, class Material>
__global__ void sum_inline_kernel(Material material, const RestElement<double>* rest,
                                  QuadratureTet<float> rule, cuda::detail::NodeCellsDevice nc,
                                  const Index* cell_nodes, const double* y, bool project,
                                  LameParameters<float> damping_lame, float damping,
                                  BinBcsrMatrixView<float> out, unsigned int* counter) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const BinBcsrPatternView& p = out.pattern;
    cuda::detail::for_each_row_cell(nc, counter, p.num_bins, p.num_rows, [&](Index row, Index t) {
        const Index* nodes = cell_nodes + static_cast<std::int64_t>(t) * m;
        float x[m][3];
        int a = 0;
        for (int b = 0; b < m; ++b) {
            const Index node = nodes[b];
            if (node == row) a = b;
            for (int d = 0; d < 3; ++d)
                x[b][d] = static_cast<float>(y[3 * static_cast<std::int64_t>(node) + d]);
        }
        float blocks[m][9];
        element_hessian_row<P>(material, float_rest(rest[t]), rule, x, a, project,
                               /*displacement_form=*/true, damping_lame, damping, blocks);
        for (int b = 0; b < m; ++b)
            cuda::detail::add_block(p.bin_offsets, p.columns, p.row_counts, p.num_rows, row,
                                    nodes[b], blocks[b], out.values, out.diag);
    });
}

/// Launches sum_inline_kernel on a matrix zeroed by Assembly::prepare_row_summation (`counter`).
template <int P, class Material>
void launch_inline_summation(const Material& material_f, const RestElement<double>* rest,
                             const QuadratureTet<float>& rule, const NodeCellsView& node_cells,
                             const Index* cell_nodes, const double* y, bool project,
                             const LameParameters<float>& damping_lame, float damping,
                             BinBcsrMatrixView<float> out, unsigned int* counter) {
    if (out.pattern.num_bins == 0) return;
    constexpr int kThreads = 128;
    sum_inline_kernel<P>
        <<<cuda::detail::persistent_grid(out.pattern.num_bins, kThreads), kThreads>>>(
            material_f, rest, rule, cuda::detail::node_cells_device(node_cells), cell_nodes, y,
            project, damping_lame, damping, out, counter);
    EDN_CUDA_CHECK_LAUNCH();
}

} // namespace edn::cuda_simulation
