#pragma once
/// The per-entry summation kernel (Mueller-Roemer et al. 2018, per-entry), templated on where a
/// block comes from: stored element blocks, linear blocks from the cell geometry (summation.cu),
/// or blocks from each quadrature point's tangent frame (inline_summation.cuh).
/// A Source has `prepare(float* smem, int)` (stage shared data) and `add(Index s, float acc[9])`
/// (add element block s = (t * m + a) * m + b, the full layout, to acc).
#include "cuda/assembly_impl.cuh"

#include <algorithm>

namespace edn::cuda::detail {

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

/// Per-entry summation of every target, blocks from `src`; `nodes` > 0 stages that many nodes'
/// reference integrals in shared memory.
template <class Source>
void launch_sum_per_entry(const PerEntryMapView& map, Source src, int nodes,
                          BinBcsrMatrixView<float> out) {
    const Index bins = out.pattern.num_bins;
    if (bins == 0) return;
    constexpr int kThreads = 128;
    const std::size_t smem = sizeof(float) * 9 * nodes * nodes;
    int per_sm = 0;
    EDN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, sum_per_entry_bins_kernel<Source>, kThreads, smem));
    const Index grid = std::min<Index>(bins, std::max(1, per_sm) * multiprocessors());
    sum_per_entry_bins_kernel<Source>
        <<<grid, kThreads, smem>>>(map.offsets, map.sources, src, out.pattern.bin_offsets, bins,
                                   map.num_slots, out.pattern.num_rows, out.values, out.diag);
}

} // namespace edn::cuda::detail
