#pragma once
/// Curved drawing of order p >= 2 boundary faces: a fixed sparse "surface map" from node
/// positions to render vertices, built once per mesh and order. Each boundary face is split into
/// n x n small triangles (n = surface_subdivisions(p)); a render vertex at face parameters
/// (u, v) is the face's Lagrange interpolant X(u, v) = sum_k N_k(u, v) x_k over its
/// (p+1)(p+2)/2 face nodes, and its normal comes from the curved geometry, dX/du x dX/dv
/// (surface_map_eval.hpp evaluates both, on the host and in the interop kernel). Render vertices
/// on a face edge or corner are shared by the faces that meet there (watertight, smooth normals
/// summed over the faces like the flat surface's area weighting); render vertices [0, #S) are the
/// surface vertices themselves, so pins, picking and the drag keep the corner numbering.

#include "core/types.hpp"
#include "surface_map_eval.hpp"

#include <vector>

namespace edn {

struct BoundarySurface;

/// Subdivisions of each face edge at order p: 1 (flat) for p = 1, 4 for p = 2, 6 for p = 3
/// (a cubic edge needs more segments than a quadratic one to look round).
int surface_subdivisions(int order);

/// The sparse map from node positions to the render vertices of a tessellated boundary.
struct SurfaceMap {
    int order = 1;                     ///< Lagrange order p of the faces
    int subdivisions = 1;              ///< n: each face edge is cut into n segments
    int nodes_per_face = 3;            ///< K = (p+1)(p+2)/2
    int pattern_points = 3;            ///< Q = (n+1)(n+2)/2 sample points per face
    Index num_corners = 0;             ///< #S: render vertices [0, #S) are the surface vertices
    std::vector<Index> sample_offsets; ///< #R+1: samples of each render vertex
    std::vector<Index> samples;        ///< face * Q + point (point q at pattern_uv(q))
    std::vector<Index> face_nodes;     ///< #B x K global node of each face-local node
    std::vector<Index> face_cell;      ///< #B cell of each boundary face
    std::vector<float> weights;        ///< Q x 3 x K: N_k, dN_k/du, dN_k/dv at each point
    std::vector<Tri> triangles;        ///< #B n^2 render triangles, counter-clockwise outside

    /// #R render vertices.
    Index num_vertices() const {
        return sample_offsets.empty() ? 0 : static_cast<Index>(sample_offsets.size()) - 1;
    }
    /// Raw pointers to the host arrays (valid while the map lives unchanged).
    SurfaceMapView view() const;
    /// Face parameters (u, v) of pattern point q: u runs from the face's first corner to its
    /// second, v from the first to the third.
    void pattern_uv(int q, double& u, double& v) const;
};

/// Builds the map of `surface` (the boundary of the mesh with cells `cells`, triangles
/// counter-clockwise from outside) at order `order` with `subdivisions` segments per face edge.
/// @param[in] cell_nodes  #cells x nodes_per_cell(order) global nodes of each cell in the
///                        canonical local order (Simulation::cell_nodes)
/// Throws edn::Error(Internal) when a face's cell does not contain the face.
SurfaceMap build_surface_map(const BoundarySurface& surface, const std::vector<Cell>& cells,
                             int order, const std::vector<Index>& cell_nodes, int subdivisions);

/// Evaluates the map on the host: 7 floats per render vertex (position, unit normal, scalar 0),
/// the surface buffer's layout.
/// @param[in] x  3 #nodes node positions
void evaluate_surface_map(const SurfaceMap& map, const double* x, std::vector<float>& vertices);

} // namespace edn
