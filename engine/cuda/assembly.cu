// cuda::Assembly (cuda/cuda_assembly.hpp), the owner of the device stages: set-up (upload or
// device topology, cell node table, reference integrals), the pattern and map builds (exact
// allocations, timing and peak bytes around the stage functions of pattern.cu and maps.cu),
// buffer access and downloads. Summation and products: summation.cu, spmv.cu.
#include "cuda/assembly_impl.cuh"
#include "sparse/upper_blocks.hpp"

#include <limits>

namespace edn::cuda {
namespace {

using detail::grid_for;

// ---- cell node table ---------------------------------------------------------------------------

__global__ void cell_nodes_kernel(const int4* cells, const Index* cell_edges,
                                  const Index* cell_faces, const int2* edges, NodeLayout layout,
                                  Index num_cells, Index* out) {
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= num_cells) return;
    const int p = layout.order, m = (p + 1) * (p + 2) * (p + 3) / 6;
    const int4 c4 = cells[t];
    const Index v[4] = {c4.x, c4.y, c4.z, c4.w};
    Index* o = out + static_cast<std::int64_t>(t) * m;
    for (int i = 0; i < 4; ++i) o[i] = v[i];
    if (p == 1) return;
    const int ev[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    int at = 4;
    for (int le = 0; le < 6; ++le) {
        const Index e = cell_edges[6 * t + le];
        const bool forward = edges[e].x == v[ev[le][0]]; // edge nodes run from the lower vertex
        for (int k = 0; k < p - 1; ++k) {
            const int kk = forward ? k : p - 2 - k;
            o[at++] = layout.edge_node(e, kk);
        }
    }
    if (p == 3)
        for (int lf = 0; lf < 4; ++lf) o[at++] = layout.face_node(cell_faces[4 * t + lf], 0);
}

} // namespace

Assembly::Assembly(const TetMesh& mesh, const Topology& topology, int order)
    : impl_(std::make_unique<Impl>()) {
    Impl& d = *impl_;
    d.layout = make_node_layout(topology, order);
    detail::StageTimer timer;
    timer.start();
    upload_topology(mesh, topology, d.topo);
    d.use_device_slots();
    d.held += d.topo.bytes();
    d.peak = std::max(d.peak, d.held);
    d.finish_setup(mesh, order);
    d.times.upload = timer.stop();
}

Assembly::Assembly(const Assembly& other, const TetMesh& mesh, int order)
    : impl_(std::make_unique<Impl>(other.impl_->shared_topo)) {
    Impl& d = *impl_;
    d.reproducible_maps = other.impl_->reproducible_maps;
    EDN_VERIFY(order >= 1 && order <= 3, ErrorCode::Usage,
               "element order " << order << " not in 1..3");
    EDN_VERIFY(mesh.num_cells() == d.topo.num_cells && mesh.num_vertices() == d.topo.num_vertices,
               ErrorCode::Usage, "Assembly: the mesh is not the one of the shared topology");
    detail::StageTimer timer;
    timer.start();
    d.layout.order = order;
    d.layout.num_vertices = d.topo.num_vertices;
    d.layout.num_edges = d.topo.num_edges;
    d.layout.num_faces = d.topo.num_faces;
    d.use_device_slots();
    d.finish_setup(mesh, order); // positions and cell nodes only: the topology is not held here
    d.times.upload = timer.stop();
}

Assembly::Assembly(const TetMesh& mesh, int order) : impl_(std::make_unique<Impl>()) {
    Impl& d = *impl_;
    EDN_VERIFY(order >= 1 && order <= 3, ErrorCode::Usage,
               "element order " << order << " not in 1..3");
    detail::StageTimer timer;
    timer.start();
    d.topo.num_vertices = mesh.num_vertices();
    d.topo.num_cells = mesh.num_cells();
    d.upload(d.topo.cells, mesh.cells.data(), mesh.cells.size());
    d.times.upload = timer.stop();
    timer.start();
    std::size_t peak_extra = 0;
    cuda::build_topology(d.topo, order, &peak_extra);
    d.held += d.topo.bytes() - d.topo.cells.bytes();
    d.peak = std::max(std::max(d.peak, d.held), peak_extra);
    d.times.topology = timer.stop();
    d.layout.order = order;
    d.layout.num_vertices = d.topo.num_vertices;
    d.layout.num_edges = d.topo.num_edges;
    d.layout.num_faces = d.topo.num_faces;
    d.use_device_slots();
    EDN_VERIFY(static_cast<std::int64_t>(d.layout.num_vertices) +
                       std::int64_t(order - 1) * d.layout.num_edges +
                       std::int64_t(d.layout.nodes_per_face()) * d.layout.num_faces <
                   std::numeric_limits<Index>::max(),
               ErrorCode::OutOfMemory, "too many nodes for 32-bit indices");
    timer.start();
    d.finish_setup(mesh, order);
    d.times.upload += timer.stop();
}

void Assembly::Impl::finish_setup(const TetMesh& mesh, int order) {
    num_cells = mesh.num_cells();
    m = nodes_per_cell(order);
    std::vector<float> x(3 * mesh.positions.size());
    for (std::size_t i = 0; i < mesh.positions.size(); ++i)
        for (int k = 0; k < 3; ++k) x[3 * i + k] = static_cast<float>(mesh.positions[i][k]);
    upload(positions, x.data(), x.size());
    counter.resize(1);
    track(counter);
    // Reference integrals for the element kernels.
    float S[detail::kMaxNodes * detail::kMaxNodes * 9] = {};
    detail::set_reference_integrals(order, S);
    upload(integrals, S, static_cast<std::size_t>(m) * m * 9);
    // Cell node table (derived on the device from cell vertices, edges and faces).
    cell_nodes.resize(static_cast<std::size_t>(num_cells) * m);
    track(cell_nodes);
    if (num_cells > 0) {
        cell_nodes_kernel<<<grid_for(num_cells, 256), 256>>>(
            topo.cells.data(), topo.cell_edges.data(), topo.cell_faces.data(), topo.edges.data(),
            layout, num_cells, cell_nodes.data());
        EDN_CUDA_CHECK_LAUNCH();
    }
}

void Assembly::build_pattern() {
    Impl& d = *impl_;
    const NodeLayout& L = d.layout;
    const Index rows = L.num_nodes();
    d.bins = (rows + detail::kWarp - 1) / detail::kWarp;
    const TopologyView topology = d.topo.view();
    detail::StageTimer timer;
    std::size_t scratch = 0;
    // 1. exact counts
    timer.start();
    d.pattern_generation = new_pattern_generation();
    d.row_counts.resize(rows);
    d.track(d.row_counts);
    cuda::bin_bcsr_row_counts(topology, L, d.row_counts.data(), &scratch);
    d.peak = std::max(d.peak, d.held + scratch);
    d.times.count = timer.stop();
    // 2. bin offsets: sizes, exclusive scan, read back the total
    timer.start();
    d.bin_offsets.resize(static_cast<std::size_t>(d.bins) + 1);
    d.track(d.bin_offsets);
    d.num_slots =
        cuda::bin_bcsr_bin_offsets(d.row_counts.data(), rows, d.bin_offsets.data(), &scratch);
    d.peak = std::max(d.peak, d.held + scratch);
    d.times.bin_offsets = timer.stop();
    // 3. one exact allocation
    timer.start();
    d.columns.resize(d.num_slots);
    d.track(d.columns);
    d.values.resize(9 * static_cast<std::size_t>(d.num_slots));
    d.track(d.values);
    d.diag.resize(9 * static_cast<std::size_t>(rows));
    d.track(d.diag);
    d.times.alloc = timer.stop();
    // 4. columns
    timer.start();
    cuda::fill_bin_bcsr_columns(topology, d.cell_nodes.data(), L, device_matrix().pattern,
                                d.columns.data(), d.counter.data());
    d.times.columns = timer.stop();
}

void Assembly::set_reproducible_maps(bool on) {
    impl_->reproducible_maps = on;
}

void Assembly::build_per_entry_map() {
    Impl& d = *impl_;
    const Index rows = d.layout.num_nodes();
    const std::int64_t sources = static_cast<std::int64_t>(d.num_cells) * d.m * d.m;
    EDN_VERIFY(sources <= std::numeric_limits<Index>::max(), ErrorCode::OutOfMemory,
               "per-entry map too large: " << sources << " element blocks");
    const std::int64_t targets = static_cast<std::int64_t>(d.num_slots) + rows;
    detail::StageTimer timer;
    timer.start();
    if (d.map_offsets.size()) d.release(d.map_offsets);
    if (d.map_sources.size()) d.release(d.map_sources);
    d.map_offsets.resize(targets + 1);
    d.track(d.map_offsets);
    d.map_sources.resize(sources);
    d.track(d.map_sources);
    std::size_t scratch = 0;
    cuda::build_per_entry_map(device_matrix().pattern, device_cell_nodes(), d.num_slots,
                              d.map_offsets.data(), d.map_sources.data(), d.reproducible_maps,
                              &scratch);
    if (d.block_layout == BlockLayout::Upper) // (built in the full numbering)
        recode_per_entry_map(d.map_sources.data(), sources, d.m, /*to_upper=*/true);
    d.peak = std::max(d.peak, d.held + scratch);
    d.times.maps = timer.stop();
}

void Assembly::Impl::set_block_layout(BlockLayout to) {
    if (to == block_layout) return;
    if (map_sources.size())
        recode_per_entry_map(map_sources.data(), static_cast<std::int64_t>(map_sources.size()), m,
                             to == BlockLayout::Upper);
    block_layout = to;
}

void Assembly::Impl::ensure_blocks_allocated() {
    const std::size_t per_cell =
        block_layout == BlockLayout::Upper ? upper_block_count(m) : static_cast<std::size_t>(m) * m;
    const std::size_t count = 9 * static_cast<std::size_t>(num_cells) * per_cell;
    if (blocks.size() != count) {
        if (blocks.size()) release(blocks);
        blocks.resize(count);
        track(blocks);
    }
}

float* Assembly::device_element_blocks(BlockLayout layout) {
    Impl& d = *impl_;
    d.set_block_layout(layout);
    d.ensure_blocks_allocated();
    // The caller writes the blocks: sum() reads them from now on.
    d.source = Impl::BlockSource::Stored;
    d.blocks_hold_linear = false;
    return d.blocks.data();
}

BinBcsrMatrixView<float> Assembly::device_matrix() const {
    const Impl& d = *impl_;
    BinBcsrPatternView p{d.layout.num_nodes(), d.bins,
                         d.bin_offsets.data(), d.columns.data(),
                         d.row_counts.data(),  d.pattern_generation};
    return {p, const_cast<float*>(d.values.data()), const_cast<float*>(d.diag.data())};
}

NodeCellsView Assembly::device_node_cells() const {
    const Impl& d = *impl_;
    return {d.layout,
            {d.topo.vertex_offsets.data(), d.topo.vertex_cells.data()},
            {d.topo.edge_offsets.data(), d.topo.edge_cells.data()},
            {d.topo.face_offsets.data(), d.topo.face_cells.data()}};
}

CellNodesView Assembly::device_cell_nodes() const {
    const Impl& d = *impl_;
    return {d.cell_nodes.data(), d.m, d.num_cells};
}

const NodeLayout& Assembly::layout() const {
    return impl_->layout;
}

Topology Assembly::download_topology() const {
    return cuda::download_topology(impl_->topo);
}

Assembly::~Assembly() = default;

BinBcsrPattern Assembly::download_pattern() const {
    const Impl& d = *impl_;
    BinBcsrPattern p;
    p.num_rows = d.layout.num_nodes();
    p.row_counts.resize(p.num_rows);
    p.bin_offsets.resize(d.bins + 1);
    p.columns.resize(d.num_slots);
    if (p.num_rows)
        EDN_CUDA_CHECK(cudaMemcpy(p.row_counts.data(), d.row_counts.data(), d.row_counts.bytes(),
                                  cudaMemcpyDeviceToHost));
    EDN_CUDA_CHECK(cudaMemcpy(p.bin_offsets.data(), d.bin_offsets.data(), d.bin_offsets.bytes(),
                              cudaMemcpyDeviceToHost));
    if (d.num_slots)
        EDN_CUDA_CHECK(cudaMemcpy(p.columns.data(), d.columns.data(), d.columns.bytes(),
                                  cudaMemcpyDeviceToHost));
    return p;
}

BinBcsrMatrix<float> Assembly::download_matrix(const BinBcsrPattern& pattern) const {
    const Impl& d = *impl_;
    BinBcsrMatrix<float> k(pattern);
    if (d.values.size())
        EDN_CUDA_CHECK(
            cudaMemcpy(k.values.data(), d.values.data(), d.values.bytes(), cudaMemcpyDeviceToHost));
    if (d.diag.size())
        EDN_CUDA_CHECK(
            cudaMemcpy(k.diag.data(), d.diag.data(), d.diag.bytes(), cudaMemcpyDeviceToHost));
    return k;
}

PerEntryMapView Assembly::device_per_entry_map() const {
    EDN_VERIFY(impl_->map_sources.size() || impl_->num_cells == 0, ErrorCode::Usage,
               "the per-entry map is not built (build_per_entry_map)");
    EDN_VERIFY(impl_->block_layout == BlockLayout::Full, ErrorCode::Usage,
               "the per-entry map names upper-layout blocks (device_element_blocks(Upper))");
    return impl_->map_view();
}

PerEntryMap Assembly::download_per_entry_map() const {
    const Impl& d = *impl_;
    PerEntryMap map;
    map.num_slots = d.num_slots;
    map.num_rows = d.layout.num_nodes();
    map.offsets.resize(d.map_offsets.size());
    map.sources.resize(d.map_sources.size());
    if (map.offsets.size())
        EDN_CUDA_CHECK(cudaMemcpy(map.offsets.data(), d.map_offsets.data(), d.map_offsets.bytes(),
                                  cudaMemcpyDeviceToHost));
    if (map.sources.size())
        EDN_CUDA_CHECK(cudaMemcpy(map.sources.data(), d.map_sources.data(), d.map_sources.bytes(),
                                  cudaMemcpyDeviceToHost));
    if (d.block_layout == BlockLayout::Upper)
        for (Index& s : map.sources) s = full_source(s, d.m);
    return map;
}

const AssemblyTimes& Assembly::times() const {
    return impl_->times;
}
std::size_t Assembly::matrix_bytes() const {
    const Impl& d = *impl_;
    return d.values.bytes() + d.diag.bytes() + d.columns.bytes() + d.bin_offsets.bytes();
}
std::int64_t Assembly::nnz_blocks() const {
    const Impl& d = *impl_;
    if (d.nnz_cache < 0) {
        std::vector<Index> counts(d.row_counts.size());
        if (!counts.empty())
            EDN_CUDA_CHECK(cudaMemcpy(counts.data(), d.row_counts.data(), d.row_counts.bytes(),
                                      cudaMemcpyDeviceToHost));
        std::int64_t total = d.layout.num_nodes();
        for (Index c : counts) total += c;
        d.nnz_cache = total;
    }
    return d.nnz_cache;
}
std::size_t Assembly::map_bytes() const {
    return impl_->map_offsets.bytes() + impl_->map_sources.bytes();
}
std::size_t Assembly::element_bytes() const {
    return impl_->blocks.bytes();
}
std::size_t Assembly::mesh_bytes() const {
    const Impl& d = *impl_;
    return d.topo.bytes() + d.positions.bytes() + d.cell_nodes.bytes() + d.row_counts.bytes();
}
std::size_t Assembly::peak_bytes() const {
    return impl_->peak;
}
Index Assembly::num_rows() const {
    return impl_->layout.num_nodes();
}

} // namespace edn::cuda
