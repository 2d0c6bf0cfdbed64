#include "mesh/cut.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "mesh/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

namespace edn {
namespace {

/// Union-find over the few cells of one vertex star (path halving, union by lower index so that
/// the root of a set is its lowest local index: the group order is then the cell order).
struct SmallUnionFind {
    std::vector<int> parent;
    explicit SmallUnionFind(int n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
    int find(int i) {
        while (parent[i] != i) i = parent[i] = parent[parent[i]];
        return i;
    }
    void unite(int a, int b) {
        a = find(a), b = find(b);
        if (a == b) return;
        if (a < b) std::swap(a, b);
        parent[a] = b;
    }
};

/// Groups the star of vertex v (cells ascending, as in topology.vertex_cells) and writes, per
/// star entry, 0 when the entry keeps v and k >= 1 for the k-th new copy of v. Returns the
/// number of new copies. Pre-existing pinches (parts of the star that share no face even without
/// cuts) are kept on v: only cut-separated groups inside one face-connected part are copied.
Index star_groups(const Topology& topology, const std::vector<Cell>& cells,
                  std::span<const std::uint8_t> cut, Index v, Index* labels) {
    const auto star = topology.vertex_cells.row(v);
    const int k = static_cast<int>(star.size());
    SmallUnionFind kept(k), whole(k);
    bool any_cut = false;
    for (int i = 0; i < k; ++i) {
        const Index c = star[i];
        for (int j = 0; j < 4; ++j) {
            if (cells[c][j] == v) continue; // the face opposite v does not contain v
            const Index f = topology.cell_faces[c][j];
            const auto pair = topology.face_cells.row(f);
            if (pair.size() != 2) continue;
            const Index other = pair[0] == c ? pair[1] : pair[0];
            if (other < c) continue; // each shared face once
            const int o =
                static_cast<int>(std::lower_bound(star.begin(), star.end(), other) - star.begin());
            EDN_ASSERT(o < k && star[o] == other,
                       "cut: face neighbour " << other << " missing from the star of vertex " << v);
            whole.unite(i, o);
            if (cut[f])
                any_cut = true;
            else
                kept.unite(i, o);
        }
    }
    if (!any_cut) {
        std::fill(labels, labels + k, 0);
        return 0;
    }
    // Roots are the lowest member (union by lower index), so visiting i in order meets each
    // group first at its root.
    std::vector<Index> group_label(k, -1);
    std::vector<std::uint8_t> part_has_keeper(k, 0);
    Index copies = 0;
    for (int i = 0; i < k; ++i) {
        const int root = kept.find(i);
        if (root == i) {
            const int part = whole.find(i);
            if (!part_has_keeper[part]) {
                part_has_keeper[part] = 1;
                group_label[i] = 0;
            } else {
                group_label[i] = ++copies;
            }
        }
        labels[i] = group_label[root];
    }
    return copies;
}

} // namespace

CheckedBlade check_blade(const TetMesh& mesh, const CutPlane& plane,
                         std::span<const Vec3> classify_positions) {
    const Vec3& n = plane.normal;
    const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    EDN_VERIFY(std::isfinite(length) && length > 0, ErrorCode::Usage,
               "cut: plane normal must be finite and non-zero, got (" << n[0] << ", " << n[1]
                                                                      << ", " << n[2] << ")");
    for (double x : plane.point)
        EDN_VERIFY(std::isfinite(x), ErrorCode::Usage, "cut: plane point must be finite");
    EDN_VERIFY(plane.radius > 0 && !std::isnan(plane.radius), ErrorCode::Usage,
               "cut: radius must be > 0, got " << plane.radius);
    const std::span<const Vec3> x =
        classify_positions.empty() ? std::span<const Vec3>(mesh.positions) : classify_positions;
    EDN_VERIFY(x.size() == mesh.positions.size(), ErrorCode::Usage,
               "cut: expected " << mesh.positions.size() << " classification positions, got "
                                << x.size());
    return {x, {n[0] / length, n[1] / length, n[2] / length}};
}

CutResult cut_mesh(const TetMesh& mesh, const CutPlane& plane,
                   std::span<const Vec3> classify_positions) {
    const CheckedBlade blade = check_blade(mesh, plane, classify_positions);
    const std::span<const Vec3> x = blade.positions;

    const Topology topology = build_topology(mesh);
    const Index num_cells = mesh.num_cells();
    const Vec3& unit = blade.unit_normal;
    auto signed_distance = [&](const Vec3& q) {
        return unit[0] * (q[0] - plane.point[0]) + unit[1] * (q[1] - plane.point[1]) +
               unit[2] * (q[2] - plane.point[2]);
    };

    // 1. Side of every cell.
    std::vector<std::uint8_t> positive(num_cells);
    parallel_for(0, num_cells, [&](std::int64_t c) {
        Vec3 centroid{};
        for (Index v : mesh.cells[c])
            for (int d = 0; d < 3; ++d) centroid[d] += 0.25 * x[v][d];
        positive[c] = signed_distance(centroid) >= 0 ? 1 : 0;
    });

    // 2. Cut faces.
    const Index num_faces = topology.num_faces();
    std::vector<std::uint8_t> cut(num_faces, 0);
    const double radius2 = plane.radius * plane.radius;
    parallel_for(0, num_faces, [&](std::int64_t f) {
        const auto pair = topology.face_cells.row(static_cast<Index>(f));
        if (pair.size() != 2 || positive[pair[0]] == positive[pair[1]]) return;
        if (std::isfinite(plane.radius)) {
            double d2 = 0;
            for (int d = 0; d < 3; ++d) {
                const Vec3& a = x[topology.faces[f][0]];
                const Vec3& b = x[topology.faces[f][1]];
                const Vec3& c = x[topology.faces[f][2]];
                const double e = (a[d] + b[d] + c[d]) / 3.0 - plane.point[d];
                d2 += e * e;
            }
            if (d2 > radius2) return;
        }
        cut[f] = 1;
    });

    return separate_faces(mesh, topology, cut);
}

CutResult separate_faces(const TetMesh& mesh, const Topology& topology,
                         std::span<const std::uint8_t> cut) {
    EDN_VERIFY(cut.size() == static_cast<std::size_t>(topology.num_faces()), ErrorCode::Usage,
               "cut: expected " << topology.num_faces() << " face flags, got " << cut.size());
    const Index num_cells = mesh.num_cells();
    const Index num_vertices = mesh.num_vertices();
    const Index num_faces = topology.num_faces();
    // Star groups: count copies per vertex, scan, then label every (vertex, cell) entry.
    std::vector<Index> copies(num_vertices + 1, 0);
    const Csr& vertex_cells = topology.vertex_cells;
    std::vector<Index> labels(vertex_cells.indices.size(), 0);
    parallel_for(0, num_vertices, [&](std::int64_t v) {
        const Index vi = static_cast<Index>(v);
        if (vertex_cells.row_size(vi) == 0) return;
        copies[v] =
            star_groups(topology, mesh.cells, cut, vi, labels.data() + vertex_cells.offsets[vi]);
    });
    std::vector<Index> first_copy(num_vertices + 1, 0); // exclusive scan, offset by #V
    {
        std::int64_t total = num_vertices;
        for (Index v = 0; v < num_vertices; ++v) {
            first_copy[v] = static_cast<Index>(total);
            total += copies[v];
        }
        EDN_VERIFY(total <= std::numeric_limits<Index>::max(), ErrorCode::OutOfMemory,
                   "cut: " << total << " vertices exceed the 32-bit index range");
        first_copy[num_vertices] = static_cast<Index>(total);
    }

    CutResult result;
    const Index new_vertices = first_copy[num_vertices];
    result.duplicated_vertices = new_vertices - num_vertices;
    result.vertex_origin.resize(new_vertices);
    std::iota(result.vertex_origin.begin(), result.vertex_origin.begin() + num_vertices, 0);
    for (Index v = 0; v < num_vertices; ++v)
        for (Index k = 0; k < copies[v]; ++k) result.vertex_origin[first_copy[v] + k] = v;
    result.mesh.positions.resize(new_vertices);
    for (Index v = 0; v < new_vertices; ++v)
        result.mesh.positions[v] = mesh.positions[result.vertex_origin[v]];

    // 4. Renumber the cells' vertices.
    result.mesh.cells = mesh.cells;
    parallel_for(0, num_cells, [&](std::int64_t c) {
        for (Index& v : result.mesh.cells[c]) {
            const auto star = vertex_cells.row(v);
            const Index i = static_cast<Index>(
                std::lower_bound(star.begin(), star.end(), static_cast<Index>(c)) - star.begin());
            const Index label = labels[vertex_cells.offsets[v] + i];
            if (label > 0) v = first_copy[v] + label - 1;
        }
    });

    // Cut faces that the duplication actually separated (all at once, or only partly at a
    // crack front): the two cells no longer hold the same three vertices.
    std::int64_t separated = 0;
    for (Index f = 0; f < num_faces; ++f) {
        if (!cut[f]) continue;
        const auto pair = topology.face_cells.row(f);
        const Cell& a = result.mesh.cells[pair[0]];
        const Cell& b = result.mesh.cells[pair[1]];
        int shared = 0;
        for (Index va : a)
            for (Index vb : b) shared += va == vb;
        separated += shared < 3;
    }
    result.cut_faces = static_cast<Index>(separated);
    return result;
}

} // namespace edn
