// The bodies of `bench step` and `bench solve` (bench_scene.hpp).
#include "bench_scene.hpp"

#include "core/error.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/mesh_loader.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

namespace edn::bench {
namespace {

/// The drag spring: the centroid of a top-face triangle near the centre of the top, pulled
/// 0.25 m sideways and 0.15 m up (the box is 1 m tall).
DragSpring top_drag(const BoxCase& box, const TetMesh& mesh) {
    const Index i = box.nx / 2, j = box.ny / 2, k = box.nz;
    auto vertex = [&](Index a, Index b) { return a + (box.nx + 1) * (b + (box.ny + 1) * k); };
    // Kuhn split: (i,j), (i+1,j), (i+1,j+1) at the top is a face of the z-x-y path cell.
    DragSpring d;
    d.vertices = {vertex(i, j), vertex(i + 1, j), vertex(i + 1, j + 1)};
    d.weights = {1.0 / 3, 1.0 / 3, 1.0 / 3};
    Vec3 at{0, 0, 0};
    for (Index v : d.vertices)
        for (int a = 0; a < 3; ++a) at[a] += mesh.positions[v][a] / 3;
    d.target = {at[0] + 0.25, at[1], at[2] + 0.15};
    d.stiffness = 2e3;
    return d;
}

} // namespace

BoxCase step_box(std::int64_t max_tets) {
    EDN_VERIFY(max_tets >= 6, ErrorCode::Usage,
               "--max-tets " << max_tets << ": the step benchmark needs at least 6 tets");
    int n = std::max(1, static_cast<int>(std::cbrt(double(max_tets) / 6.0)));
    while (6LL * (n + 1) * (n + 1) * (n + 1) <= max_tets) ++n; // cbrt may round down
    while (n > 1 && 6LL * n * n * n > max_tets) --n;
    BoxCase best{n, n, n};
    for (const BoxCase& c : {BoxCase{n, n, n + 1}, BoxCase{n, n + 1, n + 1}})
        if (c.tets() <= max_tets) best = c;
    return best;
}

StepScene box_scene(const BoxCase& box) {
    StepScene scene;
    scene.name = box.name();
    scene.mesh = make_box_tet_mesh(box.nx, box.ny, box.nz, {0, 0, 0},
                                   {double(box.nx) / box.nz, double(box.ny) / box.nz, 1.0});
    scene.pin_below = 0.25 / box.nz;
    scene.drag = top_drag(box, scene.mesh);
    return scene;
}

StepScene file_scene(const std::string& path) {
    StepScene scene;
    scene.mesh = load_tet_mesh(path);
    scene.name = std::filesystem::path(path).filename().string();
    scene.is_box = false;
    EDN_VERIFY(scene.mesh.num_cells() > 0, ErrorCode::EmptyMesh, path << ": no cells");
    double low = scene.mesh.positions.front()[2], high = low;
    for (const Vec3& x : scene.mesh.positions)
        low = std::min(low, x[2]), high = std::max(high, x[2]);
    const double height = high - low;
    scene.pin_below = low + 0.02 * height;
    const Topology topology = build_topology(scene.mesh);
    double best = -std::numeric_limits<double>::infinity();
    for (const Tri& face : topology.boundary_faces) {
        double z = 0;
        for (Index v : face) z += scene.mesh.positions[v][2] / 3;
        if (z > best) best = z, scene.drag.vertices = {face[0], face[1], face[2]};
    }
    scene.drag.weights = {1.0 / 3, 1.0 / 3, 1.0 / 3};
    Vec3 at{0, 0, 0};
    for (Index v : scene.drag.vertices)
        for (int a = 0; a < 3; ++a) at[a] += scene.mesh.positions[v][a] / 3;
    scene.drag.target = {at[0] + 0.25 * height, at[1], at[2] + 0.15 * height};
    scene.drag.stiffness = 2e3 * height; // a body's stiffness scales with its size (E L)
    return scene;
}

} // namespace edn::bench
