#pragma once
/// The element kernels of higher-order (p >= 2) elements with several threads per element: the
/// double energies and forces (element_values_cooperative_kernel), both with the float tangent
/// values of the Hessian (element_pass_cooperative_kernel: the matrix-free products read them),
/// and the Hessian's blocks formed from those values (element_blocks_from_tangents_kernel). One
/// thread per element held every node and point of an element in registers (255 registers,
/// spills at p = 3, about 11% occupancy).
///
/// History of the blocks (bench/README.md): the one-thread kernel spilled and added each point's
/// 900 floats into global memory (8.7 ms at 127K p = 2 tets, H100); m threads per element with
/// the SVD frames in shared memory, a row per thread, 2.5 ms at 187K p = 2 (H200); each pair
/// once through the frames' row operators, 2.7-3.0 ms at 187K p = 3 (H200, session 29); from the
/// pass's tangent values, 2.3 ms (session 30); at p = 3 on the tensor cores, 1.89 ms (session 31);
/// the multiply-adds in a persistent kernel with the values prefetched, 1.90 ms (session 32).
#include "cuda/node_gather.cuh"
#include "cuda/simulation_kernels.cuh"
#include "sim/reference_tangent.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <type_traits>
#include <vector>

namespace edn::cuda_simulation {

/// Float4 planes of the matrix-free product's values per point (MatrixFreeOperator::kPlanes).
constexpr int kTangentPlanes = 12;
static_assert(4 * kTangentPlanes >= kReferenceTangentValues);

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
    // (the rest element loaded beside the node values, before the barrier)
    const RestElement<double> r = active ? rest[t] : RestElement<double>{};
    if (active) {
        const Index node = cell_nodes[static_cast<std::int64_t>(t) * m + a];
        for (int d = 0; d < 3; ++d) xs[local][a][d] = y[3 * static_cast<std::int64_t>(node) + d];
    }
    __syncthreads();
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
    // The block's node values (cuda::NodeGather), the point's rest element on the way.
    constexpr int kThreads = kElements * kMaxQ, kGather = (kElements * m + kThreads - 1) / kThreads;
    cuda::NodeGather<double, kGather> gather;
    gather.load_indices(cell_nodes, static_cast<std::int64_t>(first) * m, elements * m, kThreads);
    const int local = threadIdx.x / kMaxQ, q = threadIdx.x - local * kMaxQ;
    const bool point = local < elements && q < nq;
    RestElement<double> r{};
    if (point) r = rest[first + local];
    gather.load_values(y, elements * m, kThreads);
    for (int i = threadIdx.x; i < nq * 3 * m; i += blockDim.x) {
        const int k = i / (3 * m);
        table[k][i - k * 3 * m] = dN[i];
    }
    gather.store(elements * m, kThreads, [&](int i, Index, const double(&v)[3]) {
        const int e = i / m, a = i - e * m;
        for (int d = 0; d < 3; ++d) xs[e][a][d] = v[d];
    });
    __syncthreads();
    if (point) {
        const Index t = first + local;
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

/// to = *from, 16 bytes from global into shared memory, asynchronously where the device can
/// (cp.async, compute capability 8.0; earlier a plain copy); visible after copy_wait.
__device__ __forceinline__ void copy_async(float4* to, const float4* from) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const auto at = static_cast<unsigned int>(__cvta_generic_to_shared(to));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(at), "l"(from));
#else
    *to = __ldg(from);
#endif
}

/// Ends a group of copy_async copies.
__device__ __forceinline__ void copy_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

/// Waits for this thread's copy_async copies (then a barrier makes all threads' visible).
__device__ __forceinline__ void copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group 0;\n" ::);
#endif
}

/// Starts copying `points` consecutive points' values (kTangentPlanes float4 planes, `stride`
/// float4s apart, from `from`) into shared memory, point j's plane k at to[j (kTangentPlanes + 1)
/// + k] (a float4 a copy, consecutive points of a plane together: coalesced), and ends the group.
/// `points` may be a std::integral_constant (the division by it then a multiplication).
template <class Points>
__device__ __forceinline__ void copy_values_async(const float4* from, std::int64_t stride,
                                                  Points points, float4* to) {
    for (int i = threadIdx.x; i < points * kTangentPlanes; i += blockDim.x) {
        const int k = i / points, j = i - k * points;
        copy_async(to + j * (kTangentPlanes + 1) + k, from + k * stride + j);
    }
    copy_commit();
}

/// A persistent grid for `kernel` with 128 threads a block and `shared` bytes of dynamic shared
/// memory (its limit raised to them): as many thread blocks as fit on the device at once.
template <class Kernel> int persistent_grid(Kernel kernel, std::size_t shared) {
    if (shared > 0)
        EDN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared)));
    int device = 0, sms = 0, per_sm = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&device));
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    EDN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 128, shared));
    return std::max(1, per_sm) * sms;
}

/// Shapes of element_blocks_from_tangents_kernel with S threads per element row and the blocks in
/// the upper (kUpper) or full layout: kElements elements a round of a thread block of 128
/// threads; in dynamic shared memory the reference gradient table, two rounds' values (the one
/// being summed and the next one arriving; kValueStride floats a point: 48 padded to 52, so the
/// float4 copies of one plane at consecutive points fall in distinct banks) and the round's
/// output staged (its elements' blocks one after another, as in the output, 4 floats more for
/// the shift to the output's 16-byte alignment).
template <int P, int kMaxQ, int S, bool kUpper> struct TangentBlocks {
    static constexpr int m = lagrange_tet_num_nodes(P);
    static constexpr int kThreads = m * S;           ///< per element
    static constexpr int kPairs = (m / 2 + S) / S;   ///< pair sums a thread holds
    static constexpr int kElements = 128 / kThreads; ///< per round
    static constexpr int kValueStride = 4 * kTangentPlanes + 4;
    static constexpr int kPerCell = (kUpper ? upper_block_count(m) : m * m) * 9;
    static constexpr int kValues = kElements * kMaxQ * kValueStride; ///< floats of a round's values
    static constexpr int kStage = (kElements * kPerCell + 4 + 3) / 4 * 4;
    static constexpr std::size_t kSharedBytes =
        sizeof(float4) * kMaxQ * m + sizeof(float) * (2 * kValues + kStage);
};

/// The element Hessian blocks of p >= 2 elements from the matrix-free tangent values of the same
/// pass (element_pass_cooperative_kernel's `tangents`, 45 reference values per point), m S
/// threads per element, kElements elements a round: each thread block loops over the rounds
/// (a persistent grid), the next round's values coming into shared memory with cp.async
/// (coalesced: consecutive points of a plane) while it sums the present one. Thread (a, s) forms
/// at each point the columns M_a[c] = sum_e dN_a,e B_ce (81 multiply-adds) and sums
/// K_ab = (sum_c dN_b,c M_a[c])^T (27 a pair) for b = a + k (mod m), k = s, s + S, ... < m/2 (and
/// m/2 when a < m/2: each unordered pair once; every thread sums kPairs pairs, those past its
/// count unused, rather than leave the loop apart from its warp), stages the round's output in
/// shared memory (K_ab at (a, b) when a < b, else K_ab^T at (b, a) in the upper layout; both in
/// the full one) and the block copies it out as one contiguous range, float4 where the output is
/// aligned. Two barriers a round. No SVD and no shape gradients here (the pass formed the tangents
/// once, from the double F rounded to float). CPU reference: reference_tangent_blocks.
template <int P, int kMaxQ, int S, bool kUpper>
__global__ void __launch_bounds__(128, 4)
    element_blocks_from_tangents_kernel(const float4* tangents, const double* dN, int nq,
                                        Index num_cells, float* blocks) {
    using B = TangentBlocks<P, kMaxQ, S, kUpper>;
    constexpr int m = B::m, kHalf = m / 2, kE = B::kElements, kStride = B::kValueStride;
    constexpr int kPerCell = B::kPerCell;
    extern __shared__ float4 shared4[];
    float4* const table = shared4; // [q m + a]: dN_a at point q (w unused)
    float* const values = reinterpret_cast<float*>(shared4 + kMaxQ * m); // two rounds'
    float* const stage = values + 2 * B::kValues;
    const Index rounds = (num_cells + kE - 1) / kE;
    const std::int64_t stride = static_cast<std::int64_t>(num_cells) * nq;
    static_assert(kStride == 4 * (kTangentPlanes + 1), "copy_values_async's layout");
    // The values of `round` into `to`, asynchronously (full rounds: a constant count of points).
    const auto prefetch = [&](Index round, float* to) {
        const Index first = round * kE;
        const int count = static_cast<int>(num_cells - first < kE ? num_cells - first : kE) * nq;
        const float4* from = tangents + static_cast<std::int64_t>(first) * nq;
        float4* const to4 = reinterpret_cast<float4*>(to);
        if (count == kE * kMaxQ)
            copy_values_async(from, stride, std::integral_constant<int, kE * kMaxQ>{}, to4);
        else
            copy_values_async(from, stride, count, to4);
    };
    if (static_cast<Index>(blockIdx.x) < rounds) prefetch(blockIdx.x, values);
    for (int i = threadIdx.x; i < nq * m; i += blockDim.x) {
        const double* d = dN + 3 * i;
        table[i] = make_float4(static_cast<float>(d[0]), static_cast<float>(d[1]),
                               static_cast<float>(d[2]), 0.0f);
    }
    const int local = threadIdx.x / B::kThreads, r = threadIdx.x - local * B::kThreads;
    const int a = r % m, s = r / m;
    const int count = a < kHalf ? kHalf + 1 : kHalf;
    int parity = 0;
    for (Index round = blockIdx.x; round < rounds; round += gridDim.x, parity ^= 1) {
        const Index first = round * kE;
        const int elements = static_cast<int>(num_cells - first < kE ? num_cells - first : kE);
        copy_wait();
        __syncthreads(); // the round's values are in; the last round's stage is written out
        if (round + gridDim.x < rounds)
            prefetch(round + gridDim.x, values + (parity ^ 1) * B::kValues);
        const bool active = local < elements;
        float acc[B::kPairs][9];
        for (int j = 0; j < B::kPairs; ++j)
            for (int i = 0; i < 9; ++i) acc[j][i] = 0;
        if (active) {
            const float* const mine = values + parity * B::kValues + local * nq * kStride;
            for (int q = 0; q < nq; ++q) {
                // the point's 45 values: 11 broadcast 128-bit loads and one 32-bit (a warp's
                // shared-memory wavefronts go by the floats each lane loads)
                const float* const d = mine + q * kStride;
                const float4* v4 = reinterpret_cast<const float4*>(d);
                float v[kReferenceTangentValues];
                for (int k = 0; k < kReferenceTangentValues / 4; ++k) {
                    const float4 t = v4[k];
                    v[4 * k] = t.x, v[4 * k + 1] = t.y, v[4 * k + 2] = t.z, v[4 * k + 3] = t.w;
                }
                for (int k = kReferenceTangentValues / 4 * 4; k < kReferenceTangentValues; ++k)
                    v[k] = d[k];
                const float4 ga4 = table[q * m + a];
                const float ga[3] = {ga4.x, ga4.y, ga4.z};
                float M[3][9]; // M[c] = sum_e dN_a,e B_ce
                reference_tangent_columns(v, ga, M);
                // every thread sums kPairs pairs, those past `count` unused (no divergent exit)
                for (int j = 0; j < B::kPairs; ++j) {
                    const int k = j * S + s; // (< m: kPairs S <= m / 2 + S)
                    const int b = a + k < m ? a + k : a + k - m;
                    const float4 gb = table[q * m + b];
                    // K_ba = sum_c dN_b,c M[c]; K_ab = K_ba^T
                    for (int rr = 0; rr < 3; ++rr)
                        for (int c = 0; c < 3; ++c)
                            acc[j][3 * rr + c] =
                                fmaf(gb.z, M[2][3 * c + rr],
                                     fmaf(gb.y, M[1][3 * c + rr],
                                          fmaf(gb.x, M[0][3 * c + rr], acc[j][3 * rr + c])));
                }
            }
        }
        // The stage starts `shift` floats into a 16-byte line, as the round's output does.
        float* const out = blocks + static_cast<std::int64_t>(first) * kPerCell;
        const int shift = static_cast<int>(reinterpret_cast<std::uintptr_t>(out) / 4 % 4);
        if (active) {
            float* const mine = stage + shift + local * kPerCell;
            for (int j = 0; j < B::kPairs; ++j) {
                const int k = j * S + s;
                if (k >= count) continue;
                const int b = a + k < m ? a + k : a + k - m;
                const bool lower = b < a;
                if constexpr (kUpper) { // K_ab at (a, b), or K_ab^T at (b, a): the same stores
                    float o[9];
                    for (int rr = 0; rr < 3; ++rr)
                        for (int c = 0; c < 3; ++c)
                            o[3 * rr + c] = lower ? acc[j][3 * c + rr] : acc[j][3 * rr + c];
                    float* const to = mine + 9 * (lower ? upper_block_index(m, b, a)
                                                        : upper_block_index(m, a, b));
                    for (int i = 0; i < 9; ++i) to[i] = o[i];
                } else { // K_ab at (a, b) and K_ba = K_ab^T at (b, a)
                    float* const to = mine + 9 * (a * m + b);
                    for (int i = 0; i < 9; ++i) to[i] = acc[j][i];
                    if (k != 0) {
                        float* const mirror = mine + 9 * (b * m + a);
                        for (int rr = 0; rr < 3; ++rr)
                            for (int c = 0; c < 3; ++c) mirror[3 * c + rr] = acc[j][3 * rr + c];
                    }
                }
            }
        }
        __syncthreads();
        const int floats = elements * kPerCell;
        const int head = (4 - shift) % 4 < floats ? (4 - shift) % 4 : floats;
        const int body = (floats - head) / 4, tail = head + 4 * body;
        if (static_cast<int>(threadIdx.x) < head) out[threadIdx.x] = stage[shift + threadIdx.x];
        const float4* const from4 = reinterpret_cast<const float4*>(stage + shift + head);
        float4* const to4 = reinterpret_cast<float4*>(out + head);
        for (int i = threadIdx.x; i < body; i += blockDim.x) to4[i] = from4[i];
        if (tail + static_cast<int>(threadIdx.x) < floats)
            out[tail + threadIdx.x] = stage[shift + tail + threadIdx.x];
    }
}

/// Shapes of element_blocks_mma_kernel at order P: the element's blocks as one matrix product per
/// element, O = X^T D with
///   X[(q, c)][(xy, a)] = M_a(q)[c][x][y] = sum_e dN_a,e(q) B_ce(q)[x][y]   (x <= y: 6 of 9),
///   D[(q, c)][b] = dN_b,c(q)   (the reference gradients: the same for every element),
/// so that O[(xy, a)][b] = sum_q sum_c dN_b,c M_a[c][x][y] = K_ba[x][y] (the entries x > y
/// follow from K_ab = K_ba^T). Rows 6 m padded to 16s, k = 3 nq to 8s, columns m to 8s: p = 3 a
/// 128 x 48 by 48 x 24 product (8 x 3 tiles, 6 steps), p = 2 64 x 16 by 16 x 16. One element a
/// round of a thread block of 4 warps.
template <int P, int kMaxQ> struct MmaBlocks {
    static constexpr int m = lagrange_tet_num_nodes(P);
    static constexpr int kRowTiles = (6 * m + 15) / 16;
    static constexpr int kSteps = (3 * kMaxQ + 7) / 8;
    static constexpr int kColTiles = (m + 7) / 8;
    static constexpr int kWarps = 4;
    static constexpr int kThreads = 32 * kWarps;
    static constexpr int kTiles = kRowTiles / kWarps; ///< row tiles a warp holds
    static_assert(kTiles * kWarps == kRowTiles);
    /// X is stored as the fragments read it: row (x y, a) is row 16 (R / 8) + 8 (pair % 2) + R % 8
    /// of the product, R = (pair / 2) m + a (so that a thread's stores for one node are a
    /// constant apart), and the rows g and g + 8 of a tile, its "row pair" (tile, g), keep
    /// their columns k = 8 s + t and k + 4 as one float4 (a0, a1, a2, a3) at float4 4 s + t of
    /// the pair: one conflict-free float4 load a fragment, already in the order of its four
    /// registers. kXPair float4 a row pair (4 kSteps + 4: a quarter warp's loads in distinct
    /// banks).
    static constexpr int kRowPairs = 8 * kRowTiles;
    static constexpr int kXPair = 4 * kSteps + 4;
    static_assert(kXPair % 8 == 4, "conflict-free float4 fragments");
    static_assert(3 * m <= kRowPairs, "rows R of the three pairs of pairs");
    /// The X phase: a thread per (column k = c nq + q, third of the nodes).
    static constexpr int kNodeGroups = 3;
    static constexpr int kGroupNodes = (m + kNodeGroups - 1) / kNodeGroups;
    static_assert(kNodeGroups * 3 * kMaxQ <= kThreads);
    /// O in shared memory: 6 m rows of kOStride floats (8 kColTiles: a half warp's float2 stores
    /// of an accumulator tile, at 24 g + 2 t modulo 32, fall in distinct banks at p = 3).
    static constexpr int kOStride = 8 * kColTiles;
    /// O's m rows of one pair (x, y) and 4 floats: the 6 pairs of a block, which the gather reads
    /// side by side, 4 banks apart (unpadded, m kOStride = 480 at p = 3 put them in one bank).
    /// (A script counting the bank conflicts of the copy-out's reads and of these stores found
    /// no pair of strides better by more than 2%; 28 and 570 cut the reads' conflicts by a
    /// third but doubled the stores', session 35.)
    static constexpr int kOPair = m * kOStride + 4;
    static constexpr int kRegion = (6 * kOPair + 3) / 4 * 4; ///< floats of an element's O
    /// The upper blocks' floats of an element, written as float2 (their count is even, so every
    /// element's output is 8-byte aligned).
    static constexpr int kPerCell = upper_block_count(m) * 9;
    static_assert(kPerCell % 2 == 0);
    /// Dynamic shared memory (51.5 KB at p = 3, four thread blocks a multiprocessor), in float4:
    /// X, O, the next round's values as loaded, the gradients dN_a(q) as float4, the gather table
    /// (a ushort2 a float2 of the output).
    static constexpr int kX4 = kRowPairs * kXPair, kO4 = kRegion / 4;
    static constexpr int kRaw4 = kTangentPlanes * 16, kDN4 = m * kMaxQ;
    static constexpr int kGather4 = (kPerCell / 2 + 3) / 4;
    static constexpr std::size_t kSharedBytes =
        sizeof(float4) * (kX4 + kO4 + kRaw4 + kDN4 + kGather4);
};

/// Where column k of a row pair's X is stored (MmaBlocks::kXPair): float 4 (4 s + t) + 2 h of
/// the pair for k = 8 s + t + 4 h (and 1 more for the pair's second row).
__host__ __device__ constexpr int x_column(int k) {
    return 4 * (4 * (k >> 3) + (k & 3)) + 2 * ((k >> 2) & 1);
}

/// The tf32 halves of a float for the three-product (3xTF32) sums: x = hi + lo exactly, hi with
/// a tf32 mantissa; the tensor cores read lo's top 10 mantissa bits, so hi b + lo b ~ x b with a
/// relative error near 2^-21 (float's own rounding is 2^-24).
__device__ __forceinline__ void tf32_split(float x, std::uint32_t& hi, std::uint32_t& lo) {
    hi = __float_as_uint(x) & 0xffffe000u;
    lo = __float_as_uint(x - __uint_as_float(hi));
}

/// d += a b on the tensor cores, one 16 x 8 x 8 tf32 product (a row-major, b column-major).
__device__ __forceinline__ void mma_tf32(float (&d)[4], const std::uint32_t (&a)[4],
                                         std::uint32_t b0, std::uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

/// Starts copying `points` <= 16 consecutive points' values (kTangentPlanes float4 planes,
/// `stride` float4s apart, from `from`) into shared memory as they lie, plane k's points at
/// to[16 k ...], with a block of 128 threads: thread i copies point i % 16 of the planes i / 16
/// and i / 16 + 8 (no division by the count: the run-time division's sequences had taken 7% of
/// the tensor-core kernel's stall samples), and ends the group.
__device__ __forceinline__ void copy_points_async(const float4* from, std::int64_t stride,
                                                  int points, float4* to) {
    const int j = static_cast<int>(threadIdx.x) % 16;
    if (j < points)
        for (int k = static_cast<int>(threadIdx.x) / 16; k < kTangentPlanes; k += 8)
            copy_async(to + 16 * k + j, from + k * stride + j);
    copy_commit();
}

/// The element Hessian blocks of p >= 2 elements from the pass's tangent values on the tensor
/// cores (MmaBlocks: O = X^T D per element), three tf32 products a tile (lo hi, hi lo, hi hi:
/// float accuracy). A thread block of 4 warps takes one element a round and loops over the
/// cells: the next element's values come in with cp.async (coalesced) while it works; a thread
/// per (c, point, third of the nodes) reads the planes its 18 values lie in and forms 6 entries
/// of X a node (18 multiply-adds, the node's gradient one float4); each warp multiplies kTiles
/// row tiles by D (whose fragments it holds in registers, split once), each fragment one float4
/// load (X is stored as the fragments read it), and stores its accumulators as O; the block
/// then writes the element's blocks in the upper layout, each float2 gathered from O through a
/// table made once per thread block (K_pq[s][t] = O[(st, q)][p] where s <= t, else
/// O[(ts, p)][q]): consecutive float2, one contiguous range. The padding of X stays zero. CPU
/// reference: reference_tangent_blocks (the same blocks as element_blocks_from_tangents_kernel,
/// to float rounding).
///
/// Session 35 (H200, 187K, own clocks): 1.42 -> 1.27 ms, the same floats bit for bit; warp
/// instructions an element 3,650 -> 2,820 (the X phase's threads all busy and its 18 values
/// from float4 planes; a fragment one float4 instead of four floats and the moves that put them
/// in order; the prefetch without a division; the copy-out in float2).
template <int P, int kMaxQ>
__global__ void __launch_bounds__(128, 4)
    element_blocks_mma_kernel(const float4* tangents, const double* dN, int nq, Index num_cells,
                              float* blocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    using B = MmaBlocks<P, kMaxQ>;
    constexpr int m = B::m, kXPair = B::kXPair, kThreads = B::kThreads;
    constexpr int kO = B::kOStride, kOPair = B::kOPair;
    constexpr int kPairs = B::kPerCell / 2; // float2 of an element's output
    static_assert(kMaxQ <= 16, "copy_points_async");
    extern __shared__ float4 shared4[];
    const float4* const xs = shared4; // X's row pairs (MmaBlocks)
    float* const pool = reinterpret_cast<float*>(shared4 + B::kX4);
    float4* const raw = shared4 + B::kX4 + B::kO4; // the next round's values, plane-major
    float4(*const dN4)[kMaxQ] =                    // (dN_a,0, dN_a,1, dN_a,2, 0)(q)
        reinterpret_cast<float4(*)[kMaxQ]>(raw + B::kRaw4);
    ushort2* const gather = reinterpret_cast<ushort2*>(raw + B::kRaw4 + B::kDN4); // places in O
    const std::int64_t stride = static_cast<std::int64_t>(num_cells) * nq;
    const Index step = static_cast<Index>(gridDim.x);
    // The values of the cell `first` into raw, asynchronously.
    const auto prefetch = [&](Index first) {
        copy_points_async(tangents + static_cast<std::int64_t>(first) * nq, stride, nq, raw);
    };
    if (static_cast<Index>(blockIdx.x) < num_cells) prefetch(static_cast<Index>(blockIdx.x));
    for (int i = threadIdx.x; i < B::kX4; i += kThreads) shared4[i] = make_float4(0, 0, 0, 0);
    for (int i = threadIdx.x; i < nq * m; i += kThreads) {
        const int q = i / m, a = i - m * q;
        const double* g = dN + (q * m + a) * 3;
        dN4[a][q] = make_float4(static_cast<float>(g[0]), static_cast<float>(g[1]),
                                static_cast<float>(g[2]), 0.0f);
    }
    const auto pair_of = [](int x, int y) { return x == 0 ? y : (x == 1 ? 2 + y : 5); };
    // K_pq[s][t] = O[(st, q)][p] (s <= t), else O[(ts, p)][q]; the diagonal entries of K_pq,
    // p != q, from the accumulator below the diagonal (b <= a) as the multiply-add kernel
    const auto place = [&](int f) {
        const int block = f / 9, s = (f - 9 * block) / 3, t = f - 9 * block - 3 * s;
        int p = 0, q = 0;
        upper_block_pair(m, block, p, q);
        const int hi = p > q ? p : q, lo = p > q ? q : p;
        return static_cast<unsigned short>(s == t ? pair_of(s, s) * kOPair + hi * kO + lo
                                                  : (s < t ? pair_of(s, t) * kOPair + q * kO + p
                                                           : pair_of(t, s) * kOPair + p * kO + q));
    };
    for (int j = threadIdx.x; j < kPairs; j += kThreads)
        gather[j] = make_ushort2(place(2 * j), place(2 * j + 1));
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    // D's fragments, split: b0 at (k = 8 s + t, column 8 j + g), b1 at k + 4.
    std::uint32_t dh[B::kSteps][B::kColTiles][2], dl[B::kSteps][B::kColTiles][2];
#pragma unroll
    for (int s = 0; s < B::kSteps; ++s)
#pragma unroll
        for (int j = 0; j < B::kColTiles; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int k = 8 * s + t + 4 * h, b = 8 * j + g;
                const float v = k < 3 * nq && b < m
                                    ? static_cast<float>(dN[(k % nq * m + b) * 3 + k / nq])
                                    : 0.0f;
                tf32_split(v, dh[s][j][h], dl[s][j][h]);
            }
    // The X phase's thread: column k = c nq + q of X (consecutive threads, consecutive k) and
    // the nodes [a0, a0 + kGroupNodes) of its group.
    const int columns = 3 * nq, xk = threadIdx.x % columns, xgroup = threadIdx.x / columns;
    const int xc = xk / nq, xq = xk - xc * nq, a0 = xgroup * B::kGroupNodes;
    const bool x_active = xgroup < B::kNodeGroups;
    // Where the rows g and g + 8 of the warp's tiles go in O (pair (2 (R / m) + h), node R % m,
    // R = 8 tile + g; -1 for the padding)
    int o_row[B::kTiles][2];
#pragma unroll
    for (int j = 0; j < B::kTiles; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int R = 8 * (warp * B::kTiles + j) + g;
            o_row[j][h] = R < 3 * m ? (2 * (R / m) + h) * kOPair + R % m * kO : -1;
        }
    float* const x_out = reinterpret_cast<float*>(shared4) + x_column(xk);
    for (Index first = static_cast<Index>(blockIdx.x); first < num_cells; first += step) {
        copy_wait();
        __syncthreads(); // raw is in; the last round's O is written out
        // X: M_a(q)[c] at the 6 pairs of each node a of the thread's group, from the point's 18
        // values of its c (x <= y of B_c0, B_c1, B_c2) read straight from the loaded planes
        if (x_active) {
            // the 18 values of the point's c from its planes (conflict-free float4 loads of the
            // planes the c needs)
            float v[18];
            const auto row = [&](auto c) {
                float d[4 * kTangentPlanes];
#pragma unroll
                for (int k = 0; k < kTangentPlanes; ++k)
                    reinterpret_cast<float4*>(d)[k] = raw[16 * k + xq];
#pragma unroll
                for (int f = 0; f < 3; ++f) {
                    float Bcf[9];
                    reference_tangent_block(d, decltype(c)::value, f, Bcf);
#pragma unroll
                    for (int x = 0; x < 3; ++x)
#pragma unroll
                        for (int y = x; y < 3; ++y) v[6 * f + pair_of(x, y)] = Bcf[3 * x + y];
                }
            };
            if (xc == 0)
                row(std::integral_constant<int, 0>{});
            else if (xc == 1)
                row(std::integral_constant<int, 1>{});
            else
                row(std::integral_constant<int, 2>{});
            // the group's nodes, the last group's past m clamped to m - 1 (which it then writes
            // twice, the same values), in batches whose gradients are loaded before their stores
            // (which the compiler would not move the loads past)
            constexpr int kBatch = 4;
#pragma unroll
            for (int i0 = 0; i0 < B::kGroupNodes; i0 += kBatch) {
                float4 gr[kBatch];
#pragma unroll
                for (int i = 0; i < kBatch; ++i)
                    if (i0 + i < B::kGroupNodes)
                        gr[i] = dN4[a0 + i0 + i < m ? a0 + i0 + i : m - 1][xq];
#pragma unroll
                for (int i = 0; i < kBatch; ++i)
                    if (i0 + i < B::kGroupNodes) {
                        const int a = a0 + i0 + i < m ? a0 + i0 + i : m - 1;
#pragma unroll
                        for (int p = 0; p < 6; ++p)
                            x_out[(p / 2 * m + a) * 4 * kXPair + p % 2] =
                                fmaf(gr[i].z, v[12 + p], fmaf(gr[i].y, v[6 + p], gr[i].x * v[p]));
                    }
            }
        }
        __syncthreads(); // X is in; raw is free
        if (first + step < num_cells) prefetch(first + step);
        // Each step's products in three sweeps over the warp's kTiles x kColTiles accumulators
        // (lo hi, hi lo, hi hi): consecutive products never wait on each other.
        float acc[B::kTiles][B::kColTiles][4] = {};
#pragma unroll
        for (int s = 0; s < B::kSteps; ++s) {
            std::uint32_t ah[B::kTiles][4], al[B::kTiles][4];
#pragma unroll
            for (int j = 0; j < B::kTiles; ++j) {
                const float4 x = xs[(8 * (warp * B::kTiles + j) + g) * kXPair + 4 * s + t];
                const float av[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
                for (int k = 0; k < 4; ++k) tf32_split(av[k], ah[j][k], al[j][k]);
            }
            const auto sweep = [&](const std::uint32_t(&x)[B::kTiles][4],
                                   const std::uint32_t(&d)[B::kSteps][B::kColTiles][2]) {
#pragma unroll
                for (int j = 0; j < B::kTiles; ++j)
#pragma unroll
                    for (int c = 0; c < B::kColTiles; ++c)
                        mma_tf32(acc[j][c], x[j], d[s][c][0], d[s][c][1]);
            };
            sweep(al, dh);
            sweep(ah, dl);
            sweep(ah, dh);
        }
        // O, a float2 an accumulator row (the last round's gather ended before the round's first
        // barrier)
#pragma unroll
        for (int j = 0; j < B::kTiles; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                if (o_row[j][h] >= 0)
#pragma unroll
                    for (int c = 0; c < B::kColTiles; ++c)
                        *reinterpret_cast<float2*>(pool + o_row[j][h] + 8 * c + 2 * t) =
                            make_float2(acc[j][c][2 * h], acc[j][c][2 * h + 1]);
        __syncthreads();
        {
            float2* const out =
                reinterpret_cast<float2*>(blocks) + static_cast<std::int64_t>(first) * kPairs;
            // 8 float2 a thread at a time: their loads in flight together (out may alias pool
            // for all the compiler knows)
            for (int j0 = threadIdx.x; j0 < kPairs; j0 += 8 * kThreads) {
                float2 v[8];
#pragma unroll
                for (int u = 0; u < 8; ++u)
                    if (j0 + kThreads * u < kPairs) {
                        const ushort2 at = gather[j0 + kThreads * u];
                        v[u] = make_float2(pool[at.x], pool[at.y]);
                    }
#pragma unroll
                for (int u = 0; u < 8; ++u)
                    if (j0 + kThreads * u < kPairs) out[j0 + kThreads * u] = v[u];
            }
        }
    }
#endif
}

/// The blocks kernel over `num_cells` cells whose values lie at `tangents` (stride num_cells *
/// nq, MatrixFreeOperator's layout). ncu at 187K (H200): multiply-adds with threads per element
/// row and a thread block per kElements cells (session 30), p = 3 one thread a row 2.96 ms (168
/// registers, 12.5% occupancy), two 2.30 ms (128 registers, 25%); p = 2 one 300 us (128
/// registers), two 331 us (80 registers, more multiply-adds). Persistent with the values
/// prefetched (session 32): p = 2 230 us, p = 3 1.90 ms (upper) and 2.21 ms (full: 3 thread
/// blocks a multiprocessor for its 65 KB of shared memory). On the tensor cores
/// (element_blocks_mma_kernel) p = 3 1.89 ms, p = 2 430 us (X and O go through shared memory:
/// p = 2 was bound by it, 74% busy), so p = 2 keeps the multiply-adds, and so does the full
/// layout (two-level), whose twice as many floats to gather made its frames' element stage 10.3
/// ms against 8.3.
template <int P>
void launch_blocks_from_tangents(const float4* tangents, const double* dN, int nq, Index num_cells,
                                 float* blocks, bool upper) {
    constexpr int kMaxQ = kCooperativeMaxPoints<P>;
    // p = 3 in the upper layout on the tensor cores where the kernel was built for them (compute
    // capability 8.0 or later: not the portable compute_75 code), unless EDN_ELEMENT_BLOCKS_MMA=0.
    if constexpr (P == 3) {
        static const int mma_grid = [] {
            cudaFuncAttributes attributes{};
            EDN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, element_blocks_mma_kernel<P, kMaxQ>));
            return attributes.ptxVersion < 80 ? 0
                                              : persistent_grid(element_blocks_mma_kernel<P, kMaxQ>,
                                                                MmaBlocks<P, kMaxQ>::kSharedBytes);
        }();
        const char* env = std::getenv("EDN_ELEMENT_BLOCKS_MMA");
        if (upper && mma_grid > 0 && !(env && std::string_view(env) == "0")) {
            element_blocks_mma_kernel<P, kMaxQ>
                <<<static_cast<unsigned int>(
                       std::min<Index>(std::max<Index>(num_cells, 1), mma_grid)),
                   MmaBlocks<P, kMaxQ>::kThreads, MmaBlocks<P, kMaxQ>::kSharedBytes>>>(
                    tangents, dN, nq, num_cells, blocks);
            EDN_CUDA_CHECK_LAUNCH();
            return;
        }
    }
    constexpr int S = P == 2 ? 1 : 2;
    const auto launch = [&](auto kernel, auto shape) {
        using B = decltype(shape);
        static const int grid = persistent_grid(kernel, B::kSharedBytes);
        const Index rounds = (num_cells + B::kElements - 1) / B::kElements;
        kernel<<<static_cast<unsigned int>(std::min<Index>(std::max<Index>(rounds, 1), grid)), 128,
                 B::kSharedBytes>>>(tangents, dN, nq, num_cells, blocks);
        EDN_CUDA_CHECK_LAUNCH();
    };
    if (upper)
        launch(element_blocks_from_tangents_kernel<P, kMaxQ, S, true>,
               TangentBlocks<P, kMaxQ, S, true>{});
    else
        launch(element_blocks_from_tangents_kernel<P, kMaxQ, S, false>,
               TangentBlocks<P, kMaxQ, S, false>{});
}

/// The blocks' tangent scratch of launch_cooperative_elements: where the pass writes the values
/// of `cells` cells at a time before the blocks kernel reads them.
struct TangentScratch {
    float4* values = nullptr;
    Index cells = 0;
};

/// Launches the cooperative kernels of order P >= 2 elements (no stiffness damping): the double
/// energies and (kGradient) forces, and with kHessian in outputs the float Hessian as tangent
/// values: into `tangents` where the caller wants them (the matrix-free products), else into
/// `scratch`, scratch.cells cells at a time, each chunk's blocks then formed from them
/// (element_blocks_from_tangents_kernel) into `blocks` (in the upper layout with `upper`).
/// Without the Hessian, element_values_cooperative_kernel. False (nothing launched) for p = 1 or
/// a larger rule.
///
/// Before (session 29, ncu at 187K p = 3, H200): an SVD-frame Hessian kernel formed the blocks
/// from float shape gradients, a thread per point for the tangent frames (14 of 20 busy), then a
/// thread per row summing its pairs through the frames' row operators (167 registers, 18.75%
/// occupancy): 2.71-2.96 ms + 0.35 ms for the energies and forces; now the pass 0.47-0.56 ms +
/// the blocks 2.30 ms (bench/README.md, session 30).
template <int P, class Material>
bool launch_cooperative_elements(const Material& material, const RestElement<double>* rest,
                                 const QuadratureTet<double>& rule, const double* dN,
                                 const Index* cell_nodes, Index nt, const double* y, int outputs,
                                 bool project, float* blocks, double* energy, double* forces,
                                 bool upper = false, float4* tangents = nullptr,
                                 TangentScratch scratch = {}) {
    if constexpr (P == 1) {
        return false;
    } else {
        constexpr int kMaxQ = kCooperativeMaxPoints<P>;
        constexpr int m = lagrange_tet_num_nodes(P);
        if (!cooperative_elements<P>(rule)) return false;
        if (!(outputs & kHessian)) blocks = nullptr;
        using C = CooperativePass<P, kMaxQ>;
        const bool with_gradient = (outputs & kGradient) != 0;
        const auto pass = [&](Index first, Index count, float4* values) {
            element_pass_cooperative_kernel<P, kMaxQ>
                <<<static_cast<unsigned int>((count + C::kElements - 1) / C::kElements),
                   C::kElements * kMaxQ>>>(material, float_material(material), rest + first, rule,
                                           dN, cell_nodes + std::int64_t{first} * m, count, y,
                                           with_gradient, project, energy + first,
                                           forces + std::int64_t{first} * m * 3, values);
            EDN_CUDA_CHECK_LAUNCH();
        };
        if (blocks && !tangents) {
            const std::int64_t per_cell = (upper ? upper_block_count(m) : m * m) * 9;
            for (Index first = 0; first < nt; first += scratch.cells) {
                const Index count = nt - first < scratch.cells ? nt - first : scratch.cells;
                pass(first, count, scratch.values);
                launch_blocks_from_tangents<P>(scratch.values, dN, rule.num_points, count,
                                               blocks + first * per_cell, upper);
            }
            return true;
        }
        if (tangents) { // (the caller's Hessian: with inline summation outputs lacks it)
            pass(0, nt, tangents);
        } else {
            using V = CooperativeValues<P, kMaxQ>;
            element_values_cooperative_kernel<P, kMaxQ>
                <<<static_cast<unsigned int>((nt + V::kElements - 1) / V::kElements),
                   V::kElements * V::m>>>(material, rest, rule, dN, cell_nodes, nt, y,
                                          with_gradient, project, energy, forces);
            EDN_CUDA_CHECK_LAUNCH();
        }
        return true;
    }
}

} // namespace edn::cuda_simulation
