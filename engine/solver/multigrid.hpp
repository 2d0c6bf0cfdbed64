#pragma once
/// Smoothed-aggregation algebraic multigrid for the 3x3 block systems of the Newton steps, built
/// in the mission's two phases (shared/MULTIGRID.md, issue #14):
///
///  - build_multigrid (symbolic, once per fine pattern: after a re-pattern, cut, refinement or
///    order change): aggregates of the free nodes on the pattern's graph, level by level; the
///    tentative prolongator T from the near-null space (the six rigid-body modes of the rest
///    positions, or the three translations), orthonormalised per aggregate; the pattern of the
///    smoothed prolongator P = (I - w D^-1 A) T, of A P and of every coarse operator
///    A_c = P^T A P (exact counts, then bins, one exact allocation, sorted columns: the Bin-BCSR*
///    recipe with k x k blocks); and the fixed maps that re-value them (Zayer 2017's action maps:
///    for each P block the A blocks that smooth into it, for each A P block its (A block, P block)
///    pairs, for each diagonal and upper coarse block its (P block, A P block) pairs, and each
///    upper block's mirror slot: A_c is symmetric, its lower blocks are the upper ones
///    transposed).
///  - retentative_multigrid (values only, before each re-value in the backends): T and the coarse
///    near-null blocks again from the rigid-body modes of the CURRENT positions, on the same
///    aggregates: the tangent stiffness's near-null rotations are those of the deformed body (the
///    rest-shape T let CG iterations per Newton iteration grow from 3.3 to 5-6.7 over 30 frames of
///    the 187K-tet bunny; with the current modes they stayed at 3.3).
///  - revalue_multigrid (numeric, every Newton iteration): walks those maps only: block-diagonal
///    inverses, lambda_max(D^-1 A) by a few Lanczos steps, P values, A P, A_c, down to a dense
///    Cholesky factor of the coarsest operator. No symbolic work.
///
/// The cycle (apply_multigrid) is a V-cycle with Chebyshev smoothing on D^-1 A (block Jacobi
/// inside, the same polynomial before and after the coarse correction), which makes it a
/// symmetric positive definite preconditioner for CG when A is SPD on the free dofs. Pinned
/// (Dirichlet) nodes are not aggregated: P has no row for them and the fine smoother leaves them
/// at zero, so the cycle acts on the projected system of solver/pcg.hpp. Aggregates whose nodes
/// cannot carry every mode (one or two nodes, collinear nodes) lose the dependent columns of T;
/// the coarse dofs they would have had are inert (zero rows, skipped by the smoother and the
/// coarse solve).
///
/// CPU twin (this reference, double): cpu/multigrid_setup.cpp (build), cpu/multigrid_nullspace.cpp
/// (rigid-body modes, T and R, their re-computation), cpu/multigrid.cpp (revalue, cycle, CG).

#include "solver/pcg.hpp"
#include "sparse/bin_bcsr_pattern.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace edn {

/// How a level's nodes are grouped into aggregates (cpu::aggregate_nodes).
enum class Aggregation {
    /// Sequential greedy: a node whose neighbours are all free roots an aggregate with them,
    /// then the rest join the aggregate they have most neighbours in (the default).
    Greedy,
    /// Data-parallel and deterministic whatever the thread count (the shape a GPU build takes,
    /// Bell, Dalton and Olson 2012): the roots are a distance-2 maximal independent set chosen in
    /// rounds by hashed priorities, each root's aggregate is it and its neighbours (no node
    /// neighbours two roots), and every other node joins the aggregate it has most neighbours in.
    Parallel,
};

/// The choices of the hierarchy (defaults measured in bench/README.md, "bench solve").
struct MultigridSettings {
    Aggregation aggregation = Aggregation::Greedy;
    int modes = 6;           ///< near-null vectors per aggregate: 6 rigid-body, 3 translations
    int smoother_degree = 2; ///< Chebyshev degree of each pre- and post-smoothing
    /// The degree on p-multigrid's order-p level (a given first transfer); 0: smoother_degree
    int given_smoother_degree = 0;
    /// Chebyshev interval [lambda_max / ratio, 1.1 lambda_max]: [0.1, 1.1] lambda_max (30 took
    /// 19% more CG iterations and frame time on the 187K bunny, H100)
    double smoother_ratio = 11;
    /// Lanczos steps for lambda_max(D^-1 A) at every re-value of the fine level, and of every
    /// level of p-multigrid (6 at the 1.15M bunny's fine level: 20 of 30 frames converged)
    int power_iterations = 10;
    /// Lanczos steps on the aggregated levels at p = 1 (no given first level): 4 took fewer CG
    /// iterations than 10 on the bunny, 1.15M frames 0.7 ms faster. Under p-multigrid they saved
    /// nothing and slowed the projected solves of a hard frame (bench/README.md, session 23).
    int coarse_power_iterations = 4;
    double prolongator_damping = 4.0 / 3.0; ///< w = damping / lambda_max; 0 = tentative P only
    Index coarsest_dofs = 400;              ///< a level this small (or smaller) is solved densely
    int max_levels = 8;                     ///< fine level included
};

/// A square sparse matrix of b x b blocks in the Bin-BCSR* layout of sparse/bin_bcsr_view.hpp
/// with b*b value planes per bin instead of 9 (value index (k*w + j)*32 + lane from b*b*begin),
/// and b*b diagonal planes of all rows.
struct BlockMatrix {
    int block = 3;
    BinBcsrPattern pattern;
    std::vector<double> values; ///< b*b * #slots
    std::vector<double> diag;   ///< b*b * #rows, plane k at diag[k * num_rows]
};

/// A rectangular block matrix in CSR (rows of `row_block` dofs, columns of `col_block` dofs;
/// blocks row-major, row_block x col_block each).
struct BlockCsr {
    Index num_rows = 0, num_cols = 0;
    int row_block = 3, col_block = 6;
    std::vector<Index> offsets; ///< #rows+1
    std::vector<Index> columns; ///< sorted per row
    std::vector<double> values; ///< row_block * col_block per block
};

/// One level of the hierarchy: its operator's transfer to the next, coarser level. Entries of an
/// operator are numbered slots first (0 .. #slots-1), then diagonal blocks (#slots + row).
struct MultigridLevel {
    Index num_nodes = 0; ///< block rows of this level's operator
    int block = 3;       ///< its block size (3 on the finest level, `modes` below)
    Index coarse_nodes = 0;
    std::vector<Index> aggregate;  ///< node -> its aggregate (coarse node), -1 when not aggregated
    std::vector<double> tentative; ///< per node: T(node, aggregate), block x modes, row-major
    BlockCsr prolongator;          ///< P, smoothed (pattern fixed, values re-valued)
    BlockCsr product;              ///< A P (rows of pinned nodes empty)
    /// P(i, J) -= w D_i^-1 A_ij T_j: for every operator entry (i, j), the P block of row i that
    /// receives it (-1: padding or j not aggregated).
    std::vector<Index> smooth_target;
    /// For A P block q: pairs (operator entry, P block) at [product_offsets[q], [q+1]).
    std::vector<Index> product_offsets, product_entry, product_p;
    /// For coarse operator entry c: pairs (P block, A P block) at [galerkin_offsets[c], [c+1]).
    std::vector<Index> galerkin_offsets, galerkin_p, galerkin_ap;
    /// Per coarse slot (I, J), J > I: the slot (J, I) that receives its transpose; the lower
    /// slots have no pairs. Empty: no mirroring, every entry has its pairs.
    std::vector<Index> galerkin_mirror;
    /// P^T: for coarse node I, its P blocks and their rows at [restriction_offsets[I], [I+1]).
    std::vector<Index> restriction_offsets, restriction_blocks, restriction_rows;
    bool fixed_prolongator = false; ///< P given (p-multigrid's first level), never re-valued
    // ---- numeric (revalue_multigrid)
    std::vector<double> inverse_diag; ///< block*block per node, row-major (0 for inert dofs)
    double lambda_max = 0;            ///< of D^-1 A on the free dofs
};

/// A fixed first transfer (p-multigrid: the interpolation from an order-p space onto its P1
/// vertices, solver/two_level.hpp's CoarseSpace); the aggregation starts below it.
struct GivenTransfer {
    Index coarse_nodes = 0;
    std::vector<Index> offsets, columns;  ///< per fine node (CSR): the coarse nodes it interpolates
    std::vector<double> weights;          ///< their weights (the block is weight * I)
    std::vector<double> coarse_positions; ///< 3 per coarse node (the rigid-body modes below)
    std::vector<std::uint8_t> coarse_fixed; ///< per coarse node: pinned (no P entries)
};

/// The hierarchy of one fine pattern.
struct MultigridHierarchy {
    MultigridSettings settings;
    std::vector<MultigridLevel> levels; ///< levels[0]: the fine operator (given at each call)
    std::vector<BlockMatrix> coarse;    ///< coarse[l]: operator of level l + 1 (A_c of levels[l])
    std::vector<std::uint8_t> fixed;    ///< fine per-node pin mask (copy)
    /// The fine operator's values and diagonal planes at the last re-value: the cycle smooths
    /// with them, so a hierarchy reused for later matrices (MultigridRefresh) stays one fixed
    /// symmetric positive definite preconditioner (smoothing the new matrix with the old
    /// diagonal and lambda_max broke lagged solves down).
    std::vector<double> fine_values, fine_diag;
    /// Dense lower Cholesky factor of the coarsest operator (n x n, row-major), n = its dofs;
    /// inert dofs have a unit pivot and zero coupling.
    std::vector<double> coarsest_factor;
    std::vector<std::uint8_t> coarsest_inert;
    Index coarsest_dofs = 0;
    /// Scratch of the cycle, per level (its dofs each): right-hand side, solution, residual,
    /// Chebyshev direction and its product.
    mutable std::vector<std::vector<double>> b, x, r, d, q;

    /// Number of levels (the fine level included); the last is solved densely.
    int num_levels() const { return static_cast<int>(levels.size()) + 1; }
    /// Operator complexity: stored blocks' scalars of all levels over the fine level's.
    double operator_complexity(std::int64_t fine_nnz_blocks) const;
};

/// Lanczos steps for level l's lambda_max: power_iterations on the fine level (l = 0) and on
/// every level of a hierarchy with a given first prolongator (`given`: p-multigrid), else
/// coarse_power_iterations.
inline int lanczos_steps(const MultigridSettings& s, int l, bool given) {
    return l == 0 || given ? s.power_iterations : s.coarse_power_iterations;
}

/// The Chebyshev degree of a level's smoothing: given_smoother_degree (when set) on the level
/// whose prolongator is given (p-multigrid's order-p level), smoother_degree elsewhere.
inline int smoother_degree(const MultigridSettings& s, bool fixed_prolongator) {
    return fixed_prolongator && s.given_smoother_degree > 0 ? s.given_smoother_degree
                                                            : s.smoother_degree;
}
/// The highest degree of any level (the coefficient arrays' size).
inline int max_smoother_degree(const MultigridSettings& s) {
    return s.given_smoother_degree > s.smoother_degree ? s.given_smoother_degree
                                                       : s.smoother_degree;
}

/// The settings both simulation backends build their hierarchy with at `order`: the defaults,
/// and degree 1 on the order-2 level of p-multigrid. H100, 187K bunny, converged frames with the
/// post-smoother's residual from A P: p = 2 17.8-17.9 ms against 18.5-18.8 with degree 2 (16.3
/// CG iterations a frame against 13.1); at p = 3 degree 1 took 30.8 iterations a frame against
/// 18.8 and 88.8 ms against 83.8, degree 3 94.5 ms (bench/README.md, session 26).
inline MultigridSettings simulation_multigrid_settings(int order) {
    MultigridSettings s;
    if (order == 2) s.given_smoother_degree = 1;
    return s;
}

/// Timings of the last build and re-value [ms] and per-level sizes, for reports.
struct MultigridStats {
    std::vector<Index> level_nodes;
    std::vector<std::int64_t> level_nnz_blocks;
    double build_ms = 0;
    double revalue_ms = 0;
};

/// When a backend re-values its hierarchy (the same rule on both backends). Every assembly
/// (`every_assembly`), or lagged: at the first assembly of each time step only, the later Newton
/// iterations of the step reusing it as a preconditioner of their (nearby) matrices; again at the
/// next assembly once a lagged solve needed more than twice the iterations per decade (+ 2) of the
/// first solve after the re-value, or did not converge. A lagged solve that breaks down is repeated
/// once right after re-valuing (retry_now). The lag changes the preconditioner, never the system
/// solved or its stopping rule.
class MultigridRefresh {
public:
    /// A new time step: due when `max_lag` steps have shared the last re-value (1: every step).
    void new_step(int max_lag = 1) {
        if (++steps_since_ >= max_lag) due_ = true;
    }
    void invalidate() { due_ = true; } ///< after the hierarchy was (re)built
    /// At an assembly: whether to re-value now (counted as done).
    bool revalue_at_assembly(bool every_assembly) {
        current_ = every_assembly || due_;
        if (current_) due_ = false, reference_ = -1, steps_since_ = 0;
        return current_;
    }
    /// After a solve with the hierarchy: whether to re-value now and solve again.
    bool retry_now(const PcgResult& r) const { return r.breakdown && !current_; }
    void revalued_now() { current_ = true, due_ = false, reference_ = -1, steps_since_ = 0; }
    void after_solve(const PcgResult& r) {
        const double cost = iterations_per_decade(r);
        if (reference_ < 0) reference_ = cost;
        if (!current_ && (cost > 2 * reference_ + 2 || !r.converged)) due_ = true;
    }
    /// A solve's iterations per decade of residual reduction (solves of the inexact Newton ask
    /// for different reductions; at least a quarter decade is counted).
    static double iterations_per_decade(const PcgResult& r) {
        const double tiny = 1e-300;
        const double decades =
            std::log10(std::max(r.initial_residual, tiny) / std::max(r.final_residual, tiny));
        return r.iterations / std::max(decades, 0.25);
    }

private:
    bool due_ = true, current_ = false;
    int steps_since_ = 0;   ///< time steps begun since the last re-value
    double reference_ = -1; ///< iterations_per_decade of the first solve after the re-value
};

/// The six rigid-body modes (or three translations) of a node at `position`, relative to
/// `center`, as a 3 x modes row-major block: [I | (center - x)_cross ]-style columns such that
/// column 3 + a is the displacement e_a x (x - center).
void rigid_body_modes(const double position[3], const double center[3], int modes, double* out);

struct CoarseSpace;
struct TetMesh;
struct Topology;
struct NodeLayout;
/// The P1 transfer of an order-p coarse space (vertex node v is node v; pinned as its node).
GivenTransfer p1_transfer(const CoarseSpace& space, const TetMesh& mesh, const std::uint8_t* fixed);

namespace cpu {

/// Symbolic phase (file comment): the hierarchy of `fine` with nodes at `positions` (3 per
/// node, rest configuration) and pins `fixed` (per node, nonzero = pinned; nullptr = none).
/// With `first`, level 0 -> 1 is that transfer (positions are then unused) and the aggregation
/// starts on its coarse nodes.
MultigridHierarchy build_multigrid(const BinBcsrPattern& fine, const double* positions,
                                   const std::uint8_t* fixed, const MultigridSettings& settings,
                                   const GivenTransfer* first = nullptr);

/// build_multigrid for a simulation's pattern of `mesh` at `layout`'s order with pins `fixed`:
/// p = 1 aggregates the vertex nodes at their rest positions; p >= 2 starts with the P1 transfer
/// of the order-p space (p1_transfer). What both backends build (CUDA then uploads it).
MultigridHierarchy build_mesh_multigrid(const BinBcsrPattern& pattern, const TetMesh& mesh,
                                        const Topology& topology, const NodeLayout& layout,
                                        const std::uint8_t* fixed,
                                        const MultigridSettings& settings);

/// Values only, before a re-value: every aggregated level's tentative prolongator T (and the
/// coarse near-null blocks R, level by level, as the build does) from the rigid-body modes at
/// `positions` (the current, deformed ones) instead of the build's: the same aggregates and
/// patterns, no symbolic work. `positions`: 3 per node of the first aggregated level, the fine
/// nodes or a given transfer's coarse nodes (p1_transfer's vertex v is fine node v, so the fine
/// positions serve). Columns dropped as dependent may differ from the build's: their coarse dofs
/// are inert through the values (the re-value's block inverses and the coarsest factor find them).
/// At the build's positions T is the build's bit for bit.
void retentative_multigrid(MultigridHierarchy& h, const double* positions);

/// Numeric phase: re-values every level from the fine matrix `a` (its pattern is the one built).
void revalue_multigrid(MultigridHierarchy& h, const BinBcsrMatrixView<double>& a);

/// z = one V-cycle applied to r (3 per fine node; z is zero on pinned nodes).
void apply_multigrid(const MultigridHierarchy& h, const BinBcsrMatrixView<double>& a,
                     const double* r, double* z);

/// CG on A x = b preconditioned by one V-cycle per iteration: the stopping rule, pins and outcome
/// of cpu::pcg (solver/pcg.hpp). `h` must be re-valued with `a`.
PcgResult pcg_multigrid(const BinBcsrMatrixView<double>& a, const MultigridHierarchy& h,
                        const double* b, double* x, const PcgSettings& settings,
                        PcgWorkspace<double>& ws, const std::uint8_t* fixed = nullptr);

/// The Lanczos estimate of lambda_max from the alpha and beta coefficients of a PCG run (the
/// largest eigenvalue of their tridiagonal matrix); 0 without steps.
double lanczos_lambda_max(const std::vector<double>& alphas, const std::vector<double>& betas);
/// The fixed pseudo-random start vector of that PCG run, entry i (both twins use it).
double lanczos_start(std::int64_t i);

/// The pseudo-inverse of a small square operator of `block` x `block` blocks in the binned layout
/// (dense n x n row-major, n = block * rows; pinned rows/columns and inert dofs zero), in double:
/// the coarsest level's solve of the CUDA twin.
std::vector<double> dense_semidefinite_inverse(int block, const BinBcsrPatternView& p,
                                               const double* values, const double* diag,
                                               const std::uint8_t* fixed);

/// The aggregates of the nodes with active[i] on the graph of `p` (Aggregation): aggregate[i] in
/// 0 .. count - 1, -1 for inactive nodes; returns the count. Every active node is aggregated.
Index aggregate_nodes(const BinBcsrPatternView& p, const std::vector<std::uint8_t>& active,
                      Aggregation method, std::vector<Index>& aggregate);

/// One aggregated level of build_multigrid: the aggregates of the nodes with active[i] on the
/// graph of `pattern` (the operator of that level, `block` x `block` blocks, `level_dofs` dofs of
/// active nodes), the patterns of P, A P and the coarse operator and the maps that re-value them;
/// no values and no tentative prolongator (MultigridLevel::tentative stays empty). False when no
/// useful coarsening is left (the hierarchy ends above). The CUDA build makes its small levels
/// with it.
bool build_aggregated_level(const BinBcsrPatternView& pattern,
                            const std::vector<std::uint8_t>& active, int block, Index level_dofs,
                            const MultigridSettings& settings, MultigridLevel& level,
                            BlockMatrix& coarse);

/// Sizes of the levels (for reports and tests).
MultigridStats multigrid_stats(const MultigridHierarchy& h, const BinBcsrPattern& fine);

} // namespace cpu
} // namespace edn
