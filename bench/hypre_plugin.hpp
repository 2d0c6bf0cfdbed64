#pragma once
/// The C interface of the HYPRE plugin (bench/hypre_plugin.cpp, built as the module
/// `edn_hypre_peer` next to the executables when libhypre-dev is found). Only that module links
/// HYPRE and MPI, and bench/hypre_peer.cpp loads it with dlopen when `bench solve` first needs it:
/// linking HYPRE's dependency chain (OpenMPI, SuperLU_DIST, CombBLAS, PT-Scotch, gfortran, ...)
/// into elastodyn-cli cost every command about 60 ms of start-up. Plain C types only.

#include <cstdint>

extern "C" {

/// One solve: a scalar CSR matrix (pinned dofs already identity rows and columns).
struct EdnHypreProblem {
    std::int32_t rows;           ///< scalar rows (3 per node, interleaved)
    const std::int32_t* counts;  ///< #rows entries per row
    const std::int32_t* columns; ///< column of each entry, rows one after another
    const double* values;        ///< value of each entry
    const double* rhs;           ///< #rows
    double* x;                   ///< #rows: out, the solution (the solve starts from 0)
    std::int32_t mode;           ///< 0: PCG + one BoomerAMG V-cycle; 1: BoomerAMG alone
    double tolerance;            ///< ||r||_2 <= tolerance ||b||_2
    std::int32_t max_iterations; ///< cap
    std::int32_t num_vectors;    ///< extra interpolation vectors (0 or 3 rotations)
    const double* vectors;       ///< num_vectors x #rows, one vector after another
};

/// What a solve did. Times in ms: wall clock and process CPU time.
struct EdnHypreResult {
    double convert_wall_ms, convert_cpu_ms; ///< IJ matrix and vectors
    double setup_wall_ms, setup_cpu_ms;     ///< AMG hierarchy
    double solve_wall_ms, solve_cpu_ms;     ///< iterations
    std::int32_t iterations;
    std::int32_t converged;
    double reported_relative_residual; ///< HYPRE's final ||r||_2 / ||b||_2
    char error[256];                   ///< set when the function returns nonzero
};

/// The BoomerAMG parameters the plugin sets, and why: a JSON object as text.
typedef const char* (*EdnHypreSettingsFunction)();
/// Solves `problem` into `result`; nonzero with result->error on failure. Initialises MPI (and
/// HYPRE) on its first call; both are finalised at exit.
typedef int (*EdnHypreSolveFunction)(const EdnHypreProblem* problem, EdnHypreResult* result);
}
