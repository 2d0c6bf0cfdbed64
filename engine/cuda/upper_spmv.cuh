#pragma once
// The row step of the upper-part SpMV (sparse/upper_part.hpp) shared by UpperMatrix's product
// and the PCG's q = A p kernel (.cu files only).

#include "sparse/bin_bcsr_view.hpp"

#include <cstdint>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <type_traits>

namespace edn::cuda {

/// q[c] += v (x, y, z; w untouched) in L2. sm_90 and later: one vector atomic, as `red` (nothing
/// comes back to the SM) when kReduce, else `atom` (atomicAdd). Measured on the H100: red makes
/// the PCG's upper-part loop faster (p = 1, 998K tets: 47.3 -> 42.2 us per iteration; 403K: 21.0
/// -> 18.5) but the standalone product slower where the atomics are dense (127K p = 2: 82.5 ->
/// 93 us; p = 3: 363 -> 382), so the product keeps atom.
template <bool kReduce = false>
__device__ __forceinline__ void atomic_add3(float4* q, std::int64_t c, float v0, float v1,
                                            float v2) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (kReduce)
        asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(q + c), "f"(v0), "f"(v1),
                     "f"(v2), "f"(0.f));
    else
        atomicAdd(q + c, make_float4(v0, v1, v2, 0.f));
#else
    float* f = reinterpret_cast<float*>(q + c);
    atomicAdd(f, v0);
    atomicAdd(f + 1, v1);
    atomicAdd(f + 2, v2);
#endif
}

/// Node c of a vector of 3 floats per node, as float3 (read-only path): the plain gather of
/// upper_row.
struct Gather3 {
    const float* x;
    __device__ __forceinline__ float3 operator()(Index c) const {
        const std::int64_t c3 = 3 * static_cast<std::int64_t>(c);
        return make_float3(__ldg(x + c3), __ldg(x + c3 + 1), __ldg(x + c3 + 2));
    }
};

__device__ __forceinline__ float to_float(float v) {
    return v;
}
__device__ __forceinline__ float to_float(__half v) {
    return __half2float(v);
}

/// Lane `row % 32` of its bin: adds A_ij x_j over the row's upper blocks to a (x_j from
/// `gather(col)` as float3), and A_ij^T xi to q[j] (atomic_add3<kReduce>). Matrix loads
/// evict-first, from `values` (u.values, or a half copy in its layout).
/// Only blocks j0, j0 + step, ... when split over several warps.
template <bool kReduce, class Gather, class V = float>
__device__ __forceinline__ void upper_row(const UpperBinBcsrView<float>& u, Index row,
                                          const float xi[3], Gather gather, float4* q, float a[3],
                                          Index j0 = 0, Index step = 1, const V* values = nullptr) {
    const Index bin = row / kBinRows;
    const Index begin = u.bin_offsets[bin];
    const std::int64_t plane = static_cast<std::int64_t>(u.bin_offsets[bin + 1] - begin);
    const int lane = row % kBinRows;
    if constexpr (std::is_same_v<V, float>)
        if (values == nullptr) values = u.values;
    const V* v = values + 9 * static_cast<std::int64_t>(begin) + lane;
    const Index* cols = u.columns + begin + lane;
    const Index count = u.counts[row];
    for (Index j = j0; j < count; j += step) {
        const Index c = __ldcs(cols + j * kBinRows);
        const float3 xc = gather(c);
        const V* e = v + j * kBinRows;
        float m[9];
#pragma unroll
        for (int k = 0; k < 9; ++k) m[k] = to_float(__ldcs(e + k * plane));
        a[0] += m[0] * xc.x + m[1] * xc.y + m[2] * xc.z;
        a[1] += m[3] * xc.x + m[4] * xc.y + m[5] * xc.z;
        a[2] += m[6] * xc.x + m[7] * xc.y + m[8] * xc.z;
        atomic_add3<kReduce>(q, c, m[0] * xi[0] + m[3] * xi[1] + m[6] * xi[2],
                             m[1] * xi[0] + m[4] * xi[1] + m[7] * xi[2],
                             m[2] * xi[0] + m[5] * xi[1] + m[8] * xi[2]);
    }
}

/// d = D_row xi (the diagonal block, 9 planes of n rows).
__device__ __forceinline__ void diagonal_row(const float* diag, std::int64_t n, Index row,
                                             const float xi[3], float d[3]) {
    const float* m = diag + row;
    for (int i = 0; i < 3; ++i)
        d[i] = m[3 * i * n] * xi[0] + m[(3 * i + 1) * n] * xi[1] + m[(3 * i + 2) * n] * xi[2];
}

} // namespace edn::cuda
