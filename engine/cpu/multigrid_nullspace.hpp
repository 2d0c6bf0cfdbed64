#pragma once
/// The near-null space of the smoothed-aggregation multigrid (solver/multigrid.hpp), shared by its
/// symbolic phase (cpu/multigrid_setup.cpp) and the values-only re-computation of the tentative
/// prolongators from current positions (cpu::retentative_multigrid): one code path, so a
/// re-computation at the build's positions reproduces the build bit for bit.

#include "solver/multigrid.hpp"

#include <cstdint>
#include <vector>

namespace edn::cpu::detail {

/// The rigid-body modes (3 x modes per node, row-major) of `nodes` nodes at `positions` (3 per
/// node) about the centroid of the nodes with active[i] != 0 (inactive nodes get modes too; no
/// aggregate uses them).
std::vector<double> rigid_near_null(const double* positions, const std::uint8_t* active,
                                    std::size_t nodes, int modes);

/// The tentative prolongator of `level` (its aggregates set) from the near-null blocks of its
/// nodes (level.block x modes each): per aggregate, modified Gram-Schmidt; a (numerically)
/// dependent column is dropped (zero in T and R). T goes to level.tentative, R (modes x modes,
/// upper triangular) per coarse node to `coarse_near_null`, the next level's near-null blocks.
void tentative_prolongator(MultigridLevel& level, const std::vector<double>& near_null, int modes,
                           std::vector<double>& coarse_near_null);

} // namespace edn::cpu::detail
