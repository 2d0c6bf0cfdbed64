#pragma once
/// The external peer of `bench solve`: HYPRE's BoomerAMG (Debian libhypre-dev, CPU, double) on
/// a Bin-BCSR* matrix through the IJ interface on one MPI rank, as the preconditioner of HYPRE's
/// PCG and as a solver of its own. HYPRE and MPI live in a plugin (hypre_plugin.hpp) loaded on
/// first use; without it (a build without HYPRE) these functions report that it is absent.

#include "bench_common.hpp"
#include "core/json.hpp"
#include "core/types.hpp"
#include "sparse/bin_bcsr_matrix.hpp"

#include <cstdint>
#include <string>

namespace edn::bench {

/// Whether the HYPRE plugin is there and loads (CMake found libHYPRE and MPI).
bool hypre_built();

/// How a BoomerAMG run is used.
enum class HypreMode : std::uint8_t {
    PcgAmg, ///< HYPRE's PCG with one BoomerAMG V-cycle as the preconditioner
    Amg,    ///< BoomerAMG V-cycles as a stationary solver
};

/// Outcome of one HYPRE run (setup then solve from x = 0).
struct HypreRun {
    Interval convert; ///< Bin-BCSR* -> HYPRE IJ (CSR) matrix and vectors
    Interval setup;   ///< the AMG hierarchy (HYPRE_ParCSRPCGSetup / HYPRE_BoomerAMGSetup)
    Interval solve;   ///< the iterations
    int iterations = 0;
    bool converged = false;
    double reported_relative_residual = 0; ///< HYPRE's own final ||r|| / ||b|| (2-norm)
    double max_pinned_value = 0;           ///< largest |x| HYPRE left on the identity rows
};

/// What hypre_solve runs.
struct HypreOptions {
    HypreMode mode = HypreMode::PcgAmg;
    double tolerance = 1e-4; ///< stop at ||r||_2 <= tolerance ||b||_2
    int max_iterations = 10000;
    /// #rows node positions: when set, the three rigid rotations about the origin go into
    /// BoomerAMG's interpolation (HYPRE_BoomerAMGSetInterpVectors, GM variant 2); the
    /// translations are there already (one displacement component per function).
    const Vec3* rigid_body_positions = nullptr;
};

/// Solves A x = b with BoomerAMG (`options`). Pinned nodes (`fixed` nonzero) become identity
/// rows and columns with zero right-hand side, so the free rows are the system cpu::pcg solves
/// (PCG's projected system). The plugin calls MPI_Init on first use (and MPI_Finalize at exit).
/// edn::Error(Unsupported) without the plugin.
/// @param[in]  a      #rows block rows, symmetric
/// @param[in]  fixed  #rows per-node pin mask
/// @param[in]  b      3 #rows right-hand side
/// @param[out] x      3 #rows solution (pinned entries set to 0)
HypreRun hypre_solve(const BinBcsrMatrix<double>& a, const std::uint8_t* fixed, const double* b,
                     double* x, const HypreOptions& options);

/// The BoomerAMG parameters hypre_solve sets, with why (for the Bench JSON).
JsonObject hypre_settings();

} // namespace edn::bench
