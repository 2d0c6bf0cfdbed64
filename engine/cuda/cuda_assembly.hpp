#pragma once
/// The CUDA backend of Bin-BCSR* assembly: exact pattern, per-entry maps, element blocks, the
/// three summation methods, SpMV and block-Jacobi on the device (float). A plain C++ header: the
/// device state hides behind a pimpl. In a build without CUDA every member throws
/// edn::Error(ErrorCode::Unsupported) (cuda/cuda_only.hpp).

#include "cuda/cuda_only.hpp"
#include "fem/linear_elasticity.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/topology.hpp"
#include "sparse/bin_bcsr_matrix.hpp"
#include "sparse/spmv.hpp"
#include "sparse/summation.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace edn::cuda {

/// Milliseconds per assembly stage, measured with CUDA events (paper Table 2 stages).
struct AssemblyTimes {
    double upload = 0;      ///< host -> device copy of mesh (and of a host topology)
    double topology = 0;    ///< GPU topology: sort/unique of edges and faces, transposes
    double count = 0;       ///< exact row counts (Eq. 6)
    double bin_offsets = 0; ///< bin widths + exclusive scan + read-back of the total
    double alloc = 0;       ///< the one exact allocation of columns, values and diagonal
    double columns = 0;     ///< column fill
    double maps = 0;        ///< per-entry map (count, scan, fill)
    double element = 0;     ///< element blocks
    double summation = 0;   ///< summation into the matrix
};

/// How Assembly::device_element_blocks() holds each element's m x m Hessian blocks.
enum class BlockLayout {
    Full, ///< block (t, a, b) at (t * m + a) * m + b (every summation reads this)
    /// the upper triangle (a <= b) only, (b, a) being the transpose of (a, b)
    /// (sparse/upper_blocks.hpp): 55 of 100 blocks at p = 2, 210 of 400 at p = 3. The per-entry
    /// summation only, through its map recoded to name upper blocks.
    Upper,
};

/// Device-resident assembly of one mesh at one order.
class Assembly {
public:
    /// Uploads `mesh` (cells, positions as float) and the parts of `topology` the kernels need.
    Assembly(const TetMesh& mesh, const Topology& topology, int order) EDN_CUDA_ONLY;
    /// Uploads only the cells and positions and builds the topology on the device (meshes below
    /// 2^21 vertices); reads back only the edge and face counts.
    Assembly(const TetMesh& mesh, int order) EDN_CUDA_ONLY;
    /// An assembly at `order` of the mesh of `other` (the same `mesh`), sharing its device
    /// topology: only the positions and the cell nodes of `order` are uploaded (the two-level
    /// preconditioner's P1 level of a p >= 2 assembly).
    Assembly(const Assembly& other, const TetMesh& mesh, int order) EDN_CUDA_ONLY;
    ~Assembly() EDN_CUDA_ONLY;
    Assembly(const Assembly&) = delete;
    Assembly& operator=(const Assembly&) = delete;

    /// Counts, bin offsets, one exact allocation, columns (on the device).
    void build_pattern() EDN_CUDA_ONLY;
    /// The per-entry map of the built pattern.
    void build_per_entry_map() EDN_CUDA_ONLY;
    /// Per-entry maps built from now on list each block's sources in ascending order (they are
    /// filled in atomic order), and per-simplex sums each row in a fixed order (Listing 1's row
    /// walk, not the bins' shared-memory sums), so the summation repeats bit for bit across
    /// builds and runs;
    /// costs a sort per build (p = 1: +0.2 ms at 127K, +0.65 ms at 1.7M). Off by default;
    /// assemblies sharing this one's topology (two-level P1 level) inherit it.
    void set_reproducible_maps(bool on) EDN_CUDA_ONLY;
    /// Linear-elastic element blocks of every cell (needed by PerEntry and PerSimplex).
    void compute_element_blocks(const LameParameters<float>& lame) EDN_CUDA_ONLY;
    /// Zeroes the matrix and sums with `method` (Inline: linear p = 1, computes its own blocks).
    void sum(SummationMethod method, const LameParameters<float>& lame) EDN_CUDA_ONLY;
    /// Zeroes the matrix and the bin counter for a row-owned summation kernel of another file
    /// (the simulation's inline summation of every material and order); returns the counter.
    unsigned int* prepare_row_summation() EDN_CUDA_ONLY;
    /// y = K x on the device, x and y device pointers of 3 * num_rows floats, with the measured
    /// kernel choice (cuda::choose_spmv_kernel).
    void spmv_device(const float* x, float* y) const EDN_CUDA_ONLY;
    /// spmv_device() with the given warps per bin and load policy (bench spmv, tests).
    void spmv_device(const float* x, float* y, SpmvKernel kernel) const EDN_CUDA_ONLY;
    /// y = K x with host vectors (copies; for tests).
    std::vector<float> spmv(const std::vector<float>& x) const EDN_CUDA_ONLY;
    /// spmv() with the given warps per bin and load policy (tests).
    std::vector<float> spmv(const std::vector<float>& x, SpmvKernel kernel) const EDN_CUDA_ONLY;

    // ---- device access for other CUDA code (the simulation backend); pointers are device
    // memory
    /// Element block storage (#T * m * m * 9 floats; #T * m (m + 1) / 2 * 9 in the upper
    /// layout), allocated (or resized) on first use in `layout`. Writers fill it, then call sum()
    /// with PerEntry (either layout; the per-entry map follows the layout) or PerSimplex (full).
    float* device_element_blocks(BlockLayout layout = BlockLayout::Full) EDN_CUDA_ONLY;
    /// The matrix with device pointers (pattern arrays, values, diagonal).
    BinBcsrMatrixView<float> device_matrix() const EDN_CUDA_ONLY;
    /// node -> incident cells (device pointers) and the #T x m cell node table.
    NodeCellsView device_node_cells() const EDN_CUDA_ONLY;
    CellNodesView device_cell_nodes() const EDN_CUDA_ONLY;
    /// The node layout of this assembly; its node slot order pointers are device pointers.
    const NodeLayout& layout() const EDN_CUDA_ONLY;
    /// The device topology, copied back (no boundary faces), for tests.
    Topology download_topology() const EDN_CUDA_ONLY;
    /// The pattern, copied back to the host.
    BinBcsrPattern download_pattern() const EDN_CUDA_ONLY;
    /// The matrix values over `pattern` (from download_pattern), copied back.
    BinBcsrMatrix<float> download_matrix(const BinBcsrPattern& pattern) const EDN_CUDA_ONLY;
    /// The per-entry map on the device (build_per_entry_map first).
    PerEntryMapView device_per_entry_map() const EDN_CUDA_ONLY;
    /// The per-entry map, copied back (sources in device order within each target; always in
    /// the full layout's numbering).
    PerEntryMap download_per_entry_map() const EDN_CUDA_ONLY;
    /// Stage timings of the last calls.
    const AssemblyTimes& times() const EDN_CUDA_ONLY;
    /// Bytes of the matrix (values, diagonal, columns, bin offsets) on the device.
    std::size_t matrix_bytes() const EDN_CUDA_ONLY;
    /// Stored non-zero blocks, diagonal included (padding excluded); computed once, on first
    /// call.
    std::int64_t nnz_blocks() const EDN_CUDA_ONLY;
    /// Bytes of the per-entry map on the device.
    std::size_t map_bytes() const EDN_CUDA_ONLY;
    /// Bytes of the element blocks on the device.
    std::size_t element_bytes() const EDN_CUDA_ONLY;
    /// Bytes of the uploaded mesh and topology on the device.
    std::size_t mesh_bytes() const EDN_CUDA_ONLY;
    /// Highest device bytes held by this object at any time so far.
    std::size_t peak_bytes() const EDN_CUDA_ONLY;
    /// Block rows (nodes).
    Index num_rows() const EDN_CUDA_ONLY;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};
EDN_CUDA_ONLY_IMPL(Assembly);

} // namespace edn::cuda
