#include "sim/surface_tessellation.hpp"

#include "core/dispatch.hpp"
#include "core/error.hpp"
#include "fem/lagrange_tet.hpp"

#include <algorithm>
#include <map>

namespace edn {

int default_surface_subdivisions(int order) {
    return order <= 1 ? 1 : order == 2 ? 4 : 6;
}

SurfaceTessellation tessellate_boundary(const BoundaryTriangles& boundary,
                                        const std::vector<Cell>& cells, int order,
                                        int subdivisions) {
    EDN_VERIFY(subdivisions >= 1, ErrorCode::Usage, "surface subdivisions must be >= 1");
    EDN_VERIFY(boundary.face_cell.size() == boundary.triangles.size(), ErrorCode::Internal,
               "boundary triangles without their cells");
    const int n = subdivisions;
    SurfaceTessellation t;
    t.order = order;
    const std::size_t corners = boundary.mesh_vertex.size();
    t.point_cell.assign(corners, -1);
    t.point_bary.assign(corners, {0, 0, 0, 0});
    // A lattice point off the corners is identified by the mesh vertices it lies between and
    // its integer weights on them (sorted by vertex): the same key from every face sharing it.
    std::map<std::array<Index, 6>, Index> shared;
    std::vector<Index> lattice(static_cast<std::size_t>((n + 1) * (n + 2) / 2));
    auto lattice_index = [n](int i, int j) { return j * (n + 1) - j * (j - 1) / 2 + i; };
    for (std::size_t f = 0; f < boundary.triangles.size(); ++f) {
        const Index cell = boundary.face_cell[f];
        const Cell& vertices = cells[static_cast<std::size_t>(cell)];
        std::array<Index, 3> global{};
        std::array<int, 3> local{};
        for (int k = 0; k < 3; ++k) {
            const Index s = boundary.triangles[f][k];
            global[k] = boundary.mesh_vertex[static_cast<std::size_t>(s)];
            const auto at = std::find(vertices.begin(), vertices.end(), global[k]);
            EDN_VERIFY(at != vertices.end(), ErrorCode::Internal,
                       "boundary face " << f << " is not a face of its cell " << cell);
            local[k] = static_cast<int>(at - vertices.begin());
        }
        for (int j = 0; j <= n; ++j) {
            for (int i = 0; i + j <= n; ++i) {
                // Weights on the face's corners A, B, C: u runs A -> B, v runs A -> C.
                const std::array<int, 3> w = {n - i - j, i, j};
                std::array<double, 4> bary = {0, 0, 0, 0};
                for (int k = 0; k < 3; ++k)
                    bary[static_cast<std::size_t>(local[k])] = static_cast<double>(w[k]) / n;
                Index point = -1;
                for (int k = 0; k < 3; ++k)
                    if (w[k] == n) point = boundary.triangles[f][k];
                if (point >= 0) {
                    if (t.point_cell[static_cast<std::size_t>(point)] < 0) {
                        t.point_cell[static_cast<std::size_t>(point)] = cell;
                        t.point_bary[static_cast<std::size_t>(point)] = bary;
                    }
                } else {
                    std::array<std::pair<Index, Index>, 3> parts;
                    for (int k = 0; k < 3; ++k) parts[k] = {w[k] == 0 ? -1 : global[k], w[k]};
                    std::sort(parts.begin(), parts.end());
                    const std::array<Index, 6> key = {parts[0].first, parts[0].second,
                                                      parts[1].first, parts[1].second,
                                                      parts[2].first, parts[2].second};
                    const auto [it, inserted] =
                        shared.try_emplace(key, static_cast<Index>(t.point_cell.size()));
                    if (inserted) {
                        t.point_cell.push_back(cell);
                        t.point_bary.push_back(bary);
                    }
                    point = it->second;
                }
                lattice[static_cast<std::size_t>(lattice_index(i, j))] = point;
            }
        }
        for (int j = 0; j < n; ++j) {
            for (int i = 0; i + j < n; ++i) {
                const Index a = lattice[static_cast<std::size_t>(lattice_index(i, j))];
                const Index b = lattice[static_cast<std::size_t>(lattice_index(i + 1, j))];
                const Index c = lattice[static_cast<std::size_t>(lattice_index(i, j + 1))];
                t.triangles.push_back({a, b, c}); // oriented as (A, B, C)
                if (i + j + 1 < n) {
                    const Index d = lattice[static_cast<std::size_t>(lattice_index(i + 1, j + 1))];
                    t.triangles.push_back({b, d, c});
                }
            }
        }
    }
    return t;
}

SurfaceMesh evaluate_tessellation(const SurfaceTessellation& tessellation,
                                  const FrameSnapshot& frame) {
    EDN_VERIFY(tessellation.order == frame.order, ErrorCode::Internal,
               "surface tessellation of order " << tessellation.order << " for order "
                                                << frame.order);
    SurfaceMesh surface;
    surface.triangles = tessellation.triangles;
    surface.positions.resize(tessellation.point_cell.size());
    with_order(frame.order, [&]<int P>() {
        using Basis = LagrangeTet<P, double>;
        for (std::size_t r = 0; r < surface.positions.size(); ++r) {
            double N[Basis::num_nodes] = {};
            Basis::eval(tessellation.point_bary[r].data(), N);
            const Index* nodes =
                frame.cell_nodes.data() +
                static_cast<std::size_t>(tessellation.point_cell[r]) * Basis::num_nodes;
            Vec3 x = {0, 0, 0};
            for (int k = 0; k < Basis::num_nodes; ++k) {
                // Skip zero weights: a corner is then its vertex node bit for bit.
                if (N[k] == 0) continue;
                const double* xk = frame.positions.data() + 3 * static_cast<std::size_t>(nodes[k]);
                for (int d = 0; d < 3; ++d) x[d] += N[k] * xk[d];
            }
            surface.positions[r] = x;
        }
    });
    return surface;
}

} // namespace edn
