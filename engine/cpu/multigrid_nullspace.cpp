// The near-null space of the smoothed-aggregation multigrid (solver/multigrid.hpp): rigid-body
// modes, the per-aggregate tentative prolongators built from them, and their values-only
// re-computation at the current positions (retentative_multigrid), which keeps the rotational
// near-null modes those of the deformed body's tangent stiffness.
#include "cpu/multigrid_nullspace.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace edn {

void rigid_body_modes(const double position[3], const double center[3], int modes, double* out) {
    const double d[3] = {position[0] - center[0], position[1] - center[1], position[2] - center[2]};
    for (int r = 0; r < 3; ++r)
        for (int c = 0; c < modes; ++c) out[r * modes + c] = 0;
    for (int a = 0; a < 3; ++a) out[a * modes + a] = 1;
    if (modes < 6) return;
    // column 3 + a: e_a x d.
    // e_x x d = (0, -dz, dy); e_y x d = (dz, 0, -dx); e_z x d = (-dy, dx, 0)
    out[1 * modes + 3] = -d[2];
    out[2 * modes + 3] = d[1];
    out[0 * modes + 4] = d[2];
    out[2 * modes + 4] = -d[0];
    out[0 * modes + 5] = -d[1];
    out[1 * modes + 5] = d[0];
}

namespace cpu {
namespace detail {

std::vector<double> rigid_near_null(const double* positions, const std::uint8_t* active,
                                    std::size_t nodes, int modes) {
    std::vector<double> near_null(nodes * 3 * modes, 0.0);
    double center[3] = {0, 0, 0};
    Index free_nodes = 0;
    for (std::size_t i = 0; i < nodes; ++i)
        if (active[i]) {
            for (int a = 0; a < 3; ++a) center[a] += positions[3 * i + a];
            ++free_nodes;
        }
    if (free_nodes > 0)
        for (double& c : center) c /= free_nodes;
    parallel_for(0, static_cast<std::int64_t>(nodes), [&](std::int64_t i) {
        rigid_body_modes(positions + 3 * i, center, modes, near_null.data() + i * 3 * modes);
    });
    return near_null;
}

void tentative_prolongator(MultigridLevel& level, const std::vector<double>& near_null, int modes,
                           std::vector<double>& coarse_near_null) {
    const Index n = level.num_nodes;
    const int b = level.block;
    const std::size_t tb = static_cast<std::size_t>(b) * modes;
    level.tentative.assign(static_cast<std::size_t>(n) * tb, 0.0);
    coarse_near_null.assign(static_cast<std::size_t>(level.coarse_nodes) * modes * modes, 0.0);
    // members of each aggregate, in node order
    std::vector<Index> offsets(static_cast<std::size_t>(level.coarse_nodes) + 1, 0), members;
    for (Index i = 0; i < n; ++i)
        if (level.aggregate[i] >= 0) ++offsets[level.aggregate[i] + 1];
    std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
    members.resize(offsets.back());
    std::vector<Index> fill(offsets.begin(), offsets.end() - 1);
    for (Index i = 0; i < n; ++i)
        if (level.aggregate[i] >= 0) members[fill[level.aggregate[i]]++] = i;

    // Each aggregate writes only its members' T blocks and its own R: any thread count gives the
    // same bits.
    parallel_for(
        0, level.coarse_nodes,
        [&](std::int64_t agg) {
            const Index first = offsets[agg], size = offsets[agg + 1] - first;
            const std::size_t rows = static_cast<std::size_t>(size) * b;
            std::vector<double> q(rows * modes, 0.0); // (b * members) x modes, row-major
            for (Index m = 0; m < size; ++m)
                std::copy_n(near_null.begin() +
                                static_cast<std::ptrdiff_t>(members[first + m] * tb),
                            tb, q.begin() + static_cast<std::ptrdiff_t>(m * tb));
            double* r = coarse_near_null.data() + static_cast<std::size_t>(agg) * modes * modes;
            for (int c = 0; c < modes; ++c) {
                double norm0 = 0;
                for (std::size_t k = 0; k < rows; ++k) norm0 += q[k * modes + c] * q[k * modes + c];
                for (int c2 = 0; c2 < c; ++c2) {
                    double dot = 0;
                    for (std::size_t k = 0; k < rows; ++k)
                        dot += q[k * modes + c2] * q[k * modes + c];
                    r[c2 * modes + c] = dot;
                    for (std::size_t k = 0; k < rows; ++k)
                        q[k * modes + c] -= dot * q[k * modes + c2];
                }
                double norm = 0;
                for (std::size_t k = 0; k < rows; ++k) norm += q[k * modes + c] * q[k * modes + c];
                if (!(norm > 1e-20 * norm0) || norm0 == 0) { // dependent: drop the column
                    for (std::size_t k = 0; k < rows; ++k) q[k * modes + c] = 0;
                    r[c * modes + c] = 0;
                    continue;
                }
                norm = std::sqrt(norm);
                r[c * modes + c] = norm;
                for (std::size_t k = 0; k < rows; ++k) q[k * modes + c] /= norm;
            }
            for (Index m = 0; m < size; ++m)
                std::copy_n(q.begin() + static_cast<std::ptrdiff_t>(m * tb), tb,
                            level.tentative.begin() +
                                static_cast<std::ptrdiff_t>(members[first + m] * tb));
        },
        64);
}

} // namespace detail

void retentative_multigrid(MultigridHierarchy& h, const double* positions) {
    std::size_t l = !h.levels.empty() && h.levels[0].fixed_prolongator ? 1 : 0;
    if (l >= h.levels.size()) return; // no aggregated level
    EDN_VERIFY(positions != nullptr, ErrorCode::Usage, "multigrid: no positions for the modes");
    const int modes = h.settings.modes;
    // The build's active nodes are exactly the aggregated ones (every active node is aggregated).
    const MultigridLevel& top = h.levels[l];
    std::vector<std::uint8_t> active(static_cast<std::size_t>(top.num_nodes));
    for (Index i = 0; i < top.num_nodes; ++i) active[i] = top.aggregate[i] >= 0 ? 1 : 0;
    std::vector<double> near_null =
        detail::rigid_near_null(positions, active.data(), active.size(), modes);
    std::vector<double> coarse_null;
    for (; l < h.levels.size(); ++l) {
        detail::tentative_prolongator(h.levels[l], near_null, modes, coarse_null);
        near_null.swap(coarse_null);
    }
}

} // namespace cpu
} // namespace edn
