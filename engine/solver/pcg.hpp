#pragma once
/// Block-Jacobi preconditioned conjugate gradients on a Bin-BCSR* matrix. Twins with the same
/// algorithm and stopping rule: edn::cpu::pcg (cpu/pcg.cpp, float and double, host memory) and
/// edn::cuda::Pcg (cuda/pcg.cu, float, device memory; declared in cuda/cuda_pcg.hpp).
///
/// Algorithm (both twins): the preconditioner is the inverse of the 3x3 diagonal blocks,
/// recomputed at every solve (the matrix changes every Newton step). Dirichlet pins are an
/// optional per-node mask `fixed` (nonzero = all 3 dofs of the node fixed): PCG then runs on the
/// projected system P A P with P zeroing fixed nodes, i.e. r = P (b - A x) and z = P M^-1 r, so
/// every search direction is zero on fixed dofs and x keeps its input value there; only the free
/// rows of A x = b are solved (the coupling to the fixed values of x is in the first residual).
///
/// Stopping rule: ||r||_2 (unpreconditioned, free dofs) <= relative_tolerance * ||P b||_2.
/// When P b = 0 the free dofs of x are set to 0; the solve returns at once when the residual of
/// that x is zero too (no pins: b = 0 gives x = 0), else the tolerance is relative to it.
/// Breakdown: p.Ap <= 0 or not finite (a singular or indefinite matrix) stops the iteration with
/// x of the last completed step and `breakdown` set; no NaN is produced.

#include "sparse/bin_bcsr_view.hpp"

#include <cstdint>
#include <vector>

namespace edn {

/// Stopping and starting rules of a PCG solve.
struct PcgSettings {
    double relative_tolerance = 1e-4; ///< converged when ||r|| <= tol * ||P b||
    int max_iterations = 200;         ///< cap on x updates; reaching it reports not converged
    bool warm_start = true;           ///< start from x's input (else from 0 on free dofs)
};

/// Which preconditioner the Newton solves use.
enum class Preconditioner : std::uint8_t {
    BlockJacobi, ///< inverse 3x3 diagonal blocks (this file)
    TwoLevel,    ///< block Jacobi + P1 coarse correction (solver/two_level.hpp; order >= 2)
    Multigrid,   ///< smoothed-aggregation V-cycle, p-multigrid for order >= 2 (solver/multigrid.hpp)
};

/// Outcome of a PCG solve (an expected numerical outcome, never thrown).
struct PcgResult {
    int iterations = 0;          ///< x updates done
    double initial_residual = 0; ///< ||r_0|| (free dofs)
    double final_residual = 0;   ///< ||r|| at return (recurrence residual, free dofs)
    double reference_norm = 0;   ///< ||P b|| (or ||r_0|| when P b = 0), the tolerance's scale
    bool converged = false;      ///< final_residual <= tol * reference_norm
    bool breakdown = false;      ///< p.Ap <= 0 or not finite: matrix not SPD on the free dofs
};

/// Host scratch vectors of a CPU solve; sized on first use and reused across solves.
template <class T> struct PcgWorkspace {
    std::vector<T> r, z, p, q;    ///< 3 * #rows each
    std::vector<T> inverse_diag;  ///< 9 * #rows, planes as BinBcsrMatrixView::diag
    std::vector<double> partials; ///< per-chunk partial dot products
    /// Sizes every vector for `num_rows` block rows (no-op when already that size).
    void resize(Index num_rows);
};

namespace cpu {

/// Solves A x = b by block-Jacobi PCG (see the file comment), multithreaded with deterministic
/// dot products (fixed chunks summed in order, whatever the thread count).
/// @param[in]     a      #rows block rows, symmetric (SPD on the free dofs for convergence)
/// @param[in]     b      3 * #rows right-hand side (dof 3*node+axis)
/// @param[in,out] x      3 * #rows: initial guess when settings.warm_start; the solution
/// @param[in]     fixed  #rows per-node mask (nonzero = pinned) or nullptr for none
template <class T>
PcgResult pcg(const BinBcsrMatrixView<T>& a, const T* b, T* x, const PcgSettings& settings,
              PcgWorkspace<T>& workspace, const std::uint8_t* fixed = nullptr);

} // namespace cpu

extern template struct PcgWorkspace<float>;
extern template struct PcgWorkspace<double>;

} // namespace edn
