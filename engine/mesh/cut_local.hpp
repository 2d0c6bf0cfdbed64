#pragma once
/// Local topology for the element-splitting cut (mesh/split_cut.cpp): what a cut needs around the
/// few thousand cells the blade crosses, without the whole mesh's topology. The stars of chosen
/// vertices come from one pass over the cells; faces are matched inside a star (every face
/// through a vertex is shared by cells of its star only); the separation of separate_faces
/// (mesh/cut.hpp) runs on the stars of the vertices it can duplicate. Per-cell quality takes one
/// acos per cell (acos is monotone: the smallest angle is the acos of the largest cosine), with
/// the same arithmetic as mesh/refine.hpp's cell_min_dihedral_deg.

#include "core/types.hpp"
#include "mesh/split_cut.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/topology.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace edn::cut_local {

/// Largest cosine of the six dihedral angles of the tetrahedron (p0, p1, p2, p3), 1 when a face
/// is degenerate: std::acos of it is cell_min_dihedral_deg's angle in radians, bit for bit.
double worst_dihedral_cos(const std::array<Vec3, 4>& p);

/// The smallest dihedral angle [degrees] of a cell whose worst_dihedral_cos is `cos`.
double dihedral_deg(double cos);

/// Cells around chosen vertices: row r of `cells` lists, ascending, the cells holding
/// vertices[r]. Built in one pass over the mesh's cells (find_stars).
struct Stars {
    std::vector<Index> vertices; ///< the chosen vertices, ascending
    Csr cells;                   ///< one row per chosen vertex
};

/// The stars of `vertices` (ascending, each below num_vertices) in `cells`: one parallel pass
/// over the cells.
Stars find_stars(std::span<const Cell> cells, Index num_vertices, std::vector<Index> vertices);

/// What separate_in_stars did.
struct Separation {
    Index cut_faces = 0;           ///< opened faces whose two cells no longer share 3 vertices
    Index duplicated_vertices = 0; ///< vertices appended to the positions
};

/// separate_faces (mesh/cut.hpp) restricted to the stars of `vertices` (ascending), for a mesh
/// whose faces to open are those between two cells of opposite sides (+1 and -1; 0 never opens)
/// with three `opening` vertices. Only a vertex with an opening face in its star can be
/// duplicated, so `vertices` must hold every opening vertex; `stars` row r lists the cells of
/// vertices[r] ascending and `side` gives each entry's cell side. Copies are appended to
/// `positions` in (vertex, group) order and the cells renumbered, exactly as separate_faces
/// would on the whole mesh.
Separation separate_in_stars(std::vector<Cell>& cells, std::vector<Vec3>& positions,
                             std::span<const Index> vertices, const Csr& stars,
                             std::span<const std::int8_t> side,
                             std::span<const std::uint8_t> opening);

/// Moves vertex v (signed distance `d` to the blade with unit normal n) onto the blade, in
/// `rest`, when that keeps the mesh and its boundary: an interior vertex moves along n; a
/// boundary vertex whose boundary faces lie in one plane moves within it, one on a crease of two
/// planes along the crease; a corner does not move. Refused (false, nothing changed) when the
/// direction is nearly parallel to the blade or a cell of the vertex's star (`star`, ascending)
/// would fall below the dihedral bound or turn over. Interior and in-plane moves keep the total
/// volume. Boundary faces are found inside the star.
bool try_move(const TetMesh& mesh, std::span<const Index> star, std::vector<Vec3>& rest, Index v,
              const Vec3& n, double d, double bound_deg);

/// try_move for a blade measured on deformed positions `x` (#V, of `mesh`): the vertex moves
/// onto the blade in the deformed shape, to a point of its star there (interior: along n; on a
/// flat boundary: within one boundary face, the shortest such move; on a crease: along a crease
/// edge), and its rest position to the point with the same barycentric coordinates in that old
/// cell (face, edge) at the input's rest positions. The old piecewise linear map from rest to
/// deformed positions then takes the new rest position exactly onto the blade, the rest body
/// keeps its shape (boundary moves stay in the flat boundary or on the crease), and a state
/// transfer that evaluates the old field there (transfer_node_state_nested) puts the vertex on
/// the blade. Refused as try_move, and when no such point exists in the star or a star cell
/// positive in the deformed shape would turn over there. On success rest[v] and moved_x[v] (the
/// deformed positions with the moves so far) are written.
bool try_move_deformed(const TetMesh& mesh, std::span<const Vec3> x, std::span<const Index> star,
                       std::vector<Vec3>& rest, std::vector<Vec3>& moved_x, Index v, const Vec3& n,
                       double d, double bound_deg);

/// Per-cell quality of a mesh (largest dihedral cosine, signed volume) and its reduction.
struct CellQualities {
    std::vector<double> worst_cos; ///< #T worst_dihedral_cos of each cell
    std::vector<double> volume;    ///< #T signed volume of each cell
    MeshQuality total;             ///< smallest dihedral angle and volume (mesh_quality)
};

/// The quality of every cell of `mesh` (parallel over the cells).
CellQualities cell_qualities(const TetMesh& mesh);

} // namespace edn::cut_local
