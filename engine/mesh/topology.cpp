#include "mesh/topology.hpp"

#include "core/error.hpp"
#include "core/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <compare>
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

Index key_high(std::uint64_t key) {
    return static_cast<Index>(key >> 32);
}
Index key_low(std::uint64_t key) {
    return static_cast<Index>(key & 0xffffffffu);
}

// A face {v, x, y} seen from its lowest vertex v: x << 32 | y, and one cell using it.
struct FaceEntry {
    std::uint64_t key;
    Index cell;
    auto operator<=>(const FaceEntry&) const = default;
};

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
template <class Scratch, class PerVertex>
void for_vertex_blocks(Index num_vertices, PerVertex&& per_vertex) {
    const Index blocks = (num_vertices + kVertexBlock - 1) / kVertexBlock;
    parallel_for(0, blocks, [&](std::int64_t block) {
        Scratch scratch;
        const Index begin = static_cast<Index>(block) * kVertexBlock;
        const Index end = std::min(num_vertices, begin + kVertexBlock);
        for (Index v = begin; v < end; ++v) per_vertex(v, scratch);
    });
}

// Local edge index (kCellEdgeVertices order) of local vertices i != j.
constexpr int kLocalEdge[4][4] = {{-1, 0, 1, 2}, {0, -1, 3, 4}, {1, 3, -1, 5}, {2, 4, 5, -1}};

int local_vertex(const Cell& cell, Index v) {
    int i = 0;
    while (cell[i] != v) ++i;
    return i;
}

// What one vertex v contributes: the edges {v, w} with w > v and the faces {v, x, y} with
// v < x < y, each entry tagged with the cell it came from. Sorting these per-vertex lists is the
// paper's sort + unique of simplex tuples (sec. 4.1) split by lowest vertex, so it runs in
// parallel without a global sort; the repeats of a simplex are exactly its cells, in ascending
// order, which yields edge_cells/face_cells and cell_edges/cell_faces in the same pass.
struct VertexScratch {
    std::vector<std::uint64_t> edges; // w << 32 | cell
    std::vector<FaceEntry> faces;
};

void collect(std::span<const Cell> cells, const Csr& vertex_cells, Index v, VertexScratch& out) {
    out.edges.clear();
    out.faces.clear();
    for (Index c : vertex_cells.row(v)) {
        Index others[3];
        int n = 0;
        for (Index w : cells[c])
            if (w != v) others[n++] = w;
        std::sort(others, others + 3);
        for (Index w : others)
            if (w > v) out.edges.push_back(pair_key(w, c));
        // The cell's faces through v are v plus a pair of `others`; v is the face's lowest
        // vertex when it is below the pair's smaller vertex.
        if (others[0] > v) {
            out.faces.push_back({pair_key(others[0], others[1]), c});
            out.faces.push_back({pair_key(others[0], others[2]), c});
        }
        if (others[1] > v) out.faces.push_back({pair_key(others[1], others[2]), c});
    }
    std::sort(out.edges.begin(), out.edges.end());
    std::sort(out.faces.begin(), out.faces.end());
}

// Number of distinct keys in a sorted list.
template <class Entries, class KeyOf> Index count_runs(const Entries& entries, KeyOf key_of) {
    Index runs = 0;
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (i == 0 || key_of(entries[i]) != key_of(entries[i - 1])) ++runs;
    return runs;
}

void verify_cells(std::span<const Cell> cells, Index nv) {
    EDN_VERIFY(cells.size() <= static_cast<std::size_t>(std::numeric_limits<Index>::max() / 6),
               ErrorCode::OutOfMemory,
               "build_topology: " << cells.size() << " cells exceed the 32-bit index range");
    for (std::size_t c = 0; c < cells.size(); ++c) {
        const Cell& cell = cells[c];
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
            const Index at =
                std::atomic_ref<Index>(cursor[col]).fetch_add(1, std::memory_order_relaxed);
            out.indices[at] = static_cast<Index>(r);
        }
    });
    // The parallel fill order is arbitrary; sorting each (short) row makes the result
    // deterministic and equal to a serial fill in ascending row order.
    parallel_for(0, num_columns, [&](std::int64_t col) {
        std::sort(out.indices.begin() + out.offsets[col],
                  out.indices.begin() + out.offsets[col + 1]);
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
    return cpu::build_topology(mesh.cells, mesh.num_vertices());
}

Topology cpu::build_topology(std::span<const Cell> cells, Index num_vertices) {
    verify_cells(cells, num_vertices);
    Topology topo;
    const Index nv = num_vertices;
    const Index nt = static_cast<Index>(cells.size());
    topo.num_vertices = nv;
    topo.num_cells = nt;

    topo.vertex_cells = transpose_table<4>(cells, nv);

    // Pass 1: per lowest vertex, how many edges/faces and how many (simplex, cell) entries.
    topo.edge_begin.assign(static_cast<std::size_t>(nv) + 1, 0);
    topo.face_begin.assign(static_cast<std::size_t>(nv) + 1, 0);
    std::vector<Index> edge_entry_begin(static_cast<std::size_t>(nv) + 1, 0);
    std::vector<Index> face_entry_begin(static_cast<std::size_t>(nv) + 1, 0);
    for_vertex_blocks<VertexScratch>(nv, [&](Index v, VertexScratch& scratch) {
        collect(cells, topo.vertex_cells, v, scratch);
        topo.edge_begin[v + 1] = count_runs(scratch.edges, key_high);
        topo.face_begin[v + 1] =
            count_runs(scratch.faces, [](const FaceEntry& f) { return f.key; });
        edge_entry_begin[v + 1] = static_cast<Index>(scratch.edges.size());
        face_entry_begin[v + 1] = static_cast<Index>(scratch.faces.size());
    });
    scan_in_place(topo.edge_begin);
    scan_in_place(topo.face_begin);
    scan_in_place(edge_entry_begin);
    scan_in_place(face_entry_begin);
    const Index ne = topo.edge_begin.back();
    const Index nf = topo.face_begin.back();
    topo.edges.resize(ne);
    topo.faces.resize(nf);
    topo.edge_cells.offsets.resize(static_cast<std::size_t>(ne) + 1);
    topo.edge_cells.indices.resize(edge_entry_begin.back());
    topo.face_cells.offsets.resize(static_cast<std::size_t>(nf) + 1);
    topo.face_cells.indices.resize(face_entry_begin.back());
    topo.edge_cells.offsets[ne] = edge_entry_begin.back();
    topo.face_cells.offsets[nf] = face_entry_begin.back();
    topo.cell_edges.resize(nt);
    topo.cell_faces.resize(nt);

    // Pass 2: fill. Each (cell, local edge) and (cell, local face) slot is written exactly once,
    // by the thread owning the simplex's lowest vertex.
    for_vertex_blocks<VertexScratch>(nv, [&](Index v, VertexScratch& scratch) {
        collect(cells, topo.vertex_cells, v, scratch);
        Index edge = topo.edge_begin[v] - 1;
        Index entry = edge_entry_begin[v];
        for (std::size_t i = 0; i < scratch.edges.size(); ++i, ++entry) {
            const Index w = key_high(scratch.edges[i]);
            const Index c = key_low(scratch.edges[i]);
            if (i == 0 || w != key_high(scratch.edges[i - 1])) {
                topo.edges[++edge] = {v, w};
                topo.edge_cells.offsets[edge] = entry;
            }
            topo.edge_cells.indices[entry] = c;
            topo.cell_edges[c][kLocalEdge[local_vertex(cells[c], v)][local_vertex(cells[c], w)]] =
                edge;
        }
        Index face = topo.face_begin[v] - 1;
        entry = face_entry_begin[v];
        for (std::size_t i = 0; i < scratch.faces.size(); ++i, ++entry) {
            const auto [key, c] = scratch.faces[i];
            if (i == 0 || key != scratch.faces[i - 1].key) {
                topo.faces[++face] = {v, key_high(key), key_low(key)};
                topo.face_cells.offsets[face] = entry;
            }
            topo.face_cells.indices[entry] = c;
            // Local face i is opposite local vertex i: the one vertex of c not on the face.
            const Cell& cell = cells[c];
            int opposite = 0;
            while (cell[opposite] == v || cell[opposite] == key_high(key) ||
                   cell[opposite] == key_low(key))
                ++opposite;
            topo.cell_faces[c][opposite] = face;
        }
    });

    // face_edges from any cell using the face: edge ids of (a,b),(a,c),(b,c) are ascending in the
    // lexicographic edge order, so sorting the cell's three face edges gives that order.
    topo.face_edges.resize(nf);
    parallel_for(0, nt, [&](std::int64_t c) {
        for (int lf = 0; lf < 4; ++lf) {
            const Index f = topo.cell_faces[c][lf];
            if (topo.face_cells.row(f)[0] != c) continue; // written once, by the first cell
            std::array<Index, 3> ids;
            for (int k = 0; k < 3; ++k) ids[k] = topo.cell_edges[c][kCellFaceEdges[lf][k]];
            std::sort(ids.begin(), ids.end());
            topo.face_edges[f] = ids;
        }
    });

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
    order_node_slots(topo);
    return topo;
}

namespace {

/// at[i]: the ids of each window [w, w + kNodeSlotWindow) stably sorted by key(id); slot: inverse.
template <class Key>
void windowed_order(Index n, Key key, std::vector<Index>& slot, std::vector<Index>& at) {
    at.resize(n);
    slot.resize(n);
    const Index windows = (n + kNodeSlotWindow - 1) / kNodeSlotWindow;
    parallel_for(0, windows, [&](std::int64_t w) {
        const Index begin = static_cast<Index>(w) * kNodeSlotWindow;
        const Index end = std::min(n, begin + kNodeSlotWindow);
        std::iota(at.begin() + begin, at.begin() + end, begin);
        std::stable_sort(at.begin() + begin, at.begin() + end,
                         [&](Index a, Index b) { return key(a) < key(b); });
        for (Index i = begin; i < end; ++i) slot[at[i]] = i;
    });
}

} // namespace

void order_node_slots(Topology& t) {
    const Index ne = t.num_edges(), nf = t.num_faces();
    EDN_VERIFY(t.edge_cells.num_rows() == ne && t.face_cells.num_rows() == nf &&
                   static_cast<Index>(t.face_edges.size()) == nf,
               ErrorCode::Internal, "order_node_slots: incomplete topology");
    // F_e from face_edges (a downloaded device topology has no edge_face_count).
    std::vector<Index> faces_of_edge = t.edge_face_count;
    if (static_cast<Index>(faces_of_edge.size()) != ne) {
        faces_of_edge.assign(ne, 0);
        for (Index f = 0; f < nf; ++f)
            for (Index e : t.face_edges[f]) ++faces_of_edge[e];
    }
    windowed_order(
        ne, [&](Index e) { return node_slot_key(t.edge_cells.row_size(e) + faces_of_edge[e]); },
        t.edge_slot, t.edge_at);
    windowed_order(
        nf, [&](Index f) { return node_slot_key(t.face_cells.row_size(f)); }, t.face_slot,
        t.face_at);
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
