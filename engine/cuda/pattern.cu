// The pattern stages on the device (twins of cpu/pattern.cpp, declared in
// sparse/bin_bcsr_pattern.hpp): exact row counts per simplex (Eq. 6), bin widths and an exclusive
// scan, columns. cuda::Assembly::build_pattern (assembly.cu) allocates exactly between them.
#include "cuda/assembly_impl.cuh"
#include "cuda/read_back.cuh"

#include <cub/device/device_scan.cuh>

namespace edn::cuda {
namespace {

using detail::grid_for;
using detail::kWarp;
using detail::next_bin;
using detail::NodeCellsDevice;
using detail::persistent_grid;

__device__ __forceinline__ Index binomial_device(int n, int k) {
    if (k < 0 || n < 0 || k > n) return 0;
    Index r = 1;
    for (int i = 1; i <= k; ++i) r = r * (n - k + i) / i;
    return r;
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

/// One lane per row; the row's sorted columns are built by insertion (a binary search, then a
/// shift) in its warp's shared stage when the bin is at most kStageWidth slots wide, else
/// directly in its strided slots (the row owns them; its lane's column of the stage too); then
/// padded with the row index (the 187K bunny's p = 1 pattern: 152 us in global memory, 130 in
/// the stage, H100; the rest is the gathers of the incident cells' nodes).
constexpr int kStageWidth = 48, kColumnsBlock = 128;
__global__ void __launch_bounds__(kColumnsBlock)
    fill_columns_kernel(NodeCellsDevice nc, const Index* cell_nodes, int m,
                        const Index* bin_offsets, const Index* row_counts, Index rows, Index bins,
                        unsigned int* counter, Index* columns) {
    __shared__ Index stage[kColumnsBlock / kWarp][kStageWidth * kWarp];
    const int lane = threadIdx.x & 31;
    for (Index bin = next_bin(counter, lane); bin < bins; bin = next_bin(counter, lane)) {
        const Index row = bin * kWarp + lane;
        const Index begin = bin_offsets[bin];
        const Index width = (bin_offsets[bin + 1] - begin) / kWarp;
        const bool staged = width <= kStageWidth; // (the same for the whole warp)
        Index* out = staged ? stage[threadIdx.x / kWarp] + lane : columns + begin + lane;
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
        Index* to = columns + begin + lane;
        if (staged)
            for (Index j = 0; j < width; ++j) to[j * kWarp] = j < filled ? out[j * kWarp] : pad;
        else
            for (Index j = filled; j < width; ++j) to[j * kWarp] = pad;
    }
}
} // namespace

void bin_bcsr_row_counts(const TopologyView& topology, const NodeLayout& layout, Index* row_counts,
                         std::size_t* scratch_bytes) {
    const NodeLayout& L = layout;
    const Index rows = L.num_nodes();
    const Index num_cells = topology.num_cells;
    DeviceBuffer<Index> vertex_count(L.num_vertices), edge_count(L.order >= 2 ? L.num_edges : 0),
        face_count(L.order >= 3 ? L.num_faces : 0);
    if (scratch_bytes)
        *scratch_bytes = vertex_count.bytes() + edge_count.bytes() + face_count.bytes();
    const Index most =
        std::max(std::max(L.num_vertices, L.num_edges), std::max(L.num_faces, Index(1)));
    init_simplex_counts<<<grid_for(most, 256), 256>>>(vertex_count.data(), edge_count.data(),
                                                      face_count.data(), L.num_vertices,
                                                      L.num_edges, L.num_faces, L.order);
    EDN_CUDA_CHECK_LAUNCH();
    if (L.num_edges)
        count_from_edges<<<grid_for(L.num_edges, 256), 256>>>(
            reinterpret_cast<const int2*>(topology.edges), L.num_edges, L.order,
            vertex_count.data());
    if (L.order >= 2 && L.num_faces)
        count_from_faces<<<grid_for(L.num_faces, 256), 256>>>(
            topology.faces, topology.face_edges, L.num_faces, L.order, vertex_count.data(),
            edge_count.data());
    if (L.order >= 2 && num_cells)
        count_from_cells<<<grid_for(num_cells, 256), 256>>>(
            reinterpret_cast<const int4*>(topology.cells), topology.cell_edges, topology.cell_faces,
            num_cells, L.order, vertex_count.data(), edge_count.data(), face_count.data());
    if (rows)
        expand_row_counts<<<grid_for(rows, 256), 256>>>(vertex_count.data(), edge_count.data(),
                                                        face_count.data(), L, row_counts);
    EDN_CUDA_CHECK_LAUNCH();
}

Index bin_bcsr_bin_offsets(const Index* row_counts, Index num_rows, Index* bin_offsets,
                           std::size_t* scratch_bytes, bool read_total) {
    const Index bins = (num_rows + kWarp - 1) / kWarp;
    EDN_CUDA_CHECK(
        cudaMemsetAsync(bin_offsets, 0, sizeof(Index) * (static_cast<std::size_t>(bins) + 1)));
    if (bins)
        bin_sizes_kernel<<<grid_for(static_cast<std::int64_t>(bins) * kWarp, 256), 256>>>(
            row_counts, num_rows, bins, bin_offsets);
    EDN_CUDA_CHECK_LAUNCH();
    std::size_t temp_bytes = 0;
    EDN_CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, bin_offsets, bin_offsets, bins + 1));
    {
        DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
        if (scratch_bytes) *scratch_bytes = temp.bytes();
        EDN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, bin_offsets,
                                                     bin_offsets, bins + 1));
    }
    if (!read_total) return -1;
    Index total = 0;
    read_back(bin_offsets + bins, &total);
    return total;
}

void fill_bin_bcsr_columns(const TopologyView& topology, const Index* cell_nodes,
                           const NodeLayout& layout, const BinBcsrPatternView& pattern,
                           Index* columns, unsigned int* bin_counter) {
    const NodeCellsDevice node_cells{layout,
                                     topology.vertex_cells.offsets,
                                     topology.vertex_cells.indices,
                                     topology.edge_cells.offsets,
                                     topology.edge_cells.indices,
                                     topology.face_cells.offsets,
                                     topology.face_cells.indices};
    EDN_CUDA_CHECK(cudaMemsetAsync(bin_counter, 0, sizeof(unsigned int)));
    if (pattern.num_bins)
        fill_columns_kernel<<<persistent_grid(pattern.num_bins, kColumnsBlock), kColumnsBlock>>>(
            node_cells, cell_nodes, nodes_per_cell(layout.order), pattern.bin_offsets,
            pattern.row_counts, pattern.num_rows, pattern.num_bins, bin_counter, columns);
    EDN_CUDA_CHECK_LAUNCH();
}

} // namespace edn::cuda
