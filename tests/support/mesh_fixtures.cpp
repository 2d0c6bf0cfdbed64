#include "support/mesh_fixtures.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <utility>

namespace edn::test {

double orient3d(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    const Vec3 u = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const Vec3 v = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    const Vec3 w = {d[0] - a[0], d[1] - a[1], d[2] - a[2]};
    return (u[1] * v[2] - u[2] * v[1]) * w[0] + (u[2] * v[0] - u[0] * v[2]) * w[1] +
           (u[0] * v[1] - u[1] * v[0]) * w[2];
}

TetMesh make_single_tet() {
    TetMesh mesh;
    mesh.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    mesh.cells = {{0, 1, 2, 3}};
    return mesh;
}

TetMesh make_two_tets() {
    TetMesh mesh = make_single_tet();
    mesh.positions.push_back({1, 1, 1});
    // The normal of (1,2,3) points towards (1,1,1), away from vertex 0: (1,2,3,4) is positive.
    mesh.cells.push_back({1, 2, 3, 4});
    return mesh;
}

TetMesh make_box_mesh(int nx, int ny, int nz, double lx, double ly, double lz) {
    TetMesh mesh;
    auto id = [&](int i, int j, int k) {
        return static_cast<Index>(i + (nx + 1) * (j + (ny + 1) * k));
    };
    for (int k = 0; k <= nz; ++k)
        for (int j = 0; j <= ny; ++j)
            for (int i = 0; i <= nx; ++i)
                mesh.positions.push_back({lx * i / nx, ly * j / ny, lz * k / nz});
    const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i)
                for (const auto& perm : perms) {
                    // Path 000 -> +e_perm0 -> +e_perm1 -> 111 through the hexahedron's corners.
                    int corner[3] = {i, j, k};
                    Cell cell;
                    cell[0] = id(corner[0], corner[1], corner[2]);
                    for (int step = 0; step < 3; ++step) {
                        ++corner[perm[step]];
                        cell[step + 1] = id(corner[0], corner[1], corner[2]);
                    }
                    const auto& p = mesh.positions;
                    if (orient3d(p[cell[0]], p[cell[1]], p[cell[2]], p[cell[3]]) < 0)
                        std::swap(cell[2], cell[3]);
                    mesh.cells.push_back(cell);
                }
    return mesh;
}

TetMesh make_random_perturbed_box(int nx, int ny, int nz, double lx, double ly, double lz,
                                  double jitter, std::uint32_t seed) {
    TetMesh mesh = make_box_mesh(nx, ny, nz, lx, ly, lz);
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    const double h[3] = {lx / nx, ly / ny, lz / nz};
    for (int k = 1; k < nz; ++k)
        for (int j = 1; j < ny; ++j)
            for (int i = 1; i < nx; ++i) {
                Vec3& x = mesh.positions[i + (nx + 1) * (j + (ny + 1) * k)];
                for (int d = 0; d < 3; ++d) x[d] += jitter * h[d] * unit(rng);
            }
    return mesh;
}

TetMesh shuffle_mesh(const TetMesh& mesh, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<Index> new_id(mesh.positions.size());
    std::iota(new_id.begin(), new_id.end(), 0);
    std::shuffle(new_id.begin(), new_id.end(), rng);
    TetMesh out;
    out.positions.resize(mesh.positions.size());
    for (std::size_t v = 0; v < mesh.positions.size(); ++v)
        out.positions[new_id[v]] = mesh.positions[v];
    std::vector<std::size_t> order(mesh.cells.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    for (std::size_t c : order) {
        std::array<int, 4> perm = {0, 1, 2, 3};
        std::shuffle(perm.begin(), perm.end(), rng);
        int inversions = 0;
        for (int a = 0; a < 4; ++a)
            for (int b = a + 1; b < 4; ++b) inversions += perm[a] > perm[b];
        if (inversions % 2 == 1) std::swap(perm[2], perm[3]); // keep the orientation
        Cell cell;
        for (int a = 0; a < 4; ++a) cell[a] = new_id[mesh.cells[c][perm[a]]];
        out.cells.push_back(cell);
    }
    return out;
}

TetMesh concatenate_meshes(const TetMesh& a, const TetMesh& b) {
    TetMesh out = a;
    const Index shift = a.num_vertices();
    out.positions.insert(out.positions.end(), b.positions.begin(), b.positions.end());
    for (Cell cell : b.cells) {
        for (Index& v : cell) v += shift;
        out.cells.push_back(cell);
    }
    return out;
}


} // namespace edn::test
