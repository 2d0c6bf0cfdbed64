#pragma once
/// The system matrix of p >= 2 simulations as an action, without its blocks (issue 14): the
/// element pass writes each quadrature point's material tangent in reference coordinates (45
/// floats, sim/reference_tangent.hpp) and the products of the CG and of the multigrid cycle's
/// order-p level read those instead of the assembled Bin-BCSR* blocks:
///   y = sum_e K_e x_e + t .* x + (the point drag's 3 x 3 identity blocks) x,
/// t the node terms' diagonal (mass, ground, friction, a drag region's springs: what the
/// assembly adds to the diagonal blocks). At 187K p = 3 the values are 14 x 48 floats per element
/// (45 and 3 of padding: twelve float4 planes) against about 1890 of its share of the assembled
/// upper blocks. Rows of pinned nodes are formed like the assembled product's (the callers mask
/// them). Each node's sum over its elements either gathers their parts in the node->cells order
/// (Scatter::Gather: reproducible) or meets in float atomics (Scatter::Atomic: the last bits vary
/// from run to run).
///
/// The multigrid cycle keeps a snapshot (take_snapshot at each re-value, as it keeps the matrix's
/// values then): a lagged hierarchy stays one symmetric positive definite preconditioner. With
/// `half_snapshot` its values are kept in half precision, scaled by the power of two that brings
/// the largest into [2^14, 2^15) (as the cycle's half copies of the assembled operators): half
/// the bytes of the cycle's products.
#include "core/types.hpp"
#include "cuda/cuda_check.cuh"
#include "sparse/summation.hpp"

#include <cstdint>
#include <vector>

namespace edn::cuda {

/// The point drag's Hessian between its vertices: stiffness w_a w_b times the identity at (a, b).
struct MatrixFreeDrag {
    int active = 0;
    Index vertices[3] = {0, 0, 0};
    float weights[3][3] = {};
};

/// p-multigrid's re-value targets on the order-p level (cuda/multigrid.cu): the given P (CSR
/// over the fine nodes, blocks padded to 12 floats, isotropic: the weight w of w I at [0]), A P
/// in its pattern (CSR over the fine nodes, padded blocks) and the diagonal blocks (9 planes of
/// #nodes, row-major entries).
struct GalerkinTargets {
    const Index* p_offsets = nullptr;
    const Index* p_columns = nullptr;
    const float* p_values = nullptr;
    const Index* ap_offsets = nullptr;
    const Index* ap_columns = nullptr;
    float* ap_values = nullptr;
    float* diag = nullptr;
    /// galerkin_transfer()'s output, fixed with P: each cell's nodes' P weights on its vertices'
    /// columns ((t m + b) 4 + c) and the vertices' columns (4 t + c; -1: pinned)
    float* cell_weights = nullptr;
    Index* cell_columns = nullptr;
    Index* ap_rows = nullptr; ///< each A P entry's row
};

class MatrixFreeOperator {
public:
    enum class Scatter { Gather, Atomic };
    /// Float4 planes of a point's values (45 of 48 used).
    static constexpr int kPlanes = 12;
    /// `reference_gradients`: reference_gradient_table of the element rule (num_points of it);
    /// `cell_nodes`: the device cell node table (m per cell); `slots`: each node's element slots
    /// t m + a in node->cells order (the backend's force slots; Scatter::Gather).
    MatrixFreeOperator(int order, int num_points, const std::vector<double>& reference_gradients,
                       const Index* cell_nodes, Index num_cells, Index num_nodes,
                       const NodeCellsView& slots, Scatter scatter, bool half_snapshot);

    /// The element pass's output: values 4k..4k+3 of point q of cell t at float4
    /// [k * stride() + t * points + q] (k < kPlanes).
    float4* tangents() const { return reinterpret_cast<float4*>(current_.tangents.data()); }
    std::int64_t stride() const { return static_cast<std::int64_t>(num_cells_) * num_points_; }
    /// The node terms' diagonal, 3 per node (written by the assembly's node kernels).
    float* node_terms() const { return current_.node.data(); }
    /// The point drag's blocks (async copy on the calling thread's default stream).
    void set_drag(const MatrixFreeDrag& drag);
    /// y = A x (device pointers, 3 per node) on `stream`; `snapshot`: the values of the last
    /// take_snapshot().
    void apply(const float* x, float* y, bool snapshot, cudaStream_t stream) const;
    /// r = -gradient - A x on free rows, 0 on pinned ones, in double (x and the sums; the values
    /// are float), the present values, gathered (reproducible): the CG's true residual.
    void residual(const double* gradient, const double* x, const std::uint8_t* fixed, double* r,
                  cudaStream_t stream) const;
    /// Copies the present values into the snapshot (on `stream`: capturable).
    void take_snapshot(cudaStream_t stream);
    /// Scratch for galerkin() (device floats, not owned; nullptr: none): the backend lends its
    /// element blocks' buffer, whose blocks the matrix-free evaluation leaves unwritten.
    void set_scratch(float* scratch, std::size_t floats) {
        scratch_ = floats >= galerkin_scratch_floats() ? scratch : nullptr;
    }
    std::size_t galerkin_scratch_floats() const;
    bool can_galerkin() const { return scratch_ != nullptr; }
    /// A P and the diagonal blocks of the present values without the assembled matrix (on
    /// `stream`: capturable; needs can_galerkin()). An element's share of A P is K_e P_e, with
    /// P_e its nodes' P weights on its corners' coarse columns (pinned nodes and columns: none):
    /// at each point S_c = sum_e B_ce G_e, G_e = sum_b P_b dN_b,e, and (K_e P_e)_a =
    /// sum_q sum_c dN_a,c S_c; K_aa = sum_q sum_ce dN_a,c dN_a,e B_ce. The parts go to the
    /// scratch; a thread per entry (i, j) of A P (`ap_entries` of them) sums node i's parts of
    /// column j in node->cells order (reproducible) with the node terms t .* P and the point
    /// drag's blocks times P, and a thread per diagonal entry likewise. Equals A P of the
    /// assembled matrix (cuda/multigrid.cu, k_product) to float rounding.
    void galerkin(const GalerkinTargets& targets, Index ap_entries, cudaStream_t stream) const;
    /// Fills targets.cell_weights (transfer_floats()), cell_columns (4 per cell) and ap_rows
    /// (ap_entries) from P and A P's pattern: once per P (galerkin() reads them).
    void galerkin_transfer(const GalerkinTargets& targets, cudaStream_t stream) const;
    std::size_t transfer_floats() const {
        return static_cast<std::size_t>(num_cells_) * lagrange_tet_num_nodes(order_) * 4;
    }
    Index num_cells() const { return num_cells_; }
    /// Device bytes held.
    std::size_t bytes() const;
    /// The pointers a captured graph over apply() depends on.
    std::vector<std::uintptr_t> key() const;

private:
    struct Values {
        DeviceBuffer<float> tangents, node;
        DeviceBuffer<MatrixFreeDrag> drag;
    };
    Values current_, snapshot_;
    /// y = A x with `v` (atomic: Scatter::Atomic's sums; g: residual()'s form).
    template <class T>
    void launch(const Values& v, const T* x, T* y, bool atomic, const double* g,
                const std::uint8_t* fixed, cudaStream_t stream) const;
    DeviceBuffer<float> gradients_; ///< reference gradients (float), (q m + a) 3 + c
    /// Gathered sums' parts (K_e x_e)_a at (t m + a) 3, float or double (residual()).
    DeviceBuffer<float> parts_;
    DeviceBuffer<std::uint16_t> half_; ///< the snapshot's values in half (half_snapshot)
    DeviceBuffer<float> half_scale_;   ///< [0] the largest |value| (bits), [1] its unscale
    NodeCellsView slots_;
    float* scratch_ = nullptr; ///< galerkin()'s parts (set_scratch)
    MatrixFreeDrag drag_;      ///< the device's present drag (set_drag)
    bool drag_set_ = false;
    Scatter scatter_;
    const Index* cell_nodes_;
    Index num_cells_, num_nodes_;
    int order_, num_points_;
};

} // namespace edn::cuda
