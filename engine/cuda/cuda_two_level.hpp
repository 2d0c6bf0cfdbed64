#pragma once
/// The coarse level of the two-level preconditioner on the device (solver/two_level.hpp): the
/// host-built CoarseSpace uploaded, the P1 pattern and per-entry map built by an order-1
/// cuda::Assembly of the same mesh, and the Galerkin assembly A_c = sum_e P_e^T H_e P_e + the
/// restricted diagonal terms, from the fine element blocks the simulation just computed. A plain
/// C++ header; in a build without CUDA every entry point throws edn::Error(Unsupported).

#include "cuda/cuda_assembly.hpp"
#include "cuda/cuda_only.hpp"
#include "cuda/cuda_pcg.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/topology.hpp"
#include "solver/two_level.hpp"

#include <memory>
#include <vector>

namespace edn::cuda {

class CoarseLevel {
public:
    /// The coarse level of `layout` (order >= 2) on `mesh` / `topology`; with `fine` (the order-p
    /// assembly of the same mesh) its device topology is shared instead of uploaded again.
    CoarseLevel(const TetMesh& mesh, const Topology& topology, const NodeLayout& layout,
                const Assembly* fine = nullptr) EDN_CUDA_ONLY;
    ~CoarseLevel() EDN_CUDA_ONLY;
    CoarseLevel(const CoarseLevel&) = delete;
    CoarseLevel& operator=(const CoarseLevel&) = delete;

    /// Assembles A_c on the device: coarse element blocks from `fine_blocks` (device, float, the
    /// order-p element-block layout ((t*m + a)*m + b)*9) summed per entry, plus, on the diagonal,
    /// the row-sum restriction of scale * node_mass[i] (device, #fine nodes).
    void assemble(const float* fine_blocks, const float* node_mass, float scale) EDN_CUDA_ONLY;
    /// assemble() from host vectors (copied to the device; for tests).
    void assemble_host(const std::vector<float>& fine_blocks, const std::vector<float>& node_mass,
                       float scale) EDN_CUDA_ONLY;
    /// Device view for Pcg::solve_two_level.
    CoarseLevelView view(double inner_tolerance = kCoarseTolerance,
                         int inner_iterations = kCoarseIterationsCuda) const EDN_CUDA_ONLY;
    /// The host coarse space (its pattern downloaded from the device; no host map).
    const CoarseSpace& space() const EDN_CUDA_ONLY;
    /// The coarse matrix copied to the host (tests); `pattern` is space().pattern.
    BinBcsrMatrix<float> download_matrix() const EDN_CUDA_ONLY;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};
EDN_CUDA_ONLY_IMPL(CoarseLevel);

} // namespace edn::cuda
