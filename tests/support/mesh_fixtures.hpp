#pragma once
// Small deterministic tetrahedral meshes for tests. All cells are positively oriented
// (signed volume (b-a)x(c-a).(d-a) > 0) and conforming.

#include "mesh/tet_mesh.hpp"

#include <cstdint>

namespace edn::test {

/// Six times the signed volume of (a, b, c, d): (b-a)x(c-a).(d-a).
double orient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

/// The unit right tetrahedron (0,0,0),(1,0,0),(0,1,0),(0,0,1).
TetMesh make_single_tet();

/// The unit tetrahedron plus a second one sharing its face (1,2,3), apex (1,1,1).
TetMesh make_two_tets();

/// Box [0,lx]x[0,ly]x[0,lz] of nx*ny*nz hexahedra, each split into 6 tetrahedra along its main
/// diagonal (Kuhn/Freudenthal split, translation invariant so faces conform). Vertex (i,j,k) has
/// index i + (nx+1)(j + (ny+1)k).
TetMesh make_box_mesh(int nx, int ny, int nz, double lx, double ly, double lz);

/// make_box_mesh with interior vertices moved by up to `jitter` times the cell size per axis
/// (uniform, seeded std::mt19937; jitter <= 0.15 keeps every cell positive).
TetMesh make_random_perturbed_box(int nx, int ny, int nz, double lx, double ly, double lz,
                                  double jitter = 0.1, std::uint32_t seed = 12345);

/// The same mesh with vertex numbering and cell order randomly permuted and each cell's vertices
/// rotated by a random even permutation (orientation kept): breaks any ordering luck.
TetMesh shuffle_mesh(const TetMesh& mesh, std::uint32_t seed);

/// Two meshes side by side in one (vertex indices of `b` shifted): two components.
TetMesh concatenate_meshes(const TetMesh& a, const TetMesh& b);


} // namespace edn::test
