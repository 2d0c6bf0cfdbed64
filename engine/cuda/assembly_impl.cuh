#pragma once
// The device state of cuda::Assembly and the helpers its stages share (.cu files only). The
// stages are free functions, one file each: topology.cu, pattern.cu (counts, bins, columns),
// maps.cu (per-entry maps), summation.cu (element blocks, summation), spmv.cu (products);
// assembly.cu is the owner that allocates, times and tracks peak bytes around them.

#include "cuda/cuda_assembly.hpp"
#include "cuda/cuda_check.cuh"
#include "cuda/device_topology.cuh"

#include <algorithm>
#include <memory>
#include <vector>

namespace edn::cuda {
namespace detail {

inline constexpr int kWarp = 32;
/// Largest nodes per cell (p = 3).
inline constexpr int kMaxNodes = 20;

inline unsigned int grid_for(std::int64_t n, int block) {
    return static_cast<unsigned int>((n + block - 1) / block);
}

/// Multiprocessors of the current device (looked up once per process).
inline int multiprocessors() {
    static const int sms = [] {
        int device = 0, n = 0;
        EDN_CUDA_CHECK(cudaGetDevice(&device));
        EDN_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device));
        return n;
    }();
    return sms;
}

/// Enough resident warps to cover the device for warp-dynamic kernels.
inline unsigned int persistent_grid(Index bins, int block) {
    const std::int64_t warps_needed = bins;
    const std::int64_t warps_resident =
        static_cast<std::int64_t>(multiprocessors()) * 64; // 2048 threads / SM
    const std::int64_t warps = std::min(warps_needed, warps_resident);
    return static_cast<unsigned int>(
        std::max<std::int64_t>(1, (warps * kWarp + block - 1) / block));
}

/// Listing 1: a warp takes the next bin from a global counter.
__device__ __forceinline__ Index next_bin(unsigned int* counter, int lane) {
    unsigned int bin = 0;
    if (lane == 0) bin = atomicAdd(counter, 1u);
    return static_cast<Index>(__shfl_sync(0xffffffffu, bin, 0));
}

/// node -> incident cells on the device (the kernels' form of NodeCellsView).
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

/// The kernels' form of a NodeCellsView (device pointers).
inline NodeCellsDevice node_cells_device(const NodeCellsView& v) {
    return {v.layout,
            v.vertex_cells.offsets,
            v.vertex_cells.indices,
            v.edge_cells.offsets,
            v.edge_cells.indices,
            v.face_cells.offsets,
            v.face_cells.indices};
}

/// Slot of block (row, col) of a built pattern (binary search in the row's sorted columns).
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
    StageTimer(const StageTimer&) = delete;
    StageTimer& operator=(const StageTimer&) = delete;
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

/// The reference integrals S_ab of `order` (m*m*9 floats) into `out` (kMaxNodes^2 * 9 floats)
/// and into the constant memory the element kernels of summation.cu read.
void set_reference_integrals(int order, float* out);

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

/// Listing 1's row walk: each lane takes a row of the bins the warp draws from `counter` and calls
/// f(row, t) for every cell t incident to the row's node, in order.
template <class F>
__device__ inline void for_each_row_cell(const NodeCellsDevice& nc, unsigned int* counter,
                                         Index bins, Index rows, F&& f) {
    const int lane = threadIdx.x & 31;
    for (Index bin = next_bin(counter, lane); bin < bins; bin = next_bin(counter, lane)) {
        const Index row = bin * kWarp + lane;
        if (row >= rows) continue;
        Index cb, ce;
        const Index* list;
        nc.range(row, cb, ce, list);
        for (Index e = cb; e < ce; ++e) f(row, list[e]);
    }
}

} // namespace detail

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
    BinWidths widths;                    // of the bins (bin_widths())
    std::uint64_t widths_generation = 0; // pattern_generation they were found for
    mutable std::int64_t nnz_cache = -1; // nnz_blocks(), once computed
    // maps and element blocks
    DeviceBuffer<Index> map_offsets, map_sources;
    DeviceBuffer<float> blocks;
    /// Of `blocks`, and the numbering of map_sources (recoded when it changes).
    BlockLayout block_layout = BlockLayout::Full;
    DeviceBuffer<unsigned int> counter;
    DeviceBuffer<float> integrals; // reference integrals S_ab (m*m*9) for the fused kernels
    /// Where sum() takes element blocks from: `blocks` as written (device_element_blocks()), or
    /// linear elasticity evaluated inside the summation (compute_element_blocks()).
    enum class BlockSource { Stored, Linear } source = BlockSource::Stored;
    LameParameters<float> linear_lame{};
    bool blocks_hold_linear = false; // `blocks` were filled from linear_lame (per-simplex path)
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
    detail::NodeCellsDevice node_cells() const {
        return {layout,
                topo.vertex_offsets.data(),
                topo.vertex_cells.data(),
                topo.edge_offsets.data(),
                topo.edge_cells.data(),
                topo.face_offsets.data(),
                topo.face_cells.data()};
    }
    /// Points the layout's node slot order at the device topology's (kernels use `layout`).
    void use_device_slots() { layout = with_device_slots(layout, topo); }
    void finish_setup(const TetMesh& mesh, int order);
    void ensure_blocks_allocated();
    /// Blocks and map in `to` (the map recoded in place when it is built and differs).
    void set_block_layout(BlockLayout to);
    void materialize_linear_blocks();
    void reset_counter() {
        EDN_CUDA_CHECK(cudaMemsetAsync(counter.data(), 0, sizeof(unsigned int)));
    }
    /// The bins' widths (read back once per pattern).
    BinWidths bin_widths() {
        if (widths_generation != pattern_generation || pattern_generation == 0) {
            std::vector<Index> offsets(static_cast<std::size_t>(bins) + 1, 0);
            if (bins)
                EDN_CUDA_CHECK(cudaMemcpy(offsets.data(), bin_offsets.data(),
                                          offsets.size() * sizeof(Index), cudaMemcpyDeviceToHost));
            widths = edn::bin_widths(offsets);
            widths_generation = pattern_generation;
        }
        return widths;
    }
    /// The per-entry map as a view (device pointers).
    PerEntryMapView map_view() const {
        return {num_slots, layout.num_nodes(), map_offsets.data(), map_sources.data()};
    }
};

} // namespace edn::cuda
