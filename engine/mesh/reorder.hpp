#pragma once
/// Locality-improving renumbering of a tetrahedral mesh (zayer-2017: layout can dominate sparse
/// kernels). Vertices and cells are sorted along a Morton (Z-order) curve of their positions, so
/// that the nodes of neighbouring cells have nearby indices and the Bin-BCSR* rows of a bin
/// gather from nearby columns.

#include "mesh/tet_mesh.hpp"

#include <vector>

namespace edn {

/// Node reordering choices.
enum class Reordering { None, Morton };

/// new -> old vertex permutation: vertices sorted by the 63-bit Morton code of their position
/// in the bounding box (ties by old index, so the result is deterministic).
std::vector<Index> morton_vertex_order(const TetMesh& mesh);

/// The mesh with vertices renumbered by `order` (new vertex i = old vertex order[i]) and cells
/// sorted by the Morton code of their centroid. Cell vertex order (orientation) is kept.
TetMesh reorder_mesh(const TetMesh& mesh, const std::vector<Index>& order);

/// reorder_mesh(mesh, morton_vertex_order(mesh)) for Morton, a copy for None.
TetMesh reorder_mesh(const TetMesh& mesh, Reordering reordering);

} // namespace edn
