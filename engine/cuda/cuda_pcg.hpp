#pragma once
/// CUDA twin of the block-Jacobi PCG (solver/pcg.hpp; same algorithm, stopping rule and mask
/// semantics), float, everything in device memory. A plain C++ header: device state hides
/// behind pimpls and streams are passed as `void*` (a cudaStream_t; nullptr = default stream).
/// In a build without CUDA every entry point throws edn::Error(ErrorCode::Unsupported).
///
/// Host round trips: alpha and beta are computed on the device (the last block of each reducing
/// kernel sums the per-bin/per-block partials in a fixed order and writes the scalars), and every
/// kernel returns at once when the device-side status is no longer "running". The host enqueues
/// iterations in chunks of `check_interval` and reads the status back (async copy to pinned
/// memory + event) one chunk behind, so the GPU never idles waiting for the host; the iteration
/// count and x are exact (iterations after convergence do nothing).

#include "cuda/cuda_only.hpp"
#include "solver/pcg.hpp"
#include "sparse/bin_bcsr_matrix.hpp"
#include "sparse/spmv.hpp"
#include "sparse/upper_part.hpp"

#include <cstdint>
#include <memory>
#include <vector>

namespace edn::cuda {

/// Measurement knobs of the CUDA PCG: bench pcg compares these variants against the defaults
/// (bench/README.md), and the tests run them; the simulation keeps the defaults, the fastest
/// measured on the H100 (p = 1 boxes, us per iteration, bench pcg, session 4): the fused
/// direction with an 8 MB L2 prefetch 12.9-13.4 (127K tets), 23.5 (403K), 52.1-52.6 (998K), 90.3
/// (1.7M); the separate direction kernel 13.6-14.2, 26.6, 52.1-52.6, 91.5. Variants measured
/// slower and dropped: the warp-dynamic bin schedule (5-11 us slower), cached matrix loads (7-10
/// us slower at 1M), single-reduction recurrences, the persistent cooperative loop (127K-tet p = 1
/// frame PCG 6.6 vs 3.4 ms; 1M tets 81 vs 54 us per iteration).
struct PcgTuning {
    /// Fuse p = z + beta p into the next SpMV (gathers z and p_old, double-buffered p) instead of
    /// a separate kernel (block-Jacobi loop).
    bool fused_direction = true;
    /// The upper part's product (PcgOptions::upper_spmv) only for systems of at least this many
    /// rows with at most `upper_max_width` off-diagonal blocks per row on average (p = 1: ~14;
    /// p = 2: ~27), where it measured faster.
    Index upper_min_rows = Index{1} << 14;
    double upper_max_width = 20.0;
    /// Use the upper loop's one-wave kernel variants (40 registers, 6 blocks per SM) whatever the
    /// size; by default only where the unconstrained kernels need two waves and these one (tests).
    bool force_one_wave = false;
    /// Launch each loop kernel with programmatic dependent launch, so its blocks start while the
    /// previous kernel's last block reduces the dot products (used on sm_90 and later only).
    bool programmatic_launch = true;
    /// Warps per bin of the q = A p SpMV (unfused direction): 1, 2, 4, or 0 to choose from the
    /// matrix (2 for short rows, <= 20 blocks as at p = 1, in matrices of at most 2^20 slots, else
    /// 1; 4 measured slower everywhere on the H100).
    int warps_per_bin = 0;
    /// Matrix bytes (values and columns of the first bins) the update kernel prefetches into L2
    /// for the next q = A p, while the latency-bound update and direction kernels leave DRAM
    /// idle (block-Jacobi loop, sm_90 and later; 0: none). 1M tets: none 53.5-53.7, 4 MB
    /// 52.4-53.2, 8 MB 52.1-52.8, 16 MB 53.9-54.1 us (separate direction; larger prefetches
    /// evict the vectors).
    std::size_t prefetch_bytes = std::size_t{8} << 20;
    /// Iterations enqueued between status read-backs.
    int check_interval = 8;
    /// Replay each chunk of `check_interval` iterations as one CUDA graph (captured once per
    /// matrix/vector pointer set and re-used while they stay the same) instead of launching its
    /// kernels one by one: one host call per chunk, so small systems are not launch bound.
    bool graph = true;

    bool operator==(const PcgTuning&) const = default;
};

/// Choices of the CUDA PCG.
struct PcgOptions {
    /// q = A p from the matrix's upper part (UpperMatrix: each off-diagonal block read once and
    /// applied as A_ij and A_ij^T, the transposed products added in L2 with float4 atomics into
    /// a padded q the update kernel consumes and zeroes), gathered from the matrix at the start
    /// of every solve; block-Jacobi loop only (not two-level), for the systems
    /// PcgTuning::upper_min_rows and upper_max_width select. Results then vary in the last bits
    /// from run to run (the atomics' order): off for deterministic runs. The upper part holds
    /// about half the matrix again; if it cannot be allocated, the solver keeps the full
    /// matrix's product.
    bool upper_spmv = true;
    /// Variants for measurements (bench, tests); the defaults are the product's.
    PcgTuning tuning{};

    bool operator==(const PcgOptions&) const = default;
};

/// Waits until all device work is done (for host timing of device loops).
EDN_CUDA_FN void device_synchronize() EDN_CUDA_ONLY;

/// A Bin-BCSR* matrix copied to the device (pattern and values), e.g. one assembled on the CPU.
class DeviceMatrix {
public:
    /// Uploads `host` (its pattern must be set).
    explicit DeviceMatrix(const BinBcsrMatrix<float>& host) EDN_CUDA_ONLY;
    ~DeviceMatrix() EDN_CUDA_ONLY;
    DeviceMatrix(const DeviceMatrix&) = delete;
    DeviceMatrix& operator=(const DeviceMatrix&) = delete;

    /// Kernel view with device pointers.
    BinBcsrMatrixView<float> view() const EDN_CUDA_ONLY;
    /// y = A x with host vectors (copies; for tests).
    std::vector<float> multiply(const std::vector<float>& x) const EDN_CUDA_ONLY;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};
EDN_CUDA_ONLY_IMPL(DeviceMatrix);

/// The upper part of a device Bin-BCSR* matrix (sparse/upper_part.hpp) in device memory. Its
/// pattern is rebuilt (counts, CUB scan of the bin widths, one read-back of the size, exact
/// allocation, columns) when the full pattern's generation differs from the last one (or is 0);
/// its values are gathered from the full matrix on every update(). Requires A_ji = A_ij^T.
class UpperMatrix {
public:
    explicit UpperMatrix(void* stream = nullptr) EDN_CUDA_ONLY;
    ~UpperMatrix() EDN_CUDA_ONLY;
    UpperMatrix(const UpperMatrix&) = delete;
    UpperMatrix& operator=(const UpperMatrix&) = delete;

    /// Follows `full` (device pointers): pattern when it changed, values always (async on the
    /// stream except for the size read-back of a rebuild).
    void update(const BinBcsrMatrixView<float>& full) EDN_CUDA_ONLY;
    /// Kernel view (device pointers; diagonal = the full matrix's).
    UpperBinBcsrView<float> view() const EDN_CUDA_ONLY;
    /// y4 = A x: y4 holds 4 floats per row (x, y, z, unused); zeroed here, then one kernel with
    /// `warps_per_bin` warps per bin (1 or 8; 0: chosen from the size, see upper_matrix.cu).
    void multiply_device(const float* x, float* y4, int warps_per_bin = 0) const EDN_CUDA_ONLY;
    /// The warps per bin multiply_device chooses for 0 (measured, see upper_matrix.cu).
    int chosen_warps_per_bin() const EDN_CUDA_ONLY;
    /// y = A x with host vectors (copies; for tests).
    std::vector<float> multiply(const std::vector<float>& x,
                                int warps_per_bin = 0) const EDN_CUDA_ONLY;
    /// The pattern and values copied back (for tests).
    UpperPattern download_pattern() const EDN_CUDA_ONLY;
    std::vector<float> download_values() const EDN_CUDA_ONLY;
    /// Device bytes held (pattern and values).
    std::size_t bytes() const EDN_CUDA_ONLY;
    /// Slots of the pattern (9 values each, padding included).
    Index num_slots() const EDN_CUDA_ONLY;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};
EDN_CUDA_ONLY_IMPL(UpperMatrix);

/// The coarse level of the two-level preconditioner on the device (solver/two_level.hpp): the P1
/// matrix, the prolongation (3 (vertex, weight) pairs per fine node, vertex -1 unused) and its
/// transpose as CSR over the vertices. Coarse pins: vertex v is fixed when fine node v is (vertex
/// nodes come first), so the fine mask serves both.
struct CoarseLevelView {
    BinBcsrMatrixView<float> matrix;
    const Index* pro_vertex = nullptr;
    const float* pro_weight = nullptr;
    const Index* restriction_offsets = nullptr;
    const Index* restriction_indices = nullptr;
    const float* restriction_weight = nullptr;
    double inner_tolerance = 0.1; ///< relative tolerance of each coarse solve
    int inner_iterations = 6;     ///< coarse PCG iterations enqueued per application (the cap)
};

/// Block-Jacobi PCG with device-resident scratch vectors for matrices of `num_rows` block rows.
class Pcg {
public:
    /// Allocates the scratch (r, z, two p, q, inverse diagonal, partials, state) for `num_rows`.
    explicit Pcg(Index num_rows, PcgOptions options = {}, void* stream = nullptr) EDN_CUDA_ONLY;
    ~Pcg() EDN_CUDA_ONLY;
    Pcg(const Pcg&) = delete;
    Pcg& operator=(const Pcg&) = delete;

    /// Solves A x = b (see solver/pcg.hpp); all pointers are device memory.
    /// @param[in]     device_matrix  #rows block rows (must equal num_rows())
    /// @param[in]     device_b       3 * #rows
    /// @param[in,out] device_x       3 * #rows: initial guess when warm_start; the solution
    /// @param[in]     device_fixed   #rows per-node pin mask (nonzero = fixed) or nullptr
    PcgResult solve(const BinBcsrMatrixView<float>& device_matrix, const float* device_b,
                    float* device_x, const PcgSettings& settings,
                    const std::uint8_t* device_fixed = nullptr) EDN_CUDA_ONLY;
    /// solve() preconditioned by block Jacobi + the coarse correction of `coarse` (flexible CG,
    /// solver/two_level.hpp), everything on the device inside the chunk graphs: per iteration
    /// q = A p | x, r, block Jacobi | restriction + coarse set-up | coarse PCG iterations |
    /// prolongation + r.z, z.q, beta | p = z + beta p. Same stopping rule and outcome.
    PcgResult solve_two_level(const BinBcsrMatrixView<float>& device_matrix,
                              const CoarseLevelView& coarse, const float* device_b, float* device_x,
                              const PcgSettings& settings,
                              const std::uint8_t* device_fixed = nullptr) EDN_CUDA_ONLY;
    /// solve() with host vectors (copies b, x and fixed in, x out; for tests). `fixed` empty or
    /// #rows.
    PcgResult solve_host(const BinBcsrMatrixView<float>& device_matrix, const std::vector<float>& b,
                         std::vector<float>& x, const PcgSettings& settings,
                         const std::vector<std::uint8_t>& fixed = {}) EDN_CUDA_ONLY;
    /// solve_two_level() with host vectors (as solve_host; for tests).
    PcgResult solve_two_level_host(const BinBcsrMatrixView<float>& device_matrix,
                                   const CoarseLevelView& coarse, const std::vector<float>& b,
                                   std::vector<float>& x, const PcgSettings& settings,
                                   const std::vector<std::uint8_t>& fixed = {}) EDN_CUDA_ONLY;
    /// Block rows this solver was sized for.
    Index num_rows() const EDN_CUDA_ONLY;
    /// Implementation choices in use.
    const PcgOptions& options() const EDN_CUDA_ONLY;
    /// Changes the implementation choices (for benchmarks).
    void set_options(const PcgOptions& options) EDN_CUDA_ONLY;

private:
    PcgResult solve_host_impl(const BinBcsrMatrixView<float>& device_matrix,
                              const CoarseLevelView* coarse, const std::vector<float>& b,
                              std::vector<float>& x, const PcgSettings& settings,
                              const std::vector<std::uint8_t>& fixed) EDN_CUDA_ONLY;
    class Solve; // one solve's steps (pcg.cu)
    PcgResult solve_impl(const BinBcsrMatrixView<float>& device_matrix,
                         const CoarseLevelView* coarse, const float* device_b, float* device_x,
                         const PcgSettings& settings,
                         const std::uint8_t* device_fixed) EDN_CUDA_ONLY;
    struct Impl;
    std::unique_ptr<Impl> impl_;
};
EDN_CUDA_ONLY_IMPL(Pcg);

} // namespace edn::cuda
