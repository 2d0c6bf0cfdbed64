#pragma once
/// Closed shells of a surface (its connected components) and how they nest: a shell inside an odd
/// number of others bounds a cavity, one inside an even number (0 included) bounds a solid body.

#include "mesh/tet_mesh.hpp"

#include <string>
#include <vector>

namespace edn {

/// The shells of a closed surface and their nesting depth.
struct ShellNesting {
    std::vector<Index>
        shell_of_triangle;    ///< #F shell of each triangle (0 .. #S-1, first use order)
    std::vector<Index> depth; ///< #S number of other shells enclosing each shell

    /// Number of shells #S.
    Index num_shells() const { return static_cast<Index>(depth.size()); }
    /// Whether `shell` bounds a cavity (odd depth) rather than a solid body (even depth).
    bool is_cavity(Index shell) const { return depth[shell] % 2 == 1; }
};

/// Generalized winding number of the closed triangle set `triangles` (indices into
/// surface.triangles) about `point`: the sum of the triangles' signed solid angles over 4 pi. It is
/// +1 inside a shell with outward normals, -1 inside an inward one, 0 outside (up to rounding),
/// for a point not on the shell.
double winding_number(const SurfaceMesh& surface, const std::vector<Index>& triangles,
                      const Vec3& point);

/// Splits `surface` into shells (triangles connected through shared vertices) and counts, for each
/// shell, the other shells that enclose it: shell B encloses A when A's bounding box lies in B's
/// and a vertex of A has |winding number| > 1/2 about B. Independent of orientation. Meant for
/// closed surfaces whose shells do not intersect each other (intersecting ones get some depth;
/// TetGen's self-intersection check rejects them later).
ShellNesting find_shell_nesting(const SurfaceMesh& surface);

/// One point per cavity shell (in shell order), strictly inside the cavity and outside every shell
/// nested in it: TetGen's hole points. Each is a triangle centroid of the cavity shell moved along
/// the normal by a fraction of the triangle's size (larger triangles and steps first), kept only
/// when the winding numbers confirm where it lies. Throws edn::Error (MeshingFailed) naming
/// `source` when no candidate passes (a gap far thinner than the cavity's triangles).
std::vector<Vec3> cavity_points(const SurfaceMesh& surface, const ShellNesting& nesting,
                                const std::string& source);

} // namespace edn
