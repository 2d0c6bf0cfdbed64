#pragma once
// The CUDA PCG's device-side types and the launchers of its kernels (.cu files only): the loop
// (pcg.cu) enqueues them; pcg_spmv.cu holds the products fused with the dot products and the
// scalars, pcg_kernels.cu the vector kernels (start, update, direction, two-level).

#include "cuda/block_reduce.cuh"
#include "cuda/cuda_check.cuh"
#include "cuda/cuda_pcg.hpp"

#include <algorithm>
#include <utility>

namespace edn::cuda::pcg_detail {

inline constexpr int kWarp = 32;
inline constexpr int kSpmvBlock = 256; // 8 warps
inline constexpr int kUpdateBlock = 256;
/// Resident blocks per SM of the one-wave variants of the upper-part loop's kernels (at most 40
/// registers): 6 x 256 threads x 132 SMs covers 1M-tet p = 1 systems (175K rows) in one wave,
/// where 48 (SpMV) and 64 (update) registers fit only 5 and 4 blocks (two waves). Used only
/// when the unconstrained kernel would need a second wave: with fewer registers each thread has
/// fewer loads in flight (403K tets: 21 -> 27 us per iteration).
inline constexpr int kOneWaveBlocksPerSm = 6;

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
};

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

__device__ __forceinline__ bool is_free(const std::uint8_t* fixed, Index row) {
    return fixed == nullptr || fixed[row] == 0;
}

/// What a fused PCG product computes besides A x.
enum class SpmvMode {
    Residual,  // r = P (b - A x), z = P M^-1 r, p0 = z (or 0 when fused), r.z and r.r
    Direction, // q = A p (p = z + beta p_old gathered when fused), p.q, alpha
};

struct SpmvArgs {
    const Index* bin_offsets;
    const Index* columns;
    const float* values;
    const float* diag;
    Index rows, bins;
    unsigned int* done; // finished blocks (last-block reduction)
    double* partials;   // per block, 2 doubles
    PcgState* state;
    const float* x; // Residual: the multiplied vector; Direction: p_old
    const float* z; // Direction (fused): preconditioned residual
    float* y;       // Direction: q
    float* p_out;   // Residual: p0; Direction (fused): p_new
    const float* b; // Residual
    float* r;       // Residual
    float* z_out;   // Residual
    const float* inverse_diag;
    const std::uint8_t* fixed;
    const Index* row_counts; // exact off-diagonal blocks per row (split kernel: no padding read)
    bool fused;
    int split; // Direction, unfused: warps per bin (1: the one-warp kernel, 2 or 4)
    UpperBinBcsrView<float> upper; // Direction from the upper part: its matrix
    float4* q4;                    // and its q (4 floats per row, zero on entry)
};

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

/// The coarse level's arrays and scratch for the two-level kernels.
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

inline unsigned int grid_for(std::int64_t n, int block) {
    return static_cast<unsigned int>(std::max<std::int64_t>(1, (n + block - 1) / block));
}

/// Blocks of `block` threads of `kernel` resident on the whole device at once.
template <class Kernel> int resident_blocks(Kernel kernel, int block) {
    int device = 0, sms = 0, per_sm = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&device));
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    EDN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
    return std::max(1, per_sm * sms);
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

// ---- pcg_spmv.cu: products fused with the PCG's dot products -----------------------------------

/// r = P (b - A x), z, p0 and r.z, r.r into the state (start of a solve).
void launch_residual_spmv(const SpmvArgs& args, cudaStream_t stream);
/// q = A p (full matrix; fused, one warp per bin, or args.split warps per bin) and alpha.
void launch_direction_spmv(const SpmvArgs& args, bool pdl, cudaStream_t stream);
/// q = A p from the upper part (args.upper, args.q4) and alpha; one_wave: the 40-register variant.
void launch_upper_spmv(const SpmvArgs& args, bool one_wave, bool pdl, cudaStream_t stream);
/// Resident blocks of the upper product: [0] unconstrained, [1] one-wave variant.
void upper_spmv_resident_blocks(int out[2]);

// ---- pcg_kernels.cu: vector kernels -----------------------------------------------------------

/// inverse_diag = the inverted 3x3 diagonal blocks of `diag` (9 planes of `rows`).
void launch_invert_diagonal(const float* diag, Index rows, float* inverse_diag,
                            cudaStream_t stream);
/// state.bb = ||P b||^2, then the free dofs of x zeroed for a cold start or P b = 0.
void launch_start(const float* b, float* x, const std::uint8_t* fixed, Index rows, bool warm_start,
                  double* partials, unsigned int* done, PcgState* state, cudaStream_t stream);
/// x += alpha p; r = P (r - alpha q); z = P M^-1 r; r.z, r.r; convergence or beta. q from q4
/// when given (zeroed for the next product); one_wave: the 40-register variant.
void launch_update(bool one_wave, unsigned int grid, cudaStream_t stream, bool pdl, float* x,
                   float* r, float* z, const float* p, const float* q, const float* inverse_diag,
                   const std::uint8_t* fixed, Index rows, double* partials, unsigned int* done,
                   PcgState* state, const MatrixPrefetch& prefetch, float4* q4);
/// p = z + beta p (the separate direction).
void launch_direction(float* p, const float* z, std::int64_t n3, const PcgState* state, bool pdl,
                      cudaStream_t stream);
/// The two-level loop's update: as launch_update, but beta comes after the coarse correction.
void launch_update_two_level(unsigned int grid, cudaStream_t stream, bool pdl, float* x, float* r,
                             float* z, const float* p, const float* q, const float* inverse_diag,
                             const std::uint8_t* fixed, Index rows, double* partials,
                             unsigned int* done, PcgState* state);
/// Starts a coarse solve: rc = P^T r, xc = 0, zc = pc = Mc^-1 rc, the inner state.
void launch_restrict(const CoarseArgs& c, unsigned int grid, cudaStream_t stream, bool pdl,
                     const float* r, double* partials, unsigned int* done, const PcgState* outer,
                     PcgState* inner);
/// z += P xc; r.z and z.q; the flexible beta (0 when `initial`).
void launch_prolong(const CoarseArgs& c, unsigned int grid, cudaStream_t stream, bool pdl,
                    const float* r, float* z, const float* q, Index rows, bool initial,
                    double* partials, unsigned int* done, PcgState* state);

} // namespace edn::cuda::pcg_detail
