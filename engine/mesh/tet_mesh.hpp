#pragma once
/// Tetrahedral mesh (vertices + cells) and its validation.

#include "core/types.hpp"

#include <string>
#include <vector>

namespace edn {

/// Largest coordinate magnitude a mesh may have: volumes (coordinates cubed) and squared lengths
/// of larger ones overflow double.
constexpr double kMaxCoordinate = 1e100;

/// A linear tetrahedral mesh: the input of everything numerical.
struct TetMesh {
    std::vector<Vec3> positions; ///< #V rest positions
    std::vector<Cell> cells;     ///< #T vertex indices; positive volume once validated

    Index num_vertices() const { return static_cast<Index>(positions.size()); }
    Index num_cells() const { return static_cast<Index>(cells.size()); }
};

/// A triangle surface (OBJ input, boundary of a TetMesh).
struct SurfaceMesh {
    std::vector<Vec3> positions; ///< #V vertex positions
    std::vector<Tri> triangles;  ///< #F vertex indices, counter-clockwise seen from outside
};

/// What validate_tet_mesh changed; callers may report it.
struct TetMeshValidation {
    Index reoriented_cells = 0; ///< inverted cells whose orientation was flipped
    Index dropped_vertices = 0; ///< unreferenced vertices removed
    Index components = 0;       ///< connected components (sharing a vertex counts)
};

/// Signed volume of tetrahedron (a, b, c, d); positive when d is on the side of (b-a)x(c-a).
double signed_volume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

/// Sum of the cells' signed volumes (the mesh volume once cells are positively oriented).
double total_volume(const TetMesh& mesh);

/// Validate and normalise a mesh read from `source` (named in error messages): indices in range,
/// finite coordinates of magnitude <= kMaxCoordinate, no duplicate cells, no zero-volume cells
/// (|6V| <= 1e-10 x the cell's mean edge length cubed), inverted cells reoriented, no face of more
/// than two cells, no two cells on the same side of their shared face (overlap), unreferenced
/// vertices dropped, components counted. Throws edn::Error with a one-line message naming `source`.
TetMeshValidation validate_tet_mesh(TetMesh& mesh, const std::string& source);

/// Number of connected components of the cells (cells sharing a vertex are connected).
Index count_components(const TetMesh& mesh);

} // namespace edn
