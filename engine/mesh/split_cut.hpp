#pragma once
/// Cutting a tetrahedral mesh along the blade's plane by splitting the cells it crosses into
/// conforming sub-tetrahedra, then separating the two sides along the new faces in the plane
/// (mesh/cut.hpp's separate_faces). The cut surface is the blade's plane, not a staircase of
/// existing faces. Nested: every new cell lies inside one old cell (cell_parent), so a finite
/// element field of the old mesh is reproduced exactly (sim/state_transfer.hpp,
/// transfer_node_state_nested) unless a snapped vertex was moved (step 2): the cells around it
/// then lie in the old body, not in one old cell. Volume is kept to rounding.
///
/// Algorithm (split_cut):
///   1. Signed distances d_v of the vertices to the plane (beyond a bend, CutPlane::bend, to the
///      bent plane; no vertex is moved then), measured on `classify_positions`
///      (the deformed shape, what the user sees) or on the rest positions. |d_v| below 1e-14 of
///      the mesh extent counts as 0 (on the plane).
///   2. Snapping: an edge with ends on strictly opposite sides is "crossed" at t = d_a/(d_a-d_b).
///      When t < snap_fraction (or > 1 - snap_fraction) the near end snaps onto the blade. With
///      the blade on the rest positions, the vertex is moved onto it where that keeps the body:
///      an interior vertex along the normal, a boundary vertex within its flat boundary or along
///      its crease, and only when its star keeps positive cells above the dihedral bound (so the
///      volume is kept to rounding and the cut surface is exactly the plane). With the blade on
///      deformed positions (Simulation::cut) the vertex moves onto it in the deformed shape the
///      same ways (within the deformed star, boundary face or crease edge) and its rest position
///      to the point the old piecewise linear deformation maps there (cut_local.hpp,
///      try_move_deformed): a transfer that evaluates the old field at the new rest position
///      puts it on the blade. Otherwise (a corner, a refused move) it is only treated as on the
///      blade (d := 0) and lies within snap_fraction of an edge length of it: the crossing snaps
///      onto the vertex. Vertices are snapped in index order (deterministic).
///   3. Which cells split: with an infinite radius and no outline every cell with a crossed
///      edge. With a radius R (or an outline: CutPlane::outline, BladeExtent), the cells whose
///      cut polygon (crossing points and on-plane vertices, on the classify positions) lies
///      within R of the plane point (and inside the outline): the "inside" cells. Their crossed
///      edges are cut. A cell that is not inside but has cut edges (the crack front) is split
///      conformingly without being separated: as a cone from a vertex that no cut edge touches over
///      its opposite face, or around the segment joining the points of two cut opposite edges; a
///      front cell that fits neither (3 of its 4 crossed edges cut) becomes an inside cell, until
///      nothing changes.
///   4. One new vertex per cut edge (index #V + rank of the edge), at the same t on the rest
///      positions. Inside cells split by the zero set: 1-3 (a corner tet and a prism), 2-2 (two
///      prisms), a vertex on the plane (a tet and a pyramid), two vertices on the plane (two
///      tets). Prisms and pyramids are decomposed with the quad diagonal through the quad's
///      lowest global vertex index (Dompierre et al. 1999), so every face of the old mesh is
///      triangulated the same way from both of its cells: 1 point on a face joins it to the
///      opposite corner, 2 points give a corner triangle and a quad split through its lowest
///      index. The result is conforming (no hanging nodes). Every child is positively oriented.
///   5. Quality: the bound is min(2 degrees, half the input's smallest dihedral angle) unless
///      given. Where a child falls below it, the parent's vertex closest to the plane (relative
///      to its cut edges) is snapped and steps 3-5 repeat; every round snaps at least one more
///      vertex and a cell none of whose edges is cut is not split, so this ends.
///   6. Separation: interior faces whose three vertices are on the plane, between a cell on the
///      "+" side and one on the "-" side (sides of front children are undefined: never opened),
///      within R for a finite radius (and inside the outline), are opened by separate_faces.
///
/// Cost: one parallel pass over the vertices (distances) and a few over the cells (which cells
/// the blade crosses, the stars of their vertices, the quality of every cell, the copy into the
/// result, the components); everything else works on the crossed cells and those stars, without
/// the mesh's topology (mesh/cut_local.hpp): steps 2-5 on the crossed cells' own edges, step 6
/// on the stars of the vertices in the blade (separate_in_stars, the same result as
/// separate_faces on the whole mesh), the quality after from the input's per-cell values where
/// cells did not change.

#include "core/types.hpp"
#include "mesh/cut.hpp"
#include "mesh/tet_mesh.hpp"

#include <span>
#include <vector>

namespace edn {

/// Tuning of split_cut.
struct SplitCutOptions {
    /// A crossing within this fraction of the edge's length of an end snaps to that end
    /// (in [0, 0.5)).
    double snap_fraction = 0.05;
    /// Smallest dihedral angle a child may have [degrees]; <= 0: min(2, half the input's).
    double min_dihedral_deg = 0;
    /// Move snapped vertices onto the blade where allowed (step 2): on the rest positions, or
    /// on classify_positions and their rest positions consistently. false: the split is nested.
    bool move_snapped = true;
    /// Count the result's connected components (a pass over its cells); false leaves
    /// SplitCutResult::components 0 for a caller that counts them anyway (Simulation::cut: the
    /// new backend's topology).
    bool count_components = true;
};

/// Quality of a mesh for the cut report.
struct MeshQuality {
    double min_dihedral_deg = 0; ///< smallest dihedral angle [degrees]
    double min_volume = 0;       ///< smallest cell volume [m^3]
};

/// Wall-clock milliseconds of split_cut's phases (the bench and the CLI report them).
struct SplitCutTimes {
    double classify = 0;       ///< signed distances, crossed cells, the stars they need
    double quality_before = 0; ///< the input's worst dihedral angle and smallest volume
    double snap_and_split = 0; ///< snapping, the cells' splits and the quality repair rounds
    double assemble = 0;       ///< the split mesh (positions, cells, parents)
    double separate = 0;       ///< opening the faces in the blade (vertex duplication)
    double components = 0;     ///< connected components of the result
    double quality_after = 0;  ///< the result's worst dihedral angle and smallest volume
    double total = 0;          ///< all of split_cut
};

/// What split_cut produced.
struct SplitCutResult {
    TetMesh mesh;                   ///< the split and separated mesh
    std::vector<Index> cell_parent; ///< #T' old cell containing each new cell (rest positions)
    Index cells_before = 0;         ///< #T
    Index cells_after = 0;          ///< #T'
    Index split_cells = 0;          ///< old cells that were subdivided
    Index new_vertices = 0;         ///< vertices at edge/plane crossings
    Index snapped_vertices = 0;     ///< old vertices treated as on the plane, not moved
    Index moved_vertices = 0;       ///< old vertices snapped by moving them onto the plane
    /// Deformed positions after the moves (#V of the input; the classify positions with the
    /// moved vertices on the blade); empty without classify_positions or moves.
    std::vector<Vec3> moved_classify;
    Index cut_faces = 0;           ///< interior faces opened (each became two boundary faces)
    Index duplicated_vertices = 0; ///< vertices added by the separation
    Index components = 0;          ///< connected components of the result
    double max_snap_distance = 0;  ///< largest distance of an unmoved snapped vertex [m]
    double dihedral_bound_deg = 0; ///< the bound of step 5 [degrees]
    MeshQuality before;            ///< of the input
    MeshQuality after;             ///< of the result
    SplitCutTimes times;           ///< where the time went
};

/// Cuts `mesh` (validated, positive cells) along `plane` by splitting the crossed cells (see the
/// file comment). `classify_positions` (#V, optional): positions the plane is measured on; empty
/// means the rest positions. Throws edn::Error(Usage) for a zero or non-finite normal, a
/// non-finite point, a non-positive radius, a bad snap fraction or classify_positions of the
/// wrong size.
SplitCutResult split_cut(const TetMesh& mesh, const CutPlane& plane,
                         std::span<const Vec3> classify_positions = {},
                         const SplitCutOptions& options = {});

/// Smallest dihedral angle and smallest volume of `mesh`.
MeshQuality mesh_quality(const TetMesh& mesh);

} // namespace edn
