#include "mesh/cut_local.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "mesh/refine.hpp"
#include "mesh/star_union_find.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>

namespace edn::cut_local {
namespace {

/// Vertices per scratch block of separate_in_stars (blocks are many more than threads).
constexpr std::int64_t kVertexBlock = 64;

/// A face through the star's vertex: its two other vertices (x < y) and the star entry holding it.
struct StarFace {
    Index x, y;
    int entry;
    bool operator<(const StarFace& o) const {
        return x != o.x ? x < o.x : y != o.y ? y < o.y : entry < o.entry;
    }
};

/// Scratch of one block of star vertices.
struct StarScratch {
    std::vector<StarFace> faces;
    StarUnionFind kept, whole;
    std::vector<Index> group_label;
    std::vector<std::uint8_t> part_has_keeper;
};

double squared_distance(const Vec3& a, const Vec3& b) {
    double s = 0;
    for (int d = 0; d < 3; ++d) s += (a[d] - b[d]) * (a[d] - b[d]);
    return s;
}

} // namespace

double worst_dihedral_cos(const std::array<Vec3, 4>& p) {
    // The arithmetic of refine.cpp's cell_dihedral_range: the angle at the edge shared by faces k
    // and l is acos(-n_k.n_l / (|n_k| |n_l|)), n the faces' outward normals.
    std::array<Vec3, 4> normals{};
    std::array<double, 4> lengths{};
    for (int i = 0; i < 4; ++i) {
        const auto& f = kCellFaceVertices[i];
        const Vec3& a = p[f[0]];
        const Vec3& b = p[f[1]];
        const Vec3& d = p[f[2]];
        const Vec3 u = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        const Vec3 v = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
        normals[i] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                      u[0] * v[1] - u[1] * v[0]};
        double s = 0;
        for (int k = 0; k < 3; ++k) s += (normals[i][k] - 0.0) * (normals[i][k] - 0.0);
        lengths[i] = std::sqrt(s);
    }
    double worst = -1.0;
    for (int k = 0; k < 4; ++k)
        for (int l = k + 1; l < 4; ++l) {
            double c = 1.0; // a degenerate face: the cell is flat (angle 0)
            if (lengths[k] > 0 && lengths[l] > 0) {
                double dot = 0;
                for (int d = 0; d < 3; ++d) dot += normals[k][d] * normals[l][d];
                c = std::clamp(-dot / (lengths[k] * lengths[l]), -1.0, 1.0);
            }
            worst = std::max(worst, c); // a NaN is skipped, as std::min skips its angle
        }
    return worst;
}

double dihedral_deg(double cos) {
    return std::acos(cos) * (180.0 / std::numbers::pi);
}

Stars find_stars(std::span<const Cell> cells, Index num_vertices, std::vector<Index> vertices) {
    Stars stars;
    stars.vertices = std::move(vertices);
    const auto rows = static_cast<Index>(stars.vertices.size());
    std::vector<Index> row_of(num_vertices, -1);
    for (Index r = 0; r < rows; ++r) row_of[stars.vertices[r]] = r;
    Csr& csr = stars.cells;
    csr.offsets.assign(static_cast<std::size_t>(rows) + 1, 0);
    const auto num_cells = static_cast<std::int64_t>(cells.size());
    parallel_for(0, num_cells, [&](std::int64_t c) {
        for (Index v : cells[c])
            if (row_of[v] >= 0)
                std::atomic_ref<Index>(csr.offsets[row_of[v] + 1])
                    .fetch_add(1, std::memory_order_relaxed);
    });
    for (Index r = 0; r < rows; ++r) csr.offsets[r + 1] += csr.offsets[r];
    csr.indices.resize(csr.offsets.back());
    std::vector<Index> cursor(csr.offsets.begin(), csr.offsets.end() - 1);
    parallel_for(0, num_cells, [&](std::int64_t c) {
        for (Index v : cells[c])
            if (row_of[v] >= 0) {
                const Index at = std::atomic_ref<Index>(cursor[row_of[v]])
                                     .fetch_add(1, std::memory_order_relaxed);
                csr.indices[at] = static_cast<Index>(c);
            }
    });
    // The parallel fill order is arbitrary; rows are short.
    parallel_for(
        0, rows,
        [&](std::int64_t r) {
            std::sort(csr.indices.begin() + csr.offsets[r],
                      csr.indices.begin() + csr.offsets[r + 1]);
        },
        64);
    return stars;
}

Separation separate_in_stars(std::vector<Cell>& cells, std::vector<Vec3>& positions,
                             std::span<const Index> vertices, const Csr& stars,
                             std::span<const std::int8_t> side,
                             std::span<const std::uint8_t> opening) {
    const auto n = static_cast<std::int64_t>(vertices.size());
    EDN_ASSERT(stars.num_rows() == n && side.size() == stars.indices.size(),
               "separate_in_stars: stars do not match the vertices");
    // Star groups (separate_faces' star_groups): per star entry 0 when the entry keeps the
    // vertex, k >= 1 for its k-th new copy. Opened faces are listed once, from their lowest
    // vertex, by their two cells.
    std::vector<Index> copies(n, 0);
    std::vector<Index> labels(stars.indices.size(), 0);
    const std::int64_t blocks = (n + kVertexBlock - 1) / kVertexBlock;
    std::vector<std::vector<std::array<Index, 2>>> opened(blocks);
    parallel_for(
        0, blocks,
        [&](std::int64_t block) {
            StarScratch s;
            for (std::int64_t r = block * kVertexBlock; r < std::min(n, (block + 1) * kVertexBlock);
                 ++r) {
                const Index v = vertices[r];
                const Index first = stars.offsets[r];
                const auto star = stars.row(static_cast<Index>(r));
                const int k = static_cast<int>(star.size());
                s.faces.clear();
                for (int i = 0; i < k; ++i) {
                    const Cell& c = cells[star[i]];
                    for (int j = 0; j < 4; ++j) {
                        if (c[j] == v) continue; // the face opposite v does not hold v
                        Index x = -1, y = -1;
                        for (int l = 0; l < 4; ++l)
                            if (l != j && c[l] != v) (x < 0 ? x : y) = c[l];
                        if (x > y) std::swap(x, y);
                        s.faces.push_back({x, y, i});
                    }
                }
                std::sort(s.faces.begin(), s.faces.end());
                s.kept.reset(k);
                s.whole.reset(k);
                bool any_cut = false;
                for (std::size_t f = 0; f + 1 < s.faces.size(); ++f) {
                    const StarFace& a = s.faces[f];
                    const StarFace& b = s.faces[f + 1];
                    if (a.x != b.x || a.y != b.y) continue;
                    EDN_ASSERT(f + 2 >= s.faces.size() || s.faces[f + 2].x != a.x ||
                                   s.faces[f + 2].y != a.y,
                               "separate_in_stars: a face of more than two cells");
                    s.whole.unite(a.entry, b.entry);
                    const bool open = side[first + a.entry] * side[first + b.entry] < 0 &&
                                      opening[v] && opening[a.x] && opening[a.y];
                    if (!open) {
                        s.kept.unite(a.entry, b.entry);
                        continue;
                    }
                    any_cut = true;
                    if (v < a.x) opened[block].push_back({star[a.entry], star[b.entry]});
                }
                if (!any_cut) continue;
                // Roots are the lowest member, so visiting i in order meets each group first at
                // its root; the first group of each face-connected part keeps v.
                s.group_label.assign(k, -1);
                s.part_has_keeper.assign(k, 0);
                Index made = 0;
                for (int i = 0; i < k; ++i) {
                    const int root = s.kept.find(i);
                    if (root == i) {
                        const int part = s.whole.find(i);
                        if (!s.part_has_keeper[part]) {
                            s.part_has_keeper[part] = 1;
                            s.group_label[i] = 0;
                        } else {
                            s.group_label[i] = ++made;
                        }
                    }
                    labels[first + i] = s.group_label[root];
                }
                copies[r] = made;
            }
        },
        kHeavyItems);

    // New vertices after the existing ones, in (vertex, group) order.
    Separation result;
    const auto base = static_cast<std::int64_t>(positions.size());
    std::vector<Index> first_copy(n, 0);
    std::int64_t total = base;
    for (std::int64_t r = 0; r < n; ++r) {
        first_copy[r] = static_cast<Index>(total);
        total += copies[r];
    }
    EDN_VERIFY(total <= std::numeric_limits<Index>::max(), ErrorCode::OutOfMemory,
               "cut: " << total << " vertices exceed the 32-bit index range");
    result.duplicated_vertices = static_cast<Index>(total - base);
    positions.resize(total);
    for (std::int64_t r = 0; r < n; ++r)
        for (Index k = 0; k < copies[r]; ++k) positions[first_copy[r] + k] = positions[vertices[r]];

    // Renumber (serial: a cell's slots belong to different star vertices; few entries).
    for (std::int64_t r = 0; r < n; ++r) {
        if (copies[r] == 0) continue;
        const Index v = vertices[r];
        for (Index e = stars.offsets[r]; e < stars.offsets[r + 1]; ++e) {
            if (labels[e] == 0) continue;
            for (Index& u : cells[stars.indices[e]])
                if (u == v) u = first_copy[r] + labels[e] - 1;
        }
    }

    // Opened faces that the duplication separated (all at once, or only partly at a crack
    // front): the two cells no longer hold the same three vertices.
    for (const auto& list : opened)
        for (const auto& [a, b] : list) {
            int shared = 0;
            for (Index va : cells[a])
                for (Index vb : cells[b]) shared += va == vb;
            result.cut_faces += shared < 3;
        }
    return result;
}

namespace {

double dot3(const Vec3& a, const Vec3& b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

Vec3 minus3(const Vec3& a, const Vec3& b) {
    return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}

/// A boundary face (v, a, b) of a star, with the index of its plane among the star's planes.
struct BoundaryFace {
    Index a, b;
    int plane;
};

/// The boundary faces of the star of v (faces through v no other star cell holds) and the unit
/// normals of their distinct planes (rest positions of `mesh`; the grouping of try_move).
void star_boundary(const TetMesh& mesh, std::span<const Index> star, Index v,
                   std::vector<BoundaryFace>& faces, std::vector<Vec3>& normals) {
    for (Index c : star)
        for (int i = 0; i < 4; ++i) {
            if (mesh.cells[c][i] == v) continue;
            const auto& l = kCellFaceVertices[i];
            const Index fa = mesh.cells[c][l[0]], fb = mesh.cells[c][l[1]],
                        fc = mesh.cells[c][l[2]];
            bool shared = false;
            for (Index o : star) {
                if (o == c) continue;
                int hits = 0;
                for (Index u : mesh.cells[o]) hits += u == fa || u == fb || u == fc;
                shared = shared || hits == 3;
            }
            if (shared) continue;
            const Vec3 u = minus3(mesh.positions[fb], mesh.positions[fa]);
            const Vec3 w = minus3(mesh.positions[fc], mesh.positions[fa]);
            Vec3 m = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2],
                      u[0] * w[1] - u[1] * w[0]};
            const double length = std::sqrt(dot3(m, m));
            for (double& e : m) e /= length;
            int plane = -1;
            for (std::size_t k = 0; k < normals.size(); ++k)
                if (squared_distance(normals[k], m) < 1e-24) plane = static_cast<int>(k);
            if (plane < 0) {
                plane = static_cast<int>(normals.size());
                normals.push_back(m);
            }
            Index others[2];
            int count = 0;
            for (Index e : {fa, fb, fc})
                if (e != v) others[count++] = e;
            faces.push_back({others[0], others[1], plane});
        }
}

} // namespace

bool try_move(const TetMesh& mesh, std::span<const Index> star, std::vector<Vec3>& rest, Index v,
              const Vec3& n, double d, double bound_deg) {
    // The distinct planes of the star's boundary (same plane only to rounding: a boundary that
    // is merely nearly flat, an earlier cut with unmoved snaps, must not take the vertex along a
    // noisy direction).
    std::vector<BoundaryFace> faces;
    std::vector<Vec3> normals;
    star_boundary(mesh, star, v, faces, normals);
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

bool try_move_deformed(const TetMesh& mesh, std::span<const Vec3> x, std::span<const Index> star,
                       std::vector<Vec3>& rest, std::vector<Vec3>& moved_x, Index v, const Vec3& n,
                       double d, double bound_deg) {
    std::vector<BoundaryFace> faces;
    std::vector<Vec3> normals;
    star_boundary(mesh, star, v, faces, normals);
    const Vec3& xv = x[v];
    const Vec3& rv = mesh.positions[v];
    // The move as weights of old vertices: new = v + sum w_k (u_k - v), in both shapes.
    std::array<Index, 3> along{};
    std::array<double, 3> weight{};
    int terms = 0;
    bool found = false;
    if (normals.empty()) {
        // Interior: the deformed point d below v along n, in a deformed star cell.
        const Vec3 target = {xv[0] - d * n[0], xv[1] - d * n[1], xv[2] - d * n[2]};
        for (Index c : star) {
            const Cell& cell = mesh.cells[c];
            const double whole = signed_volume(x[cell[0]], x[cell[1]], x[cell[2]], x[cell[3]]);
            if (!(whole > 0)) continue;
            std::array<double, 4> L{};
            bool inside = true;
            for (int i = 0; i < 4; ++i) {
                std::array<Vec3, 4> q = {x[cell[0]], x[cell[1]], x[cell[2]], x[cell[3]]};
                q[i] = target;
                L[i] = signed_volume(q[0], q[1], q[2], q[3]) / whole;
                inside = inside && L[i] >= -1e-12;
            }
            if (!inside) continue;
            for (int i = 0; i < 4; ++i)
                if (cell[i] != v) along[terms] = cell[i], weight[terms++] = L[i];
            found = true;
            break;
        }
    } else if (normals.size() == 1) {
        // Flat boundary: the shortest deformed move within a boundary face onto the blade.
        double best = std::numeric_limits<double>::infinity();
        for (const BoundaryFace& f : faces) {
            const Vec3 e1 = minus3(x[f.a], xv), e2 = minus3(x[f.b], xv);
            const double g11 = dot3(e1, e1), g12 = dot3(e1, e2), g22 = dot3(e2, e2);
            const double det = g11 * g22 - g12 * g12;
            if (!(det > 0)) continue;
            const double r1 = dot3(e1, n), r2 = dot3(e2, n);
            const double c1 = (g22 * r1 - g12 * r2) / det, c2 = (g11 * r2 - g12 * r1) / det;
            const double pn2 = c1 * r1 + c2 * r2; // |n projected onto the face|^2
            if (pn2 < 0.25) continue;             // nearly parallel: the move would be long
            const double a = -d * c1 / pn2, b = -d * c2 / pn2;
            if (a < -1e-12 || b < -1e-12 || a + b > 1 + 1e-12) continue;
            const double length = std::abs(d) / std::sqrt(pn2);
            if (length >= best) continue;
            best = length;
            along = {f.a, f.b, 0};
            weight = {a, b, 0};
            terms = 2;
            found = true;
        }
    } else if (normals.size() == 2) {
        // Crease: along an edge whose boundary faces lie in both planes.
        double best = std::numeric_limits<double>::infinity();
        for (const BoundaryFace& f : faces)
            for (Index u : {f.a, f.b}) {
                int planes = 0;
                for (const BoundaryFace& g : faces)
                    if (g.a == u || g.b == u) planes |= 1 << g.plane;
                if (planes != 3) continue;
                const Vec3 e = minus3(x[u], xv);
                const double en = dot3(e, n), length = std::sqrt(dot3(e, e));
                if (!(length > 0) || std::abs(en) < 0.5 * length) continue;
                const double a = -d / en;
                if (a < 0 || a > 1 || a * length >= best) continue;
                best = a * length;
                along = {u, 0, 0};
                weight = {a, 0, 0};
                terms = 1;
                found = true;
            }
    }
    if (!found) return false;
    Vec3 new_rest = rv, new_x = xv;
    for (int k = 0; k < terms; ++k)
        for (int i = 0; i < 3; ++i) {
            new_rest[i] += weight[k] * (mesh.positions[along[k]][i] - rv[i]);
            new_x[i] += weight[k] * (x[along[k]][i] - xv[i]);
        }
    const Vec3 old_rest = rest[v], old_x = moved_x[v];
    std::vector<std::uint8_t> was_positive(star.size());
    for (std::size_t k = 0; k < star.size(); ++k) {
        const Cell& c = mesh.cells[star[k]];
        was_positive[k] =
            signed_volume(moved_x[c[0]], moved_x[c[1]], moved_x[c[2]], moved_x[c[3]]) > 0;
    }
    rest[v] = new_rest;
    moved_x[v] = new_x;
    for (std::size_t k = 0; k < star.size(); ++k) {
        const Cell& c = mesh.cells[star[k]];
        if (signed_volume(rest[c[0]], rest[c[1]], rest[c[2]], rest[c[3]]) <= 0 ||
            cell_min_dihedral_deg(rest, c) < bound_deg ||
            (was_positive[k] &&
             signed_volume(moved_x[c[0]], moved_x[c[1]], moved_x[c[2]], moved_x[c[3]]) <= 0)) {
            rest[v] = old_rest;
            moved_x[v] = old_x;
            return false;
        }
    }
    return true;
}

CellQualities cell_qualities(const TetMesh& mesh) {
    CellQualities q;
    const Index n = mesh.num_cells();
    q.worst_cos.resize(n);
    q.volume.resize(n);
    parallel_for(0, n, [&](std::int64_t t) {
        const Cell& c = mesh.cells[t];
        const std::array<Vec3, 4> p = {mesh.positions[c[0]], mesh.positions[c[1]],
                                       mesh.positions[c[2]], mesh.positions[c[3]]};
        q.worst_cos[t] = worst_dihedral_cos(p);
        q.volume[t] = signed_volume(p[0], p[1], p[2], p[3]);
    });
    double worst = -1.0, least = std::numeric_limits<double>::infinity();
    for (Index t = 0; t < n; ++t) {
        worst = std::max(worst, q.worst_cos[t]);
        least = std::min(least, q.volume[t]);
    }
    q.total = {dihedral_deg(worst), n > 0 ? least : 0.0};
    return q;
}

} // namespace edn::cut_local
