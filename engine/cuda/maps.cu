// The per-entry map stage on the device (twin of cpu::build_per_entry_map, cpu/maps.cpp; declared
// in sparse/summation.hpp): per stored block, the element blocks that sum into it (count, scan,
// fill; optionally sorted for reproducible sums).
#include "cuda/assembly_impl.cuh"
#include "sparse/upper_blocks.hpp"

#include <cub/device/device_scan.cuh>

namespace edn::cuda {
namespace {

using detail::find_slot;
using detail::grid_for;

// ---- per-entry maps -----------------------------------------------------------------------------

/// The target of element block s = (t, a, b): the slot of (node a, node b) of cell t, or
/// num_slots + row for a diagonal block.
__device__ Index map_target(std::int64_t s, const Index* cell_nodes, int m,
                            const Index* bin_offsets, const Index* columns, const Index* row_counts,
                            Index num_slots) {
    const Index t = static_cast<Index>(s / (m * m));
    const int ab = static_cast<int>(s % (m * m));
    const Index row = cell_nodes[static_cast<std::int64_t>(t) * m + ab / m];
    const Index col = cell_nodes[static_cast<std::int64_t>(t) * m + ab % m];
    return row == col ? num_slots + row : find_slot(bin_offsets, columns, row_counts, row, col);
}

/// One thread per element block (t, a, b): counts the sources of its target.
__global__ void map_count_kernel(const Index* cell_nodes, Index num_cells, int m,
                                 const Index* bin_offsets, const Index* columns,
                                 const Index* row_counts, Index num_slots, Index* counts) {
    const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= static_cast<std::int64_t>(num_cells) * m * m) return;
    const Index target = map_target(s, cell_nodes, m, bin_offsets, columns, row_counts, num_slots);
    atomicAdd(&counts[target], 1);
}

__global__ void map_fill_kernel(const Index* cell_nodes, Index num_cells, int m,
                                const Index* bin_offsets, const Index* columns,
                                const Index* row_counts, Index num_slots, Index* cursor,
                                Index* sources) {
    const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= static_cast<std::int64_t>(num_cells) * m * m) return;
    const Index target = map_target(s, cell_nodes, m, bin_offsets, columns, row_counts, num_slots);
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

/// The sources of a map from the full element layout to the upper one, or back.
__global__ void map_recode_kernel(Index* sources, std::int64_t count, int m, bool to_upper) {
    const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e < count)
        sources[e] = to_upper ? upper_source(sources[e], m) : full_source(sources[e], m);
}

} // namespace

void recode_per_entry_map(Index* sources, std::int64_t count, int m, bool to_upper) {
    if (count)
        map_recode_kernel<<<grid_for(count, 256), 256>>>(sources, count, m, to_upper);
    EDN_CUDA_CHECK_LAUNCH();
}

void build_per_entry_map(const BinBcsrPatternView& pattern, const CellNodesView& cell_nodes,
                         Index num_slots, Index* offsets, Index* sources, bool sorted,
                         std::size_t* scratch_bytes) {
    const int m = cell_nodes.per_cell;
    const Index num_cells = cell_nodes.num_cells;
    const std::int64_t num_sources = static_cast<std::int64_t>(num_cells) * m * m;
    const std::int64_t targets = static_cast<std::int64_t>(num_slots) + pattern.num_rows;
    EDN_CUDA_CHECK(cudaMemsetAsync(offsets, 0, sizeof(Index) * (targets + 1)));
    if (num_sources)
        map_count_kernel<<<grid_for(num_sources, 256), 256>>>(
            cell_nodes.nodes, num_cells, m, pattern.bin_offsets, pattern.columns,
            pattern.row_counts, num_slots, offsets);
    EDN_CUDA_CHECK_LAUNCH();
    std::size_t temp_bytes = 0;
    EDN_CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, offsets, offsets, targets + 1));
    {
        // The fill cursor reuses the scan's temporary lifetime: both are small next to the map.
        DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
        DeviceBuffer<Index> cursor(targets + 1);
        if (scratch_bytes) *scratch_bytes = temp.bytes() + cursor.bytes();
        EDN_CUDA_CHECK(
            cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, offsets, offsets, targets + 1));
        EDN_CUDA_CHECK(
            cudaMemcpyAsync(cursor.data(), offsets, cursor.bytes(), cudaMemcpyDeviceToDevice));
        if (num_sources)
            map_fill_kernel<<<grid_for(num_sources, 256), 256>>>(
                cell_nodes.nodes, num_cells, m, pattern.bin_offsets, pattern.columns,
                pattern.row_counts, num_slots, cursor.data(), sources);
        EDN_CUDA_CHECK_LAUNCH();
        if (num_sources && sorted)
            map_sort_kernel<<<grid_for(targets, 256), 256>>>(offsets, targets, sources);
        EDN_CUDA_CHECK_LAUNCH();
        EDN_CUDA_CHECK(cudaDeviceSynchronize());
    }
}

} // namespace edn::cuda
