#pragma once
// The symbolic phase of the multigrid on the device (issue 14: the hierarchy built after a cut
// on the GPU): one level of cpu::build_multigrid for Aggregation::Greedy (its sequential pass as
// rounds of a distance-2 independent set, lower indices first) and a smoothed prolongator at a
// time, the same aggregates, patterns and maps bit for bit
// (cpu/multigrid_setup.cpp is the reference), in the layout cuda::Multigrid keeps. Every pass
// is a map over nodes, P blocks or their products, with CUB scans and stable radix sorts in
// place of the host's per-row sorts and markers; the host receives only what it keeps (the
// aggregates, for the near-null space's member lists, and the coarse patterns, for the kernels'
// widths). Used by cuda/multigrid.cu only.
#include "cuda/cuda_check.cuh"
#include "sparse/bin_bcsr_pattern.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace edn::cuda {

/// One level of a hierarchy, built on the device (build_level).
struct DeviceLevelBuild {
    Index n = 0;       ///< rows of the level's operator
    Index nc = 0;      ///< aggregates (coarse nodes)
    Index entries = 0; ///< fine slots + rows (the operator's entries)
    Index p_blocks = 0, ap_blocks = 0, product_pairs = 0, galerkin_pairs = 0, galerkin_entries = 0;
    /// MultigridLevel's arrays (the smoothing map inverted: per P block its operator entries,
    /// ascending; g_entries: the coarse entries with pairs, every diagonal included).
    DeviceBuffer<Index> aggregate, p_offsets, p_rows, p_columns, smooth_offsets, smooth_entries,
        pair_offsets, pair_entry, pair_p, g_offsets, g_p, g_ap, g_mirror, g_entries, r_offsets,
        r_blocks, r_rows;
    /// A P's pattern (per row its blocks, #n + 1; their columns): the cycle's post-smoothing
    /// residual on a level with a given P (kept for that level only).
    DeviceBuffer<Index> ap_offsets, ap_columns;
    /// A given P's values (build_given_level: 3 x 3 blocks padded to 12 floats); empty for a
    /// smoothed P (re-valued).
    DeviceBuffer<float> p_values;
    /// The coarse operator's pattern, on the device, and on the host its bin offsets and row
    /// counts (the kernels' widths; no columns).
    DeviceBuffer<Index> c_bin_offsets, c_columns, c_row_counts;
    BinBcsrPattern coarse;
    /// The aggregates' member lists (MultigridNullspace): per aggregate its nodes in node order
    /// (member_offsets: #aggregates + 1), the most members of one, and the aggregated nodes in
    /// index order (`members` of them).
    DeviceBuffer<Index> member_offsets, member_nodes, active;
    Index members = 0, max_members = 0;
    /// Host wall time of each phase [ms], for reports.
    std::vector<std::pair<std::string, double>> phases;
    int rounds = 0; ///< of the aggregation's independent set
};

enum class LevelBuild {
    Built, ///< `out` holds the level
    Stop,  ///< no useful coarsening left: the hierarchy ends above (as on the host)
    /// Build on the host instead: the coarse pattern is not symmetric (the host then keeps
    /// every Galerkin entry), or the node order needs over 1024 rounds of aggregation.
    Host,
};

/// Builds the level of the operator pattern `op` (device; structurally symmetric, as
/// assembled; `slots` its slot count) with the per-node pins `fixed` (device, nonzero = pinned;
/// nullptr = none) of which `free_nodes` are not, `level_dofs` the operator's dofs of free nodes,
/// `modes` near-null vectors per aggregate, on the calling thread's default stream.
/// `host` (optional): the same pattern on the host, columns included, with `fixed_host` its
/// pins: the aggregates then come from the host's greedy pass (cpu::aggregate_nodes), the same
/// ones, for levels where the rounds' launches and read-backs cost more (host_aggregation).
LevelBuild build_level(const BinBcsrPatternView& op, Index slots, const std::uint8_t* fixed,
                       Index free_nodes, Index level_dofs, int modes, DeviceLevelBuild& out,
                       const BinBcsrPattern* host = nullptr,
                       const std::uint8_t* fixed_host = nullptr);

/// Whether a level of `rows` rows and `slots` slots (padding included) is built on the host
/// (its coarse pattern's columns are then downloaded with the level above): cuda::Multigrid::build
/// makes it and the levels below with cpu::build_aggregated_level, or, with
/// EDN_MULTIGRID_SMALL_LEVELS=device, only its aggregates (build_level's `host`). H100, 187K bunny:
/// level 2 (8 rounds) 0.16 -> 0.04 ms; level 1 (2,202 rows, about 200K slots) 0.26 ms of rounds
/// (one cooperative launch) against 1.17 ms on the host and 0.38 ms to download its columns, so
/// only small levels.
inline bool host_aggregation(Index rows, Index slots) {
    return rows <= 1024 && slots <= 65536;
}

/// Builds p-multigrid's first level (cpu/multigrid_setup.cpp's given_level) of the fine pattern
/// `op`: P the given interpolation onto `coarse_nodes` coarse nodes, fine node i = sum over
/// k < 3 of weight[3i + k] * coarse node vertex[3i + k] (device; -1 ends a row; coarse node v is
/// fine node v, pinned as it), no aggregates, no smoothing; then A P, P^T and the coarse
/// operator as build_level's. Built or Host (an unsymmetric coarse pattern).
LevelBuild build_given_level(const BinBcsrPatternView& op, Index slots, const std::uint8_t* fixed,
                             Index coarse_nodes, const Index* vertex, const double* weight,
                             DeviceLevelBuild& out);

} // namespace edn::cuda
