// CUDA twin of cpu::build_per_entry_map (sparse/summation.hpp): per stored block, the element
// blocks that sum into it (count, scan, fill; optionally sorted for reproducible sums).
#include "cuda/assembly_impl.cuh"

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

} // namespace

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
    detail::StageTimer timer;
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

} // namespace edn::cuda
