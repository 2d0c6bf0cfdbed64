#pragma once
/// Refining a tetrahedral mesh: local refinement inside a sphere by Rivara longest-edge bisection
/// with conforming closure, and global uniform (red, 1 -> 8) refinement. Both are nested: every
/// new cell lies inside one old cell (`cell_parent`), so a finite element field of the old mesh
/// is represented exactly on the new one (see sim/state_transfer.hpp,
/// transfer_node_state_nested). Old vertices keep their indices; new vertices (edge midpoints of
/// the rest positions) are appended.
///
/// Longest-edge bisection (refine_sphere), `levels` times:
///   1. Mark the cells touching the sphere: a vertex or the centroid within `radius` of the
///      center, or the center inside the cell, measured on `classify_positions` (deformed
///      positions, extended to new vertices by the same midpoints) or on the rest positions.
///   2. Bisect every marked cell at the midpoint of its longest edge. Edge lengths are measured
///      on the rest positions; equal lengths are ordered by the sorted vertex-id pair, so the
///      "longest edge" is a global total order and all cells sharing an edge agree on it.
///   3. Closure: while some cell has an edge that was split (a hanging midpoint), bisect that
///      cell at its own longest edge. A shared edge gets one midpoint vertex (edge -> midpoint
///      map). Each bisection splits the globally longest edge of a cell, so the propagation
///      terminates (Rivara's LEPP argument) and the result is conforming.
/// Children of (a, b, c, d) bisected at (a, b) with midpoint m are (m, b, c, d) and (a, m, c, d):
/// replacing an end of the split edge by the edge's midpoint halves the signed volume, so the
/// orientation is kept.

#include "core/types.hpp"
#include "mesh/tet_mesh.hpp"

#include <span>
#include <vector>

namespace edn {

/// What refine_sphere or refine_uniform produced.
struct RefineResult {
    TetMesh mesh;                      ///< #V' >= #V vertices (old first), #T' >= #T positive cells
    std::vector<Index> cell_parent;    ///< #T' old cell containing each new cell
    Index cells_before = 0;            ///< #T
    Index cells_after = 0;             ///< #T'
    Index new_vertices = 0;            ///< #V' - #V (edge midpoints)
    Index split_cells = 0;             ///< old cells that were subdivided
    double min_dihedral_deg = 0;       ///< smallest dihedral angle of the new mesh [degrees]
    double max_dihedral_deg = 0;       ///< largest dihedral angle of the new mesh [degrees]
    double input_min_dihedral_deg = 0; ///< smallest dihedral angle of the input [degrees]
};

/// Largest cell count refine_sphere may produce, as a multiple of the input's cell count.
inline constexpr Index kMaxRefineGrowth = 64;

/// Refines the cells of `mesh` (validated, positive cells) that touch the sphere (`center`,
/// `radius`) by `levels` rounds of longest-edge bisection with conforming closure (see the file
/// comment). `classify_positions` (#V, optional): positions used to decide which cells touch the
/// sphere; empty means the rest positions. Throws edn::Error(Usage) for a non-finite center, a
/// radius that is not positive and finite, levels outside 1..8, classify_positions of the wrong
/// size, or when the result would exceed kMaxRefineGrowth times the input's cells.
RefineResult refine_sphere(const TetMesh& mesh, const Vec3& center, double radius, int levels = 3,
                           std::span<const Vec3> classify_positions = {});

/// Red refinement of every cell of `mesh` into 8: the 4 corner tetrahedra and the inner
/// octahedron split along its shortest diagonal (rest lengths), all children positively oriented.
/// One new vertex per edge (vertex #V + edge id of build_topology). Throws edn::Error(OutOfMemory)
/// when 8 #T exceeds the 32-bit index range.
RefineResult refine_uniform(const TetMesh& mesh);

/// Smallest dihedral angle of one cell (vertex indices into `positions`), in degrees.
double cell_min_dihedral_deg(std::span<const Vec3> positions, const Cell& cell);

/// Smallest dihedral angle over all cells of `mesh`, in degrees (180 for an empty mesh).
double min_dihedral_angle_deg(const TetMesh& mesh);

/// Largest dihedral angle over all cells of `mesh`, in degrees (0 for an empty mesh).
double max_dihedral_angle_deg(const TetMesh& mesh);

} // namespace edn
