#include "mesh/node_layout.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"

#include <limits>

namespace edn {

NodeLayout make_node_layout(const Topology& topology, int order) {
    EDN_VERIFY(order >= 1 && order <= kMaxOrder, ErrorCode::Usage,
               "node layout: order " << order << " is not supported (1.." << kMaxOrder << ")");
    const std::int64_t nodes =
        static_cast<std::int64_t>(topology.num_vertices) +
        static_cast<std::int64_t>(order - 1) * topology.num_edges() +
        static_cast<std::int64_t>((order - 1) * (order - 2) / 2) * topology.num_faces();
    EDN_VERIFY(nodes <= std::numeric_limits<Index>::max(), ErrorCode::OutOfMemory,
               "node layout: " << nodes << " nodes of order " << order
                               << " exceed the 32-bit index range");
    NodeLayout layout{order, topology.num_vertices, topology.num_edges(), topology.num_faces()};
    if (order >= 2 && static_cast<Index>(topology.edge_at.size()) == topology.num_edges() &&
        static_cast<Index>(topology.edge_slot.size()) == topology.num_edges()) {
        layout.edge_slot = topology.edge_slot.data();
        layout.edge_at = topology.edge_at.data();
    }
    if (order >= 3 && static_cast<Index>(topology.face_at.size()) == topology.num_faces() &&
        static_cast<Index>(topology.face_slot.size()) == topology.num_faces()) {
        layout.face_slot = topology.face_slot.data();
        layout.face_at = topology.face_at.data();
    }
    return layout;
}

NodeKind node_kind(const NodeLayout& layout, Index node) {
    EDN_ASSERT(node >= 0 && node < layout.num_nodes(), "node " << node << " out of range");
    if (node < layout.first_edge_node()) return NodeKind::Vertex;
    if (node < layout.first_face_node()) return NodeKind::Edge;
    return NodeKind::Face;
}

Index node_simplex(const NodeLayout& layout, Index node) {
    switch (node_kind(layout, node)) {
    case NodeKind::Vertex:
        return node;
    case NodeKind::Edge:
        return layout.edge_of_node(node);
    case NodeKind::Face:
        return layout.face_of_node(node);
    }
    return -1;
}

int node_local_index(const NodeLayout& layout, Index node) {
    switch (node_kind(layout, node)) {
    case NodeKind::Vertex:
        return 0;
    case NodeKind::Edge:
        return (node - layout.first_edge_node()) % layout.nodes_per_edge();
    case NodeKind::Face:
        return (node - layout.first_face_node()) % layout.nodes_per_face();
    }
    return -1;
}

void cell_nodes(const Topology& topology, const std::vector<Cell>& cells, const NodeLayout& layout,
                Index cell, Index* out) {
    const Cell& vertices = cells[cell];
    for (int i = 0; i < 4; ++i) out[i] = vertices[i];
    const int per_edge = layout.nodes_per_edge();
    int at = 4;
    for (int le = 0; le < 6; ++le) {
        const Index edge = topology.cell_edges[cell][le];
        // Global edge nodes run from the lower global vertex; the local order runs from the
        // local edge's first vertex, so reverse when that vertex is the higher one.
        const bool reversed =
            vertices[kCellEdgeVertices[le][0]] > vertices[kCellEdgeVertices[le][1]];
        for (int m = 0; m < per_edge; ++m)
            out[at++] = layout.edge_node(edge, reversed ? per_edge - 1 - m : m);
    }
    if (layout.nodes_per_face() == 1)
        for (int lf = 0; lf < 4; ++lf)
            out[at++] = layout.face_node(topology.cell_faces[cell][lf], 0);
}

std::array<double, 4> local_node_barycentric(int order, int local) {
    EDN_VERIFY(order >= 1 && order <= kMaxOrder && local >= 0 && local < nodes_per_cell(order),
               ErrorCode::Usage,
               "local_node_barycentric: no local node " << local << " at order " << order);
    std::array<double, 4> bary = {0.0, 0.0, 0.0, 0.0};
    if (local < 4) {
        bary[local] = 1.0;
        return bary;
    }
    const int per_edge = order - 1;
    const int edge_local = local - 4;
    if (edge_local < 6 * per_edge) {
        const int le = edge_local / per_edge;
        const int m = edge_local % per_edge;
        const double t = static_cast<double>(m + 1) / order;
        bary[kCellEdgeVertices[le][0]] = 1.0 - t;
        bary[kCellEdgeVertices[le][1]] = t;
        return bary;
    }
    const int lf = edge_local - 6 * per_edge; // p = 3: one centroid node per face
    for (int v : kCellFaceVertices[lf]) bary[v] = 1.0 / 3.0;
    return bary;
}

std::vector<Vec3> node_positions(const TetMesh& mesh, const Topology& topology,
                                 const NodeLayout& layout) {
    std::vector<Vec3> positions(layout.num_nodes());
    const int p = layout.order;
    parallel_for(0, layout.num_vertices, [&](std::int64_t v) { positions[v] = mesh.positions[v]; });
    parallel_for(0, layout.num_edges, [&](std::int64_t e) {
        const Vec3& a = mesh.positions[topology.edges[e][0]];
        const Vec3& b = mesh.positions[topology.edges[e][1]];
        for (int k = 0; k < p - 1; ++k) {
            const double t = static_cast<double>(k + 1) / p;
            Vec3& x = positions[layout.edge_node(static_cast<Index>(e), k)];
            for (int d = 0; d < 3; ++d) x[d] = a[d] + t * (b[d] - a[d]);
        }
    });
    if (layout.nodes_per_face() == 1) {
        parallel_for(0, layout.num_faces, [&](std::int64_t f) {
            Vec3& x = positions[layout.face_node(static_cast<Index>(f), 0)];
            for (int d = 0; d < 3; ++d) {
                double sum = 0.0;
                for (Index v : topology.faces[f]) sum += mesh.positions[v][d];
                x[d] = sum / 3.0;
            }
        });
    }
    return positions;
}

std::vector<Index> row_counts_eq6(const Topology& topology, const NodeLayout& layout) {
    const int p = layout.order;
    std::vector<Index> counts(layout.num_nodes());
    // Eq. 6 with d = 3; |S^{kk}| = 1 (the simplex itself), the containing-simplex counts come from
    // the topology's count arrays and the transposes' row lengths.
    parallel_for(0, layout.num_vertices, [&](std::int64_t v) {
        const auto vi = static_cast<Index>(v);
        const std::int64_t n = binomial(p, 0) + binomial(p, 1) * topology.vertex_edge_count[vi] +
                               binomial(p, 2) * topology.vertex_face_count[vi] +
                               binomial(p, 3) * topology.vertex_cells.row_size(vi);
        counts[vi] = static_cast<Index>(n);
    });
    const int per_edge = layout.nodes_per_edge();
    parallel_for(0, layout.num_edges, [&](std::int64_t e) {
        const auto ei = static_cast<Index>(e);
        const std::int64_t n = binomial(p + 1, 1) +
                               binomial(p + 1, 2) * topology.edge_face_count[ei] +
                               binomial(p + 1, 3) * topology.edge_cells.row_size(ei);
        for (int k = 0; k < per_edge; ++k) counts[layout.edge_node(ei, k)] = static_cast<Index>(n);
    });
    const int per_face = layout.nodes_per_face();
    parallel_for(0, layout.num_faces, [&](std::int64_t f) {
        const auto fi = static_cast<Index>(f);
        const std::int64_t n =
            binomial(p + 2, 2) + binomial(p + 2, 3) * topology.face_cells.row_size(fi);
        for (int k = 0; k < per_face; ++k) counts[layout.face_node(fi, k)] = static_cast<Index>(n);
    });
    return counts;
}

} // namespace edn
