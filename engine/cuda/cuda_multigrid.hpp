#pragma once
/// CUDA twin of the multigrid numeric phase and cycle (solver/multigrid.hpp; CPU reference in
/// cpu/multigrid.cpp): the symbolic hierarchy (aggregates, patterns, maps) is built once per
/// pattern, on the device (Multigrid::build) or on the host by cpu::build_multigrid and
/// uploaded; every re-value walks the same maps on
/// the device in float (inverse diagonals, lambda_max by Lanczos with its scalars on the device,
/// P, A P, A_c), and the V-cycle (Chebyshev smoothing, restriction, prolongation) runs on the
/// device in float. The coarsest operator (<= 64 dofs) is inverted on the host in double (the
/// re-value's one wait) and applied on the device as a dense product. A plain C++ header: the
/// device state hides behind a pimpl; without CUDA every member throws
/// edn::Error(ErrorCode::Unsupported) (cuda/cuda_only.hpp).

#include "cuda/cuda_only.hpp"
#include "solver/multigrid.hpp"
#include "sparse/summation.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace edn::cuda {

struct DeviceLevelBuild;  // cuda/multigrid_build.cuh
class MatrixFreeOperator; // cuda/matrix_free.cuh

/// One level's symbolic arrays as the device keeps them (Multigrid::download_symbolic, for
/// tests): MultigridLevel's, with the smoothing map inverted (per P block its operator entries,
/// ascending) and the coarse entries with Galerkin pairs listed.
struct SymbolicLevel {
    std::vector<Index> aggregate, p_offsets, p_columns, smooth_offsets, smooth_entries,
        pair_offsets, pair_entry, pair_p, g_offsets, g_p, g_ap, g_mirror, g_entries, r_offsets,
        r_blocks, r_rows;
    BinBcsrPattern coarse;
};

/// p-multigrid's fixed first transfer on the device (CoarseSpace's prolongation, 3 slots per
/// fine node; GivenTransfer's on the host): fine node i = sum over k < 3 of weight[3i + k] *
/// coarse node vertex[3i + k] (-1 ends a row); coarse node v is fine node v, pinned as it.
struct DeviceTransfer {
    Index coarse_nodes = 0;
    const Index* vertex = nullptr;
    const double* weight = nullptr;
};

/// DeviceTransfer's arrays (3 per node of `num_nodes`, device) of an order-p layout from its
/// cell node table (device, canonical local order: the vertices first) and `local`, each local
/// node's barycentric weights (m x 4, local_node_barycentric): make_coarse_space's prolongation,
/// each node's vertices ascending (the host lists them in a cell's order).
EDN_CUDA_FN void make_p1_transfer(const CellNodesView& cells, Index num_nodes,
                                  const std::vector<double>& local, Index* vertex,
                                  double* weight) EDN_CUDA_ONLY;

class Multigrid {
public:
    /// Uploads the symbolic part of `h` (built for the fine pattern the matrices will have).
    /// The kernels' widths are chosen per level from the lengths of their sums; tests force
    /// them: `forced_lanes` (1, 8, 32 or 256) lanes per transfer and Galerkin sum,
    /// `forced_warps` (1, 2, 4, 8, 16 or 32) warps per bin of the coarse products, each lane
    /// forming one component of its row, or, negative, -forced_warps warps per bin with each
    /// lane forming all of them (0: both chosen).
    explicit Multigrid(const MultigridHierarchy& h, int forced_lanes = 0,
                       int forced_warps = 0) EDN_CUDA_ONLY;
    /// The hierarchy of a fine pattern built on the device (issue 14: the build after a cut):
    /// every level by cuda/multigrid_build.cuh (Aggregation::Greedy, whatever
    /// `settings.aggregation` says; a smoothed prolongator), bit for bit cpu::build_multigrid's,
    /// the tentative prolongators from the rigid-body modes at `rest` (device, 3 per node of the
    /// first aggregated level). With `first` (p >= 2) level 0 is that transfer and the
    /// aggregation starts on its coarse nodes, as cpu::build_multigrid's with a GivenTransfer.
    /// `pattern` (device pointers), `fixed` (host) and `fixed_device`: the pins. Null where the
    /// device build does not apply (a prolongator without smoothing, no level to build, an
    /// unsymmetric coarse pattern, a node order that needs too many rounds of aggregation): the
    /// caller builds on the host then.
    static std::unique_ptr<Multigrid> build(const BinBcsrPatternView& pattern,
                                            const std::vector<std::uint8_t>& fixed,
                                            const std::uint8_t* fixed_device, const double* rest,
                                            const MultigridSettings& settings,
                                            const DeviceTransfer* first = nullptr) EDN_CUDA_ONLY;
    ~Multigrid() EDN_CUDA_ONLY;
    Multigrid(const Multigrid&) = delete;
    Multigrid& operator=(const Multigrid&) = delete;

    /// Values only, before revalue(): every aggregated level's tentative prolongator from the
    /// rigid-body modes at rest + displacement (device pointers, 3 per node of the first
    /// aggregated level, as cpu::retentative_multigrid's positions; displacement may be null),
    /// computed on the device (cuda/multigrid_nullspace.cuh).
    void retentative(const double* rest, const double* displacement) EDN_CUDA_ONLY;
    /// Re-values every level from the device fine matrix `a` (device pointers).
    void revalue(const BinBcsrMatrixView<float>& a) EDN_CUDA_ONLY;
    /// z = one V-cycle applied to r (device pointers, 3 per fine node; z is 0 on pinned nodes).
    void apply(const BinBcsrMatrixView<float>& a, const float* r, float* z) EDN_CUDA_ONLY;

    /// Flexible CG on A x = b preconditioned by one V-cycle per iteration (device pointers; the
    /// stopping rule, pins and outcome of solver/pcg.hpp; dot products, CG scalars and every
    /// stopping decision in double on the device). With graphs the whole solve is one graph (its
    /// iterations under a conditional while node) and one read-back; without, one read-back per
    /// iteration. `a` must be the re-valued matrix.
    PcgResult solve(const BinBcsrMatrixView<float>& a, const float* b, float* x,
                    const PcgSettings& settings, const std::uint8_t* fixed) EDN_CUDA_ONLY;
    /// apply() with host vectors (copies; for tests).
    std::vector<float> apply(const BinBcsrMatrixView<float>& a,
                             const std::vector<float>& r) EDN_CUDA_ONLY;
    /// Whether revalue() and solve() replay captured CUDA graphs (the default) or
    /// launch their kernels one by one (the same kernels; tests compare the two).
    void set_graphs(bool on) EDN_CUDA_ONLY;
    /// The fine level's products without the matrix's blocks (p >= 2, cuda/matrix_free.cuh;
    /// null: the matrix's): the CG's own products read `op`'s present values, the cycle's the
    /// snapshot every revalue() takes (it must follow a change before the next solve). Not
    /// owned.
    void set_fine_operator(MatrixFreeOperator* op) EDN_CUDA_ONLY;
    MatrixFreeOperator* fine_operator() const EDN_CUDA_ONLY;
    /// Whether revalue() forms the order-p level's A P and diagonal from the fine operator's
    /// values (MatrixFreeOperator::galerkin) instead of the matrix's blocks: with a fine operator
    /// that can (its scratch lent), a given P and levels below it, unless switched off
    /// (set_matrix_free_revalue, EDN_MATRIX_FREE_REVALUE=0). Then revalue() reads only the
    /// pattern of `a`, whose values need not be assembled.
    bool revalues_matrix_free() const EDN_CUDA_ONLY;
    void set_matrix_free_revalue(bool on) EDN_CUDA_ONLY;
    /// Device bytes of that re-value's per-cell transfer table (0 before the first one).
    std::size_t matrix_free_revalue_bytes() const EDN_CUDA_ONLY;
    /// Whether the cycle's fine-level products read the fine snapshot's upper part (each
    /// off-diagonal block once, A_ij^T x_i added by float atomics: faster, but the atomics' order
    /// varies the last bits from run to run; off for deterministic runs). Used for p = 1 widths
    /// (PcgTuning) and fine matrices larger than the L2 cache (`any_size`: whatever the size,
    /// for tests). Default off.
    void set_upper_products(bool on, bool any_size = false) EDN_CUDA_ONLY;
    /// Whether the cycle's products with an operator that does not fit the L2 cache (`any_size`:
    /// whatever its size, for tests) read a half-precision copy of its off-diagonal values, made
    /// at every re-value with one power-of-two scale per operator: the coarse operators of 6 x 6
    /// blocks and the fine snapshot's upper part (set_upper_products). Half the bytes of those
    /// products; the smoothers and residuals then work on operators within about 2.5e-4 of each
    /// value, while the CG's own products stay float. Default on.
    void set_half_products(bool on, bool any_size = false) EDN_CUDA_ONLY;
    /// solve() with host vectors and the hierarchy's pins (copies; for tests): x holds the
    /// start (used when settings.warm_start) and receives the solution.
    PcgResult solve(const BinBcsrMatrixView<float>& a, const std::vector<float>& b,
                    std::vector<float>& x, const PcgSettings& settings) EDN_CUDA_ONLY;
    /// Levels, the fine one included (as MultigridHierarchy::num_levels).
    int num_levels() const EDN_CUDA_ONLY;
    /// For tests: the values of coarse operator l (values then diag planes, the host layout of
    /// BlockMatrix), of prolongator l, and lambda_max of level l.
    std::vector<float> download_coarse(int l) const EDN_CUDA_ONLY;
    std::vector<float> download_prolongator(int l) const EDN_CUDA_ONLY;
    /// For tests: the tentative prolongator of level l (MultigridLevel::tentative's layout).
    std::vector<float> download_tentative(int l) const EDN_CUDA_ONLY;
    double lambda_max(int l) const EDN_CUDA_ONLY;
    /// For tests: level l's symbolic arrays on the device.
    SymbolicLevel download_symbolic(int l) const EDN_CUDA_ONLY;

private:
    struct Impl;
    /// `h` (sizes, aggregates and coarse patterns) with its levels' maps in `built` and its pins
    /// on the device, `fixed_device` (build()).
    Multigrid(const MultigridHierarchy& h, std::vector<DeviceLevelBuild>& built,
              const std::uint8_t* fixed_device,
              const std::function<void(const char*)>& lap) EDN_CUDA_ONLY;
    std::unique_ptr<Impl> impl_;
};
EDN_CUDA_ONLY_IMPL(Multigrid);

} // namespace edn::cuda
