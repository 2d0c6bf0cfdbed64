#pragma once
/// Locality-improving renumbering of a tetrahedral mesh (zayer-2017: layout can dominate sparse
/// kernels). Vertices and cells are sorted along a Morton (Z-order) curve of their positions, so
/// that the nodes of neighbouring cells have nearby indices and the Bin-BCSR* rows of a bin
/// gather from nearby columns.

#include "mesh/tet_mesh.hpp"

#include <vector>

namespace edn {

/// Node reordering choices. MortonBalanced: Morton, then within every window of
/// kBalanceWindow vertices by the number of cells at each vertex, so the 32 rows of a Bin-BCSR*
/// bin have nearly equal lengths (a bin is padded to its longest row: 38% padding blocks on a
/// 1.15M-tet TetGen bunny in Morton order) while the window stays a compact piece of the curve.
enum class Reordering { None, Morton, MortonBalanced };
inline constexpr Index kBalanceWindow = 256;

/// new -> old vertex permutation: vertices sorted by the 63-bit Morton code of their position
/// in the bounding box (ties by old index, so the result is deterministic).
std::vector<Index> morton_vertex_order(const TetMesh& mesh);

/// `order` (new -> old) with every window of `window` consecutive entries stably sorted by the
/// number of cells at each vertex (the row length of the p = 1 pattern less 2, on average).
std::vector<Index> balance_bins(const TetMesh& mesh, std::vector<Index> order,
                                Index window = kBalanceWindow);

/// The mesh with vertices renumbered by `order` (new vertex i = old vertex order[i]) and cells
/// sorted by the Morton code of their centroid. Cell vertex order (orientation) is kept.
TetMesh reorder_mesh(const TetMesh& mesh, const std::vector<Index>& order);

/// reorder_mesh(mesh, morton_vertex_order(mesh)) for Morton, with balance_bins for
/// MortonBalanced, a copy for None.
TetMesh reorder_mesh(const TetMesh& mesh, Reordering reordering);

} // namespace edn
