#pragma once
// The device twin of cpu::retentative_multigrid (cpu/multigrid_nullspace.cpp) for the CUDA
// multigrid (cuda/multigrid.cu, its only user): every aggregated level's tentative prolongator
// T recomputed from the current positions (rest + displacement, on the device) at each re-value,
// the coarse near-null blocks R level by level, with no host round-trip. One warp per aggregate
// runs the modified Gram-Schmidt in double (the CPU's drop rule), its columns in shared memory
// when they fit the device's opt-in limit; T is written in float, R stays double for the next
// level. The same aggregates as the build (member lists uploaded once).
#include "cuda/cuda_check.cuh"
#include "solver/multigrid.hpp"

#include <cstddef>
#include <vector>

namespace edn::cuda {

class MultigridNullspace {
public:
    /// One aggregated level's member lists.
    struct Level {
        Index coarse_nodes = 0, members = 0;
        Index max_rows = 0; ///< rows (members x block) of the largest aggregate
        int block = 3;
        DeviceBuffer<Index> offsets, nodes; ///< per aggregate, its nodes in node order
    };
    /// The member lists of an aggregated level made on the host, and (`active`, optional) its
    /// aggregated nodes in index order.
    static Level host_level(const MultigridLevel& s, std::vector<Index>* active);
    /// The member lists of the aggregated levels of `h` (the symbolic hierarchy).
    explicit MultigridNullspace(const MultigridHierarchy& h);
    /// Member lists made on the device (cuda/multigrid_build.cuh) of the aggregated levels
    /// `first`, `first` + 1, ... (first: 1 after a given transfer, else 0): `active` the
    /// aggregated nodes of level `first` in index order.
    MultigridNullspace(int modes, std::vector<Level> levels, DeviceBuffer<Index> active,
                       Index active_count, std::size_t first);
    /// T of level l into tentative[l] (device, float, the host layout of
    /// MultigridLevel::tentative; ignored for a given level) from the rigid-body modes at
    /// rest + displacement (device, 3 per node of the first aggregated level; displacement may
    /// be null), launched on `stream`.
    void recompute(const double* rest, const double* displacement,
                   const std::vector<float*>& tentative, cudaStream_t stream);

private:
    void allocate(); ///< scratch, near-null blocks and the shared-memory limit, for levels_
    int modes_ = 6;
    std::size_t first_ = 0;      ///< the first aggregated level (1 after a given transfer)
    std::vector<Level> levels_;  ///< levels first_, first_ + 1, ...
    DeviceBuffer<Index> active_; ///< the first aggregated level's aggregated nodes
    Index active_count_ = 0;
    DeviceBuffer<double> center_{3};
    DeviceBuffer<double> partials_{3 * 128}; ///< the centroid's per-block sums
    DeviceBuffer<double> near_null_[2];      ///< R of a level: the next level's near-null blocks
    DeviceBuffer<double> scratch_;           ///< the Gram-Schmidt columns, in member order
    std::size_t shared_limit_ = 0; ///< the most shared memory an aggregate's columns may use
};

} // namespace edn::cuda
