#pragma once
/// Inline summation of every material and order on the GPU. No element matrix is stored: the
/// per-entry kernel (per_entry_summation.cuh) computes every block (t, a, b) it sums on the spot,
/// from the tangent frame of each of the cell's quadrature points (TangentFrame: the SVD's U and
/// V, the eigen-data of the tangent, the weight and the rest shape gradients; 44 floats per p = 1
/// tet against the 144 of its blocks). frame_records_kernel writes the frames, one thread per
/// (cell, point); FrameBlocks rebuilds block (a, b) from them with frame_block, plus the Rayleigh
/// stiffness-damping block. The frames are what is nonlinear in the blocks, computed once per
/// point instead of once per (row, cell) as a row walk would (4x the SVDs at p = 1), and the
/// summation keeps per-entry's coalesced writes. Equals element_hessian_row's rows (the CPU's
/// inline) to float rounding.
#include "cuda/per_entry_summation.cuh"
#include "cuda/simulation_kernels.cuh"

namespace edn::cuda_simulation {

/// Floats of one quadrature point's frame record of an element with M nodes, padded to float4:
/// U (9), V (9), H (6: 00 01 02 11 12 22), coupled (3), crossed (3), w (1), g (3 M).
template <int M> constexpr int frame_record_floats() {
    return (31 + 3 * M + 3) / 4 * 4;
}

/// One thread per (cell t, point q): the float tangent frame at the displacement y (double,
/// 3 per node) into records[(t * points + q) * frame_record_floats<m>()].
template <int P, class Material>
__global__ void frame_records_kernel(Material material, const RestElement<double>* rest,
                                     QuadratureTet<float> rule, const Index* cell_nodes,
                                     Index num_cells, const double* y, bool project,
                                     float* records) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= static_cast<std::int64_t>(num_cells) * rule.num_points) return;
    const Index t = static_cast<Index>(i / rule.num_points);
    const int q = static_cast<int>(i - static_cast<std::int64_t>(t) * rule.num_points);
    const Index* nodes = cell_nodes + static_cast<std::int64_t>(t) * m;
    float x[m][3];
    for (int b = 0; b < m; ++b)
        for (int d = 0; d < 3; ++d)
            x[b][d] = static_cast<float>(y[3 * static_cast<std::int64_t>(nodes[b]) + d]);
    const auto [g, F, w] = element_point<P>(float_rest(rest[t]), rule, q, x, true);
    TangentFrame<float> fr;
    material.tangent_frame(F, project, fr);
    float r[frame_record_floats<m>()] = {};
    for (int k = 0; k < 9; ++k) {
        r[k] = fr.svd.U.m[k / 3][k % 3];
        r[9 + k] = fr.svd.V.m[k / 3][k % 3];
    }
    r[18] = fr.H[0][0], r[19] = fr.H[0][1], r[20] = fr.H[0][2];
    r[21] = fr.H[1][1], r[22] = fr.H[1][2], r[23] = fr.H[2][2];
    for (int k = 0; k < 3; ++k) r[24 + k] = fr.coupled[k], r[27 + k] = fr.crossed[k];
    r[30] = w;
    for (int a = 0; a < m; ++a)
        for (int d = 0; d < 3; ++d) r[31 + 3 * a + d] = g[a][d];
    auto* out = reinterpret_cast<float4*>(records + i * frame_record_floats<m>());
    for (int k = 0; k < frame_record_floats<m>() / 4; ++k)
        out[k] = make_float4(r[4 * k], r[4 * k + 1], r[4 * k + 2], r[4 * k + 3]);
}

/// Per-entry block source of inline summation: block (t, a, b) summed over the cell's points from
/// the frame records, plus damping * K0_ab (Rayleigh stiffness damping; none when damping <= 0).
template <int M> struct FrameBlocks {
    const float* __restrict__ records;
    int points = 0;
    LameParameters<float> damping_lame{};
    float damping = 0;

    __device__ void prepare(float*, int) const {}
    __device__ __forceinline__ void add(Index s, float acc[9]) const {
        const Index t = s / (M * M);
        const int ab = static_cast<int>(s - static_cast<std::int64_t>(t) * (M * M));
        const int a = ab / M, b = ab % M;
        for (int q = 0; q < points; ++q) {
            const float* r =
                records + (static_cast<std::int64_t>(t) * points + q) * frame_record_floats<M>();
            TangentFrame<float> fr;
            for (int k = 0; k < 9; ++k) {
                fr.svd.U.m[k / 3][k % 3] = __ldg(r + k);
                fr.svd.V.m[k / 3][k % 3] = __ldg(r + 9 + k);
            }
            fr.H[0][0] = __ldg(r + 18), fr.H[1][1] = __ldg(r + 21), fr.H[2][2] = __ldg(r + 23);
            fr.H[0][1] = fr.H[1][0] = __ldg(r + 19);
            fr.H[0][2] = fr.H[2][0] = __ldg(r + 20);
            fr.H[1][2] = fr.H[2][1] = __ldg(r + 22);
            for (int k = 0; k < 3; ++k) fr.coupled[k] = __ldg(r + 24 + k);
            for (int k = 0; k < 3; ++k) fr.crossed[k] = __ldg(r + 27 + k);
            const float w = __ldg(r + 30);
            float g[2][3];
            for (int d = 0; d < 3; ++d) g[0][d] = __ldg(r + 31 + 3 * a + d);
            for (int d = 0; d < 3; ++d) g[1][d] = __ldg(r + 31 + 3 * b + d);
            float h[2][3];
            frame_gradients<2>(fr, g, h);
            float K[9];
            frame_block(fr, h[0], h[1], w, K);
#pragma unroll
            for (int k = 0; k < 9; ++k) acc[k] += K[k];
            if (damping > 0.f) {
                const float wd = damping * w, mu = damping_lame.mu, lambda = damping_lame.lambda;
                const float mu_dot =
                    mu * (g[0][0] * g[1][0] + g[0][1] * g[1][1] + g[0][2] * g[1][2]);
#pragma unroll
                for (int rr = 0; rr < 3; ++rr)
#pragma unroll
                    for (int c = 0; c < 3; ++c)
                        acc[3 * rr + c] +=
                            wd * (mu * g[0][c] * g[1][rr] + lambda * g[0][rr] * g[1][c] +
                                  (rr == c ? mu_dot : 0.f));
            }
        }
    }
};

/// Device bytes of the frame records of `num_cells` order-P cells on `rule`.
template <int P> std::size_t frame_record_bytes(Index num_cells, const QuadratureTet<float>& rule) {
    return sizeof(float) * frame_record_floats<lagrange_tet_num_nodes(P)>() *
           static_cast<std::size_t>(num_cells) * rule.num_points;
}

/// Inline summation at y into `out`: the frame records (`records`: frame_record_bytes) then the
/// per-entry kernel over `map` with FrameBlocks. Every target is written (no reset needed).
template <int P, class Material>
void launch_inline_summation(const Material& material_f, const RestElement<double>* rest,
                             const QuadratureTet<float>& rule, const Index* cell_nodes,
                             Index num_cells, const double* y, bool project,
                             const LameParameters<float>& damping_lame, float damping,
                             float* records, const PerEntryMapView& map,
                             BinBcsrMatrixView<float> out) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const std::int64_t items = static_cast<std::int64_t>(num_cells) * rule.num_points;
    if (items > 0) {
        constexpr int kThreads = 128;
        frame_records_kernel<P>
            <<<static_cast<unsigned int>((items + kThreads - 1) / kThreads), kThreads>>>(
                material_f, rest, rule, cell_nodes, num_cells, y, project, records);
        EDN_CUDA_CHECK_LAUNCH();
    }
    cuda::detail::launch_sum_per_entry(
        map, FrameBlocks<m>{records, rule.num_points, damping_lame, damping}, 0, out);
    EDN_CUDA_CHECK_LAUNCH();
}

} // namespace edn::cuda_simulation
