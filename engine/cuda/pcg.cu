// CUDA twin of the block-Jacobi PCG (cpu/pcg.cpp): Bin-BCSR* SpMV (warp per bin, lane per row)
// fused with the dot products, a fused update kernel, and scalars computed on the device by the
// last block of each reducing kernel (fixed-order sums, so results are deterministic).
#include "cuda/block_reduce.cuh"
#include "cuda/cuda_check.cuh"
#include "cuda/cuda_pcg.hpp"
#include "cuda/upper_spmv.cuh"
#include "sparse/block3.hpp"

#include <algorithm>
#include <cmath>
#include <cooperative_groups.h>
#include <cstdlib>
#include <utility>

namespace edn::cuda {
namespace {

constexpr int kWarp = 32;
constexpr int kSpmvBlock = 256; // 8 warps
constexpr int kUpdateBlock = 256;
/// Resident blocks per SM of the one-wave variants of the upper-part loop's kernels (at most 40
/// registers): 6 x 256 threads x 132 SMs covers 1M-tet p = 1 systems (175K rows) in one wave,
/// where 48 (SpMV) and 64 (update) registers fit only 5 and 4 blocks (two waves). Used only
/// when the unconstrained kernel would need a second wave: with fewer registers each thread has
/// fewer loads in flight (403K tets: 21 -> 27 us per iteration).
constexpr int kOneWaveBlocksPerSm = 6;

enum Status : int { kRunning = 0, kConverged = 1, kBreakdown = 2, kCapped = 3 };

/// Scalars of one solve, in device memory (read back every check_interval iterations).
struct PcgState {
    double bb;      // ||P b||^2
    double ref2;    // squared reference norm
    double tol2;    // squared relative tolerance
    double rz;      // r.z of the current residual
    double rr;      // r.r of the current residual
    double rr0;     // r.r of the initial residual
    double alpha;   // step of the current iteration
    double beta;    // direction update of the next iteration
    int iterations; // x updates done
    int max_iterations;
    int status;
    int single; // single-reduction (Chronopoulos-Gear) recurrences: alpha from r.z, u.Au, beta
};

// ---- reductions: cuda/block_reduce.cuh ----------------------------------------------------

/// Programmatic dependent launch (Hopper): a kernel launched with the PDL attribute may start
/// while its predecessor finishes; it waits here before reading anything the predecessor wrote.
/// Both are no-ops without the attribute (and below sm_90).
__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// Lets the next (PDL-launched) kernel start launching its blocks.
__device__ __forceinline__ void allow_next_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// The reducing tail of the row kernels (kUpdateBlock threads): sums each thread's two values
/// over the block (warp shuffles, then the warps in order) into partials[2 blockIdx.x + k], lets
/// the next kernel launch, and returns true in thread 0 of the last block to finish, with the
/// grid sums (fixed order) in `sum`. Every thread of the block must call it.
__device__ bool reduce_rows_last(double v0, double v1, double* partials, unsigned int* done,
                                 double sum[2]) {
    __shared__ double s[2][kUpdateBlock / kWarp];
    v0 = warp_sum(v0);
    v1 = warp_sum(v1);
    if ((threadIdx.x & 31) == 0) s[0][threadIdx.x / kWarp] = v0, s[1][threadIdx.x / kWarp] = v1;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t0 = 0, t1 = 0;
        for (int w = 0; w < kUpdateBlock / kWarp; ++w) t0 += s[0][w], t1 += s[1][w];
        partials[2 * blockIdx.x] = t0;
        partials[2 * blockIdx.x + 1] = t1;
    }
    allow_next_kernel();
    if (!last_block_done(done, threadIdx.x == 0)) return false;
    block_sum_partials<2, kUpdateBlock>(partials, gridDim.x, sum);
    return threadIdx.x == 0;
}

__device__ __forceinline__ bool is_free(const std::uint8_t* fixed, Index row) {
    return fixed == nullptr || fixed[row] == 0;
}

// ---- preconditioner ---------------------------------------------------------------------------

__global__ void invert_diagonal_kernel(const float* __restrict__ diag, Index rows,
                                       float* __restrict__ inverse_diag) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    float a[9], inv[9];
    for (int k = 0; k < 9; ++k) a[k] = diag[static_cast<std::int64_t>(k) * rows + row];
    invert_block3(a, inv);
    for (int k = 0; k < 9; ++k) inverse_diag[static_cast<std::int64_t>(k) * rows + row] = inv[k];
}

// ---- start of a solve -------------------------------------------------------------------------

/// state.bb = ||P b||^2 (block partials + last block).
__global__ void norm_b_kernel(const float* __restrict__ b, const std::uint8_t* fixed, Index rows,
                              double* partials, unsigned int* done, PcgState* state) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    double v = 0;
    if (row < rows && is_free(fixed, row))
        for (int i = 0; i < 3; ++i) {
            const double bi = b[3 * static_cast<std::int64_t>(row) + i];
            v += bi * bi;
        }
    const double t = block_sum<kUpdateBlock>(v);
    if (threadIdx.x == 0) partials[blockIdx.x] = t;
    if (!last_block_done(done, threadIdx.x == 0)) return;
    double sum[1];
    block_sum_partials<1, kUpdateBlock>(partials, gridDim.x, sum);
    if (threadIdx.x == 0) state->bb = sum[0];
}

/// Free dofs of x = 0 for a cold start or P b = 0.
__global__ void prepare_x_kernel(float* x, const std::uint8_t* fixed, Index rows, bool warm_start,
                                 const PcgState* state) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows || !is_free(fixed, row)) return;
    if (warm_start && state->bb != 0) return;
    for (int i = 0; i < 3; ++i) x[3 * static_cast<std::int64_t>(row) + i] = 0.f;
}

// ---- SpMV family --------------------------------------------------------------------------------

enum class SpmvMode {
    Plain,     // y = A x
    Residual,  // r = P (b - A x), z = P M^-1 r, p0 = z (or 0 when fused), r.z and r.r
    Direction, // q = A p (p = z + beta p_old gathered when fused), p.q, alpha
};

struct SpmvArgs {
    const Index* bin_offsets;
    const Index* columns;
    const float* values;
    const float* diag;
    Index rows, bins;
    unsigned int* counter; // bin counter (WarpDynamic)
    unsigned int* done;    // finished blocks (last-block reduction)
    double* partials;      // per bin, 2 doubles
    PcgState* state;
    const float* x; // Plain/Residual: the multiplied vector; Direction: p_old
    const float* z; // Direction (fused): preconditioned residual
    float* y;       // Plain: A x; Direction: q
    float* p_out;   // Residual: p0; Direction (fused): p_new
    const float* b; // Residual
    float* r;       // Residual
    float* z_out;   // Residual
    const float* inverse_diag;
    const std::uint8_t* fixed;
    const Index* row_counts; // exact off-diagonal blocks per row (split kernel: no padding read)
    bool fused;
    int split; // Direction, static, unfused: warps per bin (1: the one-warp kernel, 2 or 4)
    UpperBinBcsrView<float> upper; // Direction from the upper part: its matrix
    float4* q4;                    // and its q (4 floats per row, zero on entry)
};

/// Listing 1: a warp takes the next bin from a global counter.
__device__ __forceinline__ Index next_bin(unsigned int* counter, int lane) {
    unsigned int bin = 0;
    if (lane == 0) bin = atomicAdd(counter, 1u);
    return static_cast<Index>(__shfl_sync(0xffffffffu, bin, 0));
}

/// Load of the matrix stream: evict-first in L2 when kStream (values are read once per SpMV and
/// are larger than L2; keeping them out leaves the vectors cached for the next kernels).
template <bool kStream, class T> __device__ __forceinline__ T load_matrix(const T* p) {
    if constexpr (kStream)
        return __ldcs(p);
    else
        return __ldg(p);
}

/// One bin: lane = row. Sets the bin's dot products (warp sums, valid in lane 0). kCoherent: x
/// (and z) were written earlier in the same kernel (persistent loop), so they are read with
/// ordinary loads, not through the non-coherent read-only path.
template <SpmvMode kMode, bool kFused, bool kStream, bool kCoherent = false>
__device__ __forceinline__ void spmv_bin(const SpmvArgs& a, Index bin, int lane, float beta,
                                         double& dot0, double& dot1) {
    const auto ldx = [](const float* ptr) {
        if constexpr (kCoherent)
            return *ptr;
        else
            return __ldg(ptr);
    };
    const Index row = bin * kWarp + lane;
    const Index begin = a.bin_offsets[bin];
    const Index width = (a.bin_offsets[bin + 1] - begin) / kWarp;
    const std::int64_t plane = static_cast<std::int64_t>(width) * kWarp;
    const float* v = a.values + 9 * static_cast<std::int64_t>(begin) + lane;
    const Index* cols = a.columns + begin + lane;
    constexpr bool fused = kMode == SpmvMode::Direction && kFused;
    float a0 = 0, a1 = 0, a2 = 0;
    for (Index j = 0; j < width; ++j) {
        const std::int64_t col3 =
            3 * static_cast<std::int64_t>(load_matrix<kStream>(cols + j * kWarp));
        float x0 = ldx(a.x + col3), x1 = ldx(a.x + col3 + 1), x2 = ldx(a.x + col3 + 2);
        if (fused) {
            x0 = ldx(a.z + col3) + beta * x0;
            x1 = ldx(a.z + col3 + 1) + beta * x1;
            x2 = ldx(a.z + col3 + 2) + beta * x2;
        }
        const float* e = v + j * kWarp;
        const auto m = [e, plane](int k) { return load_matrix<kStream>(e + k * plane); };
        a0 += m(0) * x0 + m(1) * x1 + m(2) * x2;
        a1 += m(3) * x0 + m(4) * x1 + m(5) * x2;
        a2 += m(6) * x0 + m(7) * x1 + m(8) * x2;
    }
    double d0 = 0, d1 = 0;
    if (row < a.rows) {
        const std::int64_t n = a.rows, r3 = 3 * static_cast<std::int64_t>(row);
        float x0 = a.x[r3], x1 = a.x[r3 + 1], x2 = a.x[r3 + 2];
        if (fused) {
            x0 = a.z[r3] + beta * x0;
            x1 = a.z[r3 + 1] + beta * x1;
            x2 = a.z[r3 + 2] + beta * x2;
        }
        const float* d = a.diag + row;
        a0 += d[0] * x0 + d[n] * x1 + d[2 * n] * x2;
        a1 += d[3 * n] * x0 + d[4 * n] * x1 + d[5 * n] * x2;
        a2 += d[6 * n] * x0 + d[7 * n] * x1 + d[8 * n] * x2;
        if constexpr (kMode == SpmvMode::Plain) {
            a.y[r3] = a0, a.y[r3 + 1] = a1, a.y[r3 + 2] = a2;
        } else if constexpr (kMode == SpmvMode::Direction) {
            a.y[r3] = a0, a.y[r3 + 1] = a1, a.y[r3 + 2] = a2;
            if (fused) a.p_out[r3] = x0, a.p_out[r3 + 1] = x1, a.p_out[r3 + 2] = x2;
            d0 = double(x0) * a0 + double(x1) * a1 + double(x2) * a2;
        } else { // Residual
            const bool free = is_free(a.fixed, row);
            const float r0 = free ? a.b[r3] - a0 : 0.f, r1 = free ? a.b[r3 + 1] - a1 : 0.f,
                        r2 = free ? a.b[r3 + 2] - a2 : 0.f;
            const float* m = a.inverse_diag + row;
            const float z0 = m[0] * r0 + m[n] * r1 + m[2 * n] * r2;
            const float z1 = m[3 * n] * r0 + m[4 * n] * r1 + m[5 * n] * r2;
            const float z2 = m[6 * n] * r0 + m[7 * n] * r1 + m[8 * n] * r2;
            a.r[r3] = r0, a.r[r3 + 1] = r1, a.r[r3 + 2] = r2;
            a.z_out[r3] = z0, a.z_out[r3 + 1] = z1, a.z_out[r3 + 2] = z2;
            // Fused mode starts from p_old = 0 and beta = 0, so its first p_new is z.
            a.p_out[r3] = a.fused ? 0.f : z0;
            a.p_out[r3 + 1] = a.fused ? 0.f : z1;
            a.p_out[r3 + 2] = a.fused ? 0.f : z2;
            d0 = double(r0) * z0 + double(r1) * z1 + double(r2) * z2;
            d1 = double(r0) * r0 + double(r1) * r1 + double(r2) * r2;
        }
    }
    if constexpr (kMode != SpmvMode::Plain) {
        dot0 = warp_sum(d0);
        dot1 = warp_sum(d1);
    }
}

/// alpha = r.z / p.q of the iteration, or breakdown. Single-reduction form: the SpMV gave
/// u.Au (u the preconditioned residual) instead of p.q, and p.q = u.Au - beta r.z / alpha_old.
__device__ __forceinline__ void set_alpha(PcgState& s, double pq) {
    if (s.single && s.beta != 0) pq -= s.beta * s.rz / s.alpha;
    const double alpha = s.rz / pq;
    if (!(pq > 0) || !isfinite(alpha))
        s.status = kBreakdown;
    else
        s.alpha = alpha;
}

/// q = A p from the upper part (block-Jacobi loop, static mapping, lane = row): p = z + beta
/// p_old gathered when kFused (p_new written for the own row), the transposed blocks added into
/// q4 by atomics (q4 is zero on entry: the update kernel zeroes what it consumes), and
/// p.q = sum_i p_i.D_i p_i + 2 sum_{i<j} p_i.A_ij p_j from the row's own terms; then alpha.
template <bool kFused, int kMinBlocks>
__global__ void __launch_bounds__(kSpmvBlock, kMinBlocks) spmv_upper_kernel(SpmvArgs a) {
    wait_for_previous_kernel();
    if (a.state->status != kRunning) return; // uniform over the grid
    const float beta = static_cast<float>(a.state->beta);
    const Index row = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
    double pq = 0;
    if (row < a.rows) {
        const float* pv = a.x;
        const float* zv = a.z;
        const auto direction = [pv, zv, beta](Index c) {
            const float3 p = Gather3{pv}(c);
            if constexpr (!kFused) return p;
            const float3 z = Gather3{zv}(c);
            return make_float3(z.x + beta * p.x, z.y + beta * p.y, z.z + beta * p.z);
        };
        const float3 own = direction(row);
        const float pi[3] = {own.x, own.y, own.z};
        if constexpr (kFused) {
            const std::int64_t r3 = 3 * static_cast<std::int64_t>(row);
            a.p_out[r3] = own.x, a.p_out[r3 + 1] = own.y, a.p_out[r3 + 2] = own.z;
        }
        float acc[3] = {0, 0, 0}, d[3];
        upper_row<true>(a.upper, row, pi, direction, a.q4, acc);
        diagonal_row(a.diag, a.rows, row, pi, d);
        atomic_add3<true>(a.q4, row, acc[0] + d[0], acc[1] + d[1], acc[2] + d[2]);
        for (int i = 0; i < 3; ++i) pq += double(pi[i]) * (double(d[i]) + 2.0 * double(acc[i]));
    }
    const double t = block_sum<kSpmvBlock>(pq);
    if (threadIdx.x == 0) {
        a.partials[2 * static_cast<std::int64_t>(blockIdx.x)] = t;
        a.partials[2 * static_cast<std::int64_t>(blockIdx.x) + 1] = 0;
    }
    allow_next_kernel();
    if (!last_block_done(a.done, threadIdx.x == 0)) return;
    double sum[2];
    block_sum_partials<2, kSpmvBlock>(a.partials, Index(gridDim.x), sum);
    if (threadIdx.x == 0) set_alpha(*a.state, sum[0]);
}

/// Partials of the dot products: per bin with the dynamic scheduler (a bin's warp varies), per
/// block with the static one (a block's bins are fixed); either way summed in a fixed order.
template <SpmvMode kMode, bool kDynamic, bool kFused, bool kStream>
__global__ void __launch_bounds__(kSpmvBlock) spmv_kernel(SpmvArgs a) {
    float beta = 0;
    if constexpr (kMode != SpmvMode::Plain) {
        wait_for_previous_kernel();
        if (a.state->status != kRunning) return; // uniform over the grid
        beta = static_cast<float>(a.state->beta);
    }
    const int lane = threadIdx.x & 31;
    double dot0 = 0, dot1 = 0;
    if constexpr (kDynamic) {
        for (Index bin = next_bin(a.counter, lane); bin < a.bins; bin = next_bin(a.counter, lane)) {
            spmv_bin<kMode, kFused, kStream>(a, bin, lane, beta, dot0, dot1);
            if (kMode != SpmvMode::Plain && lane == 0) {
                a.partials[2 * static_cast<std::int64_t>(bin)] = dot0;
                a.partials[2 * static_cast<std::int64_t>(bin) + 1] = dot1;
            }
        }
    } else {
        const Index bin = static_cast<Index>(
            (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp);
        if (bin < a.bins) spmv_bin<kMode, kFused, kStream>(a, bin, lane, beta, dot0, dot1);
        if constexpr (kMode != SpmvMode::Plain) {
            __shared__ double s[2][kSpmvBlock / kWarp];
            if (lane == 0) s[0][threadIdx.x / kWarp] = dot0, s[1][threadIdx.x / kWarp] = dot1;
            __syncthreads();
            if (threadIdx.x == 0) {
                double t0 = 0, t1 = 0;
                for (int w = 0; w < kSpmvBlock / kWarp; ++w) t0 += s[0][w], t1 += s[1][w];
                a.partials[2 * static_cast<std::int64_t>(blockIdx.x)] = t0;
                a.partials[2 * static_cast<std::int64_t>(blockIdx.x) + 1] = t1;
            }
        }
    }
    if constexpr (kMode == SpmvMode::Plain) {
        return;
    } else {
        allow_next_kernel();
        if (!last_block_done(a.done, kDynamic ? lane == 0 : threadIdx.x == 0)) return;
        if constexpr (kDynamic) {
            // Every block has taken its last bin before being counted: safe to reset.
            if (threadIdx.x == 0) *a.counter = 0;
        }
        double sum[2];
        block_sum_partials<2, kSpmvBlock>(a.partials, kDynamic ? a.bins : Index(gridDim.x), sum);
        if (threadIdx.x != 0) return;
        PcgState& s = *a.state;
        if constexpr (kMode == SpmvMode::Residual) {
            s.rz = sum[0];
            s.rr = sum[1];
            s.rr0 = sum[1];
            s.ref2 = s.bb > 0 ? s.bb : sum[1];
            s.beta = 0;
            if (sum[1] <= s.tol2 * s.ref2) s.status = kConverged;
        } else {
            set_alpha(s, sum[0]);
        }
    }
}

/// q = A p and p.q with K warps per bin (unfused direction): a block of K warps takes bins
/// blockIdx.x, + gridDim.x, ... (a grid of resident blocks, static assignment, so the dot product
/// is summed in a fixed order); warp `sub` takes slots sub, sub + K, ... of its lane's row up to
/// the row's exact count (padding is not read); the warps' sums meet in shared memory and the
/// bin's 96 outputs are written (and dotted with p) by consecutive threads, coalesced. More loads
/// in flight per bin than the one-warp kernel: K = 2 for the short rows of p = 1, K = 4 for the
/// long rows of p >= 2 (bench/README.md).
template <int K, bool kStream>
__global__ void __launch_bounds__(K* kWarp) spmv_direction_split_kernel(SpmvArgs a) {
    wait_for_previous_kernel();
    if (a.state->status != kRunning) return; // uniform over the grid
    __shared__ float part[K][3][kWarp];
    const int lane = threadIdx.x & 31, sub = threadIdx.x >> 5;
    double dot = 0;
    for (Index bin = blockIdx.x; bin < a.bins; bin += gridDim.x) {
        const Index row = bin * kWarp + lane;
        const bool valid = row < a.rows;
        const Index begin = a.bin_offsets[bin];
        const std::int64_t plane = a.bin_offsets[bin + 1] - begin;
        const Index count = valid ? __ldg(a.row_counts + row) : 0;
        const float* v = a.values + 9 * static_cast<std::int64_t>(begin) + lane;
        const Index* cols = a.columns + begin + lane;
        float a0 = 0, a1 = 0, a2 = 0;
#pragma unroll 2
        for (Index j = sub; j < count; j += K) {
            const std::int64_t col3 =
                3 * static_cast<std::int64_t>(load_matrix<kStream>(cols + j * kWarp));
            const float x0 = __ldg(a.x + col3), x1 = __ldg(a.x + col3 + 1),
                        x2 = __ldg(a.x + col3 + 2);
            const float* e = v + j * kWarp;
            const auto m = [e, plane](int k) { return load_matrix<kStream>(e + k * plane); };
            a0 += m(0) * x0 + m(1) * x1 + m(2) * x2;
            a1 += m(3) * x0 + m(4) * x1 + m(5) * x2;
            a2 += m(6) * x0 + m(7) * x1 + m(8) * x2;
        }
        if (sub == 0 && valid) {
            const std::int64_t n = a.rows, r3 = 3 * static_cast<std::int64_t>(row);
            const float x0 = __ldg(a.x + r3), x1 = __ldg(a.x + r3 + 1), x2 = __ldg(a.x + r3 + 2);
            const float* d = a.diag + row;
            a0 += d[0] * x0 + d[n] * x1 + d[2 * n] * x2;
            a1 += d[3 * n] * x0 + d[4 * n] * x1 + d[5 * n] * x2;
            a2 += d[6 * n] * x0 + d[7 * n] * x1 + d[8 * n] * x2;
        }
        part[sub][0][lane] = a0, part[sub][1][lane] = a1, part[sub][2][lane] = a2;
        __syncthreads();
        // The bin's 96 outputs summed over the warps, written (and dotted with p) contiguously.
        const std::int64_t out = 3 * static_cast<std::int64_t>(bin) * kWarp;
        for (int o = threadIdx.x; o < 3 * kWarp; o += K * kWarp) {
            const int l = o / 3, c = o % 3;
            if (bin * kWarp + l >= a.rows) break;
            float sum = 0;
#pragma unroll
            for (int k = 0; k < K; ++k) sum += part[k][c][l];
            a.y[out + o] = sum;
            dot += double(__ldg(a.x + out + o)) * sum;
        }
        __syncthreads(); // part is reused by the next bin
    }
    __shared__ double warp_dot[K];
    dot = warp_sum(dot);
    if (lane == 0) warp_dot[sub] = dot;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0;
        for (int k = 0; k < K; ++k) t += warp_dot[k];
        a.partials[2 * static_cast<std::int64_t>(blockIdx.x)] = t;
        a.partials[2 * static_cast<std::int64_t>(blockIdx.x) + 1] = 0;
    }
    allow_next_kernel();
    if (!last_block_done(a.done, threadIdx.x == 0)) return;
    double sum[2];
    block_sum_partials<2, K * kWarp>(a.partials, Index(gridDim.x), sum);
    if (threadIdx.x == 0) set_alpha(*a.state, sum[0]);
}

// ---- update and direction -----------------------------------------------------------------------

/// Matrix bytes a vector kernel asks L2 to fetch ahead of the next q = A p: the values and
/// columns of the first bins, which the static SpMV's first wave reads first. The update and
/// direction kernels are latency bound (a grid-wide reduction each), so DRAM would idle while
/// they run; the prefetch is issued before the PDL wait (the matrix is constant during a solve)
/// and only reads, so it changes no result.
struct MatrixPrefetch {
    const float* values = nullptr;
    const Index* columns = nullptr;
    const Index* bin_offsets = nullptr; // bin_offsets[bins] = slots: the bounds, read on device
    Index bins = 0;
    std::uint32_t chunk = 0; // value bytes per block (a multiple of 16; columns: chunk / 9)
    unsigned int blocks = 0; // blocks that prefetch (0: none)
};

__device__ __forceinline__ void prefetch_l2(const void* p, std::int64_t offset, std::int64_t total,
                                            std::int64_t chunk) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if (offset >= total) return;
    const auto bytes = static_cast<std::uint32_t>(std::min(chunk, total - offset) & ~15ll);
    if (bytes == 0) return;
    asm volatile(
        "cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(static_cast<const char*>(p) + offset),
        "r"(bytes)
        : "memory");
#endif
}

/// Block b prefetches value bytes [b chunk, (b + 1) chunk) (thread 0) and the matching share of
/// the columns (thread 32).
__device__ __forceinline__ void prefetch_matrix(const MatrixPrefetch& pf) {
    if (blockIdx.x >= pf.blocks || (threadIdx.x != 0 && threadIdx.x != kWarp)) return;
    const std::int64_t slots = __ldg(pf.bin_offsets + pf.bins);
    if (threadIdx.x == 0) {
        prefetch_l2(pf.values, std::int64_t(blockIdx.x) * pf.chunk, 36 * slots, pf.chunk);
    } else {
        const std::int64_t chunk = ((pf.chunk / 9) + 15) & ~15ll;
        prefetch_l2(pf.columns, std::int64_t(blockIdx.x) * chunk, 4 * slots, chunk);
    }
}

/// One row of the update from its p and q: x += alpha p; r = P (r - alpha q); z = P M^-1 r
/// (returned in zv); adds r.z and r.r.
__device__ __forceinline__ void update_row_values(float* __restrict__ x, float* __restrict__ r,
                                                  const float pv[3], const float qv[3],
                                                  const float* __restrict__ inverse_diag,
                                                  const std::uint8_t* fixed, Index rows, Index row,
                                                  float alpha, float zv[3], double& rz,
                                                  double& rr) {
    const std::int64_t n = rows, r3 = 3 * static_cast<std::int64_t>(row);
    const bool free = is_free(fixed, row);
    float rv[3];
    for (int i = 0; i < 3; ++i) {
        x[r3 + i] += alpha * pv[i];
        rv[i] = free ? r[r3 + i] - alpha * qv[i] : 0.f;
        r[r3 + i] = rv[i];
    }
    const float* m = inverse_diag + row;
    for (int i = 0; i < 3; ++i) {
        zv[i] = m[3 * i * n] * rv[0] + m[(3 * i + 1) * n] * rv[1] + m[(3 * i + 2) * n] * rv[2];
        rz += double(rv[i]) * zv[i];
        rr += double(rv[i]) * rv[i];
    }
}

/// q of a row from the upper-part SpMV's padded q4, which is zeroed for the next SpMV.
__device__ __forceinline__ void take_q4(float4* q4, Index row, float qv[3]) {
    const float4 v = q4[row];
    q4[row] = make_float4(0.f, 0.f, 0.f, 0.f);
    qv[0] = v.x, qv[1] = v.y, qv[2] = v.z;
}

/// update_row_values with p, q and z as 3 floats per row (q from q4 when given).
__device__ __forceinline__ void
update_row(float* __restrict__ x, float* __restrict__ r, float* __restrict__ z, const float* p,
           const float* q, const float* __restrict__ inverse_diag, const std::uint8_t* fixed,
           Index rows, Index row, float alpha, double& rz, double& rr, float4* q4 = nullptr) {
    const std::int64_t r3 = 3 * static_cast<std::int64_t>(row);
    const float pv[3] = {p[r3], p[r3 + 1], p[r3 + 2]};
    float qv[3], zv[3];
    if (q4)
        take_q4(q4, row, qv);
    else
        qv[0] = q[r3], qv[1] = q[r3 + 1], qv[2] = q[r3 + 2];
    update_row_values(x, r, pv, qv, inverse_diag, fixed, rows, row, alpha, zv, rz, rr);
    z[r3] = zv[0], z[r3 + 1] = zv[1], z[r3 + 2] = zv[2];
}

/// The last block's decision after an update with grid sums rz = r.z (r.u) and rr = r.r:
/// count the iteration, then converged, breakdown, or beta for the next direction (and capped).
__device__ __forceinline__ void finish_iteration(PcgState& st, double rz, double rr) {
    ++st.iterations;
    st.rr = rr;
    if (rr <= st.tol2 * st.ref2) {
        st.status = kConverged;
    } else if (!(rz > 0) || !isfinite(rz)) {
        st.status = kBreakdown;
    } else {
        st.beta = rz / st.rz;
        st.rz = rz;
        if (st.iterations >= st.max_iterations) st.status = kCapped;
    }
}

/// x += alpha p; r = P (r - alpha q); z = P M^-1 r; r.z, r.r; the last block decides.
template <int kMinBlocks>
__global__ void __launch_bounds__(kUpdateBlock, kMinBlocks)
    update_kernel(float* __restrict__ x, float* __restrict__ r, float* __restrict__ z,
                  const float* __restrict__ p, const float* __restrict__ q,
                  const float* __restrict__ inverse_diag, const std::uint8_t* fixed, Index rows,
                  double* partials, unsigned int* done, PcgState* state, MatrixPrefetch prefetch,
                  float4* q4) {
    prefetch_matrix(prefetch);
    wait_for_previous_kernel();
    if (state->status != kRunning) return;
    const float alpha = static_cast<float>(state->alpha);
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    double rz = 0, rr = 0;
    if (row < rows) update_row(x, r, z, p, q, inverse_diag, fixed, rows, row, alpha, rz, rr, q4);
    double sum[2];
    if (!reduce_rows_last(rz, rr, partials, done, sum)) return;
    finish_iteration(*state, sum[0], sum[1]);
}

/// Single-reduction iteration (Chronopoulos-Gear), the vector half: p = u + beta p,
/// s = w + beta s (s = A p without an SpMV; w = A u from the previous SpMV), x += alpha p,
/// r = P (r - alpha s), u = P M^-1 r; r.u, r.r; the last block decides and sets beta. The SpMV
/// that follows computes w = A u and u.w, from which set_alpha derives alpha: one grid-wide
/// dependency fewer per iteration than update_kernel + direction_kernel.
__global__ void update_single_kernel(float* __restrict__ x, float* __restrict__ r,
                                     float* __restrict__ u, float* __restrict__ p,
                                     float* __restrict__ s, const float* __restrict__ w,
                                     const float* __restrict__ inverse_diag,
                                     const std::uint8_t* fixed, Index rows, double* partials,
                                     unsigned int* done, PcgState* state) {
    wait_for_previous_kernel();
    if (state->status != kRunning) return;
    const float alpha = static_cast<float>(state->alpha);
    const float beta = static_cast<float>(state->beta);
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    double ru = 0, rr = 0;
    if (row < rows) {
        const std::int64_t r3 = 3 * static_cast<std::int64_t>(row);
        for (int i = 0; i < 3; ++i) {
            p[r3 + i] = u[r3 + i] + beta * p[r3 + i];
            s[r3 + i] = w[r3 + i] + beta * s[r3 + i];
        }
        update_row(x, r, u, p, s, inverse_diag, fixed, rows, row, alpha, ru, rr); // u = M^-1 r
    }
    double sum[2];
    if (!reduce_rows_last(ru, rr, partials, done, sum)) return;
    finish_iteration(*state, sum[0], sum[1]);
}

/// p = z + beta p (unfused variant).
__global__ void direction_kernel(float* __restrict__ p, const float* __restrict__ z,
                                 std::int64_t n3, const PcgState* state) {
    wait_for_previous_kernel();
    if (state->status != kRunning) return;
    const float beta = static_cast<float>(state->beta);
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n3) p[i] = z[i] + beta * p[i];
}

// ---- two-level preconditioner (solver/two_level.hpp) -------------------------------------------

/// x += alpha p; r = P (r - alpha q); z = P M^-1 r (the block-Jacobi part); r.r; the last block
/// counts the iteration and decides convergence and the cap (beta comes after the coarse part).
__global__ void update_two_level_kernel(float* __restrict__ x, float* __restrict__ r,
                                        float* __restrict__ z, const float* __restrict__ p,
                                        const float* __restrict__ q,
                                        const float* __restrict__ inverse_diag,
                                        const std::uint8_t* fixed, Index rows, double* partials,
                                        unsigned int* done, PcgState* state) {
    wait_for_previous_kernel();
    if (state->status != kRunning) return;
    const float alpha = static_cast<float>(state->alpha);
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    double rr = 0, rz = 0; // r.z of the block-Jacobi part alone is not used
    if (row < rows) update_row(x, r, z, p, q, inverse_diag, fixed, rows, row, alpha, rz, rr);
    double sum[2];
    if (!reduce_rows_last(rr, 0.0, partials, done, sum)) return;
    PcgState& st = *state;
    ++st.iterations;
    st.rr = sum[0];
    if (sum[0] <= st.tol2 * st.ref2)
        st.status = kConverged;
    else if (st.iterations >= st.max_iterations)
        st.status = kCapped;
}

struct CoarseArgs {
    Index vertices;
    const Index* offsets;
    const Index* indices;
    const float* weight;
    const Index* pro_vertex;
    const float* pro_weight;
    const std::uint8_t* fixed; // the fine mask: vertex v is node v
    float* rc;                 // coarse residual
    float* xc;                 // coarse solution
    float* zc;                 // coarse preconditioned residual
    float* pc;                 // coarse direction
    const float* inverse_diag; // coarse block Jacobi
    double tol2;
    int max_iterations;
};

/// Starts a coarse solve: rc = P^T r (0 on pinned vertices), xc = 0, zc = pc = Mc^-1 rc; the last
/// block sets the inner state (reference norm ||rc||, r.z, running or converged). Nothing runs
/// (and the inner state says converged) once the outer solve stopped.
__global__ void restrict_kernel(CoarseArgs c, const float* __restrict__ r, double* partials,
                                unsigned int* done, const PcgState* outer, PcgState* inner) {
    wait_for_previous_kernel();
    if (outer->status != kRunning) {
        if (blockIdx.x == 0 && threadIdx.x == 0) inner->status = kConverged;
        return;
    }
    const Index v = blockIdx.x * blockDim.x + threadIdx.x;
    double rz = 0, rr = 0;
    if (v < c.vertices) {
        const std::int64_t n = c.vertices, v3 = 3 * static_cast<std::int64_t>(v);
        float s[3] = {0.f, 0.f, 0.f};
        if (is_free(c.fixed, v))
            for (Index k = c.offsets[v]; k < c.offsets[v + 1]; ++k) {
                const float w = c.weight[k];
                const std::int64_t i3 = 3 * static_cast<std::int64_t>(c.indices[k]);
                s[0] += w * r[i3], s[1] += w * r[i3 + 1], s[2] += w * r[i3 + 2];
            }
        const float* m = c.inverse_diag + v;
        for (int i = 0; i < 3; ++i) {
            const float zi =
                m[3 * i * n] * s[0] + m[(3 * i + 1) * n] * s[1] + m[(3 * i + 2) * n] * s[2];
            c.rc[v3 + i] = s[i];
            c.xc[v3 + i] = 0.f;
            c.zc[v3 + i] = zi;
            c.pc[v3 + i] = zi;
            rz += double(s[i]) * zi;
            rr += double(s[i]) * s[i];
        }
    }
    double sum[2];
    if (!reduce_rows_last(rz, rr, partials, done, sum)) return;
    PcgState st{};
    st.bb = sum[1];
    st.ref2 = sum[1];
    st.rr = st.rr0 = sum[1];
    st.rz = sum[0];
    st.tol2 = c.tol2;
    st.max_iterations = c.max_iterations;
    st.status = !(sum[1] > 0) || !(sum[0] > 0) ? kConverged : kRunning;
    *inner = st;
}

/// z += P xc on free rows; r.z and z.q (free rows) -> the last block sets the flexible
/// (Polak-Ribiere) beta = z_new.(r_new - r_old) / rz_old = -alpha z.q / rz_old, or beta = 0 at
/// the start (`initial`), and rz = r.z.
__global__ void prolong_kernel(CoarseArgs c, const float* __restrict__ r, float* __restrict__ z,
                               const float* __restrict__ q, Index rows, bool initial,
                               double* partials, unsigned int* done, PcgState* state) {
    wait_for_previous_kernel();
    if (state->status != kRunning) return;
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    double rz = 0, zq = 0;
    if (row < rows) {
        const std::int64_t r3 = 3 * static_cast<std::int64_t>(row);
        if (is_free(c.fixed, row)) {
            float zi[3] = {z[r3], z[r3 + 1], z[r3 + 2]};
            for (int k = 0; k < 3; ++k) {
                const Index v = c.pro_vertex[3 * static_cast<std::int64_t>(row) + k];
                if (v < 0) break;
                const float w = c.pro_weight[3 * static_cast<std::int64_t>(row) + k];
                const std::int64_t v3 = 3 * static_cast<std::int64_t>(v);
                zi[0] += w * c.xc[v3], zi[1] += w * c.xc[v3 + 1], zi[2] += w * c.xc[v3 + 2];
            }
            for (int i = 0; i < 3; ++i) {
                z[r3 + i] = zi[i];
                rz += double(r[r3 + i]) * zi[i];
                if (!initial) zq += double(zi[i]) * q[r3 + i];
            }
        }
    }
    double sum[2];
    if (!reduce_rows_last(rz, zq, partials, done, sum)) return;
    PcgState& st = *state;
    if (!(sum[0] > 0) || !isfinite(sum[0])) {
        st.status = kBreakdown;
        return;
    }
    st.beta = initial ? 0.0 : -st.alpha * sum[1] / st.rz;
    st.rz = sum[0];
}

// ---- persistent loop ---------------------------------------------------------------------------

constexpr int kPersistentBlock = 256;

/// Sum over the grid of one double per block, in a fixed order, valid in every thread of every
/// block (each block reduces all partials itself: no extra grid barrier for a broadcast).
template <int K> __device__ void grid_sum(const double* partials, double out[K]) {
    __shared__ double result[K];
    double sum[K];
    block_sum_partials<K, kPersistentBlock>(partials, gridDim.x, sum);
    if (threadIdx.x == 0)
        for (int k = 0; k < K; ++k) result[k] = sum[k];
    __syncthreads();
    for (int k = 0; k < K; ++k) out[k] = result[k];
    __syncthreads();
}

/// Block sum of per-thread values into partials[K * blockIdx.x + k].
template <int K> __device__ void block_partials(double v[K], double* partials) {
    __shared__ double s[K][kPersistentBlock / kWarp];
    for (int k = 0; k < K; ++k) v[k] = warp_sum(v[k]);
    if ((threadIdx.x & 31) == 0)
        for (int k = 0; k < K; ++k) s[k][threadIdx.x / kWarp] = v[k];
    __syncthreads();
    if (threadIdx.x == 0)
        for (int k = 0; k < K; ++k) {
            double t = 0;
            for (int w = 0; w < kPersistentBlock / kWarp; ++w) t += s[k][w];
            partials[K * blockIdx.x + k] = t;
        }
}

/// The whole PCG loop in one cooperative launch (after the Residual SpMV set the state up): per
/// iteration SpMV + p.q | alpha, x/r/z update + r.z, r.r | beta, p = z + beta p, with a grid
/// barrier after each phase. Same scalars and stopping rule as the kernel-per-phase loop; every
/// block computes them itself from the same partials, so all blocks agree without a broadcast.
template <bool kStream>
__global__ void __launch_bounds__(kPersistentBlock)
    pcg_persistent_kernel(SpmvArgs a, float* __restrict__ x, float* __restrict__ r,
                          float* __restrict__ z, float* __restrict__ p, float* __restrict__ q,
                          double* partials_a, double* partials_b) {
    namespace cg = cooperative_groups;
    cg::grid_group grid = cg::this_grid();
    PcgState st = *a.state;
    if (st.status != kRunning) return; // uniform: every block read the same state
    const int lane = threadIdx.x & 31;
    const Index warp = static_cast<Index>(
        (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp);
    const Index warps = static_cast<Index>(gridDim.x * (blockDim.x / kWarp));
    const Index threads = static_cast<Index>(gridDim.x * blockDim.x);
    const Index first = static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
    SpmvArgs dir = a;
    dir.x = p;
    dir.y = q;
    while (true) {
        // 1. q = A p, p.q
        double pq[1] = {0};
        for (Index bin = warp; bin < a.bins; bin += warps) {
            double d0 = 0, d1 = 0;
            spmv_bin<SpmvMode::Direction, false, kStream, true>(dir, bin, lane, 0.f, d0, d1);
            if (lane == 0) pq[0] += d0;
        }
        block_partials<1>(pq, partials_a);
        grid.sync();
        double sum_pq[1];
        grid_sum<1>(partials_a, sum_pq);
        const double alpha = st.rz / sum_pq[0];
        if (!(sum_pq[0] > 0) || !isfinite(alpha)) {
            st.status = kBreakdown;
            break;
        }
        st.alpha = alpha;
        // 2. x += alpha p; r = P (r - alpha q); z = P M^-1 r; r.z, r.r
        double dots[2] = {0, 0};
        const float af = static_cast<float>(alpha);
        for (Index row = first; row < a.rows; row += threads)
            update_row(x, r, z, p, q, a.inverse_diag, a.fixed, a.rows, row, af, dots[0], dots[1]);
        block_partials<2>(dots, partials_b);
        grid.sync();
        double sums[2];
        grid_sum<2>(partials_b, sums);
        finish_iteration(st, sums[0], sums[1]);
        if (st.status == kConverged || st.status == kBreakdown) break;
        // 3. p = z + beta p (also after the cap, as the kernel-per-phase loop does)
        const float bf = static_cast<float>(st.beta);
        for (Index i = first; i < 3 * a.rows; i += threads) p[i] = z[i] + bf * p[i];
        if (st.status == kCapped) break;
        grid.sync();
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) *a.state = st;
}

/// Blocks of `block` threads of `kernel` resident on the whole device at once.
template <class Kernel> int resident_blocks(Kernel kernel, int block) {
    int device = 0, sms = 0, per_sm = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&device));
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    EDN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
    return std::max(1, per_sm * sms);
}

unsigned int grid_for(std::int64_t n, int block) {
    return static_cast<unsigned int>(std::max<std::int64_t>(1, (n + block - 1) / block));
}

/// Enough resident warps to cover the device for warp-dynamic kernels.
unsigned int persistent_grid(Index bins) {
    int device = 0, sms = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&device));
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    const std::int64_t warps = std::min<std::int64_t>(bins, static_cast<std::int64_t>(sms) * 64);
    return grid_for(warps * kWarp, kSpmvBlock);
}

/// Launches `kernel`, with the programmatic-dependent-launch attribute when `pdl` (the kernel
/// then must call wait_for_previous_kernel() before reading its predecessor's output).
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), unsigned int grid, int block, cudaStream_t stream, bool pdl,
            Args&&... args) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(grid);
    config.blockDim = dim3(block);
    config.dynamicSmemBytes = 0;
    config.stream = stream;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = pdl ? 1 : 0;
    EDN_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...));
}

template <SpmvMode kMode, bool kFused, bool kStream>
void launch_spmv_as(const SpmvArgs& args, SpmvSchedule schedule, bool pdl, cudaStream_t stream) {
    if (schedule == SpmvSchedule::WarpDynamic)
        launch(spmv_kernel<kMode, true, kFused, kStream>, persistent_grid(args.bins), kSpmvBlock,
               stream, pdl, args);
    else
        launch(spmv_kernel<kMode, false, kFused, kStream>,
               grid_for(static_cast<std::int64_t>(args.bins) * kWarp, kSpmvBlock), kSpmvBlock,
               stream, pdl, args);
}

template <SpmvMode kMode>
void launch_spmv(const SpmvArgs& args, SpmvSchedule schedule, bool streaming, bool pdl,
                 cudaStream_t stream) {
    if (args.bins == 0) return;
    const bool fused = kMode == SpmvMode::Direction && args.fused;
    if (kMode == SpmvMode::Direction && args.split > 1 && !fused &&
        schedule == SpmvSchedule::Static) {
        // Resident blocks of each variant, looked up once.
        static const int resident[2][2] = {
            {resident_blocks(spmv_direction_split_kernel<2, false>, 2 * kWarp),
             resident_blocks(spmv_direction_split_kernel<2, true>, 2 * kWarp)},
            {resident_blocks(spmv_direction_split_kernel<4, false>, 4 * kWarp),
             resident_blocks(spmv_direction_split_kernel<4, true>, 4 * kWarp)}};
        const int k = args.split == 2 ? 0 : 1;
        const unsigned int grid =
            static_cast<unsigned int>(std::min<std::int64_t>(args.bins, resident[k][streaming]));
        if (k == 0 && streaming)
            launch(spmv_direction_split_kernel<2, true>, grid, 2 * kWarp, stream, pdl, args);
        else if (k == 0)
            launch(spmv_direction_split_kernel<2, false>, grid, 2 * kWarp, stream, pdl, args);
        else if (streaming)
            launch(spmv_direction_split_kernel<4, true>, grid, 4 * kWarp, stream, pdl, args);
        else
            launch(spmv_direction_split_kernel<4, false>, grid, 4 * kWarp, stream, pdl, args);
        return;
    }
    if (fused && streaming)
        launch_spmv_as<kMode, true, true>(args, schedule, pdl, stream);
    else if (fused)
        launch_spmv_as<kMode, true, false>(args, schedule, pdl, stream);
    else if (streaming)
        launch_spmv_as<kMode, false, true>(args, schedule, pdl, stream);
    else
        launch_spmv_as<kMode, false, false>(args, schedule, pdl, stream);
}

SpmvArgs matrix_args(const BinBcsrMatrixView<float>& m) {
    SpmvArgs a{};
    a.bin_offsets = m.pattern.bin_offsets;
    a.columns = m.pattern.columns;
    a.values = m.values;
    a.diag = m.diag;
    a.rows = m.pattern.num_rows;
    a.bins = m.pattern.num_bins;
    a.row_counts = m.pattern.row_counts;
    return a;
}

/// Pinned host memory (cudaMallocHost), for async read-backs.
template <class T> struct PinnedHost {
    T* data = nullptr;
    explicit PinnedHost(std::size_t count) {
        EDN_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data), count * sizeof(T)));
    }
    ~PinnedHost() {
        if (data) cudaFreeHost(data);
    }
    PinnedHost(const PinnedHost&) = delete;
    PinnedHost& operator=(const PinnedHost&) = delete;
};

} // namespace

// ---- free functions -----------------------------------------------------------------------------

void spmv(const BinBcsrMatrixView<float>& device_matrix, const float* x, float* y, void* stream) {
    SpmvArgs a = matrix_args(device_matrix);
    a.x = x;
    a.y = y;
    launch_spmv<SpmvMode::Plain>(a, SpmvSchedule::Static, true, false,
                                 static_cast<cudaStream_t>(stream));
}

void device_synchronize() {
    EDN_CUDA_CHECK(cudaDeviceSynchronize());
}

// ---- DeviceMatrix -------------------------------------------------------------------------------

struct DeviceMatrix::Impl {
    BinBcsrPatternView pattern;
    DeviceBuffer<Index> bin_offsets, columns, row_counts;
    DeviceBuffer<float> values, diag;
};

template <class T> static void upload(DeviceBuffer<T>& dst, const std::vector<T>& src) {
    dst.resize(src.size());
    if (!src.empty())
        EDN_CUDA_CHECK(cudaMemcpy(dst.data(), src.data(), dst.bytes(), cudaMemcpyHostToDevice));
}

DeviceMatrix::DeviceMatrix(const BinBcsrMatrix<float>& host) : impl_(std::make_unique<Impl>()) {
    EDN_VERIFY(host.pattern != nullptr, ErrorCode::Usage, "DeviceMatrix: matrix has no pattern");
    const BinBcsrPattern& p = *host.pattern;
    Impl& d = *impl_;
    upload(d.bin_offsets, p.bin_offsets);
    upload(d.columns, p.columns);
    upload(d.row_counts, p.row_counts);
    upload(d.values, host.values);
    upload(d.diag, host.diag);
    d.pattern = {p.num_rows,       p.num_bins(),        d.bin_offsets.data(),
                 d.columns.data(), d.row_counts.data(), new_pattern_generation()};
}

DeviceMatrix::~DeviceMatrix() = default;

BinBcsrMatrixView<float> DeviceMatrix::view() const {
    return {impl_->pattern, impl_->values.data(), impl_->diag.data()};
}

std::vector<float> DeviceMatrix::multiply(const std::vector<float>& x) const {
    const std::size_t n3 = 3 * static_cast<std::size_t>(impl_->pattern.num_rows);
    EDN_VERIFY(x.size() == n3, ErrorCode::Usage,
               "DeviceMatrix::multiply: x has " << x.size() << " entries, expected " << n3);
    std::vector<float> y(n3);
    if (n3 == 0) return y;
    DeviceBuffer<float> dx(n3), dy(n3);
    EDN_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice));
    spmv(view(), dx.data(), dy.data());
    EDN_CUDA_CHECK(cudaMemcpy(y.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
    return y;
}

// ---- Pcg ----------------------------------------------------------------------------------------

PcgResult to_result(const PcgState& state) {
    PcgResult result;
    result.iterations = state.iterations;
    result.initial_residual = std::sqrt(state.rr0);
    result.final_residual = std::sqrt(state.rr);
    result.reference_norm = std::sqrt(state.ref2);
    result.converged = state.status == kConverged;
    result.breakdown = state.status == kBreakdown;
    return result;
}

struct Pcg::Impl {
    Index rows = 0;
    PcgOptions options;
    cudaStream_t stream = nullptr;
    DeviceBuffer<float> r, z, p[2], q, inverse_diag;
    std::unique_ptr<UpperMatrix> upper; // options.upper_spmv: the matrix's upper part
    DeviceBuffer<float> q4;             // and q = A p from it (4 floats per row)
    bool upper_out_of_memory = false;   // its allocation failed once: full matrix only
    // Two-level: coarse residual, solution, z, direction, A p and inverse diagonal; inner state.
    DeviceBuffer<float> rc, xc, zc, pc, qc, inverse_diag_c;
    DeviceBuffer<PcgState> inner_state;
    Index coarse_rows = -1;
    DeviceBuffer<double> partials;
    DeviceBuffer<unsigned int> counters; // [0] bin counter, [1] finished blocks
    DeviceBuffer<PcgState> state;
    PinnedHost<PcgState> host_state{3}; // [0] initial values, [1], [2] read-back slots
    cudaEvent_t checked[2]{};
    bool pdl_supported = false; // programmatic dependent launch needs compute capability 9.0
    int cooperative_blocks[2] = {0, 0}; // co-resident blocks of the persistent kernel (stream, not)
    int upper_resident_blocks[2] = {0, 0}; // of spmv_upper_kernel<true, 1 | kOneWave...>

    /// The captured chunk graph and what it was captured for (pointers, sizes, options).
    struct GraphKey {
        SpmvArgs args{};
        UpperBinBcsrView<float> upper{};
        float* x = nullptr;
        PcgOptions options{};
        int count = 0;
        // Two-level: the coarse matrix and prolongation the graph was captured with.
        const float* coarse_values = nullptr;
        const float* coarse_diag = nullptr;
        const Index* coarse_pro = nullptr;
        Index coarse_rows = 0;
        int coarse_iterations = 0;
        double coarse_tol = 0;
        bool operator==(const GraphKey& o) const {
            const SpmvArgs& a = args;
            const SpmvArgs& b = o.args;
            return coarse_values == o.coarse_values && coarse_diag == o.coarse_diag &&
                   coarse_pro == o.coarse_pro && coarse_rows == o.coarse_rows &&
                   coarse_iterations == o.coarse_iterations && coarse_tol == o.coarse_tol &&
                   a.bin_offsets == b.bin_offsets && a.columns == b.columns &&
                   a.values == b.values && a.diag == b.diag && a.rows == b.rows &&
                   a.bins == b.bins && a.fixed == b.fixed && a.fused == b.fused &&
                   a.split == b.split && a.row_counts == b.row_counts && x == o.x &&
                   upper.bin_offsets == o.upper.bin_offsets && upper.columns == o.upper.columns &&
                   upper.counts == o.upper.counts && upper.values == o.upper.values &&
                   upper.diag == o.upper.diag && upper.num_rows == o.upper.num_rows &&
                   options.upper_spmv == o.options.upper_spmv &&
                   options.upper_min_rows == o.options.upper_min_rows &&
                   options.upper_max_width == o.options.upper_max_width &&
                   options.force_one_wave == o.options.force_one_wave &&
                   options.schedule == o.options.schedule &&
                   options.fused_direction == o.options.fused_direction &&
                   options.single_reduction == o.options.single_reduction &&
                   options.streaming_loads == o.options.streaming_loads &&
                   options.programmatic_launch == o.options.programmatic_launch &&
                   options.prefetch_bytes == o.options.prefetch_bytes && count == o.count;
        }
    };
    cudaStream_t capture_stream = nullptr; // graphs cannot be captured on the legacy stream
    // Mean row length of the last matrix (warps_per_bin = 0), read back once per matrix.
    const Index* width_of = nullptr;
    std::uint64_t width_generation = 0;
    double mean_width = 0;
    Index slots = 0;
    cudaGraphExec_t chunk_graph = nullptr;
    GraphKey graph_key{};
    bool graph_failed = false; // capture not supported here: launch kernels one by one

    explicit Impl(Index num_rows) : rows(num_rows) {}
    ~Impl() {
        for (cudaEvent_t& e : checked)
            if (e) cudaEventDestroy(e);
        if (chunk_graph) cudaGraphExecDestroy(chunk_graph);
        if (capture_stream) cudaStreamDestroy(capture_stream);
    }
};

Pcg::Pcg(Index num_rows, PcgOptions options, void* stream)
    : impl_(std::make_unique<Impl>(num_rows)) {
    EDN_VERIFY(num_rows >= 0, ErrorCode::Usage, "Pcg: negative row count " << num_rows);
    Impl& d = *impl_;
    set_options(options);
    d.stream = static_cast<cudaStream_t>(stream);
    d.upper = std::make_unique<UpperMatrix>(stream);
    const std::size_t n3 = 3 * static_cast<std::size_t>(num_rows);
    d.r.resize(n3);
    d.z.resize(n3);
    d.p[0].resize(n3);
    d.p[1].resize(n3);
    d.q.resize(n3);
    d.inverse_diag.resize(3 * n3);
    const Index bins = (num_rows + kWarp - 1) / kWarp;
    const std::int64_t blocks = grid_for(num_rows, kUpdateBlock);
    d.partials.resize(2 * static_cast<std::size_t>(std::max<std::int64_t>(bins, blocks)));
    d.counters.resize(2);
    EDN_CUDA_CHECK(cudaMemset(d.counters.data(), 0, d.counters.bytes()));
    d.state.resize(1);
    int device = 0, major = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&device));
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    d.pdl_supported = major >= 9;
    int cooperative = 0, sms = 0;
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    if (cooperative) {
        int per_sm = 0;
        EDN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, pcg_persistent_kernel<true>, kPersistentBlock, 0));
        d.cooperative_blocks[1] = per_sm * sms;
        EDN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, pcg_persistent_kernel<false>, kPersistentBlock, 0));
        d.cooperative_blocks[0] = per_sm * sms;
    }
    for (cudaEvent_t& e : d.checked)
        EDN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
}

Pcg::~Pcg() = default;

Index Pcg::num_rows() const {
    return impl_->rows;
}
const PcgOptions& Pcg::options() const {
    return impl_->options;
}
void Pcg::set_options(const PcgOptions& options) {
    EDN_VERIFY(options.warps_per_bin == 0 || options.warps_per_bin == 1 ||
                   options.warps_per_bin == 2 || options.warps_per_bin == 4,
               ErrorCode::Usage,
               "Pcg: warps_per_bin must be 0, 1, 2 or 4, got " << options.warps_per_bin);
    EDN_VERIFY(options.check_interval >= 1, ErrorCode::Usage,
               "Pcg: check_interval must be >= 1, got " << options.check_interval);
    impl_->options = options;
}

PcgResult Pcg::solve(const BinBcsrMatrixView<float>& a, const float* b, float* x,
                     const PcgSettings& settings, const std::uint8_t* fixed) {
    return solve_impl(a, nullptr, b, x, settings, fixed);
}

PcgResult Pcg::solve_two_level(const BinBcsrMatrixView<float>& a, const CoarseLevelView& coarse,
                               const float* b, float* x, const PcgSettings& settings,
                               const std::uint8_t* fixed) {
    EDN_VERIFY(coarse.inner_iterations >= 1 && coarse.inner_tolerance > 0 &&
                   coarse.matrix.pattern.num_rows > 0,
               ErrorCode::Usage, "Pcg::solve_two_level: bad coarse level");
    return solve_impl(a, &coarse, b, x, settings, fixed);
}

PcgResult Pcg::solve_impl(const BinBcsrMatrixView<float>& a, const CoarseLevelView* coarse,
                          const float* b, float* x, const PcgSettings& settings,
                          const std::uint8_t* fixed) {
    Impl& d = *impl_;
    EDN_VERIFY(a.pattern.num_rows == d.rows, ErrorCode::Usage,
               "Pcg::solve: matrix has " << a.pattern.num_rows << " rows, solver sized for "
                                         << d.rows);
    EDN_VERIFY(settings.max_iterations >= 0, ErrorCode::Usage,
               "Pcg::solve: negative max_iterations " << settings.max_iterations);
    PcgResult result;
    if (d.rows == 0) {
        result.converged = true;
        return result;
    }
    cudaStream_t stream = d.stream;
    const Index rows = d.rows;
    unsigned int* counter = d.counters.data();
    unsigned int* done = d.counters.data() + 1;

    PcgState& init = d.host_state.data[0];
    init = PcgState{};
    init.tol2 = settings.relative_tolerance * settings.relative_tolerance;
    init.max_iterations = settings.max_iterations;
    init.status = kRunning;
    const bool single = d.options.single_reduction && !d.options.fused_direction && !coarse;
    init.single = single ? 1 : 0;
    EDN_CUDA_CHECK(
        cudaMemcpyAsync(d.state.data(), &init, sizeof(PcgState), cudaMemcpyHostToDevice, stream));
    invert_diagonal_kernel<<<grid_for(rows, kUpdateBlock), kUpdateBlock, 0, stream>>>(
        a.diag, rows, d.inverse_diag.data());
    EDN_CUDA_CHECK_LAUNCH();
    const unsigned int row_blocks = grid_for(rows, kUpdateBlock);
    norm_b_kernel<<<row_blocks, kUpdateBlock, 0, stream>>>(b, fixed, rows, d.partials.data(), done,
                                                           d.state.data());
    EDN_CUDA_CHECK_LAUNCH();
    prepare_x_kernel<<<row_blocks, kUpdateBlock, 0, stream>>>(x, fixed, rows, settings.warm_start,
                                                              d.state.data());
    EDN_CUDA_CHECK_LAUNCH();

    SpmvArgs args = matrix_args(a);
    args.counter = counter;
    args.done = done;
    args.partials = d.partials.data();
    args.state = d.state.data();
    args.inverse_diag = d.inverse_diag.data();
    args.fixed = fixed;
    args.fused = d.options.fused_direction && !coarse;
    if (d.width_of != a.pattern.bin_offsets || a.pattern.generation == 0 ||
        a.pattern.generation != d.width_generation) {
        Index slots = 0;
        EDN_CUDA_CHECK(cudaMemcpy(&slots, a.pattern.bin_offsets + a.pattern.num_bins, sizeof slots,
                                  cudaMemcpyDeviceToHost));
        d.mean_width = double(slots) / double(rows);
        d.slots = slots;
        d.width_of = a.pattern.bin_offsets;
        d.width_generation = a.pattern.generation;
    }
    // Warps per bin of q = A p: two for the short rows (p = 1) of a small matrix (latency bound:
    // 127K tets, PCG 3.45 -> 3.31 ms per frame; at 1M tets the one-warp kernel is as fast), one
    // otherwise (four warps measured slower for the long rows of p = 2: 127K-tet frame PCG 47.6
    // -> 55.0 ms).
    args.split = 1;
    if (a.pattern.row_counts != nullptr) {
        if (d.options.warps_per_bin > 0)
            args.split = d.options.warps_per_bin;
        else if (d.mean_width <= 20.0 && d.slots <= (1 << 20))
            args.split = 2;
    }
    {
        SpmvArgs res = args;
        res.x = x;
        res.b = b;
        res.r = d.r.data();
        res.z_out = d.z.data();
        res.p_out = d.p[0].data();
        launch_spmv<SpmvMode::Residual>(res, d.options.schedule, d.options.streaming_loads, false,
                                        stream);
    }

    const std::int64_t n3 = 3 * static_cast<std::int64_t>(rows);
    const int max_blocks = d.cooperative_blocks[d.options.streaming_loads ? 1 : 0];
    const bool persistent = !coarse && !args.fused && !single &&
                            rows <= d.options.persistent_max_rows && max_blocks > 0 &&
                            settings.max_iterations > 0;
    // q = A p from the upper part: the standard static loop only.
    bool use_upper = d.options.upper_spmv && !d.upper_out_of_memory && !coarse && !single &&
                     !persistent && d.options.schedule == SpmvSchedule::Static &&
                     settings.max_iterations > 0 && rows >= d.options.upper_min_rows &&
                     d.mean_width <= d.options.upper_max_width;
    if (use_upper) {
        try {
            d.upper->update(a);
            if (d.q4.size() != 4 * static_cast<std::size_t>(rows)) {
                d.q4.resize(4 * static_cast<std::size_t>(rows));
                if (stream) EDN_CUDA_CHECK(cudaStreamSynchronize(nullptr));
            }
        } catch (const Error& e) {
            // No room for the upper part (half the matrix again): this solver keeps the full
            // matrix's product from now on.
            if (e.code() != ErrorCode::OutOfMemory) throw;
            EDN_CUDA_CHECK(cudaStreamSynchronize(stream));
            d.upper = std::make_unique<UpperMatrix>(stream);
            d.q4 = DeviceBuffer<float>();
            d.upper_out_of_memory = true;
            use_upper = false;
        }
    }
    if (use_upper) {
        EDN_CUDA_CHECK(cudaMemsetAsync(d.q4.data(), 0, d.q4.bytes(), stream));
        args.upper = d.upper->view();
        args.q4 = reinterpret_cast<float4*>(d.q4.data());
    }
    // The upper loop's one-wave kernel variants where the unconstrained ones need two waves and
    // the constrained ones need one (998K tets: 47.5-50.1 -> 42.3-47.5 us per iteration).
    if (use_upper && d.upper_resident_blocks[0] == 0) {
        d.upper_resident_blocks[0] = resident_blocks(spmv_upper_kernel<true, 1>, kSpmvBlock);
        d.upper_resident_blocks[1] =
            resident_blocks(spmv_upper_kernel<true, kOneWaveBlocksPerSm>, kSpmvBlock);
    }
    const int upper_blocks = static_cast<int>(grid_for(rows, kSpmvBlock));
    const bool one_wave =
        use_upper && (d.options.force_one_wave || (upper_blocks > d.upper_resident_blocks[0] &&
                                                   upper_blocks <= d.upper_resident_blocks[1]));
    if (persistent) {
        // One warp per bin per pass at most: no more blocks than that (cheaper barriers).
        const Index bins = args.bins;
        const int blocks = static_cast<int>(std::min<std::int64_t>(
            max_blocks, std::max<std::int64_t>(1, (bins + kPersistentBlock / kWarp - 1) /
                                                      (kPersistentBlock / kWarp))));
        float* p0 = d.p[0].data();
        float* q = d.q.data();
        float* r = d.r.data();
        float* z = d.z.data();
        double* partials_a = d.partials.data();
        double* partials_b = d.partials.data() + blocks;
        void* params[] = {&args, &x, &r, &z, &p0, &q, &partials_a, &partials_b};
        const void* kernel = d.options.streaming_loads
                                 ? reinterpret_cast<const void*>(pcg_persistent_kernel<true>)
                                 : reinterpret_cast<const void*>(pcg_persistent_kernel<false>);
        EDN_CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(blocks), dim3(kPersistentBlock),
                                                   params, 0, stream));
        PcgState& final_state = d.host_state.data[1];
        EDN_CUDA_CHECK(cudaMemcpyAsync(&final_state, d.state.data(), sizeof(PcgState),
                                       cudaMemcpyDeviceToHost, stream));
        EDN_CUDA_CHECK(cudaStreamSynchronize(stream));
        return to_result(final_state);
    }
    // Two-level: scratch, coarse block Jacobi, the argument blocks of its kernels.
    CoarseArgs ca{};
    SpmvArgs cargs{};
    const Index nc = coarse ? coarse->matrix.pattern.num_rows : 0;
    const unsigned int coarse_blocks = grid_for(nc, kUpdateBlock);
    if (coarse) {
        if (d.coarse_rows != nc) {
            const std::size_t n3c = 3 * static_cast<std::size_t>(nc);
            for (DeviceBuffer<float>* v : {&d.rc, &d.xc, &d.zc, &d.pc, &d.qc}) v->resize(n3c);
            d.inverse_diag_c.resize(3 * n3c);
            d.inner_state.resize(1);
            d.coarse_rows = nc;
        }
        invert_diagonal_kernel<<<coarse_blocks, kUpdateBlock, 0, stream>>>(coarse->matrix.diag, nc,
                                                                           d.inverse_diag_c.data());
        EDN_CUDA_CHECK_LAUNCH();
        ca = {nc,
              coarse->restriction_offsets,
              coarse->restriction_indices,
              coarse->restriction_weight,
              coarse->pro_vertex,
              coarse->pro_weight,
              fixed,
              d.rc.data(),
              d.xc.data(),
              d.zc.data(),
              d.pc.data(),
              d.inverse_diag_c.data(),
              coarse->inner_tolerance * coarse->inner_tolerance,
              coarse->inner_iterations};
        cargs = matrix_args(coarse->matrix);
        cargs.done = done;
        cargs.partials = d.partials.data();
        cargs.state = d.inner_state.data();
        cargs.inverse_diag = d.inverse_diag_c.data();
        cargs.fixed = fixed; // vertex v is node v
        cargs.x = d.pc.data();
        cargs.y = d.qc.data();
        // A P1 matrix (short rows): two warps per bin when small, as for fine P1 systems.
        cargs.split = nc <= (1 << 15) ? 2 : 1;
    }
    // One coarse correction: z (block Jacobi, on the device already) += P Ac^-1 P^T r.
    const bool pdl_ok = d.options.programmatic_launch && d.pdl_supported;
    auto enqueue_coarse = [&](bool initial, cudaStream_t s, bool pdl) {
        launch(restrict_kernel, coarse_blocks, kUpdateBlock, s, pdl, ca,
               static_cast<const float*>(d.r.data()), d.partials.data(), done,
               static_cast<const PcgState*>(d.state.data()), d.inner_state.data());
        const unsigned int c_rows = coarse_blocks;
        const std::int64_t n3c = 3 * static_cast<std::int64_t>(nc);
        for (int k = 0; k < coarse->inner_iterations; ++k) {
            launch_spmv<SpmvMode::Direction>(cargs, SpmvSchedule::Static, d.options.streaming_loads,
                                             pdl_ok, s);
            launch(update_kernel<1>, c_rows, kUpdateBlock, s, pdl_ok, d.xc.data(), d.rc.data(),
                   d.zc.data(), static_cast<const float*>(d.pc.data()),
                   static_cast<const float*>(d.qc.data()),
                   static_cast<const float*>(d.inverse_diag_c.data()), fixed, nc, d.partials.data(),
                   done, d.inner_state.data(), MatrixPrefetch{}, static_cast<float4*>(nullptr));
            launch(direction_kernel, grid_for(n3c, kUpdateBlock), kUpdateBlock, s, pdl_ok,
                   d.pc.data(), static_cast<const float*>(d.zc.data()), n3c,
                   static_cast<const PcgState*>(d.inner_state.data()));
        }
        launch(prolong_kernel, row_blocks, kUpdateBlock, s, pdl_ok, ca,
               static_cast<const float*>(d.r.data()), d.z.data(),
               static_cast<const float*>(d.q.data()), rows, initial, d.partials.data(), done,
               d.state.data());
        launch(direction_kernel, grid_for(n3, kUpdateBlock), kUpdateBlock, s, pdl_ok, d.p[0].data(),
               static_cast<const float*>(d.z.data()), n3,
               static_cast<const PcgState*>(d.state.data()));
    };
    if (coarse) enqueue_coarse(true, stream, false); // z_0, rz_0 and p_0 = z_0
    if (single) {
        // p_-1 = s_-1 = 0 (beta_0 = 0 multiplies them), then w_0 = A u_0, u_0.w_0 -> alpha_0.
        EDN_CUDA_CHECK(cudaMemsetAsync(d.p[0].data(), 0, d.p[0].bytes(), stream));
        EDN_CUDA_CHECK(cudaMemsetAsync(d.p[1].data(), 0, d.p[1].bytes(), stream));
        SpmvArgs first = args;
        first.x = d.z.data();
        first.y = d.q.data();
        launch_spmv<SpmvMode::Direction>(first, d.options.schedule, d.options.streaming_loads,
                                         false, stream);
    }
    int current = 0; // p buffer holding the latest direction
    // Standard loop: L2 prefetch of the matrix head by the update kernel.
    MatrixPrefetch prefetch{};
    if (d.options.prefetch_bytes > 0 && d.pdl_supported && !coarse && !single)
        prefetch = {
            use_upper ? args.upper.values : args.values,
            use_upper ? args.upper.columns : args.columns,
            use_upper ? args.upper.bin_offsets : args.bin_offsets,
            args.bins,
            static_cast<std::uint32_t>(
                ((d.options.prefetch_bytes + row_blocks - 1) / row_blocks + 15) & ~std::size_t{15}),
            row_blocks};
    const int interval = d.options.check_interval;
    // Enqueues `count` iterations on `s` (the first kernel follows a status read-back copy or a
    // graph boundary: no PDL there).
    auto enqueue_chunk = [&](int count, cudaStream_t s) {
        for (int i = 0; i < count && coarse; ++i) {
            SpmvArgs dir = args;
            dir.x = d.p[0].data();
            dir.y = d.q.data();
            launch_spmv<SpmvMode::Direction>(dir, d.options.schedule, d.options.streaming_loads,
                                             pdl_ok && i > 0, s);
            launch(update_two_level_kernel, row_blocks, kUpdateBlock, s, pdl_ok, x, d.r.data(),
                   d.z.data(), static_cast<const float*>(d.p[0].data()),
                   static_cast<const float*>(d.q.data()),
                   static_cast<const float*>(d.inverse_diag.data()), fixed, rows, d.partials.data(),
                   done, d.state.data());
            enqueue_coarse(false, s, pdl_ok);
        }
        for (int i = 0; i < count && single && !coarse; ++i) {
            // u = z, w = q, p = p[0], s = p[1]: vector half, then w = A u and u.w.
            const bool pdl = d.options.programmatic_launch && d.pdl_supported;
            launch(update_single_kernel, row_blocks, kUpdateBlock, s, pdl && i > 0, x, d.r.data(),
                   d.z.data(), d.p[0].data(), d.p[1].data(), static_cast<const float*>(d.q.data()),
                   static_cast<const float*>(d.inverse_diag.data()), fixed, rows, d.partials.data(),
                   done, d.state.data());
            SpmvArgs w = args;
            w.x = d.z.data();
            w.y = d.q.data();
            launch_spmv<SpmvMode::Direction>(w, d.options.schedule, d.options.streaming_loads, pdl,
                                             s);
        }
        for (int i = 0; i < count && !single && !coarse; ++i) {
            SpmvArgs dir = args;
            dir.x = d.p[current].data();
            dir.z = d.z.data();
            dir.y = d.q.data();
            float* p_new = d.p[current].data();
            if (args.fused) {
                p_new = d.p[1 - current].data();
                dir.p_out = p_new;
                current = 1 - current;
            }
            const bool pdl = d.options.programmatic_launch && d.pdl_supported;
            const unsigned int upper_grid = grid_for(rows, kSpmvBlock);
            const bool pdl_i = pdl && i > 0;
            if (use_upper && args.fused && one_wave)
                launch(spmv_upper_kernel<true, kOneWaveBlocksPerSm>, upper_grid, kSpmvBlock, s,
                       pdl_i, dir);
            else if (use_upper && args.fused)
                launch(spmv_upper_kernel<true, 1>, upper_grid, kSpmvBlock, s, pdl_i, dir);
            else if (use_upper && one_wave)
                launch(spmv_upper_kernel<false, kOneWaveBlocksPerSm>, upper_grid, kSpmvBlock, s,
                       pdl_i, dir);
            else if (use_upper)
                launch(spmv_upper_kernel<false, 1>, upper_grid, kSpmvBlock, s, pdl_i, dir);
            else
                launch_spmv<SpmvMode::Direction>(dir, d.options.schedule, d.options.streaming_loads,
                                                 pdl_i, s);
            auto update = one_wave ? update_kernel<kOneWaveBlocksPerSm> : update_kernel<1>;
            launch(update, row_blocks, kUpdateBlock, s, pdl, x, d.r.data(), d.z.data(),
                   static_cast<const float*>(p_new), static_cast<const float*>(d.q.data()),
                   static_cast<const float*>(d.inverse_diag.data()), fixed, rows, d.partials.data(),
                   done, d.state.data(), prefetch, use_upper ? args.q4 : nullptr);
            if (!args.fused)
                launch(direction_kernel, grid_for(n3, kUpdateBlock), kUpdateBlock, s, pdl,
                       d.p[current].data(), static_cast<const float*>(d.z.data()), n3,
                       static_cast<const PcgState*>(d.state.data()));
        }
    };
    // Captures one chunk on the private capture stream into d.chunk_graph (replacing the old
    // one); false, remembered, when this device or driver cannot capture or instantiate it.
    auto recapture = [&](const Impl::GraphKey& key) {
        if (d.chunk_graph) {
            EDN_CUDA_CHECK(cudaGraphExecDestroy(d.chunk_graph));
            d.chunk_graph = nullptr;
        }
        if (!d.capture_stream)
            EDN_CUDA_CHECK(cudaStreamCreateWithFlags(&d.capture_stream, cudaStreamNonBlocking));
        EDN_CUDA_CHECK(cudaStreamBeginCapture(d.capture_stream, cudaStreamCaptureModeThreadLocal));
        const int saved = current;
        enqueue_chunk(interval, d.capture_stream);
        current = saved;
        cudaGraph_t graph = nullptr;
        EDN_CUDA_CHECK(cudaStreamEndCapture(d.capture_stream, &graph));
        const cudaError_t status = cudaGraphInstantiate(&d.chunk_graph, graph, 0);
        cudaGraphDestroy(graph);
        if (status != cudaSuccess) {
            cudaGetLastError(); // clear it: fall back to plain launches
            d.chunk_graph = nullptr;
            d.graph_failed = true;
            return false;
        }
        d.graph_key = key;
        return true;
    };
    // Graph replay: a chunk always runs check_interval iterations (those after convergence or
    // the cap return at once); with the fused direction an even count keeps p in one buffer.
    bool use_graph = d.options.graph && !d.graph_failed && (!args.fused || interval % 2 == 0);
    if (use_graph) {
        Impl::GraphKey key{args, args.upper, x, d.options, interval};
        if (coarse) {
            key.coarse_values = coarse->matrix.values;
            key.coarse_diag = coarse->matrix.diag;
            key.coarse_pro = coarse->pro_vertex;
            key.coarse_rows = nc;
            key.coarse_iterations = coarse->inner_iterations;
            key.coarse_tol = coarse->inner_tolerance;
        }
        if (!d.chunk_graph || !(key == d.graph_key)) use_graph = recapture(key);
    }
    int enqueued = 0, chunk = 0;
    bool pending = false;
    while (enqueued < settings.max_iterations) {
        const int count =
            use_graph ? interval : std::min(interval, settings.max_iterations - enqueued);
        if (use_graph)
            EDN_CUDA_CHECK(cudaGraphLaunch(d.chunk_graph, stream));
        else
            enqueue_chunk(count, stream);
        enqueued += count;
        // Read the status back one chunk behind: the GPU already has the next chunk queued.
        const int slot = chunk & 1;
        EDN_CUDA_CHECK(cudaMemcpyAsync(&d.host_state.data[1 + slot], d.state.data(),
                                       sizeof(PcgState), cudaMemcpyDeviceToHost, stream));
        EDN_CUDA_CHECK(cudaEventRecord(d.checked[slot], stream));
        if (pending) {
            const int prev = 1 - slot;
            EDN_CUDA_CHECK(cudaEventSynchronize(d.checked[prev]));
            if (d.host_state.data[1 + prev].status != kRunning) break;
        }
        pending = true;
        ++chunk;
    }
    PcgState& final_state = d.host_state.data[1];
    EDN_CUDA_CHECK(cudaMemcpyAsync(&final_state, d.state.data(), sizeof(PcgState),
                                   cudaMemcpyDeviceToHost, stream));
    EDN_CUDA_CHECK(cudaStreamSynchronize(stream));
    return to_result(final_state);
}

PcgResult Pcg::solve_host(const BinBcsrMatrixView<float>& a, const std::vector<float>& b,
                          std::vector<float>& x, const PcgSettings& settings,
                          const std::vector<std::uint8_t>& fixed) {
    return solve_host_impl(a, nullptr, b, x, settings, fixed);
}

PcgResult Pcg::solve_two_level_host(const BinBcsrMatrixView<float>& a,
                                    const CoarseLevelView& coarse, const std::vector<float>& b,
                                    std::vector<float>& x, const PcgSettings& settings,
                                    const std::vector<std::uint8_t>& fixed) {
    return solve_host_impl(a, &coarse, b, x, settings, fixed);
}

PcgResult Pcg::solve_host_impl(const BinBcsrMatrixView<float>& a, const CoarseLevelView* coarse,
                               const std::vector<float>& b, std::vector<float>& x,
                               const PcgSettings& settings,
                               const std::vector<std::uint8_t>& fixed) {
    const std::size_t n3 = 3 * static_cast<std::size_t>(impl_->rows);
    EDN_VERIFY(b.size() == n3 && x.size() == n3, ErrorCode::Usage,
               "Pcg::solve_host: b has " << b.size() << " and x " << x.size()
                                         << " entries, expected " << n3);
    EDN_VERIFY(
        fixed.empty() || fixed.size() == static_cast<std::size_t>(impl_->rows), ErrorCode::Usage,
        "Pcg::solve_host: fixed has " << fixed.size() << " entries, expected 0 or " << impl_->rows);
    DeviceBuffer<float> db, dx;
    DeviceBuffer<std::uint8_t> dfixed;
    upload(db, b);
    upload(dx, x);
    upload(dfixed, fixed);
    const PcgResult result = solve_impl(a, coarse, db.data(), dx.data(), settings,
                                        fixed.empty() ? nullptr : dfixed.data());
    if (n3) EDN_CUDA_CHECK(cudaMemcpy(x.data(), dx.data(), dx.bytes(), cudaMemcpyDeviceToHost));
    return result;
}

} // namespace edn::cuda
