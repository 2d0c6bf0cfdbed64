#pragma once
/// Carrying the node state of a simulation across a topology change (cut, later refinement):
/// positions, velocities and pins of the old mesh's order-p nodes mapped onto the new mesh's
/// nodes (node numbering of mesh/node_layout.hpp: vertex nodes, then edge nodes, then face nodes).
///
/// Every new vertex names the old vertex it copies (vertex_origin). A new vertex node takes its
/// origin's values. A new edge (or face) node is matched through the origins of its simplex's
/// vertices: when the old mesh has that edge (face), its node values are copied, with the edge's
/// node order reversed when the renumbering flipped which end is the lower global vertex (edge
/// nodes run from the lower global vertex). Otherwise (a simplex the old mesh did not have) the
/// node is interpolated linearly from the new vertex nodes and is pinned only when all of the
/// simplex's vertices are. For a cut every simplex is found, so the transfer is an exact copy:
/// positions are identical and, since a split node's lumped mass is shared among its copies that
/// all carry its velocity, total linear momentum sum m_i v_i is conserved.
///
/// Nested meshes (refinement, transfer_node_state_nested): every new cell lies inside one old
/// cell (its parent). Each new node takes the value of the OLD order-p Lagrange field of its
/// parent at the node's barycentric coordinates in the parent (rest configuration). Since the
/// order-p space of the refined mesh contains the old one, the fields (positions, velocities)
/// are unchanged as functions: sum_i m_i v_i = integral(rho v) is conserved exactly with a
/// row-sum lumped mass (p = 1) and the deformed shape is identical. A new node is pinned when
/// every old node of the parent with a non-negligible basis weight (|N| > 1e-9) is pinned.

#include "core/types.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/topology.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace edn {

/// Per-node state of a simulation.
struct NodeState {
    std::vector<double> positions;    ///< 3 per node
    std::vector<double> velocities;   ///< 3 per node
    std::vector<std::uint8_t> pinned; ///< 1 per node
};

/// What transfer_node_state produced.
struct StateTransfer {
    NodeState state;              ///< on the new mesh's nodes
    Index interpolated_nodes = 0; ///< edge/face nodes whose simplex the old mesh lacked
};

/// Maps `old_state` (nodes of `old_mesh` at order `order`) onto the nodes of `new_mesh` at the
/// same order (see the file comment). `vertex_origin` has one old vertex per new vertex.
/// Throws edn::Error(Usage) on mismatched sizes or out-of-range origins.
StateTransfer transfer_node_state(const TetMesh& old_mesh, const TetMesh& new_mesh,
                                  std::span<const Index> vertex_origin, int order,
                                  const NodeState& old_state);

/// Maps `old_state` (nodes of `old_mesh` at order `order`) onto the nodes of `new_mesh`, a
/// nested refinement of it: `cell_parent` (#T') names the old cell containing each new cell
/// (rest positions). See the file comment. StateTransfer::interpolated_nodes counts the new
/// nodes that do not coincide with an old node. Throws edn::Error(Usage) on mismatched sizes
/// or out-of-range parents.
StateTransfer transfer_node_state_nested(const TetMesh& old_mesh, const TetMesh& new_mesh,
                                         std::span<const Index> cell_parent, int order,
                                         const NodeState& old_state);

/// A mesh with what a simulation backend holds for it: its topology, its node layout and its
/// cell node table (cell_node_table of sparse/bin_bcsr_pattern.hpp).
struct NodeSpace {
    const TetMesh& mesh;               ///< cells and rest positions
    const Topology& topology;          ///< build_topology(mesh)
    const NodeLayout& layout;          ///< make_node_layout(topology, order)
    std::span<const Index> cell_nodes; ///< #T * nodes_per_cell(order)
};

/// transfer_node_state_nested on prebuilt spaces of the old and the new mesh (same order), so
/// that a topology change reuses its backends' topologies instead of building them again. A new
/// cell with its parent's four rest positions in the parent's order copies the parent's node
/// values (bit for bit); the nodes of other cells are evaluated in the old cell that holds the
/// node's rest position, found by walking from the parent across the faces of the old mesh (the
/// parent itself for a nested mesh; a neighbour when a vertex was moved within its star, as the
/// split cut does on a deformed shape). Each node is written once, by the first cell holding it.
/// Throws edn::Error(Usage) on mismatched sizes, orders or out-of-range parents.
StateTransfer transfer_node_state_nested(const NodeSpace& from, const NodeSpace& to,
                                         std::span<const Index> cell_parent,
                                         const NodeState& old_state);

/// A state transfer worked out on the rest meshes alone, applied later to whatever state the old
/// mesh then has (a topology change prepared off the step thread, sim/prepared_change.hpp): each
/// new node copies one old node or is a weighted sum of old nodes. apply_transfer reproduces the
/// transfer functions above bit for bit (same sums in the same order).
struct TransferPlan {
    Index old_nodes = 0; ///< nodes of the old layout (the state it applies to)
    /// Per new node: the old node it copies, or kInterpolated (its row in `rows`).
    std::vector<Index> source;
    /// Interpolated nodes: row r is new node row_node[r] = sum_k weight[k] old node[k] over
    /// k in [row_offsets[r], row_offsets[r + 1]).
    std::vector<Index> row_node;
    std::vector<std::int64_t> row_offsets; ///< #rows + 1
    std::vector<Index> row_sources;        ///< old nodes of the rows
    std::vector<double> row_weights;       ///< their weights
    Index interpolated_nodes = 0;          ///< StateTransfer::interpolated_nodes
    /// Marks an interpolated node in `source`.
    static constexpr Index kInterpolated = -1;
};

/// The plan of transfer_node_state (same arguments, no state).
TransferPlan plan_node_transfer(const TetMesh& old_mesh, const TetMesh& new_mesh,
                                std::span<const Index> vertex_origin, int order);

/// The plan of transfer_node_state_nested on NodeSpaces (same arguments, no state).
TransferPlan plan_nested_transfer(const NodeSpace& from, const NodeSpace& to,
                                  std::span<const Index> cell_parent);

/// `old_state` carried by `plan`: positions and velocities summed as the plan says; a copied
/// node keeps its pin, an interpolated one is pinned when every old node of its row with a
/// non-negligible weight (|w| > 1e-9) is. Throws edn::Error(Usage) when `old_state` does not hold
/// plan.old_nodes nodes.
StateTransfer apply_transfer(const TransferPlan& plan, const NodeState& old_state);

/// The pins of apply_transfer alone (a preparation's guess of the pins its commit carries).
/// Throws edn::Error(Usage) when `old_pins` does not hold plan.old_nodes entries.
std::vector<std::uint8_t> transfer_pins(const TransferPlan& plan,
                                        const std::vector<std::uint8_t>& old_pins);

/// apply_transfer into `out`, already sized for the plan's new nodes (3 values per node in
/// positions and velocities, one pin): no allocation, so a caller that sized (and so touched) it
/// in advance, off the frame, pays no page faults here. Throws edn::Error(Usage) on wrong sizes.
void apply_transfer(const TransferPlan& plan, const NodeState& old_state, NodeState& out);

/// Per-node values of an order-`to` mesh from an order-`from` field on the same mesh (3 per
/// node), for an order change: vertex nodes keep their values; edge and face nodes get the linear
/// interpolation of their simplex's vertex values (exact for linear fields).
/// @param[in] values  3 * #nodes(from) values in the node order of mesh/node_layout.hpp
/// @return            3 * #nodes(to) values (a copy of `values` when the orders agree)
std::vector<double> transfer_node_values(const Topology& topology, const NodeLayout& from,
                                         const NodeLayout& to, const std::vector<double>& values);

/// Node pin mask of `layout` from a per-vertex mask (#V): a vertex node is pinned with its
/// vertex, an edge or face node when all vertices of its simplex are pinned.
std::vector<std::uint8_t> node_pins_from_vertices(const Topology& topology,
                                                  const NodeLayout& layout,
                                                  const std::vector<std::uint8_t>& vertex_pins);

} // namespace edn
