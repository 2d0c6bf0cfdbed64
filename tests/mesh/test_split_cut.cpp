// Plane cuts that split the crossed cells (mesh/split_cut.hpp), checked against brute force:
// faces from sorted vertex triples (conformity, boundary faces on the old boundary or on the
// plane), the section of a box computed analytically, volumes, nesting, the Bin-BCSR* pattern at
// p = 1..3, field transfer exactness, and random cuts interleaved with refinements and undos.

#include "core/error.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/refine.hpp"
#include "mesh/split_cut.hpp"
#include "mesh/topology.hpp"
#include "sim/state_transfer.hpp"
#include "support/files.hpp"
#include "support/mesh_fixtures.hpp"
#include "support/pattern_check.hpp"
#include "support/random.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <gtest/gtest.h>
#include <map>
#include <numbers>
#include <random>
#include <string>

namespace edn {
namespace {

using FaceKey = std::array<Index, 3>;

Vec3 sub(const Vec3& a, const Vec3& b) {
    return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
Vec3 cross(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec3& a, const Vec3& b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
double norm(const Vec3& a) {
    return std::sqrt(dot(a, a));
}

double extent_of(const TetMesh& mesh) {
    Vec3 lo = mesh.positions[0], hi = lo;
    for (const Vec3& p : mesh.positions)
        for (int d = 0; d < 3; ++d) lo[d] = std::min(lo[d], p[d]), hi[d] = std::max(hi[d], p[d]);
    return norm(sub(hi, lo));
}

double plane_distance(const CutPlane& plane, const Vec3& p) {
    return dot(plane.normal, sub(p, plane.point)) / norm(plane.normal);
}

/// Brute force: every face (sorted triple) -> the (cell, opposite local vertex) pairs holding it.
std::map<FaceKey, std::vector<std::pair<Index, int>>> faces_brute(const TetMesh& mesh) {
    std::map<FaceKey, std::vector<std::pair<Index, int>>> faces;
    for (Index t = 0; t < mesh.num_cells(); ++t)
        for (int i = 0; i < 4; ++i) {
            const auto& l = kCellFaceVertices[i];
            FaceKey f = {mesh.cells[t][l[0]], mesh.cells[t][l[1]], mesh.cells[t][l[2]]};
            std::sort(f.begin(), f.end());
            faces[f].push_back({t, i});
        }
    return faces;
}

/// Boundary triangles (positions) of `mesh`, by brute force.
std::vector<std::array<Vec3, 3>> boundary_triangles(const TetMesh& mesh) {
    std::vector<std::array<Vec3, 3>> out;
    for (const auto& [key, cells] : faces_brute(mesh))
        if (cells.size() == 1)
            out.push_back({mesh.positions[key[0]], mesh.positions[key[1]], mesh.positions[key[2]]});
    return out;
}

double area(const std::array<Vec3, 3>& t) {
    return 0.5 * norm(cross(sub(t[1], t[0]), sub(t[2], t[0])));
}

/// Whether p lies on triangle t (distance to its plane and barycentric coordinates within tol).
bool on_triangle(const std::array<Vec3, 3>& t, const Vec3& p, double tol) {
    const Vec3 n = cross(sub(t[1], t[0]), sub(t[2], t[0]));
    const double a2 = dot(n, n);
    if (std::abs(dot(n, sub(p, t[0]))) > tol * std::sqrt(a2)) return false;
    for (int k = 0; k < 3; ++k) {
        const Vec3 c = cross(sub(t[(k + 1) % 3], t[k]), sub(p, t[k]));
        if (dot(c, n) < -tol * std::sqrt(a2)) return false;
    }
    return true;
}

/// Conformity by brute force: every face in one or two cells; an interior face's two cells lie
/// on opposite sides of it; all cells positive. No hanging node: a vertex in the middle of
/// another cell's face or edge would leave a face with a single cell inside the body, which the
/// boundary checks of the callers (area, position) catch.
void expect_conforming(const TetMesh& mesh) {
    for (const Cell& c : mesh.cells)
        ASSERT_GT(signed_volume(mesh.positions[c[0]], mesh.positions[c[1]], mesh.positions[c[2]],
                                mesh.positions[c[3]]),
                  0);
    for (const auto& [key, cells] : faces_brute(mesh)) {
        ASSERT_LE(cells.size(), 2u);
        if (cells.size() != 2) continue;
        const Vec3& a = mesh.positions[key[0]];
        const Vec3& b = mesh.positions[key[1]];
        const Vec3& c = mesh.positions[key[2]];
        const Vec3 n = cross(sub(b, a), sub(c, a));
        const Vec3& p = mesh.positions[mesh.cells[cells[0].first][cells[0].second]];
        const Vec3& q = mesh.positions[mesh.cells[cells[1].first][cells[1].second]];
        ASSERT_LT(dot(n, sub(p, a)) * dot(n, sub(q, a)), 0) << "face on one side";
    }
}

/// Every boundary face of the cut lies on the old boundary or on the plane (then within the
/// radius); returns the area of the faces on the plane (not on the old boundary).
double check_boundary(const TetMesh& before, const SplitCutResult& r, const CutPlane& plane,
                      double snap_tolerance) {
    const double extent = extent_of(before);
    const auto old_boundary = boundary_triangles(before);
    double plane_area = 0;
    for (const auto& tri : boundary_triangles(r.mesh)) {
        Vec3 centroid{};
        for (const Vec3& p : tri)
            for (int d = 0; d < 3; ++d) centroid[d] += p[d] / 3;
        bool on_old = false;
        for (const auto& o : old_boundary)
            if (on_triangle(o, centroid, 1e-12 * extent)) on_old = true;
        if (on_old) continue;
        for (const Vec3& p : tri) {
            EXPECT_LE(std::abs(plane_distance(plane, p)), snap_tolerance + 1e-12 * extent);
            if (std::isfinite(plane.radius)) {
                EXPECT_LE(norm(sub(p, plane.point)), plane.radius);
            }
        }
        plane_area += area(tri);
    }
    return plane_area;
}

/// Every new cell inside its parent; the children's volumes sum to the parent's.
void expect_nested(const TetMesh& before, const SplitCutResult& r) {
    ASSERT_EQ(r.cell_parent.size(), r.mesh.cells.size());
    std::vector<double> sum(before.num_cells(), 0.0);
    for (Index t = 0; t < r.mesh.num_cells(); ++t) {
        const Cell& c = r.mesh.cells[t];
        const Cell& p = before.cells[r.cell_parent[t]];
        const auto& x = r.mesh.positions;
        const auto& y = before.positions;
        const double whole = signed_volume(y[p[0]], y[p[1]], y[p[2]], y[p[3]]);
        sum[r.cell_parent[t]] += signed_volume(x[c[0]], x[c[1]], x[c[2]], x[c[3]]);
        for (Index v : c)
            for (int i = 0; i < 4; ++i) {
                std::array<Vec3, 4> q = {y[p[0]], y[p[1]], y[p[2]], y[p[3]]};
                q[i] = x[v];
                EXPECT_GE(signed_volume(q[0], q[1], q[2], q[3]), -1e-12 * whole);
            }
    }
    for (Index t = 0; t < before.num_cells(); ++t) {
        const Cell& p = before.cells[t];
        const auto& y = before.positions;
        const double whole = signed_volume(y[p[0]], y[p[1]], y[p[2]], y[p[3]]);
        EXPECT_NEAR(sum[t], whole, 1e-12 * whole);
    }
}

/// Area of the section of the box [0,l] by the plane: the convex polygon of the plane's
/// crossings of the 12 box edges, sorted by angle around its centroid.
double box_section_area(const Vec3& l, const CutPlane& plane) {
    std::vector<Vec3> points;
    for (int axis = 0; axis < 3; ++axis)
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) {
                Vec3 a{}, b{};
                const int u = (axis + 1) % 3, w = (axis + 2) % 3;
                a[u] = b[u] = i * l[u];
                a[w] = b[w] = j * l[w];
                a[axis] = 0;
                b[axis] = l[axis];
                const double da = plane_distance(plane, a), db = plane_distance(plane, b);
                if (da * db < 0) {
                    const double t = da / (da - db);
                    points.push_back({a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]),
                                      a[2] + t * (b[2] - a[2])});
                }
            }
    Vec3 c{};
    for (const Vec3& p : points)
        for (int d = 0; d < 3; ++d) c[d] += p[d] / points.size();
    const Vec3 n = plane.normal;
    const Vec3 e0 = sub(points[0], c);
    const Vec3 e1 = cross(n, e0);
    std::sort(points.begin(), points.end(), [&](const Vec3& p, const Vec3& q) {
        return std::atan2(dot(sub(p, c), e1), dot(sub(p, c), e0)) <
               std::atan2(dot(sub(q, c), e1), dot(sub(q, c), e0));
    });
    double s = 0;
    for (std::size_t k = 0; k < points.size(); ++k)
        s += area({c, points[k], points[(k + 1) % points.size()]});
    return s;
}

/// Snapped vertices only treated as on the blade, never moved: the split is nested.
SplitCutOptions unmoved() {
    SplitCutOptions o;
    o.move_snapped = false;
    return o;
}

/// A full cut of a box: every target of the issue.
void check_full_box_cut(const TetMesh& mesh, const Vec3& l, const CutPlane& plane) {
    const SplitCutResult r = split_cut(mesh, plane);
    SCOPED_TRACE("snapped " + std::to_string(r.snapped_vertices) + ", moved " +
                 std::to_string(r.moved_vertices));
    expect_conforming(r.mesh);
    const double volume = total_volume(mesh);
    EXPECT_NEAR(total_volume(r.mesh), volume, 1e-12 * volume);
    if (r.moved_vertices == 0) expect_nested(mesh, r);
    const SplitCutResult nested = split_cut(mesh, plane, {}, unmoved());
    expect_conforming(nested.mesh);
    expect_nested(mesh, nested);
    EXPECT_GE(nested.after.min_dihedral_deg, nested.dihedral_bound_deg);
    EXPECT_EQ(nested.components, 2);
    const double section = box_section_area(l, plane);
    const double on_plane = check_boundary(mesh, r, plane, r.max_snap_distance);
    // Every snapped vertex moved onto the blade: the cut faces are exactly the section.
    if (r.snapped_vertices == 0) {
        EXPECT_NEAR(on_plane, 2 * section, 1e-9 * section);
    }
    EXPECT_EQ(r.components, 2);
    EXPECT_EQ(count_components(r.mesh), 2);
    EXPECT_GT(r.split_cells, 0);
    EXPECT_GT(r.cut_faces, 0);
    EXPECT_EQ(r.cells_after, r.mesh.num_cells());
    EXPECT_DOUBLE_EQ(r.dihedral_bound_deg, std::min(2.0, 0.5 * min_dihedral_angle_deg(mesh)));
    EXPECT_GE(min_dihedral_angle_deg(r.mesh), r.dihedral_bound_deg);
    EXPECT_DOUBLE_EQ(r.after.min_dihedral_deg, min_dihedral_angle_deg(r.mesh));
    for (int p = 1; p <= 3; ++p) test::check_pattern(r.mesh, p);
}

TEST(SplitCut, AxisPlaneThroughABoxIsExact) {
    const TetMesh mesh = test::make_box_mesh(4, 3, 3, 2.0, 1.5, 1.5);
    CutPlane plane;
    plane.point = {0.93, 0.7, 0.7};
    plane.normal = {1, 0, 0};
    check_full_box_cut(mesh, {2.0, 1.5, 1.5}, plane);
    const SplitCutResult r = split_cut(mesh, plane);
    EXPECT_EQ(r.snapped_vertices, 0);
    // Every new boundary vertex on the plane to 1e-12 of the extent.
    for (const auto& tri : boundary_triangles(r.mesh))
        for (const Vec3& p : tri)
            if (std::abs(p[0] - 0.93) < 0.05) {
                EXPECT_NEAR(p[0], 0.93, 1e-12 * extent_of(mesh));
            }
}

TEST(SplitCut, ObliquePlanesThroughShuffledBoxes) {
    const TetMesh mesh = test::shuffle_mesh(test::make_box_mesh(5, 4, 3, 2.0, 1.5, 1.0), 3);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(0.35, 0.65);
    int exact = 0;
    for (int k = 0; k < 6; ++k) {
        CutPlane plane;
        plane.point = {2.0 * u(rng), 1.5 * u(rng), 1.0 * u(rng)};
        plane.normal = test::random_unit(rng);
        if (std::abs(plane.normal[0]) < 0.5) plane.normal[0] = 0.5; // through the long axis
        SCOPED_TRACE("plane " + std::to_string(k));
        check_full_box_cut(mesh, {2.0, 1.5, 1.0}, plane);
        exact += split_cut(mesh, plane).snapped_vertices == 0;
    }
    EXPECT_GE(exact, 4); // the area target checked where every snap moved its vertex
}

TEST(SplitCut, KnownObliqueSectionWithoutSnaps) {
    // Planes through a box with no crossing near a vertex (none snaps): the cut faces are exactly
    // the section, every new vertex on the plane to 1e-12 of the extent.
    const TetMesh mesh = test::make_box_mesh(4, 4, 4, 1.0, 1.0, 1.0);
    const double extent = extent_of(mesh);
    int checked = 0;
    for (int k = 0; k < 20 && checked < 3; ++k) {
        CutPlane plane;
        plane.point = {0.5 + 0.013 * k, 0.52, 0.53};
        plane.normal = {1, 0.31, 0.17};
        const SplitCutResult r = split_cut(mesh, plane);
        if (r.snapped_vertices != 0) continue;
        ++checked;
        SCOPED_TRACE("k " + std::to_string(k));
        check_full_box_cut(mesh, {1, 1, 1}, plane);
        for (Index v = mesh.num_vertices(); v < r.mesh.num_vertices(); ++v)
            EXPECT_LE(std::abs(plane_distance(plane, r.mesh.positions[v])), 1e-12 * extent);
    }
    EXPECT_EQ(checked, 3);
}

TEST(SplitCut, PlaneThroughAVertexLayerOnlySeparates) {
    // Every crossing is at a vertex: nothing is split, the faces of the layer are opened (the
    // same as the face cut).
    const TetMesh mesh = test::make_box_mesh(2, 2, 4, 0.4, 0.4, 2.0);
    CutPlane plane;
    plane.point = {0.2, 0.2, 1.0};
    plane.normal = {0, 0, 1};
    const SplitCutResult r = split_cut(mesh, plane);
    EXPECT_EQ(r.split_cells, 0);
    EXPECT_EQ(r.new_vertices, 0);
    EXPECT_EQ(r.cut_faces, 8);
    EXPECT_EQ(r.duplicated_vertices, 9);
    EXPECT_EQ(r.components, 2);
}

TEST(SplitCut, SnapsNearVerticesAndKeepsTheBound) {
    // A plane just off a vertex layer: the crossings within 5% of an edge snap to the layer.
    const TetMesh mesh = test::make_random_perturbed_box(4, 4, 4, 1.0, 1.0, 1.0, 0.12, 9);
    for (double offset : {1e-9, 1e-4, 0.01, 0.03, 0.07, 0.11}) {
        SCOPED_TRACE("offset " + std::to_string(offset));
        CutPlane plane;
        plane.point = {0.5 + offset, 0.5, 0.5};
        plane.normal = {1, 0.05, -0.02};
        for (bool move : {true, false}) {
            SplitCutOptions o;
            o.move_snapped = move;
            const SplitCutResult r = split_cut(mesh, plane, {}, o);
            expect_conforming(r.mesh);
            if (!move) expect_nested(mesh, r);
            if (!move) {
                EXPECT_EQ(r.moved_vertices, 0);
            }
            EXPECT_GE(min_dihedral_angle_deg(r.mesh), r.dihedral_bound_deg);
            EXPECT_NEAR(total_volume(r.mesh), total_volume(mesh), 1e-12 * total_volume(mesh));
            EXPECT_EQ(r.components, 2);
            check_boundary(mesh, r, plane, r.max_snap_distance);
            if (offset < 1e-3) {
                EXPECT_GT(r.snapped_vertices + r.moved_vertices, 0);
            }
        }
    }
}

TEST(SplitCut, PartialCutEndsInsideAndStaysConforming) {
    const TetMesh mesh = test::make_random_perturbed_box(6, 6, 3, 1.2, 1.2, 0.6, 0.1, 4);
    CutPlane plane;
    plane.point = {0.61, 0.0, 0.3};
    plane.normal = {1, 0.1, 0.05};
    plane.radius = 0.7;
    const SplitCutResult r = split_cut(mesh, plane, {}, unmoved());
    expect_conforming(r.mesh);
    expect_nested(mesh, r);
    EXPECT_GT(r.cut_faces, 0);
    EXPECT_EQ(r.components, 1); // a crack, not two parts
    EXPECT_GE(min_dihedral_angle_deg(r.mesh), r.dihedral_bound_deg);
    EXPECT_NEAR(total_volume(r.mesh), total_volume(mesh), 1e-12 * total_volume(mesh));
    const double opened = check_boundary(mesh, r, plane, r.max_snap_distance);
    EXPECT_GT(opened, 0);
    // Less than the full section's two sides.
    CutPlane full = plane;
    full.radius = std::numeric_limits<double>::infinity();
    const SplitCutResult whole = split_cut(mesh, full, {}, unmoved());
    EXPECT_LT(r.cut_faces, whole.cut_faces);
    EXPECT_LT(r.split_cells, whole.split_cells);
    for (int p = 1; p <= 3; ++p) test::check_pattern(r.mesh, p);
}

/// A polynomial field of degree `order` in the rest position (exactly representable at p).
Vec3 field(const Vec3& x, int order) {
    Vec3 f = {0.3 * x[0] - 0.2 * x[1] + 1.0, 0.5 * x[2] + 0.1 * x[0], -0.4 * x[1] + 0.7};
    if (order >= 2) f[0] += 0.25 * x[0] * x[1] - 0.3 * x[2] * x[2];
    if (order >= 3) f[1] += 0.2 * x[0] * x[1] * x[2] - 0.1 * x[0] * x[0] * x[0];
    return f;
}

TEST(SplitCut, FieldTransferIsExactAtEveryOrder) {
    const TetMesh mesh =
        test::shuffle_mesh(test::make_random_perturbed_box(3, 3, 3, 1, 1, 1, 0.1, 2), 8);
    CutPlane plane;
    plane.point = {0.5, 0.47, 0.52};
    plane.normal = {0.8, -0.3, 0.4};
    const SplitCutResult r = split_cut(mesh, plane, {}, unmoved());
    EXPECT_GT(r.split_cells, 0);
    for (int order = 1; order <= 3; ++order) {
        SCOPED_TRACE("order " + std::to_string(order));
        const Topology old_topology = build_topology(mesh);
        const NodeLayout old_layout = make_node_layout(old_topology, order);
        const std::vector<Vec3> old_nodes = node_positions(mesh, old_topology, old_layout);
        NodeState state;
        for (const Vec3& x : old_nodes) {
            const Vec3 f = field(x, order);
            const Vec3 g = field(x, 1);
            for (int d = 0; d < 3; ++d) {
                state.positions.push_back(f[d]);
                state.velocities.push_back(g[d]);
            }
            state.pinned.push_back(0);
        }
        const StateTransfer t =
            transfer_node_state_nested(mesh, r.mesh, r.cell_parent, order, state);
        const Topology topology = build_topology(r.mesh);
        const NodeLayout layout = make_node_layout(topology, order);
        const std::vector<Vec3> nodes = node_positions(r.mesh, topology, layout);
        ASSERT_EQ(t.state.positions.size(), 3 * nodes.size());
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const Vec3 f = field(nodes[i], order), g = field(nodes[i], 1);
            for (int d = 0; d < 3; ++d) {
                EXPECT_NEAR(t.state.positions[3 * i + d], f[d], 1e-12) << "node " << i;
                EXPECT_NEAR(t.state.velocities[3 * i + d], g[d], 1e-12) << "node " << i;
            }
        }
    }
}

/// A smooth deformation of the unit box (what a simulation's sag and twist look like).
Vec3 deform(const Vec3& X) {
    return {X[0] + 0.05 * std::sin(2 * X[2]), X[1] + 0.03 * X[0] * X[1], X[2] + 0.04 * X[0]};
}

/// The old mesh's piecewise linear map from rest to `x` at rest point p (brute-force search).
Vec3 map_point(const TetMesh& mesh, std::span<const Vec3> x, const Vec3& p) {
    for (const Cell& c : mesh.cells) {
        const auto& y = mesh.positions;
        const double whole = signed_volume(y[c[0]], y[c[1]], y[c[2]], y[c[3]]);
        std::array<double, 4> L{};
        bool inside = true;
        for (int i = 0; i < 4; ++i) {
            std::array<Vec3, 4> q = {y[c[0]], y[c[1]], y[c[2]], y[c[3]]};
            q[i] = p;
            L[i] = signed_volume(q[0], q[1], q[2], q[3]) / whole;
            inside = inside && L[i] >= -1e-10;
        }
        if (!inside) continue;
        Vec3 out{};
        for (int i = 0; i < 4; ++i)
            for (int d = 0; d < 3; ++d) out[d] += L[i] * x[c[i]][d];
        return out;
    }
    ADD_FAILURE() << "point outside the mesh";
    return {};
}

TEST(SplitCut, SnapsOnADeformedBladeMoveBothShapes) {
    // The blade is measured on deformed positions (as Simulation::cut does) just off a deformed
    // vertex: snapped vertices move onto the blade in the deformed shape, and their rest
    // positions to the points the old deformation maps there, so the cut surface is the blade.
    const TetMesh mesh = test::make_random_perturbed_box(4, 4, 4, 1.0, 1.0, 1.0, 0.12, 9);
    std::vector<Vec3> x;
    for (const Vec3& X : mesh.positions) x.push_back(deform(X));
    const double extent = extent_of(mesh), volume = total_volume(mesh);
    Index near = 0; // the vertex nearest the middle
    for (Index v = 0; v < mesh.num_vertices(); ++v)
        if (norm(sub(mesh.positions[v], {0.5, 0.5, 0.5})) <
            norm(sub(mesh.positions[near], {0.5, 0.5, 0.5})))
            near = v;
    int moved_total = 0;
    for (double offset : {1e-9, 1e-4, 0.01}) {
        SCOPED_TRACE("offset " + std::to_string(offset));
        CutPlane plane;
        plane.normal = {0.1, -0.05, 1.0};
        const double length = norm(plane.normal);
        for (int d = 0; d < 3; ++d) plane.point[d] = x[near][d] + offset * plane.normal[d] / length;
        const SplitCutResult r = split_cut(mesh, plane, x);
        moved_total += r.moved_vertices;
        expect_conforming(r.mesh);
        EXPECT_NEAR(total_volume(r.mesh), volume, 1e-12 * volume);
        EXPECT_GE(r.after.min_dihedral_deg, r.dihedral_bound_deg);
        EXPECT_EQ(r.components, 2);
        int moved = 0;
        for (Index v = 0; v < mesh.num_vertices() && r.moved_vertices > 0; ++v) {
            ASSERT_EQ(r.moved_classify.size(), x.size());
            if (r.mesh.positions[v] == mesh.positions[v]) {
                EXPECT_EQ(r.moved_classify[v], x[v]);
                continue;
            }
            ++moved;
            // On the blade in the deformed shape, and where the old deformation takes the new
            // rest position.
            EXPECT_LE(std::abs(plane_distance(plane, r.moved_classify[v])), 1e-12 * extent);
            const Vec3 mapped = map_point(mesh, x, r.mesh.positions[v]);
            for (int d = 0; d < 3; ++d) {
                EXPECT_NEAR(mapped[d], r.moved_classify[v][d], 1e-12 * extent);
            }
        }
        EXPECT_EQ(moved, r.moved_vertices);
        // The nested transfer of the deformed shape (p = 1) puts every vertex of the cut surface
        // on the blade: edge points, vertices on it and moved vertices.
        NodeState state;
        for (const Vec3& p : x)
            for (int d = 0; d < 3; ++d) state.positions.push_back(p[d]);
        state.velocities.assign(state.positions.size(), 0.0);
        state.pinned.assign(x.size(), 0);
        const StateTransfer t = transfer_node_state_nested(mesh, r.mesh, r.cell_parent, 1, state);
        const Topology topology = build_topology(r.mesh);
        for (std::size_t b = 0; b < topology.boundary_faces.size(); ++b) {
            bool old_face = false;
            const Tri& f = topology.boundary_faces[b];
            Vec3 c{};
            for (Index v : f)
                for (int d = 0; d < 3; ++d) c[d] += r.mesh.positions[v][d] / 3;
            for (int d = 0; d < 3; ++d) old_face = old_face || c[d] < 1e-9 || c[d] > 1 - 1e-9;
            if (old_face) continue;
            for (Index v : f) {
                const Vec3 p = {t.state.positions[3 * v], t.state.positions[3 * v + 1],
                                t.state.positions[3 * v + 2]};
                EXPECT_LE(std::abs(plane_distance(plane, p)), 1e-12 * extent) << "vertex " << v;
            }
        }
    }
    EXPECT_GT(moved_total, 0);
    // Without moves the snapped vertices stay and the split is nested.
    SplitCutOptions o;
    o.move_snapped = false;
    CutPlane plane;
    plane.normal = {0.1, -0.05, 1.0};
    for (int d = 0; d < 3; ++d) plane.point[d] = x[near][d] + 1e-4 * plane.normal[d];
    const SplitCutResult nested = split_cut(mesh, plane, x, o);
    EXPECT_EQ(nested.moved_vertices, 0);
    EXPECT_TRUE(nested.moved_classify.empty());
    expect_nested(mesh, nested);
}

TEST(SplitCut, TetGenSphereFullAndPartialCuts) {
    // An unstructured mesh: every crossing configuration, curved boundary (boundary vertices
    // that snap cannot move and stay within the snap distance of the blade).
    const TetMesh mesh = load_tet_mesh(test::source_dir() / "assets" / "sphere.obj");
    const double volume = total_volume(mesh);
    const double radius = extent_of(mesh) / (2 * std::sqrt(3.0)); // of the sphere
    Vec3 center{};
    for (const Vec3& p : mesh.positions)
        for (int d = 0; d < 3; ++d) center[d] += p[d] / mesh.num_vertices();
    std::mt19937 rng(11);
    for (int k = 0; k < 8; ++k) {
        SCOPED_TRACE("cut " + std::to_string(k));
        CutPlane plane;
        const Vec3 shift = test::random_unit(rng);
        for (int d = 0; d < 3; ++d) plane.point[d] = center[d] + 0.2 * radius * shift[d];
        plane.normal = test::random_unit(rng);
        if (k % 2 == 1) plane.radius = 0.5 * radius; // a crack inside the section
        for (bool move : {true, false}) {
            SplitCutOptions o;
            o.move_snapped = move;
            const SplitCutResult r = split_cut(mesh, plane, {}, o);
            expect_conforming(r.mesh);
            if (!move) expect_nested(mesh, r);
            EXPECT_NEAR(total_volume(r.mesh), volume, 1e-12 * volume);
            EXPECT_GE(r.after.min_dihedral_deg, r.dihedral_bound_deg);
            EXPECT_GT(r.cut_faces, 0);
            EXPECT_EQ(r.components, k % 2 == 1 ? 1 : 2);
            check_boundary(mesh, r, plane, r.max_snap_distance);
        }
    }
}

TEST(SplitCut, RejectsBadArguments) {
    const TetMesh mesh = test::make_box_mesh(2, 2, 2, 1, 1, 1);
    CutPlane plane;
    EXPECT_THROW(split_cut(mesh, plane), Error);
    plane.normal = {0, 0, 1};
    plane.radius = 0;
    EXPECT_THROW(split_cut(mesh, plane), Error);
    plane.radius = 1;
    SplitCutOptions bad;
    bad.snap_fraction = 0.5;
    EXPECT_THROW(split_cut(mesh, plane, {}, bad), Error);
    const std::vector<Vec3> few(3);
    EXPECT_THROW(split_cut(mesh, plane, few), Error);
}

/// Random cuts (full and partial) interleaved with sphere refinements and undos: every mesh
/// stays valid (conforming, positive, nested, volume kept, above the dihedral bound).
TEST(SplitCut, RandomCutsRefinementsAndUndos) {
    int cuts_wanted = 30;
    if (const char* env = std::getenv("EDN_SPLIT_CUT_STRESS")) cuts_wanted = std::atoi(env);
    std::mt19937 rng(77);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const TetMesh start = test::make_random_perturbed_box(3, 2, 2, 1.5, 1.0, 1.0, 0.1, 3);
    const double volume = total_volume(start);
    std::vector<TetMesh> history = {start};
    int cuts = 0;
    for (int step = 0; cuts < cuts_wanted; ++step) {
        SCOPED_TRACE("step " + std::to_string(step));
        const TetMesh& mesh = history.back();
        const double roll = u(rng);
        if ((roll < 0.2 || mesh.num_cells() > 3000) && history.size() > 1) {
            history.pop_back(); // undo
            continue;
        }
        Vec3 point;
        for (int d = 0; d < 3; ++d) point[d] = (0.2 + 0.6 * u(rng)) * (d == 0 ? 1.5 : 1.0);
        if (roll < 0.35) {
            const RefineResult r = refine_sphere(mesh, point, 0.2 + 0.2 * u(rng), 1);
            history.push_back(r.mesh);
            continue;
        }
        CutPlane plane;
        plane.point = point;
        plane.normal = test::random_unit(rng);
        if (u(rng) < 0.5) plane.radius = 0.2 + 0.6 * u(rng);
        SplitCutOptions o;
        o.move_snapped = u(rng) < 0.5;
        const SplitCutResult r = split_cut(mesh, plane, {}, o);
        ++cuts;
        expect_conforming(r.mesh);
        if (r.moved_vertices == 0) expect_nested(mesh, r);
        EXPECT_GE(r.after.min_dihedral_deg, r.dihedral_bound_deg);
        EXPECT_NEAR(total_volume(r.mesh), volume, 1e-12 * volume);
        TetMesh copy = r.mesh;
        const TetMeshValidation v = validate_tet_mesh(copy, "cut");
        EXPECT_EQ(v.reoriented_cells, 0);
        EXPECT_EQ(v.dropped_vertices, 0);
        if (HasFailure()) return;
        history.push_back(r.mesh);
    }
    test::check_pattern(history.back(), 2);
}

} // namespace
} // namespace edn
