// The topology stage on the device (twin of cpu::build_topology, mesh/topology.cpp; declared in
// mesh/topology.hpp): sort + unique of edges and faces with CUB, cellEdges/cellFaces by scatter,
// the transposes vertexCells/edgeCells/faceCells and the node slot order; plus the upload and
// download of a whole topology (cuda/device_topology.cuh).
#include "cuda/device_topology.cuh"

#include <cub/cub.cuh>

namespace edn::cuda {
namespace {

constexpr int kBlock = 256;
unsigned int blocks_for(std::int64_t n) {
    return static_cast<unsigned int>((n + kBlock - 1) / kBlock);
}

__global__ void count_vertex_cells_kernel(const int4* cells, Index num_cells, Index* counts) {
    Index cell = blockIdx.x * blockDim.x + threadIdx.x;
    if (cell >= num_cells) return;
    int4 v = cells[cell]; // one 16-byte load per cell (paper sec. 4.1)
    atomicAdd(&counts[v.x], 1);
    atomicAdd(&counts[v.y], 1);
    atomicAdd(&counts[v.z], 1);
    atomicAdd(&counts[v.w], 1);
}

__device__ __forceinline__ void sort3(Index& a, Index& b, Index& c) {
    if (a > b) {
        Index t = a;
        a = b;
        b = t;
    }
    if (b > c) {
        Index t = b;
        b = c;
        c = t;
    }
    if (a > b) {
        Index t = a;
        a = b;
        b = t;
    }
}

/// 6 edge keys per cell (min << B | max, B = `bits` per vertex: the radix sort then takes 2B bits,
/// 4 passes of 8 where 32 + B took 6 on the 187K bunny), value = 6 * cell + local edge.
__global__ void edge_keys_kernel(const int4* cells, Index nt, int bits, unsigned long long* keys,
                                 Index* values) {
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nt) return;
    const int4 c = cells[t];
    const Index v[4] = {c.x, c.y, c.z, c.w};
    const int ev[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    for (int e = 0; e < 6; ++e) {
        const Index a = min(v[ev[e][0]], v[ev[e][1]]), b = max(v[ev[e][0]], v[ev[e][1]]);
        keys[6 * t + e] =
            (static_cast<unsigned long long>(a) << bits) | static_cast<unsigned int>(b);
        values[6 * t + e] = 6 * t + e;
    }
}

/// 4 face keys per cell; B = `bits` <= 21 per sorted vertex (meshes below 2^21 vertices; the
/// sort takes 3B bits, 6 passes where 63 took 8 on the 187K bunny), value = 4t + i.
__global__ void face_keys_kernel(const int4* cells, Index nt, int bits, unsigned long long* keys,
                                 Index* values) {
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nt) return;
    const int4 c = cells[t];
    const Index v[4] = {c.x, c.y, c.z, c.w};
    for (int i = 0; i < 4; ++i) {
        Index a = v[(i + 1) & 3], b = v[(i + 2) & 3], d = v[(i + 3) & 3];
        sort3(a, b, d);
        keys[4 * t + i] = (static_cast<unsigned long long>(a) << (2 * bits)) |
                          (static_cast<unsigned long long>(b) << bits) |
                          static_cast<unsigned long long>(d);
        values[4 * t + i] = 4 * t + i;
    }
}

/// heads[i] = 1 where a new key starts.
__global__ void head_flags_kernel(const unsigned long long* keys, std::int64_t n, Index* heads) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    heads[i] = (i == 0 || keys[i] != keys[i - 1]) ? 1 : 0;
}

/// From the inclusive scan of heads: simplex id per sorted entry; scatter to cell tables, write
/// the CSR of simplex -> cells (values in sorted order are ascending cells within a key).
__global__ void scatter_simplices_kernel(const unsigned long long* keys, const Index* values,
                                         const Index* scan, std::int64_t n, int per_cell,
                                         Index* cell_table, Index* simplex_cells, Index* offsets,
                                         unsigned long long* unique_keys) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Index id = scan[i] - 1;
    const Index v = values[i];
    cell_table[v] = id;
    simplex_cells[i] = v / per_cell;
    if (i == 0 || keys[i] != keys[i - 1]) {
        offsets[id] = static_cast<Index>(i);
        unique_keys[id] = keys[i];
    }
}

__global__ void unpack_edges_kernel(const unsigned long long* keys, Index ne, int bits,
                                    int2* edges) {
    const Index e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= ne) return;
    const unsigned long long mask = (1ull << bits) - 1;
    edges[e] = make_int2(static_cast<Index>(keys[e] >> bits), static_cast<Index>(keys[e] & mask));
}

__global__ void unpack_faces_kernel(const unsigned long long* keys, const Index* face_offsets,
                                    const Index* face_cells_sorted_values, const Index* cell_edges,
                                    Index nf, int bits, Index* faces, Index* face_edges) {
    const Index f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= nf) return;
    const unsigned long long k = keys[f];
    const unsigned long long mask = (1ull << bits) - 1;
    faces[3 * f] = static_cast<Index>(k >> (2 * bits));
    faces[3 * f + 1] = static_cast<Index>((k >> bits) & mask);
    faces[3 * f + 2] = static_cast<Index>(k & mask);
    // Edges of the face from its first (cell, local face): ascending ids = (a,b),(a,c),(b,c).
    const Index v = face_cells_sorted_values[face_offsets[f]];
    const Index t = v / 4, i = v % 4;
    const int fe[4][3] = {{3, 4, 5}, {1, 2, 5}, {0, 2, 4}, {0, 1, 3}};
    Index a = cell_edges[6 * t + fe[i][0]], b = cell_edges[6 * t + fe[i][1]],
          c = cell_edges[6 * t + fe[i][2]];
    sort3(a, b, c);
    face_edges[3 * f] = a, face_edges[3 * f + 1] = b, face_edges[3 * f + 2] = c;
}

__global__ void vertex_keys_kernel(const int4* cells, Index nt, Index* keys, Index* values) {
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= nt) return;
    const int4 c = cells[t];
    keys[4 * t] = c.x, keys[4 * t + 1] = c.y, keys[4 * t + 2] = c.z, keys[4 * t + 3] = c.w;
    for (int i = 0; i < 4; ++i) values[4 * t + i] = t;
}

int bits_for(std::int64_t n) {
    int bits = 1;
    while ((std::int64_t(1) << bits) < n + 1) ++bits;
    return bits;
}

/// Sort + unique of `n` keys with per-cell values into simplex ids, simplex->cells CSR and the
/// cell table. Returns the number of unique keys; `unique_keys` holds them.
Index unique_simplices(DeviceBuffer<unsigned long long>& keys, DeviceBuffer<Index>& values,
                       std::int64_t n, int per_cell, int key_bits, DeviceBuffer<Index>& cell_table,
                       DeviceBuffer<Index>& simplex_cells, DeviceBuffer<Index>& offsets,
                       DeviceBuffer<unsigned long long>& unique_keys, std::size_t& peak_extra,
                       std::size_t base_bytes) {
    DeviceBuffer<unsigned long long> keys_out(n);
    DeviceBuffer<Index> values_out(n);
    std::size_t temp_bytes = 0;
    EDN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.data(),
                                                   keys_out.data(), values.data(),
                                                   values_out.data(), n, 0, key_bits));
    {
        DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
        peak_extra = std::max(peak_extra, base_bytes + keys.bytes() + values.bytes() +
                                              keys_out.bytes() + values_out.bytes() + temp.bytes());
        EDN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, keys.data(),
                                                       keys_out.data(), values.data(),
                                                       values_out.data(), n, 0, key_bits));
    }
    keys = DeviceBuffer<unsigned long long>(); // the unsorted keys are no longer needed
    DeviceBuffer<Index> scan(n);
    head_flags_kernel<<<blocks_for(n), kBlock>>>(keys_out.data(), n, scan.data());
    EDN_CUDA_CHECK_LAUNCH();
    temp_bytes = 0;
    EDN_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, scan.data(), scan.data(), n));
    {
        DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
        EDN_CUDA_CHECK(
            cub::DeviceScan::InclusiveSum(temp.data(), temp_bytes, scan.data(), scan.data(), n));
    }
    Index unique = 0;
    EDN_CUDA_CHECK(cudaMemcpy(&unique, scan.data() + n - 1, sizeof(Index), cudaMemcpyDeviceToHost));
    cell_table.resize(n);
    simplex_cells.resize(n);
    offsets.resize(static_cast<std::size_t>(unique) + 1);
    unique_keys.resize(unique);
    scatter_simplices_kernel<<<blocks_for(n), kBlock>>>(
        keys_out.data(), values_out.data(), scan.data(), n, per_cell, cell_table.data(),
        simplex_cells.data(), offsets.data(), unique_keys.data());
    EDN_CUDA_CHECK_LAUNCH();
    const Index total = static_cast<Index>(n);
    EDN_CUDA_CHECK(
        cudaMemcpy(offsets.data() + unique, &total, sizeof(Index), cudaMemcpyHostToDevice));
    values = std::move(values_out); // callers may need the sorted values (faces)
    return unique;
}

} // namespace

std::vector<Index> vertex_cell_counts(std::span<const Cell> cells, Index num_vertices) {
    static_assert(sizeof(Cell) == sizeof(int4));
    std::vector<Index> counts(num_vertices, 0);
    if (cells.empty() || num_vertices == 0) return counts;
    DeviceBuffer<int4> d_cells(cells.size());
    DeviceBuffer<Index> d_counts(num_vertices);
    EDN_CUDA_CHECK(
        cudaMemcpy(d_cells.data(), cells.data(), d_cells.bytes(), cudaMemcpyHostToDevice));
    EDN_CUDA_CHECK(cudaMemset(d_counts.data(), 0, d_counts.bytes()));
    count_vertex_cells_kernel<<<blocks_for(cells.size()), kBlock>>>(
        d_cells.data(), static_cast<Index>(cells.size()), d_counts.data());
    EDN_CUDA_CHECK_LAUNCH();
    EDN_CUDA_CHECK(
        cudaMemcpy(counts.data(), d_counts.data(), d_counts.bytes(), cudaMemcpyDeviceToHost));
    return counts;
}

namespace {

__global__ void count_face_edges_kernel(const Index* face_edges, Index nf, Index* counts) {
    const Index f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= nf) return;
    for (int i = 0; i < 3; ++i) atomicAdd(&counts[face_edges[3 * f + i]], 1);
}

/// Sort keys of the node slot order: window << 8 | min(cells (+ extra), 255); values = ids.
__global__ void slot_keys_kernel(const Index* offsets, const Index* extra, Index n,
                                 unsigned int* keys, Index* values) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Index count = offsets[i + 1] - offsets[i];
    if (extra) count += extra[i];
    keys[i] = (static_cast<unsigned int>(i / kNodeSlotWindow) << 8) |
              static_cast<unsigned int>(count < 255 ? count : 255);
    values[i] = i;
}

__global__ void invert_slots_kernel(const Index* at, Index n, Index* slot) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) slot[at[i]] = i;
}

/// at/slot of `n` simplices with CSR `offsets` of their cells (+ `extra` per simplex): a stable
/// radix sort by (window, key), the host's per-window stable sort.
void order_slots(const DeviceBuffer<Index>& offsets, const Index* extra, Index n,
                 DeviceBuffer<Index>& slot, DeviceBuffer<Index>& at, std::size_t& peak_extra,
                 std::size_t base) {
    slot.resize(n);
    at.resize(n);
    if (n == 0) return;
    DeviceBuffer<unsigned int> keys(n), keys_out(n);
    DeviceBuffer<Index> values(n);
    slot_keys_kernel<<<blocks_for(n), kBlock>>>(offsets.data(), extra, n, keys.data(),
                                                values.data());
    EDN_CUDA_CHECK_LAUNCH();
    const int bits = 8 + bits_for((n + kNodeSlotWindow - 1) / kNodeSlotWindow);
    std::size_t temp_bytes = 0;
    EDN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, temp_bytes, keys.data(), keys_out.data(), values.data(), at.data(), n, 0, bits));
    DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
    EDN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, keys.data(),
                                                   keys_out.data(), values.data(), at.data(), n, 0,
                                                   bits));
    peak_extra = std::max(peak_extra, base + slot.bytes() + at.bytes() + 2 * keys.bytes() +
                                          values.bytes() + temp.bytes());
    invert_slots_kernel<<<blocks_for(n), kBlock>>>(at.data(), n, slot.data());
    EDN_CUDA_CHECK_LAUNCH();
}

/// build_topology with the peak bytes accumulated into `peak_extra`.
void build_topology_into(DeviceTopology& topo, std::size_t& peak_extra, int order) {
    const Index nt = topo.num_cells, nv = topo.num_vertices;
    EDN_VERIFY(nv < (1 << 21), ErrorCode::Unsupported,
               "GPU topology supports meshes below 2^21 vertices (" << nv << " given)");
    std::size_t base = topo.cells.bytes();
    const int vertex_bits = bits_for(nv); // (<= 21: the face keys' 3 vertices fit 64 bits)
    if (nt == 0) {
        topo.num_edges = topo.num_faces = 0;
        topo.vertex_offsets.resize(static_cast<std::size_t>(nv) + 1);
        EDN_CUDA_CHECK(cudaMemset(topo.vertex_offsets.data(), 0, topo.vertex_offsets.bytes()));
        return;
    }
    // vertexCells: stable sort of (vertex, cell) pairs; offsets by count + scan.
    {
        const std::int64_t n = 4 * std::int64_t(nt);
        DeviceBuffer<Index> keys(n), values(n), keys_out(n);
        topo.vertex_cells.resize(n);
        vertex_keys_kernel<<<blocks_for(nt), kBlock>>>(topo.cells.data(), nt, keys.data(),
                                                       values.data());
        EDN_CUDA_CHECK_LAUNCH();
        std::size_t temp_bytes = 0;
        const int bits = bits_for(nv);
        EDN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.data(),
                                                       keys_out.data(), values.data(),
                                                       topo.vertex_cells.data(), n, 0, bits));
        DeviceBuffer<unsigned char> temp(std::max<std::size_t>(temp_bytes, 1));
        EDN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, keys.data(),
                                                       keys_out.data(), values.data(),
                                                       topo.vertex_cells.data(), n, 0, bits));
        peak_extra = std::max(peak_extra, base + 3 * keys.bytes() + temp.bytes());
        topo.vertex_offsets.resize(static_cast<std::size_t>(nv) + 1);
        EDN_CUDA_CHECK(cudaMemset(topo.vertex_offsets.data(), 0, topo.vertex_offsets.bytes()));
        count_vertex_cells_kernel<<<blocks_for(nt), kBlock>>>(topo.cells.data(), nt,
                                                              topo.vertex_offsets.data());
        EDN_CUDA_CHECK_LAUNCH();
        temp_bytes = 0;
        EDN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
            nullptr, temp_bytes, topo.vertex_offsets.data(), topo.vertex_offsets.data(), nv + 1));
        DeviceBuffer<unsigned char> temp2(std::max<std::size_t>(temp_bytes, 1));
        EDN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp2.data(), temp_bytes,
                                                     topo.vertex_offsets.data(),
                                                     topo.vertex_offsets.data(), nv + 1));
    }
    base += topo.vertex_cells.bytes() + topo.vertex_offsets.bytes();
    // Edges.
    {
        const std::int64_t n = 6 * std::int64_t(nt);
        DeviceBuffer<unsigned long long> keys(n), unique_keys;
        DeviceBuffer<Index> values(n);
        edge_keys_kernel<<<blocks_for(nt), kBlock>>>(topo.cells.data(), nt, vertex_bits,
                                                     keys.data(), values.data());
        EDN_CUDA_CHECK_LAUNCH();
        topo.num_edges =
            unique_simplices(keys, values, n, 6, 2 * vertex_bits, topo.cell_edges, topo.edge_cells,
                             topo.edge_offsets, unique_keys, peak_extra, base);
        topo.edges.resize(topo.num_edges);
        unpack_edges_kernel<<<blocks_for(topo.num_edges), kBlock>>>(
            unique_keys.data(), topo.num_edges, vertex_bits, topo.edges.data());
        EDN_CUDA_CHECK_LAUNCH();
    }
    base += topo.cell_edges.bytes() + topo.edge_cells.bytes() + topo.edge_offsets.bytes() +
            topo.edges.bytes();
    // Faces.
    {
        const std::int64_t n = 4 * std::int64_t(nt);
        DeviceBuffer<unsigned long long> keys(n), unique_keys;
        DeviceBuffer<Index> values(n);
        face_keys_kernel<<<blocks_for(nt), kBlock>>>(topo.cells.data(), nt, vertex_bits,
                                                     keys.data(), values.data());
        EDN_CUDA_CHECK_LAUNCH();
        topo.num_faces =
            unique_simplices(keys, values, n, 4, 3 * vertex_bits, topo.cell_faces, topo.face_cells,
                             topo.face_offsets, unique_keys, peak_extra, base);
        topo.faces.resize(3 * static_cast<std::size_t>(topo.num_faces));
        topo.face_edges.resize(3 * static_cast<std::size_t>(topo.num_faces));
        unpack_faces_kernel<<<blocks_for(topo.num_faces), kBlock>>>(
            unique_keys.data(), topo.face_offsets.data(), values.data(), topo.cell_edges.data(),
            topo.num_faces, vertex_bits, topo.faces.data(), topo.face_edges.data());
        EDN_CUDA_CHECK_LAUNCH();
    }
    base += topo.face_offsets.bytes() + topo.face_cells.bytes() + topo.faces.bytes() +
            topo.face_edges.bytes() + topo.cell_faces.bytes();
    // Node slot order: edges by T_e + F_e (p >= 2), faces by T_f (p = 3).
    if (order >= 2) {
        DeviceBuffer<Index> faces_of_edge(topo.num_edges);
        EDN_CUDA_CHECK(cudaMemset(faces_of_edge.data(), 0, faces_of_edge.bytes()));
        if (topo.num_faces > 0) {
            count_face_edges_kernel<<<blocks_for(topo.num_faces), kBlock>>>(
                topo.face_edges.data(), topo.num_faces, faces_of_edge.data());
            EDN_CUDA_CHECK_LAUNCH();
        }
        order_slots(topo.edge_offsets, faces_of_edge.data(), topo.num_edges, topo.edge_slot,
                    topo.edge_at, peak_extra, base + faces_of_edge.bytes());
    }
    if (order >= 3)
        order_slots(topo.face_offsets, nullptr, topo.num_faces, topo.face_slot, topo.face_at,
                    peak_extra, base + topo.edge_slot.bytes() + topo.edge_at.bytes());
    // What the topology holds at the end (p = 1 ends with the faces, after their temporaries).
    peak_extra = std::max(peak_extra, topo.bytes());
}

} // namespace

void build_topology(DeviceTopology& topology, int order, std::size_t* peak_bytes) {
    std::size_t peak = 0;
    build_topology_into(topology, peak, order);
    if (peak_bytes) *peak_bytes = peak;
}

void upload_topology(const TetMesh& mesh, const Topology& host, DeviceTopology& d) {
    auto up = [](auto& dst, const auto* src, std::size_t count) {
        dst.resize(count);
        if (count) EDN_CUDA_CHECK(cudaMemcpy(dst.data(), src, dst.bytes(), cudaMemcpyHostToDevice));
    };
    d.num_vertices = mesh.num_vertices();
    d.num_cells = mesh.num_cells();
    d.num_edges = host.num_edges();
    d.num_faces = host.num_faces();
    up(d.cells, reinterpret_cast<const int4*>(mesh.cells.data()), mesh.cells.size());
    up(d.edges, reinterpret_cast<const int2*>(host.edges.data()), host.edges.size());
    up(d.faces, host.faces.data()->data(), 3 * host.faces.size());
    up(d.face_edges, host.face_edges.data()->data(), 3 * host.face_edges.size());
    up(d.cell_edges, host.cell_edges.data()->data(), 6 * host.cell_edges.size());
    up(d.cell_faces, host.cell_faces.data()->data(), 4 * host.cell_faces.size());
    up(d.vertex_offsets, host.vertex_cells.offsets.data(), host.vertex_cells.offsets.size());
    up(d.vertex_cells, host.vertex_cells.indices.data(), host.vertex_cells.indices.size());
    up(d.edge_offsets, host.edge_cells.offsets.data(), host.edge_cells.offsets.size());
    up(d.edge_cells, host.edge_cells.indices.data(), host.edge_cells.indices.size());
    up(d.face_offsets, host.face_cells.offsets.data(), host.face_cells.offsets.size());
    up(d.face_cells, host.face_cells.indices.data(), host.face_cells.indices.size());
    up(d.edge_slot, host.edge_slot.data(), host.edge_slot.size());
    up(d.edge_at, host.edge_at.data(), host.edge_at.size());
    up(d.face_slot, host.face_slot.data(), host.face_slot.size());
    up(d.face_at, host.face_at.data(), host.face_at.size());
}

Topology download_topology(const DeviceTopology& d) {
    auto down = [](auto& dst, const auto& src, std::size_t count) {
        dst.resize(count);
        if (count)
            EDN_CUDA_CHECK(cudaMemcpy(dst.data(), src.data(), src.bytes(), cudaMemcpyDeviceToHost));
    };
    Topology t;
    t.num_vertices = d.num_vertices;
    t.num_cells = d.num_cells;
    std::vector<int2> edges;
    down(edges, d.edges, d.edges.size());
    t.edges.resize(edges.size());
    for (std::size_t i = 0; i < edges.size(); ++i) t.edges[i] = {edges[i].x, edges[i].y};
    std::vector<Index> flat;
    down(flat, d.faces, d.faces.size());
    t.faces.resize(flat.size() / 3);
    for (std::size_t i = 0; i < t.faces.size(); ++i)
        t.faces[i] = {flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]};
    down(flat, d.face_edges, d.face_edges.size());
    t.face_edges.resize(flat.size() / 3);
    for (std::size_t i = 0; i < t.face_edges.size(); ++i)
        t.face_edges[i] = {flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]};
    down(flat, d.cell_edges, d.cell_edges.size());
    t.cell_edges.resize(flat.size() / 6);
    for (std::size_t i = 0; i < t.cell_edges.size(); ++i)
        for (int k = 0; k < 6; ++k) t.cell_edges[i][k] = flat[6 * i + k];
    down(flat, d.cell_faces, d.cell_faces.size());
    t.cell_faces.resize(flat.size() / 4);
    for (std::size_t i = 0; i < t.cell_faces.size(); ++i)
        for (int k = 0; k < 4; ++k) t.cell_faces[i][k] = flat[4 * i + k];
    down(t.vertex_cells.offsets, d.vertex_offsets, d.vertex_offsets.size());
    down(t.vertex_cells.indices, d.vertex_cells, d.vertex_cells.size());
    down(t.edge_cells.offsets, d.edge_offsets, d.edge_offsets.size());
    down(t.edge_cells.indices, d.edge_cells, d.edge_cells.size());
    down(t.face_cells.offsets, d.face_offsets, d.face_offsets.size());
    down(t.face_cells.indices, d.face_cells, d.face_cells.size());
    down(t.edge_slot, d.edge_slot, d.edge_slot.size());
    down(t.edge_at, d.edge_at, d.edge_at.size());
    down(t.face_slot, d.face_slot, d.face_slot.size());
    down(t.face_at, d.face_at, d.face_at.size());
    return t;
}

} // namespace edn::cuda
