#pragma once
/// The node gather of the cooperative element kernels (the p >= 2 element pass and the
/// matrix-free product): a thread block brings `count` consecutive entries of cell_nodes and
/// their node values into registers, kPer a thread, every index load issued before any value
/// load and every value load before any store (one latency of each instead of one a node: the
/// node-at-a-time gather had been 20% of the p = 2 pass's stall samples, session 34); the
/// caller stores them after its barrier.
#include "core/types.hpp"

#include <cstdint>

namespace edn::cuda {

template <class T, int kPer> struct NodeGather {
    Index node[kPer];
    T value[kPer][3];

    /// Thread i's entries are i, i + threads, ...: the indices cell_nodes[from + entry].
    __device__ __forceinline__ void load_indices(const Index* cell_nodes, std::int64_t from,
                                                 int count, int threads) {
#pragma unroll
        for (int u = 0; u < kPer; ++u) {
            const int i = static_cast<int>(threadIdx.x) + u * threads;
            node[u] = i < count ? cell_nodes[from + i] : 0;
        }
    }

    /// The values x[3 node + d] (zero past count).
    template <class X>
    __device__ __forceinline__ void load_values(const X* x, int count, int threads) {
#pragma unroll
        for (int u = 0; u < kPer; ++u) {
            const bool in = static_cast<int>(threadIdx.x) + u * threads < count;
            const X* xn = x + 3 * static_cast<std::int64_t>(node[u]);
#pragma unroll
            for (int d = 0; d < 3; ++d) value[u][d] = in ? static_cast<T>(xn[d]) : T(0);
        }
    }

    /// store(entry, node, value) for each of the thread's entries below count.
    template <class Store>
    __device__ __forceinline__ void store(int count, int threads, Store&& store) const {
#pragma unroll
        for (int u = 0; u < kPer; ++u) {
            const int i = static_cast<int>(threadIdx.x) + u * threads;
            if (i < count) store(i, node[u], value[u]);
        }
    }
};

} // namespace edn::cuda
