#pragma once
/// The element kernels of higher-order (p >= 2) elements with several threads per element: the
/// float Hessian blocks (element_hessian_cooperative_kernel), the double energies and forces
/// (element_values_cooperative_kernel), and both with the matrix-free product's tangent values
/// instead of blocks (element_pass_cooperative_kernel). One thread per element held every node and
/// point of an element in registers (255 registers, spills at p = 3, about 11% occupancy).
#include "cuda/simulation_kernels.cuh"
#include "sim/reference_tangent.hpp"

#include <vector>

namespace edn::cuda_simulation {

/// The element Hessian blocks of higher-order elements (float; no stiffness damping), m threads
/// per element instead of one (blocks of kElements * m <= 128 threads). The element's node
/// positions are gathered once into shared memory; a thread per element and quadrature point
/// evaluates the material's tangent there in its SVD frame (tangent_frame, no 9x9 dP/dF) into
/// shared memory; then thread a of the element sums the blocks K_ab of m/2 (+1) nodes b = a + k
/// (mod m) over the points in registers, through the row operators of node a
/// (frame_row_operator: K_ab = sum_l h_b[l] C_l), so each unordered pair {a, b} is computed
/// once and K_ba = K_ab^T is written from it; the staged blocks go out in row chunks written by
/// the whole thread block (coalesced). The points' shared memory is reused as the stage once the
/// sums are done.
///
/// History (bench/README.md): the one-thread kernel spilled (255 registers) and added each
/// point's 900 floats into global memory (8.7 ms at 127K p = 2 tets, H100); a row per thread with
/// the tangent in shared memory took 2.5 ms at 187K p = 2 (H200); computing every block of the
/// row (both halves), with the stage beside the points, took 5.4 ms at 187K p = 3 (H100). The
/// energy and the forces of the same pass come from element_values_cooperative_kernel.
/// Float4 planes of the matrix-free product's values per point (MatrixFreeOperator::kPlanes).
constexpr int kTangentPlanes = 12;
static_assert(4 * kTangentPlanes >= kReferenceTangentValues);

template <int P, int kMaxQ> struct CooperativeHessian {
    static constexpr int m = lagrange_tet_num_nodes(P);
    static_assert(m % 2 == 0, "the pair schedule needs an even node count (p = 2, 3)");
    /// A point's data (16-byte aligned: h_b is one 128-bit shared load, not three).
    struct alignas(16) Point {
        float4 h[m];               ///< rotated rest shape gradients V^T g_a (w unused)
        TangentFrame<float> frame; ///< the tangent in its SVD frame
        float w;                   ///< quadrature weight times |det J|
    };
    static constexpr int kHalf = m / 2;            ///< pairs per thread: kHalf or kHalf + 1
    static constexpr int kChunk = m < 10 ? m : 10; ///< blocks per staged row chunk
    static_assert(m % kChunk == 0, "row chunks of equal width");
    /// A staged row chunk: kChunk blocks, padded by one float (no bank conflicts).
    static constexpr int kStageRow = kChunk * 9 + 1;
    static constexpr int kPointFloats = kMaxQ * static_cast<int>(sizeof(Point) / 4);
    static constexpr int kStageFloats = m * kStageRow;
    /// Shared floats of one element: its points, later its staged row chunk (same memory); a
    /// multiple of 4 (the points' alignment).
    static constexpr int kElementFloats =
        ((kPointFloats > kStageFloats ? kPointFloats : kStageFloats) + 3) / 4 * 4;
    /// Elements per block: as many as 128 threads hold, within 48 KB of shared memory.
    static constexpr int elements() {
        int e = 128 / m;
        while (e > 1 && std::size_t(e) * (kElementFloats + 3 * m) * 4 > 48 * 1024) --e;
        return e;
    }
    static constexpr int kElements = elements();
    static_assert(kElements * m >= 32, "the copy-out takes whole warps");
};

template <int P, int kMaxQ, class Material>
__global__ void __launch_bounds__(128)
    element_hessian_cooperative_kernel(Material material, const RestElement<double>* rest,
                                       QuadratureTet<float> rule, const Index* cell_nodes,
                                       Index num_cells, const double* y, bool project,
                                       float* blocks, bool upper) {
    using H = CooperativeHessian<P, kMaxQ>;
    constexpr int m = H::m, kHalf = H::kHalf, kChunk = H::kChunk;
    __shared__ float4 pool4[H::kElements * H::kElementFloats / 4];
    float* const pool = reinterpret_cast<float*>(pool4);
    __shared__ float xs[H::kElements][m][3];
    const int local = threadIdx.x / m, a = threadIdx.x % m;
    const Index first = static_cast<Index>(blockIdx.x) * H::kElements;
    const Index t = first + local;
    const bool active = local < H::kElements && t < num_cells;
    const int nq = rule.num_points;
    float* const element_pool = pool + (active ? local : 0) * H::kElementFloats;
    auto* const points = reinterpret_cast<typename H::Point*>(element_pool);
    if (active) {
        const Index node = cell_nodes[static_cast<std::int64_t>(t) * m + a];
        for (int d = 0; d < 3; ++d)
            xs[local][a][d] = static_cast<float>(y[3 * static_cast<std::int64_t>(node) + d]);
    }
    __syncthreads();
    if (active && a < nq) {
        // Point a of element t.
        typename H::Point& pt = points[a];
        const RestElement<float> r = float_rest(rest[t]);
        float g[m][3];
        element_shape_gradients<P>(r, rule.bary[a], g);
        const Mat3<float> F = element_deformation_gradient<m>(xs[local], g,
                                                              /*displacement_form=*/true);
        TangentFrame<float> frame;
        material.tangent_frame(F, project, frame);
        float h[m][3];
        frame_gradients<m>(frame, g, h); // g's registers die here
        for (int k = 0; k < m; ++k) pt.h[k] = make_float4(h[k][0], h[k][1], h[k][2], 0.0f);
        pt.frame = frame;
        pt.w = rule.weight[a] * r.abs_det;
    }
    __syncthreads();
    // Thread a: K_ab for b = a + k (mod m), k < m/2, and k = m/2 when a < m/2 (the pair
    // {a, a + m/2} once): m/2 or m/2 + 1 blocks, balanced, each unordered pair once.
    const int count = a < kHalf ? kHalf + 1 : kHalf;
    float acc[kHalf + 1][9];
    for (int k = 0; k <= kHalf; ++k)
        for (int i = 0; i < 9; ++i) acc[k][i] = 0;
    if (active) {
        for (int q = 0; q < nq; ++q) {
            const typename H::Point& pt = points[q];
            float C[3][9];
            const float4 ha4 = pt.h[a];
            const float ha[3] = {ha4.x, ha4.y, ha4.z};
            frame_row_operators(pt.frame, ha, pt.w, C);
            for (int k = 0; k <= kHalf; ++k) {
                if (k == count) break;
                const int b = a + k < m ? a + k : a + k - m;
                const float4 hb = pt.h[b];
                const float hb0 = hb.x, hb1 = hb.y, hb2 = hb.z;
                // a chain of fused multiply-adds (acc + (x + y + z) took 2 more instructions)
                for (int i = 0; i < 9; ++i)
                    acc[k][i] =
                        fmaf(hb2, C[2][i], fmaf(hb1, C[1][i], fmaf(hb0, C[0][i], acc[k][i])));
            }
        }
    }
    __syncthreads(); // the points are read; their memory becomes the stage
    const Index elements = num_cells - first < H::kElements ? num_cells - first : H::kElements;
    if (upper) {
        // The upper layout: each pair's block once, K_ab at (a, b) when a < b, else K_ab^T at
        // (b, a), staged in equal chunks of whole blocks; an element's chunk is one range of the
        // output (p = 2: one chunk of 55 blocks; p = 3: two of 105).
        constexpr int nu = upper_block_count(m);
        constexpr int kCap = H::kElementFloats / 9, kChunks = (nu + kCap - 1) / kCap;
        constexpr int kUpperChunk = (nu + kChunks - 1) / kChunks;
#pragma unroll 1
        for (int u0 = 0; u0 < nu; u0 += kUpperChunk) {
            const int len = nu - u0 < kUpperChunk ? nu - u0 : kUpperChunk;
            if (active) {
                for (int k = 0; k <= kHalf; ++k) {
                    if (k == count) break;
                    const int b = a + k < m ? a + k : a + k - m;
                    const bool lower = b < a;
                    const int u = lower ? upper_block_index(m, b, a) : upper_block_index(m, a, b);
                    if (u < u0 || u >= u0 + len) continue;
                    float* to = element_pool + 9 * (u - u0);
                    if (lower) {
                        for (int r = 0; r < 3; ++r)
                            for (int c = 0; c < 3; ++c) to[3 * c + r] = acc[k][3 * r + c];
                    } else {
                        for (int i = 0; i < 9; ++i) to[i] = acc[k][i];
                    }
                }
            }
            __syncthreads();
            const int width = len * 9;
            for (int i = threadIdx.x; i < static_cast<int>(elements) * width; i += blockDim.x) {
                const int e = i / width, c = i - e * width;
                blocks[((static_cast<std::int64_t>(first) + e) * nu + u0) * 9 + c] =
                    pool[e * H::kElementFloats + c];
            }
            __syncthreads(); // the next chunk reuses the stage
        }
        return;
    }
    // Row chunks of kChunk blocks: K_ab into row a, K_ab^T into row b, then the whole thread
    // block writes the chunk (at p = 2 the block's rows are one contiguous range). Written
    // straight from each thread, a warp's store touched 32 sectors 360 bytes apart (ncu, 187K
    // p = 2: 1.7e8 sectors for 5.6e6 requests, 87% of the memory pipes busy).
    const int rows = static_cast<int>(elements) * m;
#pragma unroll 1
    for (int b0 = 0; b0 < m; b0 += kChunk) {
        if (active) {
            for (int k = 0; k <= kHalf; ++k) {
                if (k == count) break;
                const int b = a + k < m ? a + k : a + k - m;
                if (b >= b0 && b < b0 + kChunk) {
                    float* row_a = element_pool + a * H::kStageRow + 9 * (b - b0);
                    for (int i = 0; i < 9; ++i) row_a[i] = acc[k][i];
                }
                if (k != 0 && a >= b0 && a < b0 + kChunk) {
                    float* row_b = element_pool + b * H::kStageRow + 9 * (a - b0);
                    for (int r = 0; r < 3; ++r)
                        for (int c = 0; c < 3; ++c) row_b[3 * c + r] = acc[k][3 * r + c];
                }
            }
        }
        __syncthreads();
        // Whole rows (p = 2) are one range of the output; else a warp per staged row chunk
        // (kChunk * 9 contiguous floats of its output row): coalesced stores either way, without
        // a division by a run-time width per float.
        float* out = blocks + static_cast<std::int64_t>(first) * m * m * 9 + b0 * 9;
        if constexpr (kChunk == m) { // whole rows (p = 2): the block's rows are one range
            constexpr int width = m * 9;
            for (int i = threadIdx.x; i < rows * width; i += blockDim.x) {
                const int row = i / width, c = i - row * width, e = row / m;
                out[i] = pool[e * H::kElementFloats + (row - e * m) * H::kStageRow + c];
            }
        } else {
            const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
            const int warps = blockDim.x / 32; // whole warps only (the last may be partial)
            for (int row = warp; row < rows; row += warps) {
                const int e = row / m, rr = row - e * m;
                const float* from = pool + e * H::kElementFloats + rr * H::kStageRow;
                float* to = out + static_cast<std::int64_t>(row) * m * 9;
                for (int c = lane; c < kChunk * 9; c += 32) to[c] = from[c];
            }
        }
        __syncthreads(); // the next chunk reuses the stage
    }
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

/// Elements per thread block of element_pass_cooperative_kernel: a thread per (element, point).
template <int P, int kMaxQ> struct CooperativePass {
    static constexpr int m = lagrange_tet_num_nodes(P);
    static constexpr int kElements = 128 / kMaxQ; ///< p = 2: 32 (128 threads), p = 3: 9 (126)
};

/// One Newton iteration's element pass of p >= 2 elements with the matrix-free products (no
/// stiffness damping): the double energies and forces of element_values_cooperative_kernel and
/// the matrix-free product's tangent values (cuda/matrix_free.cuh) from one deformation gradient
/// per point. A thread per (element, point): it forms F = I + (sum_k x_k dN_k^T) J^-1 in double
/// (the reference gradients dN_k, not the physical ones: 9 multiply-adds per node instead of
/// 18), evaluates the double material (w psi, and S = w P J^-T into shared memory), then the
/// float tangent frame of the same F and its 45 reference values, written as kTangentPlanes
/// float4 planes (consecutive points of consecutive cells: coalesced). Then a thread per
/// (element, node) sums the node's force f_a = sum_q S_q dN_a(q) over the points (= sum_q w P_q
/// g_a(q)) and node 0's thread the energy. The block's node values and the reference gradient
/// table (rows padded: the points' rows fall in distinct banks) are staged in shared memory.
///
/// Before (session 27, H200, 187K p = 3, ncu): the tangent values came from the Hessian kernel
/// (167 registers for its pair sums, 14 of 20 threads busy at the points, a float F from float
/// shape gradients) and the double values from a second kernel with m threads per element (14 of
/// 20 busy at the points, physical gradients formed at every point for F and again for the
/// forces): 431-562 + 394 us; fused with the physical gradients: 450-520 us.
template <int P, int kMaxQ, class Material, class FloatMaterial>
__global__ void __launch_bounds__(128)
    element_pass_cooperative_kernel(Material material, FloatMaterial material_f,
                                    const RestElement<double>* rest, QuadratureTet<double> rule,
                                    const double* dN, const Index* cell_nodes, Index num_cells,
                                    const double* y, bool with_gradient, bool project,
                                    double* energy, double* forces, float4* tangents) {
    using C = CooperativePass<P, kMaxQ>;
    constexpr int m = C::m, kElements = C::kElements;
    constexpr int kRow = 3 * m + 1; // a point's row of the table, padded
    __shared__ double xs[kElements][m][3];
    __shared__ double table[kMaxQ][kRow];          // dN_a,c at each point (reference_gradients)
    __shared__ double stress[kElements][kMaxQ][9]; // S = w P J^-T at each point
    __shared__ double point_energy[kElements][kMaxQ];
    const int nq = rule.num_points;
    const Index first = static_cast<Index>(blockIdx.x) * kElements;
    const int elements =
        static_cast<int>(num_cells - first < kElements ? num_cells - first : kElements);
    for (int i = threadIdx.x; i < elements * m; i += blockDim.x) {
        const Index node = cell_nodes[static_cast<std::int64_t>(first) * m + i];
        const int e = i / m, a = i - e * m;
        for (int d = 0; d < 3; ++d) xs[e][a][d] = y[3 * static_cast<std::int64_t>(node) + d];
    }
    for (int i = threadIdx.x; i < nq * 3 * m; i += blockDim.x) {
        const int q = i / (3 * m);
        table[q][i - q * 3 * m] = dN[i];
    }
    __syncthreads();
    const int local = threadIdx.x / kMaxQ, q = threadIdx.x - local * kMaxQ;
    if (local < elements && q < nq) {
        const Index t = first + local;
        const RestElement<double> r = rest[t];
        double H[3][3] = {}; // sum_k x_k dN_k^T
        for (int k = 0; k < m; ++k) {
            const double* d = table[q] + 3 * k;
            for (int rr = 0; rr < 3; ++rr)
                for (int c = 0; c < 3; ++c) H[rr][c] += xs[local][k][rr] * d[c];
        }
        Mat3<double> F; // I + H J^-1 (displacement form)
        for (int rr = 0; rr < 3; ++rr)
            for (int j = 0; j < 3; ++j)
                F.m[rr][j] = (rr == j ? 1.0 : 0.0) + H[rr][0] * r.inverse_jacobian[0][j] +
                             H[rr][1] * r.inverse_jacobian[1][j] +
                             H[rr][2] * r.inverse_jacobian[2][j];
        const double w = rule.weight[q] * r.abs_det;
        double psi;
        Mat3<double> Pk;
        material.evaluate(F, psi, Pk, nullptr, project);
        point_energy[local][q] = w * psi;
        for (int rr = 0; rr < 3; ++rr) // S = w P J^-T
            for (int c = 0; c < 3; ++c)
                stress[local][q][3 * rr + c] = w * (Pk.m[rr][0] * r.inverse_jacobian[c][0] +
                                                    Pk.m[rr][1] * r.inverse_jacobian[c][1] +
                                                    Pk.m[rr][2] * r.inverse_jacobian[c][2]);
        if (tangents) {
            Mat3<float> Ff;
            float inverse_jacobian[3][3];
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) {
                    Ff.m[i][j] = static_cast<float>(F.m[i][j]);
                    inverse_jacobian[i][j] = static_cast<float>(r.inverse_jacobian[i][j]);
                }
            TangentFrame<float> frame;
            material_f.tangent_frame(Ff, project, frame);
            float v[4 * kTangentPlanes] = {};
            reference_tangent(frame, inverse_jacobian, static_cast<float>(w), v);
            float4* out = tangents + static_cast<std::int64_t>(t) * nq + q;
            const std::int64_t stride = static_cast<std::int64_t>(num_cells) * nq;
            for (int k = 0; k < kTangentPlanes; ++k)
                out[k * stride] = make_float4(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < elements * m; i += blockDim.x) {
        const int e = i / m, a = i - e * m;
        const Index t = first + e;
        if (a == 0) {
            double sum = 0;
            for (int k = 0; k < nq; ++k) sum += point_energy[e][k];
            energy[t] = sum;
        }
        if (!with_gradient) continue;
        double f[3] = {0, 0, 0};
        for (int k = 0; k < nq; ++k) {
            const double* d = table[k] + 3 * a;
            const double* s = stress[e][k];
            for (int rr = 0; rr < 3; ++rr)
                f[rr] += s[3 * rr] * d[0] + s[3 * rr + 1] * d[1] + s[3 * rr + 2] * d[2];
        }
        double* out = forces + (static_cast<std::int64_t>(t) * m + a) * 3;
        for (int rr = 0; rr < 3; ++rr) out[rr] = f[rr];
    }
}

/// Whether launch_cooperative_elements takes order P with `rule` (p >= 2, at most 4 points at
/// p = 2 and 14 at p = 3: the degree-2 rule at p = 2, the positive degree-5 rule at p = 3).
template <int P> constexpr int kCooperativeMaxPoints = P == 2 ? 4 : 14;
template <int P> bool cooperative_elements(const QuadratureTet<double>& rule) {
    return P >= 2 && rule.num_points <= kCooperativeMaxPoints<P>;
}

/// The Hessian kernel alone (the element blocks, float material).
template <int P, class FloatMaterial>
void launch_cooperative_hessian(const FloatMaterial& material, const RestElement<double>* rest,
                                const QuadratureTet<float>& rule_f, const Index* cell_nodes,
                                Index nt, const double* y, bool project, float* blocks,
                                bool upper) {
    constexpr int kMaxQ = kCooperativeMaxPoints<P>;
    using H = CooperativeHessian<P, kMaxQ>;
    element_hessian_cooperative_kernel<P, kMaxQ>
        <<<static_cast<unsigned int>((nt + H::kElements - 1) / H::kElements),
           H::kElements * H::m>>>(material, rest, rule_f, cell_nodes, nt, y, project, blocks,
                                  upper);
    EDN_CUDA_CHECK_LAUNCH();
}

/// Launches the cooperative kernels of order P >= 2 elements (no stiffness damping): the float
/// Hessian blocks into `blocks` when outputs has kHessian (in the upper layout with `upper`), the
/// double energies and (kGradient) forces; with `tangents` (the caller wants the Hessian as the
/// matrix-free product's values) the one-pass kernel that writes them with the energies and
/// forces. False (nothing
/// launched) for p = 1 or a larger rule.
template <int P, class Material>
bool launch_cooperative_elements(const Material& material, const RestElement<double>* rest,
                                 const QuadratureTet<double>& rule,
                                 const QuadratureTet<float>& rule_f, const double* dN,
                                 const Index* cell_nodes, Index nt, const double* y, int outputs,
                                 bool project, float* blocks, double* energy, double* forces,
                                 bool upper = false, float4* tangents = nullptr) {
    if constexpr (P == 1) {
        return false;
    } else {
        constexpr int kMaxQ = kCooperativeMaxPoints<P>;
        if (!cooperative_elements<P>(rule)) return false;
        if (!(outputs & kHessian)) blocks = nullptr;
        if (blocks)
            launch_cooperative_hessian<P>(float_material(material), rest, rule_f, cell_nodes, nt, y,
                                          project, blocks, upper);
        if (tangents) { // (the caller's Hessian: with inline summation outputs lacks it)
            using C = CooperativePass<P, kMaxQ>;
            element_pass_cooperative_kernel<P, kMaxQ>
                <<<static_cast<unsigned int>((nt + C::kElements - 1) / C::kElements),
                   C::kElements * kMaxQ>>>(material, float_material(material), rest, rule, dN,
                                           cell_nodes, nt, y, (outputs & kGradient) != 0, project,
                                           energy, forces, tangents);
        } else {
            using V = CooperativeValues<P, kMaxQ>;
            element_values_cooperative_kernel<P, kMaxQ>
                <<<static_cast<unsigned int>((nt + V::kElements - 1) / V::kElements),
                   V::kElements * V::m>>>(material, rest, rule, dN, cell_nodes, nt, y,
                                          (outputs & kGradient) != 0, project, energy, forces);
        }
        EDN_CUDA_CHECK_LAUNCH();
        return true;
    }
}

} // namespace edn::cuda_simulation
