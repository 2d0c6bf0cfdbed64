#pragma once
/// A recorded frame: a self-contained copy of what the animation outputs need from a Simulation
/// (taken on the thread that owns it, written later, maybe on another thread), the state .vtu of
/// a frame and the deformed boundary surface for DCC tools.

#include "core/types.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/vtu_io.hpp"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace edn {

class Simulation;

/// The state of one frame. Every frame is complete in itself: a cut or refinement between two
/// frames changes the counts, never the meaning, of the arrays.
struct FrameSnapshot {
    int order = 1;                    ///< Lagrange order p of the cells
    Index num_vertices = 0;           ///< #V mesh vertices (nodes [0, #V) are the vertex nodes)
    std::vector<Cell> cells;          ///< #T linear cells (vertex indices; the boundary's source)
    std::vector<Index> cell_nodes;    ///< #T x nodes_per_cell(p), Simulation::cell_nodes
    std::vector<double> positions;    ///< 3 #nodes current node positions
    std::vector<double> velocities;   ///< 3 #nodes node velocities
    std::vector<double> rest;         ///< 3 #nodes rest positions
    std::vector<std::uint8_t> pinned; ///< #nodes 1 when pinned
    std::vector<double> von_mises;    ///< #T von Mises stress per cell

    /// #nodes.
    std::size_t num_nodes() const { return positions.size() / 3; }
};

/// Copies the current state of `sim` (positions and velocities come from the device with the
/// CUDA backend; von Mises is computed). Without `fields` only what the surface needs (order,
/// cells, cell nodes, positions): velocities, rest positions, pins and stress stay empty.
FrameSnapshot take_snapshot(const Simulation& sim, bool fields = true);

/// Writes `frame` as a .vtu (atomically): every node (order p >= 2 as VTK quadratic / Lagrange
/// tets), point data displacement, velocity and pinned (0/1), cell data von_mises.
void write_state_vtu(const std::filesystem::path& path, const FrameSnapshot& frame,
                     VtuEncoding encoding = VtuEncoding::Ascii);

/// write_state_vtu of the current state of `sim`.
void write_state_vtu(const std::filesystem::path& path, const Simulation& sim,
                     VtuEncoding encoding = VtuEncoding::Ascii);

/// The boundary of a set of linear cells with its own vertex numbering: the triangles used by
/// exactly one cell, over the mesh vertices they use (ascending mesh vertex order).
struct BoundaryTriangles {
    std::vector<Index> mesh_vertex; ///< #S mesh vertex of each surface vertex
    std::vector<Tri> triangles;     ///< #B surface-vertex indices, counter-clockwise from outside
    std::vector<Index> face_cell;   ///< #B the cell owning each triangle
};

/// The boundary triangles of `cells` (positively oriented) over `num_vertices` vertices.
BoundaryTriangles boundary_triangles(const std::vector<Cell>& cells, Index num_vertices);

/// The deformed boundary of `frame`: the boundary triangles at the current positions of their
/// corner vertices (for p >= 2 the flat triangles through the vertex nodes; the edge and face
/// nodes are in the .vtu).
SurfaceMesh deformed_surface(const FrameSnapshot& frame, const BoundaryTriangles& boundary);

} // namespace edn
