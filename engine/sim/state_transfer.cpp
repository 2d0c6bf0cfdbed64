#include "sim/state_transfer.hpp"

#include "core/dispatch.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "fem/lagrange_tet.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sparse/bin_bcsr_pattern.hpp"

#include <array>
#include <cmath>
#include <limits>

namespace edn {
namespace {

/// Order-p Lagrange basis values N (nodes_per_cell(order) entries) at barycentric point L.
void eval_basis(int order, const double L[4], double* N) {
    with_order(order, [&]<int P>() { LagrangeTet<P, double>::eval(L, N); });
}

/// Basis weights below this count as zero for pins and for "coincides with an old node".
constexpr double kNegligibleWeight = 1e-9;

/// Throws edn::Error(Usage) unless `old_state` holds `nodes` nodes (the old layout's).
void check_old_state(Index nodes, const NodeState& old_state) {
    const std::size_t old_nodes = static_cast<std::size_t>(nodes);
    EDN_VERIFY(old_state.positions.size() == 3 * old_nodes &&
                   old_state.velocities.size() == 3 * old_nodes &&
                   old_state.pinned.size() == old_nodes,
               ErrorCode::Usage,
               "state transfer: old state must hold "
                   << old_nodes << " nodes, got " << old_state.pinned.size() << " pins, "
                   << old_state.positions.size() << " position values");
}

/// Vertices of the simplex node `node` belongs to (1, 2 or 3 of them) and the node's linear
/// interpolation weights on them.
int node_vertex_weights(const Topology& topology, const NodeLayout& layout, Index node,
                        std::array<Index, 3>& vertices, std::array<double, 3>& weights) {
    const Index simplex = node_simplex(layout, node);
    switch (node_kind(layout, node)) {
    case NodeKind::Vertex:
        vertices[0] = simplex;
        weights[0] = 1.0;
        return 1;
    case NodeKind::Edge: {
        // Edge node k lies at a + (k+1)/p (b - a), a the lower vertex (node_layout.hpp).
        const Edge& edge = topology.edges[static_cast<std::size_t>(simplex)];
        const double s = static_cast<double>(node_local_index(layout, node) + 1) / layout.order;
        vertices[0] = edge[0];
        vertices[1] = edge[1];
        weights[0] = 1.0 - s;
        weights[1] = s;
        return 2;
    }
    case NodeKind::Face: {
        // p = 3 has one face node, at the centroid.
        const Face& face = topology.faces[static_cast<std::size_t>(simplex)];
        for (int i = 0; i < 3; ++i) {
            vertices[static_cast<std::size_t>(i)] = face[static_cast<std::size_t>(i)];
            weights[static_cast<std::size_t>(i)] = 1.0 / 3.0;
        }
        return 3;
    }
    }
    return 0;
}

} // namespace

TransferPlan plan_node_transfer(const TetMesh& old_mesh, const TetMesh& new_mesh,
                                std::span<const Index> vertex_origin, int order) {
    const Topology old_topology = build_topology(old_mesh);
    const Topology new_topology = build_topology(new_mesh);
    const NodeLayout old_layout = make_node_layout(old_topology, order);
    const NodeLayout layout = make_node_layout(new_topology, order);
    EDN_VERIFY(vertex_origin.size() == static_cast<std::size_t>(new_mesh.num_vertices()),
               ErrorCode::Usage,
               "state transfer: expected " << new_mesh.num_vertices() << " vertex origins, got "
                                           << vertex_origin.size());
    for (Index o : vertex_origin)
        EDN_VERIFY(o >= 0 && o < old_mesh.num_vertices(), ErrorCode::Usage,
                   "state transfer: vertex origin " << o << " out of range");

    TransferPlan plan;
    plan.old_nodes = old_layout.num_nodes();
    plan.source.assign(static_cast<std::size_t>(layout.num_nodes()), TransferPlan::kInterpolated);
    const Index num_vertices = new_mesh.num_vertices();
    parallel_for(0, num_vertices, [&](std::int64_t v) { plan.source[v] = vertex_origin[v]; });

    // Edge (face) nodes copy the old edge's (face's) nodes when the old mesh has the simplex,
    // else they are rows over the origins of its vertices: a new vertex node is a copy of its
    // origin, so interpolating old origins is interpolating the new vertex nodes.
    const int per_edge = layout.nodes_per_edge();
    const Index num_edges = new_topology.num_edges();
    std::vector<std::uint8_t> interpolated(num_edges + new_topology.num_faces(), 0);
    if (per_edge > 0) {
        parallel_for(0, num_edges, [&](std::int64_t e) {
            const Edge& edge = new_topology.edges[e]; // edge[0] < edge[1]: nodes run from edge[0]
            const Index a = vertex_origin[edge[0]], b = vertex_origin[edge[1]];
            const Index old_edge = find_edge(old_topology, a, b);
            if (old_edge < 0) {
                interpolated[e] = 1;
                return;
            }
            for (int k = 0; k < per_edge; ++k) {
                // Old nodes run from min(a, b); reverse when that is the new edge's far end.
                const int old_k = a < b ? k : per_edge - 1 - k;
                plan.source[layout.edge_node(static_cast<Index>(e), k)] =
                    old_layout.edge_node(old_edge, old_k);
            }
        });
    }
    if (layout.nodes_per_face() > 0) {
        EDN_ASSERT(layout.nodes_per_face() == 1, "state transfer: one face node for p <= 3");
        parallel_for(0, new_topology.num_faces(), [&](std::int64_t f) {
            const Face& face = new_topology.faces[f];
            const Index old_face = find_face(old_topology, vertex_origin[face[0]],
                                             vertex_origin[face[1]], vertex_origin[face[2]]);
            if (old_face >= 0)
                plan.source[layout.face_node(static_cast<Index>(f), 0)] =
                    old_layout.face_node(old_face, 0);
            else
                interpolated[num_edges + f] = 1;
        });
    }
    plan.row_offsets.push_back(0);
    auto add_row = [&](Index node, std::span<const Index> vertices,
                       std::span<const double> weights) {
        plan.row_node.push_back(node);
        for (std::size_t i = 0; i < vertices.size(); ++i) {
            plan.row_sources.push_back(vertex_origin[vertices[i]]);
            plan.row_weights.push_back(weights[i]);
        }
        plan.row_offsets.push_back(static_cast<std::int64_t>(plan.row_sources.size()));
        ++plan.interpolated_nodes;
    };
    for (Index e = 0; e < num_edges; ++e) {
        if (!interpolated[e]) continue;
        const Edge& edge = new_topology.edges[e];
        for (int k = 0; k < per_edge; ++k) {
            const double t = double(k + 1) / order;
            const Index ends[2] = {edge[0], edge[1]};
            const double weights[2] = {1 - t, t};
            add_row(layout.edge_node(e, k), ends, weights);
        }
    }
    for (Index f = 0; f < new_topology.num_faces(); ++f) {
        if (!interpolated[num_edges + f]) continue;
        const double weights[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
        add_row(layout.face_node(f, 0), new_topology.faces[f], weights);
    }
    return plan;
}

StateTransfer transfer_node_state(const TetMesh& old_mesh, const TetMesh& new_mesh,
                                  std::span<const Index> vertex_origin, int order,
                                  const NodeState& old_state) {
    return apply_transfer(plan_node_transfer(old_mesh, new_mesh, vertex_origin, order), old_state);
}

StateTransfer transfer_node_state_nested(const TetMesh& old_mesh, const TetMesh& new_mesh,
                                         std::span<const Index> cell_parent, int order,
                                         const NodeState& old_state) {
    const Topology old_topology = build_topology(old_mesh);
    const Topology new_topology = build_topology(new_mesh);
    const NodeLayout old_layout = make_node_layout(old_topology, order);
    const NodeLayout layout = make_node_layout(new_topology, order);
    const std::vector<Index> old_cell_nodes =
        cell_node_table(old_topology, old_mesh.cells, old_layout);
    const std::vector<Index> new_cell_nodes = cell_node_table(new_topology, new_mesh.cells, layout);
    return transfer_node_state_nested({old_mesh, old_topology, old_layout, old_cell_nodes},
                                      {new_mesh, new_topology, layout, new_cell_nodes}, cell_parent,
                                      old_state);
}

StateTransfer transfer_node_state_nested(const NodeSpace& from, const NodeSpace& to,
                                         std::span<const Index> cell_parent,
                                         const NodeState& old_state) {
    check_old_state(from.layout.num_nodes(), old_state);
    return apply_transfer(plan_nested_transfer(from, to, cell_parent), old_state);
}

TransferPlan plan_nested_transfer(const NodeSpace& from, const NodeSpace& to,
                                  std::span<const Index> cell_parent) {
    const TetMesh& old_mesh = from.mesh;
    const TetMesh& new_mesh = to.mesh;
    const int order = to.layout.order;
    EDN_VERIFY(from.layout.order == order, ErrorCode::Usage,
               "state transfer: orders " << from.layout.order << " and " << order << " differ");
    EDN_VERIFY(cell_parent.size() == static_cast<std::size_t>(new_mesh.num_cells()),
               ErrorCode::Usage,
               "state transfer: expected " << new_mesh.num_cells() << " cell parents, got "
                                           << cell_parent.size());
    for (Index p : cell_parent)
        EDN_VERIFY(p >= 0 && p < old_mesh.num_cells(), ErrorCode::Usage,
                   "state transfer: cell parent " << p << " out of range");
    const int m = nodes_per_cell(order);
    const int per_edge = to.layout.nodes_per_edge();
    const Topology& topology = to.topology;
    EDN_VERIFY(from.cell_nodes.size() == static_cast<std::size_t>(old_mesh.num_cells()) * m &&
                   to.cell_nodes.size() == static_cast<std::size_t>(new_mesh.num_cells()) * m &&
                   topology.num_cells == new_mesh.num_cells(),
               ErrorCode::Usage, "state transfer: node tables do not match the meshes");
    // Local node a of new cell t is written by the first cell holding its simplex.
    auto owns = [&](Index t, int a) {
        Index first;
        if (a < 4)
            first = topology.vertex_cells.row(new_mesh.cells[t][a])[0];
        else if (a < 4 + 6 * per_edge)
            first = topology.edge_cells.row(topology.cell_edges[t][(a - 4) / per_edge])[0];
        else
            first = topology.face_cells.row(topology.cell_faces[t][a - 4 - 6 * per_edge])[0];
        return first == t;
    };
    // Barycentric coordinates of x in old cell k (rest positions), round-off zeros made exact
    // zeros so that a node at an old node copies it bit for bit.
    auto barycentric = [&](Index k, const Vec3& x, double L[4]) {
        const Cell& pc = old_mesh.cells[k];
        const Vec3& p0 = old_mesh.positions[pc[0]];
        // Columns of the cell's affine map, and the rows of its inverse (cofactors / det).
        Vec3 col[3];
        for (int i = 0; i < 3; ++i)
            for (int d = 0; d < 3; ++d) col[i][d] = old_mesh.positions[pc[i + 1]][d] - p0[d];
        auto cross = [](const Vec3& a, const Vec3& b) -> Vec3 {
            return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                    a[0] * b[1] - a[1] * b[0]};
        };
        const Vec3 rows[3] = {cross(col[1], col[2]), cross(col[2], col[0]), cross(col[0], col[1])};
        const double det = col[0][0] * rows[0][0] + col[0][1] * rows[0][1] + col[0][2] * rows[0][2];
        EDN_ASSERT(det > 0, "state transfer: old cell " << k << " is not positive");
        L[0] = 1;
        for (int i = 0; i < 3; ++i) {
            double xi = 0;
            for (int d = 0; d < 3; ++d) xi += rows[i][d] * (x[d] - p0[d]);
            L[i + 1] = xi / det;
            L[0] -= L[i + 1];
        }
        double sum = 0;
        for (int i = 0; i < 4; ++i) {
            if (std::abs(L[i]) < 1e-12) L[i] = 0;
            sum += L[i];
        }
        for (int i = 0; i < 4; ++i) L[i] /= sum;
    };
    // The old cell holding x: the parent, or the cell a walk across faces (through the face
    // opposite the most negative coordinate) reaches; the last cell when the walk leaves the
    // mesh or takes too long (rounding on the boundary).
    constexpr int kMaxWalk = 64;
    auto locate = [&](Index parent, const Vec3& x, double L[4]) {
        Index k = parent;
        for (int step = 0;; ++step) {
            barycentric(k, x, L);
            int worst = 0;
            for (int i = 1; i < 4; ++i)
                if (L[i] < L[worst]) worst = i;
            if (L[worst] >= -1e-12 || step == kMaxWalk) return k;
            const auto pair = from.topology.face_cells.row(from.topology.cell_faces[k][worst]);
            if (pair.size() != 2) return k;
            k = pair[0] == k ? pair[1] : pair[0];
        }
    };

    TransferPlan plan;
    plan.old_nodes = from.layout.num_nodes();
    const Index n = to.layout.num_nodes();
    plan.source.assign(static_cast<std::size_t>(n), TransferPlan::kInterpolated);
    // Pass 1: a cell with its parent's shape in the parent's order copies the parent's nodes;
    // the other cells' owned nodes are interpolated (their cell and local index kept for pass 2).
    std::vector<std::int64_t> owner(static_cast<std::size_t>(n), -1); // t * m + a
    parallel_for(
        0, new_mesh.num_cells(),
        [&](std::int64_t t) {
            const Cell& c = new_mesh.cells[t];
            const Cell& pc = old_mesh.cells[cell_parent[t]];
            const Index* to_nodes = to.cell_nodes.data() + static_cast<std::size_t>(t) * m;
            bool same = true;
            for (int k = 0; k < 4; ++k)
                same = same && new_mesh.positions[c[k]] == old_mesh.positions[pc[k]];
            const Index* from_nodes =
                from.cell_nodes.data() + static_cast<std::size_t>(cell_parent[t]) * m;
            for (int a = 0; a < m; ++a) {
                if (!owns(static_cast<Index>(t), a)) continue;
                if (same)
                    plan.source[to_nodes[a]] = from_nodes[a];
                else
                    owner[to_nodes[a]] = t * m + a;
            }
        },
        kHeavyItems * 64);
    // Rows in node order (deterministic), m entries each.
    for (Index node = 0; node < n; ++node)
        if (owner[node] >= 0) plan.row_node.push_back(node);
    const std::size_t rows = plan.row_node.size();
    plan.row_offsets.resize(rows + 1);
    for (std::size_t r = 0; r <= rows; ++r) plan.row_offsets[r] = static_cast<std::int64_t>(r) * m;
    plan.row_sources.resize(rows * m);
    plan.row_weights.resize(rows * m);
    std::vector<std::uint8_t> interpolated(rows, 0);
    // Pass 2: each interpolated node is the old field at its rest position.
    parallel_for(
        0, static_cast<std::int64_t>(rows),
        [&](std::int64_t r) {
            const Index node = plan.row_node[r];
            const Index t = static_cast<Index>(owner[node] / m);
            const int a = static_cast<int>(owner[node] % m);
            const Cell& c = new_mesh.cells[t];
            const std::array<double, 4> b = local_node_barycentric(order, a);
            Vec3 x{};
            for (int k = 0; k < 4; ++k)
                for (int d = 0; d < 3; ++d) x[d] += b[k] * new_mesh.positions[c[k]][d];
            double L[4];
            const Index k = locate(cell_parent[t], x, L);
            double N[nodes_per_cell(kMaxOrder)];
            eval_basis(order, L, N);
            bool coincides = false;
            const Index* from_nodes = from.cell_nodes.data() + static_cast<std::size_t>(k) * m;
            for (int q = 0; q < m; ++q) {
                plan.row_sources[r * m + q] = from_nodes[q];
                plan.row_weights[r * m + q] = N[q];
                if (std::abs(N[q]) > kNegligibleWeight)
                    coincides = coincides || std::abs(N[q] - 1) <= kNegligibleWeight;
            }
            interpolated[r] = coincides ? 0 : 1;
        },
        kHeavyItems * 64);
    for (std::uint8_t i : interpolated) plan.interpolated_nodes += i;
    return plan;
}

StateTransfer apply_transfer(const TransferPlan& plan, const NodeState& old_state) {
    StateTransfer result;
    result.interpolated_nodes = plan.interpolated_nodes;
    NodeState& s = result.state;
    const std::size_t n = plan.source.size();
    s.positions.assign(3 * n, 0.0);
    s.velocities.assign(3 * n, 0.0);
    s.pinned.assign(n, 0);
    apply_transfer(plan, old_state, s);
    return result;
}

namespace {

/// Whether interpolated row r of `plan` is pinned: every old node with a non-negligible weight is.
bool row_pinned(const TransferPlan& plan, std::int64_t r, const std::vector<std::uint8_t>& pins) {
    bool all_pinned = true;
    for (std::int64_t k = plan.row_offsets[r]; k < plan.row_offsets[r + 1]; ++k)
        if (std::abs(plan.row_weights[k]) > kNegligibleWeight)
            all_pinned = all_pinned && pins[plan.row_sources[k]];
    return all_pinned;
}

} // namespace

std::vector<std::uint8_t> transfer_pins(const TransferPlan& plan,
                                        const std::vector<std::uint8_t>& old_pins) {
    EDN_VERIFY(old_pins.size() == static_cast<std::size_t>(plan.old_nodes), ErrorCode::Usage,
               "state transfer: " << old_pins.size() << " pins for " << plan.old_nodes
                                  << " old nodes");
    std::vector<std::uint8_t> pins(plan.source.size(), 0);
    for (std::size_t node = 0; node < pins.size(); ++node)
        if (plan.source[node] != TransferPlan::kInterpolated)
            pins[node] = old_pins[plan.source[node]];
    for (std::size_t r = 0; r < plan.row_node.size(); ++r)
        pins[plan.row_node[r]] = row_pinned(plan, static_cast<std::int64_t>(r), old_pins) ? 1 : 0;
    return pins;
}

void apply_transfer(const TransferPlan& plan, const NodeState& old_state, NodeState& s) {
    check_old_state(plan.old_nodes, old_state);
    const std::size_t n = plan.source.size();
    EDN_VERIFY(s.positions.size() == 3 * n && s.velocities.size() == 3 * n && s.pinned.size() == n,
               ErrorCode::Usage, "state transfer: the output must hold " << n << " nodes");
    parallel_for(0, static_cast<std::int64_t>(n), [&](std::int64_t node) {
        const Index old = plan.source[node];
        if (old == TransferPlan::kInterpolated) return;
        for (int d = 0; d < 3; ++d) {
            s.positions[3 * node + d] = old_state.positions[3 * old + d];
            s.velocities[3 * node + d] = old_state.velocities[3 * old + d];
        }
        s.pinned[node] = old_state.pinned[old];
    });
    // The same sums, in the same order, as the transfers did before they were planned (from 0).
    parallel_for(0, static_cast<std::int64_t>(plan.row_node.size()), [&](std::int64_t r) {
        const Index node = plan.row_node[r];
        double x[3] = {0.0, 0.0, 0.0}, v[3] = {0.0, 0.0, 0.0};
        for (std::int64_t k = plan.row_offsets[r]; k < plan.row_offsets[r + 1]; ++k) {
            const Index old = plan.row_sources[k];
            const double w = plan.row_weights[k];
            for (int d = 0; d < 3; ++d) {
                x[d] += w * old_state.positions[3 * old + d];
                v[d] += w * old_state.velocities[3 * old + d];
            }
        }
        for (int d = 0; d < 3; ++d) {
            s.positions[3 * node + d] = x[d];
            s.velocities[3 * node + d] = v[d];
        }
        s.pinned[node] = row_pinned(plan, r, old_state.pinned) ? 1 : 0;
    });
}

std::vector<double> transfer_node_values(const Topology& topology, const NodeLayout& from,
                                         const NodeLayout& to, const std::vector<double>& values) {
    EDN_VERIFY(values.size() == 3 * static_cast<std::size_t>(from.num_nodes()), ErrorCode::Usage,
               "transfer_node_values: " << values.size() << " values for " << from.num_nodes()
                                        << " nodes");
    EDN_VERIFY(from.num_vertices == to.num_vertices, ErrorCode::Usage,
               "transfer_node_values: layouts of different meshes ("
                   << from.num_vertices << " and " << to.num_vertices << " vertices)");
    if (from.order == to.order) return values;
    std::vector<double> out(3 * static_cast<std::size_t>(to.num_nodes()));
    std::array<Index, 3> vertices{};
    std::array<double, 3> weights{};
    for (Index node = 0; node < to.num_nodes(); ++node) {
        const int count = node_vertex_weights(topology, to, node, vertices, weights);
        for (int axis = 0; axis < 3; ++axis) {
            double sum = 0.0;
            for (int i = 0; i < count; ++i) {
                // Vertex nodes are numbered like the vertices in every order.
                sum += weights[static_cast<std::size_t>(i)] *
                       values[3 * static_cast<std::size_t>(vertices[static_cast<std::size_t>(i)]) +
                              static_cast<std::size_t>(axis)];
            }
            out[3 * static_cast<std::size_t>(node) + static_cast<std::size_t>(axis)] = sum;
        }
    }
    return out;
}

std::vector<std::uint8_t> node_pins_from_vertices(const Topology& topology,
                                                  const NodeLayout& layout,
                                                  const std::vector<std::uint8_t>& vertex_pins) {
    EDN_VERIFY(vertex_pins.size() == static_cast<std::size_t>(layout.num_vertices),
               ErrorCode::Usage,
               "node_pins_from_vertices: " << vertex_pins.size() << " pins for "
                                           << layout.num_vertices << " vertices");
    std::vector<std::uint8_t> pins(static_cast<std::size_t>(layout.num_nodes()), 0);
    std::array<Index, 3> vertices{};
    std::array<double, 3> weights{};
    for (Index node = 0; node < layout.num_nodes(); ++node) {
        const int count = node_vertex_weights(topology, layout, node, vertices, weights);
        bool all = true;
        for (int i = 0; i < count; ++i) {
            all =
                all && vertex_pins[static_cast<std::size_t>(vertices[static_cast<std::size_t>(i)])];
        }
        pins[static_cast<std::size_t>(node)] = all ? 1 : 0;
    }
    return pins;
}

} // namespace edn
