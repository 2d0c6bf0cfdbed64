#pragma once
/// Global numbering of the Lagrange nodes of order p = 1, 2, 3 on a tetrahedral mesh, the
/// canonical local node order of a cell, and the exact row counts of Eq. (6) (Bin-BCSR* paper).
///
/// Global node numbering (node indices derive from simplex indices, paper sec. 4.1):
///   vertex nodes  [0, V)                     node of vertex v          = v
///   edge nodes    [V, V + (p-1)E)            node k of edge e          = V + slot(e)(p-1) + k
///   face nodes    [V + (p-1)E, num_nodes())  node k of face f          = V + (p-1)E +
///   slot(f)(p-1)(p-2)/2 + k
/// slot(e) is the edge's place in the topology's node slot order (Topology::edge_slot: edges
/// grouped by row length within windows of 1024, so the 32-row bins of the matrix carry little
/// padding); without one (a hand-made topology) slot(e) = e. Likewise for faces.
/// Edge node k (0 <= k < p-1) of edge (a, b), a < b, lies at a + (k+1)/p (b - a): edge nodes are
/// ordered from the edge's lower global vertex. For p = 3 the one face node lies at the face
/// centroid. There are no cell-interior nodes for p <= 3.
///
/// Canonical local node order of a cell (what cell_nodes returns and what the element bases use):
///   0..3    the cell's vertices, in the cell's own order (mesh.cells[c][0..3]);
///   then, for each local edge in the order (0,1),(0,2),(0,3),(1,2),(1,3),(2,3)
///           (kCellEdgeVertices), its p-1 edge nodes ordered from the edge's first local vertex
///           to its second (node m at v_i + (m+1)/p (v_j - v_i));
///   then (p = 3 only) one node per local face, face i being the face opposite local vertex i.
/// So p = 1: 4 nodes; p = 2: 4 + 6 = 10; p = 3: 4 + 12 + 4 = 20.
/// local_node_barycentric gives each local node's barycentric coordinates in this order.

#include "core/types.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/topology.hpp"

#include <array>
#include <cstdint>
#include <vector>

namespace edn {

/// Highest supported polynomial order.
inline constexpr int kMaxOrder = 3;

/// Binomial coefficient with the paper's convention (Eq. 3): 0 unless 0 <= k <= n.
constexpr std::int64_t binomial(int n, int k) {
    if (k < 0 || n < 0 || k > n) return 0;
    std::int64_t result = 1;
    for (int i = 1; i <= k; ++i) result = result * (n - k + i) / i;
    return result;
}

/// Nodes of one order-p tetrahedron: C(p+3, 3) = 4, 10, 20 for p = 1, 2, 3.
constexpr int nodes_per_cell(int order) {
    return static_cast<int>(binomial(order + 3, 3));
}

/// Which kind of simplex a node lies in the interior of.
enum class NodeKind : std::uint8_t { Vertex, Edge, Face };

/// Sizes that define the global node numbering of an order-p mesh (see the file comment).
struct NodeLayout {
    int order = 1;          ///< polynomial order p in [1, 3]
    Index num_vertices = 0; ///< #V
    Index num_edges = 0;    ///< #E
    Index num_faces = 0;    ///< #F
    /// Node slot order (Topology::edge_slot ...): #E slot of each edge and edge of each slot, #F
    /// likewise; nullptr = the identity. Host pointers into the topology the layout was made
    /// from (keep it alive and in place), or device pointers in a layout made for kernels.
    const Index* edge_slot = nullptr;
    const Index* edge_at = nullptr;
    const Index* face_slot = nullptr;
    const Index* face_at = nullptr;

    /// Nodes inside each edge: p-1.
    EDN_HOST_DEVICE Index nodes_per_edge() const { return order - 1; }
    /// Nodes inside each face: (p-1)(p-2)/2.
    EDN_HOST_DEVICE Index nodes_per_face() const { return (order - 1) * (order - 2) / 2; }
    /// First edge node.
    EDN_HOST_DEVICE Index first_edge_node() const { return num_vertices; }
    /// First face node.
    EDN_HOST_DEVICE Index first_face_node() const {
        return num_vertices + nodes_per_edge() * num_edges;
    }
    /// Total nodes: V + (p-1)E + (p-1)(p-2)/2 F.
    EDN_HOST_DEVICE Index num_nodes() const {
        return first_face_node() + nodes_per_face() * num_faces;
    }
    /// Global index of node k of edge e (k counted from the edge's lower vertex).
    EDN_HOST_DEVICE Index edge_node(Index edge, int k) const {
        return first_edge_node() + (edge_slot ? edge_slot[edge] : edge) * nodes_per_edge() + k;
    }
    /// Global index of node k of face f.
    EDN_HOST_DEVICE Index face_node(Index face, int k) const {
        return first_face_node() + (face_slot ? face_slot[face] : face) * nodes_per_face() + k;
    }
    /// The edge of an edge node (first_edge_node() <= node < first_face_node()).
    EDN_HOST_DEVICE Index edge_of_node(Index node) const {
        const Index slot = (node - first_edge_node()) / nodes_per_edge();
        return edge_at ? edge_at[slot] : slot;
    }
    /// The face of a face node (node >= first_face_node(), p = 3).
    EDN_HOST_DEVICE Index face_of_node(Index node) const {
        const Index slot = (node - first_face_node()) / nodes_per_face();
        return face_at ? face_at[slot] : slot;
    }
};

/// The node layout of order `order` on `topology` (with its node slot order when it has one:
/// the layout then points into `topology`); throws edn::Error(Usage) unless 1 <= order <= 3
/// or when the node count exceeds the 32-bit index range (OutOfMemory).
NodeLayout make_node_layout(const Topology& topology, int order);

/// Kind of simplex that node `node` (in [0, num_nodes())) belongs to.
NodeKind node_kind(const NodeLayout& layout, Index node);

/// Index of the vertex, edge or face (per node_kind) that node `node` belongs to.
Index node_simplex(const NodeLayout& layout, Index node);

/// Position of node `node` inside its simplex (0 for vertex nodes; k for edge/face node k).
int node_local_index(const NodeLayout& layout, Index node);

/// Writes the nodes_per_cell(order) global node indices of cell `cell` to out, in the canonical
/// local order of the file comment. `cells` are the mesh cells the topology was built from.
void cell_nodes(const Topology& topology, const std::vector<Cell>& cells, const NodeLayout& layout,
                Index cell, Index* out);

/// Barycentric coordinates (weights of local vertices 0..3) of local node `local` of an order-p
/// cell, consistent with the canonical local order.
std::array<double, 4> local_node_barycentric(int order, int local);

/// #nodes positions of a straight-sided order-p mesh (edge/face nodes interpolated linearly).
std::vector<Vec3> node_positions(const TetMesh& mesh, const Topology& topology,
                                 const NodeLayout& layout);

/// #nodes exact block-row lengths of the order-p system matrix by Eq. (6) of the Bin-BCSR* paper,
/// including the diagonal block: for a k-simplex node, n = sum_{l=k..3} C(p+k, l) |S^{kl}| where
/// S^{kl} are the l-simplices that are or contain the node's k-simplex.
std::vector<Index> row_counts_eq6(const Topology& topology, const NodeLayout& layout);

} // namespace edn
