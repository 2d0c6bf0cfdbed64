#pragma once
/// Summation of element matrices into a Bin-BCSR* matrix: three runtime-selectable methods
/// (mueller-roemer-2018 sec. 4.4). Twins: edn::cpu (cpu/summation.cpp) and edn::cuda
/// (cuda/summation.cu) take the same views; for CUDA every pointer is device memory.
///
/// Element matrices ("element blocks") are stored per cell as m x m row-major 3x3 blocks:
/// entry (r, c) of block (a, b) of cell t at ((t*m + a)*m + b)*9 + 3r + c, m = nodes_per_cell(p),
/// local node order as in mesh/node_layout.hpp.

#include "cuda/cuda_only.hpp"
#include "fem/linear_elasticity.hpp"
#include "mesh/node_layout.hpp"
#include "sparse/bin_bcsr_pattern.hpp"

#include <optional>
#include <string_view>
#include <vector>

namespace edn {

/// How element blocks reach the matrix.
enum class SummationMethod : std::uint8_t {
    PerEntry,   ///< per stored block, the packed list of contributing element blocks (registers)
    PerSimplex, ///< per row, the incident cells via vertexCells/edgeCells/faceCells (in memory)
    Inline,     ///< per row, element matrices recomputed inside the kernel (no element matrices)
    /// The backend's choice for the mesh and order (summation_in_use, sim/simulation.hpp).
    Auto,
};

/// "per_entry", "per_simplex", "inline".
const char* summation_method_name(SummationMethod method);
/// Parses a summation method name; nullopt when unknown.
std::optional<SummationMethod> parse_summation_method(std::string_view name);

/// Node i's place among the nodes of its simplex (vertex, edge or face) and their number: the
/// nodes of one simplex share its node->cells row, so a per-node table over that row has `per`
/// entries per incidence (p = 3: two nodes per edge).
EDN_HOST_DEVICE inline void node_in_simplex(const NodeLayout& layout, Index i, int& j, int& per) {
    if (i < layout.num_vertices) {
        j = 0, per = 1;
    } else if (i < layout.first_face_node()) {
        per = static_cast<int>(layout.nodes_per_edge());
        j = static_cast<int>((i - layout.first_edge_node()) % per);
    } else {
        per = static_cast<int>(layout.nodes_per_face());
        j = static_cast<int>((i - layout.first_face_node()) % per);
    }
}

/// node -> incident cells, through the simplex the node belongs to.
struct NodeCellsView {
    NodeLayout layout;
    CsrView vertex_cells, edge_cells, face_cells;

    /// The [begin, end) range of node's incident cells in the CSR `cells_of` returns.
    EDN_HOST_DEVICE const CsrView& csr_of(Index node, Index& simplex) const {
        if (node < layout.num_vertices) {
            simplex = node;
            return vertex_cells;
        }
        if (node < layout.first_face_node()) {
            simplex = layout.edge_of_node(node);
            return edge_cells;
        }
        simplex = layout.face_of_node(node);
        return face_cells;
    }

    /// body(entry) for each of node i's incidences in node->cells order, where entry is the
    /// node's own one of a per-node table over node->cells (`per` entries per incidence,
    /// node_in_simplex); for node->cells itself (per = 1 at vertices) the cell.
    template <class Body>
    EDN_HOST_DEVICE void for_each_incidence(Index i, Body&& body) const {
        Index simplex = 0;
        const CsrView& csr = csr_of(i, simplex);
        int j = 0, per = 1;
        node_in_simplex(layout, i, j, per);
        for (Index s = csr.offsets[simplex]; s < csr.offsets[simplex + 1]; ++s)
            body(csr.indices[static_cast<std::int64_t>(s) * per + j]);
    }
};

/// #T x m table of cell nodes.
struct CellNodesView {
    const Index* nodes = nullptr;
    int per_cell = 4;
    Index num_cells = 0;
};

/// Per-entry summation map over targets: [0, #slots) off-diagonal slots, then #rows diagonal
/// blocks; sources are element block indices (t*m + a)*m + b.
struct PerEntryMapView {
    Index num_slots = 0;
    Index num_rows = 0;
    const Index* offsets = nullptr; ///< #slots + #rows + 1
    const Index* sources = nullptr; ///< #T * m * m
};

/// Host storage of a per-entry map.
struct PerEntryMap {
    Index num_slots = 0;
    Index num_rows = 0;
    std::vector<Index> offsets;
    std::vector<Index> sources;
    /// Kernel view.
    PerEntryMapView view() const { return {num_slots, num_rows, offsets.data(), sources.data()}; }
};

/// The slot counts of a pattern's bins that size the device per-simplex summation's shared
/// memory: the widest bin's, and a common width that most bins stay within (bin_widths()).
struct BinWidths {
    Index common = 0, widest = 0;
};
/// BinWidths of bins with `bin_offsets` (#bins + 1, host): common = the 95th percentile.
BinWidths bin_widths(const std::vector<Index>& bin_offsets);

/// Host views of a topology's node->cells maps.
NodeCellsView node_cells_view(const Topology& topology, const NodeLayout& layout);

namespace cpu {

/// Builds the per-entry map of `pattern` for the cells' node table (sources ascending per
/// target, so summation order is deterministic).
PerEntryMap build_per_entry_map(const BinBcsrPattern& pattern, const CellNodesView& cell_nodes);

/// Element blocks of linear elasticity, order `order`, for every cell (rest positions).
template <class T>
void linear_elastic_element_blocks(const std::vector<Vec3>& positions,
                                   const std::vector<Cell>& cells, int order,
                                   const LameParameters<T>& lame, T* element_blocks);

/// Zeroes `out` and sums the element blocks through the per-entry map.
template <class T>
void sum_per_entry(const PerEntryMapView& map, const T* element_blocks, BinBcsrMatrixView<T> out);

/// Zeroes `out` and sums element blocks row by row through the node->cells maps.
template <class T>
void sum_per_simplex(const NodeCellsView& node_cells, const CellNodesView& cell_nodes,
                     const T* element_blocks, BinBcsrMatrixView<T> out);

/// p = 1 linear elasticity: zeroes `out` and sums element blocks computed on the fly per row.
/// `positions` are 3 scalars per vertex.
template <class T>
void sum_inline_linear_p1(const NodeCellsView& node_cells, const Cell* cells, const T* positions,
                          const LameParameters<T>& lame, BinBcsrMatrixView<T> out);

} // namespace cpu

/// Device twins (cuda/summation.cu): float, every pointer device memory, work on the default
/// stream. The row-wise summations (per-simplex, inline) use the warp-dynamic bin scheduler of
/// Listing 1, so they take a one-element device counter and, to zero the values, the slot count.
namespace cuda {

/// cpu::build_per_entry_map on the device: `pattern` (device arrays) of `num_slots` slots and the
/// device cell node table; writes `offsets` (#slots + #rows + 1) and `sources` (#T * m * m),
/// device arrays the caller sized. A target's sources come in atomic order, or ascending (as the
/// CPU map's) when `sorted`, at the cost of a per-target sort (reproducible sums). Synchronises.
/// `scratch_bytes` (optional) receives the temporary device bytes it held.
EDN_CUDA_FN void build_per_entry_map(const BinBcsrPatternView& pattern,
                                     const CellNodesView& cell_nodes, Index num_slots,
                                     Index* offsets, Index* sources, bool sorted = false,
                                     std::size_t* scratch_bytes = nullptr) EDN_CUDA_ONLY;

/// Rewrites the `count` sources of a per-entry map (device) of elements of m nodes from the full
/// layout to the upper one (sparse/upper_blocks.hpp) when `to_upper`, else back; in place, so
/// each target keeps its order of sources.
EDN_CUDA_FN void recode_per_entry_map(Index* sources, std::int64_t count, int m,
                                      bool to_upper) EDN_CUDA_ONLY;

/// cpu::linear_elastic_element_blocks on the device: `cells` #T, `positions` 3 floats per
/// vertex, `element_blocks` #T * m * m * 9. Reads the reference integrals of `order` from
/// constant memory, which cuda::Assembly uploads for its order.
EDN_CUDA_FN void linear_elastic_element_blocks(const Cell* cells, const float* positions,
                                               Index num_cells, int order,
                                               const LameParameters<float>& lame,
                                               float* element_blocks) EDN_CUDA_ONLY;

/// cpu::sum_per_entry on the device (every target written once: no reset needed).
EDN_CUDA_FN void sum_per_entry(const PerEntryMapView& map, const float* element_blocks,
                               BinBcsrMatrixView<float> out) EDN_CUDA_ONLY;

/// sum_per_entry of element blocks in the upper layout (sparse/upper_blocks.hpp), through a map
/// recoded to it: the same blocks summed in the same order.
EDN_CUDA_FN void sum_per_entry_upper(const PerEntryMapView& map, const float* element_blocks,
                                     BinBcsrMatrixView<float> out) EDN_CUDA_ONLY;

/// sum_per_entry with linear-elastic element blocks evaluated where they are summed (no element
/// block array): `reference_integrals` m * m * 9 floats of `order` (device).
EDN_CUDA_FN void sum_per_entry_linear(const PerEntryMapView& map, const Cell* cells,
                                      const float* positions, const float* reference_integrals,
                                      int order, const LameParameters<float>& lame,
                                      BinBcsrMatrixView<float> out) EDN_CUDA_ONLY;

/// cpu::sum_per_simplex on the device. Given the pattern's `bin_widths`, each bin is summed in
/// shared memory and written once (every slot); otherwise (none given, or a bin too wide for
/// shared memory) by Listing 1's row walk, which zeroes the `num_slots` slots of `out` first.
EDN_CUDA_FN void sum_per_simplex(const NodeCellsView& node_cells, const CellNodesView& cell_nodes,
                                 const float* element_blocks, BinBcsrMatrixView<float> out,
                                 Index num_slots, unsigned int* bin_counter,
                                 const BinWidths& bin_widths = {}) EDN_CUDA_ONLY;

/// cpu::sum_inline_linear_p1 on the device (reads the p = 1 reference integrals from constant
/// memory, uploaded by a p = 1 cuda::Assembly); `num_slots` slots of `out` are zeroed first.
EDN_CUDA_FN void sum_inline_linear_p1(const NodeCellsView& node_cells, const Cell* cells,
                                      const float* positions, const LameParameters<float>& lame,
                                      BinBcsrMatrixView<float> out, Index num_slots,
                                      unsigned int* bin_counter) EDN_CUDA_ONLY;

} // namespace cuda
} // namespace edn
