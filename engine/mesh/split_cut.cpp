#include "mesh/split_cut.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "mesh/cut_local.hpp"
#include "mesh/refine.hpp"
#include "mesh/topology.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>

namespace edn {
namespace {

/// Milliseconds since the last lap (or construction), for SplitCutTimes.
class Lap {
public:
    double operator()() {
        const auto now = std::chrono::steady_clock::now();
        const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
        last_ = now;
        return ms;
    }

private:
    std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

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

/// Positions of the four vertices of `cell`: old vertices from `rest`, edge points (ids from
/// `num_old`) from `points`.
std::array<Vec3, 4> corners(const Cell& cell, std::span<const Vec3> rest, Index num_old,
                            std::span<const Vec3> points) {
    std::array<Vec3, 4> p;
    for (int i = 0; i < 4; ++i)
        p[i] = cell[i] < num_old ? rest[cell[i]] : points[cell[i] - num_old];
    return p;
}

double volume_of(const std::array<Vec3, 4>& p) {
    return signed_volume(p[0], p[1], p[2], p[3]);
}

/// The split of one round (steps 3-5) for the current snaps, over the candidate cells and their
/// edges only (local edge ids: the candidates' edges in the global edge order).
struct SplitRound {
    std::vector<Vec3> points;         ///< rest positions of the edge points (ids #V + k)
    std::vector<Vec3> point_classify; ///< classify positions of the same points
    std::vector<CellSplit> splits;    ///< per candidate cell; count 0: not split
    std::vector<Index> edge_point;    ///< per local edge: its point's vertex id, or -1
    std::vector<std::uint8_t> bad;    ///< per candidate cell: a child below the bound
    std::vector<double> worst_cos;    ///< per candidate: largest dihedral cosine of its children
    std::vector<double> least_volume; ///< per candidate: smallest volume of its children
};

} // namespace

MeshQuality mesh_quality(const TetMesh& mesh) {
    return cut_local::cell_qualities(mesh).total;
}

SplitCutResult split_cut(const TetMesh& mesh, const CutPlane& plane,
                         std::span<const Vec3> classify_positions, const SplitCutOptions& options) {
    const CheckedBlade blade = check_blade(mesh, plane, classify_positions);
    EDN_VERIFY(options.snap_fraction >= 0 && options.snap_fraction < 0.5, ErrorCode::Usage,
               "cut: snap fraction must be in [0, 0.5), got " << options.snap_fraction);
    const std::span<const Vec3> x = blade.positions;
    Lap lap;
    const auto start = std::chrono::steady_clock::now();
    SplitCutTimes times;

    const Index num_vertices = mesh.num_vertices();
    const Index num_cells = mesh.num_cells();
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

    // The cells the blade crosses (a vertex strictly on each side): the only ones that can split.
    // The stars of their vertices and of the vertices on the blade: all that snapping, the
    // quality checks of moves and the separation look at (one pass over the cells).
    std::vector<std::uint8_t> flag(std::max(num_vertices, num_cells), 0);
    parallel_for(0, num_cells, [&](std::int64_t t) {
        bool plus = false, minus = false;
        for (Index v : mesh.cells[t]) plus = plus || dist[v] > 0, minus = minus || dist[v] < 0;
        flag[t] = plus && minus ? 1 : 0;
    });
    std::vector<Index> crossed_cells;
    for (Index t = 0; t < num_cells; ++t)
        if (flag[t]) crossed_cells.push_back(t);
    std::fill(flag.begin(), flag.end(), 0);
    for (Index t : crossed_cells)
        for (Index v : mesh.cells[t]) flag[v] = 1;
    std::vector<Index> star_vertices;
    for (Index v = 0; v < num_vertices; ++v)
        if (flag[v] || dist[v] == 0) star_vertices.push_back(v);
    const cut_local::Stars stars = cut_local::find_stars(mesh.cells, num_vertices, star_vertices);
    auto star_of = [&](Index v) {
        const auto it = std::lower_bound(stars.vertices.begin(), stars.vertices.end(), v);
        EDN_ASSERT(it != stars.vertices.end() && *it == v, "split_cut: no star for vertex " << v);
        return stars.cells.row(static_cast<Index>(it - stars.vertices.begin()));
    };
    times.classify = lap();

    SplitCutResult result;
    cut_local::CellQualities quality = cut_local::cell_qualities(mesh);
    result.before = quality.total;
    result.dihedral_bound_deg = options.min_dihedral_deg > 0
                                    ? options.min_dihedral_deg
                                    : std::min(2.0, 0.5 * result.before.min_dihedral_deg);
    times.quality_before = lap();

    // Working positions: vertices moved onto the blade change the rest positions (which become
    // the result's: edge points and copies are appended) and, on a deformed blade, the deformed
    // ones (moved_x).
    std::vector<Vec3> rest = mesh.positions;
    // Moves follow the flat blade's normal: none with a bend.
    const bool move_rest = options.move_snapped && classify_positions.empty() && !plane.bend;
    const bool move_deformed = options.move_snapped && !classify_positions.empty() && !plane.bend;
    std::vector<Vec3> moved_x;
    if (move_deformed) moved_x.assign(x.begin(), x.end());
    auto where = [&](Index v) -> const Vec3& {
        return move_rest ? rest[v] : move_deformed ? moved_x[v] : x[v];
    };
    std::vector<std::uint8_t> snapped(num_vertices, 0);
    std::vector<Index> snapped_list, moved_list;
    auto snap_vertex = [&](Index v) {
        if (snapped[v]) return;
        snapped[v] = 1;
        snapped_list.push_back(v);
        if (dist[v] == 0) return;
        const double bound = result.dihedral_bound_deg;
        const bool moved =
            move_rest       ? cut_local::try_move(mesh, star_of(v), rest, v, unit, dist[v], bound)
            : move_deformed ? cut_local::try_move_deformed(mesh, x, star_of(v), rest, moved_x, v,
                                                           unit, dist[v], bound)
                            : false;
        if (moved) {
            dist[v] = 0;
            moved_list.push_back(v);
        }
    };
    auto sign_of = [&](Index v) -> int {
        if (snapped[v] || dist[v] == 0) return 0;
        return dist[v] > 0 ? 1 : -1;
    };
    auto crossed = [&](Index a, Index b) { return sign_of(a) * sign_of(b) < 0; };
    auto crossing = [&](Index a, Index b) { return dist[a] / (dist[a] - dist[b]); }; // t from a
    auto cell_edge = [&](Index t, int e) { // (lower, higher) vertex of local edge e of old cell t
        const Index a = mesh.cells[t][kCellEdgeVertices[e][0]];
        const Index b = mesh.cells[t][kCellEdgeVertices[e][1]];
        return a < b ? std::array<Index, 2>{a, b} : std::array<Index, 2>{b, a};
    };

    // 2. Snapping, all at once, in vertex order.
    {
        std::vector<Index> to_snap;
        for (Index t : crossed_cells)
            for (int e = 0; e < 6; ++e) {
                const auto [a, b] = cell_edge(t, e);
                if (!crossed(a, b)) continue;
                const double t0 = crossing(a, b);
                if (t0 < options.snap_fraction) to_snap.push_back(a);
                if (t0 > 1 - options.snap_fraction) to_snap.push_back(b);
            }
        std::sort(to_snap.begin(), to_snap.end());
        to_snap.erase(std::unique(to_snap.begin(), to_snap.end()), to_snap.end());
        for (Index v : to_snap) snap_vertex(v);
    }

    // Snapping only removes crossings: the cells crossed now are the only ones a round splits.
    std::vector<Index> candidates;
    for (Index t : crossed_cells) {
        bool plus = false, minus = false;
        for (Index v : mesh.cells[t])
            plus = plus || sign_of(v) > 0, minus = minus || sign_of(v) < 0;
        if (plus && minus) candidates.push_back(t);
    }
    const auto num_candidates = static_cast<std::int64_t>(candidates.size());
    // Their edges, numbered in the global edge order (lexicographic (lower, higher)).
    std::vector<std::array<Index, 2>> edges;
    edges.reserve(6 * candidates.size());
    for (Index t : candidates)
        for (int e = 0; e < 6; ++e) edges.push_back(cell_edge(t, e));
    std::sort(edges.begin(), edges.end());
    edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
    const auto num_edges = static_cast<std::int64_t>(edges.size());
    std::vector<std::array<Index, 6>> candidate_edges(num_candidates);
    parallel_for(0, num_candidates, [&](std::int64_t i) {
        for (int e = 0; e < 6; ++e)
            candidate_edges[i][e] = static_cast<Index>(
                std::lower_bound(edges.begin(), edges.end(), cell_edge(candidates[i], e)) -
                edges.begin());
    });

    SplitRound round;
    std::vector<std::uint8_t> is_crossed(num_edges), cut(num_edges), inside(num_candidates);
    for (int repair = 0;; ++repair) {
        for (std::int64_t e = 0; e < num_edges; ++e)
            is_crossed[e] = crossed(edges[e][0], edges[e][1]) ? 1 : 0;

        // 3. Inside cells: crossed, with the cut polygon within the radius.
        auto within = [&](const Vec3& p) { return blade_extent.holds(p); };
        std::fill(inside.begin(), inside.end(), 0);
        parallel_for(0, num_candidates, [&](std::int64_t i) {
            const Index t = candidates[i];
            bool any = false, all_within = true;
            for (int e = 0; e < 6; ++e) {
                const Index edge = candidate_edges[i][e];
                if (!is_crossed[edge]) continue;
                any = true;
                const auto [a, b] = edges[edge];
                all_within = all_within && within(lerp(where(a), where(b), crossing(a, b)));
            }
            if (!any) return;
            for (Index v : mesh.cells[t])
                if (sign_of(v) == 0) all_within = all_within && within(where(v));
            inside[i] = all_within ? 1 : 0;
        });
        std::fill(cut.begin(), cut.end(), 0);
        auto mark_cut = [&](std::int64_t i) {
            for (Index edge : candidate_edges[i])
                if (is_crossed[edge]) cut[edge] = 1;
        };
        for (std::int64_t i = 0; i < num_candidates; ++i)
            if (inside[i]) mark_cut(i);
        auto local_points = [&](std::int64_t i) {
            std::array<Index, 6> mask{};
            for (int e = 0; e < 6; ++e) mask[e] = cut[candidate_edges[i][e]] ? 0 : -1;
            return mask;
        };
        // Front closure: front cells without a conforming split of their own become inside.
        for (bool changed = finite_radius; changed;) {
            changed = false;
            for (std::int64_t i = 0; i < num_candidates; ++i) {
                if (inside[i]) continue;
                const std::array<Index, 6> mask = local_points(i);
                if (std::all_of(mask.begin(), mask.end(), [](Index p) { return p < 0; })) continue;
                if (front_splittable(mask)) continue;
                inside[i] = 1;
                mark_cut(i);
                changed = true;
            }
        }

        // 4. Edge points (ids #V + rank of the edge) and the children.
        round.edge_point.assign(num_edges, -1);
        round.points.clear();
        round.point_classify.clear();
        for (std::int64_t e = 0; e < num_edges; ++e) {
            if (!cut[e]) continue;
            const auto [a, b] = edges[e];
            const double t = crossing(a, b);
            round.edge_point[e] = num_vertices + static_cast<Index>(round.points.size());
            round.points.push_back(lerp(rest[a], rest[b], t));
            round.point_classify.push_back(lerp(where(a), where(b), t));
        }
        EDN_VERIFY(static_cast<std::int64_t>(num_vertices) + round.points.size() <=
                       static_cast<std::size_t>(std::numeric_limits<Index>::max()),
                   ErrorCode::OutOfMemory, "cut: vertex count exceeds 32-bit indices");
        round.splits.assign(num_candidates, CellSplit{});
        round.bad.assign(num_candidates, 0);
        round.worst_cos.assign(num_candidates, -1.0);
        round.least_volume.assign(num_candidates, std::numeric_limits<double>::infinity());
        parallel_for(0, num_candidates, [&](std::int64_t i) {
            const Index t = candidates[i];
            LocalCell c;
            bool any = false;
            for (int k = 0; k < 4; ++k) {
                c.v[k] = mesh.cells[t][k];
                c.sign[k] = sign_of(c.v[k]);
            }
            for (int e = 0; e < 6; ++e) {
                c.point[e] = round.edge_point[candidate_edges[i][e]];
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
                std::array<Vec3, 4> p = corners(child, rest, num_vertices, round.points);
                if (volume_of(p) < 0) {
                    std::swap(child[2], child[3]);
                    std::swap(p[2], p[3]);
                }
                const double cos = cut_local::worst_dihedral_cos(p);
                if (cut_local::dihedral_deg(cos) < result.dihedral_bound_deg) round.bad[i] = 1;
                round.worst_cos[i] = std::max(round.worst_cos[i], cos);
                round.least_volume[i] = std::min(round.least_volume[i], volume_of(p));
            }
        });

        // 5. Quality repair: snap the vertex of each bad parent closest to the plane.
        if (repair == kMaxRepairRounds) break;
        std::vector<Index> to_snap;
        for (std::int64_t i = 0; i < num_candidates; ++i) {
            if (!round.bad[i]) continue;
            Index best = -1;
            double best_relative = std::numeric_limits<double>::infinity();
            for (int e = 0; e < 6; ++e) {
                const Index edge = candidate_edges[i][e];
                if (round.edge_point[edge] < 0) continue;
                const auto ends = edges[edge];
                const double t0 = crossing(ends[0], ends[1]);
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
    times.snap_and_split = lap();

    // The split mesh: each old cell's children in its place (old order kept). added[i]: the
    // children added before candidate i, so that an old cell t before candidate i (and after
    // candidate i - 1) moves to t + added[i].
    std::vector<Index> added(num_candidates + 1, 0);
    for (std::int64_t i = 0; i < num_candidates; ++i) {
        const int count = round.splits[i].count;
        added[i + 1] = added[i] + std::max(count, 1) - 1;
        result.split_cells += count > 0;
    }
    const std::int64_t num_split_cells = static_cast<std::int64_t>(num_cells) + added.back();
    EDN_VERIFY(num_split_cells <= std::numeric_limits<Index>::max(), ErrorCode::OutOfMemory,
               "cut: cell count exceeds 32-bit indices");
    // Candidate index of old cell t, or -1.
    auto candidate_of = [&](Index t) -> std::int64_t {
        const auto i =
            std::lower_bound(candidates.begin(), candidates.end(), t) - candidates.begin();
        return i < num_candidates && candidates[i] == t ? i : -1;
    };
    auto new_id = [&](Index t) { // of an old cell (its first child when split)
        const auto i =
            std::lower_bound(candidates.begin(), candidates.end(), t) - candidates.begin();
        return t + added[i];
    };
    std::vector<Cell> cells(num_split_cells);
    result.cell_parent.resize(num_split_cells);
    for (std::int64_t i = 0, from = 0; i <= num_candidates; ++i) {
        // The run of unsplit cells before candidate i is copied whole.
        const std::int64_t to = i < num_candidates ? candidates[i] : num_cells;
        std::copy(mesh.cells.begin() + from, mesh.cells.begin() + to,
                  cells.begin() + from + added[i]);
        std::iota(result.cell_parent.begin() + from + added[i],
                  result.cell_parent.begin() + to + added[i], static_cast<Index>(from));
        if (i == num_candidates) break;
        const CellSplit& s = round.splits[i];
        const std::int64_t at = to + added[i];
        if (s.count == 0) cells[at] = mesh.cells[to];
        for (int k = 0; k < s.count; ++k) cells[at + k] = s.cells[k];
        std::fill_n(result.cell_parent.begin() + at, std::max(s.count, 1), static_cast<Index>(to));
        from = to + 1;
    }
    const Index num_points = static_cast<Index>(round.points.size());
    rest.insert(rest.end(), round.points.begin(), round.points.end());
    times.assemble = lap();

    // 6. Separation along the faces in the plane, in the stars of the vertices on the plane
    // within R (old vertices on the blade and the edge points).
    auto side_of_unsplit = [&](Index t) {
        int has_plus = 0, has_minus = 0;
        for (Index v : mesh.cells[t]) {
            has_plus |= sign_of(v) > 0;
            has_minus |= sign_of(v) < 0;
        }
        return static_cast<std::int8_t>(has_plus == has_minus ? 0 : has_plus ? 1 : -1);
    };
    auto within_radius = [&](const Vec3& p) { return blade_extent.holds(p); }; // and outline
    std::vector<std::uint8_t> opening(num_vertices + num_points, 0);
    std::vector<Index> open_vertices;
    for (Index v : stars.vertices)
        if (sign_of(v) == 0 && within_radius(where(v))) {
            opening[v] = 1;
            open_vertices.push_back(v);
        }
    const auto old_open = static_cast<Index>(open_vertices.size());
    for (Index k = 0; k < num_points; ++k)
        if (within_radius(round.point_classify[k])) {
            opening[num_vertices + k] = 1;
            open_vertices.push_back(num_vertices + k);
        }
    // Their stars in the split mesh, ascending: old stars with split cells replaced by the
    // children holding the vertex; the edge points' from the children.
    Csr open_stars;
    std::vector<std::int8_t> open_side;
    open_stars.offsets.assign(open_vertices.size() + 1, 0);
    for (Index r = 0; r < old_open; ++r) {
        const Index v = open_vertices[r];
        for (Index t : star_of(v)) {
            const std::int64_t i = candidate_of(t);
            if (i < 0 || round.splits[i].count == 0) {
                open_stars.indices.push_back(new_id(t));
                open_side.push_back(side_of_unsplit(t));
                continue;
            }
            const CellSplit& s = round.splits[i];
            for (int k = 0; k < s.count; ++k)
                if (std::find(s.cells[k].begin(), s.cells[k].end(), v) != s.cells[k].end()) {
                    open_stars.indices.push_back(new_id(t) + k);
                    open_side.push_back(s.side[k]);
                }
        }
        open_stars.offsets[r + 1] = static_cast<Index>(open_stars.indices.size());
    }
    {
        std::vector<Index> row_of(num_points, -1), count(open_vertices.size() - old_open, 0);
        for (std::size_t r = old_open; r < open_vertices.size(); ++r)
            row_of[open_vertices[r] - num_vertices] = static_cast<Index>(r - old_open);
        auto each_point_entry = [&](auto&& visit) {
            for (std::int64_t i = 0; i < num_candidates; ++i) {
                const CellSplit& s = round.splits[i];
                for (int k = 0; k < s.count; ++k)
                    for (Index u : s.cells[k])
                        if (u >= num_vertices && row_of[u - num_vertices] >= 0)
                            visit(row_of[u - num_vertices],
                                  static_cast<Index>(candidates[i] + added[i] + k), s.side[k]);
            }
        };
        each_point_entry([&](Index r, Index, std::int8_t) { ++count[r]; });
        for (std::size_t r = 0; r < count.size(); ++r)
            open_stars.offsets[old_open + r + 1] = open_stars.offsets[old_open + r] + count[r];
        open_stars.indices.resize(open_stars.offsets.back());
        open_side.resize(open_stars.offsets.back());
        std::vector<Index> cursor(open_stars.offsets.begin() + old_open,
                                  open_stars.offsets.end() - 1);
        each_point_entry([&](Index r, Index cell, std::int8_t side) {
            open_stars.indices[cursor[r]] = cell;
            open_side[cursor[r]++] = side;
        });
    }
    const cut_local::Separation separated =
        cut_local::separate_in_stars(cells, rest, open_vertices, open_stars, open_side, opening);
    times.separate = lap();

    result.mesh.positions = std::move(rest);
    result.mesh.cells = std::move(cells);
    result.cut_faces = separated.cut_faces;
    result.duplicated_vertices = separated.duplicated_vertices;
    result.new_vertices = num_points;
    result.cells_before = num_cells;
    result.cells_after = result.mesh.num_cells();
    result.moved_vertices = static_cast<Index>(moved_list.size());
    if (move_deformed && !moved_list.empty()) result.moved_classify = std::move(moved_x);
    for (Index v : snapped_list) {
        if (dist[v] == 0) continue;
        ++result.snapped_vertices;
        result.max_snap_distance = std::max(result.max_snap_distance, std::abs(dist[v]));
    }
    if (options.count_components) result.components = count_components(result.mesh);
    times.components = lap();

    // Quality after: unchanged cells keep the input's values; split cells give their children's;
    // unsplit cells around moved vertices are measured again.
    for (std::int64_t i = 0; i < num_candidates; ++i)
        if (round.splits[i].count > 0) {
            quality.worst_cos[candidates[i]] = round.worst_cos[i];
            quality.volume[candidates[i]] = round.least_volume[i];
        }
    for (Index v : moved_list)
        for (Index t : star_of(v)) {
            const std::int64_t i = candidate_of(t);
            if (i >= 0 && round.splits[i].count > 0) continue;
            const std::array<Vec3, 4> p =
                corners(mesh.cells[t], result.mesh.positions, num_vertices + num_points, {});
            quality.worst_cos[t] = cut_local::worst_dihedral_cos(p);
            quality.volume[t] = volume_of(p);
        }
    double worst = -1.0, least = std::numeric_limits<double>::infinity();
    for (Index t = 0; t < num_cells; ++t) {
        worst = std::max(worst, quality.worst_cos[t]);
        least = std::min(least, quality.volume[t]);
    }
    result.after = {cut_local::dihedral_deg(worst), num_cells > 0 ? least : 0.0};
    times.quality_after = lap();
    times.total =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    result.times = times;
    return result;
}

} // namespace edn
