#include "mesh/cut.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "mesh/star_union_find.hpp"
#include "mesh/topology.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

namespace edn {
namespace {

/// Groups the star of vertex v (cells ascending, as in topology.vertex_cells) and writes, per
/// star entry, 0 when the entry keeps v and k >= 1 for the k-th new copy of v. Returns the
/// number of new copies. Pre-existing pinches (parts of the star that share no face even without
/// cuts) are kept on v: only cut-separated groups inside one face-connected part are copied.
Index star_groups(const Topology& topology, const std::vector<Cell>& cells,
                  std::span<const std::uint8_t> cut, Index v, Index* labels) {
    const auto star = topology.vertex_cells.row(v);
    const int k = static_cast<int>(star.size());
    StarUnionFind kept(k), whole(k);
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

namespace {

Vec3 cross3(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

double dot3(const Vec3& a, const Vec3& b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

Vec3 minus3(const Vec3& a, const Vec3& b) {
    return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}

/// Twice the signed area of the outline projected across `n` (positive: counter-clockwise
/// seen from the side n points to).
double outline_area2(const std::vector<Vec3>& corners, const Vec3& n) {
    double area = 0;
    for (std::size_t i = 0; i < corners.size(); ++i)
        area += dot3(cross3(corners[i], corners[(i + 1) % corners.size()]), n);
    return area;
}

} // namespace

BladeExtent::BladeExtent(const CutPlane& plane)
    : point_(plane.point), radius2_(plane.radius * plane.radius),
      finite_radius_(std::isfinite(plane.radius)), corners_(plane.outline) {
    // As check_blade: the same unit normal to the bit.
    const Vec3& n = plane.normal;
    const double length = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    unit_ = {n[0] / length, n[1] / length, n[2] / length};
    if (plane.bend) {
        const Vec3& m = plane.bend->normal;
        const double bent_length = std::sqrt(dot3(m, m));
        bend_point_ = plane.bend->point;
        bend_unit_ = {m[0] / bent_length, m[1] / bent_length, m[2] / bent_length};
        // The distances to both planes agree on the plane through the bend line with normal
        // (bent unit - unit): the sides split there, the bent one where `behind` points.
        bend_side_ = minus3(bend_unit_, unit_);
        const double along = dot3(bend_side_, plane.bend->behind);
        bent_ = along != 0;
        if (along < 0) bend_side_ = {-bend_side_[0], -bend_side_[1], -bend_side_[2]};
    }
    if (corners_.empty()) return;
    // Inward normals in the plane: n x edge points inwards for a counter-clockwise outline.
    const double sense = outline_area2(corners_, plane.normal) >= 0 ? 1.0 : -1.0;
    inward_.resize(corners_.size());
    for (std::size_t i = 0; i < corners_.size(); ++i) {
        const Vec3 w =
            cross3(plane.normal, minus3(corners_[(i + 1) % corners_.size()], corners_[i]));
        for (int d = 0; d < 3; ++d) inward_[i][d] = sense * w[d];
    }
}

double BladeExtent::signed_distance(const Vec3& p) const {
    if (bent_ && dot3(bend_side_, minus3(p, bend_point_)) > 0)
        return dot3(bend_unit_, minus3(p, bend_point_));
    double s = 0;
    for (int d = 0; d < 3; ++d) s += unit_[d] * (p[d] - point_[d]);
    return s;
}

bool BladeExtent::holds(const Vec3& p) const {
    if (finite_radius_ && dot3(minus3(p, point_), minus3(p, point_)) > radius2_) return false;
    for (std::size_t i = 0; i < corners_.size(); ++i)
        if (dot3(inward_[i], minus3(p, corners_[i])) < 0) return false;
    return true;
}

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
    if (plane.bend) {
        const BladeBend& bend = *plane.bend;
        for (const Vec3* v : {&bend.point, &bend.normal, &bend.behind})
            for (double x : *v)
                EDN_VERIFY(std::isfinite(x), ErrorCode::Usage, "cut: blade bend must be finite");
        EDN_VERIFY(dot3(bend.normal, bend.normal) > 0 && dot3(bend.behind, bend.behind) > 0,
                   ErrorCode::Usage, "cut: blade bend normal and direction must be non-zero");
    }
    const std::vector<Vec3>& outline = plane.outline;
    if (!outline.empty()) {
        EDN_VERIFY(outline.size() >= 3, ErrorCode::Usage,
                   "cut: a blade outline needs at least 3 corners, got " << outline.size());
        for (const Vec3& corner : outline)
            for (double x : corner)
                EDN_VERIFY(std::isfinite(x), ErrorCode::Usage,
                           "cut: blade outline corners must be finite");
        // Convex: every corner turns the same way (seen along the normal) as the whole outline.
        const double area = outline_area2(outline, n);
        EDN_VERIFY(std::abs(area) > 0, ErrorCode::Usage,
                   "cut: the blade outline has no area across the normal");
        for (std::size_t i = 0; i < outline.size(); ++i) {
            const Vec3& a = outline[i];
            const Vec3& b = outline[(i + 1) % outline.size()];
            const Vec3& c = outline[(i + 2) % outline.size()];
            EDN_VERIFY(dot3(cross3(minus3(b, a), minus3(c, b)), n) * area >= 0, ErrorCode::Usage,
                       "cut: the blade outline must be convex (corner " << (i + 1) % outline.size()
                                                                        << " turns back)");
        }
    }
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
    const BladeExtent extent(plane);
    auto signed_distance = [&](const Vec3& q) {
        if (plane.bend) return extent.signed_distance(q);
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
    parallel_for(0, num_faces, [&](std::int64_t f) {
        const auto pair = topology.face_cells.row(static_cast<Index>(f));
        if (pair.size() != 2 || positive[pair[0]] == positive[pair[1]]) return;
        if (extent.bounded()) {
            const Vec3& a = x[topology.faces[f][0]];
            const Vec3& b = x[topology.faces[f][1]];
            const Vec3& c = x[topology.faces[f][2]];
            Vec3 centroid{};
            for (int d = 0; d < 3; ++d) centroid[d] = (a[d] + b[d] + c[d]) / 3.0;
            if (!extent.holds(centroid)) return;
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
