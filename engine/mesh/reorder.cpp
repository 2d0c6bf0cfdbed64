#include "mesh/reorder.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace edn {
namespace {

/// Spreads the low 21 bits of v so that two zero bits separate each.
std::uint64_t spread_bits(std::uint64_t v) {
    v &= 0x1fffff;
    v = (v | v << 32) & 0x1f00000000ffffull;
    v = (v | v << 16) & 0x1f0000ff0000ffull;
    v = (v | v << 8) & 0x100f00f00f00f00full;
    v = (v | v << 4) & 0x10c30c30c30c30c3ull;
    v = (v | v << 2) & 0x1249249249249249ull;
    return v;
}

/// Morton codes of points in the box [lo, lo + extent].
struct MortonCoder {
    Vec3 lo{}, scale{};
    explicit MortonCoder(const std::vector<Vec3>& points) {
        Vec3 hi{};
        lo = hi = points.empty() ? Vec3{0, 0, 0} : points[0];
        for (const Vec3& p : points)
            for (int d = 0; d < 3; ++d)
                lo[d] = std::min(lo[d], p[d]), hi[d] = std::max(hi[d], p[d]);
        for (int d = 0; d < 3; ++d) scale[d] = hi[d] > lo[d] ? 2097151.0 / (hi[d] - lo[d]) : 0.0;
    }
    std::uint64_t operator()(const Vec3& p) const {
        std::uint64_t code = 0;
        for (int d = 0; d < 3; ++d) {
            const double q = std::clamp((p[d] - lo[d]) * scale[d], 0.0, 2097151.0);
            code |= spread_bits(static_cast<std::uint64_t>(q)) << d;
        }
        return code;
    }
};

/// Indices 0..n-1 sorted by key (stable, so ties keep their order).
std::vector<Index> sorted_by(const std::vector<std::uint64_t>& keys) {
    std::vector<Index> order(keys.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](Index a, Index b) { return keys[a] < keys[b]; });
    return order;
}

} // namespace

std::vector<Index> morton_vertex_order(const TetMesh& mesh) {
    const MortonCoder coder(mesh.positions);
    std::vector<std::uint64_t> keys(mesh.positions.size());
    parallel_for(0, static_cast<std::int64_t>(keys.size()),
                 [&](std::int64_t i) { keys[i] = coder(mesh.positions[i]); });
    return sorted_by(keys);
}

std::vector<Index> balance_bins(const TetMesh& mesh, std::vector<Index> order, Index window) {
    EDN_VERIFY(window >= 1 && order.size() == mesh.positions.size(), ErrorCode::Usage,
               "balance_bins: window " << window << ", order of " << order.size() << " for "
                                       << mesh.positions.size() << " vertices");
    std::vector<Index> cells_at(mesh.positions.size(), 0);
    for (const Cell& c : mesh.cells)
        for (Index v : c) ++cells_at[v];
    const auto n = static_cast<std::int64_t>(order.size());
    for (std::int64_t begin = 0; begin < n; begin += window)
        std::stable_sort(order.begin() + begin, order.begin() + std::min(n, begin + window),
                         [&](Index a, Index b) { return cells_at[a] < cells_at[b]; });
    return order;
}

TetMesh reorder_mesh(const TetMesh& mesh, const std::vector<Index>& order) {
    EDN_VERIFY(order.size() == mesh.positions.size(), ErrorCode::Usage,
               "reorder_mesh: permutation of " << order.size() << " for " << mesh.positions.size()
                                               << " vertices");
    std::vector<Index> new_index(order.size(), -1);
    for (std::size_t i = 0; i < order.size(); ++i) {
        EDN_VERIFY(order[i] >= 0 && order[i] < static_cast<Index>(order.size()) &&
                       new_index[order[i]] < 0,
                   ErrorCode::Usage, "reorder_mesh: not a permutation");
        new_index[order[i]] = static_cast<Index>(i);
    }
    TetMesh out;
    out.positions.resize(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) out.positions[i] = mesh.positions[order[i]];
    std::vector<Vec3> centroids(mesh.cells.size());
    std::vector<Cell> renamed(mesh.cells.size());
    parallel_for(0, static_cast<std::int64_t>(mesh.cells.size()), [&](std::int64_t c) {
        Vec3 centroid{0, 0, 0};
        for (int k = 0; k < 4; ++k) {
            renamed[c][k] = new_index[mesh.cells[c][k]];
            for (int d = 0; d < 3; ++d) centroid[d] += 0.25 * mesh.positions[mesh.cells[c][k]][d];
        }
        centroids[c] = centroid;
    });
    const MortonCoder coder(centroids);
    std::vector<std::uint64_t> keys(centroids.size());
    for (std::size_t c = 0; c < centroids.size(); ++c) keys[c] = coder(centroids[c]);
    const std::vector<Index> cell_order = sorted_by(keys);
    out.cells.resize(renamed.size());
    for (std::size_t c = 0; c < renamed.size(); ++c) out.cells[c] = renamed[cell_order[c]];
    return out;
}

TetMesh reorder_mesh(const TetMesh& mesh, Reordering reordering) {
    if (reordering == Reordering::None) return mesh;
    std::vector<Index> order = morton_vertex_order(mesh);
    if (reordering == Reordering::MortonBalanced) order = balance_bins(mesh, std::move(order));
    return reorder_mesh(mesh, order);
}

} // namespace edn
