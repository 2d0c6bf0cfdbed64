#pragma once
/// Mesh topology of a tetrahedral mesh: unique edges and faces, the cell-to-simplex maps and
/// their exact transposes, the boundary, and the per-simplex counts that Eq. (6) of the
/// Bin-BCSR* paper needs for exact row counts (see mesh/node_layout.hpp, row_counts_eq6).

#include "core/types.hpp"
#include "cuda/cuda_only.hpp"
#include "mesh/tet_mesh.hpp"

#include <array>
#include <cstddef>
#include <span>
#include <vector>

namespace edn {

/// Binary CSR matrix (no values): row i holds indices[offsets[i] .. offsets[i+1]).
struct Csr {
    std::vector<Index> offsets; ///< #rows+1 prefix sums; offsets[0] == 0 (empty when no rows)
    std::vector<Index> indices; ///< offsets.back() column indices, row by row

    /// Number of rows.
    Index num_rows() const { return offsets.empty() ? 0 : static_cast<Index>(offsets.size() - 1); }
    /// Length of row i.
    Index row_size(Index i) const { return offsets[i + 1] - offsets[i]; }
    /// The column indices of row i.
    std::span<const Index> row(Index i) const {
        return {indices.data() + offsets[i], static_cast<std::size_t>(offsets[i + 1] - offsets[i])};
    }
};

/// An edge's two vertex indices, a < b.
using Edge = std::array<Index, 2>;
/// A face's three vertex indices, a < b < c (orientation-free; see Topology::boundary_faces).
using Face = std::array<Index, 3>;

/// Local vertex pairs of a tetrahedron's six edges, in the canonical local edge order used by
/// Topology::cell_edges and by the node layout: (0,1),(0,2),(0,3),(1,2),(1,3),(2,3).
inline constexpr std::array<std::array<int, 2>, 6> kCellEdgeVertices = {
    {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}};

/// Local vertices of the face opposite local vertex i, ordered so that the face normal
/// (v1-v0)x(v2-v0) points OUT of a positively oriented cell (signed_volume > 0).
inline constexpr std::array<std::array<int, 3>, 4> kCellFaceVertices = {
    {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}}};

/// Local edges (indices into kCellEdgeVertices) of the face opposite local vertex i.
inline constexpr std::array<std::array<int, 3>, 4> kCellFaceEdges = {
    {{3, 4, 5}, {1, 2, 5}, {0, 2, 4}, {0, 1, 3}}};

/// Topology of a tetrahedral mesh (paper sec. 4.1: cellEdges/edgeCells, cellFaces/faceCells,
/// edgeVertices, faceVertices, faceEdges and the counts for Eq. 6). Built by build_topology.
struct Topology {
    Index num_vertices = 0; ///< #V, including vertices no cell references
    Index num_cells = 0;    ///< #T

    std::vector<Edge> edges; ///< #E unique edges, a < b, sorted lexicographically
    std::vector<Face> faces; ///< #F unique faces, a < b < c, sorted lexicographically
    std::vector<std::array<Index, 3>> face_edges; ///< #F edges (a,b),(a,c),(b,c) of each face

    /// #V+1: edges whose lower vertex is v are edges[edge_begin[v] .. edge_begin[v+1]).
    std::vector<Index> edge_begin;
    /// #V+1: faces whose lowest vertex is v are faces[face_begin[v] .. face_begin[v+1]).
    std::vector<Index> face_begin;

    /// #T edge ids per cell in local edge order (0,1),(0,2),(0,3),(1,2),(1,3),(2,3).
    std::vector<std::array<Index, 6>> cell_edges;
    /// #T face ids per cell; local face i is the face opposite local vertex i.
    std::vector<std::array<Index, 4>> cell_faces;

    Csr vertex_cells; ///< #V rows: cells using each vertex, ascending cell index
    Csr edge_cells;   ///< #E rows: cells using each edge, ascending cell index
    Csr face_cells;   ///< #F rows: cells using each face (1 on the boundary, 2 inside), ascending

    std::vector<Index> vertex_edge_count; ///< #V: edges containing each vertex
    std::vector<Index> vertex_face_count; ///< #V: faces containing each vertex
    std::vector<Index> edge_face_count;   ///< #E: faces containing each edge

    /// Node slot order of the edge and face nodes (mesh/node_layout.hpp, NodeLayout::edge_node):
    /// slot i of the edges holds edge edge_at[i], edge_slot is the inverse; likewise for faces.
    /// Each window of kNodeSlotWindow slots holds the same edges as the natural order, stably
    /// sorted by T_e + F_e (cells + faces around the edge; it orders the Eq. 6 row lengths of edge
    /// nodes the same way for p = 2 and p = 3), faces by T_f, so that a 32-row bin of the matrix
    /// holds rows of one length (padding at p = 2: 13.6% -> 2.5% on a 127K-tet box). Empty (the
    /// identity) for a topology made by hand; order_node_slots fills them.
    std::vector<Index> edge_slot, edge_at, face_slot, face_at;

    /// #B faces used by exactly one cell, in ascending face id, oriented with the normal
    /// (b-a)x(c-a) pointing away from the owning cell.
    std::vector<Tri> boundary_faces;
    std::vector<Index> boundary_face_ids;  ///< #B face id (index into faces) of each boundary face
    std::vector<Index> boundary_face_cell; ///< #B the cell owning each boundary face

    /// Number of unique edges.
    Index num_edges() const { return static_cast<Index>(edges.size()); }
    /// Number of unique faces.
    Index num_faces() const { return static_cast<Index>(faces.size()); }
};

/// Slots per window of the node slot order (Topology::edge_at).
inline constexpr Index kNodeSlotWindow = 1024;

/// Sort key of an edge or face in the node slot order: its cell + face count, capped at 255.
inline Index node_slot_key(Index count) {
    return count < 255 ? count : 255;
}

/// Fills topology.edge_slot/edge_at/face_slot/face_at from edge_cells, edge_face_count and
/// face_cells (see Topology::edge_at).
void order_node_slots(Topology& topology);

/// cpu::build_topology(mesh.cells, mesh.num_vertices()).
Topology build_topology(const TetMesh& mesh);

/// Binary CSR in POD form (host or device pointers).
struct CsrView {
    const Index* offsets = nullptr;
    const Index* indices = nullptr;
};

/// A topology's arrays as POD pointers: the form the device stages take (cuda::DeviceTopology's
/// view(), device pointers). Flat tables, row-major, in Topology's orders.
struct TopologyView {
    Index num_vertices = 0, num_cells = 0, num_edges = 0, num_faces = 0;
    const Index* cells = nullptr;      ///< 4 #T cell vertices
    const Index* edges = nullptr;      ///< 2 #E (a < b)
    const Index* faces = nullptr;      ///< 3 #F (a < b < c)
    const Index* face_edges = nullptr; ///< 3 #F
    const Index* cell_edges = nullptr; ///< 6 #T
    const Index* cell_faces = nullptr; ///< 4 #T
    CsrView vertex_cells, edge_cells, face_cells;
};

namespace cpu {

/// Build the topology of the #T `cells` over `num_vertices` vertices (cells assumed positively
/// oriented; orientation only matters for boundary_faces). Throws edn::Error for out-of-range or
/// repeated cell vertices (IndexOutOfRange, DegenerateElement) and for a face shared by more than
/// two cells (NonManifold). Runs in parallel over vertices and cells; the result is deterministic.
Topology build_topology(std::span<const Cell> cells, Index num_vertices);

} // namespace cpu

/// Device twins (cuda/topology.cu): every array in device memory, work on the default stream.
namespace cuda {

/// Device arrays of a topology (cuda/device_topology.cuh; .cu files and CUDA tests only).
struct DeviceTopology;

/// cpu::build_topology on the device (CUB sorts, paper sec. 4.1; meshes below 2^21 vertices):
/// builds every array of `topology` but its cells (uploaded, num_vertices and num_cells set),
/// without the boundary; reads back only #E and #F. The node slot order is built for the nodes an
/// order-`order` layout has (edges from p = 2, faces from p = 3), equal to the host's.
/// `peak_bytes` (optional) receives the most bytes the topology and its temporaries held at once.
EDN_CUDA_FN void build_topology(DeviceTopology& topology, int order,
                                std::size_t* peak_bytes = nullptr) EDN_CUDA_ONLY;

/// #V counts: how many cells reference each vertex (the row lengths of vertexCells); host in and
/// out.
EDN_CUDA_FN std::vector<Index> vertex_cell_counts(std::span<const Cell> cells,
                                                  Index num_vertices) EDN_CUDA_ONLY;

} // namespace cuda

/// Id of edge {a, b} (either order), or -1 when the mesh has no such edge.
Index find_edge(const Topology& topology, Index a, Index b);

/// Id of face {a, b, c} (any order), or -1 when the mesh has no such face.
Index find_face(const Topology& topology, Index a, Index b, Index c);

/// Number of connected components of the cells (cells sharing a vertex are connected).
Index num_components(const Topology& topology);

/// Exact transpose of a #rows x Width table of column ids in [0, num_columns): row j of the
/// result lists the rows that reference column j, in ascending order (with repeats if a row
/// references j twice). Count, scan, parallel fill, then per-row sort for determinism.
template <std::size_t Width>
Csr transpose_table(std::span<const std::array<Index, Width>> table, Index num_columns);

extern template Csr transpose_table<3>(std::span<const std::array<Index, 3>>, Index);
extern template Csr transpose_table<4>(std::span<const std::array<Index, 4>>, Index);
extern template Csr transpose_table<6>(std::span<const std::array<Index, 6>>, Index);

} // namespace edn
