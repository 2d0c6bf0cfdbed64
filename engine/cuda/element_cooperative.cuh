#pragma once
/// The element kernels of higher-order (p >= 2) elements with several threads per element: the
/// float Hessian blocks (element_hessian_cooperative_kernel) and the double energies and forces
/// (element_values_cooperative_kernel). One thread per element held every node and point of an
/// element in registers (255 registers, spills at p = 3, about 11% occupancy).
#include "cuda/simulation_kernels.cuh"

#include <vector>

namespace edn::cuda_simulation {

/// The element Hessian blocks of higher-order elements (float; no stiffness damping), m threads
/// per element instead of one (blocks of kElements * m <= 128 threads): a thread per element and
/// quadrature point evaluates the material's tangent there in its SVD frame (tangent_frame, no
/// 9x9 dP/dF) into shared memory, then thread a of the element sums its row of blocks K_ab over
/// the points in registers through the row operators of node a (frame_row_operators: K_ab =
/// sum_l h_b[l] C_l) and writes it once. The one-thread kernel spilled (255 registers) and added
/// each point's 900 floats into global memory: 8.7 ms and 4.4 GB of DRAM traffic per pass at 127K
/// p = 2 tets on the H100; with the 9x9 tangent in shared memory it took 2.5 ms at 187K p = 2
/// (H200), 1.2 GB of local-memory loads. The energy and the forces of the same pass come from
/// element_kernel in double.
template <int P, int kMaxQ> struct CooperativeHessian {
    static constexpr int m = lagrange_tet_num_nodes(P);
    struct Point {
        TangentFrame<float> frame; ///< the tangent in its SVD frame
        float h[m][3];             ///< rotated rest shape gradients V^T g_a
        float w;                   ///< quadrature weight times |det J|
    };
    static constexpr int kChunk = m < 10 ? m : 10; ///< blocks K_ab summed in registers at a time
    /// A staged row chunk: kChunk blocks, padded by one float (no bank conflicts).
    static constexpr int kStageRow = kChunk * 9 + 1;
    /// Shared memory of e elements per thread block: their points and the staged row chunks.
    static constexpr std::size_t bytes(int e) {
        return std::size_t(e) * kMaxQ * sizeof(Point) + std::size_t(e) * m * kStageRow * 4;
    }
    /// Elements per block: as many as 128 threads hold, within 48 KB of shared memory.
    static constexpr int elements() {
        int e = 128 / m;
        while (e > 1 && bytes(e) > 48 * 1024) --e;
        return e;
    }
    static constexpr int kElements = elements();
};

template <int P, int kMaxQ, class Material>
__global__ void __launch_bounds__(128)
    element_hessian_cooperative_kernel(Material material, const RestElement<double>* rest,
                                       QuadratureTet<float> rule, const Index* cell_nodes,
                                       Index num_cells, const double* y, bool project,
                                       float* blocks) {
    using H = CooperativeHessian<P, kMaxQ>;
    constexpr int m = H::m;
    __shared__ typename H::Point points[H::kElements][kMaxQ];
    __shared__ float stage[H::kElements * m * H::kStageRow];
    const int local = threadIdx.x / m, a = threadIdx.x % m;
    const Index first = static_cast<Index>(blockIdx.x) * H::kElements;
    const Index t = first + local;
    const bool active = local < H::kElements && t < num_cells;
    const int nq = rule.num_points;
    if (active && a < nq) {
        // Point a of element t.
        typename H::Point& pt = points[local][a];
        const RestElement<float> r = float_rest(rest[t]);
        float g[m][3];
        element_shape_gradients<P>(r, rule.bary[a], g);
        float x[m][3];
        for (int k = 0; k < m; ++k) {
            const Index node = cell_nodes[static_cast<std::int64_t>(t) * m + k];
            for (int d = 0; d < 3; ++d)
                x[k][d] = static_cast<float>(y[3 * static_cast<std::int64_t>(node) + d]);
        }
        const Mat3<float> F = element_deformation_gradient<m>(x, g, /*displacement_form=*/true);
        TangentFrame<float> frame;
        material.tangent_frame(F, project, frame);
        frame_gradients<m>(frame, g, pt.h);
        pt.frame = frame;
        pt.w = rule.weight[a] * r.abs_det;
    }
    __syncthreads();
    // Row a: the blocks K_ab, b = 0..m-1, kChunk blocks at a time, staged in shared memory and
    // written by the whole thread block: a row chunk is kChunk * 9 contiguous floats, and at
    // p = 2 (one chunk) the block's rows are one contiguous range. Written straight from each
    // thread, a warp's store touched 32 sectors 360 bytes apart (ncu, 187K p = 2: 1.7e8 sectors
    // for 5.6e6 requests, 87% of the memory pipes busy).
    const Index elements = num_cells - first < H::kElements ? num_cells - first : H::kElements;
    const int rows = static_cast<int>(elements) * m;
    constexpr int kChunk = H::kChunk;
    if constexpr (kChunk == m && m % 2 == 0) {
        // Whole rows fit the stage (p = 2): each unordered pair {a, b} once, K_ba = K_ab^T.
        // Thread a takes b = a + k (mod m) for k < m/2, and k = m/2 when a < m/2: 5 or 6 blocks
        // of 10, balanced, instead of all 10.
        constexpr int kHalf = m / 2;
        if (active) {
            const int count = a < kHalf ? kHalf + 1 : kHalf;
            float acc[kHalf + 1][9];
            for (int k = 0; k <= kHalf; ++k)
                for (int i = 0; i < 9; ++i) acc[k][i] = 0;
            for (int q = 0; q < nq; ++q) {
                const typename H::Point& pt = points[local][q];
                float C[3][9];
                frame_row_operators(pt.frame, pt.h[a], pt.w, C);
                for (int k = 0; k <= kHalf; ++k) {
                    if (k == count) break;
                    const int b = a + k < m ? a + k : a + k - m;
                    const float hb0 = pt.h[b][0], hb1 = pt.h[b][1], hb2 = pt.h[b][2];
                    for (int i = 0; i < 9; ++i)
                        acc[k][i] += hb0 * C[0][i] + hb1 * C[1][i] + hb2 * C[2][i];
                }
            }
            float* row_a = stage + threadIdx.x * H::kStageRow;
            for (int k = 0; k <= kHalf; ++k) {
                if (k == count) break;
                const int b = a + k < m ? a + k : a + k - m;
                float* row_b = stage + (local * m + b) * H::kStageRow;
                for (int r = 0; r < 3; ++r)
                    for (int c = 0; c < 3; ++c) {
                        row_a[9 * b + 3 * r + c] = acc[k][3 * r + c];
                        if (k != 0) row_b[9 * a + 3 * c + r] = acc[k][3 * r + c];
                    }
            }
        }
        __syncthreads();
        const int width = m * 9;
        float* out = blocks + static_cast<std::int64_t>(first) * m * m * 9;
        for (int i = threadIdx.x; i < rows * width; i += blockDim.x)
            out[i] = stage[(i / width) * H::kStageRow + i % width];
        return;
    }
    for (int b0 = 0; b0 < m; b0 += kChunk) {
        const int width = (m - b0 < kChunk ? m - b0 : kChunk) * 9; // floats of this row chunk
        if (active) {
            float acc[kChunk][9];
            for (int b = 0; b < kChunk; ++b)
                for (int k = 0; k < 9; ++k) acc[b][k] = 0;
            for (int q = 0; q < nq; ++q) {
                const typename H::Point& pt = points[local][q];
                float C[3][9];
                frame_row_operators(pt.frame, pt.h[a], pt.w, C);
                for (int b = 0; b < kChunk && b0 + b < m; ++b) {
                    const float hb0 = pt.h[b0 + b][0], hb1 = pt.h[b0 + b][1], hb2 = pt.h[b0 + b][2];
                    for (int k = 0; k < 9; ++k)
                        acc[b][k] += hb0 * C[0][k] + hb1 * C[1][k] + hb2 * C[2][k];
                }
            }
            float* mine = stage + threadIdx.x * H::kStageRow;
            for (int b = 0; b < kChunk && b0 + b < m; ++b)
                for (int k = 0; k < 9; ++k) mine[9 * b + k] = acc[b][k];
        }
        __syncthreads();
        float* out = blocks + static_cast<std::int64_t>(first) * m * m * 9 + b0 * 9;
        for (int i = threadIdx.x; i < rows * width; i += blockDim.x) {
            const int row = i / width, c = i - row * width;
            out[static_cast<std::int64_t>(row) * m * 9 + c] = stage[row * H::kStageRow + c];
        }
        __syncthreads(); // the next chunk reuses the stage
    }
}

/// Reference shape gradients dN_a/dxi of order P at every point of `rule`, as
/// table[(q * m + a) * 3 + d]: what the cooperative value kernel maps by each element's inverse
/// Jacobian (host side, uploaded once per order).
template <int P> std::vector<double> reference_gradient_table(const QuadratureTet<double>& rule) {
    constexpr int m = lagrange_tet_num_nodes(P);
    std::vector<double> table(static_cast<std::size_t>(rule.num_points) * m * 3);
    for (int q = 0; q < rule.num_points; ++q) {
        double dN[m][3];
        LagrangeTet<P, double>::grad(rule.bary[q], dN);
        for (int a = 0; a < m; ++a)
            for (int d = 0; d < 3; ++d)
                table[(static_cast<std::size_t>(q) * m + a) * 3 + d] = dN[a][d];
    }
    return table;
}

/// Shared memory layout of element_values_cooperative_kernel.
template <int P, int kMaxQ> struct CooperativeValues {
    static constexpr int m = lagrange_tet_num_nodes(P);
    static constexpr int kElements = 128 / m; ///< elements per thread block
};

/// The double energies (and with `with_gradient` the forces) of p >= 2 elements without stiffness
/// damping, m threads per element: the element's node displacements are gathered once into shared
/// memory, a thread per quadrature point evaluates the material there (w psi and w P), then thread
/// a of the element sums its node's force f_a = sum_q w P_q g_a(q) (g_a(q) = J^-T dN_a(q), from
/// the reference table) and writes it; thread 0 sums the energy. The sums run in the order of
/// evaluate_element_generic, so the values are the one-thread kernel's up to rounding.
template <int P, int kMaxQ, class Material>
__global__ void __launch_bounds__(128)
    element_values_cooperative_kernel(Material material, const RestElement<double>* rest,
                                      QuadratureTet<double> rule, const double* dN,
                                      const Index* cell_nodes, Index num_cells, const double* y,
                                      bool with_gradient, bool project, double* energy,
                                      double* forces) {
    using V = CooperativeValues<P, kMaxQ>;
    constexpr int m = V::m;
    __shared__ double xs[V::kElements][m][3];
    __shared__ double stress[V::kElements][kMaxQ][9]; // w P at each point
    __shared__ double point_energy[V::kElements][kMaxQ];
    const int local = threadIdx.x / m, a = threadIdx.x % m;
    const Index t = static_cast<Index>(blockIdx.x) * V::kElements + local;
    const bool active = local < V::kElements && t < num_cells;
    const int nq = rule.num_points;
    if (active) {
        const Index node = cell_nodes[static_cast<std::int64_t>(t) * m + a];
        for (int d = 0; d < 3; ++d) xs[local][a][d] = y[3 * static_cast<std::int64_t>(node) + d];
    }
    __syncthreads();
    const RestElement<double> r = active ? rest[t] : RestElement<double>{};
    auto gradient_at = [&](int q, int node, double g[3]) {
        const double* d = dN + (static_cast<std::int64_t>(q) * m + node) * 3;
        for (int j = 0; j < 3; ++j)
            g[j] = r.inverse_jacobian[0][j] * d[0] + r.inverse_jacobian[1][j] * d[1] +
                   r.inverse_jacobian[2][j] * d[2];
    };
    for (int q = a; active && q < nq; q += m) {
        // Point q: F = sum_k x_k g_k^T + I (displacement form, as element_deformation_gradient).
        Mat3<double> F = mat3_zero<double>();
        for (int k = 0; k < m; ++k) {
            double g[3];
            gradient_at(q, k, g);
            for (int rr = 0; rr < 3; ++rr)
                for (int j = 0; j < 3; ++j) F.m[rr][j] += xs[local][k][rr] * g[j];
        }
        for (int d = 0; d < 3; ++d) F.m[d][d] += 1.0;
        const double w = rule.weight[q] * r.abs_det;
        double psi;
        Mat3<double> Pk;
        material.evaluate(F, psi, Pk, nullptr, project);
        point_energy[local][q] = w * psi;
        for (int i = 0; i < 9; ++i) stress[local][q][i] = w * Pk.m[i / 3][i % 3];
    }
    __syncthreads();
    if (!active) return;
    if (a == 0) {
        double e = 0;
        for (int q = 0; q < nq; ++q) e += point_energy[local][q];
        energy[t] = e;
    }
    if (!with_gradient) return;
    double f[3] = {0, 0, 0};
    for (int q = 0; q < nq; ++q) {
        double g[3];
        gradient_at(q, a, g);
        const double* s = stress[local][q];
        for (int rr = 0; rr < 3; ++rr)
            f[rr] += s[3 * rr] * g[0] + s[3 * rr + 1] * g[1] + s[3 * rr + 2] * g[2];
    }
    double* out = forces + (static_cast<std::int64_t>(t) * m + a) * 3;
    for (int rr = 0; rr < 3; ++rr) out[rr] = f[rr];
}

/// Launches the cooperative kernels of order P >= 2 elements (no stiffness damping): the float
/// Hessian blocks into `blocks` when outputs has kHessian, the double energies and (kGradient)
/// forces. The rules: 4 points at p = 2 (degree 2), 14 at p = 3 (degree 4: the positive degree-5
/// rule). False (nothing launched) for p = 1 or a larger rule.
template <int P, class Material>
bool launch_cooperative_elements(const Material& material, const RestElement<double>* rest,
                                 const QuadratureTet<double>& rule,
                                 const QuadratureTet<float>& rule_f, const double* dN,
                                 const Index* cell_nodes, Index nt, const double* y, int outputs,
                                 bool project, float* blocks, double* energy, double* forces) {
    if constexpr (P == 1) {
        return false;
    } else {
        constexpr int kMaxQ = P == 2 ? 4 : 14;
        if (rule.num_points > kMaxQ) return false;
        if (outputs & kHessian) {
            using H = CooperativeHessian<P, kMaxQ>;
            element_hessian_cooperative_kernel<P, kMaxQ>
                <<<static_cast<unsigned int>((nt + H::kElements - 1) / H::kElements),
                   H::kElements * H::m>>>(float_material(material), rest, rule_f, cell_nodes, nt, y,
                                          project, blocks);
            EDN_CUDA_CHECK_LAUNCH();
        }
        using V = CooperativeValues<P, kMaxQ>;
        element_values_cooperative_kernel<P, kMaxQ>
            <<<static_cast<unsigned int>((nt + V::kElements - 1) / V::kElements),
               V::kElements * V::m>>>(material, rest, rule, dN, cell_nodes, nt, y,
                                      (outputs & kGradient) != 0, project, energy, forces);
        EDN_CUDA_CHECK_LAUNCH();
        return true;
    }
}

} // namespace edn::cuda_simulation
