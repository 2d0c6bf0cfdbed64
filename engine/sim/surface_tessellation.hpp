#pragma once
/// The curved boundary of an order-p mesh as triangles, for the surface sequence: each boundary
/// face is cut into n x n small triangles whose corners are the face's Lagrange interpolant at
/// lattice points (for p = 1 and n = 1 the flat boundary itself). Points on a face edge or corner
/// are shared by the faces meeting there (watertight); points [0, #S) are the boundary's corner
/// vertices in BoundaryTriangles order, so numbering within one topology is stable. The
/// tessellation is fixed per mesh and order; each frame only evaluates it at the node positions.

#include "sim/frame_snapshot.hpp"

#include <array>
#include <vector>

namespace edn {

/// Segments per face edge of the surface sequence at order p: 1 (flat) for p = 1, 4 for p = 2,
/// 6 for p = 3 (the app's curved drawing uses the same counts).
int default_surface_subdivisions(int order);

/// Where each point of a tessellated boundary is evaluated, and its triangles.
struct SurfaceTessellation {
    int order = 1;                                 ///< Lagrange order p of the cells
    std::vector<Index> point_cell;                 ///< #R the cell each point is evaluated in
    std::vector<std::array<double, 4>> point_bary; ///< #R barycentric coordinates in that cell
    std::vector<Tri> triangles;                    ///< #B n^2, counter-clockwise from outside
};

/// Tessellates `boundary` (of `cells`, order `order`) with `subdivisions` segments per face edge.
SurfaceTessellation tessellate_boundary(const BoundaryTriangles& boundary,
                                        const std::vector<Cell>& cells, int order,
                                        int subdivisions);

/// The tessellated surface at the node positions of `frame` (whose cells and order it was made
/// for): point r is sum_k N_k(bary_r) x_k over the nodes of its cell.
SurfaceMesh evaluate_tessellation(const SurfaceTessellation& tessellation,
                                  const FrameSnapshot& frame);

} // namespace edn
