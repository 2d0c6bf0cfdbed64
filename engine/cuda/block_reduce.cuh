#pragma once
// Fixed-order block and grid reductions in double for CUDA kernels (.cu files only): the same
// order on every run, so results repeat bit for bit. Used by the PCG and the simulation backend.

#include "core/types.hpp"

#include <cstdint>
#include <cuda_runtime.h>

namespace edn::cuda {

inline constexpr int kReduceWarp = 32;

__device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

/// Sum of v over the block (kBlock threads: warp shuffles, then the warps in order), valid in
/// thread 0. Every thread of the block must call it.
template <int kBlock> __device__ inline double block_sum(double v) {
    __shared__ double s[kBlock / kReduceWarp];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) s[threadIdx.x / kReduceWarp] = v;
    __syncthreads();
    double t = 0;
    if (threadIdx.x == 0)
        for (int w = 0; w < kBlock / kReduceWarp; ++w) t += s[w];
    return t;
}

/// Sums values[i * K + k], i in [0, count), for k < K, in a fixed order (thread-strided, then a
/// fixed tree); the result is valid in thread 0. Called by every thread of one block.
template <int K, int kBlock>
__device__ inline void block_sum_partials(const double* values, Index count, double out[K]) {
    __shared__ double s[K][kBlock];
    constexpr int kUnroll = 8; // loads in flight per thread: the tail is latency bound
    double acc[K];
    for (int k = 0; k < K; ++k) acc[k] = 0;
    for (Index base = threadIdx.x; base < count; base += kUnroll * kBlock) {
        double v[kUnroll][K];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const Index i = base + u * kBlock;
            for (int k = 0; k < K; ++k)
                v[u][k] = i < count ? __ldcg(values + static_cast<std::int64_t>(i) * K + k) : 0.0;
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            for (int k = 0; k < K; ++k) acc[k] += v[u][k];
    }
    for (int k = 0; k < K; ++k) s[k][threadIdx.x] = acc[k];
    __syncthreads();
    for (int half = kBlock / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half)
            for (int k = 0; k < K; ++k) s[k][threadIdx.x] += s[k][threadIdx.x + half];
        __syncthreads();
    }
    for (int k = 0; k < K; ++k) out[k] = s[k][0];
}

/// After this block's partials are written: true in every thread of the last block to finish.
/// The last block also resets `done` for the next launch. Only the threads that wrote partials
/// (`wrote`) need the fence: nothing else is read by the last block.
__device__ inline bool last_block_done(unsigned int* done, bool wrote) {
    __shared__ bool is_last;
    if (wrote) __threadfence(); // partials visible before the block is counted
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned int prev = atomicAdd(done, 1u);
        is_last = prev == gridDim.x - 1;
    }
    __syncthreads();
    if (is_last && threadIdx.x == 0) *done = 0;
    return is_last;
}

} // namespace edn::cuda
