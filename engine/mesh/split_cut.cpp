#include "mesh/split_cut.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "mesh/refine.hpp"
#include "mesh/topology.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace edn {
namespace {

/// Rounds of step 5 (quality repair) before the result is taken as it is.
constexpr int kMaxRepairRounds = 64;

/// Local edge (index into kCellEdgeVertices) joining local vertices i and j.
int local_edge(int i, int j) {
    static constexpr int table[4][4] = {{-1, 0, 1, 2}, {0, -1, 3, 4}, {1, 3, -1, 5}, {2, 4, 5, -1}};
    return table[i][j];
}

Vec3 lerp(const Vec3& a, const Vec3& b, double t) {
    return {a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2])};
}

double squared_distance(const Vec3& a, const Vec3& b) {
    double s = 0;
    for (int d = 0; d < 3; ++d) s += (a[d] - b[d]) * (a[d] - b[d]);
    return s;
}

/// The children of one old cell (global vertex ids) and their sides (+1, -1; 0: a front child,
/// never separated). At most 6 (the 2-2 case: two prisms of three).
struct CellSplit {
    std::array<Cell, 6> cells{};
    std::array<std::int8_t, 6> side{};
    int count = 0;

    void tet(Index a, Index b, Index c, Index d, int s) {
        EDN_ASSERT(count < 6, "split_cut: more than 6 children");
        cells[count] = {a, b, c, d};
        side[count] = static_cast<std::int8_t>(s);
        ++count;
    }

    /// Pyramid with apex `apex` over the quad q (cyclic): the diagonal through the quad's lowest
    /// global index, so the neighbour across the quad's face splits it the same way.
    void pyramid(Index apex, const std::array<Index, 4>& q, int s) {
        const int k = static_cast<int>(std::min_element(q.begin(), q.end()) - q.begin());
        tet(apex, q[k], q[(k + 1) % 4], q[(k + 2) % 4], s);
        tet(apex, q[k], q[(k + 2) % 4], q[(k + 3) % 4], s);
    }

    /// Prism with triangles (v0, v1, v2), (v3, v4, v5) and lateral edges vi - v(i+3), split into
    /// three tets whose quad diagonals each pass through the quad's lowest global index
    /// (Dompierre et al., "How to subdivide pyramids, prisms and hexahedra into tetrahedra").
    void prism(std::array<Index, 6> v, int s) {
        int m = static_cast<int>(std::min_element(v.begin(), v.end()) - v.begin());
        if (m >= 3) {
            std::rotate(v.begin(), v.begin() + 3, v.end()); // swap the two triangles
            m -= 3;
        }
        const std::array<Index, 6> w = {v[m],     v[(m + 1) % 3],     v[(m + 2) % 3],
                                        v[3 + m], v[3 + (m + 1) % 3], v[3 + (m + 2) % 3]};
        tet(w[0], w[4], w[5], w[3], s);
        if (std::min(w[1], w[5]) < std::min(w[2], w[4])) {
            tet(w[0], w[1], w[2], w[5], s);
            tet(w[0], w[1], w[5], w[4], s);
        } else {
            tet(w[0], w[1], w[2], w[4], s);
            tet(w[0], w[4], w[2], w[5], s);
        }
    }
};

/// A cell about to be split: global ids of its corners and of the points on its cut edges.
struct LocalCell {
    std::array<Index, 4> v{};     ///< corners
    std::array<Index, 6> point{}; ///< point on local edge e, -1 when e is not cut
    std::array<int, 4> sign{};    ///< side of each corner: +1, -1, 0 (on the plane)

    Index p(int i, int j) const { return point[local_edge(i, j)]; }
};

/// Inside cell: split along the zero set of the corner signs (file comment, step 4).
void split_inside(const LocalCell& c, CellSplit& out) {
    std::array<int, 4> plus{}, minus{}, zero{};
    int np = 0, nm = 0, nz = 0;
    for (int i = 0; i < 4; ++i) {
        if (c.sign[i] > 0)
            plus[np++] = i;
        else if (c.sign[i] < 0)
            minus[nm++] = i;
        else
            zero[nz++] = i;
    }
    if (np == 1 && nm == 3) {
        const int l = plus[0];
        const auto& o = minus;
        out.tet(c.v[l], c.p(l, o[0]), c.p(l, o[1]), c.p(l, o[2]), +1);
        out.prism({c.v[o[0]], c.v[o[1]], c.v[o[2]], c.p(l, o[0]), c.p(l, o[1]), c.p(l, o[2])}, -1);
    } else if (np == 3 && nm == 1) {
        const int l = minus[0];
        const auto& o = plus;
        out.tet(c.v[l], c.p(l, o[0]), c.p(l, o[1]), c.p(l, o[2]), -1);
        out.prism({c.v[o[0]], c.v[o[1]], c.v[o[2]], c.p(l, o[0]), c.p(l, o[1]), c.p(l, o[2])}, +1);
    } else if (np == 2 && nm == 2) {
        const int a = plus[0], b = plus[1], cc = minus[0], d = minus[1];
        out.prism({c.v[a], c.p(a, cc), c.p(a, d), c.v[b], c.p(b, cc), c.p(b, d)}, +1);
        out.prism({c.v[cc], c.p(a, cc), c.p(b, cc), c.v[d], c.p(a, d), c.p(b, d)}, -1);
    } else if (nz == 1 && (np == 1 || nm == 1)) {
        const bool lone_plus = np == 1;
        const int l = lone_plus ? plus[0] : minus[0];
        const std::array<int, 4>& o = lone_plus ? minus : plus;
        const int s = lone_plus ? +1 : -1;
        const Index z = c.v[zero[0]];
        out.tet(c.v[l], z, c.p(l, o[0]), c.p(l, o[1]), s);
        out.pyramid(z, {c.p(l, o[0]), c.v[o[0]], c.v[o[1]], c.p(l, o[1])}, -s);
    } else if (nz == 2 && np == 1 && nm == 1) {
        const Index q = c.p(plus[0], minus[0]);
        out.tet(c.v[plus[0]], q, c.v[zero[0]], c.v[zero[1]], +1);
        out.tet(c.v[minus[0]], q, c.v[zero[0]], c.v[zero[1]], -1);
    } else {
        EDN_ASSERT(false, "split_cut: inside cell without a crossing");
    }
}

/// A corner of the cell that no cut edge touches, or -1.
int cone_vertex(const std::array<Index, 6>& point) {
    for (int i = 0; i < 4; ++i) {
        bool touched = false;
        for (int j = 0; j < 4; ++j)
            if (j != i && point[local_edge(i, j)] >= 0) touched = true;
        if (!touched) return i;
    }
    return -1;
}

/// The two opposite cut edges (e, 5 - e) when exactly those are cut, else -1.
int opposite_pair(const std::array<Index, 6>& point) {
    int cut = 0;
    for (Index p : point) cut += p >= 0;
    if (cut != 2) return -1;
    for (int e = 0; e < 3; ++e)
        if (point[e] >= 0 && point[5 - e] >= 0) return e;
    return -1;
}

/// Whether a front cell with these cut edges has a conforming split of its own.
bool front_splittable(const std::array<Index, 6>& point) {
    return cone_vertex(point) >= 0 || opposite_pair(point) >= 0;
}

/// Front cell: split without a side (file comment, step 3). front_splittable must hold.
void split_front(const LocalCell& c, CellSplit& out) {
    const int apex = cone_vertex(c.point);
    if (apex < 0) {
        const int e = opposite_pair(c.point);
        const Index p = c.point[e], q = c.point[5 - e];
        for (int f = 0; f < 6; ++f) {
            if (f == e || f == 5 - e) continue;
            const auto [i, j] = kCellEdgeVertices[f];
            out.tet(p, q, c.v[i], c.v[j], 0);
        }
        return;
    }
    const Index a = c.v[apex];
    const auto& f = kCellFaceVertices[apex];
    int points = 0, x = -1; // x: the face corner shared by the two cut edges
    for (int k = 0; k < 3; ++k) {
        const int i = f[k], j = f[(k + 1) % 3];
        if (c.p(i, j) >= 0) ++points;
    }
    if (points == 0) {
        out.tet(a, c.v[f[0]], c.v[f[1]], c.v[f[2]], 0);
    } else if (points == 1) {
        for (int k = 0; k < 3; ++k) {
            const int i = f[k], j = f[(k + 1) % 3], w = f[(k + 2) % 3];
            const Index p = c.p(i, j);
            if (p < 0) continue;
            out.tet(a, c.v[i], p, c.v[w], 0);
            out.tet(a, p, c.v[j], c.v[w], 0);
        }
    } else {
        EDN_ASSERT(points == 2, "split_cut: three crossed edges on one face");
        for (int k = 0; k < 3; ++k)
            if (c.p(f[k], f[(k + 1) % 3]) >= 0 && c.p(f[k], f[(k + 2) % 3]) >= 0) x = f[k];
        int y = -1, w = -1;
        for (int k = 0; k < 3; ++k)
            if (f[k] != x) (y < 0 ? y : w) = f[k];
        const Index pxy = c.p(x, y), pxw = c.p(x, w);
        out.tet(a, c.v[x], pxy, pxw, 0);
        out.pyramid(a, {pxy, c.v[y], c.v[w], pxw}, 0);
    }
}

double min_volume(const TetMesh& mesh) {
    std::vector<double> volumes(mesh.cells.size());
    parallel_for(0, mesh.num_cells(), [&](std::int64_t t) {
        const Cell& c = mesh.cells[t];
        volumes[t] = signed_volume(mesh.positions[c[0]], mesh.positions[c[1]], mesh.positions[c[2]],
                                   mesh.positions[c[3]]);
    });
    return volumes.empty() ? 0.0 : *std::min_element(volumes.begin(), volumes.end());
}

/// The split of one round (steps 3-5) for the current snaps.
struct SplitRound {
    std::vector<Vec3> positions;   ///< rest positions: old vertices, then edge points
    std::vector<Vec3> classify;    ///< classify positions of the same vertices
    std::vector<CellSplit> splits; ///< per candidate cell; count 0: not split
    std::vector<std::int8_t> sign; ///< per old vertex
    std::vector<Index> edge_point; ///< per old edge: its point's vertex id, or -1
    std::vector<std::uint8_t> bad; ///< per candidate cell: a child below the bound
    Index new_vertices = 0;
};

/// Moves vertex v (signed distance `d` to the blade with unit normal n) onto the blade, in
/// `rest`, when that keeps the mesh and its boundary: an interior vertex moves along n; a
/// boundary vertex whose boundary faces lie in one plane moves within it, one on a crease of two
/// planes along the crease; a corner does not move. Refused (false, nothing changed) when the
/// direction is nearly parallel to the blade or a cell of the vertex's star would fall below
/// the dihedral bound or turn over. Interior and in-plane moves keep the total volume.
bool try_move(const TetMesh& mesh, const Topology& topology, std::vector<Vec3>& rest, Index v,
              const Vec3& n, double d, double bound_deg) {
    const auto star = topology.vertex_cells.row(v);
    std::vector<Vec3> normals;
    for (Index c : star)
        for (int i = 0; i < 4; ++i) {
            if (mesh.cells[c][i] == v) continue; // the face opposite v does not hold v
            if (topology.face_cells.row_size(topology.cell_faces[c][i]) != 1) continue;
            const auto& l = kCellFaceVertices[i];
            const Vec3& a = mesh.positions[mesh.cells[c][l[0]]];
            const Vec3& b = mesh.positions[mesh.cells[c][l[1]]];
            const Vec3& e = mesh.positions[mesh.cells[c][l[2]]];
            const Vec3 u = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
            const Vec3 w = {e[0] - a[0], e[1] - a[1], e[2] - a[2]};
            Vec3 m = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                      u[0] * w[1] - u[1] * w[0]};
            const double length = std::sqrt(squared_distance(m, {0, 0, 0}));
            for (double& x : m) x /= length;
            bool known = false;
            // Same plane only to rounding: a boundary that is merely nearly flat (an earlier
            // cut with unmoved snaps) must not take the vertex along a noisy direction.
            for (const Vec3& k : normals) known = known || squared_distance(k, m) < 1e-24;
            if (!known) normals.push_back(m);
        }
    Vec3 dir = n;
    if (normals.size() == 1) {
        const Vec3& b = normals[0];
        const double nb = n[0] * b[0] + n[1] * b[1] + n[2] * b[2];
        for (int k = 0; k < 3; ++k) dir[k] = n[k] - nb * b[k];
    } else if (normals.size() == 2) {
        const Vec3& a = normals[0];
        const Vec3& b = normals[1];
        dir = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
        if (squared_distance(dir, {0, 0, 0}) < 1e-2) return false; // no clear crease
    } else if (normals.size() > 2) {
        return false;
    }
    const double length = std::sqrt(squared_distance(dir, {0, 0, 0}));
    if (!(length > 0)) return false;
    const double along = (n[0] * dir[0] + n[1] * dir[1] + n[2] * dir[2]) / length;
    if (std::abs(along) < 0.5) return false; // nearly parallel: the move would be long
    const Vec3 old = rest[v];
    const double s = -d / (along * length);
    for (int k = 0; k < 3; ++k) rest[v][k] = old[k] + s * dir[k];
    for (Index c : star) {
        const Cell& cell = mesh.cells[c];
        if (signed_volume(rest[cell[0]], rest[cell[1]], rest[cell[2]], rest[cell[3]]) <= 0 ||
            cell_min_dihedral_deg(rest, cell) < bound_deg) {
            rest[v] = old;
            return false;
        }
    }
    return true;
}

} // namespace

MeshQuality mesh_quality(const TetMesh& mesh) {
    return {min_dihedral_angle_deg(mesh), min_volume(mesh)};
}

SplitCutResult split_cut(const TetMesh& mesh, const CutPlane& plane,
                         std::span<const Vec3> classify_positions, const SplitCutOptions& options) {
    const CheckedBlade blade = check_blade(mesh, plane, classify_positions);
    EDN_VERIFY(options.snap_fraction >= 0 && options.snap_fraction < 0.5, ErrorCode::Usage,
               "cut: snap fraction must be in [0, 0.5), got " << options.snap_fraction);
    const std::span<const Vec3> x = blade.positions;

    const Topology topology = build_topology(mesh);
    const Index num_vertices = mesh.num_vertices();
    const Index num_cells = mesh.num_cells();
    const Index num_edges = topology.num_edges();
    const Vec3& unit = blade.unit_normal;
    const BladeExtent blade_extent(plane); // radius and outline
    const bool finite_radius = blade_extent.bounded();

    // 1. Signed distances; exact zeros below 1e-14 of the extent.
    Vec3 lo{}, hi{};
    for (int d = 0; d < 3; ++d) {
        lo[d] = std::numeric_limits<double>::infinity();
        hi[d] = -lo[d];
    }
    for (const Vec3& p : x)
        for (int d = 0; d < 3; ++d) lo[d] = std::min(lo[d], p[d]), hi[d] = std::max(hi[d], p[d]);
    const double extent = num_vertices > 0 ? std::sqrt(squared_distance(lo, hi)) : 0.0;
    std::vector<double> dist(num_vertices);
    parallel_for(0, num_vertices, [&](std::int64_t v) {
        const double s = blade_extent.signed_distance(x[v]); // bent beyond a bend
        dist[v] = std::abs(s) <= 1e-14 * extent ? 0.0 : s;
    });

    SplitCutResult result;
    result.before = mesh_quality(mesh);
    result.dihedral_bound_deg = options.min_dihedral_deg > 0
                                    ? options.min_dihedral_deg
                                    : std::min(2.0, 0.5 * result.before.min_dihedral_deg);

    // Working positions: vertices moved onto the blade (rest == classify only) change both.
    std::vector<Vec3> rest = mesh.positions;
    std::vector<Vec3> where(x.begin(), x.end());
    // Moves follow the flat blade's normal: none with a bend.
    const bool may_move = options.move_snapped && classify_positions.empty() && !plane.bend;
    std::vector<std::uint8_t> snapped(num_vertices, 0), moved(num_vertices, 0);
    auto snap_vertex = [&](Index v) {
        if (snapped[v]) return;
        snapped[v] = 1;
        if (may_move && dist[v] != 0 &&
            try_move(mesh, topology, rest, v, unit, dist[v], result.dihedral_bound_deg)) {
            where[v] = rest[v];
            dist[v] = 0;
            moved[v] = 1;
        }
    };
    auto sign_of = [&](Index v) -> int {
        if (snapped[v] || dist[v] == 0) return 0;
        return dist[v] > 0 ? 1 : -1;
    };
    auto crossed = [&](Index e) {
        const Edge& edge = topology.edges[e];
        return sign_of(edge[0]) * sign_of(edge[1]) < 0;
    };
    auto crossing = [&](Index e) { // t from edge[0]
        const Edge& edge = topology.edges[e];
        return dist[edge[0]] / (dist[edge[0]] - dist[edge[1]]);
    };

    // 2. Snapping, all at once.
    {
        std::vector<std::uint8_t> snap(num_vertices, 0);
        for (Index e = 0; e < num_edges; ++e) {
            if (!crossed(e)) continue;
            const double t = crossing(e);
            if (t < options.snap_fraction) snap[topology.edges[e][0]] = 1;
            if (t > 1 - options.snap_fraction) snap[topology.edges[e][1]] = 1;
        }
        for (Index v = 0; v < num_vertices; ++v)
            if (snap[v]) snap_vertex(v);
    }

    // Snapping only removes crossings: the cells crossed now are the only ones a round splits.
    std::vector<Index> candidates;
    for (Index t = 0; t < num_cells; ++t)
        for (Index edge : topology.cell_edges[t])
            if (crossed(edge)) {
                candidates.push_back(t);
                break;
            }
    const auto num_candidates = static_cast<std::int64_t>(candidates.size());

    SplitRound round;
    for (int repair = 0;; ++repair) {
        round = SplitRound{};
        round.sign.resize(num_vertices);
        for (Index v = 0; v < num_vertices; ++v)
            round.sign[v] = static_cast<std::int8_t>(sign_of(v));
        std::vector<std::uint8_t> is_crossed(num_edges);
        parallel_for(0, num_edges, [&](std::int64_t e) { is_crossed[e] = crossed(e) ? 1 : 0; });

        // 3. Inside cells: crossed, with the cut polygon within the radius.
        auto within = [&](const Vec3& p) { return blade_extent.holds(p); };
        std::vector<std::uint8_t> inside(num_candidates, 0);
        parallel_for(0, num_candidates, [&](std::int64_t i) {
            const Index t = candidates[i];
            bool any = false, all_within = true;
            for (int e = 0; e < 6; ++e) {
                const Index edge = topology.cell_edges[t][e];
                if (!is_crossed[edge]) continue;
                any = true;
                const Edge& ends = topology.edges[edge];
                all_within =
                    all_within && within(lerp(where[ends[0]], where[ends[1]], crossing(edge)));
            }
            if (!any) return;
            for (Index v : mesh.cells[t])
                if (round.sign[v] == 0) all_within = all_within && within(where[v]);
            inside[i] = all_within ? 1 : 0;
        });
        std::vector<std::uint8_t> cut(num_edges, 0);
        auto mark_cut = [&](Index t) {
            for (Index edge : topology.cell_edges[t])
                if (is_crossed[edge]) cut[edge] = 1;
        };
        for (std::int64_t i = 0; i < num_candidates; ++i)
            if (inside[i]) mark_cut(candidates[i]);
        auto local_points = [&](Index t) {
            std::array<Index, 6> mask{};
            for (int e = 0; e < 6; ++e) mask[e] = cut[topology.cell_edges[t][e]] ? 0 : -1;
            return mask;
        };
        // Front closure: front cells without a conforming split of their own become inside.
        for (bool changed = finite_radius; changed;) {
            changed = false;
            for (std::int64_t i = 0; i < num_candidates; ++i) {
                if (inside[i]) continue;
                const std::array<Index, 6> mask = local_points(candidates[i]);
                if (std::all_of(mask.begin(), mask.end(), [](Index p) { return p < 0; })) continue;
                if (front_splittable(mask)) continue;
                inside[i] = 1;
                mark_cut(candidates[i]);
                changed = true;
            }
        }

        // 4. Edge points and the children.
        round.edge_point.assign(num_edges, -1);
        round.positions = rest;
        round.classify = where;
        for (Index e = 0; e < num_edges; ++e) {
            if (!cut[e]) continue;
            const Edge& ends = topology.edges[e];
            const double t = crossing(e);
            round.edge_point[e] = static_cast<Index>(round.positions.size());
            round.positions.push_back(lerp(rest[ends[0]], rest[ends[1]], t));
            round.classify.push_back(lerp(where[ends[0]], where[ends[1]], t));
        }
        round.new_vertices = static_cast<Index>(round.positions.size()) - num_vertices;
        EDN_VERIFY(round.positions.size() <=
                       static_cast<std::size_t>(std::numeric_limits<Index>::max()),
                   ErrorCode::OutOfMemory, "cut: vertex count exceeds 32-bit indices");
        round.splits.assign(num_candidates, CellSplit{});
        round.bad.assign(num_candidates, 0);
        parallel_for(0, num_candidates, [&](std::int64_t i) {
            const Index t = candidates[i];
            LocalCell c;
            bool any = false;
            for (int i = 0; i < 4; ++i) {
                c.v[i] = mesh.cells[t][i];
                c.sign[i] = round.sign[c.v[i]];
            }
            for (int e = 0; e < 6; ++e) {
                c.point[e] = round.edge_point[topology.cell_edges[t][e]];
                any = any || c.point[e] >= 0;
            }
            if (!any) return;
            CellSplit& split = round.splits[i];
            if (inside[i])
                split_inside(c, split);
            else
                split_front(c, split);
            for (int k = 0; k < split.count; ++k) {
                Cell& child = split.cells[k];
                const auto& p = round.positions;
                if (signed_volume(p[child[0]], p[child[1]], p[child[2]], p[child[3]]) < 0)
                    std::swap(child[2], child[3]);
                if (cell_min_dihedral_deg(p, child) < result.dihedral_bound_deg) round.bad[i] = 1;
            }
        });

        // 5. Quality repair: snap the vertex of each bad parent closest to the plane.
        if (repair == kMaxRepairRounds) break;
        std::vector<Index> to_snap;
        for (std::int64_t i = 0; i < num_candidates; ++i) {
            if (!round.bad[i]) continue;
            const Index t = candidates[i];
            Index best = -1;
            double best_relative = std::numeric_limits<double>::infinity();
            for (int e = 0; e < 6; ++e) {
                const Index edge = topology.cell_edges[t][e];
                if (round.edge_point[edge] < 0) continue;
                const Edge& ends = topology.edges[edge];
                const double t0 = crossing(edge);
                const double rel[2] = {t0, 1 - t0};
                for (int k = 0; k < 2; ++k)
                    if (rel[k] < best_relative || (rel[k] == best_relative && ends[k] < best))
                        best = ends[k], best_relative = rel[k];
            }
            if (best >= 0) to_snap.push_back(best);
        }
        if (to_snap.empty()) break;
        std::sort(to_snap.begin(), to_snap.end());
        to_snap.erase(std::unique(to_snap.begin(), to_snap.end()), to_snap.end());
        for (Index v : to_snap) snap_vertex(v);
    }

    // The split mesh: each old cell's children in its place (old order kept).
    TetMesh split;
    split.positions = std::move(round.positions);
    std::vector<std::int8_t> side;
    split.cells.reserve(num_cells);
    result.cell_parent.reserve(num_cells);
    static const CellSplit unsplit{};
    std::int64_t next = 0; // candidates and cells both ascend
    for (Index t = 0; t < num_cells; ++t) {
        const bool candidate = next < num_candidates && candidates[next] == t;
        const CellSplit& s = candidate ? round.splits[next++] : unsplit;
        if (s.count == 0) {
            int has_plus = 0, has_minus = 0;
            for (Index v : mesh.cells[t]) {
                has_plus |= round.sign[v] > 0;
                has_minus |= round.sign[v] < 0;
            }
            split.cells.push_back(mesh.cells[t]);
            side.push_back(static_cast<std::int8_t>(has_plus == has_minus ? 0 : has_plus ? 1 : -1));
            result.cell_parent.push_back(t);
            continue;
        }
        ++result.split_cells;
        for (int k = 0; k < s.count; ++k) {
            split.cells.push_back(s.cells[k]);
            side.push_back(s.side[k]);
            result.cell_parent.push_back(t);
        }
    }
    EDN_VERIFY(split.cells.size() <= static_cast<std::size_t>(std::numeric_limits<Index>::max()),
               ErrorCode::OutOfMemory, "cut: cell count exceeds 32-bit indices");

    // 6. Separation along the faces in the plane.
    const Topology split_topology = build_topology(split);
    const Index num_split_vertices = split.num_vertices();
    std::vector<std::uint8_t> opening(num_split_vertices, 0); // on the plane and within R
    parallel_for(0, num_split_vertices, [&](std::int64_t v) {
        const bool on_plane = v >= num_vertices || round.sign[v] == 0;
        const bool within = blade_extent.holds(round.classify[v]);
        opening[v] = on_plane && within ? 1 : 0;
    });
    std::vector<std::uint8_t> open(split_topology.num_faces(), 0);
    parallel_for(0, split_topology.num_faces(), [&](std::int64_t f) {
        const auto pair = split_topology.face_cells.row(static_cast<Index>(f));
        if (pair.size() != 2 || side[pair[0]] * side[pair[1]] >= 0) return;
        const Face& face = split_topology.faces[f];
        open[f] = opening[face[0]] && opening[face[1]] && opening[face[2]] ? 1 : 0;
    });
    CutResult separated = separate_faces(split, split_topology, open);

    result.mesh = std::move(separated.mesh);
    result.cut_faces = separated.cut_faces;
    result.duplicated_vertices = separated.duplicated_vertices;
    result.new_vertices = round.new_vertices;
    result.cells_before = num_cells;
    result.cells_after = result.mesh.num_cells();
    for (Index v = 0; v < num_vertices; ++v) {
        result.moved_vertices += moved[v];
        if (!snapped[v] || dist[v] == 0) continue;
        ++result.snapped_vertices;
        result.max_snap_distance = std::max(result.max_snap_distance, std::abs(dist[v]));
    }
    result.components = count_components(result.mesh);
    result.after = mesh_quality(result.mesh);
    return result;
}

} // namespace edn
