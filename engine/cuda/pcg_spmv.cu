// The PCG's products fused with its dot products and scalars (cuda/pcg_device.cuh): the Residual
// product that starts a solve, and q = A p with p.q and alpha from the full matrix (one warp per
// bin, optionally gathering p = z + beta p_old, or K warps per bin) or from its upper part. The
// standalone products live in spmv.cu.
#include "cuda/pcg_device.cuh"
#include "cuda/upper_spmv.cuh"

namespace edn::cuda::pcg_detail {
namespace {

/// Load of the matrix stream: evict-first in L2 when kStream (values are read once per SpMV and
/// are larger than L2; keeping them out leaves the vectors cached for the next kernels).
template <bool kStream, class T> __device__ __forceinline__ T load_matrix(const T* p) {
    if constexpr (kStream)
        return __ldcs(p);
    else
        return __ldg(p);
}

/// One bin: lane = row. Sets the bin's dot products (warp sums, valid in lane 0).
template <SpmvMode kMode, bool kFused, bool kStream>
__device__ __forceinline__ void spmv_bin(const SpmvArgs& a, Index bin, int lane, float beta,
                                         double& dot0, double& dot1) {
    const auto ldx = [](const float* ptr) { return __ldg(ptr); };
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
        if constexpr (kMode == SpmvMode::Direction) {
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
    dot0 = warp_sum(d0);
    dot1 = warp_sum(d1);
}

/// alpha = r.z / p.q of the iteration, or breakdown.
__device__ __forceinline__ void set_alpha(PcgState& s, double pq) {
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

/// Partials of the dot products per block (a block's bins are fixed), summed in a fixed order.
template <SpmvMode kMode, bool kFused, bool kStream>
__global__ void __launch_bounds__(kSpmvBlock) spmv_kernel(SpmvArgs a) {
    wait_for_previous_kernel();
    if (a.state->status != kRunning) return; // uniform over the grid
    const float beta = static_cast<float>(a.state->beta);
    const int lane = threadIdx.x & 31;
    double dot0 = 0, dot1 = 0;
    const Index bin = static_cast<Index>(
        (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp);
    if (bin < a.bins) spmv_bin<kMode, kFused, kStream>(a, bin, lane, beta, dot0, dot1);
    __shared__ double dots[2][kSpmvBlock / kWarp];
    if (lane == 0) dots[0][threadIdx.x / kWarp] = dot0, dots[1][threadIdx.x / kWarp] = dot1;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t0 = 0, t1 = 0;
        for (int w = 0; w < kSpmvBlock / kWarp; ++w) t0 += dots[0][w], t1 += dots[1][w];
        a.partials[2 * static_cast<std::int64_t>(blockIdx.x)] = t0;
        a.partials[2 * static_cast<std::int64_t>(blockIdx.x) + 1] = t1;
    }
    allow_next_kernel();
    if (!last_block_done(a.done, threadIdx.x == 0)) return;
    double sum[2];
    block_sum_partials<2, kSpmvBlock>(a.partials, Index(gridDim.x), sum);
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

} // namespace

void launch_residual_spmv(const SpmvArgs& args, cudaStream_t stream) {
    if (args.bins == 0) return;
    launch(spmv_kernel<SpmvMode::Residual, false, true>,
           grid_for(static_cast<std::int64_t>(args.bins) * kWarp, kSpmvBlock), kSpmvBlock, stream,
           false, args);
}

void launch_direction_spmv(const SpmvArgs& args, bool pdl, cudaStream_t stream) {
    if (args.bins == 0) return;
    if (args.split > 1 && !args.fused) {
        // Resident blocks of each variant, looked up once.
        static const int resident[2] = {
            resident_blocks(spmv_direction_split_kernel<2, true>, 2 * kWarp),
            resident_blocks(spmv_direction_split_kernel<4, true>, 4 * kWarp)};
        const int k = args.split == 2 ? 0 : 1;
        const unsigned int grid =
            static_cast<unsigned int>(std::min<std::int64_t>(args.bins, resident[k]));
        if (k == 0)
            launch(spmv_direction_split_kernel<2, true>, grid, 2 * kWarp, stream, pdl, args);
        else
            launch(spmv_direction_split_kernel<4, true>, grid, 4 * kWarp, stream, pdl, args);
        return;
    }
    const unsigned int grid = grid_for(static_cast<std::int64_t>(args.bins) * kWarp, kSpmvBlock);
    if (args.fused)
        launch(spmv_kernel<SpmvMode::Direction, true, true>, grid, kSpmvBlock, stream, pdl, args);
    else
        launch(spmv_kernel<SpmvMode::Direction, false, true>, grid, kSpmvBlock, stream, pdl, args);
}

void launch_upper_spmv(const SpmvArgs& args, bool one_wave, bool pdl, cudaStream_t stream) {
    const unsigned int grid = grid_for(args.rows, kSpmvBlock);
    if (args.fused && one_wave)
        launch(spmv_upper_kernel<true, kOneWaveBlocksPerSm>, grid, kSpmvBlock, stream, pdl, args);
    else if (args.fused)
        launch(spmv_upper_kernel<true, 1>, grid, kSpmvBlock, stream, pdl, args);
    else if (one_wave)
        launch(spmv_upper_kernel<false, kOneWaveBlocksPerSm>, grid, kSpmvBlock, stream, pdl, args);
    else
        launch(spmv_upper_kernel<false, 1>, grid, kSpmvBlock, stream, pdl, args);
}

void upper_spmv_resident_blocks(int out[2]) {
    out[0] = resident_blocks(spmv_upper_kernel<true, 1>, kSpmvBlock);
    out[1] = resident_blocks(spmv_upper_kernel<true, kOneWaveBlocksPerSm>, kSpmvBlock);
}

} // namespace edn::cuda::pcg_detail
