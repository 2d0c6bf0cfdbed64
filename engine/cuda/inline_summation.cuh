#pragma once
/// Inline summation of every material and order on the GPU: no element matrix is stored, the
/// summation computes the blocks it adds.
/// - p = 1: frame_records_kernel writes each cell's float tangent frame (TangentFrame: U, the
///   tangent's eigen-data, the rotated gradients h = V^T g, the weight, V; 44 floats against the
///   144 of the cell's blocks), one thread per cell; the per-entry kernel
///   (per_entry_summation.cuh) then sums every target from its sources with FrameBlocks, which
///   rebuilds block (a, b) from the record (frame_block, ~130 flops). The nonlinear part (SVD,
///   tangent) is computed once per cell, not once per (row, cell) as a row walk does, and the
///   summation keeps per-entry's coalesced writes.
/// - p >= 2: a lane per row walks its cells and computes each cell's row (element_hessian_row).
/// Both equal the CPU's inline rows (cpu::sum_cell_rows) to float rounding.
#include "cuda/per_entry_summation.cuh"
#include "cuda/simulation_kernels.cuh"

namespace edn::cuda_simulation {

/// Floats of one p = 1 cell's frame record, 11 float4: U (0-8), H (9-14: 00 01 02 11 12 22),
/// coupled (15-17), crossed (18-20), h = V^T g of the 4 corners (21-32), w (33), V (34-42), one
/// pad. The blocks without damping read the first 9 float4 (0-35); damping also reads V.
constexpr int kFrameRecordFloats = 44;

/// One thread per p = 1 cell t: the float tangent frame at the displacement y (double, 3 per
/// node) into records[t * kFrameRecordFloats].
template <class Material>
__global__ void frame_records_kernel(Material material, const RestElement<double>* rest,
                                     QuadratureTet<float> rule, const Index* cell_nodes,
                                     Index num_cells, const double* y, bool project,
                                     float* records) {
    const Index t = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= num_cells) return;
    const Index* nodes = cell_nodes + static_cast<std::int64_t>(t) * 4;
    float x[4][3];
    for (int b = 0; b < 4; ++b)
        for (int d = 0; d < 3; ++d)
            x[b][d] = static_cast<float>(y[3 * static_cast<std::int64_t>(nodes[b]) + d]);
    const auto [g, F, w] = element_point<1>(float_rest(rest[t]), rule, 0, x, true);
    TangentFrame<float> fr;
    material.tangent_frame(F, project, fr);
    float h[4][3];
    frame_gradients<4>(fr, g, h);
    float r[kFrameRecordFloats] = {};
    for (int k = 0; k < 9; ++k) {
        r[k] = fr.svd.U.m[k / 3][k % 3];
        r[34 + k] = fr.svd.V.m[k / 3][k % 3];
    }
    r[9] = fr.H[0][0], r[10] = fr.H[0][1], r[11] = fr.H[0][2];
    r[12] = fr.H[1][1], r[13] = fr.H[1][2], r[14] = fr.H[2][2];
    for (int k = 0; k < 3; ++k) r[15 + k] = fr.coupled[k], r[18 + k] = fr.crossed[k];
    for (int a = 0; a < 4; ++a)
        for (int d = 0; d < 3; ++d) r[21 + 3 * a + d] = h[a][d];
    r[33] = w;
    auto* out =
        reinterpret_cast<float4*>(records + static_cast<std::int64_t>(t) * kFrameRecordFloats);
    for (int k = 0; k < kFrameRecordFloats / 4; ++k)
        out[k] = make_float4(r[4 * k], r[4 * k + 1], r[4 * k + 2], r[4 * k + 3]);
}

/// Per-entry block source of p = 1 inline summation: block (t, a, b) from the cell's frame record
/// (frame_block), plus damping * K0_ab (Rayleigh stiffness damping, from g = V h; none when
/// damping <= 0).
struct FrameBlocks {
    const float4* __restrict__ records;
    LameParameters<float> damping_lame{};
    float damping = 0;

    __device__ void prepare(float*, int) const {}
    __device__ __forceinline__ void add(Index s, float acc[9]) const {
        const Index t = s / 16;
        const int a = (s / 4) % 4, b = s % 4;
        const float4* r4 = records + static_cast<std::int64_t>(t) * (kFrameRecordFloats / 4);
        float r[36];
#pragma unroll
        for (int k = 0; k < 9; ++k) {
            const float4 v = __ldg(r4 + k);
            r[4 * k] = v.x, r[4 * k + 1] = v.y, r[4 * k + 2] = v.z, r[4 * k + 3] = v.w;
        }
        TangentFrame<float> fr;
#pragma unroll
        for (int k = 0; k < 9; ++k) fr.svd.U.m[k / 3][k % 3] = r[k];
        fr.H[0][0] = r[9], fr.H[1][1] = r[12], fr.H[2][2] = r[14];
        fr.H[0][1] = fr.H[1][0] = r[10];
        fr.H[0][2] = fr.H[2][0] = r[11];
        fr.H[1][2] = fr.H[2][1] = r[13];
#pragma unroll
        for (int k = 0; k < 3; ++k) fr.coupled[k] = r[15 + k], fr.crossed[k] = r[18 + k];
        float ha[3], hb[3];
#pragma unroll
        for (int d = 0; d < 3; ++d) {
            // a and b index registers: select without local memory
            ha[d] = a == 0 ? r[21 + d] : a == 1 ? r[24 + d] : a == 2 ? r[27 + d] : r[30 + d];
            hb[d] = b == 0 ? r[21 + d] : b == 1 ? r[24 + d] : b == 2 ? r[27 + d] : r[30 + d];
        }
        const float w = r[33];
        float K[9];
        frame_block(fr, ha, hb, w, K);
#pragma unroll
        for (int k = 0; k < 9; ++k) acc[k] += K[k];
        if (damping > 0.f) {
            // K0_ab = w (mu (g_a . g_b) I + mu g_b g_a^T + lambda g_a g_b^T), g = V h
            const float4 v9 = __ldg(r4 + 9), v10 = __ldg(r4 + 10);
            const float V[9] = {r[34], r[35], v9.x, v9.y, v9.z, v9.w, v10.x, v10.y, v10.z};
            float ga[3], gb[3];
#pragma unroll
            for (int i = 0; i < 3; ++i) {
                ga[i] = V[3 * i] * ha[0] + V[3 * i + 1] * ha[1] + V[3 * i + 2] * ha[2];
                gb[i] = V[3 * i] * hb[0] + V[3 * i + 1] * hb[1] + V[3 * i + 2] * hb[2];
            }
            const float wd = damping * w, mu = damping_lame.mu, lambda = damping_lame.lambda;
            const float mu_dot = mu * (ga[0] * gb[0] + ga[1] * gb[1] + ga[2] * gb[2]);
#pragma unroll
            for (int i = 0; i < 3; ++i)
#pragma unroll
                for (int c = 0; c < 3; ++c)
                    acc[3 * i + c] += wd * (mu * ga[c] * gb[i] + lambda * ga[i] * gb[c] +
                                            (i == c ? mu_dot : 0.f));
        }
    }
};

/// p >= 2: one lane per matrix row walks its node's incident cells and computes row a of each
/// cell's float Hessian on the spot (element_hessian_row), adding the blocks into the row's slots
/// (measured faster there than frame records, whose m^2 blocks each read every point's frame).
template <int P, class Material>
__global__ void sum_inline_rows_kernel(Material material, const RestElement<double>* rest,
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

/// What inline summation needs of the assembly and the backend.
struct InlineTargets {
    const Index* cell_nodes = nullptr;
    Index num_cells = 0;
    NodeCellsView node_cells{};      ///< p >= 2
    PerEntryMapView map{};           ///< p = 1
    float* records = nullptr;        ///< p = 1: num_cells * kFrameRecordFloats
    unsigned int* counter = nullptr; ///< p >= 2: from Assembly::prepare_row_summation
    BinBcsrMatrixView<float> out{};
};

/// The targets of inline summation on `assembly` (order from its layout); p = 1 sizes `records`
/// (kept between calls), p >= 2 zeroes the matrix for the row walk.
inline InlineTargets inline_targets(cuda::Assembly& assembly, Index num_cells,
                                    cuda::DeviceBuffer<float>& records) {
    InlineTargets in;
    in.cell_nodes = assembly.device_cell_nodes().nodes;
    in.num_cells = num_cells;
    in.out = assembly.device_matrix();
    if (assembly.layout().order == 1) {
        const std::size_t floats = kFrameRecordFloats * static_cast<std::size_t>(num_cells);
        if (records.size() != floats) records.resize(floats);
        in.records = records.data();
        in.map = assembly.device_per_entry_map();
    } else {
        in.node_cells = assembly.device_node_cells();
        in.counter = assembly.prepare_row_summation();
    }
    return in;
}

/// Inline summation at y into `out`: p = 1 writes the frame records, then sums with the
/// per-entry kernel and FrameBlocks (every target written, no reset); p >= 2 walks the rows.
template <int P, class Material>
void launch_inline_summation(const Material& material_f, const RestElement<double>* rest,
                             const QuadratureTet<float>& rule, const double* y, bool project,
                             const LameParameters<float>& damping_lame, float damping,
                             const InlineTargets& in) {
    constexpr int kThreads = 128;
    if constexpr (P == 1) {
        if (in.num_cells > 0) {
            frame_records_kernel<<<
                static_cast<unsigned int>((in.num_cells + kThreads - 1) / kThreads), kThreads>>>(
                material_f, rest, rule, in.cell_nodes, in.num_cells, y, project, in.records);
            EDN_CUDA_CHECK_LAUNCH();
        }
        cuda::detail::launch_sum_per_entry(
            in.map, FrameBlocks{reinterpret_cast<const float4*>(in.records), damping_lame, damping},
            0, in.out);
    } else if (in.out.pattern.num_bins > 0) {
        sum_inline_rows_kernel<P>
            <<<cuda::detail::persistent_grid(in.out.pattern.num_bins, kThreads), kThreads>>>(
                material_f, rest, rule, cuda::detail::node_cells_device(in.node_cells),
                in.cell_nodes, y, project, damping_lame, damping, in.out, in.counter);
    }
    EDN_CUDA_CHECK_LAUNCH();
}

} // namespace edn::cuda_simulation
