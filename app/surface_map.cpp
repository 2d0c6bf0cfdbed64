#include "surface_map.hpp"

#include "core/dispatch.hpp"
#include "core/error.hpp"
#include "fem/lagrange_tet.hpp"
#include "mesh/node_layout.hpp"
#include "scene.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

namespace edn {
namespace {

/// Face-local node k of an order-p face: lattice (i, j), i + j <= p, at barycentric weights
/// (p - i - j, i, j) / p on the face's corners (A, B, C); k runs over i first, then j.
void face_lattice(int order, int k, int& i, int& j) {
    for (j = 0; j <= order; ++j) {
        if (k <= order - j) {
            i = k;
            return;
        }
        k -= order - j + 1;
    }
    i = j = -1;
}

/// The cell-local node whose barycentric multi-index is `alpha`, or -1.
int local_node_of(int order, const int alpha[4]) {
    for (int local = 0; local < nodes_per_cell(order); ++local) {
        int beta[4] = {0, 0, 0, 0};
        local_node_multi_index(order, local, beta);
        if (beta[0] == alpha[0] && beta[1] == alpha[1] && beta[2] == alpha[2] &&
            beta[3] == alpha[3])
            return local;
    }
    return -1;
}

/// Weights of the face basis at every pattern point: the tet basis of order P on a reference
/// cell whose local vertices 0, 1, 2 are the face corners A, B, C (L3 = 0 on the face, so the
/// nodes off the face weigh exactly 0 and only the K face nodes remain).
template <int P> void face_weights(SurfaceMap& map) {
    using Basis = LagrangeTet<P, double>;
    const int k_count = map.nodes_per_face;
    std::vector<int> reference_local(static_cast<std::size_t>(k_count));
    for (int k = 0; k < k_count; ++k) {
        int i = 0, j = 0;
        face_lattice(P, k, i, j);
        const int alpha[4] = {P - i - j, i, j, 0};
        reference_local[static_cast<std::size_t>(k)] = local_node_of(P, alpha);
    }
    map.weights.assign(static_cast<std::size_t>(map.pattern_points) * 3 * k_count, 0.0f);
    for (int q = 0; q < map.pattern_points; ++q) {
        double u = 0, v = 0;
        map.pattern_uv(q, u, v);
        const double L[4] = {1.0 - u - v, u, v, 0.0};
        double N[Basis::num_nodes] = {};
        double dNdL[Basis::num_nodes][4] = {};
        Basis::eval(L, N);
        Basis::grad_barycentric(L, dNdL);
        float* w = map.weights.data() + static_cast<std::size_t>(q) * 3 * k_count;
        for (int k = 0; k < k_count; ++k) {
            const int a = reference_local[static_cast<std::size_t>(k)];
            // Along the face L_A = 1 - u - v, L_B = u, L_C = v: d/du = d/dL_B - d/dL_A.
            w[k] = static_cast<float>(N[a]);
            w[k_count + k] = static_cast<float>(dNdL[a][1] - dNdL[a][0]);
            w[2 * k_count + k] = static_cast<float>(dNdL[a][2] - dNdL[a][0]);
        }
    }
}

} // namespace

int surface_subdivisions(int order) {
    return order <= 1 ? 1 : order == 2 ? 4 : 6;
}

SurfaceMapView SurfaceMap::view() const {
    SurfaceMapView v;
    v.num_vertices = num_vertices();
    v.num_faces = static_cast<int>(face_cell.size());
    v.nodes_per_face = nodes_per_face;
    v.sample_offsets = sample_offsets.data();
    v.samples = samples.data();
    v.face_nodes = face_nodes.data();
    v.face_cell = face_cell.data();
    v.weights = weights.data();
    v.pattern_points = pattern_points;
    return v;
}

void SurfaceMap::pattern_uv(int q, double& u, double& v) const {
    int a = 0, b = 0;
    face_lattice(subdivisions, q, a, b);
    u = static_cast<double>(a) / subdivisions;
    v = static_cast<double>(b) / subdivisions;
}

SurfaceMap build_surface_map(const BoundarySurface& surface, const std::vector<Cell>& cells,
                             int order, const std::vector<Index>& cell_nodes, int subdivisions) {
    EDN_VERIFY(order >= 1 && order <= kMaxOrder, ErrorCode::Usage,
               "surface map: order " << order << " is not 1, 2 or 3");
    EDN_VERIFY(subdivisions >= 1, ErrorCode::Usage,
               "surface map: " << subdivisions << " subdivisions");
    const int per_cell = nodes_per_cell(order);
    EDN_VERIFY(cell_nodes.size() == cells.size() * static_cast<std::size_t>(per_cell),
               ErrorCode::Internal,
               "surface map: " << cell_nodes.size() << " cell nodes for " << cells.size()
                               << " cells of order " << order);
    SurfaceMap map;
    map.order = order;
    map.subdivisions = subdivisions;
    map.nodes_per_face = (order + 1) * (order + 2) / 2;
    map.pattern_points = (subdivisions + 1) * (subdivisions + 2) / 2;
    map.num_corners = static_cast<Index>(surface.mesh_vertex.size());
    with_order(order, [&]<int P>() { face_weights<P>(map); });

    const int n = subdivisions;
    const int q_count = map.pattern_points;
    const int k_count = map.nodes_per_face;
    const std::size_t num_faces = surface.triangles.size();
    map.face_cell = surface.face_cell;
    map.face_nodes.resize(num_faces * static_cast<std::size_t>(k_count));
    // Render vertex of each (face, pattern point): corners are the surface vertices, points on a
    // face edge are shared through the edge (keyed by its lower surface vertex), interior points
    // belong to their face.
    std::vector<Index> vertex_of(num_faces * static_cast<std::size_t>(q_count));
    std::unordered_map<std::uint64_t, Index> edge_first; // first render vertex of an edge's n-1
    Index next = map.num_corners;
    auto edge_vertex = [&](Index from, Index to, int step) {
        const Index lo = std::min(from, to), hi = std::max(from, to);
        const std::uint64_t key =
            (static_cast<std::uint64_t>(static_cast<std::uint32_t>(lo)) << 32) |
            static_cast<std::uint32_t>(hi);
        auto [it, fresh] = edge_first.try_emplace(key, next);
        if (fresh) next += n - 1;
        const int from_lo = from == lo ? step : n - step; // steps counted from the lower vertex
        return it->second + (from_lo - 1);
    };
    for (std::size_t f = 0; f < num_faces; ++f) {
        const Tri& tri = surface.triangles[f];
        const Index cell = surface.face_cell[f];
        EDN_VERIFY(cell >= 0 && static_cast<std::size_t>(cell) < cells.size(), ErrorCode::Internal,
                   "surface map: face " << f << " has cell " << cell);
        // Local vertex of each face corner in the cell.
        int corner_local[3] = {-1, -1, -1};
        for (int c = 0; c < 3; ++c) {
            const Index vertex = surface.mesh_vertex[static_cast<std::size_t>(tri[c])];
            for (int l = 0; l < 4; ++l)
                if (cells[static_cast<std::size_t>(cell)][l] == vertex) corner_local[c] = l;
            EDN_VERIFY(corner_local[c] >= 0, ErrorCode::Internal,
                       "surface map: cell " << cell << " does not hold vertex " << vertex
                                            << " of boundary face " << f);
        }
        for (int k = 0; k < k_count; ++k) {
            int i = 0, j = 0;
            face_lattice(order, k, i, j);
            int alpha[4] = {0, 0, 0, 0};
            alpha[corner_local[0]] = order - i - j;
            alpha[corner_local[1]] = i;
            alpha[corner_local[2]] = j;
            const int local = local_node_of(order, alpha);
            EDN_ASSERT(local >= 0, "surface map: no cell node at a face lattice point");
            map.face_nodes[f * static_cast<std::size_t>(k_count) + static_cast<std::size_t>(k)] =
                cell_nodes[static_cast<std::size_t>(cell) * static_cast<std::size_t>(per_cell) +
                           static_cast<std::size_t>(local)];
        }
        for (int q = 0; q < q_count; ++q) {
            int a = 0, b = 0;
            face_lattice(n, q, a, b);
            Index r = -1;
            if (a == 0 && b == 0)
                r = tri[0];
            else if (a == n)
                r = tri[1];
            else if (b == n)
                r = tri[2];
            else if (b == 0)
                r = edge_vertex(tri[0], tri[1], a);
            else if (a == 0)
                r = edge_vertex(tri[0], tri[2], b);
            else if (a + b == n)
                r = edge_vertex(tri[1], tri[2], b);
            else
                r = next++;
            vertex_of[f * static_cast<std::size_t>(q_count) + static_cast<std::size_t>(q)] = r;
        }
    }
    // Samples by render vertex (a counting sort keeps them in face order).
    map.sample_offsets.assign(static_cast<std::size_t>(next) + 1, 0);
    for (Index r : vertex_of) ++map.sample_offsets[static_cast<std::size_t>(r) + 1];
    for (std::size_t r = 0; r < static_cast<std::size_t>(next); ++r)
        map.sample_offsets[r + 1] += map.sample_offsets[r];
    map.samples.resize(vertex_of.size());
    std::vector<Index> fill(map.sample_offsets.begin(), map.sample_offsets.end() - 1);
    for (std::size_t s = 0; s < vertex_of.size(); ++s)
        map.samples[static_cast<std::size_t>(fill[static_cast<std::size_t>(vertex_of[s])]++)] =
            static_cast<Index>(s);
    // n^2 triangles per face in the face's orientation: (a,b), (a+1,b), (a,b+1) and the
    // downward (a+1,b), (a+1,b+1), (a,b+1).
    auto point = [n](int a, int b) { return b * (n + 1) - b * (b - 1) / 2 + a; };
    map.triangles.reserve(num_faces * static_cast<std::size_t>(n * n));
    for (std::size_t f = 0; f < num_faces; ++f) {
        const Index* ids = vertex_of.data() + f * static_cast<std::size_t>(q_count);
        for (int b = 0; b < n; ++b) {
            for (int a = 0; a + b < n; ++a) {
                map.triangles.push_back(
                    {ids[point(a, b)], ids[point(a + 1, b)], ids[point(a, b + 1)]});
                if (a + b < n - 1)
                    map.triangles.push_back(
                        {ids[point(a + 1, b)], ids[point(a + 1, b + 1)], ids[point(a, b + 1)]});
            }
        }
    }
    return map;
}

void evaluate_surface_map(const SurfaceMap& map, const double* x, std::vector<float>& vertices) {
    const SurfaceMapView view = map.view();
    vertices.resize(static_cast<std::size_t>(view.num_vertices) * 7);
    for (int r = 0; r < view.num_vertices; ++r) {
        float* out = vertices.data() + static_cast<std::size_t>(r) * 7;
        float normal[3];
        surface_map_vertex(view, x, r, out, normal);
        const float length =
            std::sqrt(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]);
        const float scale = length > 0.0f ? 1.0f / length : 0.0f;
        for (int d = 0; d < 3; ++d) out[3 + d] = normal[d] * scale;
        out[6] = 0.0f;
    }
}

} // namespace edn
