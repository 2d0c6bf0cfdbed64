#include "sim/state_transfer.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"

namespace edn {

StateTransfer transfer_node_state(const TetMesh& old_mesh, const TetMesh& new_mesh,
                                  std::span<const Index> vertex_origin, int order,
                                  const NodeState& old_state) {
    const Topology old_topology = build_topology(old_mesh);
    const Topology new_topology = build_topology(new_mesh);
    const NodeLayout old_layout = make_node_layout(old_topology, order);
    const NodeLayout layout = make_node_layout(new_topology, order);
    const std::size_t old_nodes = static_cast<std::size_t>(old_layout.num_nodes());
    EDN_VERIFY(old_state.positions.size() == 3 * old_nodes &&
                   old_state.velocities.size() == 3 * old_nodes &&
                   old_state.pinned.size() == old_nodes,
               ErrorCode::Usage,
               "state transfer: old state must hold "
                   << old_nodes << " nodes, got " << old_state.pinned.size() << " pins, "
                   << old_state.positions.size() << " position values");
    EDN_VERIFY(vertex_origin.size() == static_cast<std::size_t>(new_mesh.num_vertices()),
               ErrorCode::Usage,
               "state transfer: expected " << new_mesh.num_vertices() << " vertex origins, got "
                                           << vertex_origin.size());
    for (Index o : vertex_origin)
        EDN_VERIFY(o >= 0 && o < old_mesh.num_vertices(), ErrorCode::Usage,
                   "state transfer: vertex origin " << o << " out of range");

    StateTransfer result;
    NodeState& s = result.state;
    const Index n = layout.num_nodes();
    s.positions.assign(3 * static_cast<std::size_t>(n), 0.0);
    s.velocities.assign(3 * static_cast<std::size_t>(n), 0.0);
    s.pinned.assign(n, 0);
    auto copy_node = [&](Index to, Index from) {
        for (int d = 0; d < 3; ++d) {
            s.positions[3 * to + d] = old_state.positions[3 * from + d];
            s.velocities[3 * to + d] = old_state.velocities[3 * from + d];
        }
        s.pinned[to] = old_state.pinned[from];
    };
    // Linear interpolation from new vertex nodes (already filled) with the given weights.
    auto interpolate_node = [&](Index to, std::span<const Index> vertices,
                                std::span<const double> weights) {
        bool all_pinned = true;
        for (std::size_t i = 0; i < vertices.size(); ++i) {
            for (int d = 0; d < 3; ++d) {
                s.positions[3 * to + d] += weights[i] * s.positions[3 * vertices[i] + d];
                s.velocities[3 * to + d] += weights[i] * s.velocities[3 * vertices[i] + d];
            }
            all_pinned = all_pinned && s.pinned[vertices[i]];
        }
        s.pinned[to] = all_pinned ? 1 : 0;
    };

    const Index num_vertices = new_mesh.num_vertices();
    parallel_for(0, num_vertices,
                 [&](std::int64_t v) { copy_node(static_cast<Index>(v), vertex_origin[v]); });

    const int per_edge = layout.nodes_per_edge();
    std::vector<std::uint8_t> interpolated(new_topology.num_edges() + new_topology.num_faces(), 0);
    if (per_edge > 0) {
        parallel_for(0, new_topology.num_edges(), [&](std::int64_t e) {
            const Edge& edge = new_topology.edges[e]; // edge[0] < edge[1]: nodes run from edge[0]
            const Index a = vertex_origin[edge[0]], b = vertex_origin[edge[1]];
            const Index old_edge = find_edge(old_topology, a, b);
            for (int k = 0; k < per_edge; ++k) {
                const Index to = layout.edge_node(static_cast<Index>(e), k);
                if (old_edge >= 0) {
                    // Old nodes run from min(a, b); reverse when that is the new edge's far end.
                    const int old_k = a < b ? k : per_edge - 1 - k;
                    copy_node(to, old_layout.edge_node(old_edge, old_k));
                } else {
                    const double t = double(k + 1) / order;
                    const Index ends[2] = {edge[0], edge[1]};
                    const double weights[2] = {1 - t, t};
                    interpolate_node(to, ends, weights);
                    interpolated[e] = 1;
                }
            }
        });
    }
    if (layout.nodes_per_face() > 0) {
        EDN_ASSERT(layout.nodes_per_face() == 1, "state transfer: one face node for p <= 3");
        parallel_for(0, new_topology.num_faces(), [&](std::int64_t f) {
            const Face& face = new_topology.faces[f];
            const Index old_face = find_face(old_topology, vertex_origin[face[0]],
                                             vertex_origin[face[1]], vertex_origin[face[2]]);
            const Index to = layout.face_node(static_cast<Index>(f), 0);
            if (old_face >= 0) {
                copy_node(to, old_layout.face_node(old_face, 0));
            } else {
                const double weights[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
                interpolate_node(to, face, weights);
                interpolated[new_topology.num_edges() + f] = 1;
            }
        });
    }
    // `interpolated` flags simplices; count their nodes.
    const Index num_edges = new_topology.num_edges();
    for (Index e = 0; e < num_edges; ++e) result.interpolated_nodes += interpolated[e] * per_edge;
    for (Index f = 0; f < new_topology.num_faces(); ++f)
        result.interpolated_nodes += interpolated[num_edges + f] * layout.nodes_per_face();
    return result;
}

} // namespace edn
