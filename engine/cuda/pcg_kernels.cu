// The CUDA PCG's vector kernels (cuda/pcg_device.cuh): diagonal inversion and start of a solve,
// the fused x/r/z update with its dot products and the last block's decision, the separate
// direction, and the two-level preconditioner's restriction and prolongation.
#include "cuda/pcg_device.cuh"
#include "sparse/block3.hpp"

#include <cmath>

namespace edn::cuda::pcg_detail {
namespace {

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

// ---- update and direction -----------------------------------------------------------------------

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

} // namespace

void launch_invert_diagonal(const float* diag, Index rows, float* inverse_diag,
                            cudaStream_t stream) {
    invert_diagonal_kernel<<<grid_for(rows, kUpdateBlock), kUpdateBlock, 0, stream>>>(diag, rows,
                                                                                      inverse_diag);
    EDN_CUDA_CHECK_LAUNCH();
}

void launch_start(const float* b, float* x, const std::uint8_t* fixed, Index rows, bool warm_start,
                  double* partials, unsigned int* done, PcgState* state, cudaStream_t stream) {
    const unsigned int row_blocks = grid_for(rows, kUpdateBlock);
    norm_b_kernel<<<row_blocks, kUpdateBlock, 0, stream>>>(b, fixed, rows, partials, done, state);
    EDN_CUDA_CHECK_LAUNCH();
    prepare_x_kernel<<<row_blocks, kUpdateBlock, 0, stream>>>(x, fixed, rows, warm_start, state);
    EDN_CUDA_CHECK_LAUNCH();
}

void launch_update(bool one_wave, unsigned int grid, cudaStream_t stream, bool pdl, float* x,
                   float* r, float* z, const float* p, const float* q, const float* inverse_diag,
                   const std::uint8_t* fixed, Index rows, double* partials, unsigned int* done,
                   PcgState* state, const MatrixPrefetch& prefetch, float4* q4) {
    auto update = one_wave ? update_kernel<kOneWaveBlocksPerSm> : update_kernel<1>;
    launch(update, grid, kUpdateBlock, stream, pdl, x, r, z, p, q, inverse_diag, fixed, rows,
           partials, done, state, prefetch, q4);
}

void launch_direction(float* p, const float* z, std::int64_t n3, const PcgState* state, bool pdl,
                      cudaStream_t stream) {
    launch(direction_kernel, grid_for(n3, kUpdateBlock), kUpdateBlock, stream, pdl, p, z, n3,
           state);
}

void launch_update_two_level(unsigned int grid, cudaStream_t stream, bool pdl, float* x, float* r,
                             float* z, const float* p, const float* q, const float* inverse_diag,
                             const std::uint8_t* fixed, Index rows, double* partials,
                             unsigned int* done, PcgState* state) {
    launch(update_two_level_kernel, grid, kUpdateBlock, stream, pdl, x, r, z, p, q, inverse_diag,
           fixed, rows, partials, done, state);
}

void launch_restrict(const CoarseArgs& c, unsigned int grid, cudaStream_t stream, bool pdl,
                     const float* r, double* partials, unsigned int* done, const PcgState* outer,
                     PcgState* inner) {
    launch(restrict_kernel, grid, kUpdateBlock, stream, pdl, c, r, partials, done, outer, inner);
}

void launch_prolong(const CoarseArgs& c, unsigned int grid, cudaStream_t stream, bool pdl,
                    const float* r, float* z, const float* q, Index rows, bool initial,
                    double* partials, unsigned int* done, PcgState* state) {
    launch(prolong_kernel, grid, kUpdateBlock, stream, pdl, c, r, z, q, rows, initial, partials,
           done, state);
}

} // namespace edn::cuda::pcg_detail
