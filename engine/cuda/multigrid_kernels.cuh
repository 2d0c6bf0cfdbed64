#pragma once
// The kernels of the CUDA multigrid twin (cuda/multigrid.cu, its only includer): the device view
// of one level's operator, the products and transfers with G lanes per sum, the re-value kernels
// (inverse diagonals, prolongator smoothing, A P, Galerkin), Lanczos and flexible-CG scalars kept
// on the device, and the small vector kernels of the cycle.
#include "cuda/block_reduce.cuh"
#include "cuda/cuda_check.cuh"
#include "cuda/cuda_multigrid.hpp"
#include "solver/block_inverse.hpp"
#include "solver/lanczos.hpp"
#include "sparse/spmv.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <cuda_fp16.h>
#include <type_traits>

namespace edn::cuda {
namespace {

constexpr int kThreads = 256;
inline int grid_for(std::int64_t n) {
    return static_cast<int>((n + kThreads - 1) / kThreads);
}

template <class T> DeviceBuffer<T> upload(const std::vector<T>& v) {
    DeviceBuffer<T> d(v.size());
    if (!v.empty())
        EDN_CUDA_CHECK(
            cudaMemcpy(d.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
// Host arrays uploaded together (the levels init() takes from the host: about twenty arrays a
// level, where each upload's pageable copy waited about 10 us, H100): add() allocates a device
// buffer and stages its values, flush() sends the stage in one copy that one kernel scatters,
// on the default stream. The buffers hold their values from flush() on.
struct ScatterItem {
    std::uint32_t* dst;
    std::int64_t offset, words; ///< in the stage's words
};
__global__ void k_scatter(const ScatterItem* items, const std::uint32_t* words) {
    const ScatterItem item = items[blockIdx.y];
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < item.words;
         i += std::int64_t(gridDim.x) * blockDim.x)
        item.dst[i] = words[item.offset + i];
}
class UploadBatch {
public:
    template <class T> DeviceBuffer<T> add(const std::vector<T>& v) {
        static_assert(sizeof(T) == sizeof(std::uint32_t));
        DeviceBuffer<T> d(v.size());
        if (!v.empty()) {
            items_.push_back({reinterpret_cast<std::uint32_t*>(d.data()),
                              static_cast<std::int64_t>(words_.size()),
                              static_cast<std::int64_t>(v.size())});
            widest_ = std::max<std::int64_t>(widest_, static_cast<std::int64_t>(v.size()));
            const std::size_t at = words_.size();
            words_.resize(at + v.size());
            std::memcpy(words_.data() + at, v.data(), v.size() * sizeof(T));
        }
        return d;
    }
    void flush() {
        if (items_.empty()) return;
        const std::size_t head = items_.size() * sizeof(ScatterItem);
        std::vector<std::byte> stage(head + words_.size() * sizeof(std::uint32_t));
        std::memcpy(stage.data(), items_.data(), head);
        std::memcpy(stage.data() + head, words_.data(), words_.size() * sizeof(std::uint32_t));
        DeviceBuffer<std::byte> d(stage.size());
        EDN_CUDA_CHECK(cudaMemcpy(d.data(), stage.data(), stage.size(), cudaMemcpyHostToDevice));
        const dim3 blocks(static_cast<unsigned int>(std::min<std::int64_t>(grid_for(widest_), 64)),
                          static_cast<unsigned int>(items_.size()));
        for (std::size_t first = 0; first < items_.size(); first += 65535) { // (grid.y's limit)
            const dim3 part(blocks.x, static_cast<unsigned int>(
                                          std::min<std::size_t>(items_.size() - first, 65535)));
            k_scatter<<<part, kThreads>>>(reinterpret_cast<const ScatterItem*>(d.data()) + first,
                                          reinterpret_cast<const std::uint32_t*>(d.data() + head));
        }
        EDN_CUDA_CHECK(cudaGetLastError());
        items_.clear();
        words_.clear();
        widest_ = 0;
    }

private:
    std::vector<ScatterItem> items_;
    std::vector<std::uint32_t> words_;
    std::int64_t widest_ = 0;
};

// Floats per stored P or A P block of n values (load_padded).
constexpr int padded_block(int n) {
    return (n + 3) & ~3;
}
// Blocks of n values each, every block padded to padded_block(n) floats (zeros).
std::vector<float> padded_floats(const std::vector<double>& v, int n) {
    const int pn = padded_block(n);
    std::vector<float> f(v.size() / n * pn, 0.f);
    for (std::size_t t = 0; t < v.size() / n; ++t)
        for (int k = 0; k < n; ++k) f[t * pn + k] = static_cast<float>(v[t * n + k]);
    return f;
}
// The row of every entry of a CSR (offsets: #rows + 1).
std::vector<Index> rows_of(const std::vector<Index>& offsets) {
    std::vector<Index> rows(offsets.empty() ? 0 : static_cast<std::size_t>(offsets.back()));
    for (std::size_t r = 0; r + 1 < offsets.size(); ++r)
        std::fill(rows.begin() + offsets[r], rows.begin() + offsets[r + 1], static_cast<Index>(r));
    return rows;
}
// target[e] in [0, n) or -1 -> for each t the e with target[e] = t, increasing (a counting sort).
void invert_map(const std::vector<Index>& target, Index n, std::vector<Index>& offsets,
                std::vector<Index>& entries) {
    offsets.assign(static_cast<std::size_t>(n) + 1, 0);
    for (Index t : target)
        if (t >= 0) ++offsets[static_cast<std::size_t>(t) + 1];
    for (Index t = 0; t < n; ++t) offsets[t + 1] += offsets[t];
    entries.resize(static_cast<std::size_t>(offsets[n]));
    std::vector<Index> next(offsets.begin(), offsets.end() - 1);
    for (std::size_t e = 0; e < target.size(); ++e)
        if (target[e] >= 0) entries[next[target[e]]++] = static_cast<Index>(e);
}

// Where slot e's values lie: plane k at values[at + k * stride] (its bin by binary search over
// the few bin offsets; `planes` value planes per bin).
struct SlotValues {
    std::int64_t at, stride;
};
__device__ inline SlotValues slot_values(const BinBcsrPatternView& cp, int planes, Index e) {
    Index lo = 0, hi = cp.num_bins; // the bin holding slot e: bin_offsets[lo] <= e < [lo + 1]
    while (hi - lo > 1) {
        const Index mid = (lo + hi) / 2;
        if (cp.bin_offsets[mid] <= e)
            lo = mid;
        else
            hi = mid;
    }
    const std::int64_t begin = cp.bin_offsets[lo];
    return {planes * begin + (e - begin), cp.bin_offsets[lo + 1] - begin};
}

// A square operator of one level on the device (the fine matrix: block 3 and the pin mask).
struct DeviceOp {
    int block;
    BinBcsrPatternView p;
    const float* values;
    const float* diag;
    const std::uint8_t* fixed;

    __device__ Index slots() const { return p.bin_offsets[p.num_bins]; }
    __device__ bool is_free(Index row) const { return fixed == nullptr || fixed[row] == 0; }
    template <int B> __device__ void load(Index row, Index e, float* out) const {
        if (e >= slots()) {
            for (int k = 0; k < B * B; ++k)
                out[k] = diag[static_cast<std::int64_t>(k) * p.num_rows + row];
            return;
        }
        const Index bin = row / kBinRows;
        const std::int64_t begin = p.bin_offsets[bin], stride = p.bin_offsets[bin + 1] - begin;
        const float* v = values + B * B * begin + (e - begin);
        for (int k = 0; k < B * B; ++k) out[k] = v[k * stride];
    }
};

// A product's output as its readers take it: component c of row i at v[stride * i + c] (stride B,
// or 4 where the fine product is the upper part's, whose rows are float4: its readers take them
// in place instead of a conversion pass, 15 us per product at 1.15M tets, H100).
struct RowVector {
    const float* v;
    int stride;
    __device__ float operator()(std::int64_t row, int c) const { return v[stride * row + c]; }
};

// An operator's off-diagonal values in half precision, scaled (k_to_half), for the cycle's
// products where the operator does not fit the L2 cache; values == nullptr: none.
enum HalfScaleSlot { kHalfMax = 0, kHalfUnscale = 1 };
struct HalfOperator {
    const __half* values;
    const float*
        scale; // [kHalfMax] the largest diagonal entry (A P: entry), [kHalfUnscale] 1 / the scale
};

// A given P whose blocks are all w I (p-multigrid's Lagrange transfer): one weight per block,
// so the cycle's transfers read 4 bytes a block instead of its padded 48 (k_isotropic_weights).
struct IsotropicWeights {
    const float* w;
};

// P and A P blocks (B x K) are stored padded to a multiple of 4 floats (3 x 6: 20), 16-byte
// aligned, and read with float4 loads: a lane reading its own block issues B*K/4 loads instead of
// B*K, each touching its own sector (the re-value's products and the transfers were bound by the
// L1's sector traffic of those scalar loads, ncu).
template <int N> __device__ void load_padded(const float* p, float (&out)[padded_block(N)]) {
    const float4* q = reinterpret_cast<const float4*>(p);
    for (int k = 0; k < padded_block(N) / 4; ++k) {
        const float4 v = q[k];
        out[4 * k] = v.x;
        out[4 * k + 1] = v.y;
        out[4 * k + 2] = v.z;
        out[4 * k + 3] = v.w;
    }
}
template <int N> __device__ void store_padded(float* p, const float* in) {
    float4* q = reinterpret_cast<float4*>(p);
    for (int k = 0; k < padded_block(N) / 4; ++k) {
        float v[4];
        for (int j = 0; j < 4; ++j) v[j] = 4 * k + j < N ? in[4 * k + j] : 0.f;
        q[k] = make_float4(v[0], v[1], v[2], v[3]);
    }
}

template <int B> __device__ void load_block(const float* blocks, Index e, float* out) {
    float v[padded_block(B * B)];
    load_padded<B * B>(blocks + std::int64_t(e) * padded_block(B * B), v);
    for (int k = 0; k < B * B; ++k) out[k] = v[k];
}

// The operator's blocks gathered contiguously for the re-value's products (entry e: slots, then
// #slots + row; B*B values row-major at blocks[e * B * B]). The bin layout keeps each value of a
// block in its own value plane, so a product reading one block there touches B*B sectors (and
// caches B*B lines); here B*B/8. A thread block reads its kThreads entries plane by plane
// (coalesced over a bin's slots) into shared memory and writes them out contiguously, each block
// padded to padded_block(B * B) floats for load_padded.
template <int B> __global__ void k_gather_blocks(DeviceOp op, Index entries, float* blocks) {
    constexpr int BB = B * B, PB = padded_block(BB);
    __shared__ float stage[kThreads * PB];
    const std::int64_t first = std::int64_t(blockIdx.x) * kThreads;
    const std::int64_t e = first + threadIdx.x;
    const Index slots = op.slots();
    float* mine = stage + threadIdx.x * PB;
    for (int k = BB; k < PB; ++k) mine[k] = 0;
    if (e < entries && e >= slots) {
        const Index row = static_cast<Index>(e - slots);
        for (int k = 0; k < BB; ++k) mine[k] = op.diag[std::int64_t(k) * op.p.num_rows + row];
    } else if (e < entries) {
        const SlotValues at = slot_values(op.p, BB, static_cast<Index>(e));
        for (int k = 0; k < BB; ++k) mine[k] = op.values[at.at + k * at.stride];
    }
    __syncthreads();
    const std::int64_t count = std::min<std::int64_t>(kThreads, entries - first) * PB;
    for (std::int64_t k = threadIdx.x; k < count; k += kThreads) blocks[first * PB + k] = stage[k];
}

// Lanes per row (or per coarse entry) of the small levels' kernels: G consecutive lanes share one
// output and split its sum (G a power of two <= 32, picked per level from the mean length of the
// sums, lanes_for); the group's first lane writes. Every lane of a warp reaches the shuffles.
template <int G> __device__ float group_sum(float v) {
    for (int o = G / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o, G);
    return v;
}
template <int G> struct Lane {
    std::int64_t item; // the row / entry / coarse node of the group
    int lane;
    __device__ Lane()
        : item((std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / G),
          lane(static_cast<int>(threadIdx.x % G)) {}
};
// The sums v[0 .. N) over the G lanes of a group, in its first lane: shuffles within a warp, a
// whole thread block (G = kThreads) through shared memory. Every thread of the block calls it.
template <int G, int N> __device__ void group_sums(float (&v)[N]) {
    if constexpr (G <= 32) {
        for (int n = 0; n < N; ++n) v[n] = group_sum<G>(v[n]);
    } else {
        static_assert(G == kThreads, "a group is a warp or the thread block");
        __shared__ float part[kThreads / 32][N];
        for (int n = 0; n < N; ++n) v[n] = group_sum<32>(v[n]);
        const int warp = threadIdx.x / 32;
        if (threadIdx.x % 32 == 0)
            for (int n = 0; n < N; ++n) part[warp][n] = v[n];
        __syncthreads();
        if (threadIdx.x == 0)
            for (int n = 0; n < N; ++n) {
                float t = 0;
                for (int w = 0; w < kThreads / 32; ++w) t += part[w][n];
                v[n] = t;
            }
    }
}
// Lanes for `items` sums of mean_length terms. With many items (8 lanes each would make over
// 256K threads) the GPU is busy anyway: 8 lanes from 6 terms, 32 from 48, else 1. With few (the
// coarse levels) the time is latency: the fewest lanes in {1, 8, 32, kThreads} that leave each
// lane at most 2 terms. `forced` (> 0, tests) overrides the choice.
inline int lanes_for(double mean_length, std::int64_t items, int forced) {
    if (forced > 0) return forced;
    if (items * 8 >= (std::int64_t(1) << 18))
        return mean_length >= 48 ? 32 : mean_length >= 6 ? 8 : 1;
    for (int g : {1, 8, 32})
        if (2 * g >= mean_length) return g;
    return kThreads;
}
// f.template operator()<W>() for the first W of the list equal to w (the last W otherwise).
template <int W, int... Rest, class F> void with_width(int w, F&& f) {
    if constexpr (sizeof...(Rest) == 0)
        f.template operator()<W>();
    else if (w == W)
        f.template operator()<W>();
    else
        with_width<Rest...>(w, f);
}
template <class F> void with_lanes(int g, F&& f) {
    with_width<kThreads, 32, 8, 1>(g, f);
}
// Warps per bin of the coarse levels' products, from the mean row length: k_spmv_bins (a lane
// forms all B components of its row) takes the fewest in {1, 2, 4, 8, 16} that leave each warp at
// most 6 of the bin's entries, k_spmv_bins_components (a thread block per component) the fewest
// in {1, 4, 8, 16} that leave it at most 4; else 32. `forced` (> 0, tests; 1, 2, 4, 8, 16 or 32)
// overrides the choice.
inline int bin_warps_for(double mean_width, bool rows, int forced) {
    if (forced > 0) return forced;
    for (int w : {1, 2, 4, 8, 16})
        if ((rows || w != 2) && (rows ? 6 : 4) * w >= mean_width) return w;
    return 32;
}
template <class F> void with_bin_warps(int w, F&& f) {
    with_width<32, 16, 8, 4, 2, 1>(w, f);
}
inline int grid_for_groups(std::int64_t n, int g) {
    return grid_for(n * g);
}

// x_j (B floats) into xc: float2 loads for even B (x_j then lies on 8 bytes), a third of the
// sector requests of scalar loads at B = 6.
template <int B> __device__ void load_row(const float* x, Index j, float (&xc)[B]) {
    if constexpr (B % 2 == 0) {
        const float2* x2 = reinterpret_cast<const float2*>(x + std::int64_t(B) * j);
#pragma unroll
        for (int c = 0; c < B / 2; ++c) {
            const float2 t = __ldg(x2 + c);
            xc[2 * c] = t.x;
            xc[2 * c + 1] = t.y;
        }
    } else {
#pragma unroll
        for (int c = 0; c < B; ++c) xc[c] = __ldg(x + std::int64_t(B) * j + c);
    }
}

// y = A x on a coarse level (B x B blocks; few rows of many dense blocks): a thread block of W
// warps per bin of 32 rows. The lane is the row in the bin, so every value plane is read
// coalesced; warp w takes the bin's entries w, w + W, ..., warp 0 also the diagonal block, and
// each lane forms all B components of its row from a block and one read of x_j. The W partial
// sums meet in shared memory and the bin's 32 B outputs are written contiguously. Used where the
// level has at least 2 bins per SM: H100, the 1.15M bunny's level 1 (315 bins, 104 MB) 46.6 ->
// 43.9 us against k_spmv_bins_components (DRAM at 68% of peak); on fewer bins the components'
// parallelism wins (187K level 1, 69 bins: 12.4 against 15.7 us).
// With `half` (HalfOperator) the off-diagonal blocks are read from its half-precision planes
// instead of op.values (the diagonal stays float).
template <int B, int W>
__global__ void __launch_bounds__(32 * W, 32 / W)
    k_spmv_bins(DeviceOp op, HalfOperator half, const float* x, float* y) {
    const Index bin = blockIdx.x;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const Index row = bin * kBinRows + lane;
    const bool valid = row < op.p.num_rows;
    float acc[B] = {};
    if (valid) {
        const std::int64_t begin = op.p.bin_offsets[bin];
        const std::int64_t stride = op.p.bin_offsets[bin + 1] - begin;
        const std::int64_t first = std::int64_t(B) * B * begin + lane;
        const Index* columns = op.p.columns + begin + lane;
        const Index count = op.p.row_counts[row];
        for (Index j = warp; j < count; j += W) {
            // every load of the entry in flight before the first product (ptxas otherwise
            // interleaves them with the sums: 32 registers and one latency per value)
            const std::int64_t e = first + std::int64_t(j) * kBinRows;
            float a[B * B], xc[B];
            load_row<B>(x, __ldg(columns + std::int64_t(j) * kBinRows), xc);
            if (half.values) {
#pragma unroll
                for (int k = 0; k < B * B; ++k) a[k] = __half2float(half.values[k * stride + e]);
            } else {
#pragma unroll
                for (int k = 0; k < B * B; ++k) a[k] = __ldg(op.values + k * stride + e);
            }
#pragma unroll
            for (int r = 0; r < B; ++r)
#pragma unroll
                for (int c = 0; c < B; ++c) acc[r] += a[r * B + c] * xc[c];
        }
        if (half.values) {
            const float unscale = half.scale[kHalfUnscale];
            for (int r = 0; r < B; ++r) acc[r] *= unscale;
        }
        if (warp == 0) {
            const float* xr = x + std::int64_t(B) * row;
            for (int r = 0; r < B; ++r)
                for (int c = 0; c < B; ++c)
                    acc[r] += op.diag[std::int64_t(r * B + c) * op.p.num_rows + row] * xr[c];
        }
    }
    const Index rows = min(Index(kBinRows), op.p.num_rows - bin * kBinRows);
    if constexpr (W == 1) {
        if (valid)
            for (int r = 0; r < B; ++r) y[B * std::int64_t(row) + r] = acc[r];
    } else {
        __shared__ float part[W][B][kBinRows + 1];
        for (int r = 0; r < B; ++r) part[warp][r][lane] = acc[r];
        __syncthreads();
        float* out = y + std::int64_t(B) * bin * kBinRows; // the bin's rows, contiguous
        for (int t = threadIdx.x; t < B * rows; t += 32 * W) {
            const int i = t / B, r = t % B;
            float sum = 0;
            for (int w = 0; w < W; ++w) sum += part[w][r][i];
            out[t] = sum;
        }
    }
}

// The half-precision copy of an operator's off-diagonal values (HalfOperator). Its scale is the
// power of two that brings the largest diagonal entry of the free rows into [2^14, 2^15): for a
// symmetric positive semi-definite operator no entry is larger (|a_pq| <= sqrt(a_pp a_qq)), so
// nothing overflows half's 65504 (an indefinite one's larger entries saturate), and entries
// down to 2^-24 of the largest keep half's full 11-bit precision (smaller ones go subnormal,
// then to zero). k_max_diag takes the largest (as float bits, which order as unsigned integers
// for non-negative values; *scale zeroed before), k_to_half converts.
template <int B>
__global__ void k_max_diag(const float* diag, Index rows, const std::uint8_t* fixed, float* scale) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    float m = 0;
    if (row < rows && (fixed == nullptr || fixed[row] == 0))
        for (int r = 0; r < B; ++r) m = fmaxf(m, fabsf(diag[std::int64_t(r * B + r) * rows + row]));
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0 && m > 0)
        atomicMax(reinterpret_cast<unsigned int*>(scale + kHalfMax), __float_as_uint(m));
}
// scale[kHalfMax] = max(scale[kHalfMax], max |v|) over n floats (non-negative float bits:
// unsigned atomicMax; *scale zeroed before): the scale of a copy without a diagonal (A P).
__global__ void k_max_abs(const float* v, std::int64_t n, float* scale) {
    float m = 0;
    for (std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x)
        m = fmaxf(m, fabsf(v[i]));
    for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (threadIdx.x % 32 == 0 && m > 0)
        atomicMax(reinterpret_cast<unsigned int*>(scale + kHalfMax), __float_as_uint(m));
}
__device__ __forceinline__ __half to_half_saturated(float v) {
    return __float2half_rn(isnan(v) ? v : fminf(fmaxf(v, -65504.f), 65504.f));
}
// out = half(v * 2^(15 - e)), e the exponent of the largest diagonal entry; n a multiple of 4.
__global__ void k_to_half(const float* v, std::int64_t n, float* scale, __half* out) {
    const float m = scale[kHalfMax];
    int e = 0;
    if (m > 0 && isfinite(m)) frexpf(m, &e); // m = f 2^e, f in [0.5, 1)
    const float factor = ldexpf(1.f, 15 - e);
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i == 0) scale[kHalfUnscale] = ldexpf(1.f, e - 15);
    if (4 * i >= n) return;
    const float4 x = reinterpret_cast<const float4*>(v)[i];
    __half2* o = reinterpret_cast<__half2*>(out) + 2 * i;
    o[0] = __halves2half2(to_half_saturated(x.x * factor), to_half_saturated(x.y * factor));
    o[1] = __halves2half2(to_half_saturated(x.z * factor), to_half_saturated(x.w * factor));
}

// y = A x on a small coarse level (few bins of long rows, so the work is split three ways for
// enough loads in flight): a thread block of W warps per (bin of 32 rows, output component
// r = blockIdx.y). The lane is the row in the bin, so every value plane is read
// coalesced; warp w takes the bin's entries w, w + W, ..., warp 0 also the diagonal block; the W
// partial sums meet in shared memory.
template <int B, int W>
__global__ void k_spmv_bins_components(DeviceOp op, const float* x, float* y) {
    const Index bin = blockIdx.x;
    const int r = blockIdx.y, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const Index row = bin * kBinRows + lane;
    const bool valid = row < op.p.num_rows;
    float acc = 0;
    if (valid) {
        const std::int64_t begin = op.p.bin_offsets[bin];
        const std::int64_t stride = op.p.bin_offsets[bin + 1] - begin;
        const float* v = op.values + (std::int64_t(B) * B * begin + std::int64_t(r) * B * stride);
        const Index count = op.p.row_counts[row];
        // U entries at a time: their columns, then their values and x, are all in flight at once
        constexpr int U = 2;
        for (Index j0 = warp; j0 < count; j0 += U * W) {
            Index col[U];
            for (int u = 0; u < U; ++u) {
                const Index j = j0 + u * W;
                col[u] = j < count ? op.p.columns[begin + std::int64_t(j) * kBinRows + lane] : -1;
            }
            float a[U][B], xc[U][B];
            for (int u = 0; u < U; ++u) {
                const std::int64_t e = std::int64_t(j0 + u * W) * kBinRows + lane; // slot - begin
                load_row<B>(x, col[u] >= 0 ? col[u] : 0, xc[u]);
                for (int c = 0; c < B; ++c) a[u][c] = col[u] >= 0 ? v[c * stride + e] : 0.f;
            }
            for (int u = 0; u < U; ++u)
                for (int c = 0; c < B; ++c) acc += a[u][c] * xc[u][c];
        }
        if (warp == 0) {
            const float* xr = x + std::int64_t(B) * row;
            for (int c = 0; c < B; ++c)
                acc += op.diag[std::int64_t(r * B + c) * op.p.num_rows + row] * xr[c];
        }
    }
    if constexpr (W == 1) {
        if (valid) y[B * std::int64_t(row) + r] = acc;
    } else {
        __shared__ float part[W][32];
        part[warp][lane] = acc;
        __syncthreads();
        if (warp == 0) {
            float sum = 0;
            for (int w = 0; w < W; ++w) sum += part[w][lane];
            if (valid) y[B * std::int64_t(row) + r] = sum;
        }
    }
}

template <int B> __global__ void k_inverse_diag(DeviceOp op, float* inv) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= op.p.num_rows) return;
    float* out = inv + static_cast<std::int64_t>(row) * B * B;
    if (!op.is_free(row)) {
        for (int k = 0; k < B * B; ++k) out[k] = 0;
        return;
    }
    float d[B * B];
    op.load<B>(row, op.slots() + row, d);
    semidefinite_block_inverse<B>(d, out, 1e-6); // float input: a looser pivot threshold
}

template <int B> __device__ void apply_inv(const float* inv, Index row, const float* r, float* z) {
    const float* m = inv + static_cast<std::int64_t>(row) * B * B;
    for (int i = 0; i < B; ++i) {
        float s = 0;
        for (int k = 0; k < B; ++k) s += m[i * B + k] * r[B * row + k];
        z[i] = s;
    }
}

// Per-block partial sums in double of a.b (K = 1) and also a.c (K = 2): partials[k * 1024 +
// block]; k_sum_partials adds them up in a fixed order (deterministic).
template <int K>
__global__ void k_dots(const float* a, const float* b, const float* c, std::int64_t n,
                       double* partials) {
    double t[K] = {};
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        t[0] += double(a[i]) * double(b[i]);
        if constexpr (K == 2) t[1] += double(a[i]) * double(c[i]);
    }
    for (int k = 0; k < K; ++k) {
        const double s = block_sum<kThreads>(t[k]);
        if (threadIdx.x == 0) partials[k * 1024 + blockIdx.x] = s;
        __syncthreads(); // block_sum's shared array is reused by the next k
    }
}

// d = c[0] d + c[1] D^-1 r (rows; c on the device: the Chebyshev coefficients of the level).
template <int B>
__global__ void k_precondition(Index n, const float* inv, const float* r, float* d,
                               const float* c) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    const float c1 = c[0], c2 = c[1];
    float z[B];
    apply_inv<B>(inv, row, r, z);
    for (int k = 0; k < B; ++k) d[B * row + k] = (c1 == 0 ? 0.f : c1 * d[B * row + k]) + c2 * z[k];
}

// The Chebyshev smoother's first step (c = the level's coefficients, c[0] = 0): r = b (zero
// start) or b - A x; d = c[1] D^-1 r; x = d (zero start) or x += d.
template <int B>
__global__ void k_chebyshev_first(Index n, const float* inv, const float* b, RowVector ax, float* r,
                                  float* d, float* x, const float* c, bool zero_start) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    const std::int64_t i = std::int64_t(B) * row;
    for (int k = 0; k < B; ++k) r[i + k] = zero_start ? b[i + k] : b[i + k] - ax(row, k);
    float z[B];
    apply_inv<B>(inv, row, r, z);
    for (int k = 0; k < B; ++k) {
        d[i + k] = c[1] * z[k];
        x[i + k] = zero_start ? d[i + k] : x[i + k] + d[i + k];
    }
}

// A later Chebyshev step (c = its pair): r -= q (q = A d); d = c[0] d + c[1] D^-1 r; x += d.
template <int B>
__global__ void k_chebyshev_step(Index n, const float* inv, RowVector q, float* r, float* d,
                                 float* x, const float* c) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    const std::int64_t i = std::int64_t(B) * row;
    for (int k = 0; k < B; ++k) r[i + k] -= q(row, k);
    const float c1 = c[0], c2 = c[1];
    float z[B];
    apply_inv<B>(inv, row, r, z);
    for (int k = 0; k < B; ++k) {
        d[i + k] = c1 * d[i + k] + c2 * z[k];
        x[i + k] += d[i + k];
    }
}

// Lanczos on the device (no read-backs): scalars of one level's estimate, in double.
enum LanczosSlot {
    kRz = 0,
    kRz0,
    kPq,
    kRzNew,
    kStop,
    kSteps,
    kLambda,
    kAlphas = 8,
    kBetas = kAlphas + kMaxLanczosSteps,
    kLanczosSlots = kBetas + kMaxLanczosSteps
};

// out[k] = the sum of partials[k * 1024 + 0 .. blocks) in a fixed order (one warp), k < K.
template <int K> __global__ void k_sum_partials(const double* partials, int blocks, double* out) {
    for (int k = 0; k < K; ++k) {
        double t = 0;
        for (int i = threadIdx.x; i < blocks; i += 32) t += partials[k * 1024 + i];
        t = warp_sum(t);
        if (threadIdx.x == 0) out[k] = t;
    }
}
__global__ void k_lanczos_init(double* s) {
    s[kRz0] = s[kRz];
    s[kStop] = s[kRz] > 0 ? 0 : 1;
    s[kSteps] = 0;
}
// The sum of the blocks' partials (one warp, fixed order; other blocks wrote them, so read
// through L2), in every lane of warp 0.
__device__ __forceinline__ double sum_block_partials(const double* partials) {
    double t = 0;
    for (unsigned i = threadIdx.x; i < gridDim.x; i += 32) t += __ldcg(partials + i);
    return warp_sum(t);
}
// A Lanczos step's p.q (per-block partials over the n rows of B dofs, q as its product left it;
// grid-stride, at most 1024 blocks); the last block to finish sums them and records the step's
// alpha = rz / p.q (one launch instead of a dot kernel and a scalar kernel: the re-value runs 30
// steps).
template <int B>
__global__ void k_lanczos_pq(Index n, const float* p, RowVector q, double* partials,
                             unsigned int* done, double* s) {
    double t = 0;
    for (Index row = blockIdx.x * blockDim.x + threadIdx.x; row < n; row += gridDim.x * blockDim.x)
        for (int k = 0; k < B; ++k) t += double(p[std::int64_t(B) * row + k]) * double(q(row, k));
    t = block_sum<kThreads>(t);
    if (threadIdx.x == 0) partials[blockIdx.x] = t;
    if (!last_block_done(done, threadIdx.x == 0) || threadIdx.x >= 32) return;
    t = sum_block_partials(partials);
    if (threadIdx.x != 0 || s[kStop] != 0) return;
    s[kPq] = t;
    if (!(t > 0) || !isfinite(t)) {
        s[kStop] = 1;
        return;
    }
    s[kAlphas + int(s[kSteps])] = s[kRz] / t;
}
// r -= alpha q (this step's alpha); z = D^-1 r; per-block partial sums of r.z (grid-stride over
// the n rows of B dofs, at most 1024 blocks); the last block sums them, records beta = r.z / rz
// and counts the step.
template <int B>
__global__ void k_lanczos_rz(Index n, double* s, const float* inv, RowVector q, float* r, float* z,
                             double* partials, unsigned int* done) {
    if (s[kStop] != 0) return; // the whole grid: s is written only once every block is done
    const float alpha = float(s[kAlphas + int(s[kSteps])]);
    double t = 0;
    for (Index row = blockIdx.x * blockDim.x + threadIdx.x; row < n;
         row += gridDim.x * blockDim.x) {
        const std::int64_t i = std::int64_t(B) * row;
        for (int k = 0; k < B; ++k) r[i + k] -= alpha * q(row, k);
        float zr[B];
        apply_inv<B>(inv, row, r, zr);
        for (int k = 0; k < B; ++k) {
            z[i + k] = zr[k];
            t += double(r[i + k]) * double(zr[k]);
        }
    }
    t = block_sum<kThreads>(t);
    if (threadIdx.x == 0) partials[blockIdx.x] = t;
    if (!last_block_done(done, threadIdx.x == 0) || threadIdx.x >= 32) return;
    t = sum_block_partials(partials);
    if (threadIdx.x != 0) return;
    const int m = int(s[kSteps]);
    s[kRzNew] = t;
    s[kBetas + m] = t / s[kRz];
    s[kSteps] = m + 1;
    if (!(t > 1e-12 * s[kRz0])) // float: the Krylov space is exhausted sooner
        s[kStop] = 1;
    else
        s[kRz] = t;
}
// p = z + beta p (the beta just recorded)
__global__ void k_lanczos_p(std::int64_t n, const double* s, const float* z, float* p) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n || s[kStop] != 0) return;
    p[i] = z[i] + float(s[kBetas + int(s[kSteps]) - 1]) * p[i];
}
/// lambda_max of the tridiagonal of m recorded Lanczos steps, by one warp: each round the 32
/// lanes count eigenvalues below 32 points of the bracket (Sturm), which shrinks it 33-fold,
/// until it is 1e-12 relative (tridiagonal_max's bisection, 5 bits per round instead of 1: the
/// single thread took ~40 us per level). The result is in every lane.
__device__ double warp_lanczos_lambda_max(const double* alphas, const double* betas, int m) {
    if (m <= 0) return 0.0;
    double d[kMaxLanczosSteps], e[kMaxLanczosSteps], lo, hi;
    lanczos_tridiagonal(alphas, betas, m, d, e);
    tridiagonal_bounds(d, e, m, lo, hi);
    const int lane = threadIdx.x % 32;
    for (int round = 0; round < 64 && hi - lo > 1e-12 * fabs(hi); ++round) {
        const double point = lo + (hi - lo) * (lane + 1) / 33.0;
        const int below = tridiagonal_count_below(d, e, m, point);
        // the first point with every eigenvalue below it bounds lambda_max from above
        const unsigned all = __ballot_sync(0xffffffffu, below == m);
        const int first = all ? __ffs(all) - 1 : 32;
        const double upper = __shfl_sync(0xffffffffu, point, first < 32 ? first : 31);
        const double lower = __shfl_sync(0xffffffffu, point, first > 0 ? first - 1 : 0);
        if (first < 32) hi = upper;
        if (first > 0) lo = lower;
    }
    return hi;
}

/// lambda_max and the level's coefficients [w = damping / lambda_max, Chebyshev] from the steps
/// recorded in s (LanczosSlot). Called by one whole warp; lane 0 writes.
__device__ void warp_lanczos_finish(double* s, double damping, double ratio, int degree,
                                    float* coef) {
    const double lambda = warp_lanczos_lambda_max(s + kAlphas, s + kBetas, int(s[kSteps]));
    if (threadIdx.x % 32 != 0) return;
    s[kLambda] = lambda;
    coef[0] = lambda > 0 ? float(damping / lambda) : 0.f;
    double c[2 * kMaxChebyshevDegree];
    chebyshev_coefficients(lambda, ratio, degree, c);
    for (int k = 0; k < 2 * degree; ++k) coef[1 + k] = float(c[k]);
}

// lambda_max from the recorded steps; coef = [w = damping / lambda_max, Chebyshev coefficients].
// One warp.
__global__ void k_lanczos_finish(double* s, double damping, double ratio, int degree, float* coef) {
    warp_lanczos_finish(s, damping, ratio, degree, coef);
}

// P(i, J) = [J = aggregate(i)] T_i - w D_i^-1 sum_j A_ij T_j over the operator entries (i, j)
// that smooth into block (i, J): G lanes per P block split its entries, listed by smooth_offsets /
// smooth_entries (smooth_target inverted at upload).
template <int B, int K, int G>
__global__ void k_smooth_prolongator(DeviceOp op, const float* blocks, const float* inv,
                                     const Index* aggregate, const float* tentative, Index p_blocks,
                                     const Index* p_rows, const Index* p_columns,
                                     const Index* smooth_offsets, const Index* smooth_entries,
                                     const float* omega_at, float* p_values) {
    const Lane<G> lane;
    const bool valid = lane.item < p_blocks;
    const Index t = valid ? static_cast<Index>(lane.item) : 0;
    const float omega = *omega_at;
    const Index i = p_rows[t];
    float at[B * K] = {};
    if (valid && omega != 0)
        for (Index k = smooth_offsets[t] + lane.lane; k < smooth_offsets[t + 1]; k += G) {
            const Index e = smooth_entries[k];
            const Index col = e >= op.slots() ? i : op.p.columns[e];
            float a[B * B];
            load_block<B>(blocks, e, a);
            const float* tc = tentative + std::int64_t(col) * B * K;
            for (int r = 0; r < B; ++r)
                for (int m = 0; m < B; ++m)
                    for (int c = 0; c < K; ++c) at[r * K + c] += a[r * B + m] * tc[m * K + c];
        }
    group_sums<G>(at);
    if (!valid || lane.lane != 0) return;
    const bool own = p_columns[t] == aggregate[i];
    const float* m = inv + std::int64_t(i) * B * B;
    const float* ti = tentative + std::int64_t(i) * B * K;
    float out[B * K];
    for (int r = 0; r < B; ++r)
        for (int c = 0; c < K; ++c) {
            float s = 0;
            for (int k = 0; k < B; ++k) s += m[r * B + k] * at[k * K + c];
            out[r * K + c] = (own ? ti[r * K + c] : 0.f) - omega * s;
        }
    store_padded<B * K>(p_values + std::int64_t(t) * padded_block(B * K), out);
}

// A P block q = the sum over its (operator entry, P block) pairs: G lanes per block split the
// pairs (the operator's blocks from k_gather_blocks).
template <int B, int K, int G>
__global__ void k_product(const float* blocks, Index ap_blocks, const Index* pair_offsets,
                          const Index* pair_entry, const Index* pair_p, const float* p_values,
                          float* ap_values) {
    const Lane<G> lane;
    const bool valid = lane.item < ap_blocks;
    const Index q = valid ? static_cast<Index>(lane.item) : 0;
    float acc[B * K] = {};
    if (valid)
        for (Index k = pair_offsets[q] + lane.lane; k < pair_offsets[q + 1]; k += G) {
            float a[B * B];
            load_block<B>(blocks, pair_entry[k], a);
            float pv[padded_block(B * K)];
            load_padded<B * K>(p_values + std::int64_t(pair_p[k]) * padded_block(B * K), pv);
            for (int r = 0; r < B; ++r)
                for (int m = 0; m < B; ++m)
                    for (int c = 0; c < K; ++c) acc[r * K + c] += a[r * B + m] * pv[m * K + c];
        }
    group_sums<G>(acc);
    if (valid && lane.lane == 0)
        store_padded<B * K>(ap_values + std::int64_t(q) * padded_block(B * K), acc);
}

// G lanes per listed coarse entry (slot, or #slots + row), splitting its (P block, A P block)
// pairs. With a mirror (symmetric A_c) the upper slots are listed and each also writes its
// transpose to mirror[slot]; padding and lower slots are not listed (left at their 0 / mirror).
template <int B, int K, int G>
__global__ void k_galerkin(BinBcsrPatternView cp, Index count, const Index* g_entries,
                           const Index* g_offsets, const Index* g_p, const Index* g_ap,
                           const Index* mirror, const float* p_values, const float* ap_values,
                           float* values, float* diag) {
    const Lane<G> t;
    const Index slots = cp.bin_offsets[cp.num_bins];
    const bool valid = t.item < count;
    const Index e = g_entries[valid ? static_cast<Index>(t.item) : 0];
    float acc[K * K] = {};
    if (valid)
        for (Index k = g_offsets[e] + t.lane; k < g_offsets[e + 1]; k += G) {
            float pv[padded_block(B * K)], av[padded_block(B * K)];
            load_padded<B * K>(p_values + std::int64_t(g_p[k]) * padded_block(B * K), pv);
            load_padded<B * K>(ap_values + std::int64_t(g_ap[k]) * padded_block(B * K), av);
            for (int m = 0; m < B; ++m)
                for (int r = 0; r < K; ++r)
                    for (int c = 0; c < K; ++c) acc[r * K + c] += pv[m * K + r] * av[m * K + c];
        }
    group_sums<G>(acc);
    if (!valid || t.lane != 0) return;
    if (e >= slots) {
        const Index row = e - slots;
        for (int k = 0; k < K * K; ++k) diag[std::int64_t(k) * cp.num_rows + row] = acc[k];
        return;
    }
    const SlotValues own = slot_values(cp, K * K, e);
    for (int k = 0; k < K * K; ++k) values[own.at + k * own.stride] = acc[k];
    if (mirror == nullptr) return;
    const SlotValues other = slot_values(cp, K * K, mirror[e]);
    for (int r = 0; r < K; ++r)
        for (int c = 0; c < K; ++c) values[other.at + (c * K + r) * other.stride] = acc[r * K + c];
}

// bc = P^T (b - ax): G lanes per coarse node, splitting its P blocks (the residual is formed as
// it is read).
template <int B, int K, int G, class Values>
__global__ void k_restrict(Index nc, const Index* offsets, const Index* blocks, const Index* rows,
                           Values p_values, const float* b, RowVector ax, float* bc) {
    const Lane<G> t;
    const bool valid = t.item < nc;
    const Index I = valid ? static_cast<Index>(t.item) : 0;
    float s[K] = {};
    if (valid)
        for (Index k = offsets[I] + t.lane; k < offsets[I + 1]; k += G) {
            const Index row = rows[k];
            if constexpr (std::is_same_v<Values, IsotropicWeights>) {
                static_assert(B == K, "w I blocks are square");
                const float w = p_values.w[blocks[k]];
                for (int m = 0; m < B; ++m) s[m] += w * (b[std::int64_t(B) * row + m] - ax(row, m));
            } else {
                float pv[padded_block(B * K)];
                load_padded<B * K>(p_values + std::int64_t(blocks[k]) * padded_block(B * K), pv);
                for (int m = 0; m < B; ++m) {
                    const float ri = b[std::int64_t(B) * row + m] - ax(row, m);
                    for (int c = 0; c < K; ++c) s[c] += pv[m * K + c] * ri;
                }
            }
        }
    group_sums<G>(s);
    if (valid && t.lane == 0)
        for (int c = 0; c < K; ++c) bc[K * I + c] = s[c];
}

// Block k of B*K values, padded (padded_block), from floats or from a scaled half copy
// (HalfOperator: padded_block halves, 8-byte loads; its unscale applied to the sums).
template <int N>
__device__ void load_values(const float* v, Index k, float (&out)[padded_block(N)]) {
    load_padded<N>(v + std::int64_t(k) * padded_block(N), out);
}
template <int N>
__device__ void load_values(const HalfOperator& v, Index k, float (&out)[padded_block(N)]) {
    const uint2* q = reinterpret_cast<const uint2*>(v.values + std::int64_t(k) * padded_block(N));
    for (int c = 0; c < padded_block(N) / 4; ++c) {
        const uint2 u = q[c];
        const float2 lo = __half22float2(*reinterpret_cast<const __half2*>(&u.x));
        const float2 hi = __half22float2(*reinterpret_cast<const __half2*>(&u.y));
        out[4 * c] = lo.x, out[4 * c + 1] = lo.y, out[4 * c + 2] = hi.x, out[4 * c + 3] = hi.y;
    }
}
__device__ inline float unscale_of(const float*) {
    return 1.f;
}
__device__ inline float unscale_of(const IsotropicWeights&) {
    return 1.f;
}

// w[k] = block k's [0] where every block of the n padded 3 x 3 blocks is w I; else *mixed = 1.
__global__ void k_isotropic_weights(const float* blocks, Index n, float* w, int* mixed) {
    const Index k = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const float* v = blocks + std::int64_t(k) * padded_block(9);
    w[k] = v[0];
    if (v[1] != 0 || v[2] != 0 || v[3] != 0 || v[5] != 0 || v[6] != 0 || v[7] != 0 ||
        v[4] != v[0] || v[8] != v[0])
        *mixed = 1;
}
__device__ inline float unscale_of(const HalfOperator& v) {
    return v.scale[kHalfUnscale];
}

// x += P xc: G lanes per fine row, splitting its P blocks; row i's B values at x[stride * i]
// (also ax += (A P) xc, ax possibly the fine upper product's float4 rows; A P's values float or
// a half copy where it does not fit the L2 cache).
template <int B, int K, int G, class Values>
__global__ void k_prolong(Index n, const Index* offsets, const Index* columns, Values values,
                          const float* xc, float* x, int stride) {
    const Lane<G> t;
    const bool valid = t.item < n;
    const Index i = valid ? static_cast<Index>(t.item) : 0;
    float s[B] = {};
    if (valid)
        for (Index k = offsets[i] + t.lane; k < offsets[i + 1]; k += G) {
            const float* xj = xc + std::int64_t(K) * columns[k];
            if constexpr (std::is_same_v<Values, IsotropicWeights>) {
                static_assert(B == K, "w I blocks are square");
                const float w = values.w[k];
                for (int m = 0; m < B; ++m) s[m] += w * xj[m];
            } else {
                float pv[padded_block(B * K)];
                load_values<B * K>(values, k, pv);
                for (int m = 0; m < B; ++m)
                    for (int c = 0; c < K; ++c) s[m] += pv[m * K + c] * xj[c];
            }
        }
    group_sums<G>(s);
    if (valid && t.lane == 0) {
        const float unscale = unscale_of(values);
        for (int m = 0; m < B; ++m) x[stride * std::int64_t(i) + m] += s[m] * unscale;
    }
}

// x = M b with a dense n x n row-major M: one warp per row.
__global__ void k_dense(std::int64_t n, const float* m, const float* b, float* x) {
    const std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row >= n) return;
    float s = 0;
    for (std::int64_t k = lane; k < n; k += 32) s += m[row * n + k] * b[k];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) x[row] = s;
}

// r = P (b - r) on rows (r holds A x on entry); x = 0 on free rows first when `cold`.
__global__ void k_residual(Index n, const std::uint8_t* fixed, const float* b, float* r) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const bool free = fixed == nullptr || fixed[i] == 0;
    for (int k = 0; k < 3; ++k) r[3 * i + k] = free ? b[3 * i + k] - r[3 * i + k] : 0.f;
}

// b masked to the free rows, into out.
__global__ void k_mask(Index n, const std::uint8_t* fixed, const float* b, float* out) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const bool free = fixed == nullptr || fixed[i] == 0;
    for (int k = 0; k < 3; ++k) out[3 * i + k] = free ? b[3 * i + k] : 0.f;
}

// Flexible CG's scalars on the device (Multigrid::solve): the iteration's, then the solve's
// inputs (||P b||^2, tolerance^2, cap, warm start) and outcome (iterations, status), so a whole
// solve runs without a read-back (the loop is a conditional graph node, or one read-back per
// iteration when graphs are off).
enum CgSlot {
    cRz = 0,
    cPq,
    cAlpha,
    cRr,
    cRzNew,
    cZq,
    cBeta,
    cBreak, // the iteration's
    cBb,
    cRr0,
    cRef2,
    cTol2,
    cMaxIterations,
    cWarm,
    cIterations,
    cStatus,
    kCgSlots
};
static_assert(cZq == cRzNew + 1, "k_sum_partials<2> writes the pair");
enum CgStatus { kCgRunning = 0, kCgConverged, kCgBreakdown, kCgStopped };
// x = 0 on free rows for a cold start (not warm, or b = 0 on the free rows).
__global__ void k_zero_free_cold(Index n, const std::uint8_t* fixed, const double* s, float* x) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (s[cWarm] != 0 && s[cBb] != 0) return;
    if (i < n && (fixed == nullptr || fixed[i] == 0)) x[3 * i] = x[3 * i + 1] = x[3 * i + 2] = 0;
}
// After r_0, z_0 = M r_0 and r_0.z_0: the reference norm and whether to iterate; `set`: the
// loop is the conditional node `loop` (else the host reads cStatus).
__global__ void k_cg_start(double* s, cudaGraphConditionalHandle loop, bool set) {
    const double bb = s[cBb], rr = s[cRr], rz = s[cRz];
    const double ref2 = bb > 0 ? bb : rr;
    s[cRr0] = rr;
    s[cRef2] = ref2;
    s[cIterations] = 0;
    s[cBreak] = 0;
    int status = kCgRunning;
    if (rr <= s[cTol2] * ref2)
        status = kCgConverged;
    else if (!(rz > 0) || !isfinite(rz))
        status = kCgBreakdown;
    else if (s[cMaxIterations] <= 0)
        status = kCgStopped;
    s[cStatus] = status;
    if (set) cudaGraphSetConditional(loop, status == kCgRunning ? 1u : 0u);
}
// After an iteration: count it (unless alpha broke down: x and r were left as they were) and
// stop on convergence, breakdown or the cap.
__device__ void cg_check(double* s, cudaGraphConditionalHandle loop, bool set) {
    int status = kCgRunning;
    if (s[cBreak] == 1) {
        status = kCgBreakdown;
    } else {
        s[cIterations] += 1;
        if (s[cRr] <= s[cTol2] * s[cRef2])
            status = kCgConverged;
        else if (s[cBreak] == 2)
            status = kCgBreakdown;
        else if (s[cIterations] >= s[cMaxIterations])
            status = kCgStopped;
    }
    s[cStatus] = status;
    if (set) cudaGraphSetConditional(loop, status == kCgRunning ? 1u : 0u);
}
// p.q = the sum of the partials (one warp, fixed order), then alpha = rz / p.q (cBreak = 1 when
// it broke down: x and r stay as they are).
__global__ void k_cg_alpha(const double* partials, int blocks, double* s) {
    double t = 0;
    for (int i = threadIdx.x; i < blocks; i += 32) t += partials[i];
    t = warp_sum(t);
    if (threadIdx.x != 0) return;
    const double pq = s[cPq] = t, alpha = s[cRz] / pq;
    if (!(pq > 0) || !isfinite(alpha))
        s[cBreak] = 1;
    else
        s[cAlpha] = alpha;
}
// x += alpha p; r = P (r - alpha q), unless alpha broke down; with r.r's per-block partials
// (grid-stride over rows, at most 1024 blocks; k_sum_partials<1> adds them).
__global__ void k_cg_update(Index n, const std::uint8_t* fixed, const double* s, const float* p,
                            const float* q, float* x, float* r, double* partials) {
    const bool move = s[cBreak] == 0;
    const float alpha = float(s[cAlpha]);
    double rr = 0;
    for (Index i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const bool free = fixed == nullptr || fixed[i] == 0;
        for (int k = 0; k < 3; ++k) {
            float ri = r[3 * i + k];
            if (move) {
                x[3 * i + k] += alpha * p[3 * i + k];
                ri = free ? ri - alpha * q[3 * i + k] : 0.f;
                r[3 * i + k] = ri;
            }
            rr += double(ri) * double(ri);
        }
    }
    rr = block_sum<kThreads>(rr);
    if (threadIdx.x == 0) partials[blockIdx.x] = rr;
}
// r.r = the sum of k_cg_update's partials (one warp, fixed order), then the part of cg_check
// that needs no z: an iteration that converged or whose alpha broke down ends the solve here, so
// no preconditioner is applied to its residual (`more` = 0; cg_check's outcome for it). Else
// `more` = 1 and the rest of the iteration follows (the V-cycle, beta and k_cg_beta's check).
// `set`: the loop and `more` are conditional nodes (else the host reads cStatus).
__global__ void k_cg_residual(const double* partials, int blocks, double* s,
                              cudaGraphConditionalHandle loop, cudaGraphConditionalHandle more,
                              bool set) {
    double t = 0;
    for (int i = threadIdx.x; i < blocks; i += 32) t += partials[i];
    t = warp_sum(t);
    if (threadIdx.x != 0) return;
    s[cRr] = t;
    const bool broke = s[cBreak] == 1;
    if (!broke && !(t <= s[cTol2] * s[cRef2])) {
        if (set) cudaGraphSetConditional(more, 1u);
        return;
    }
    if (!broke) s[cIterations] += 1;
    s[cStatus] = broke ? kCgBreakdown : kCgConverged;
    if (set) {
        cudaGraphSetConditional(more, 0u);
        cudaGraphSetConditional(loop, 0u);
    }
}
// z = 0 on pinned rows (the V-cycle's output), with the per-block partials of z.r and z.q.
__global__ void k_cg_dots(Index n, const std::uint8_t* fixed, float* z, const float* r,
                          const float* q, double* partials) {
    double zr = 0, zq = 0;
    for (Index i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const bool pinned = fixed[i] != 0;
        for (int k = 0; k < 3; ++k) {
            float zi = z[3 * i + k];
            if (pinned) z[3 * i + k] = zi = 0.f;
            zr += double(zi) * double(r[3 * i + k]);
            zq += double(zi) * double(q[3 * i + k]);
        }
    }
    zr = block_sum<kThreads>(zr);
    if (threadIdx.x == 0) partials[blockIdx.x] = zr;
    __syncthreads(); // block_sum's shared array is reused
    zq = block_sum<kThreads>(zq);
    if (threadIdx.x == 0) partials[1024 + blockIdx.x] = zq;
}
// z.r and z.q from their partials (one warp, fixed order); the flexible (Polak-Ribiere) beta =
// z_new.(r_new - r_old) / rz = -alpha z_new.q / rz; then the iteration's check (cg_check).
__global__ void k_cg_beta(const double* partials, int blocks, double* s,
                          cudaGraphConditionalHandle loop, bool set) {
    double zr = 0, zq = 0;
    for (int i = threadIdx.x; i < blocks; i += 32) {
        zr += partials[i];
        zq += partials[1024 + i];
    }
    zr = warp_sum(zr);
    zq = warp_sum(zq);
    if (threadIdx.x != 0) return;
    s[cRzNew] = zr;
    s[cZq] = zq;
    if (s[cBreak] == 0) {
        if (!(zr > 0) || !isfinite(zr)) {
            s[cBreak] = 2;
        } else {
            s[cBeta] = -s[cAlpha] * zq / s[cRz];
            s[cRz] = zr;
        }
    }
    cg_check(s, loop, set);
}
// p = z + beta p
__global__ void k_cg_direction(std::int64_t n, const double* s, const float* z, float* p) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n || s[cBreak] != 0) return;
    p[i] = z[i] + float(s[cBeta]) * p[i];
}

// The Lanczos start vector of a level's dofs (zero on pinned nodes; fixed: per node, or null).
__global__ void k_lanczos_start(std::int64_t dofs, const std::uint8_t* fixed, float* out) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= dofs) return;
    const bool free = fixed == nullptr || fixed[i / 3] == 0;
    out[i] = free ? static_cast<float>(lanczos_start_value(i)) : 0.0f;
}

__global__ void k_zero_pinned(Index n, const std::uint8_t* fixed, float* z) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && fixed[i]) z[3 * i] = z[3 * i + 1] = z[3 * i + 2] = 0;
}

template <class F> void with_blocks(int b, int k, F&& f) {
    if (b == 3 && k == 3)
        f.template operator()<3, 3>();
    else if (b == 3 && k == 6)
        f.template operator()<3, 6>();
    else if (b == 6 && k == 6)
        f.template operator()<6, 6>();
    else
        EDN_VERIFY(false, ErrorCode::Internal, "multigrid: blocks " << b << " -> " << k);
}

} // namespace
} // namespace edn::cuda
