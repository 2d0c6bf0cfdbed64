// CUDA backend of Bin-BCSR* assembly (twins of sparse/bin_bcsr_pattern.cpp, cpu/summation.cpp,
// cpu/spmv.cpp): exact counts (Eq. 6), bins, one exact allocation, columns, per-entry maps,
// element blocks, summation, SpMV with the warp-dynamic bin scheduler of Listing 1.
#include "core/dispatch.hpp"
#include "cuda/cuda_assembly.hpp"
#include "cuda/cuda_check.cuh"
#include "cuda/device_topology.cuh"
#include "fem/element_geometry.hpp"
#include "fem/reference_integrals.hpp"
#include "sparse/block3.hpp"

#include <cstdlib>
#include <cub/cub.cuh>
#include <memory>

namespace edn::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kMaxNodes = 20;

// Reference integrals S_ab (m*m*9 floats, at most 20*20*9) for the element kernels.
__constant__ float c_reference_integrals[kMaxNodes * kMaxNodes * 9];

__device__ __forceinline__ Index binomial_device(int n, int k) {
    if (k < 0 || n < 0 || k > n) return 0;
    Index r = 1;
    for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
    return r;
}

/// Listing 1: a warp takes the next bin from a global counter.
__device__ __forceinline__ Index next_bin(unsigned int* counter, int lane) {
    unsigned int bin = 0;
    if (lane == 0) bin = atomicAdd(counter, 1u);
    return static_cast<Index>(__shfl_sync(0xffffffffu, bin, 0));
}

// ---- cell node table ---------------------------------------------------------------------------

__global__ void cell_nodes_kernel(const int4* cells, const Index* cell_edges,
                                  const Index* cell_faces, const int2* edges, NodeLayout layout,
                                  Index num_cells, Index* out) {
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= num_cells) return;
    const int p = layout.order, m = (p + 1) * (p + 2) * (p + 3) / 6;
    const int4 c4 = cells[t];
    const Index v[4] = {c4.x, c4.y, c4.z, c4.w};
    Index* o = out + static_cast<std::int64_t>(t) * m;
    for (int i = 0; i < 4; ++i) o[i] = v[i];
    if (p == 1) return;
    const int ev[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    int at = 4;
    for (int le = 0; le < 6; ++le) {
        const Index e = cell_edges[6 * t + le];
        const bool forward = edges[e].x == v[ev[le][0]]; // edge nodes run from the lower vertex
        for (int k = 0; k < p - 1; ++k) {
            const int kk = forward ? k : p - 2 - k;
            o[at++] = layout.edge_node(e, kk);
        }
    }
    if (p == 3)
        for (int lf = 0; lf < 4; ++lf) o[at++] = layout.face_node(cell_faces[4 * t + lf], 0);
}

// ---- exact counts (Eq. 6), accumulated per simplex with atomics (paper sec. 4.1) ---------------

__global__ void init_simplex_counts(Index* vertex_count, Index* edge_count, Index* face_count,
                                    Index nv, Index ne, Index nf, int p) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < nv) vertex_count[i] = 1;             // C(p, 0): the node itself
    if (p >= 2 && i < ne) edge_count[i] = p + 1; // C(p+1, 1): nodes on the edge
    if (p >= 3 && i < nf) face_count[i] = binomial_device(p + 2, 2);
}

__global__ void count_from_edges(const int2* edges, Index ne, int p, Index* vertex_count) {
    const Index e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= ne) return;
    const int2 ab = edges[e];
    atomicAdd(&vertex_count[ab.x], p); // C(p, 1) new nodes per edge
    atomicAdd(&vertex_count[ab.y], p);
}

__global__ void count_from_faces(const int* faces, const int* face_edges, Index nf, int p,
                                 Index* vertex_count, Index* edge_count) {
    const Index f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= nf) return;
    const Index cv = binomial_device(p, 2), ce = p >= 2 ? binomial_device(p + 1, 2) : 0;
    for (int i = 0; i < 3; ++i) {
        atomicAdd(&vertex_count[faces[3 * f + i]], cv);
        if (ce) atomicAdd(&edge_count[face_edges[3 * f + i]], ce);
    }
}

__global__ void count_from_cells(const int4* cells, const Index* cell_edges,
                                 const Index* cell_faces, Index nt, int p, Index* vertex_count,
                                 Index* edge_count, Index* face_count) {
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nt) return;
    // Only simplices that carry nodes are counted: edges from p = 2, faces from p = 3.
    const Index cv = binomial_device(p, 3), ce = p >= 2 ? binomial_device(p + 1, 3) : 0,
                cf = p >= 3 ? binomial_device(p + 2, 3) : 0;
    const int4 c = cells[t];
    if (cv) {
        atomicAdd(&vertex_count[c.x], cv);
        atomicAdd(&vertex_count[c.y], cv);
        atomicAdd(&vertex_count[c.z], cv);
        atomicAdd(&vertex_count[c.w], cv);
    }
    if (ce)
        for (int i = 0; i < 6; ++i) atomicAdd(&edge_count[cell_edges[6 * t + i]], ce);
    if (cf)
        for (int i = 0; i < 4; ++i) atomicAdd(&face_count[cell_faces[4 * t + i]], cf);
}

/// Expands per-simplex counts to per-node off-diagonal row counts.
__global__ void expand_row_counts(const Index* vertex_count, const Index* edge_count,
                                  const Index* face_count, NodeLayout layout, Index* row_counts) {
    const Index node = blockIdx.x * blockDim.x + threadIdx.x;
    const Index n = layout.num_nodes();
    if (node >= n) return;
    Index count;
    if (node < layout.num_vertices)
        count = vertex_count[node];
    else if (node < layout.first_face_node())
        count = edge_count[layout.edge_of_node(node)];
    else
        count = face_count[layout.face_of_node(node)];
    row_counts[node] = count - 1; // the diagonal block is stored apart
}

/// Bin sizes in slots: 32 * max row count of the bin (warp max with shuffles).
__global__ void bin_sizes_kernel(const Index* row_counts, Index rows, Index bins, Index* sizes) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    const Index bin = row / kWarp;
    if (bin >= bins) return; // whole warps exit together: blockDim is a multiple of 32
    Index v = row < rows ? row_counts[row] : 0;
    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
    if ((threadIdx.x & 31) == 0) sizes[bin] = v * kWarp;
}

// ---- columns ------------------------------------------------------------------------------------

struct NodeCellsDevice {
    NodeLayout layout;
    const Index *vertex_offsets, *vertex_cells, *edge_offsets, *edge_cells, *face_offsets,
        *face_cells;

    __device__ void range(Index node, Index& begin, Index& end, const Index*& list) const {
        if (node < layout.num_vertices) {
            begin = vertex_offsets[node], end = vertex_offsets[node + 1], list = vertex_cells;
        } else if (node < layout.first_face_node()) {
            const Index e = layout.edge_of_node(node);
            begin = edge_offsets[e], end = edge_offsets[e + 1], list = edge_cells;
        } else {
            const Index f = layout.face_of_node(node);
            begin = face_offsets[f], end = face_offsets[f + 1], list = face_cells;
        }
    }
};

/// One lane per row; the row's sorted columns are built by insertion directly in its strided
/// slots (the row owns them), then padded with the row index.
__global__ void fill_columns_kernel(NodeCellsDevice nc, const Index* cell_nodes, int m,
                                    const Index* bin_offsets, const Index* row_counts, Index rows,
                                    Index bins, unsigned int* counter, Index* columns) {
    const int lane = threadIdx.x & 31;
    for (Index bin = next_bin(counter, lane); bin < bins; bin = next_bin(counter, lane)) {
        const Index row = bin * kWarp + lane;
        const Index begin = bin_offsets[bin];
        const Index width = (bin_offsets[bin + 1] - begin) / kWarp;
        Index* out = columns + begin + lane;
        Index filled = 0;
        if (row < rows) {
            Index cb, ce;
            const Index* list;
            nc.range(row, cb, ce, list);
            for (Index e = cb; e < ce; ++e) {
                const Index* nodes = cell_nodes + static_cast<std::int64_t>(list[e]) * m;
                for (int a = 0; a < m; ++a) {
                    const Index col = nodes[a];
                    if (col == row) continue;
                    Index lo = 0, hi = filled; // binary search in the sorted prefix
                    while (lo < hi) {
                        const Index mid = (lo + hi) >> 1;
                        if (out[mid * kWarp] < col)
                            lo = mid + 1;
                        else
                            hi = mid;
                    }
                    if (lo < filled && out[lo * kWarp] == col) continue;
                    for (Index j = filled; j > lo; --j) out[j * kWarp] = out[(j - 1) * kWarp];
                    out[lo * kWarp] = col;
                    ++filled;
                }
            }
        }
        const Index pad = row < rows ? row : 0;
        for (Index j = filled; j < width; ++j) out[j * kWarp] = pad;
    }
}

__device__ __forceinline__ Index find_slot(const Index* bin_offsets, const Index* columns,
                                           const Index* row_counts, Index row, Index col) {
    const Index begin = bin_offsets[row / kWarp], lane = row % kWarp;
    Index lo = 0, hi = row_counts[row];
    while (lo < hi) {
        const Index mid = (lo + hi) >> 1;
        if (columns[begin + mid * kWarp + lane] < col)
            lo = mid + 1;
        else
            hi = mid;
    }
    return begin + lo * kWarp + lane;
}

// ---- per-entry maps -----------------------------------------------------------------------------

/// One thread per element block (t, a, b): its target is a slot or num_slots + row.
__global__ void map_count_kernel(const Index* cell_nodes, Index num_cells, int m,
                                 const Index* bin_offsets, const Index* columns,
                                 const Index* row_counts, Index num_slots, Index* counts) {
    const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= static_cast<std::int64_t>(num_cells) * m * m) return;
    const Index t = static_cast<Index>(s / (m * m));
    const int ab = static_cast<int>(s % (m * m));
    const Index row = cell_nodes[static_cast<std::int64_t>(t) * m + ab / m];
    const Index col = cell_nodes[static_cast<std::int64_t>(t) * m + ab % m];
    const Index target =
        row == col ? num_slots + row : find_slot(bin_offsets, columns, row_counts, row, col);
    atomicAdd(&counts[target], 1);
}

__global__ void map_fill_kernel(const Index* cell_nodes, Index num_cells, int m,
                                const Index* bin_offsets, const Index* columns,
                                const Index* row_counts, Index num_slots, Index* cursor,
                                Index* sources) {
    const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= static_cast<std::int64_t>(num_cells) * m * m) return;
    const Index t = static_cast<Index>(s / (m * m));
    const int ab = static_cast<int>(s % (m * m));
    const Index row = cell_nodes[static_cast<std::int64_t>(t) * m + ab / m];
    const Index col = cell_nodes[static_cast<std::int64_t>(t) * m + ab % m];
    const Index target =
        row == col ? num_slots + row : find_slot(bin_offsets, columns, row_counts, row, col);
    sources[atomicAdd(&cursor[target], 1)] = static_cast<Index>(s);
}

/// Sorts each target's sources (filled in atomic order) ascending, in place: the summation then
/// adds a block's contributions in the same order on every build, so results repeat bit for
/// bit. Segments are short (at most the cells around a node), so one thread each, insertion.
__global__ void map_sort_kernel(const Index* offsets, Index targets, Index* sources) {
    const Index t = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= targets) return;
    const Index begin = offsets[t], end = offsets[t + 1];
    for (Index i = begin + 1; i < end; ++i) {
        const Index v = sources[i];
        Index j = i;
        for (; j > begin && sources[j - 1] > v; --j) sources[j] = sources[j - 1];
        sources[j] = v;
    }
}

// ---- element blocks -----------------------------------------------------------------------------

__device__ __forceinline__ void load_inverse_jacobian(const int4 c, const float* x, float Ji[3][3],
                                                      float& abs_det) {
    const Index v[4] = {c.x, c.y, c.z, c.w};
    float X[4][3];
    for (int i = 0; i < 4; ++i)
        for (int d = 0; d < 3; ++d) X[i][d] = x[3 * v[i] + d];
    const TetGeometry<float> g = tet_geometry(X);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) Ji[i][j] = g.inverse_jacobian.m[i][j];
    abs_det = fabsf(g.det_jacobian);
}

/// One thread per element block (t, a, b).
__global__ void element_blocks_kernel(const int4* cells, const float* positions, Index num_cells,
                                      int m, LameParameters<float> lame, float* blocks) {
    const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= static_cast<std::int64_t>(num_cells) * m * m) return;
    const Index t = static_cast<Index>(s / (m * m));
    const int ab = static_cast<int>(s % (m * m));
    float Ji[3][3], abs_det;
    load_inverse_jacobian(cells[t], positions, Ji, abs_det);
    float S[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) S[i][j] = c_reference_integrals[ab * 9 + 3 * i + j];
    float out[9];
    linear_elastic_block_from_integrals(S, Ji, abs_det, lame, out);
    for (int k = 0; k < 9; ++k) blocks[9 * s + k] = out[k];
}

// ---- summation ----------------------------------------------------------------------------------

/// Element blocks read from memory in the full layout ((t*m+a)*m+b)*9 + 3r+c.
struct StoredBlocks {
    const float* __restrict__ blocks;
    __device__ void prepare(float*, int) const {}
    __device__ __forceinline__ void add(Index s, float acc[9]) const {
        const float* b = blocks + 9 * static_cast<std::int64_t>(s);
#pragma unroll
        for (int k = 0; k < 9; ++k) acc[k] += __ldg(b + k);
    }
};

/// Linear-elastic element blocks evaluated where they are summed: block (t, a, b) from the
/// cell's inverse Jacobian (recomputed from its 4 vertices, which stay in L2) and the constant
/// reference integral S_ab, staged in shared memory (lanes index different ab, which the
/// constant cache would serialise). No element block array exists in this path.
template <int M> struct LinearBlocks {
    const int4* __restrict__ cells;
    const float* __restrict__ positions;
    const float* __restrict__ integrals; // M*M*9 floats in global memory
    LameParameters<float> lame;
    const float* staged = nullptr; // shared copy of integrals

    __device__ void prepare(float* smem, int) {
        for (int i = threadIdx.x; i < M * M * 9; i += blockDim.x) smem[i] = integrals[i];
        staged = smem;
        __syncthreads();
    }
    __device__ __forceinline__ void add(Index s, float acc[9]) const {
        const Index t = s / (M * M);
        const int ab = s - t * (M * M);
        float Ji[3][3], abs_det;
        load_inverse_jacobian(__ldg(cells + t), positions, Ji, abs_det);
        float S[3][3];
#pragma unroll
        for (int i = 0; i < 3; ++i)
#pragma unroll
            for (int j = 0; j < 3; ++j) S[i][j] = staged[ab * 9 + 3 * i + j];
        float out[9];
        linear_elastic_block_from_integrals(S, Ji, abs_det, lame, out);
#pragma unroll
        for (int k = 0; k < 9; ++k) acc[k] += out[k];
    }
};

/// Per-entry summation, a thread block per bin (static grid stride, no counter): the bin's 32
/// diagonal rows are items 0..31, its 32 * width slots follow in storage order, so consecutive
/// threads write consecutive floats of each value plane. Every target is written once
/// (padding slots have no sources and get zeros), so the matrix needs no reset.
template <class Source>
__global__ void sum_per_entry_bins_kernel(const Index* __restrict__ map_offsets,
                                          const Index* __restrict__ map_sources, Source src,
                                          const Index* __restrict__ bin_offsets, Index bins,
                                          Index num_slots, Index rows, float* __restrict__ values,
                                          float* __restrict__ diag) {
    extern __shared__ float smem[];
    src.prepare(smem, 0);
    for (Index bin = blockIdx.x; bin < bins; bin += gridDim.x) {
        const Index begin = __ldg(bin_offsets + bin);
        const Index slots = __ldg(bin_offsets + bin + 1) - begin;
        float* v = values + 9 * static_cast<std::int64_t>(begin);
        for (Index i = threadIdx.x; i < slots + kWarp; i += blockDim.x) {
            const bool on_diag = i < kWarp;
            const Index row = bin * kWarp + i;
            if (on_diag && row >= rows) continue;
            const Index target = on_diag ? num_slots + row : begin + (i - kWarp);
            float acc[9] = {};
            const Index e1 = __ldg(map_offsets + target + 1);
            for (Index e = __ldg(map_offsets + target); e < e1; ++e)
                src.add(__ldg(map_sources + e), acc);
            if (on_diag) {
#pragma unroll
                for (int k = 0; k < 9; ++k)
                    diag[static_cast<std::int64_t>(k) * rows + row] = acc[k];
            } else {
#pragma unroll
                for (int k = 0; k < 9; ++k)
                    v[static_cast<std::int64_t>(k) * slots + (i - kWarp)] = acc[k];
            }
        }
    }
}

/// Adds a block to (row, col); the calling lane owns row.
__device__ __forceinline__ void add_block(const Index* bin_offsets, const Index* columns,
                                          const Index* row_counts, Index rows, Index row, Index col,
                                          const float* b, float* values, float* diag) {
    if (row == col) {
        for (int k = 0; k < 9; ++k) diag[static_cast<std::int64_t>(k) * rows + row] += b[k];
        return;
    }
    const Index bin = row / kWarp, begin = bin_offsets[bin];
    const Index slot = find_slot(bin_offsets, columns, row_counts, row, col);
    const Index j = (slot - begin) / kWarp;
    const std::int64_t plane = bin_offsets[bin + 1] - begin;
    float* v = values + 9 * static_cast<std::int64_t>(begin) + j * kWarp + (row % kWarp);
    for (int k = 0; k < 9; ++k) v[k * plane] += b[k];
}

/// One lane per row: walk the incident cells, add the row's blocks in memory.
__global__ void sum_per_simplex_kernel(NodeCellsDevice nc, const Index* cell_nodes, int m,
                                       const float* blocks, const Index* bin_offsets,
                                       const Index* columns, const Index* row_counts, Index rows,
                                       Index bins, unsigned int* counter, float* values,
                                       float* diag) {
    const int lane = threadIdx.x & 31;
    for (Index bin = next_bin(counter, lane); bin < bins; bin = next_bin(counter, lane)) {
        const Index row = bin * kWarp + lane;
        if (row >= rows) continue;
        Index cb, ce;
        const Index* list;
        nc.range(row, cb, ce, list);
        for (Index e = cb; e < ce; ++e) {
            const Index t = list[e];
            const Index* nodes = cell_nodes + static_cast<std::int64_t>(t) * m;
            int a = 0;
            while (nodes[a] != row) ++a;
            const float* rb = blocks + (static_cast<std::int64_t>(t) * m + a) * m * 9;
            for (int b = 0; b < m; ++b)
                add_block(bin_offsets, columns, row_counts, rows, row, nodes[b], rb + 9 * b, values,
                          diag);
        }
    }
}

/// p = 1: like per-simplex, but the row's element blocks are computed in the kernel.
__global__ void sum_inline_p1_kernel(NodeCellsDevice nc, const int4* cells, const float* positions,
                                     LameParameters<float> lame, const Index* bin_offsets,
                                     const Index* columns, const Index* row_counts, Index rows,
                                     Index bins, unsigned int* counter, float* values,
                                     float* diag) {
    const int lane = threadIdx.x & 31;
    for (Index bin = next_bin(counter, lane); bin < bins; bin = next_bin(counter, lane)) {
        const Index row = bin * kWarp + lane;
        if (row >= rows) continue;
        for (Index e = nc.vertex_offsets[row]; e < nc.vertex_offsets[row + 1]; ++e) {
            const int4 c = cells[nc.vertex_cells[e]];
            const Index v[4] = {c.x, c.y, c.z, c.w};
            float Ji[3][3], abs_det;
            load_inverse_jacobian(c, positions, Ji, abs_det);
            int a = 0;
            while (v[a] != row) ++a;
            for (int b = 0; b < 4; ++b) {
                float S[3][3], out[9];
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j)
                        S[i][j] = c_reference_integrals[(a * 4 + b) * 9 + 3 * i + j];
                linear_elastic_block_from_integrals(S, Ji, abs_det, lame, out);
                add_block(bin_offsets, columns, row_counts, rows, row, v[b], out, values, diag);
            }
        }
    }
}

// ---- SpMV ---------------------------------------------------------------------------------------

/// y = K x: a thread block of K warps per bin (static grid stride: one launch, no counter);
/// warp w takes slots j = w, w + K, ... of its lane's row (lane = row) up to the row's count,
/// so padding is not read; warps 1..K-1 hand their sums to warp 0 through shared memory.
template <int K, bool kStream = false>
__global__ void __launch_bounds__(K * 32)
    spmv_bins_kernel(const Index* __restrict__ bin_offsets, const Index* __restrict__ columns,
                     const Index* __restrict__ row_counts, const float* __restrict__ values,
                     const float* __restrict__ diag, Index rows, Index bins,
                     const float* __restrict__ x, float* __restrict__ y) {
    __shared__ float part[K][3][kWarp];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (Index bin = blockIdx.x; bin < bins; bin += gridDim.x) {
        const Index row = bin * kWarp + lane;
        const Index begin = __ldg(bin_offsets + bin);
        const std::int64_t plane = __ldg(bin_offsets + bin + 1) - begin;
        const Index count = row < rows ? __ldg(row_counts + row) : 0;
        const float* v = values + 9 * static_cast<std::int64_t>(begin) + lane;
        const Index* cols = columns + begin + lane;
        float a0 = 0, a1 = 0, a2 = 0;
#pragma unroll 2
        for (Index j = w; j < count; j += K) {
            // kStream: evict-first loads of the matrix stream, so x stays cached in L2.
            const auto ld = [](const auto* p) {
                if constexpr (kStream)
                    return __ldcs(p);
                else
                    return __ldg(p);
            };
            const Index col = ld(cols + j * kWarp);
            const float* b = v + j * kWarp;
            const float b0 = ld(b), b1 = ld(b + plane), b2 = ld(b + 2 * plane),
                        b3 = ld(b + 3 * plane), b4 = ld(b + 4 * plane), b5 = ld(b + 5 * plane),
                        b6 = ld(b + 6 * plane), b7 = ld(b + 7 * plane), b8 = ld(b + 8 * plane);
            const float x0 = __ldg(x + 3 * col), x1 = __ldg(x + 3 * col + 1),
                        x2 = __ldg(x + 3 * col + 2);
            a0 += b0 * x0 + b1 * x1 + b2 * x2;
            a1 += b3 * x0 + b4 * x1 + b5 * x2;
            a2 += b6 * x0 + b7 * x1 + b8 * x2;
        }
        if (w == 0 && row < rows) {
            const float x0 = __ldg(x + 3 * row), x1 = __ldg(x + 3 * row + 1),
                        x2 = __ldg(x + 3 * row + 2);
            const float* d = diag + row;
            const std::int64_t n = rows;
            a0 += __ldg(d) * x0 + __ldg(d + n) * x1 + __ldg(d + 2 * n) * x2;
            a1 += __ldg(d + 3 * n) * x0 + __ldg(d + 4 * n) * x1 + __ldg(d + 5 * n) * x2;
            a2 += __ldg(d + 6 * n) * x0 + __ldg(d + 7 * n) * x1 + __ldg(d + 8 * n) * x2;
        }
        if (K > 1) {
            part[w][0][lane] = a0, part[w][1][lane] = a1, part[w][2][lane] = a2;
            __syncthreads();
            // The 96 outputs of the bin, summed over warps and written contiguously.
            for (int o = threadIdx.x; o < 3 * kWarp; o += K * kWarp) {
                const int l = o / 3, r = o % 3;
                float sum = 0;
#pragma unroll
                for (int k = 0; k < K; ++k) sum += part[k][r][l];
                if (bin * kWarp + l < rows) y[3 * static_cast<std::int64_t>(bin) * kWarp + o] = sum;
            }
            __syncthreads();
        } else if (row < rows) {
            y[3 * row] = a0, y[3 * row + 1] = a1, y[3 * row + 2] = a2;
        }
    }
}

unsigned int grid_for(std::int64_t n, int block) {
    return static_cast<unsigned int>((n + block - 1) / block);
}

/// Enough resident warps to cover the device for warp-dynamic kernels.
unsigned int persistent_grid(Index bins, int block) {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    const std::int64_t warps_needed = bins;
    const std::int64_t warps_resident = static_cast<std::int64_t>(sms) * 64; // 2048 threads / SM
    const std::int64_t warps = std::min(warps_needed, warps_resident);
    return static_cast<unsigned int>(
        std::max<std::int64_t>(1, (warps * kWarp + block - 1) / block));
}

/// Times a stage with CUDA events.
class StageTimer {
public:
    StageTimer() {
        EDN_CUDA_CHECK(cudaEventCreate(&start_));
        EDN_CUDA_CHECK(cudaEventCreate(&stop_));
    }
    ~StageTimer() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    void start() { EDN_CUDA_CHECK(cudaEventRecord(start_)); }
    double stop() {
        EDN_CUDA_CHECK(cudaEventRecord(stop_));
        EDN_CUDA_CHECK(cudaEventSynchronize(stop_));
        float ms = 0;
        EDN_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        return ms;
    }

private:
    cudaEvent_t start_{}, stop_{};
};

} // namespace

struct Assembly::Impl {
    Impl() = default;
    /// Shares `topology` with another assembly of the same mesh.
    explicit Impl(std::shared_ptr<DeviceTopology> topology) : shared_topo(std::move(topology)) {}
    NodeLayout layout;
    Index num_cells = 0;
    int m = 4;
    // mesh and topology (the topology possibly shared with assemblies of other orders)
    std::shared_ptr<DeviceTopology> shared_topo = std::make_shared<DeviceTopology>();
    DeviceTopology& topo = *shared_topo;
    DeviceBuffer<float> positions;
    DeviceBuffer<Index> cell_nodes;
    // pattern and matrix
    std::uint64_t pattern_generation = 0; // new_pattern_generation() of the last build_pattern
    bool reproducible_maps = false;       // sort each target's map sources
    DeviceBuffer<Index> row_counts, bin_offsets, columns;
    DeviceBuffer<float> values, diag;
    Index num_slots = 0;
    Index bins = 0;
    mutable std::int64_t nnz_cache = -1; // nnz_blocks(), once computed
    // maps and element blocks
    DeviceBuffer<Index> map_offsets, map_sources;
    DeviceBuffer<float> blocks;
    DeviceBuffer<unsigned int> counter;
    DeviceBuffer<float> integrals; // reference integrals S_ab (m*m*9) for the fused kernels
    /// Where sum() takes element blocks from: `blocks` as written (device_element_blocks()), or
    /// linear elasticity evaluated inside the summation (compute_element_blocks()).
    enum class BlockSource { Stored, Linear } source = BlockSource::Stored;
    LameParameters<float> linear_lame{};
    bool blocks_hold_linear = false; // `blocks` were filled from linear_lame (per-simplex path)
    int sms = 0, spmv_grid = 0;
    AssemblyTimes times;
    std::size_t held = 0, peak = 0;

    template <class T> void track(const DeviceBuffer<T>& b) {
        held += b.bytes();
        peak = std::max(peak, held);
    }
    template <class T> void release(DeviceBuffer<T>& b) {
        held -= b.bytes();
        b = DeviceBuffer<T>();
    }
    template <class T> void upload(DeviceBuffer<T>& dst, const void* src, std::size_t count) {
        dst.resize(count);
        track(dst);
        if (count)
            EDN_CUDA_CHECK(cudaMemcpy(dst.data(), src, count * sizeof(T), cudaMemcpyHostToDevice));
    }
    NodeCellsDevice node_cells() const {
        return {layout,
                topo.vertex_offsets.data(),
                topo.vertex_cells.data(),
                topo.edge_offsets.data(),
                topo.edge_cells.data(),
                topo.face_offsets.data(),
                topo.face_cells.data()};
    }
    /// Points the layout's node slot order at the device topology's (kernels use `layout`).
    void use_device_slots() {
        const bool edges = layout.order >= 2 && topo.edge_at.size() == std::size_t(topo.num_edges);
        const bool faces = layout.order >= 3 && topo.face_at.size() == std::size_t(topo.num_faces);
        layout.edge_slot = edges ? topo.edge_slot.data() : nullptr;
        layout.edge_at = edges ? topo.edge_at.data() : nullptr;
        layout.face_slot = faces ? topo.face_slot.data() : nullptr;
        layout.face_at = faces ? topo.face_at.data() : nullptr;
    }
    void finish_setup(const TetMesh& mesh, int order);
    void ensure_blocks_allocated();
    /// Per-entry summation of every target, blocks from `src`; `nodes` > 0 stages that many
    /// nodes' reference integrals in shared memory.
    template <class Source> void launch_sum_per_entry(Source src, int nodes) {
        constexpr int kThreads = 128;
        const std::size_t smem = sizeof(float) * 9 * nodes * nodes;
        int per_sm = 0;
        EDN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, sum_per_entry_bins_kernel<Source>, kThreads, smem));
        const Index grid = std::min<Index>(bins, std::max(1, per_sm) * sms);
        sum_per_entry_bins_kernel<Source><<<grid, kThreads, smem>>>(
            map_offsets.data(), map_sources.data(), src, bin_offsets.data(), bins, num_slots,
            layout.num_nodes(), values.data(), diag.data());
    }
    void materialize_linear_blocks();
    void reset_counter() {
        EDN_CUDA_CHECK(cudaMemsetAsync(counter.data(), 0, sizeof(unsigned int)));
    }
};

Assembly::Assembly(const TetMesh& mesh, const Topology& topology, int order)
    : impl_(std::make_unique<Impl>()) {
    Impl& d = *impl_;
    d.layout = make_node_layout(topology, order);
    StageTimer timer;
    timer.start();
    upload_topology(mesh, topology, d.topo);
    d.use_device_slots();
    d.held += d.topo.bytes();
    d.peak = std::max(d.peak, d.held);
    d.finish_setup(mesh, order);
    d.times.upload = timer.stop();
}

Assembly::Assembly(const Assembly& other, const TetMesh& mesh, int order)
    : impl_(std::make_unique<Impl>(other.impl_->shared_topo)) {
    Impl& d = *impl_;
    d.reproducible_maps = other.impl_->reproducible_maps;
    EDN_VERIFY(order >= 1 && order <= 3, ErrorCode::Usage,
               "element order " << order << " not in 1..3");
    EDN_VERIFY(mesh.num_cells() == d.topo.num_cells && mesh.num_vertices() == d.topo.num_vertices,
               ErrorCode::Usage, "Assembly: the mesh is not the one of the shared topology");
    StageTimer timer;
    timer.start();
    d.layout.order = order;
    d.layout.num_vertices = d.topo.num_vertices;
    d.layout.num_edges = d.topo.num_edges;
    d.layout.num_faces = d.topo.num_faces;
    d.use_device_slots();
    d.finish_setup(mesh, order); // positions and cell nodes only: the topology is not held here
    d.times.upload = timer.stop();
}

Assembly::Assembly(const TetMesh& mesh, int order) : impl_(std::make_unique<Impl>()) {
    Impl& d = *impl_;
    EDN_VERIFY(order >= 1 && order <= 3, ErrorCode::Usage,
               "element order " << order << " not in 1..3");
    StageTimer timer;
    timer.start();
    d.topo.num_vertices = mesh.num_vertices();
    d.topo.num_cells = mesh.num_cells();
    d.upload(d.topo.cells, mesh.cells.data(), mesh.cells.size());
    d.times.upload = timer.stop();
    timer.start();
    std::size_t peak_extra = 0;
    build_device_topology(d.topo, peak_extra, order);
    d.held += d.topo.bytes() - d.topo.cells.bytes();
    d.peak = std::max(std::max(d.peak, d.held), peak_extra);
    d.times.topology = timer.stop();
    d.layout.order = order;
    d.layout.num_vertices = d.topo.num_vertices;
    d.layout.num_edges = d.topo.num_edges;
    d.layout.num_faces = d.topo.num_faces;
    d.use_device_slots();
    EDN_VERIFY(static_cast<std::int64_t>(d.layout.num_vertices) +
                       std::int64_t(order - 1) * d.layout.num_edges +
                       std::int64_t(d.layout.nodes_per_face()) * d.layout.num_faces <
                   std::numeric_limits<Index>::max(),
               ErrorCode::OutOfMemory, "too many nodes for 32-bit indices");
    timer.start();
    d.finish_setup(mesh, order);
    d.times.upload += timer.stop();
}

void Assembly::Impl::finish_setup(const TetMesh& mesh, int order) {
    num_cells = mesh.num_cells();
    m = nodes_per_cell(order);
    std::vector<float> x(3 * mesh.positions.size());
    for (std::size_t i = 0; i < mesh.positions.size(); ++i)
        for (int k = 0; k < 3; ++k) x[3 * i + k] = static_cast<float>(mesh.positions[i][k]);
    upload(positions, x.data(), x.size());
    counter.resize(1);
    track(counter);
    // Reference integrals for the element kernels.
    float S[kMaxNodes * kMaxNodes * 9] = {};
    with_order(order, [&]<int P>() {
        constexpr int n = lagrange_tet_num_nodes(P);
        reference_gradient_integrals<P>(reinterpret_cast<float(*)[n][3][3]>(S));
    });
    EDN_CUDA_CHECK(cudaMemcpyToSymbol(c_reference_integrals, S, sizeof(float) * m * m * 9));
    upload(integrals, S, static_cast<std::size_t>(m) * m * 9);
    int device = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&device));
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    // Cell node table (derived on the device from cell vertices, edges and faces).
    cell_nodes.resize(static_cast<std::size_t>(num_cells) * m);
    track(cell_nodes);
    if (num_cells > 0) {
        cell_nodes_kernel<<<grid_for(num_cells, 256), 256>>>(
            topo.cells.data(), topo.cell_edges.data(), topo.cell_faces.data(), topo.edges.data(),
            layout, num_cells, cell_nodes.data());
        EDN_CUDA_CHECK_LAUNCH();
    }
}

void Assembly::Impl::ensure_blocks_allocated() {
    const std::size_t count = 9 * static_cast<std::size_t>(num_cells) * m * m;
    if (blocks.size() != count) {
        if (blocks.size()) release(blocks);
        blocks.resize(count);
        track(blocks);
    }
}

float* Assembly::device_element_blocks() {
    Impl& d = *impl_;
    d.ensure_blocks_allocated();
    // The caller writes the blocks: sum() reads them from now on.
    d.source = Impl::BlockSource::Stored;
    d.blocks_hold_linear = false;
    return d.blocks.data();
}

BinBcsrMatrixView<float> Assembly::device_matrix() const {
    const Impl& d = *impl_;
    BinBcsrPatternView p{d.layout.num_nodes(), d.bins,
                         d.bin_offsets.data(), d.columns.data(),
                         d.row_counts.data(),  d.pattern_generation};
    return {p, const_cast<float*>(d.values.data()), const_cast<float*>(d.diag.data())};
}

NodeCellsView Assembly::device_node_cells() const {
    const Impl& d = *impl_;
    return {d.layout,
            {d.topo.vertex_offsets.data(), d.topo.vertex_cells.data()},
            {d.topo.edge_offsets.data(), d.topo.edge_cells.data()},
            {d.topo.face_offsets.data(), d.topo.face_cells.data()}};
}

CellNodesView Assembly::device_cell_nodes() const {
    const Impl& d = *impl_;
    return {d.cell_nodes.data(), d.m, d.num_cells};
}

const NodeLayout& Assembly::layout() const {
    return impl_->layout;
}

Topology Assembly::download_topology() const {
    return cuda::download_topology(impl_->topo);
}

Assembly::~Assembly() = default;

void Assembly::build_pattern() {
    Impl& d = *impl_;
    const NodeLayout& L = d.layout;
    const Index rows = L.num_nodes();
    d.bins = (rows + kWarp - 1) / kWarp;
    StageTimer timer;
    // 1. exact counts
    timer.start();
    DeviceBuffer<Index> vertex_count(L.num_vertices), edge_count(L.order >= 2 ? L.num_edges : 0),
        face_count(L.order >= 3 ? L.num_faces : 0);
    d.held += vertex_count.bytes() + edge_count.bytes() + face_count.bytes();
    d.peak = std::max(d.peak, d.held);
    const Index most =
        std::max(std::max(L.num_vertices, L.num_edges), std::max(L.num_faces, Index(1)));
    init_simplex_counts<<<grid_for(most, 256), 256>>>(vertex_count.data(), edge_count.data(),
                                                      face_count.data(), L.num_vertices,
                                                      L.num_edges, L.num_faces, L.order);
    EDN_CUDA_CHECK_LAUNCH();
    if (L.num_edges)
        count_from_edges<<<grid_for(L.num_edges, 256), 256>>>(d.topo.edges.data(), L.num_edges,
                                                              L.order, vertex_count.data());
    if (L.order >= 2 && L.num_faces)
        count_from_faces<<<grid_for(L.num_faces, 256), 256>>>(
            d.topo.faces.data(), d.topo.face_edges.data(), L.num_faces, L.order,
            vertex_count.data(), edge_count.data());
    if (L.order >= 2 && d.num_cells)
        count_from_cells<<<grid_for(d.num_cells, 256), 256>>>(
            d.topo.cells.data(), d.topo.cell_edges.data(), d.topo.cell_faces.data(), d.num_cells,
            L.order, vertex_count.data(), edge_count.data(), face_count.data());
    d.pattern_generation = new_pattern_generation();
    d.row_counts.resize(rows);
    d.track(d.row_counts);
    if (rows)
        expand_row_counts<<<grid_for(rows, 256), 256>>>(vertex_count.data(), edge_count.data(),
                                                        face_count.data(), L, d.row_counts.data());
    EDN_CUDA_CHECK_LAUNCH();
    d.times.count = timer.stop();
    d.held -= vertex_count.bytes() + edge_count.bytes() + face_count.bytes();
    vertex_count = {}, edge_count = {}, face_count = {};

    // 2. bin offsets: sizes, exclusive scan, read back the total
    timer.start();
    d.bin_offsets.resize(static_cast<std::size_t>(d.bins) + 1);
    d.track(d.bin_offsets);
    EDN_CUDA_CHECK(cudaMemsetAsync(d.bin_offsets.data(), 0, d.bin_offsets.bytes()));
    if (d.bins)
        bin_sizes_kernel<<<grid_for(static_cast<std::int64_t>(d.bins) * kWarp, 256), 256>>>(
            d.row_counts.data(), rows, d.bins, d.bin_offsets.data());
    EDN_CUDA_CHECK_LAUNCH();
    std::size_t temp_bytes = 0;
    EDN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, d.bin_offsets.data(),
                                                 d.bin_offsets.data(), d.bins + 1));
    {
        DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
        d.peak = std::max(d.peak, d.held + temp.bytes());
        EDN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, d.bin_offsets.data(),
                                                     d.bin_offsets.data(), d.bins + 1));
    }
    EDN_CUDA_CHECK(cudaMemcpy(&d.num_slots, d.bin_offsets.data() + d.bins, sizeof(Index),
                              cudaMemcpyDeviceToHost));
    d.times.bin_offsets = timer.stop();

    // 3. one exact allocation
    timer.start();
    d.columns.resize(d.num_slots);
    d.track(d.columns);
    d.values.resize(9 * static_cast<std::size_t>(d.num_slots));
    d.track(d.values);
    d.diag.resize(9 * static_cast<std::size_t>(rows));
    d.track(d.diag);
    d.times.alloc = timer.stop();

    // 4. columns
    timer.start();
    d.reset_counter();
    if (d.bins)
        fill_columns_kernel<<<persistent_grid(d.bins, 128), 128>>>(
            d.node_cells(), d.cell_nodes.data(), d.m, d.bin_offsets.data(), d.row_counts.data(),
            rows, d.bins, d.counter.data(), d.columns.data());
    EDN_CUDA_CHECK_LAUNCH();
    d.times.columns = timer.stop();
}

void Assembly::set_reproducible_maps(bool on) {
    impl_->reproducible_maps = on;
}

void Assembly::build_per_entry_map() {
    Impl& d = *impl_;
    const Index rows = d.layout.num_nodes();
    const std::int64_t sources = static_cast<std::int64_t>(d.num_cells) * d.m * d.m;
    EDN_VERIFY(sources <= std::numeric_limits<Index>::max(), ErrorCode::OutOfMemory,
               "per-entry map too large: " << sources << " element blocks");
    const std::int64_t targets = static_cast<std::int64_t>(d.num_slots) + rows;
    StageTimer timer;
    timer.start();
    if (d.map_offsets.size()) d.release(d.map_offsets);
    if (d.map_sources.size()) d.release(d.map_sources);
    d.map_offsets.resize(targets + 1);
    d.track(d.map_offsets);
    d.map_sources.resize(sources);
    d.track(d.map_sources);
    EDN_CUDA_CHECK(cudaMemsetAsync(d.map_offsets.data(), 0, d.map_offsets.bytes()));
    if (sources)
        map_count_kernel<<<grid_for(sources, 256), 256>>>(
            d.cell_nodes.data(), d.num_cells, d.m, d.bin_offsets.data(), d.columns.data(),
            d.row_counts.data(), d.num_slots, d.map_offsets.data());
    EDN_CUDA_CHECK_LAUNCH();
    std::size_t temp_bytes = 0;
    EDN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, d.map_offsets.data(),
                                                 d.map_offsets.data(), targets + 1));
    {
        // The fill cursor reuses the scan's temporary lifetime: both are small next to the map.
        DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
        DeviceBuffer<Index> cursor(targets + 1);
        d.peak = std::max(d.peak, d.held + temp.bytes() + cursor.bytes());
        EDN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, d.map_offsets.data(),
                                                     d.map_offsets.data(), targets + 1));
        EDN_CUDA_CHECK(cudaMemcpyAsync(cursor.data(), d.map_offsets.data(), cursor.bytes(),
                                       cudaMemcpyDeviceToDevice));
        if (sources)
            map_fill_kernel<<<grid_for(sources, 256), 256>>>(
                d.cell_nodes.data(), d.num_cells, d.m, d.bin_offsets.data(), d.columns.data(),
                d.row_counts.data(), d.num_slots, cursor.data(), d.map_sources.data());
        EDN_CUDA_CHECK_LAUNCH();
        if (sources && d.reproducible_maps)
            map_sort_kernel<<<grid_for(targets, 256), 256>>>(d.map_offsets.data(), targets,
                                                             d.map_sources.data());
        EDN_CUDA_CHECK_LAUNCH();
        EDN_CUDA_CHECK(cudaDeviceSynchronize());
    }
    d.times.maps = timer.stop();
}

void Assembly::Impl::materialize_linear_blocks() {
    const std::int64_t count = static_cast<std::int64_t>(num_cells) * m * m;
    ensure_blocks_allocated();
    if (count)
        element_blocks_kernel<<<grid_for(count, 256), 256>>>(
            topo.cells.data(), positions.data(), num_cells, m, linear_lame, blocks.data());
    EDN_CUDA_CHECK_LAUNCH();
    blocks_hold_linear = true;
}

void Assembly::compute_element_blocks(const LameParameters<float>& lame) {
    // Linear elasticity needs no stored blocks: the per-entry summation evaluates each block from
    // the cell geometry where it is summed (so the element array, 5.6x the matrix at p = 1, is
    // never allocated). Per-simplex summation materialises them on first use.
    Impl& d = *impl_;
    d.source = Impl::BlockSource::Linear;
    d.linear_lame = lame;
    d.blocks_hold_linear = false;
    d.times.element = 0;
}

void Assembly::sum(SummationMethod method, const LameParameters<float>& lame) {
    Impl& d = *impl_;
    const Index rows = d.layout.num_nodes();
    StageTimer timer;
    timer.start();
    switch (method) {
    case SummationMethod::PerEntry:
        EDN_VERIFY(d.map_sources.size() || d.num_cells == 0, ErrorCode::Usage,
                   "per-entry summation needs build_per_entry_map() first");
        if (d.bins) {
            if (d.source == Impl::BlockSource::Linear) {
                switch (d.m) {
                case 4:
                    d.launch_sum_per_entry(LinearBlocks<4>{d.topo.cells.data(), d.positions.data(),
                                                           d.integrals.data(), d.linear_lame},
                                           4);
                    break;
                case 10:
                    d.launch_sum_per_entry(LinearBlocks<10>{d.topo.cells.data(), d.positions.data(),
                                                            d.integrals.data(), d.linear_lame},
                                           10);
                    break;
                default:
                    d.launch_sum_per_entry(LinearBlocks<20>{d.topo.cells.data(), d.positions.data(),
                                                            d.integrals.data(), d.linear_lame},
                                           20);
                    break;
                }
            } else {
                EDN_VERIFY(d.blocks.size() || d.num_cells == 0, ErrorCode::Usage,
                           "per-entry summation needs element blocks (compute_element_blocks() "
                           "or device_element_blocks())");
                d.launch_sum_per_entry(StoredBlocks{d.blocks.data()}, 0);
            }
        }
        break;
    case SummationMethod::PerSimplex:
        if (d.source == Impl::BlockSource::Linear && !d.blocks_hold_linear)
            d.materialize_linear_blocks();
        d.reset_counter();
        EDN_CUDA_CHECK(cudaMemsetAsync(d.values.data(), 0, d.values.bytes()));
        EDN_CUDA_CHECK(cudaMemsetAsync(d.diag.data(), 0, d.diag.bytes()));
        if (d.bins)
            sum_per_simplex_kernel<<<persistent_grid(d.bins, 128), 128>>>(
                d.node_cells(), d.cell_nodes.data(), d.m, d.blocks.data(), d.bin_offsets.data(),
                d.columns.data(), d.row_counts.data(), rows, d.bins, d.counter.data(),
                d.values.data(), d.diag.data());
        break;
    case SummationMethod::Inline:
        EDN_VERIFY(d.layout.order == 1, ErrorCode::Unsupported,
                   "inline summation is implemented for p = 1 only");
        d.reset_counter();
        EDN_CUDA_CHECK(cudaMemsetAsync(d.values.data(), 0, d.values.bytes()));
        EDN_CUDA_CHECK(cudaMemsetAsync(d.diag.data(), 0, d.diag.bytes()));
        if (d.bins)
            sum_inline_p1_kernel<<<persistent_grid(d.bins, 128), 128>>>(
                d.node_cells(), d.topo.cells.data(), d.positions.data(), lame, d.bin_offsets.data(),
                d.columns.data(), d.row_counts.data(), rows, d.bins, d.counter.data(),
                d.values.data(), d.diag.data());
        break;
    }
    EDN_CUDA_CHECK_LAUNCH();
    d.times.summation = timer.stop();
}

/// The SpMV arrays of an assembly.
struct SpmvOperands {
    const Index *bin_offsets, *columns, *row_counts;
    const float *values, *diag;
    Index rows, bins;
    int sms;
};

template <int K, bool kStream>
void launch_spmv_bins(const SpmvOperands& o, int& grid_cache, const float* x, float* y) {
    if (grid_cache == 0) {
        int per_sm = 0;
        EDN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, spmv_bins_kernel<K, kStream>, K * kWarp, 0));
        grid_cache = std::max(1, per_sm * o.sms);
    }
    spmv_bins_kernel<K, kStream><<<std::min<Index>(o.bins, grid_cache), K * kWarp>>>(
        o.bin_offsets, o.columns, o.row_counts, o.values, o.diag, o.rows, o.bins, x, y);
}

void Assembly::spmv_device(const float* x, float* y) const {
    Impl& d = *impl_;
    // Warps per bin and load policy from the matrix's shape (H100 measurements, bench/README.md):
    // short rows (p = 1, ~14 blocks) are best with 2 warps per bin, long rows with 4; the matrix
    // stream read evict-first (so x stays in L2) pays off once the matrix is larger than what L2
    // keeps between calls; with the node slot order (little padding) that holds for p = 3 too.
    // EDN_SPMV_VARIANT = K (1, 2, 4, 8) + 10 for streaming loads overrides it (measurements).
    static const int forced = [] {
        const char* v = std::getenv("EDN_SPMV_VARIANT");
        return v ? std::atoi(v) : 0;
    }();
    int variant = forced;
    if (variant == 0) {
        const double width =
            d.layout.num_nodes() > 0 ? double(d.num_slots) / double(d.layout.num_nodes()) : 0.0;
        const bool large = matrix_bytes() > (std::size_t(32) << 20);
        variant = width <= 20 ? (large ? 12 : 4) : (large ? 14 : 4);
    }
    if (d.bins) {
        const SpmvOperands o{d.bin_offsets.data(),
                             d.columns.data(),
                             d.row_counts.data(),
                             d.values.data(),
                             d.diag.data(),
                             d.layout.num_nodes(),
                             d.bins,
                             d.sms};
        switch (variant) {
        case 1:
            launch_spmv_bins<1, false>(o, d.spmv_grid, x, y);
            break;
        case 2:
            launch_spmv_bins<2, false>(o, d.spmv_grid, x, y);
            break;
        case 8:
            launch_spmv_bins<8, false>(o, d.spmv_grid, x, y);
            break;
        case 11:
            launch_spmv_bins<1, true>(o, d.spmv_grid, x, y);
            break;
        case 12:
            launch_spmv_bins<2, true>(o, d.spmv_grid, x, y);
            break;
        case 14:
            launch_spmv_bins<4, true>(o, d.spmv_grid, x, y);
            break;
        case 18:
            launch_spmv_bins<8, true>(o, d.spmv_grid, x, y);
            break;
        default:
            launch_spmv_bins<4, false>(o, d.spmv_grid, x, y);
            break;
        }
    }
    EDN_CUDA_CHECK_LAUNCH();
}

std::vector<float> Assembly::spmv(const std::vector<float>& x) const {
    const std::size_t n = 3 * static_cast<std::size_t>(num_rows());
    EDN_VERIFY(x.size() == n, ErrorCode::Usage,
               "spmv: x has " << x.size() << " entries, expected " << n);
    DeviceBuffer<float> dx(n), dy(n);
    std::vector<float> y(n);
    if (n == 0) return y;
    EDN_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice));
    spmv_device(dx.data(), dy.data());
    EDN_CUDA_CHECK(cudaMemcpy(y.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
    return y;
}

BinBcsrPattern Assembly::download_pattern() const {
    const Impl& d = *impl_;
    BinBcsrPattern p;
    p.num_rows = d.layout.num_nodes();
    p.row_counts.resize(p.num_rows);
    p.bin_offsets.resize(d.bins + 1);
    p.columns.resize(d.num_slots);
    if (p.num_rows)
        EDN_CUDA_CHECK(cudaMemcpy(p.row_counts.data(), d.row_counts.data(), d.row_counts.bytes(),
                                  cudaMemcpyDeviceToHost));
    EDN_CUDA_CHECK(cudaMemcpy(p.bin_offsets.data(), d.bin_offsets.data(), d.bin_offsets.bytes(),
                              cudaMemcpyDeviceToHost));
    if (d.num_slots)
        EDN_CUDA_CHECK(cudaMemcpy(p.columns.data(), d.columns.data(), d.columns.bytes(),
                                  cudaMemcpyDeviceToHost));
    return p;
}

BinBcsrMatrix<float> Assembly::download_matrix(const BinBcsrPattern& pattern) const {
    const Impl& d = *impl_;
    BinBcsrMatrix<float> k(pattern);
    if (d.values.size())
        EDN_CUDA_CHECK(
            cudaMemcpy(k.values.data(), d.values.data(), d.values.bytes(), cudaMemcpyDeviceToHost));
    if (d.diag.size())
        EDN_CUDA_CHECK(
            cudaMemcpy(k.diag.data(), d.diag.data(), d.diag.bytes(), cudaMemcpyDeviceToHost));
    return k;
}

PerEntryMap Assembly::download_per_entry_map() const {
    const Impl& d = *impl_;
    PerEntryMap map;
    map.num_slots = d.num_slots;
    map.num_rows = d.layout.num_nodes();
    map.offsets.resize(d.map_offsets.size());
    map.sources.resize(d.map_sources.size());
    if (map.offsets.size())
        EDN_CUDA_CHECK(cudaMemcpy(map.offsets.data(), d.map_offsets.data(), d.map_offsets.bytes(),
                                  cudaMemcpyDeviceToHost));
    if (map.sources.size())
        EDN_CUDA_CHECK(cudaMemcpy(map.sources.data(), d.map_sources.data(), d.map_sources.bytes(),
                                  cudaMemcpyDeviceToHost));
    return map;
}

const AssemblyTimes& Assembly::times() const {
    return impl_->times;
}
std::size_t Assembly::matrix_bytes() const {
    const Impl& d = *impl_;
    return d.values.bytes() + d.diag.bytes() + d.columns.bytes() + d.bin_offsets.bytes();
}
std::int64_t Assembly::nnz_blocks() const {
    const Impl& d = *impl_;
    if (d.nnz_cache < 0) {
        std::vector<Index> counts(d.row_counts.size());
        if (!counts.empty())
            EDN_CUDA_CHECK(cudaMemcpy(counts.data(), d.row_counts.data(), d.row_counts.bytes(),
                                      cudaMemcpyDeviceToHost));
        std::int64_t total = d.layout.num_nodes();
        for (Index c : counts) total += c;
        d.nnz_cache = total;
    }
    return d.nnz_cache;
}
std::size_t Assembly::map_bytes() const {
    return impl_->map_offsets.bytes() + impl_->map_sources.bytes();
}
std::size_t Assembly::element_bytes() const {
    return impl_->blocks.bytes();
}
std::size_t Assembly::mesh_bytes() const {
    const Impl& d = *impl_;
    return d.topo.bytes() + d.positions.bytes() + d.cell_nodes.bytes() + d.row_counts.bytes();
}
std::size_t Assembly::peak_bytes() const {
    return impl_->peak;
}
Index Assembly::num_rows() const {
    return impl_->layout.num_nodes();
}

} // namespace edn::cuda
