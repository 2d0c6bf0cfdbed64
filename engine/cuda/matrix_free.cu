// The matrix-free product of p >= 2 simulations (cuda/matrix_free.cuh; CPU reference
// reference_tangent_product in sim/reference_tangent.hpp).
#include "cuda/matrix_free.cuh"
#include "cuda/node_gather.cuh"
#include "sim/reference_tangent.hpp"

#include <algorithm>
#include <cstring>
#include <cuda_fp16.h>

namespace edn::cuda {
namespace {

constexpr int kThreads = 128;

/// Most points per element the kernel holds (the cooperative element kernels' rules: 4 points at
/// p = 2, 14 at p = 3).
template <int P> constexpr int kMaxPoints = P == 2 ? 4 : 14;

/// kPer elements per thread in the point phase: 2 where it measured faster (H200, 187K, per
/// product: p = 3 half values 177 -> 154 us, float 186 -> 184; p = 2 half 49.6 -> 42.3, but
/// float 52.9 -> 62.6, so 1 there).
template <int P, int kPer> struct ProductShape {
    static constexpr int m = lagrange_tet_num_nodes(P);
    static_assert(m % 2 == 0, "node pairs");
    static constexpr int kQ = kMaxPoints<P>;                 ///< threads per element group
    static constexpr int kElements = kPer * (kThreads / kQ); ///< per block
    static constexpr int kBlock = kThreads / kQ * kQ;        ///< threads per block
};

/// The point drag's blocks of row i times x, added to out.
template <class T>
__device__ inline void add_drag(const MatrixFreeDrag& drag, const T* __restrict__ x, Index i,
                                T out[3]) {
    for (int a = 0; a < 3; ++a) {
        if (drag.vertices[a] != i) continue;
        for (int b = 0; b < 3; ++b) {
            const std::int64_t j = 3 * static_cast<std::int64_t>(drag.vertices[b]);
            const T w = drag.weights[a][b];
            out[0] += w * x[j], out[1] += w * x[j + 1], out[2] += w * x[j + 2];
        }
    }
}

/// Scatter::Atomic's start: y = t .* x + the point drag's blocks times x (every row written: the
/// element kernel adds into it).
template <class T>
__global__ void node_terms_kernel(const float* __restrict__ t, const MatrixFreeDrag* drag,
                                  const T* __restrict__ x, Index n, T* __restrict__ y) {
    const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const std::int64_t k = 3 * static_cast<std::int64_t>(i);
    T out[3] = {t[k] * x[k], t[k + 1] * x[k + 1], t[k + 2] * x[k + 2]};
    if (drag->active) add_drag(*drag, x, i, out);
    y[k] = out[0], y[k + 1] = out[1], y[k + 2] = out[2];
}

/// Scatter::Gather's end: y = t .* x + the drag's blocks times x + the node's element parts in
/// node->cells order (as node_kernel gathers the element forces: reproducible). With a gradient
/// g (residual()): y = -g - A x on free rows, 0 on pinned ones.
template <class T>
__global__ void gather_kernel(const float* __restrict__ t, const MatrixFreeDrag* drag,
                              NodeCellsView slots, const T* __restrict__ parts,
                              const T* __restrict__ x, Index n, const double* __restrict__ g,
                              const std::uint8_t* __restrict__ fixed, T* __restrict__ y) {
    const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const std::int64_t k = 3 * static_cast<std::int64_t>(i);
    if (g && fixed[i]) {
        y[k] = y[k + 1] = y[k + 2] = T(0);
        return;
    }
    T out[3] = {t[k] * x[k], t[k + 1] * x[k + 1], t[k + 2] * x[k + 2]};
    if (drag->active) add_drag(*drag, x, i, out);
    slots.for_each_incidence(i, [&](Index slot) {
        const T* f = parts + 3 * static_cast<std::int64_t>(slot);
        out[0] += f[0], out[1] += f[1], out[2] += f[2];
    });
    if (g)
        for (int d = 0; d < 3; ++d) out[d] = -g[k + d] - out[d];
    y[k] = out[0], y[k + 1] = out[1], y[k + 2] = out[2];
}

/// The element products (K_e x_e): kElements elements per block (grid-stride over groups, the
/// reference gradients loaded once per block), a thread per pair of elements and point. The
/// block gathers its elements' node values into shared memory (consecutive cells: coalesced),
/// thread (pair, q) forms both elements' gh_e = sum_b dN_b,e(q) x_b (each gradient read once for
/// the two), reads each point's twelve float4 planes (consecutive points of consecutive cells:
/// coalesced) and puts s_c = sum_e B_ce gh_e into shared memory; then a thread per (element,
/// pair of nodes) sums (K_e x_e)_a = sum_q sum_c dN_a,c(q) s_c(q) for both nodes (each s read
/// once for the two) and adds it into y (Atomic) or writes it to parts (Gather, coalesced). The
/// kernel is bound by the L1/shared pipe (ncu, 187K p = 3 half values: 85% busy at 32
/// registers, full occupancy), so the pairs cut its shared reads by about a third.
/// One float4 plane of a point's values: float, or half (HalfPlane, scaled by take_snapshot).
struct HalfPlane {
    __half2 a, b;
};
__device__ __forceinline__ float4 load_plane(const float4* p) {
    return *p;
}
__device__ __forceinline__ float4 load_plane(const HalfPlane* p) {
    const HalfPlane h = *p;
    const float2 a = __half22float2(h.a), b = __half22float2(h.b);
    return make_float4(a.x, a.y, b.x, b.y);
}

template <int P, bool kAtomic, class T, class Plane, int kPer>
__global__ void __launch_bounds__(kThreads)
    element_product_kernel(const Plane* __restrict__ d, const float* __restrict__ unscale,
                           std::int64_t stride, const float* __restrict__ dN_table,
                           const Index* __restrict__ cell_nodes, Index num_cells, int nq,
                           const T* __restrict__ x, T* y) {
    using S = ProductShape<P, kPer>;
    constexpr int m = S::m, E = S::kElements, kQ = S::kQ;
    __shared__ float dn[kQ * m * 3];
    __shared__ Index nodes[E * m];
    __shared__ T xs[E * m][3];
    __shared__ T ss[E][kQ][9];
    for (int i = threadIdx.x; i < nq * m * 3; i += blockDim.x) dn[i] = dN_table[i];
    const int pair = threadIdx.x / kQ, q = threadIdx.x % kQ;
    const Index groups = (num_cells + E - 1) / E;
    for (Index group = blockIdx.x; group < groups; group += gridDim.x) {
        const Index t0 = group * E;
        const int count = num_cells - t0 < E ? static_cast<int>(num_cells - t0) : E;
        // the group's node values (NodeGather), stored after the barrier
        constexpr int kGather = (E * m + S::kBlock - 1) / S::kBlock;
        NodeGather<T, kGather> gather;
        gather.load_indices(cell_nodes, static_cast<std::int64_t>(t0) * m, count * m, S::kBlock);
        gather.load_values(x, count * m, S::kBlock);
        __syncthreads(); // the table is loaded; the last group's shared values are read
        gather.store(count * m, S::kBlock, [&](int i, Index node, const T(&v)[3]) {
            nodes[i] = node;
            xs[i][0] = v[0], xs[i][1] = v[1], xs[i][2] = v[2];
        });
        __syncthreads();
        const int e0 = kPer * pair;
        if (e0 < count && q < nq) {
            // the group's gh from one read of each gradient
            const int n = count - e0 < kPer ? count - e0 : kPer;
            const float* dq = dn + q * m * 3;
            T gh[kPer][3][3] = {};
            for (int b = 0; b < m; ++b) {
                T xb[kPer][3];
                for (int k = 0; k < kPer; ++k) {
                    const T* xk = xs[(e0 + (k < n ? k : 0)) * m + b];
                    xb[k][0] = xk[0], xb[k][1] = xk[1], xb[k][2] = xk[2];
                }
                for (int e = 0; e < 3; ++e) {
                    const T g = dq[3 * b + e];
                    for (int k = 0; k < kPer; ++k)
                        for (int i = 0; i < 3; ++i) gh[k][e][i] += g * xb[k][i];
                }
            }
            const T u = unscale ? T(*unscale) : T(1); // (the half values' scale)
#pragma unroll
            for (int k = 0; k < kPer; ++k) {
                if (k == n) break;
                const int local = e0 + k;
                T gk[3][3];
                for (int e = 0; e < 3; ++e)
                    for (int i = 0; i < 3; ++i) gk[e][i] = gh[k][e][i] * u;
                T v[4 * MatrixFreeOperator::kPlanes];
                const Plane* src = d + (static_cast<std::int64_t>(t0) + local) * nq + q;
#pragma unroll
                for (int j = 0; j < MatrixFreeOperator::kPlanes; ++j) {
                    const float4 w = load_plane(src + j * stride);
                    v[4 * j] = w.x, v[4 * j + 1] = w.y, v[4 * j + 2] = w.z, v[4 * j + 3] = w.w;
                }
                T s[3][3];
                apply_reference_tangent(v, gk, s);
                for (int c = 0; c < 3; ++c)
                    for (int i = 0; i < 3; ++i) ss[local][q][3 * c + i] = s[c][i];
            }
        }
        __syncthreads();
        // a thread per (element, node pair): each point's s read once for both nodes
        for (int i = threadIdx.x; i < count * (m / 2); i += blockDim.x) {
            const int e = i / (m / 2), a = 2 * (i - e * (m / 2));
            T f[2][3] = {};
            for (int p = 0; p < nq; ++p) {
                const float* dq = dn + (p * m + a) * 3; // nodes a and a + 1
                const T* sp = ss[e][p];
                for (int c = 0; c < 3; ++c)
                    for (int r = 0; r < 3; ++r) {
                        const T sv = sp[3 * c + r];
                        f[0][r] += dq[c] * sv, f[1][r] += dq[3 + c] * sv;
                    }
            }
            const int at = e * m + a;
            for (int k = 0; k < 2; ++k) {
                if constexpr (kAtomic) {
                    T* yn = y + 3 * static_cast<std::int64_t>(nodes[at + k]);
                    atomicAdd(yn, f[k][0]);
                    atomicAdd(yn + 1, f[k][1]);
                    atomicAdd(yn + 2, f[k][2]);
                } else {
                    T* out = y + 3 * (static_cast<std::int64_t>(t0) * m + at + k);
                    out[0] = f[k][0], out[1] = f[k][1], out[2] = f[k][2];
                }
            }
        }
    }
}

/// MatrixFreeOperator::galerkin's parts: per cell, five runs of m blocks (row-major 3 x 3):
/// (K_e P_e)_ac of every node a for the vertices c = 0..3, then K_aa; block (t, c, a) at
/// ((5 t + c) m + a) 9 (a run is one coalesced write of the element kernel).
constexpr int kGalerkinRuns = 5;
__device__ inline std::int64_t part_at(std::int64_t cell, int run, int node, int m) {
    return ((kGalerkinRuns * cell + run) * m + node) * 9;
}

/// The coarse column of a vertex node: its P row's one entry, or -1 (pinned).
__device__ inline Index vertex_column(const GalerkinTargets& g, Index node) {
    const Index k = g.p_offsets[node];
    return k < g.p_offsets[node + 1] ? g.p_columns[k] : Index(-1);
}

/// galerkin_transfer(): a thread per (cell, node b): w_bc, the P weight of node b on the cell's
/// vertex c's column (0 where none: pinned), and for b < 4 the vertex's column; a thread per A P
/// entry: its row.
__global__ void galerkin_transfer_kernel(GalerkinTargets g, const Index* __restrict__ cell_nodes,
                                         Index num_cells, int m, Index num_nodes) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < num_nodes)
        for (Index at = g.ap_offsets[i]; at < g.ap_offsets[i + 1]; ++at)
            g.ap_rows[at] = static_cast<Index>(i);
    if (i >= std::int64_t(num_cells) * m) return;
    const std::int64_t cell = i / m;
    const int b = static_cast<int>(i - cell * m);
    Index columns[4];
    for (int c = 0; c < 4; ++c) columns[c] = vertex_column(g, cell_nodes[cell * m + c]);
    if (b < 4) g.cell_columns[cell * 4 + b] = columns[b];
    float w[4] = {0, 0, 0, 0};
    const Index node = cell_nodes[i];
    for (Index k = g.p_offsets[node]; k < g.p_offsets[node + 1]; ++k)
        for (int c = 0; c < 4; ++c)
            if (columns[c] >= 0 && g.p_columns[k] == columns[c])
                w[c] = g.p_values[12 * std::int64_t(k)];
    for (int c = 0; c < 4; ++c) g.cell_weights[4 * i + c] = w[c];
}

/// The element kernel's shape: a thread per element and point, fewer elements than the product
/// kernel's (its shared memory holds each point's values and tangent columns).
template <int P> struct GalerkinShape {
    static constexpr int m = lagrange_tet_num_nodes(P);
    static constexpr int kQ = kMaxPoints<P>;
    static constexpr int kElements = P == 2 ? 16 : 8;
    static constexpr int kBlock = kElements * kQ;
};

/// galerkin()'s element parts (reference_galerkin_parts on the device), kElements elements per
/// block. Thread (e, q) keeps its point's values in shared memory; a thread per (element, pair of
/// nodes) sums the pair's diagonal blocks K_aa over the points; then, one vertex c at a time,
/// thread (e, q) forms G = sum_b w_bc dN_b(q) and M_c = sum_e G_e B_ce (shared memory) and a
/// thread per (element, pair of nodes) sums (K_e P_e)_ac = sum_q sum_c dN_a,c M_c. Two nodes per
/// thread: each shared value read serves both. Each run of blocks is staged and written by the
/// whole block, coalesced (written from each thread, 36-byte blocks 180 bytes apart, the stores
/// took 32 sectors a request and kept L2 75% busy: 2.9 ms at 187K p = 3, H200).
template <int P>
__global__ void __launch_bounds__(GalerkinShape<P>::kBlock)
    galerkin_parts_kernel(const float4* __restrict__ d, std::int64_t stride,
                          const float* __restrict__ dN_table, Index num_cells, int nq,
                          const float* __restrict__ cell_weights, float* __restrict__ parts) {
    using S = GalerkinShape<P>;
    constexpr int m = S::m, E = S::kElements, kQ = S::kQ, kPairs = m / 2;
    static_assert(m % 2 == 0, "node pairs");
    __shared__ float dn[kQ * m * 3];
    __shared__ float values[E][kQ][kReferenceTangentValues];
    __shared__ float columns[E][kQ][27]; // M_c of the present vertex
    __shared__ float weights[E][m][4];   // w_bc
    __shared__ float stage[E][m * 9];    // the present run
    for (int i = threadIdx.x; i < nq * m * 3; i += blockDim.x) dn[i] = dN_table[i];
    const Index t0 = static_cast<Index>(blockIdx.x) * E;
    const int count = num_cells - t0 < E ? static_cast<int>(num_cells - t0) : E;
    for (int i = threadIdx.x; i < count * m * 4; i += blockDim.x)
        (&weights[0][0][0])[i] = cell_weights[static_cast<std::int64_t>(t0) * m * 4 + i];
    const int local = threadIdx.x / kQ, q = threadIdx.x % kQ;
    const bool point = local < count && q < nq;
    if (point) {
        const float4* src = d + (static_cast<std::int64_t>(t0) + local) * nq + q;
        for (int k = 0; k < MatrixFreeOperator::kPlanes; ++k) {
            const float4 w = src[k * stride];
            const float v[4] = {w.x, w.y, w.z, w.w};
            for (int j = 0; j < 4; ++j)
                if (4 * k + j < kReferenceTangentValues) values[local][q][4 * k + j] = v[j];
        }
    }
    __syncthreads();
    // the staged run to its place (each element's m blocks are one range), then the stage free
    const auto write_run = [&](int run) {
        __syncthreads();
        for (int i = threadIdx.x; i < count * m * 9; i += blockDim.x) {
            const int e = i / (m * 9), r = i - e * m * 9;
            parts[part_at(static_cast<std::int64_t>(t0) + e, run, 0, m) + r] = stage[e][r];
        }
        __syncthreads();
    };
    for (int i = threadIdx.x; i < count * kPairs; i += blockDim.x) { // K_aa, K_a'a'
        const int e = i / kPairs, a = 2 * (i - e * kPairs);
        float k0[9] = {}, k1[9] = {};
        for (int p = 0; p < nq; ++p) {
            const float* d0 = dn + (p * m + a) * 3;
            const float* d1 = d0 + 3;
            for (int c = 0; c < 3; ++c)
                for (int f = 0; f < 3; ++f) {
                    float B[9];
                    reference_tangent_block(values[e][p], c, f, B);
                    const float w0 = d0[c] * d0[f], w1 = d1[c] * d1[f];
                    for (int r = 0; r < 9; ++r) k0[r] += w0 * B[r], k1[r] += w1 * B[r];
                }
        }
        for (int r = 0; r < 9; ++r) stage[e][9 * a + r] = k0[r], stage[e][9 * a + 9 + r] = k1[r];
    }
    write_run(4);
    for (int c = 0; c < 4; ++c) {
        if (point) {
            const float* dq = dn + q * m * 3;
            float grad[3] = {0, 0, 0};
            for (int b = 0; b < m; ++b) {
                const float w = weights[local][b][c];
                for (int e = 0; e < 3; ++e) grad[e] += w * dq[3 * b + e];
            }
            float M[3][9];
            reference_tangent_columns(values[local][q], grad, M);
            for (int k = 0; k < 3; ++k)
                for (int r = 0; r < 9; ++r) columns[local][q][9 * k + r] = M[k][r];
        }
        __syncthreads();
        for (int i = threadIdx.x; i < count * kPairs; i += blockDim.x) {
            const int e = i / kPairs, a = 2 * (i - e * kPairs);
            float acc0[9] = {}, acc1[9] = {};
            for (int p = 0; p < nq; ++p) {
                const float* d0 = dn + (p * m + a) * 3;
                const float* d1 = d0 + 3;
                const float* M = columns[e][p];
                for (int k = 0; k < 3; ++k)
                    for (int r = 0; r < 9; ++r)
                        acc0[r] += d0[k] * M[9 * k + r], acc1[r] += d1[k] * M[9 * k + r];
            }
            for (int r = 0; r < 9; ++r)
                stage[e][9 * a + r] = acc0[r], stage[e][9 * a + 9 + r] = acc1[r];
        }
        write_run(c); // (its syncs also free the columns for the next vertex)
    }
}

/// galerkin()'s sums into A P: a thread per entry (i, j) of A P (its row from the transfer):
/// the node terms t_i .* P_ij and the point drag's w_ab P_bj (i = vertex a), then node i's
/// element parts of column j in node->cells order (reproducible).
__global__ void galerkin_ap_kernel(GalerkinTargets g, const float* __restrict__ t,
                                   const MatrixFreeDrag* drag, NodeCellsView slots,
                                   const float* __restrict__ parts, int m, Index entries) {
    const std::int64_t at = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (at >= entries) return;
    const Index i = g.ap_rows[at], column = g.ap_columns[at];
    float acc[9] = {};
    const auto add_p_row = [&](Index node, float s0, float s1, float s2) {
        for (Index k = g.p_offsets[node]; k < g.p_offsets[node + 1]; ++k)
            if (g.p_columns[k] == column) {
                const float w = g.p_values[12 * std::int64_t(k)];
                acc[0] += s0 * w, acc[4] += s1 * w, acc[8] += s2 * w;
            }
    };
    const std::int64_t k3 = 3 * static_cast<std::int64_t>(i);
    add_p_row(i, t[k3], t[k3 + 1], t[k3 + 2]);
    if (drag->active)
        for (int a = 0; a < 3; ++a) {
            if (drag->vertices[a] != i) continue;
            for (int b = 0; b < 3; ++b) {
                const float w = drag->weights[a][b];
                add_p_row(drag->vertices[b], w, w, w);
            }
        }
    slots.for_each_incidence(i, [&](Index slot) { // slot = cell * m + local node
        const std::int64_t cell = slot / m;
        const int a = static_cast<int>(slot - cell * m);
        const Index* columns = g.cell_columns + 4 * cell;
        for (int c = 0; c < 4; ++c)
            if (columns[c] == column) {
                const float* part = parts + part_at(cell, c, a, m);
                for (int r = 0; r < 9; ++r) acc[r] += part[r];
            }
    });
    float* to = g.ap_values + 12 * at;
    for (int r = 0; r < 12; ++r) to[r] = r < 9 ? acc[r] : 0.f;
}

/// galerkin()'s diagonal blocks: a thread per (node i, entry r): the node terms, the point drag's
/// w_aa and K_aa of the node's elements in node->cells order.
__global__ void galerkin_diagonal_kernel(GalerkinTargets g, const float* __restrict__ t,
                                         const MatrixFreeDrag* drag, NodeCellsView slots,
                                         const float* __restrict__ parts, int m, Index n) {
    const std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= 9 * std::int64_t(n)) return;
    const Index i = static_cast<Index>(k / 9);
    const int r = static_cast<int>(k - 9 * std::int64_t(i));
    float v = r % 4 == 0 ? t[3 * static_cast<std::int64_t>(i) + r / 4] : 0.f;
    if (drag->active && r % 4 == 0)
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b)
                if (drag->vertices[a] == i && drag->vertices[b] == i) v += drag->weights[a][b];
    slots.for_each_incidence(i, [&](Index slot) {
        const std::int64_t cell = slot / m;
        v += parts[part_at(cell, 4, static_cast<int>(slot - cell * m), m) + r];
    });
    g.diag[static_cast<std::int64_t>(r) * n + i] = v;
}

/// The largest |value| (as float bits, which order as unsigned integers for non-negative
/// values; *max_bits zeroed before).
__global__ void max_abs_kernel(const float4* __restrict__ v, std::int64_t n,
                               unsigned int* max_bits) {
    float m = 0;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        const float4 x = v[i];
        m = fmaxf(m, fmaxf(fmaxf(fabsf(x.x), fabsf(x.y)), fmaxf(fabsf(x.z), fabsf(x.w))));
    }
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0 && m > 0 && isfinite(m)) atomicMax(max_bits, __float_as_uint(m));
}

__device__ __forceinline__ __half to_half_saturated(float v) {
    return __float2half_rn(isnan(v) ? v : fminf(fmaxf(v, -65504.f), 65504.f));
}

/// out = half(v 2^(15 - e)), e the exponent of the largest |value| (in [2^14, 2^15) then: values
/// down to 2^-24 of it keep half's 11 bits); *unscale = 2^(e - 15).
__global__ void to_half_kernel(const float4* __restrict__ v, std::int64_t n,
                               const unsigned int* max_bits, float* unscale,
                               HalfPlane* __restrict__ out) {
    const float m = __uint_as_float(*max_bits);
    int e = 0;
    if (m > 0) frexpf(m, &e); // m = f 2^e, f in [0.5, 1)
    const float factor = ldexpf(1.f, 15 - e);
    const std::int64_t first = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (first == 0) *unscale = ldexpf(1.f, e - 15);
    for (std::int64_t i = first; i < n; i += std::int64_t(gridDim.x) * blockDim.x) {
        const float4 x = v[i];
        out[i] = {__halves2half2(to_half_saturated(x.x * factor), to_half_saturated(x.y * factor)),
                  __halves2half2(to_half_saturated(x.z * factor), to_half_saturated(x.w * factor))};
    }
}

int multiprocessors() {
    int device = 0, count = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&device));
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return count;
}

} // namespace

MatrixFreeOperator::MatrixFreeOperator(int order, int num_points,
                                       const std::vector<double>& reference_gradients,
                                       const Index* cell_nodes, Index num_cells, Index num_nodes,
                                       const NodeCellsView& slots, Scatter scatter,
                                       bool half_snapshot)
    : slots_(slots), scatter_(scatter), cell_nodes_(cell_nodes), num_cells_(num_cells),
      num_nodes_(num_nodes), order_(order), num_points_(num_points) {
    EDN_VERIFY((order == 2 && num_points <= kMaxPoints<2>) ||
                   (order == 3 && num_points <= kMaxPoints<3>),
               ErrorCode::Usage,
               "matrix-free product: order " << order << " with " << num_points << " points");
    const std::vector<float> table(reference_gradients.begin(), reference_gradients.end());
    gradients_.resize(table.size());
    EDN_CUDA_CHECK(
        cudaMemcpy(gradients_.data(), table.data(), gradients_.bytes(), cudaMemcpyHostToDevice));
    const std::size_t values = static_cast<std::size_t>(stride()) * 4 * kPlanes;
    // (room for double parts: residual())
    parts_.resize(6 * static_cast<std::size_t>(num_cells) * lagrange_tet_num_nodes(order));
    if (half_snapshot) {
        half_.resize(values);
        half_scale_.resize(2);
        EDN_CUDA_CHECK(cudaMemsetAsync(half_scale_.data(), 0, half_scale_.bytes()));
    }
    for (Values* v : {&current_, &snapshot_}) {
        if (v == &current_ || !half_snapshot) v->tangents.resize(values);
        v->node.resize(3 * static_cast<std::size_t>(num_nodes));
        v->drag.resize(1);
        EDN_CUDA_CHECK(cudaMemsetAsync(v->node.data(), 0, v->node.bytes()));
        EDN_CUDA_CHECK(cudaMemsetAsync(v->drag.data(), 0, v->drag.bytes()));
    }
}

void MatrixFreeOperator::set_drag(const MatrixFreeDrag& drag) {
    // (a copy, with its wait, only when the drag changed: not at every Newton iteration)
    if (drag_set_ && std::memcmp(&drag, &drag_, sizeof drag) == 0) return;
    EDN_CUDA_CHECK(cudaMemcpy(current_.drag.data(), &drag, sizeof drag, cudaMemcpyHostToDevice));
    drag_ = drag;
    drag_set_ = true;
}

template <class T>
void MatrixFreeOperator::launch(const Values& v, const T* x, T* y, bool atomic, const double* g,
                                const std::uint8_t* fixed, cudaStream_t stream) const {
    const unsigned int node_grid = static_cast<unsigned int>((num_nodes_ + 255) / 256);
    if (atomic && num_nodes_ > 0)
        node_terms_kernel<T>
            <<<node_grid, 256, 0, stream>>>(v.node.data(), v.drag.data(), x, num_nodes_, y);
    T* parts = reinterpret_cast<T*>(parts_.data());
    if (num_cells_ > 0) {
        static const int sms = multiprocessors();
        const bool half = &v == &snapshot_ && half_.size() > 0;
        const float4* d = reinterpret_cast<const float4*>(v.tangents.data());
        const HalfPlane* h = reinterpret_cast<const HalfPlane*>(half_.data());
        const float* unscale = half ? half_scale_.data() + 1 : nullptr;
        T* out = atomic ? y : parts;
        auto run = [&]<int P>() {
            const auto go = [&]<int kPer>(auto kernel, auto planes) {
                using S = ProductShape<P, kPer>;
                const std::int64_t groups =
                    (static_cast<std::int64_t>(num_cells_) + S::kElements - 1) / S::kElements;
                const unsigned int grid = static_cast<unsigned int>(
                    std::min<std::int64_t>(groups, std::int64_t(sms) * 16));
                kernel<<<grid, S::kBlock, 0, stream>>>(planes, unscale, stride(), gradients_.data(),
                                                       cell_nodes_, num_cells_, num_points_, x,
                                                       out);
            };
            constexpr int kFloatPer = P == 3 ? 2 : 1;
            if (half && atomic)
                go.template operator()<2>(element_product_kernel<P, true, T, HalfPlane, 2>, h);
            else if (half)
                go.template operator()<2>(element_product_kernel<P, false, T, HalfPlane, 2>, h);
            else if (atomic)
                go.template operator()<kFloatPer>(
                    element_product_kernel<P, true, T, float4, kFloatPer>, d);
            else
                go.template operator()<kFloatPer>(
                    element_product_kernel<P, false, T, float4, kFloatPer>, d);
        };
        if (order_ == 2)
            run.template operator()<2>();
        else
            run.template operator()<3>();
    }
    if (!atomic && num_nodes_ > 0)
        gather_kernel<T><<<node_grid, 256, 0, stream>>>(v.node.data(), v.drag.data(), slots_, parts,
                                                        x, num_nodes_, g, fixed, y);
    EDN_CUDA_CHECK_LAUNCH();
}

void MatrixFreeOperator::apply(const float* x, float* y, bool snapshot, cudaStream_t stream) const {
    launch<float>(snapshot ? snapshot_ : current_, x, y, scatter_ == Scatter::Atomic, nullptr,
                  nullptr, stream);
}

void MatrixFreeOperator::residual(const double* gradient, const double* x,
                                  const std::uint8_t* fixed, double* r, cudaStream_t stream) const {
    launch<double>(current_, x, r, false, gradient, fixed, stream);
}

void MatrixFreeOperator::take_snapshot(cudaStream_t stream) {
    const std::int64_t planes = stride() * kPlanes;
    if (half_.size() > 0) {
        static const int sms = multiprocessors();
        const unsigned int grid = static_cast<unsigned int>(
            std::min<std::int64_t>((planes + 255) / 256, std::int64_t(sms) * 8));
        EDN_CUDA_CHECK(cudaMemsetAsync(half_scale_.data(), 0, sizeof(float), stream));
        if (planes > 0) {
            const float4* v = reinterpret_cast<const float4*>(current_.tangents.data());
            auto* bits = reinterpret_cast<unsigned int*>(half_scale_.data());
            max_abs_kernel<<<grid, 256, 0, stream>>>(v, planes, bits);
            to_half_kernel<<<grid, 256, 0, stream>>>(v, planes, bits, half_scale_.data() + 1,
                                                     reinterpret_cast<HalfPlane*>(half_.data()));
            EDN_CUDA_CHECK_LAUNCH();
        }
    } else {
        EDN_CUDA_CHECK(cudaMemcpyAsync(snapshot_.tangents.data(), current_.tangents.data(),
                                       current_.tangents.bytes(), cudaMemcpyDeviceToDevice,
                                       stream));
    }
    EDN_CUDA_CHECK(cudaMemcpyAsync(snapshot_.node.data(), current_.node.data(),
                                   current_.node.bytes(), cudaMemcpyDeviceToDevice, stream));
    EDN_CUDA_CHECK(cudaMemcpyAsync(snapshot_.drag.data(), current_.drag.data(),
                                   current_.drag.bytes(), cudaMemcpyDeviceToDevice, stream));
}

std::size_t MatrixFreeOperator::galerkin_scratch_floats() const {
    return static_cast<std::size_t>(num_cells_) * lagrange_tet_num_nodes(order_) * kGalerkinRuns *
           9;
}

void MatrixFreeOperator::galerkin_transfer(const GalerkinTargets& targets,
                                           cudaStream_t stream) const {
    const std::int64_t items = std::max<std::int64_t>(
        static_cast<std::int64_t>(num_cells_) * lagrange_tet_num_nodes(order_), num_nodes_);
    if (items > 0)
        galerkin_transfer_kernel<<<static_cast<unsigned int>((items + 255) / 256), 256, 0,
                                   stream>>>(targets, cell_nodes_, num_cells_,
                                             lagrange_tet_num_nodes(order_), num_nodes_);
    EDN_CUDA_CHECK_LAUNCH();
}

void MatrixFreeOperator::galerkin(const GalerkinTargets& targets, Index ap_entries,
                                  cudaStream_t stream) const {
    EDN_VERIFY(scratch_ != nullptr, ErrorCode::Usage, "matrix-free re-value without scratch");
    const float4* d = reinterpret_cast<const float4*>(current_.tangents.data());
    const int m = lagrange_tet_num_nodes(order_);
    if (num_cells_ > 0) {
        auto run = [&]<int P>() {
            using S = GalerkinShape<P>;
            const unsigned int grid =
                static_cast<unsigned int>((num_cells_ + S::kElements - 1) / S::kElements);
            galerkin_parts_kernel<P>
                <<<grid, S::kBlock, 0, stream>>>(d, stride(), gradients_.data(), num_cells_,
                                                 num_points_, targets.cell_weights, scratch_);
        };
        if (order_ == 2)
            run.template operator()<2>();
        else
            run.template operator()<3>();
    }
    if (ap_entries > 0)
        galerkin_ap_kernel<<<static_cast<unsigned int>((ap_entries + 255) / 256), 256, 0, stream>>>(
            targets, current_.node.data(), current_.drag.data(), slots_, scratch_, m, ap_entries);
    if (num_nodes_ > 0)
        galerkin_diagonal_kernel<<<static_cast<unsigned int>((9 * std::int64_t(num_nodes_) + 255) /
                                                             256),
                                   256, 0, stream>>>(
            targets, current_.node.data(), current_.drag.data(), slots_, scratch_, m, num_nodes_);
    EDN_CUDA_CHECK_LAUNCH();
}

std::size_t MatrixFreeOperator::bytes() const {
    return current_.tangents.bytes() + snapshot_.tangents.bytes() + half_.size() * 2 +
           2 * (current_.node.bytes() + current_.drag.bytes()) + gradients_.bytes() +
           parts_.bytes();
}

std::vector<std::uintptr_t> MatrixFreeOperator::key() const {
    std::vector<std::uintptr_t> k;
    for (const Values* v : {&current_, &snapshot_})
        for (const void* p :
             {static_cast<const void*>(v->tangents.data()),
              static_cast<const void*>(v->node.data()), static_cast<const void*>(v->drag.data())})
            k.push_back(reinterpret_cast<std::uintptr_t>(p));
    k.push_back(reinterpret_cast<std::uintptr_t>(gradients_.data()));
    k.push_back(reinterpret_cast<std::uintptr_t>(parts_.data()));
    k.push_back(reinterpret_cast<std::uintptr_t>(half_.data()));
    k.push_back(reinterpret_cast<std::uintptr_t>(half_scale_.data()));
    k.push_back(reinterpret_cast<std::uintptr_t>(cell_nodes_));
    k.push_back(reinterpret_cast<std::uintptr_t>(scratch_));
    return k;
}

} // namespace edn::cuda
