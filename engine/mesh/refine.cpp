#include "mesh/refine.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "mesh/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <unordered_map>
#include <utility>

namespace edn {
namespace {

Vec3 midpoint_of(const Vec3& a, const Vec3& b) {
    return {0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1]), 0.5 * (a[2] + b[2])};
}

double squared_distance(const Vec3& a, const Vec3& b) {
    double s = 0;
    for (int d = 0; d < 3; ++d) s += (a[d] - b[d]) * (a[d] - b[d]);
    return s;
}

/// Order-free key of edge {a, b}.
std::uint64_t edge_key(Index a, Index b) {
    if (a > b) std::swap(a, b);
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) |
           static_cast<std::uint32_t>(b);
}

/// Smallest and largest dihedral angle of one tetrahedron [radians]. The dihedral angle at the
/// edge shared by faces k and l is pi minus the angle between their outward normals.
std::pair<double, double> cell_dihedral_range(std::span<const Vec3> positions, const Cell& c) {
    std::array<Vec3, 4> normals{};
    std::array<double, 4> lengths{};
    for (int i = 0; i < 4; ++i) {
        const auto& f = kCellFaceVertices[i];
        const Vec3& a = positions[c[f[0]]];
        const Vec3& b = positions[c[f[1]]];
        const Vec3& d = positions[c[f[2]]];
        const Vec3 u = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        const Vec3 v = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
        normals[i] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                      u[0] * v[1] - u[1] * v[0]};
        lengths[i] = std::sqrt(squared_distance(normals[i], {0, 0, 0}));
    }
    double lo = std::numbers::pi, hi = 0;
    for (int k = 0; k < 4; ++k)
        for (int l = k + 1; l < 4; ++l) {
            double angle = 0; // a degenerate face: the cell is flat
            if (lengths[k] > 0 && lengths[l] > 0) {
                double dot = 0;
                for (int d = 0; d < 3; ++d) dot += normals[k][d] * normals[l][d];
                angle = std::acos(std::clamp(-dot / (lengths[k] * lengths[l]), -1.0, 1.0));
            }
            lo = std::min(lo, angle);
            hi = std::max(hi, angle);
        }
    return {lo, hi};
}

std::pair<double, double> dihedral_range_deg(const TetMesh& mesh) {
    const Index n = mesh.num_cells();
    std::vector<std::pair<double, double>> per_cell(n);
    parallel_for(0, n, [&](std::int64_t t) {
        per_cell[t] = cell_dihedral_range(mesh.positions, mesh.cells[t]);
    });
    double lo = std::numbers::pi, hi = 0;
    for (const auto& [a, b] : per_cell) lo = std::min(lo, a), hi = std::max(hi, b);
    constexpr double to_deg = 180.0 / std::numbers::pi;
    return {lo * to_deg, hi * to_deg};
}

/// Longest-edge bisection state: growing vertex and cell arrays and the edge -> midpoint map.
class Bisector {
public:
    Bisector(const TetMesh& mesh, std::span<const Vec3> classify_positions)
        : positions_(mesh.positions), cells_(mesh.cells), parent_(mesh.cells.size()),
          max_cells_(static_cast<std::int64_t>(kMaxRefineGrowth) * mesh.num_cells()),
          input_cells_(mesh.num_cells()) {
        classify_.assign(classify_positions.begin(), classify_positions.end());
        split_end_.assign(mesh.positions.size(), 0);
        for (Index t = 0; t < mesh.num_cells(); ++t) parent_[t] = t;
    }

    /// One refinement round: bisect the cells touching the sphere, then close.
    void refine_round(const Vec3& center, double radius) {
        const Index n = static_cast<Index>(cells_.size());
        std::vector<std::uint8_t> marked(n, 0);
        const std::vector<Vec3>& where = classify_.empty() ? positions_ : classify_;
        parallel_for(0, n, [&](std::int64_t t) {
            marked[t] = touches_sphere(where, cells_[t], center, radius) ? 1 : 0;
        });
        for (Index t = 0; t < n; ++t)
            if (marked[t]) bisect(t);
        close();
    }

    /// The refined mesh; old vertices first, new ones in creation order.
    void take(RefineResult& result) {
        result.mesh.positions = std::move(positions_);
        result.mesh.cells = std::move(cells_);
        result.cell_parent = std::move(parent_);
    }

private:
    static bool touches_sphere(const std::vector<Vec3>& x, const Cell& c, const Vec3& center,
                               double radius) {
        const double r2 = radius * radius;
        Vec3 centroid{};
        for (Index v : c) {
            if (squared_distance(x[v], center) <= r2) return true;
            for (int d = 0; d < 3; ++d) centroid[d] += 0.25 * x[v][d];
        }
        if (squared_distance(centroid, center) <= r2) return true;
        // A sphere smaller than the cell: the center inside it (same side of every face).
        const double total = signed_volume(x[c[0]], x[c[1]], x[c[2]], x[c[3]]);
        for (int i = 0; i < 4; ++i) {
            std::array<Vec3, 4> p = {x[c[0]], x[c[1]], x[c[2]], x[c[3]]};
            p[i] = center;
            if (signed_volume(p[0], p[1], p[2], p[3]) * total < 0) return false;
        }
        return true;
    }

    /// Local index (into kCellEdgeVertices) of the cell's longest edge on rest positions; equal
    /// lengths are ordered by the sorted vertex pair so that every cell agrees on a shared edge.
    int longest_edge(const Cell& c) const {
        int best = 0;
        double best_length = -1;
        std::uint64_t best_key = 0;
        for (int e = 0; e < 6; ++e) {
            const Index a = c[kCellEdgeVertices[e][0]], b = c[kCellEdgeVertices[e][1]];
            const double length = squared_distance(positions_[a], positions_[b]);
            const std::uint64_t key = edge_key(a, b);
            if (length > best_length || (length == best_length && key < best_key)) {
                best = e, best_length = length, best_key = key;
            }
        }
        return best;
    }

    bool has_split_edge(const Cell& c) const {
        // A split edge has both ends flagged: most cells are rejected without a hash lookup.
        int flagged = 0;
        for (Index v : c) flagged += split_end_[v];
        if (flagged < 2) return false;
        for (const auto& [i, j] : kCellEdgeVertices)
            if (split_end_[c[i]] && split_end_[c[j]] && midpoints_.count(edge_key(c[i], c[j])))
                return true;
        return false;
    }

    /// The midpoint vertex of edge {a, b}, created on first use.
    Index midpoint(Index a, Index b) {
        const auto [it, inserted] =
            midpoints_.try_emplace(edge_key(a, b), static_cast<Index>(positions_.size()));
        if (inserted) {
            EDN_VERIFY(positions_.size() <
                           static_cast<std::size_t>(std::numeric_limits<Index>::max()),
                       ErrorCode::OutOfMemory, "refine: vertex count exceeds 32-bit indices");
            positions_.push_back(midpoint_of(positions_[a], positions_[b]));
            split_end_[a] = split_end_[b] = 1;
            split_end_.push_back(0);
            if (!classify_.empty()) classify_.push_back(midpoint_of(classify_[a], classify_[b]));
            ++created_;
        }
        return it->second;
    }

    /// Splits cell t at its longest edge: t becomes the child keeping the edge's first end, the
    /// child keeping the second end is appended.
    void bisect(Index t) {
        EDN_VERIFY(static_cast<std::int64_t>(cells_.size()) < max_cells_, ErrorCode::Usage,
                   "refine: more than " << max_cells_ << " cells (" << kMaxRefineGrowth
                                        << " x the input's " << input_cells_
                                        << "); use fewer levels or a smaller radius");
        const Cell c = cells_[t];
        const auto [i, j] = kCellEdgeVertices[longest_edge(c)];
        const Index m = midpoint(c[i], c[j]);
        Cell keep_first = c, keep_second = c;
        keep_first[j] = m;
        keep_second[i] = m;
        cells_[t] = keep_first;
        cells_.push_back(keep_second);
        parent_.push_back(parent_[t]);
    }

    /// Bisects until no cell has a split edge. A sweep visits every cell (cells appended during
    /// the sweep included) and refines it and its children until they hold no split edge; a
    /// sweep that created no midpoint checked every cell against the final map, so it ends.
    void close() {
        std::vector<Index> stack;
        for (;;) {
            const std::int64_t created_before = created_;
            for (std::size_t t = 0; t < cells_.size(); ++t) {
                stack.assign(1, static_cast<Index>(t));
                while (!stack.empty()) {
                    const Index u = stack.back();
                    stack.pop_back();
                    if (!has_split_edge(cells_[u])) continue;
                    bisect(u);
                    stack.push_back(u);
                    stack.push_back(static_cast<Index>(cells_.size() - 1));
                }
            }
            if (created_ == created_before) break;
        }
    }

    std::vector<Vec3> positions_;
    std::vector<Vec3> classify_; ///< empty: classify on positions_
    std::vector<Cell> cells_;
    std::vector<Index> parent_;
    std::unordered_map<std::uint64_t, Index> midpoints_;
    std::vector<std::uint8_t> split_end_; ///< per vertex: 1 when it ends a split edge
    std::int64_t created_ = 0;
    std::int64_t max_cells_;
    Index input_cells_;
};

void finish(const TetMesh& input, RefineResult& result) {
    result.cells_before = input.num_cells();
    result.cells_after = result.mesh.num_cells();
    result.new_vertices = result.mesh.num_vertices() - input.num_vertices();
    std::vector<Index> children(input.num_cells(), 0);
    for (Index p : result.cell_parent) ++children[p];
    result.split_cells = static_cast<Index>(
        std::count_if(children.begin(), children.end(), [](Index k) { return k > 1; }));
    std::tie(result.min_dihedral_deg, result.max_dihedral_deg) = dihedral_range_deg(result.mesh);
    result.input_min_dihedral_deg = dihedral_range_deg(input).first;
}

} // namespace

RefineResult refine_sphere(const TetMesh& mesh, const Vec3& center, double radius, int levels,
                           std::span<const Vec3> classify_positions) {
    EDN_VERIFY(std::isfinite(center[0]) && std::isfinite(center[1]) && std::isfinite(center[2]),
               ErrorCode::Usage,
               "refine: sphere center must be finite, got (" << center[0] << ", " << center[1]
                                                             << ", " << center[2] << ")");
    EDN_VERIFY(std::isfinite(radius) && radius > 0, ErrorCode::Usage,
               "refine: sphere radius must be positive and finite, got " << radius);
    EDN_VERIFY(levels >= 1 && levels <= 8, ErrorCode::Usage,
               "refine: levels must be in 1..8, got " << levels);
    EDN_VERIFY(classify_positions.empty() ||
                   classify_positions.size() == static_cast<std::size_t>(mesh.num_vertices()),
               ErrorCode::Usage,
               "refine: expected " << mesh.num_vertices() << " classify positions, got "
                                   << classify_positions.size());
    Bisector bisector(mesh, classify_positions);
    for (int level = 0; level < levels; ++level) bisector.refine_round(center, radius);
    RefineResult result;
    bisector.take(result);
    finish(mesh, result);
    return result;
}

RefineResult refine_uniform(const TetMesh& mesh) {
    const Topology topology = build_topology(mesh);
    const std::int64_t cells = 8 * static_cast<std::int64_t>(mesh.num_cells());
    const std::int64_t vertices =
        static_cast<std::int64_t>(mesh.num_vertices()) + topology.num_edges();
    EDN_VERIFY(
        cells <= std::numeric_limits<Index>::max() && vertices <= std::numeric_limits<Index>::max(),
        ErrorCode::OutOfMemory,
        "refine: uniform refinement of " << mesh.num_cells() << " cells exceeds 32-bit indices");
    RefineResult result;
    TetMesh& out = result.mesh;
    const Index num_vertices = mesh.num_vertices();
    out.positions.resize(vertices);
    std::copy(mesh.positions.begin(), mesh.positions.end(), out.positions.begin());
    parallel_for(0, topology.num_edges(), [&](std::int64_t e) {
        const Edge& edge = topology.edges[e];
        out.positions[num_vertices + e] =
            midpoint_of(mesh.positions[edge[0]], mesh.positions[edge[1]]);
    });
    out.cells.resize(cells);
    result.cell_parent.resize(cells);
    parallel_for(0, mesh.num_cells(), [&](std::int64_t t) {
        const Cell& v = mesh.cells[t];
        Index m[6]; // midpoints of local edges (0,1),(0,2),(0,3),(1,2),(1,3),(2,3)
        for (int e = 0; e < 6; ++e) m[e] = num_vertices + topology.cell_edges[t][e];
        Cell* child = &out.cells[8 * t];
        // Corner tets: the parent scaled by 1/2 about each vertex (orientation kept).
        child[0] = {v[0], m[0], m[1], m[2]};
        child[1] = {m[0], v[1], m[3], m[4]};
        child[2] = {m[1], m[3], v[2], m[5]};
        child[3] = {m[2], m[4], m[5], v[3]};
        // Octahedron: the three diagonals join midpoints of opposite edges; each comes with the
        // cycle of the other four midpoints around it.
        const std::array<std::array<Index, 6>, 3> split = {{{m[0], m[5], m[1], m[2], m[4], m[3]},
                                                            {m[1], m[4], m[0], m[2], m[5], m[3]},
                                                            {m[2], m[3], m[0], m[1], m[5], m[4]}}};
        int best = 0;
        double best_length = std::numeric_limits<double>::infinity();
        for (int d = 0; d < 3; ++d) {
            const double length =
                squared_distance(out.positions[split[d][0]], out.positions[split[d][1]]);
            if (length < best_length) best = d, best_length = length;
        }
        const auto& s = split[best];
        for (int k = 0; k < 4; ++k) {
            Cell c = {s[0], s[1], s[2 + k], s[2 + (k + 1) % 4]};
            if (signed_volume(out.positions[c[0]], out.positions[c[1]], out.positions[c[2]],
                              out.positions[c[3]]) < 0)
                std::swap(c[2], c[3]);
            child[4 + k] = c;
        }
        for (int k = 0; k < 8; ++k) result.cell_parent[8 * t + k] = static_cast<Index>(t);
    });
    finish(mesh, result);
    return result;
}

double cell_min_dihedral_deg(std::span<const Vec3> positions, const Cell& cell) {
    return cell_dihedral_range(positions, cell).first * (180.0 / std::numbers::pi);
}

double min_dihedral_angle_deg(const TetMesh& mesh) {
    return dihedral_range_deg(mesh).first;
}

double max_dihedral_angle_deg(const TetMesh& mesh) {
    return dihedral_range_deg(mesh).second;
}

} // namespace edn
