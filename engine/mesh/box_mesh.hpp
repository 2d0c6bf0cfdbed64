#pragma once
/// Structured tetrahedral meshes of an axis-aligned box, for benchmarks and scripted runs.

#include "mesh/tet_mesh.hpp"

namespace edn {

/// Box [lo, hi] of nx * ny * nz hexahedra, each split into 6 tetrahedra along its main diagonal
/// (Kuhn split: the same split in every hexahedron, so faces conform). All cells are positively
/// oriented. Vertex (i, j, k) has index i + (nx+1)(j + (ny+1)k). Throws edn::Error(Usage) for
/// non-positive counts or an empty box, and OutOfMemory when the counts overflow 32-bit indices.
TetMesh make_box_tet_mesh(int nx, int ny, int nz, Vec3 lo, Vec3 hi);

} // namespace edn
