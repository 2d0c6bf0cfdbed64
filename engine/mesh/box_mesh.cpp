#include "mesh/box_mesh.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"

#include <cstdint>
#include <limits>
#include <utility>

namespace edn {

TetMesh make_box_tet_mesh(int nx, int ny, int nz, Vec3 lo, Vec3 hi) {
    EDN_VERIFY(nx > 0 && ny > 0 && nz > 0, ErrorCode::Usage,
               "box mesh: cell counts must be positive, got " << nx << " x " << ny << " x " << nz);
    for (int d = 0; d < 3; ++d)
        EDN_VERIFY(hi[d] > lo[d], ErrorCode::Usage,
                   "box mesh: empty extent on axis " << d << ": [" << lo[d] << ", " << hi[d]
                                                     << "]");
    const std::int64_t hexes = std::int64_t(nx) * ny * nz;
    const std::int64_t vertices = std::int64_t(nx + 1) * (ny + 1) * (nz + 1);
    EDN_VERIFY(6 * hexes <= std::numeric_limits<Index>::max() &&
                   vertices <= std::numeric_limits<Index>::max(),
               ErrorCode::OutOfMemory,
               "box mesh: " << nx << " x " << ny << " x " << nz << " exceeds 32-bit indices");
    TetMesh mesh;
    mesh.positions.resize(static_cast<std::size_t>(vertices));
    mesh.cells.resize(static_cast<std::size_t>(6 * hexes));
    const std::int64_t sx = nx + 1, sxy = std::int64_t(nx + 1) * (ny + 1);
    parallel_for(0, vertices, [&](std::int64_t v) {
        const std::int64_t i = v % sx, j = (v / sx) % (ny + 1), k = v / sxy;
        // Last layer exactly at hi (no rounding drift), so the volume is exact up to roundoff.
        mesh.positions[v] = {i == nx ? hi[0] : lo[0] + (hi[0] - lo[0]) * double(i) / nx,
                             j == ny ? hi[1] : lo[1] + (hi[1] - lo[1]) * double(j) / ny,
                             k == nz ? hi[2] : lo[2] + (hi[2] - lo[2]) * double(k) / nz};
    });
    // The six monotone lattice paths 000 -> 111 through a hexahedron's corners; the path's axis
    // order decides the cell; odd permutations give a negatively oriented vertex order, so their
    // last two vertices are swapped.
    constexpr int kPaths[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    constexpr bool kOdd[6] = {false, true, true, false, false, true};
    parallel_for(0, hexes, [&](std::int64_t h) {
        const std::int64_t i = h % nx, j = (h / nx) % ny, k = h / (std::int64_t(nx) * ny);
        for (int p = 0; p < 6; ++p) {
            std::int64_t c[3] = {i, j, k};
            Cell cell;
            cell[0] = static_cast<Index>(c[0] + sx * c[1] + sxy * c[2]);
            for (int step = 0; step < 3; ++step) {
                ++c[kPaths[p][step]];
                cell[step + 1] = static_cast<Index>(c[0] + sx * c[1] + sxy * c[2]);
            }
            if (kOdd[p]) std::swap(cell[2], cell[3]);
            mesh.cells[6 * h + p] = cell;
        }
    });
    return mesh;
}

} // namespace edn
