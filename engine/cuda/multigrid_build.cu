// The multigrid's levels built on the device (cuda/multigrid_build.cuh); each pass mirrors a
// step of cpu/multigrid_setup.cpp, named there.
#include "cuda/cuda_multigrid.hpp"
#include "cuda/multigrid_build.cuh"
#include "cuda/read_back.cuh"

#include <algorithm>
#include <chrono>
#include <cooperative_groups.h>
#include <cstdlib>
#include <cub/cub.cuh>
#include <string_view>

namespace edn::cuda {
namespace {

namespace cg = cooperative_groups;

using Key = unsigned long long;
constexpr int kThreads = 256;
constexpr int kRows = 32; // rows per bin (kBinRows)

unsigned int grid(std::int64_t n) {
    return static_cast<unsigned int>(std::max<std::int64_t>(1, (n + kThreads - 1) / kThreads));
}

struct Pattern { // the device pattern, as BinBcsrPatternView without its host helpers
    Index rows;
    const Index *bin_offsets, *columns, *row_counts;
    __device__ Index slot(Index row, Index j) const {
        return bin_offsets[row / kRows] + j * kRows + row % kRows;
    }
    __device__ Index neighbour(Index row, Index j) const { return columns[slot(row, j)]; }
};

// ---- aggregation (greedy_aggregates, in parallel_aggregates' rounds) ----------------------------

enum : std::uint8_t { kOut = 0, kUndecided = 1, kIn = 2 };

__device__ bool pinned(const std::uint8_t* fixed, Index i) {
    return fixed != nullptr && fixed[i] != 0;
}

// A node's priority: the lower index first. The rounds then find the lexicographically first
// distance-2 independent set, the roots of cpu::build_multigrid's greedy aggregation (a node
// roots an aggregate there when no earlier root lies within 2 edges: its neighbours are all
// unaggregated), and the joins that follow are the greedy ones too, so the aggregates are
// Aggregation::Greedy's. (Hashed priorities, Aggregation::Parallel's, settle in fewer rounds,
// 12 against 58 on the 187K bunny, but root 18% fewer aggregates: 21% more CG iterations and
// 4% more frame time there, H100, bench/README.md.)
__device__ Key rank_of(Index i) {
    return Key(0x7fffffff) - Key(i);
}
__device__ Key key_of(const std::uint8_t* state, Index i) {
    return (Key(state[i]) << 62) | rank_of(i);
}

__global__ void k_agg_init(Index n, const std::uint8_t* fixed, std::uint8_t* state) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) state[i] = pinned(fixed, i) ? kOut : kUndecided;
}

// The kernels over a node's neighbours give each row a group of G lanes (the row's neighbours
// split among them, the result combined by shuffles): a coarse level's rows hold 40 and more,
// and one lane per row walked them one dependent load after another (with the aggregation's
// tens of rounds, the build's largest part there). Every lane reaches the shuffles.
template <int G> __device__ Key group_max(Key m) {
    for (int o = G / 2; o > 0; o >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, o, G));
    return m;
}
template <int G> __device__ Index group_sum(Index v) {
    for (int o = G / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o, G);
    return v;
}
// Inclusive sum of v over the lanes 0..lane of the group.
template <int G> __device__ Index group_inclusive_sum(Index v, int lane) {
    for (int o = 1; o < G; o <<= 1) {
        const Index u = __shfl_up_sync(0xffffffffu, v, o, G);
        if (lane >= o) v += u;
    }
    return v;
}

// ring1[i]: the largest key of i and its active neighbours.
template <int G>
__device__ void ring1_at(std::int64_t t, Pattern p, const std::uint8_t* fixed,
                         const std::uint8_t* state, Key* ring1) {
    const Index i = static_cast<Index>(t / G);
    const int lane = static_cast<int>(t % G);
    Key m = 0;
    if (i < p.rows) {
        if (lane == 0) m = key_of(state, i);
        for (Index j = lane; j < p.row_counts[i]; j += G) {
            const Index c = p.neighbour(i, j);
            if (!pinned(fixed, c)) m = max(m, key_of(state, c));
        }
    }
    m = group_max<G>(m);
    if (i < p.rows && lane == 0) ring1[i] = m;
}
template <int G>
__global__ void k_ring1(Pattern p, const std::uint8_t* fixed, const std::uint8_t* state,
                        Key* ring1) {
    ring1_at<G>(std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x, p, fixed, state, ring1);
}

// ring2[i]: the largest ring1 of i and its active neighbours; then i's decision: an undecided
// node whose 2-ring's largest key is its own joins the set, one whose 2-ring holds a set node
// leaves it. `undecided` (optional) counts those still undecided. (ring1 is complete before:
// each node's state changes after every ring1 is read.) A node that joins marks its 2-ring
// out at once (its group's lanes over its neighbours): no node there can join in the same
// round (the joining node's key is larger than theirs), and the next round sees them decided
// instead of a round later: within 32 rounds instead of 58 on the 187K bunny, the same set.
// Returns whether lane 0 of the group left its node undecided.
template <int G>
__device__ bool ring2_decide_at(std::int64_t t, Pattern p, const std::uint8_t* fixed,
                                const Key* ring1, std::uint8_t* state) {
    const Index i = static_cast<Index>(t / G);
    const int lane = static_cast<int>(t % G);
    const bool open = i < p.rows && state[i] == kUndecided;
    Key m = 0;
    if (open) {
        if (lane == 0) m = ring1[i];
        for (Index j = lane; j < p.row_counts[i]; j += G) {
            const Index c = p.neighbour(i, j);
            if (!pinned(fixed, c)) m = max(m, ring1[c]);
        }
    }
    m = group_max<G>(m);
    int joins = 0;
    bool left_open = false;
    if (open && lane == 0) {
        if (m == key_of(state, i)) {
            state[i] = kIn;
            joins = 1;
        } else if ((m >> 62) == kIn) {
            state[i] = kOut;
        } else {
            left_open = true;
        }
    }
    joins = __shfl_sync(0xffffffffu, joins, 0, G);
    if (!joins) return left_open;
    for (Index j = lane; j < p.row_counts[i]; j += G) {
        const Index c = p.neighbour(i, j);
        if (pinned(fixed, c)) continue; // (out already; distances are the free nodes' graph's)
        state[c] = kOut;
        // c's neighbours 8 at a time, loaded before they are stored: a byte store may alias the
        // columns, so one at a time each load waited for the store before it (a coarse level's
        // rows of 90 made each round's joins take 30-90 us, the 187K bunny's level 1, H100)
        const Index count = p.row_counts[c];
        const Index* columns = p.columns + p.slot(c, 0);
        for (Index k0 = 0; k0 < count; k0 += 8) {
            Index d[8];
#pragma unroll
            for (int u = 0; u < 8; ++u) d[u] = k0 + u < count ? columns[(k0 + u) * kRows] : i;
#pragma unroll
            for (int u = 0; u < 8; ++u)
                if (d[u] != i) state[d[u]] = kOut;
        }
    }
    return false;
}
template <int G>
__global__ void k_ring2_decide(Pattern p, const std::uint8_t* fixed, const Key* ring1,
                               std::uint8_t* state, Index* undecided) {
    if (ring2_decide_at<G>(std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x, p, fixed, ring1,
                           state) &&
        undecided)
        atomicAdd(undecided, 1);
}

// Every round in one cooperative launch, a grid-wide barrier after each pass (the two kernels a
// round and a read-back every 8 rounds took 0.6 ms of launches and waits for the 32 rounds of
// the 187K bunny's level 0, H100): the threads stride over the groups of lanes (whole warps), a
// block that left a node undecided raises the round's flag (three flags in turn: the one of
// round r + 1 is cleared in round r, two barriers after its last read), and all stop after the
// first round that leaves none. rounds[0]: the rounds taken, or -1 when max_rounds were not
// enough (flags[0] is zero at the launch).
template <int G>
__global__ void __launch_bounds__(kThreads)
    k_rounds(Pattern p, const std::uint8_t* fixed, std::uint8_t* state, Key* ring1, Index* flags,
             int max_rounds, Index* rounds) {
    cg::grid_group grid = cg::this_grid();
    const std::int64_t stride = std::int64_t(gridDim.x) * blockDim.x;
    const std::int64_t end = (std::int64_t(p.rows) * G + 31) / 32 * 32; // whole warps
    const std::int64_t first = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (int round = 0; round < max_rounds; ++round) {
        if (first == 0) flags[(round + 1) % 3] = 0;
        for (std::int64_t t = first; t < end; t += stride) ring1_at<G>(t, p, fixed, state, ring1);
        grid.sync();
        bool open = false;
        for (std::int64_t t = first; t < end; t += stride)
            open |= ring2_decide_at<G>(t, p, fixed, ring1, state);
        if (__syncthreads_or(open) && threadIdx.x == 0) flags[round % 3] = 1;
        grid.sync();
        if (__ldcg(flags + round % 3) == 0) {
            if (first == 0) *rounds = round + 1;
            return;
        }
    }
    if (first == 0) *rounds = -1;
}

// flags[i] = 1 for the nodes `which` selects (0: the set's roots, 1: active nodes left without
// an aggregate, 2: aggregated nodes); flags[n] = 0.
__global__ void k_flags(Index n, const std::uint8_t* fixed, const std::uint8_t* state,
                        const Index* aggregate, int which, Index* flags) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > n) return;
    if (i == n) {
        flags[n] = 0;
        return;
    }
    flags[i] = which == 2 ? aggregate[i] >= 0
                          : !pinned(fixed, i) && (which == 0 ? state[i] == kIn : aggregate[i] < 0);
}

// The roots numbered in index order (ids: the flags' exclusive sum); the others -1.
__global__ void k_number_roots(Index n, const Index* flags, const Index* ids, Index* aggregate) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) aggregate[i] = flags[i] ? ids[i] : -1;
}

// An active non-root node next to a root joins its aggregate (at most one root is that near:
// the roots are 3 edges apart); a group of G lanes per row.
template <int G>
__global__ void k_join_roots(Pattern p, const std::uint8_t* fixed, const std::uint8_t* state,
                             const Index* aggregate, Index* joined) {
    const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const Index i = static_cast<Index>(t / G);
    const int lane = static_cast<int>(t % G);
    const bool live = i < p.rows;
    const Index a = live ? aggregate[i] : 0;
    Key root = 0; // its aggregate + 1
    if (live && !pinned(fixed, i) && a < 0)
        for (Index j = lane; j < p.row_counts[i]; j += G) {
            const Index c = p.neighbour(i, j);
            if (!pinned(fixed, c) && state[c] == kIn) root = Key(aggregate[c]) + 1;
        }
    root = group_max<G>(root);
    if (live && lane == 0) joined[i] = a < 0 && root != 0 ? static_cast<Index>(root - 1) : a;
}

// The rest join the aggregate they have most neighbours in, the smallest of equals (the lanes
// of a row's group count the votes of its neighbours' aggregates, j = lane, lane + G, ...).
template <int G>
__global__ void k_join_votes(Pattern p, const std::uint8_t* fixed, const Index* aggregate,
                             Index* joined) {
    const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const Index i = static_cast<Index>(t / G);
    const int lane = static_cast<int>(t % G);
    const bool open = i < p.rows && !pinned(fixed, i) && aggregate[i] < 0;
    // (votes, -aggregate) packed: the largest is the most votes, then the smallest aggregate
    Key best = 0;
    if (open) {
        const Index count = p.row_counts[i];
        for (Index j = lane; j < count; j += G) {
            const Index c = p.neighbour(i, j);
            const Index a = aggregate[c];
            if (a < 0 || pinned(fixed, c)) continue;
            Index votes = 0;
            for (Index k = 0; k < count; ++k) {
                const Index d = p.neighbour(i, k);
                if (!pinned(fixed, d) && aggregate[d] == a) ++votes;
            }
            best = max(best, (Key(votes) << 32) | Key(0x7fffffff - a));
        }
    }
    best = group_max<G>(best);
    if (i >= p.rows || lane != 0) return;
    joined[i] = !open       ? aggregate[i]
                : best == 0 ? -1
                            : Index(0x7fffffff - Index(best & 0xffffffffu));
}

// Active nodes still without one get aggregates of their own, numbered from `base` in index order.
__global__ void k_number_rest(Index n, const Index* flags, const Index* ids, const Index* base,
                              Index* aggregate) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && flags[i]) aggregate[i] = *base + ids[i];
}

// Sort keys of the aggregated nodes (their aggregates) and the members counted per aggregate.
template <class K>
__global__ void k_member_keys(const Index* active, Index n, const Index* aggregate, K* keys,
                              Index* count) {
    const Index k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const Index a = aggregate[active[k]];
    keys[k] = K(a);
    atomicAdd(&count[a], 1);
}

// ---- P (transfer_patterns) ---------------------------------------------------------------------

// count[i]: row i's entries whose column is free (its free neighbours', its diagonal), none
// for a pinned row: each smooths into the P block (i, its column's aggregate); every free node
// is aggregated.
__global__ void k_p_count(Pattern p, const std::uint8_t* fixed, Index* count) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > p.rows) return;
    Index c = 0;
    if (i < p.rows && !pinned(fixed, i)) {
        c = 1;
        for (Index j = 0; j < p.row_counts[i]; ++j) c += !pinned(fixed, p.neighbour(i, j));
    }
    count[i] = c;
}

// Those entries in ascending order (the neighbours' slots by j, then the diagonal entry,
// numbered after every slot), keyed (i, aggregate) for a stable sort: a run is a P block and its
// smoothing entries.
// (a group of G lanes per row: the entries' places by a scan over the lanes)
template <class K, int G>
__global__ void k_p_fill(Pattern p, const Index* slots, const Index* aggregate,
                         const Index* offsets, int column_bits, K* keys, Index* entries) {
    const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const Index i = static_cast<Index>(t / G);
    const int lane = static_cast<int>(t % G);
    const bool live = i < p.rows && aggregate[i] >= 0;
    const Index count = live ? p.row_counts[i] : 0;
    Index at = live ? offsets[i] : 0;
    for (Index j0 = 0; __any_sync(0xffffffffu, j0 < count); j0 += G) {
        const Index j = j0 + lane;
        Index a = -1, s = 0;
        if (j < count) {
            s = p.slot(i, j);
            a = aggregate[p.columns[s]];
        }
        const Index end = group_inclusive_sum<G>(a >= 0 ? 1 : 0, lane);
        if (a >= 0) {
            keys[at + end - 1] = (K(i) << column_bits) | K(a);
            entries[at + end - 1] = s;
        }
        at += __shfl_sync(0xffffffffu, end, G - 1, G);
    }
    if (live && lane == 0) {
        keys[at] = (K(i) << column_bits) | K(aggregate[i]);
        entries[at] = *slots + i;
    }
}

// ---- p-multigrid's first level (given_level): P is the given interpolation ---------------------

// The coarse nodes of fine node i's interpolation that receive a P block: free, with a nonzero
// weight (3 slots per node, -1 ends them; coarse node v is fine node v, pinned as it); none
// for a pinned row. Up to 3, ascending (the host sorts the row).
struct GivenRow {
    Index column[3];
    double weight[3];
    int count = 0;
};
__device__ GivenRow given_row(Index i, const std::uint8_t* fixed, const Index* vertex,
                              const double* weight) {
    GivenRow r;
    if (pinned(fixed, i)) return r;
    for (int k = 0; k < 3; ++k) {
        const Index v = vertex[3 * std::int64_t(i) + k];
        if (v < 0) break;
        const double w = weight[3 * std::int64_t(i) + k];
        if (pinned(fixed, v) || w == 0) continue;
        int at = r.count++;
        for (; at > 0 && r.column[at - 1] > v; --at) {
            r.column[at] = r.column[at - 1];
            r.weight[at] = r.weight[at - 1];
        }
        r.column[at] = v;
        r.weight[at] = w;
    }
    return r;
}

__global__ void k_given_count(Index n, const std::uint8_t* fixed, const Index* vertex,
                              const double* weight, Index* count) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n) count[i] = i < n ? given_row(i, fixed, vertex, weight).count : 0;
}

// P's blocks of row i: columns, rows and values (weight * I, padded to 12 floats: load_padded).
__global__ void k_given_fill(Index n, const std::uint8_t* fixed, const Index* vertex,
                             const double* weight, const Index* offsets, Index* columns,
                             Index* rows, float* values) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const GivenRow r = given_row(i, fixed, vertex, weight);
    for (int k = 0; k < r.count; ++k) {
        const Index at = offsets[i] + k;
        columns[at] = r.column[k];
        rows[at] = i;
        float* v = values + 12 * std::int64_t(at);
        for (int e = 0; e < 12; ++e) v[e] = e < 9 && e % 4 == 0 ? float(r.weight[k]) : 0.f;
    }
}

// make_coarse_space's prolongation from the cell node table: local node a of cell t takes the
// cell's vertices (its local nodes 0..3; vertex node v is node v) with weights local[4a + v],
// ascending by vertex. Every cell holding a node gives the same vertices and weights but for
// their last bits (a p = 3 edge node's 1/3 is 1 - 2/3 from one end), so the node's first cell
// (the lowest index, k_first_cell) writes them, as on the host.
struct LocalWeights {
    double w[4 * 20];
};
__global__ void k_first_cell(CellNodesView cells, Index* first) {
    const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t < std::int64_t(cells.num_cells) * cells.per_cell)
        atomicMin(first + cells.nodes[t], static_cast<Index>(t / cells.per_cell));
}
__global__ void k_p1_transfer(CellNodesView cells, LocalWeights local, const Index* first,
                              Index* vertex, double* weight) {
    const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const int m = cells.per_cell;
    if (t >= std::int64_t(cells.num_cells) * m) return;
    const Index* nodes = cells.nodes + t / m * m;
    const int a = static_cast<int>(t % m);
    if (first[nodes[a]] != static_cast<Index>(t / m)) return;
    Index v[3] = {-1, -1, -1};
    double w[3] = {0, 0, 0};
    int count = 0;
    for (int c = 0; c < 4; ++c) {
        const double x = local.w[4 * a + c];
        if (x == 0) continue;
        int at = count++;
        for (; at > 0 && v[at - 1] > nodes[c]; --at) {
            v[at] = v[at - 1];
            w[at] = w[at - 1];
        }
        v[at] = nodes[c];
        w[at] = x;
    }
    const std::int64_t node = nodes[a];
    for (int k = 0; k < 3; ++k) {
        vertex[3 * node + k] = v[k];
        weight[3 * node + k] = w[k];
    }
}

// ---- A P (product_pattern) ---------------------------------------------------------------------

// count[i]: row i's (entry, P block) triples: the P rows of its neighbours and its own (none
// without a P row of its own); a group of G lanes per row.
template <int G> __global__ void k_ap_count(Pattern p, const Index* p_offsets, Index* count) {
    const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const Index i = static_cast<Index>(t / G);
    const int lane = static_cast<int>(t % G);
    Index c = 0;
    const bool live = i < p.rows && p_offsets[i + 1] > p_offsets[i];
    if (live) {
        if (lane == 0) c = p_offsets[i + 1] - p_offsets[i];
        for (Index j = lane; j < p.row_counts[i]; j += G) {
            const Index k = p.neighbour(i, j);
            c += p_offsets[k + 1] - p_offsets[k];
        }
    }
    c = group_sum<G>(c);
    if (i <= p.rows && lane == 0) count[i] = live ? c : 0;
}

// The triples of row i in ascending entry order, keyed (i, J) for a stable sort. A group of G
// lanes per row: lane j0 + lane writes the P row of source j0 + lane (the neighbours, then the
// diagonal) at its place from a scan over the lanes (one thread per row wrote them all: 2,202
// rows of 90 neighbours on the 187K bunny's level 1 took 0.29 ms, H100).
template <class K, int G>
__global__ void k_ap_fill(Pattern p, const Index* slots, const Index* p_offsets,
                          const Index* p_columns, const Index* offsets, int column_bits, K* keys,
                          Index* order, Index* entry, Index* pblock) {
    const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const Index i = static_cast<Index>(t / G);
    const int lane = static_cast<int>(t % G);
    const bool live = i < p.rows && p_offsets[i + 1] > p_offsets[i];
    const Index sources = live ? p.row_counts[i] + 1 : 0;
    Index at = live ? offsets[i] : 0;
    for (Index j0 = 0; __any_sync(0xffffffffu, j0 < sources); j0 += G) {
        const Index j = j0 + lane;
        Index e = 0, first = 0, len = 0;
        if (j < sources) {
            const Index c = j + 1 < sources ? p.neighbour(i, j) : i;
            e = j + 1 < sources ? p.slot(i, j) : *slots + i;
            first = p_offsets[c];
            len = p_offsets[c + 1] - first;
        }
        const Index end = group_inclusive_sum<G>(len, lane);
        Index to = at + end - len;
        for (Index k = first; k < first + len; ++k, ++to) {
            keys[to] = (K(i) << column_bits) | K(p_columns[k]);
            order[to] = to;
            entry[to] = e;
            pblock[to] = k;
        }
        at += __shfl_sync(0xffffffffu, end, G - 1, G);
    }
}

// heads[s] = 1 where sorted key s starts a run; heads[n] = 0.
template <class K> __global__ void k_heads(const K* keys, std::int64_t n, Index* heads) {
    const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s > n) return;
    heads[s] = s < n && (s == 0 || keys[s] != keys[s - 1]);
}

// The runs of sorted keys (row << column_bits | column) as blocks: each block's column, row
// (optional) and first item; the blocks per row counted.
template <class K>
__global__ void k_runs(const K* keys, std::int64_t n, const Index* heads, const Index* ids,
                       int column_bits, Index* columns, Index* rows, Index* first,
                       Index* row_count) {
    const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= n || !heads[s]) return;
    const Index b = ids[s];
    const Index row = static_cast<Index>(keys[s] >> column_bits);
    columns[b] = static_cast<Index>(keys[s] & ((K(1) << column_bits) - 1));
    if (rows) rows[b] = row;
    first[b] = static_cast<Index>(s);
    atomicAdd(&row_count[row], 1);
}

// The A P pairs in sorted order.
__global__ void k_gather_pairs(const Index* order, const Index* entry, const Index* pblock,
                               std::int64_t n, Index* pair_entry, Index* pair_p) {
    const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= n) return;
    pair_entry[s] = entry[order[s]];
    pair_p[s] = pblock[order[s]];
}

// ---- restriction and coarse operator (coarse_pattern) -------------------------------------------

template <class K>
__global__ void k_iota_keys(const Index* p_columns, Index n, K* keys, Index* values, Index* count) {
    const Index k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    keys[k] = K(p_columns[k]);
    values[k] = k;
    atomicAdd(&count[p_columns[k]], 1);
}

__global__ void k_restriction_rows(const Index* blocks, const Index* p_rows, Index n, Index* rows) {
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) rows[t] = p_rows[blocks[t]];
}

// count[t]: the A P blocks of restriction entry t's row.
__global__ void k_c_count(const Index* r_rows, Index n, const Index* ap_offsets, Index* count) {
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t > n) return;
    count[t] = t < n ? ap_offsets[r_rows[t] + 1] - ap_offsets[r_rows[t]] : 0;
}

// The (P block, A P block) pairs of every coarse entry (I, J), keyed for a stable sort, in the
// host's order: restriction entries of I ascending, then A P blocks ascending (G lanes per
// restriction entry, over its A P row).
template <class K, int G>
__global__ void k_c_fill(const Index* r_blocks, const Index* r_rows, Index n,
                         const Index* p_columns, const Index* ap_offsets, const Index* ap_columns,
                         const Index* offsets, int column_bits, K* keys, Index* order,
                         Index* pair_p, Index* pair_ap) {
    const std::int64_t g = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const Index t = static_cast<Index>(g / G);
    const int lane = static_cast<int>(g % G);
    if (t >= n) return;
    const Index I = p_columns[r_blocks[t]], i = r_rows[t];
    const Index base = offsets[t] - ap_offsets[i];
    for (Index q = ap_offsets[i] + lane; q < ap_offsets[i + 1]; q += G) {
        const Index at = base + q;
        keys[at] = (K(I) << column_bits) | K(ap_columns[q]);
        order[at] = at;
        pair_p[at] = r_blocks[t];
        pair_ap[at] = q;
    }
}

// Per distinct coarse entry u (a run of sorted pairs): its row, column and first pair; the
// off-diagonal count and the entries per row.
template <class K>
__global__ void k_c_entries(const K* keys, std::int64_t n, const Index* heads, const Index* ids,
                            int column_bits, Index* u_row, Index* u_col, Index* u_first,
                            Index* row_counts, Index* row_entries) {
    const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= n || !heads[s]) return;
    const Index u = ids[s];
    const Index I = static_cast<Index>(keys[s] >> column_bits);
    const Index J = static_cast<Index>(keys[s] & ((K(1) << column_bits) - 1));
    u_row[u] = I;
    u_col[u] = J;
    u_first[u] = static_cast<Index>(s);
    atomicAdd(&row_entries[I], 1);
    if (J != I) atomicAdd(&row_counts[I], 1);
}

// The entry (slot, or #slots + row for the diagonal) of distinct entry u; row_first: the
// row's first distinct entry (the diagonal sits among the sorted columns, not in the slots).
__device__ Index entry_of(Pattern c, Index slots, const Index* u_row, const Index* u_col,
                          const Index* row_first, Index u) {
    const Index I = u_row[u], J = u_col[u];
    if (J == I) return slots + I;
    return c.slot(I, u - row_first[I] - (J > I ? 1 : 0));
}

// Columns of every slot (padding: the row), the pair counts of the diagonal and upper entries,
// and each upper slot's mirror (J, I) (`unsymmetric` set where the pattern has none).
__global__ void k_c_columns(Pattern c, Index slots, Index unique, const Index* u_row,
                            const Index* u_col, const Index* u_first, std::int64_t pairs,
                            const Index* row_first, Index* columns, Index* g_count) {
    const Index u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= unique) return;
    const Index I = u_row[u], J = u_col[u];
    const Index e = entry_of(c, slots, u_row, u_col, row_first, u);
    if (J != I) columns[e] = J;
    const Index next = u + 1 < unique ? u_first[u + 1] : static_cast<Index>(pairs);
    g_count[e] = J >= I ? next - u_first[u] : 0;
}

// Padding slots hold the row (the last bin's lanes past the rows: 0, as the host's pattern).
__global__ void k_c_padding(Pattern c, Index bins, Index* columns) {
    const Index I = blockIdx.x * blockDim.x + threadIdx.x;
    if (I >= bins * kRows) return;
    const Index bin = I / kRows;
    const Index width = (c.bin_offsets[bin + 1] - c.bin_offsets[bin]) / kRows;
    const bool row = I < c.rows;
    for (Index j = row ? c.row_counts[I] : 0; j < width; ++j) columns[c.slot(I, j)] = row ? I : 0;
}

// (G lanes per row, a binary search each: one thread per row took 0.16 ms on the 187K bunny's
// level 0, H100)
template <int G> __global__ void k_c_mirror(Pattern c, Index* mirror, Index* unsymmetric) {
    const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const Index I = static_cast<Index>(t / G);
    if (I >= c.rows) return;
    for (Index j = static_cast<Index>(t % G); j < c.row_counts[I]; j += G) {
        const Index s = c.slot(I, j), J = c.columns[s];
        if (J < I) continue;
        Index lo = 0, hi = c.row_counts[J];
        while (lo < hi) {
            const Index mid = (lo + hi) / 2;
            if (c.neighbour(J, mid) < I)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < c.row_counts[J] && c.neighbour(J, lo) == I)
            mirror[s] = c.slot(J, lo);
        else
            atomicAdd(unsymmetric, 1);
    }
}

// The pairs of the diagonal and upper entries into their places.
__global__ void k_g_fill(const Index* order, const Index* pair_p, const Index* pair_ap,
                         std::int64_t n, const Index* heads, const Index* ids, Pattern c,
                         Index slots, const Index* u_row, const Index* u_col, const Index* u_first,
                         const Index* row_first, const Index* g_offsets, Index* g_p, Index* g_ap) {
    const std::int64_t s = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= n) return;
    const Index u = ids[s] + heads[s] - 1; // (ids: the heads before s)
    if (u_col[u] < u_row[u]) return;
    const Index e = entry_of(c, slots, u_row, u_col, row_first, u);
    const Index at = g_offsets[e] + static_cast<Index>(s) - u_first[u];
    g_p[at] = pair_p[order[s]];
    g_ap[at] = pair_ap[order[s]];
}

// flags[e] = 1 for the entries k_galerkin sums: slots with pairs and every diagonal.
__global__ void k_g_entry_flags(const Index* g_offsets, Index slots, Index entries, Index* flags) {
    const Index e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e > entries) return;
    flags[e] = e < entries && (e >= slots || g_offsets[e + 1] > g_offsets[e]);
}

__global__ void k_compact(const Index* flags, const Index* ids, Index n, Index* out) {
    const Index e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e < n && flags[e]) out[ids[e]] = e;
}

__global__ void k_fill(Index* v, std::int64_t n, Index value) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) v[i] = value;
}

// Exclusive sums of `count` <= kSmallScan values in one block (exclusive_sum).
constexpr int kScanThreads = 1024, kScanItems = 8, kSmallScan = kScanThreads * kScanItems;
__global__ void __launch_bounds__(kScanThreads)
    k_small_scan(const Index* in, Index* out, int count) {
    using BlockScan = cub::BlockScan<Index, kScanThreads>;
    __shared__ typename BlockScan::TempStorage temp;
    const int base = threadIdx.x * kScanItems;
    Index v[kScanItems];
#pragma unroll
    for (int k = 0; k < kScanItems; ++k) v[k] = base + k < count ? in[base + k] : 0;
    BlockScan(temp).ExclusiveSum(v, v);
#pragma unroll
    for (int k = 0; k < kScanItems; ++k)
        if (base + k < count) out[base + k] = v[k];
}

// ---- host helpers ----------------------------------------------------------------------------

// CUB's temporary storage of at least `bytes`, kept for the calling thread's later calls (its
// default stream orders them): one allocation instead of one per scan and sort.
void* cub_temp(std::size_t bytes) {
    thread_local DeviceBuffer<unsigned char> temp;
    if (temp.size() < bytes) temp = DeviceBuffer<unsigned char>(std::max<std::size_t>(bytes, 4096));
    return temp.data();
}

// out[0..n] = exclusive sums of in[0..n] (n + 1 values; in[n] is expected 0, so out[n] is the
// total; read it where needed). Up to kSmallScan values by one block (one launch, where CUB's
// scan takes two: a launch costs the host about 5 us on the H100 machine, more than these
// scans' work, and the coarse levels' builds are mostly launches).
void exclusive_sum(const Index* in, Index* out, std::int64_t n) {
    if (n + 1 <= kSmallScan) {
        k_small_scan<<<1, kScanThreads>>>(in, out, static_cast<int>(n + 1));
        EDN_CUDA_CHECK_LAUNCH();
        return;
    }
    std::size_t bytes = 0;
    EDN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n + 1));
    EDN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(cub_temp(bytes), bytes, in, out, n + 1));
}

// Blocks of kThreads of `kernel` that fit on the device at once (a cooperative launch's most),
// 0 where cooperative launches are not supported.
template <class Kernel> unsigned int cooperative_blocks(Kernel* kernel) {
    int device = 0, cooperative = 0, sms = 0, per_sm = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&device));
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
    if (!cooperative) return 0;
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    EDN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, reinterpret_cast<const void*>(kernel), kThreads, 0));
    return static_cast<unsigned int>(std::max(0, per_sm * sms));
}

Index read(const Index* p) {
    Index v = 0;
    read_back(p, &v);
    return v;
}

// exclusive_sum, then its total read back (a wait).
Index exclusive_total(const Index* in, Index* out, std::int64_t n) {
    exclusive_sum(in, out, n);
    return read(out + n);
}

// Stable sort of `values` by the low `bits` of `keys` (both replaced by the sorted arrays).
template <class K>
void sort_pairs(DeviceBuffer<K>& keys, DeviceBuffer<Index>& values, std::int64_t n, int bits) {
    EDN_VERIFY(n < (std::int64_t(1) << 31), ErrorCode::OutOfMemory,
               "multigrid: " << n << " pairs are too many for the device build");
    DeviceBuffer<K> keys_out(n);
    DeviceBuffer<Index> values_out(n);
    std::size_t bytes = 0;
    EDN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys.data(), keys_out.data(),
                                                   values.data(), values_out.data(),
                                                   static_cast<int>(n), 0, bits));
    EDN_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        cub_temp(bytes), bytes, keys.data(), keys_out.data(), values.data(), values_out.data(),
        static_cast<int>(n), 0, bits));
    keys = std::move(keys_out);
    values = std::move(values_out);
}

// The stable sort of items that lie row by row (row r's at [offsets[r], offsets[r + 1]), keyed
// (r, column)): each row sorted alone, an item's place its row's start plus the row's items of a
// smaller key or of an equal key and an earlier place. G lanes per row, reading the row's keys
// in step. The whole array's stable sort, in one launch for the radix sort's five or six.
template <class K, int G>
__global__ void k_sort_rows(Index rows, const Index* offsets, const K* keys, const Index* values,
                            K* keys_out, Index* values_out) {
    const std::int64_t t = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const Index row = static_cast<Index>(t / G);
    if (row >= rows) return;
    const Index begin = offsets[row], end = offsets[row + 1];
    for (Index j = begin + static_cast<Index>(t % G); j < end; j += G) {
        const K key = keys[j];
        Index rank = 0;
        for (Index k = begin; k < end; ++k) {
            const K other = keys[k];
            rank += other < key || (other == key && k < j);
        }
        keys_out[begin + rank] = key;
        values_out[begin + rank] = values[j];
    }
}

// f.template operator()<K>() with the narrowest key type of `bits` bits: 32-bit keys halve the
// bytes each radix pass moves.
template <class F> void with_key(int bits, F&& f) {
    if (bits <= 32)
        f.template operator()<std::uint32_t>();
    else
        f.template operator()<Key>();
}

// f.template operator()<G>() with G lanes per row for rows of slots / rows blocks on average
// (padding included): about one neighbour per lane.
template <class F> void with_group(Index slots, Index rows, F&& f) {
    const double mean = rows > 0 ? double(slots) / rows : 0.0;
    if (mean <= 6)
        f.template operator()<4>();
    else if (mean <= 12)
        f.template operator()<8>();
    else if (mean <= 24)
        f.template operator()<16>();
    else
        f.template operator()<32>();
}

// sort_pairs for items row by row (k_sort_rows): n items of `rows` rows at `offsets` (device),
// G lanes per row by the mean row length (with_group). A row's sort is quadratic in its length: P
// rows and A P rows hold tens to a few hundred items (the 187K bunny: about 13 and 50 at level 0,
// 155 A P items a row at level 1). With the pool's larger cache (cuda_check.cuh) the 187K bunny's
// level-0 A P phase went from 0.37 to 0.14 ms (H100).
template <class K>
void sort_rows(DeviceBuffer<K>& keys, DeviceBuffer<Index>& values, std::int64_t n,
               const Index* offsets, Index rows) {
    if (n == 0 || rows == 0) return;
    DeviceBuffer<K> keys_out(n);
    DeviceBuffer<Index> values_out(n);
    with_group(static_cast<Index>(n), rows, [&]<int G>() {
        k_sort_rows<K, G><<<grid(std::int64_t(rows) * G), kThreads>>>(
            rows, offsets, keys.data(), values.data(), keys_out.data(), values_out.data());
    });
    EDN_CUDA_CHECK_LAUNCH();
    keys = std::move(keys_out);
    values = std::move(values_out);
}

int bits_for(Index n) { // bits of the largest index below n
    int b = 1;
    while (b < 31 && (Index(1) << b) < n) ++b;
    return b;
}

template <class T> std::vector<T> download(const DeviceBuffer<T>& d) {
    std::vector<T> h(d.size());
    if (!h.empty())
        EDN_CUDA_CHECK(cudaMemcpy(h.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost));
    return h;
}

// Each phase's host wall time into out.phases (the phases end with a read-back: waited for).
struct PhaseClock {
    DeviceLevelBuild& out;
    std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
    void operator()(const char* phase) {
        const auto now = std::chrono::steady_clock::now();
        out.phases.emplace_back(phase,
                                std::chrono::duration<double, std::milli>(now - last).count());
        last = now;
    }
};

// The level's A P, P^T and coarse operator with their maps (product_pattern, coarse_pattern),
// from its P (out's p_offsets, p_columns, p_rows, p_blocks) and out.nc coarse nodes of `cbits`
// bits (rows: `rbits`); `flags` scratch of n + 1, `tail` the values read back at the end ([1]:
// unsymmetric coarse rows, [2]: the most members of an aggregate).
LevelBuild products_and_coarse(const Pattern& p, const Index* slots, Index slots_host, int cbits,
                               int rbits, DeviceBuffer<Index>& flags, DeviceBuffer<Index>& tail,
                               DeviceLevelBuild& out, PhaseClock& lap) {
    const Index n = p.rows, nc = out.nc, pb = out.p_blocks;
    Index* unsymmetric = tail.data() + 1;
    // A P: triples (entry, P block) keyed (row, column), sorted stably; a run is one block.
    DeviceBuffer<Index> ap_offsets(std::int64_t(n) + 1), ap_columns, ap_first;
    with_key(cbits + rbits, [&]<class K>() {
        DeviceBuffer<Index> triple_offsets(std::int64_t(n) + 1);
        with_group(slots_host, n, [&]<int G>() {
            k_ap_count<G><<<grid((std::int64_t(n) + 1) * G), kThreads>>>(p, out.p_offsets.data(),
                                                                         flags.data());
        });
        EDN_CUDA_CHECK_LAUNCH();
        const Index triples = exclusive_total(flags.data(), triple_offsets.data(), n);
        out.product_pairs = triples;
        DeviceBuffer<K> keys(triples);
        DeviceBuffer<Index> order(triples), entry(triples), pblock(triples);
        with_group(slots_host, n, [&]<int G>() {
            k_ap_fill<K, G><<<grid(std::int64_t(n) * G), kThreads>>>(
                p, slots, out.p_offsets.data(), out.p_columns.data(), triple_offsets.data(), cbits,
                keys.data(), order.data(), entry.data(), pblock.data());
        });
        EDN_CUDA_CHECK_LAUNCH();
        sort_rows(keys, order, triples, triple_offsets.data(), n);
        DeviceBuffer<Index> heads(std::int64_t(triples) + 1), block_ids(std::int64_t(triples) + 1);
        k_heads<K>
            <<<grid(std::int64_t(triples) + 1), kThreads>>>(keys.data(), triples, heads.data());
        EDN_CUDA_CHECK_LAUNCH();
        // The blocks' first pairs into a scratch of `triples`: their count is read back with
        // the restriction's pairs below (one wait fewer), then they move to pair_offsets.
        exclusive_sum(heads.data(), block_ids.data(), triples);
        EDN_CUDA_CHECK(cudaMemcpyAsync(tail.data(), block_ids.data() + triples, sizeof(Index),
                                       cudaMemcpyDeviceToDevice));
        out.pair_entry = DeviceBuffer<Index>(triples);
        out.pair_p = DeviceBuffer<Index>(triples);
        EDN_CUDA_CHECK(cudaMemsetAsync(flags.data(), 0, sizeof(Index) * (n + 1)));
        ap_columns = DeviceBuffer<Index>(triples);
        ap_first = DeviceBuffer<Index>(triples);
        k_runs<K><<<grid(triples), kThreads>>>(keys.data(), triples, heads.data(), block_ids.data(),
                                               cbits, ap_columns.data(), nullptr, ap_first.data(),
                                               flags.data());
        k_gather_pairs<<<grid(triples), kThreads>>>(order.data(), entry.data(), pblock.data(),
                                                    triples, out.pair_entry.data(),
                                                    out.pair_p.data());
        EDN_CUDA_CHECK_LAUNCH();
        exclusive_sum(flags.data(), ap_offsets.data(), n);
    });
    if (nc > n) flags = DeviceBuffer<Index>(std::int64_t(nc) + 1);
    lap("A P");
    const bool keep_ap = out.p_values.size() > 0; // a given P (build_given_level)

    // P^T: the P blocks sorted stably by column.
    with_key(cbits, [&]<class K>() {
        DeviceBuffer<K> keys(pb);
        DeviceBuffer<Index> values(pb);
        EDN_CUDA_CHECK(cudaMemsetAsync(flags.data(), 0, sizeof(Index) * (nc + 1)));
        k_iota_keys<K><<<grid(pb), kThreads>>>(out.p_columns.data(), pb, keys.data(), values.data(),
                                               flags.data());
        EDN_CUDA_CHECK_LAUNCH();
        sort_pairs(keys, values, pb, cbits);
        out.r_offsets = DeviceBuffer<Index>(std::int64_t(nc) + 1);
        exclusive_sum(flags.data(), out.r_offsets.data(), nc);
        out.r_blocks = std::move(values);
        out.r_rows = DeviceBuffer<Index>(pb);
        k_restriction_rows<<<grid(pb), kThreads>>>(out.r_blocks.data(), out.p_rows.data(), pb,
                                                   out.r_rows.data());
        EDN_CUDA_CHECK_LAUNCH();
    });

    // A_c: the pairs (P block, A P block) keyed (I, J), sorted stably; a run is one entry.
    bool unsymmetric_rows = false;
    with_key(2 * cbits, [&]<class K>() {
        DeviceBuffer<Index> quad_offsets(std::int64_t(pb) + 1), count(std::int64_t(pb) + 1);
        k_c_count<<<grid(pb + 1), kThreads>>>(out.r_rows.data(), pb, ap_offsets.data(),
                                              count.data());
        EDN_CUDA_CHECK_LAUNCH();
        exclusive_sum(count.data(), quad_offsets.data(), pb);
        EDN_CUDA_CHECK(cudaMemcpyAsync(tail.data() + 3, quad_offsets.data() + pb, sizeof(Index),
                                       cudaMemcpyDeviceToDevice));
        Index totals[4] = {0, 0, 0, 0}; // A P blocks, -, -, pairs
        read_back(tail.data(), totals, 4);
        out.ap_blocks = totals[0];
        const Index pairs = totals[3];
        out.pair_offsets = DeviceBuffer<Index>(std::int64_t(out.ap_blocks) + 1);
        EDN_CUDA_CHECK(cudaMemcpyAsync(out.pair_offsets.data(), ap_first.data(),
                                       sizeof(Index) * out.ap_blocks, cudaMemcpyDeviceToDevice));
        k_fill<<<1, 1>>>(out.pair_offsets.data() + out.ap_blocks, 1, out.product_pairs);
        EDN_CUDA_CHECK_LAUNCH();
        ap_first = DeviceBuffer<Index>();
        count = DeviceBuffer<Index>();
        DeviceBuffer<K> keys(pairs);
        DeviceBuffer<Index> order(pairs), pair_p(pairs), pair_ap(pairs);
        with_group(out.ap_blocks, n, [&]<int G>() { // (lanes by the A P rows' mean length)
            k_c_fill<K, G><<<grid(std::int64_t(pb) * G), kThreads>>>(
                out.r_blocks.data(), out.r_rows.data(), pb, out.p_columns.data(), ap_offsets.data(),
                ap_columns.data(), quad_offsets.data(), cbits, keys.data(), order.data(),
                pair_p.data(), pair_ap.data());
        });
        EDN_CUDA_CHECK_LAUNCH();
        sort_pairs(keys, order, pairs, 2 * cbits);
        DeviceBuffer<Index> heads(std::int64_t(pairs) + 1), u_ids(std::int64_t(pairs) + 1);
        k_heads<K><<<grid(std::int64_t(pairs) + 1), kThreads>>>(keys.data(), pairs, heads.data());
        EDN_CUDA_CHECK_LAUNCH();
        // The distinct entries (u) into scratch of `pairs` (at most that many): their count is
        // read back with the coarse pattern's slots (one wait fewer).
        exclusive_sum(heads.data(), u_ids.data(), pairs);
        DeviceBuffer<Index> u_row(pairs), u_col(pairs), u_first(pairs),
            row_entries(std::int64_t(nc) + 1), row_first(std::int64_t(nc) + 1);
        out.c_row_counts = DeviceBuffer<Index>(nc);
        EDN_CUDA_CHECK(cudaMemsetAsync(out.c_row_counts.data(), 0, out.c_row_counts.bytes()));
        EDN_CUDA_CHECK(cudaMemsetAsync(row_entries.data(), 0, row_entries.bytes()));
        k_c_entries<K><<<grid(pairs), kThreads>>>(keys.data(), pairs, heads.data(), u_ids.data(),
                                                  cbits, u_row.data(), u_col.data(), u_first.data(),
                                                  out.c_row_counts.data(), row_entries.data());
        EDN_CUDA_CHECK_LAUNCH();
        exclusive_sum(row_entries.data(), row_first.data(), nc);
        const Index bins = (nc + kRows - 1) / kRows;
        out.c_bin_offsets = DeviceBuffer<Index>(std::int64_t(bins) + 1);
        bin_bcsr_bin_offsets(out.c_row_counts.data(), nc, out.c_bin_offsets.data(), nullptr,
                             /*read_total=*/false);
        EDN_CUDA_CHECK(cudaMemcpyAsync(tail.data(), u_ids.data() + pairs, sizeof(Index),
                                       cudaMemcpyDeviceToDevice));
        EDN_CUDA_CHECK(cudaMemcpyAsync(tail.data() + 3, out.c_bin_offsets.data() + bins,
                                       sizeof(Index), cudaMemcpyDeviceToDevice));
        Index sizes[4] = {0, 0, 0, 0}; // distinct entries, -, -, coarse slots
        read_back(tail.data(), sizes, 4);
        const Index unique = sizes[0], c_slots = sizes[3];
        out.c_columns = DeviceBuffer<Index>(c_slots);
        const Pattern c{nc, out.c_bin_offsets.data(), out.c_columns.data(),
                        out.c_row_counts.data()};
        const Index c_entries = c_slots + nc;
        DeviceBuffer<Index> g_count(std::int64_t(c_entries) + 1);
        EDN_CUDA_CHECK(cudaMemsetAsync(g_count.data(), 0, g_count.bytes()));
        k_c_columns<<<grid(unique), kThreads>>>(c, c_slots, unique, u_row.data(), u_col.data(),
                                                u_first.data(), pairs, row_first.data(),
                                                out.c_columns.data(), g_count.data());
        k_c_padding<<<grid(std::int64_t(bins) * kRows), kThreads>>>(c, bins, out.c_columns.data());
        out.g_mirror = DeviceBuffer<Index>(c_slots);
        k_fill<<<grid(c_slots), kThreads>>>(out.g_mirror.data(), c_slots, -1);
        with_group(c_slots, nc, [&]<int G>() {
            k_c_mirror<G>
                <<<grid(std::int64_t(nc) * G), kThreads>>>(c, out.g_mirror.data(), unsymmetric);
        });
        EDN_CUDA_CHECK_LAUNCH();
        // The Galerkin pairs' offsets and the entries with pairs, their totals read back with
        // the unsymmetric count and the most members of an aggregate (one wait).
        out.g_offsets = DeviceBuffer<Index>(std::int64_t(c_entries) + 1);
        exclusive_sum(g_count.data(), out.g_offsets.data(), c_entries);
        DeviceBuffer<Index> entry_flags(std::int64_t(c_entries) + 1),
            entry_ids(std::int64_t(c_entries) + 1);
        k_g_entry_flags<<<grid(std::int64_t(c_entries) + 1), kThreads>>>(
            out.g_offsets.data(), c_slots, c_entries, entry_flags.data());
        EDN_CUDA_CHECK_LAUNCH();
        exclusive_sum(entry_flags.data(), entry_ids.data(), c_entries);
        EDN_CUDA_CHECK(cudaMemcpyAsync(tail.data() + 3, out.g_offsets.data() + c_entries,
                                       sizeof(Index), cudaMemcpyDeviceToDevice));
        EDN_CUDA_CHECK(cudaMemcpyAsync(tail.data() + 4, entry_ids.data() + c_entries, sizeof(Index),
                                       cudaMemcpyDeviceToDevice));
        Index values[5] = {0, 0, 0, 0, 0}; // -, unsymmetric, most members, pairs, entries
        read_back(tail.data(), values, 5);
        out.max_members = values[2];
        out.galerkin_pairs = values[3];
        out.galerkin_entries = values[4];
        if (values[1] != 0) {
            unsymmetric_rows = true;
            return;
        }
        out.g_p = DeviceBuffer<Index>(out.galerkin_pairs);
        out.g_ap = DeviceBuffer<Index>(out.galerkin_pairs);
        k_g_fill<<<grid(pairs), kThreads>>>(order.data(), pair_p.data(), pair_ap.data(), pairs,
                                            heads.data(), u_ids.data(), c, c_slots, u_row.data(),
                                            u_col.data(), u_first.data(), row_first.data(),
                                            out.g_offsets.data(), out.g_p.data(), out.g_ap.data());
        out.g_entries = DeviceBuffer<Index>(out.galerkin_entries);
        k_compact<<<grid(c_entries), kThreads>>>(entry_flags.data(), entry_ids.data(), c_entries,
                                                 out.g_entries.data());
        EDN_CUDA_CHECK_LAUNCH();
    });
    lap("P^T and coarse operator");
    if (keep_ap) { // (the columns' buffer was sized for the pairs: keep the blocks' only)
        out.ap_offsets = std::move(ap_offsets);
        out.ap_columns = DeviceBuffer<Index>(out.ap_blocks);
        if (out.ap_blocks)
            EDN_CUDA_CHECK(cudaMemcpyAsync(out.ap_columns.data(), ap_columns.data(),
                                           sizeof(Index) * out.ap_blocks,
                                           cudaMemcpyDeviceToDevice));
    }
    if (unsymmetric_rows) return LevelBuild::Host;

    // The host's copies of the coarse pattern's bin offsets and row counts.
    out.entries = slots_host + n;
    out.coarse.num_rows = nc;
    out.coarse.bin_offsets = download(out.c_bin_offsets);
    out.coarse.row_counts = download(out.c_row_counts);
    if (host_aggregation(nc, out.coarse.bin_offsets.back())) // (its pattern whole: the next
        out.coarse.columns = download(out.c_columns);        // level aggregates on the host)
    lap("downloads");
    return LevelBuild::Built;
}

} // namespace

LevelBuild build_level(const BinBcsrPatternView& fine, Index slots_host, const std::uint8_t* fixed,
                       Index free_nodes, Index level_dofs, int modes, DeviceLevelBuild& out,
                       const BinBcsrPattern* host, const std::uint8_t* fixed_host) {
    const Index n = fine.num_rows;
    const Pattern p{n, fine.bin_offsets, fine.columns, fine.row_counts};
    out.n = n;
    const Index* slots = fine.bin_offsets + fine.num_bins;
    PhaseClock lap{out};
    // Values read back together: after the aggregation its rounds (cooperative), P's entries, the
    // roots and the rest; then the A P blocks with the restriction's pairs, the distinct coarse
    // entries with the coarse slots, and the unsymmetric count and the most members of an
    // aggregate with the Galerkin pairs and entries.
    DeviceBuffer<Index> tail(5);
    EDN_CUDA_CHECK(cudaMemsetAsync(tail.data(), 0, tail.bytes()));
    DeviceBuffer<Index> flags(std::int64_t(n) + 1), ids(std::int64_t(n) + 1),
        entry_offsets(std::int64_t(n) + 1);
    Index counts[5] = {0, 0, 0, 0, 0}; // rounds (cooperative), P entries, -, roots, rest
    out.aggregate = DeviceBuffer<Index>(n);
    if (host) {
        // A small level with its pattern on the host: the host's greedy pass itself (the rounds
        // are launches and read-backs there, 16 rounds of 2,202 nodes took 0.6 ms on the H100).
        const BinBcsrPatternView v = host->view();
        std::vector<std::uint8_t> active(static_cast<std::size_t>(n), 1);
        if (fixed_host)
            for (Index i = 0; i < n; ++i) active[i] = fixed_host[i] ? 0 : 1;
        std::vector<Index> aggregate;
        counts[3] = cpu::aggregate_nodes(v, active, Aggregation::Greedy, aggregate);
        EDN_CUDA_CHECK(cudaMemcpy(out.aggregate.data(), aggregate.data(), out.aggregate.bytes(),
                                  cudaMemcpyHostToDevice));
        for (Index i = 0; i < n; ++i) // (P's entries: of free rows and columns, as k_p_count)
            if (active[i]) {
                ++counts[1];
                for (Index j = 0; j < v.row_counts[i]; ++j)
                    counts[1] += active[v.columns[v.slot(i, j)]];
            }
        k_p_count<<<grid(n + 1), kThreads>>>(p, fixed, flags.data());
        EDN_CUDA_CHECK_LAUNCH();
        exclusive_sum(flags.data(), entry_offsets.data(), n);
        out.rounds = 0;
    } else {
        // Aggregation: the distance-2 independent set in rounds (checked every 8 rounds: rounds
        // after the last decision change nothing), the roots numbered, the two joins. A node
        // ordering whose chains of decisions are too long for rounds (meshes as meshed and
        // reordered take tens) is left to the host's sequential pass.
        DeviceBuffer<std::uint8_t> state(n);
        DeviceBuffer<Key> ring1(n);
        DeviceBuffer<Index> counter(1);
        k_agg_init<<<grid(n), kThreads>>>(n, fixed, state.data());
        EDN_CUDA_CHECK_LAUNCH();
        constexpr int kBatch = 8, kMaxRounds = 1024;
        bool settled = false, cooperative = false;
        with_group(slots_host, n, [&]<int G>() {
            const unsigned int groups = grid(std::int64_t(n) * G);
            // One cooperative launch of every round; its count is read back with the
            // aggregation's counts (tail[0]; -1: not settled).
            // EDN_MULTIGRID_ROUNDS=kernels: the rounds' kernels even where a cooperative launch
            // would do (the tests run both)
            const char* env = std::getenv("EDN_MULTIGRID_ROUNDS");
            const bool kernels = env && std::string_view(env) == "kernels";
            if (const unsigned int resident = kernels ? 0 : cooperative_blocks(k_rounds<G>);
                resident > 0) {
                DeviceBuffer<Index> round_flags(3);
                EDN_CUDA_CHECK(cudaMemsetAsync(round_flags.data(), 0, round_flags.bytes()));
                Index* flags_ptr = round_flags.data();
                std::uint8_t* state_ptr = state.data();
                Key* ring1_ptr = ring1.data();
                Index* rounds_ptr = tail.data();
                int max_rounds = kMaxRounds;
                void* args[] = {(void*)&p,         (void*)&fixed,     (void*)&state_ptr,
                                (void*)&ring1_ptr, (void*)&flags_ptr, (void*)&max_rounds,
                                (void*)&rounds_ptr};
                // (refused, as where a partition of the device holds fewer blocks than the
                // occupancy says: the rounds' kernels below instead)
                if (cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(k_rounds<G>),
                                                std::min(groups, resident), kThreads, args, 0,
                                                nullptr) == cudaSuccess) {
                    cooperative = settled = true;
                    return;
                }
                cudaGetLastError(); // (a launch error: not sticky)
            }
            for (int round = 0; round < kMaxRounds && !settled; round += kBatch) {
                EDN_CUDA_CHECK(cudaMemsetAsync(counter.data(), 0, sizeof(Index)));
                for (int r = 0; r < kBatch; ++r) {
                    k_ring1<G><<<groups, kThreads>>>(p, fixed, state.data(), ring1.data());
                    k_ring2_decide<G>
                        <<<groups, kThreads>>>(p, fixed, ring1.data(), state.data(),
                                               r + 1 == kBatch ? counter.data() : nullptr);
                }
                EDN_CUDA_CHECK_LAUNCH();
                settled = read(counter.data()) == 0;
                out.rounds = round + kBatch;
            }
        });
        if (!settled) return LevelBuild::Host;
        ring1 = DeviceBuffer<Key>();
        DeviceBuffer<Index> rest_ids(std::int64_t(n) + 1), joined(n);
        k_flags<<<grid(n + 1), kThreads>>>(n, fixed, state.data(), nullptr, 0, flags.data());
        EDN_CUDA_CHECK_LAUNCH();
        exclusive_sum(flags.data(), ids.data(), n); // ids[n]: the roots
        k_number_roots<<<grid(n), kThreads>>>(n, flags.data(), ids.data(), out.aggregate.data());
        with_group(slots_host, n, [&]<int G>() {
            k_join_roots<G><<<grid(std::int64_t(n) * G), kThreads>>>(
                p, fixed, state.data(), out.aggregate.data(), joined.data());
            k_join_votes<G><<<grid(std::int64_t(n) * G), kThreads>>>(p, fixed, joined.data(),
                                                                     out.aggregate.data());
        });
        k_flags<<<grid(n + 1), kThreads>>>(n, fixed, state.data(), out.aggregate.data(), 1,
                                           flags.data());
        EDN_CUDA_CHECK_LAUNCH();
        exclusive_sum(flags.data(), rest_ids.data(), n); // (none, unless the set was not maximal)
        k_number_rest<<<grid(n), kThreads>>>(n, flags.data(), rest_ids.data(), ids.data() + n,
                                             out.aggregate.data());
        EDN_CUDA_CHECK_LAUNCH();
        EDN_CUDA_CHECK(cudaMemcpyAsync(tail.data() + 3, ids.data() + n, sizeof(Index),
                                       cudaMemcpyDeviceToDevice));
        EDN_CUDA_CHECK(cudaMemcpyAsync(tail.data() + 4, rest_ids.data() + n, sizeof(Index),
                                       cudaMemcpyDeviceToDevice));
        // (P's entries: those of free rows and columns, known before the aggregates)
        k_p_count<<<grid(n + 1), kThreads>>>(p, fixed, rest_ids.data());
        EDN_CUDA_CHECK_LAUNCH();
        exclusive_sum(rest_ids.data(), entry_offsets.data(), n);
        EDN_CUDA_CHECK(cudaMemcpyAsync(tail.data() + 1, entry_offsets.data() + n, sizeof(Index),
                                       cudaMemcpyDeviceToDevice));
        read_back(tail.data(), counts, 5);
        EDN_CUDA_CHECK(cudaMemsetAsync(tail.data(), 0, 2 * sizeof(Index)));
        if (cooperative) {
            if (counts[0] < 0) return LevelBuild::Host;
            out.rounds = counts[0];
        }
    }
    const Index items = counts[1];
    out.nc = counts[3] + counts[4];
    const Index nc = out.nc;
    if (nc == 0 || static_cast<double>(nc) * modes > 0.85 * level_dofs) return LevelBuild::Stop;
    const int cbits = bits_for(nc), rbits = bits_for(n);
    lap("aggregation");

    // The member lists: the aggregated nodes (index order: every free node), sorted stably by
    // aggregate.
    out.members = free_nodes;
    k_flags<<<grid(n + 1), kThreads>>>(n, nullptr, nullptr, out.aggregate.data(), 2, flags.data());
    EDN_CUDA_CHECK_LAUNCH();
    exclusive_sum(flags.data(), ids.data(), n);
    out.active = DeviceBuffer<Index>(out.members);
    k_compact<<<grid(n), kThreads>>>(flags.data(), ids.data(), n, out.active.data());
    with_key(cbits, [&]<class K>() {
        DeviceBuffer<K> keys(out.members);
        DeviceBuffer<Index> count(std::int64_t(nc) + 1);
        EDN_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, count.bytes()));
        k_member_keys<K><<<grid(out.members), kThreads>>>(
            out.active.data(), out.members, out.aggregate.data(), keys.data(), count.data());
        EDN_CUDA_CHECK_LAUNCH();
        out.member_nodes = DeviceBuffer<Index>(out.members);
        EDN_CUDA_CHECK(cudaMemcpyAsync(out.member_nodes.data(), out.active.data(),
                                       out.active.bytes(), cudaMemcpyDeviceToDevice));
        sort_pairs(keys, out.member_nodes, out.members, cbits);
        out.member_offsets = DeviceBuffer<Index>(std::int64_t(nc) + 1);
        std::size_t bytes = 0;
        EDN_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, bytes, count.data(), tail.data() + 2, nc));
        EDN_CUDA_CHECK(
            cub::DeviceReduce::Max(cub_temp(bytes), bytes, count.data(), tail.data() + 2, nc));
        exclusive_sum(count.data(), out.member_offsets.data(), nc);
    });

    // P: its pattern, rows and the smoothing map (inverted: per P block, its entries), from the
    // entries sorted by (row, aggregate of their column).
    with_key(cbits + rbits, [&]<class K>() {
        DeviceBuffer<K> keys(items);
        out.smooth_entries = DeviceBuffer<Index>(items);
        with_group(slots_host, n, [&]<int G>() {
            k_p_fill<K, G><<<grid(std::int64_t(n) * G), kThreads>>>(
                p, slots, out.aggregate.data(), entry_offsets.data(), cbits, keys.data(),
                out.smooth_entries.data());
        });
        EDN_CUDA_CHECK_LAUNCH();
        sort_rows(keys, out.smooth_entries, items, entry_offsets.data(), n);
        DeviceBuffer<Index> heads(std::int64_t(items) + 1), run_ids(std::int64_t(items) + 1);
        k_heads<K><<<grid(std::int64_t(items) + 1), kThreads>>>(keys.data(), items, heads.data());
        EDN_CUDA_CHECK_LAUNCH();
        out.p_blocks = exclusive_total(heads.data(), run_ids.data(), items);
        const Index pb = out.p_blocks;
        out.p_columns = DeviceBuffer<Index>(pb);
        out.p_rows = DeviceBuffer<Index>(pb);
        out.smooth_offsets = DeviceBuffer<Index>(std::int64_t(pb) + 1);
        EDN_CUDA_CHECK(cudaMemcpyAsync(out.smooth_offsets.data() + pb, entry_offsets.data() + n,
                                       sizeof(Index), cudaMemcpyDeviceToDevice));
        EDN_CUDA_CHECK(cudaMemsetAsync(flags.data(), 0, sizeof(Index) * (n + 1)));
        k_runs<K><<<grid(items), kThreads>>>(keys.data(), items, heads.data(), run_ids.data(),
                                             cbits, out.p_columns.data(), out.p_rows.data(),
                                             out.smooth_offsets.data(), flags.data());
        EDN_CUDA_CHECK_LAUNCH();
        out.p_offsets = DeviceBuffer<Index>(std::int64_t(n) + 1);
        exclusive_sum(flags.data(), out.p_offsets.data(), n);
    });
    lap("P");
    return products_and_coarse(p, slots, slots_host, cbits, rbits, flags, tail, out, lap);
}

LevelBuild build_given_level(const BinBcsrPatternView& fine, Index slots_host,
                             const std::uint8_t* fixed, Index coarse_nodes, const Index* vertex,
                             const double* weight, DeviceLevelBuild& out) {
    const Index n = fine.num_rows;
    const Pattern p{n, fine.bin_offsets, fine.columns, fine.row_counts};
    out.n = n;
    out.nc = coarse_nodes;
    const Index* slots = fine.bin_offsets + fine.num_bins;
    PhaseClock lap{out};
    DeviceBuffer<Index> tail(5);
    EDN_CUDA_CHECK(cudaMemsetAsync(tail.data(), 0, tail.bytes()));
    DeviceBuffer<Index> flags(std::int64_t(n) + 1);
    k_given_count<<<grid(n + 1), kThreads>>>(n, fixed, vertex, weight, flags.data());
    EDN_CUDA_CHECK_LAUNCH();
    out.p_offsets = DeviceBuffer<Index>(std::int64_t(n) + 1);
    out.p_blocks = exclusive_total(flags.data(), out.p_offsets.data(), n);
    const Index pb = out.p_blocks;
    out.p_columns = DeviceBuffer<Index>(pb);
    out.p_rows = DeviceBuffer<Index>(pb);
    out.p_values = DeviceBuffer<float>(12 * std::int64_t(pb));
    k_given_fill<<<grid(n), kThreads>>>(n, fixed, vertex, weight, out.p_offsets.data(),
                                        out.p_columns.data(), out.p_rows.data(),
                                        out.p_values.data());
    // no aggregates and no smoothing: the maps of a fixed P
    out.aggregate = DeviceBuffer<Index>(n);
    k_fill<<<grid(n), kThreads>>>(out.aggregate.data(), n, -1);
    out.smooth_offsets = DeviceBuffer<Index>(std::int64_t(pb) + 1);
    EDN_CUDA_CHECK(cudaMemsetAsync(out.smooth_offsets.data(), 0, out.smooth_offsets.bytes()));
    EDN_CUDA_CHECK_LAUNCH();
    lap("P");
    return products_and_coarse(p, slots, slots_host, bits_for(coarse_nodes), bits_for(n), flags,
                               tail, out, lap);
}

void make_p1_transfer(const CellNodesView& cells, Index num_nodes, const std::vector<double>& local,
                      Index* vertex, double* weight) {
    EDN_VERIFY(
        local.size() == 4 * std::size_t(cells.per_cell) && cells.per_cell <= 20, ErrorCode::Usage,
        "p1 transfer: " << local.size() << " weights for " << cells.per_cell << " nodes per cell");
    LocalWeights w{};
    std::copy(local.begin(), local.end(), w.w);
    k_fill<<<grid(3 * std::int64_t(num_nodes)), kThreads>>>(vertex, 3 * std::int64_t(num_nodes),
                                                            -1);
    EDN_CUDA_CHECK(cudaMemsetAsync(weight, 0, 3 * std::size_t(num_nodes) * sizeof(double)));
    DeviceBuffer<Index> first(num_nodes);
    k_fill<<<grid(num_nodes), kThreads>>>(first.data(), num_nodes, 0x7fffffff);
    const unsigned int blocks = grid(std::int64_t(cells.num_cells) * cells.per_cell);
    k_first_cell<<<blocks, kThreads>>>(cells, first.data());
    k_p1_transfer<<<blocks, kThreads>>>(cells, w, first.data(), vertex, weight);
    EDN_CUDA_CHECK_LAUNCH();
}

} // namespace edn::cuda
