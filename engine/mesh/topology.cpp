#include "mesh/topology.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <numeric>

namespace edn {
namespace {

// Vertices are processed in blocks so that each block reuses one scratch buffer; blocks are many
// more than threads so that the static schedule still balances irregular vertex degrees.
constexpr Index kVertexBlock = 512;

std::uint64_t pair_key(Index x, Index y) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(x)) << 32) |
           static_cast<std::uint32_t>(y);
}

Index key_high(std::uint64_t key) { return static_cast<Index>(key >> 32); }
Index key_low(std::uint64_t key) { return static_cast<Index>(key & 0xffffffffu); }

void add_one(Index& counter) {
    std::atomic_ref<Index>(counter).fetch_add(1, std::memory_order_relaxed);
}

// Exclusive scan of counts[0..n) into offsets[0..n]; counts are stored at offsets[1..n].
void scan_in_place(std::vector<Index>& offsets) {
    std::int64_t total = 0;
    for (auto& o : offsets) {
        total += o;
        o = static_cast<Index>(total);
    }
    EDN_VERIFY(total <= std::numeric_limits<Index>::max(), ErrorCode::OutOfMemory,
               "build_topology: " << total << " entries exceed the 32-bit index range");
}

// Calls per_vertex(v, scratch) for every vertex, in parallel over blocks of vertices.
template <class PerVertex> void for_vertex_blocks(Index num_vertices, PerVertex&& per_vertex) {
    const Index blocks = (num_vertices + kVertexBlock - 1) / kVertexBlock;
    parallel_for(0, blocks, [&](std::int64_t block) {
        std::vector<std::uint64_t> scratch;
        scratch.reserve(256);
        const Index begin = static_cast<Index>(block) * kVertexBlock;
        const Index end = std::min(num_vertices, begin + kVertexBlock);
        for (Index v = begin; v < end; ++v) per_vertex(v, scratch);
    });
}

// The edges {v, w} with w > v, sorted by w: the paper's sort+unique of edge tuples (sec. 4.1),
// done per lowest vertex so that it parallelises without a global sort. Keys hold w only.
void upper_neighbours(const std::vector<Cell>& cells, const Csr& vertex_cells, Index v,
                      std::vector<std::uint64_t>& out) {
    out.clear();
    for (Index c : vertex_cells.row(v))
        for (Index w : cells[c])
            if (w > v) out.push_back(static_cast<std::uint64_t>(w));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
}

// The faces {v, x, y} with v < x < y as 64-bit keys x<<32|y, sorted and unique.
void upper_faces(const std::vector<Cell>& cells, const Csr& vertex_cells, Index v,
                 std::vector<std::uint64_t>& out) {
    out.clear();
    for (Index c : vertex_cells.row(v)) {
        Index others[3];
        int n = 0;
        for (Index w : cells[c])
            if (w != v) others[n++] = w;
        std::sort(others, others + 3);
        // The cell's faces through v are v plus a pair of `others`; v is the lowest vertex of
        // that face when it is below the pair's smaller vertex.
        if (others[0] > v) {
            out.push_back(pair_key(others[0], others[1]));
            out.push_back(pair_key(others[0], others[2]));
        }
        if (false) out.push_back(pair_key(others[1], others[2]));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
}

void verify_cells(const TetMesh& mesh) {
    const Index nv = mesh.num_vertices();
    EDN_VERIFY(mesh.cells.size() <= static_cast<std::size_t>(std::numeric_limits<Index>::max() / 6),
               ErrorCode::OutOfMemory,
               "build_topology: " << mesh.cells.size() << " cells exceed the 32-bit index range");
    for (std::size_t c = 0; c < mesh.cells.size(); ++c) {
        const Cell& cell = mesh.cells[c];
        for (int i = 0; i < 4; ++i) {
            EDN_VERIFY(cell[i] >= 0 && cell[i] < nv, ErrorCode::IndexOutOfRange,
                       "build_topology: cell " << c << " references vertex " << cell[i] << " of "
                                               << nv);
            for (int j = 0; j < i; ++j)
                EDN_VERIFY(cell[i] != cell[j], ErrorCode::DegenerateElement,
                           "build_topology: cell " << c << " repeats vertex " << cell[i]);
        }
    }
}

} // namespace

template <std::size_t Width>
Csr transpose_table(std::span<const std::array<Index, Width>> table, Index num_columns) {
    Csr out;
    out.offsets.assign(static_cast<std::size_t>(num_columns) + 1, 0);
    const auto rows = static_cast<std::int64_t>(table.size());
    parallel_for(0, rows, [&](std::int64_t r) {
        for (Index col : table[r]) add_one(out.offsets[col + 1]);
    });
    scan_in_place(out.offsets);
    out.indices.resize(out.offsets.back());
    std::vector<Index> cursor(out.offsets.begin(), out.offsets.end() - 1);
    parallel_for(0, rows, [&](std::int64_t r) {
        for (Index col : table[r]) {
            const Index at = std::atomic_ref<Index>(cursor[col]).fetch_add(1, std::memory_order_relaxed);
            out.indices[at] = static_cast<Index>(r);
        }
    });
    // The parallel fill order is arbitrary; sorting each (short) row makes the result
    // deterministic and equal to a serial fill in ascending row order.
    parallel_for(0, num_columns, [&](std::int64_t col) {
        std::sort(out.indices.begin() + out.offsets[col], out.indices.begin() + out.offsets[col + 1]);
    });
    return out;
}

template Csr transpose_table<3>(std::span<const std::array<Index, 3>>, Index);
template Csr transpose_table<4>(std::span<const std::array<Index, 4>>, Index);
template Csr transpose_table<6>(std::span<const std::array<Index, 6>>, Index);

Index find_edge(const Topology& topology, Index a, Index b) {
    if (a > b) std::swap(a, b);
    if (a < 0 || b >= topology.num_vertices || a == b) return -1;
    const auto first = topology.edges.begin() + topology.edge_begin[a];
    const auto last = topology.edges.begin() + topology.edge_begin[a + 1];
    const auto it =
        std::lower_bound(first, last, b, [](const Edge& e, Index value) { return e[1] < value; });
    return (it != last && (*it)[1] == b) ? static_cast<Index>(it - topology.edges.begin()) : -1;
}

Index find_face(const Topology& topology, Index a, Index b, Index c) {
    Face key = {a, b, c};
    std::sort(key.begin(), key.end());
    if (key[0] < 0 || key[2] >= topology.num_vertices || key[0] == key[1] || key[1] == key[2])
        return -1;
    const auto first = topology.faces.begin() + topology.face_begin[key[0]];
    const auto last = topology.faces.begin() + topology.face_begin[key[0] + 1];
    const auto it = std::lower_bound(first, last, key);
    return (it != last && *it == key) ? static_cast<Index>(it - topology.faces.begin()) : -1;
}

Topology build_topology(const TetMesh& mesh) {
    verify_cells(mesh);
    Topology topo;
    const Index nv = mesh.num_vertices();
    const Index nt = mesh.num_cells();
    const std::vector<Cell>& cells = mesh.cells;
    topo.num_vertices = nv;
    topo.num_cells = nt;

    topo.vertex_cells = transpose_table<4>(cells, nv);

    // Edges, grouped by lower vertex: count, scan, fill.
    topo.edge_begin.assign(static_cast<std::size_t>(nv) + 1, 0);
    for_vertex_blocks(nv, [&](Index v, std::vector<std::uint64_t>& scratch) {
        upper_neighbours(cells, topo.vertex_cells, v, scratch);
        topo.edge_begin[v + 1] = static_cast<Index>(scratch.size());
    });
    scan_in_place(topo.edge_begin);
    topo.edges.resize(topo.edge_begin.back());
    for_vertex_blocks(nv, [&](Index v, std::vector<std::uint64_t>& scratch) {
        upper_neighbours(cells, topo.vertex_cells, v, scratch);
        Index at = topo.edge_begin[v];
        for (std::uint64_t w : scratch) topo.edges[at++] = {v, static_cast<Index>(w)};
    });

    // Faces, grouped by lowest vertex.
    topo.face_begin.assign(static_cast<std::size_t>(nv) + 1, 0);
    for_vertex_blocks(nv, [&](Index v, std::vector<std::uint64_t>& scratch) {
        upper_faces(cells, topo.vertex_cells, v, scratch);
        topo.face_begin[v + 1] = static_cast<Index>(scratch.size());
    });
    scan_in_place(topo.face_begin);
    topo.faces.resize(topo.face_begin.back());
    for_vertex_blocks(nv, [&](Index v, std::vector<std::uint64_t>& scratch) {
        upper_faces(cells, topo.vertex_cells, v, scratch);
        Index at = topo.face_begin[v];
        for (std::uint64_t key : scratch) topo.faces[at++] = {v, key_high(key), key_low(key)};
    });

    // Cell -> edge and cell -> face ids by binary search in the lower-vertex groups.
    topo.cell_edges.resize(nt);
    topo.cell_faces.resize(nt);
    parallel_for(0, nt, [&](std::int64_t c) {
        const Cell& cell = cells[c];
        for (int le = 0; le < 6; ++le)
            topo.cell_edges[c][le] = find_edge(topo, cell[kCellEdgeVertices[le][0]],
                                               cell[kCellEdgeVertices[le][1]]);
        for (int lf = 0; lf < 4; ++lf) {
            const auto& fv = kCellFaceVertices[lf];
            topo.cell_faces[c][lf] = find_face(topo, cell[fv[0]], cell[fv[1]], cell[fv[2]]);
        }
    });
    const Index ne = topo.num_edges();
    const Index nf = topo.num_faces();
    topo.face_edges.resize(nf);
    parallel_for(0, nf, [&](std::int64_t f) {
        const Face& face = topo.faces[f];
        topo.face_edges[f] = {find_edge(topo, face[0], face[1]), find_edge(topo, face[0], face[2]),
                              find_edge(topo, face[1], face[2])};
    });

    topo.edge_cells = transpose_table<6>(topo.cell_edges, ne);
    topo.face_cells = transpose_table<4>(topo.cell_faces, nf);

    // Counts for Eq. 6 (paper sec. 4.1 accumulates them with atomics, so do we).
    topo.vertex_edge_count.assign(nv, 0);
    topo.vertex_face_count.assign(nv, 0);
    topo.edge_face_count.assign(ne, 0);
    parallel_for(0, ne, [&](std::int64_t e) {
        for (Index v : topo.edges[e]) add_one(topo.vertex_edge_count[v]);
    });
    parallel_for(0, nf, [&](std::int64_t f) {
        for (Index v : topo.faces[f]) add_one(topo.vertex_face_count[v]);
        for (Index e : topo.face_edges[f]) add_one(topo.edge_face_count[e]);
    });

    // Boundary: faces with one cell. A face with three or more cells is not a manifold mesh.
    Index boundary = 0;
    for (Index f = 0; f < nf; ++f) {
        const Index n = topo.face_cells.row_size(f);
        EDN_VERIFY(n <= 2, ErrorCode::NonManifold,
                   "build_topology: face (" << topo.faces[f][0] << "," << topo.faces[f][1] << ","
                                            << topo.faces[f][2] << ") is shared by " << n
                                            << " cells");
        if (n == 1) ++boundary;
    }
    topo.boundary_face_ids.reserve(boundary);
    for (Index f = 0; f < nf; ++f)
        if (topo.face_cells.row_size(f) == 1) topo.boundary_face_ids.push_back(f);
    topo.boundary_faces.resize(boundary);
    topo.boundary_face_cell.resize(boundary);
    parallel_for(0, boundary, [&](std::int64_t b) {
        const Index f = topo.boundary_face_ids[b];
        const Index c = topo.face_cells.row(f)[0];
        int local = 0;
        while (topo.cell_faces[c][local] != f) ++local;
        const auto& fv = kCellFaceVertices[local];
        topo.boundary_faces[b] = {cells[c][fv[0]], cells[c][fv[1]], cells[c][fv[2]]};
        topo.boundary_face_cell[b] = c;
    });
    return topo;
}

Index num_components(const Topology& topology) {
    std::vector<Index> parent(topology.num_vertices);
    std::iota(parent.begin(), parent.end(), 0);
    auto root = [&](Index v) {
        while (parent[v] != v) {
            parent[v] = parent[parent[v]]; // path halving
            v = parent[v];
        }
        return v;
    };
    for (const Edge& e : topology.edges) {
        const Index a = root(e[0]);
        const Index b = root(e[1]);
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
    Index components = 0;
    for (Index v = 0; v < topology.num_vertices; ++v)
        if (topology.vertex_cells.row_size(v) > 0 && root(v) == v) ++components;
    return components;
}

} // namespace edn
