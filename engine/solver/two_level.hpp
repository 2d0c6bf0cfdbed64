#pragma once
/// Two-level preconditioner for order p >= 2: block Jacobi on the order-p system plus a coarse
/// correction in the P1 (vertex) space of the same mesh,
///     z = M^-1 r + P A_c^-1 P^T r,      A_c = P^T A P (Galerkin),
/// where P interpolates a P1 field to the order-p nodes (vertex nodes copy their vertex, edge and
/// face nodes take the barycentric weights of their position). Block Jacobi alone needs
/// O(1/h) iterations because it hardly touches smooth errors; the coarse space removes them (on a
/// 127K-tet p = 2 box with the step's mass shift: 158 -> 18 iterations to 1e-4, bench/README.md).
///
/// A_c is assembled like any P1 matrix: per cell the coarse element blocks P_e^T H_e P_e (16
/// blocks, exact: P restricted to a cell is its local interpolation) summed by the P1 per-entry
/// map, plus the restriction of the per-node diagonal terms (lumped mass / h^2) by row sums. The
/// coarse system is solved inexactly by block-Jacobi PCG (kCoarseTolerance, at most
/// kCoarseIterationsCuda / kCoarseIterationsCpu iterations, cold start), so the
/// preconditioner varies from one application to the next and the outer iteration is the
/// flexible CG (Polak-Ribiere beta = z_new.(r_new - r_old) / z_old.r_old = -alpha z_new.q / rz).
/// Pins: r and z are zero on fixed nodes; a vertex is fixed in the coarse space when its node is.

#include "mesh/node_layout.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/topology.hpp"
#include "solver/pcg.hpp"
#include "sparse/bin_bcsr_matrix.hpp"
#include "sparse/summation.hpp"

#include <cstdint>
#include <vector>

namespace edn {

/// Coarse PCG iterations per application of the preconditioner (the cap of each inexact coarse
/// solve, tolerance 0.1), per backend (bench/README.md): 6 on the GPU, measured best there (every
/// enqueued iteration costs its launches even after the coarse solve converged); 16 on the CPU,
/// where the cap measured within run-to-run noise between 6 and 40.
inline constexpr int kCoarseIterationsCuda = 6;
inline constexpr int kCoarseIterationsCpu = 16;
/// Relative tolerance of each coarse solve.
inline constexpr double kCoarseTolerance = 0.1;

/// The P1 coarse space of an order-p mesh (p >= 2) and its assembly plans.
struct CoarseSpace {
    int order = 2;
    Index num_nodes = 0;    ///< fine (order-p) nodes
    Index num_vertices = 0; ///< coarse nodes
    /// Prolongation: fine node i = sum_k weight[3i+k] * vertex[3i+k] (unused entries: vertex -1).
    std::vector<Index> pro_vertex;
    std::vector<double> pro_weight;
    /// Restriction P^T as CSR over vertices: the fine nodes each vertex interpolates to, ascending,
    /// with their weights (deterministic gather).
    Csr restriction;
    std::vector<double> restriction_weight;
    /// m x 4 local interpolation of a cell, in the canonical local node order (node_layout.hpp).
    std::vector<double> local;
    BinBcsrPattern pattern;           ///< P1 pattern on the vertices
    PerEntryMap map;                  ///< P1 per-entry map of the cells
    std::vector<Index> cell_vertices; ///< #T x 4 P1 cell node table
};

/// Builds the coarse space of `layout` (order >= 2) on `mesh`/`topology`; throws edn::Error(Usage)
/// for order 1. Without `host_plans` the P1 pattern, map and cell table are left empty (a device
/// assembly builds its own; a topology downloaded from the device lacks the counts they need).
CoarseSpace make_coarse_space(const TetMesh& mesh, const Topology& topology,
                              const NodeLayout& layout, bool host_plans = true);

/// Scratch of a two-level solve (sized on first use).
struct TwoLevelWorkspace {
    PcgWorkspace<double> fine;   ///< r, z, p, q, inverse diagonal of the order-p system
    PcgWorkspace<double> coarse; ///< the inner P1 solves
    std::vector<double> rc, xc;  ///< coarse right-hand side and solution
    std::vector<std::uint8_t> coarse_fixed;
    int inner_iterations = 0; ///< coarse PCG iterations of the last solve, summed
};

namespace cpu {

/// Coarse element blocks: out[((t*4 + A)*4 + B)*9 + k] = sum_{a,b} local[a][A] local[b][B]
/// fine[((t*m + a)*m + b)*9 + k] for the #cells cells (the layout of element blocks everywhere).
void coarse_element_blocks(const CoarseSpace& space, const double* fine, Index cells, double* out);

/// A_c = sum_e P_e^T H_e P_e (from the fine element blocks, P1 per-entry summation) + the
/// restriction of `node_diagonal` (per fine node, added times I to its diagonal block) by row
/// sums. `element_scratch` holds the coarse element blocks (resized).
void assemble_coarse(const CoarseSpace& space, const double* fine_blocks, Index cells,
                     const std::vector<double>& node_diagonal, std::vector<double>& element_scratch,
                     BinBcsrMatrix<double>& coarse);

/// Flexible PCG on A x = b with the two-level preconditioner (file comment): the stopping rule,
/// pins and outcome of cpu::pcg (solver/pcg.hpp); `inner` sets the coarse solves (tolerance, cap;
/// always a cold start).
PcgResult pcg_two_level(const BinBcsrMatrixView<double>& a, const CoarseSpace& space,
                        const BinBcsrMatrixView<double>& coarse, const double* b, double* x,
                        const PcgSettings& settings, const PcgSettings& inner,
                        TwoLevelWorkspace& ws, const std::uint8_t* fixed = nullptr);

} // namespace cpu
} // namespace edn
