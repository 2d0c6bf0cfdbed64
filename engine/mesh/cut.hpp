#pragma once
/// Cutting a tetrahedral mesh along a plane by separating it along mesh faces (vertex
/// duplication). No cell is created, removed or split: cells only get renumbered vertices, so
/// volume and mass are conserved exactly and no zero-volume or inverted cell can appear.
///
/// Algorithm (cut_mesh):
///   1. Side of each cell: sign of the signed distance of its centroid to the plane
///      (n.(c - p) >= 0 is "+"; beyond a bend, to the bent plane), measured on `classify_positions`
///      (the deformed vertex positions, so that the cut matches what the user sees) or on the rest
///      positions.
///   2. Cut faces: interior faces whose two cells lie on different sides and whose centroid
///      (same positions) lies within `radius` of the plane point p and inside the outline, if
///      any (BladeExtent; infinite radius and no outline: every face between the two sides). These
///      faces form the blade's trace on the mesh.
///   3. Per vertex v, its incident cells are grouped by union-find through the faces containing
///      v that are NOT cut (two cells sharing such a face stay together). The group holding the
///      lowest cell id keeps v; every further group gets a new vertex, a copy of v's rest
///      position, appended after the old vertices in (vertex, group) order. A vertex whose star
///      was already split in the input (cells touching v only through an edge or v itself) keeps
///      such pre-existing pinches: only groups that the cut faces separated inside one face-
///      connected part of the star get new vertices.
///   4. Each cell's vertices are replaced by the vertex of the group it belongs to.
/// A cut face whose three vertices are all split becomes two boundary faces; with a finite
/// radius, faces at the crack front may stay attached (a vertex's cells remain connected around
/// the crack tip), which is what a partial cut should do. Deterministic, parallel over vertices.

#include "core/types.hpp"
#include "mesh/tet_mesh.hpp"

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace edn {

struct Topology;

/// A bend of a blade along a line of its plane: beyond the line the blade follows a second plane
/// through the line, as a cut stroke's piece follows the previous piece across their joint.
struct BladeBend {
    Vec3 point{};  ///< a point on the bend line (in both planes) [m]
    Vec3 normal{}; ///< the second plane's normal, oriented as the blade's (n . blade normal > 0)
    Vec3 behind{}; ///< a direction (in the blade's plane) pointing across the line to the bent side
};

/// A cutting blade: the plane through `point` with normal `normal`, limited to faces whose
/// centroid lies within `radius` of `point` (infinite by default) and, with an outline, inside it.
struct CutPlane {
    Vec3 point{};                                            ///< a point on the plane [m]
    Vec3 normal{};                                           ///< plane normal, any non-zero length
    double radius = std::numeric_limits<double>::infinity(); ///< > 0; faces farther are not cut
    /// Convex polygon (corners in order, either sense, >= 3) bounding the blade in its plane, as
    /// a swept stroke piece does; empty: none. Corners off the plane count by their projection
    /// along the normal (the test is against the prism over the outline).
    std::vector<Vec3> outline{};
    /// Where the blade bends (none: flat). The side is split by the plane through the bend line
    /// where both planes' distances agree, so the blade's signed distance stays continuous.
    std::optional<BladeBend> bend{};
};

/// Which points a blade holds: within its radius of its point and inside the prism over its
/// outline. Used by cut_mesh (face centroids) and split_cut (crossing points).
class BladeExtent {
public:
    /// The extent of `plane` (checked: check_blade).
    explicit BladeExtent(const CutPlane& plane);
    /// Whether the blade is limited at all (a finite radius or an outline).
    bool bounded() const { return finite_radius_ || !corners_.empty(); }
    /// Whether `p` lies within the radius and inside the outline's prism (boundary included).
    bool holds(const Vec3& p) const;
    /// Signed distance of `p` to the blade: to its plane, or beyond a bend to the bent plane.
    double signed_distance(const Vec3& p) const;

private:
    Vec3 point_{};
    Vec3 unit_{};       // unit normal
    bool bent_ = false; // a bend with distinct planes
    Vec3 bend_point_{}; // on the bend line
    Vec3 bend_unit_{};  // the bent plane's unit normal
    Vec3 bend_side_{};  // normal of the plane splitting the sides (towards the bent one)
    double radius2_ = 0;
    bool finite_radius_ = false;
    std::vector<Vec3> corners_; // outline corners
    std::vector<Vec3> inward_;  // per outline edge (corner i -> i+1): in-plane inward normal
};

/// A checked blade: the positions that classify the vertices and the plane's unit normal.
struct CheckedBlade {
    std::span<const Vec3> positions; ///< classify_positions, or the mesh's when none are given
    Vec3 unit_normal;                ///< plane.normal / |plane.normal|
};

/// Checks the blade of cut_mesh and split_cut (finite point, finite non-zero normal, radius > 0,
/// an outline empty or a convex polygon of >= 3 finite corners with a non-zero area across the
/// normal, a bend with a finite point and finite non-zero normal and direction) and the
/// classification positions (empty: the mesh's own; else one per vertex); throws
/// edn::Error(Usage) naming the problem.
CheckedBlade check_blade(const TetMesh& mesh, const CutPlane& plane,
                         std::span<const Vec3> classify_positions);

/// What cut_mesh produced.
struct CutResult {
    TetMesh mesh;                     ///< #V' >= #V vertices, same cells (renumbered vertices)
    std::vector<Index> vertex_origin; ///< #V' old vertex each new vertex copies (identity first)
    Index cut_faces = 0;              ///< interior faces that became two boundary faces
    Index duplicated_vertices = 0;    ///< #V' - #V
};

/// Cuts `mesh` (validated, positive cells) along `plane` (see the file comment).
/// `classify_positions` (#V, optional) are the positions used to classify cells and faces;
/// empty means the rest positions. Throws edn::Error(Usage) for a zero or non-finite normal,
/// a non-finite point, a non-positive radius or a classify_positions of the wrong size.
CutResult cut_mesh(const TetMesh& mesh, const CutPlane& plane,
                   std::span<const Vec3> classify_positions = {});

/// Steps 3 and 4 of cut_mesh on their own: opens the interior faces of `mesh` flagged in `cut`
/// (one flag per face of `topology`, which is build_topology(mesh)) by vertex duplication.
/// CutResult::cut_faces counts the flagged faces whose two cells no longer share all three
/// vertices. Also used by the element-splitting cut (mesh/split_cut.hpp).
CutResult separate_faces(const TetMesh& mesh, const Topology& topology,
                         std::span<const std::uint8_t> cut);

} // namespace edn
