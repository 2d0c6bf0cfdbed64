// Symbolic phase of the smoothed-aggregation multigrid (solver/multigrid.hpp): aggregates,
// tentative prolongators, the exact patterns of P, A P and A_c, and the maps that re-value them.
// Runs once per fine pattern; nothing here reads matrix values.
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cpu/multigrid_nullspace.hpp"
#include "solver/lanczos.hpp"
#include "solver/multigrid.hpp"
#include "solver/two_level.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>

namespace edn {

GivenTransfer p1_transfer(const CoarseSpace& space, const TetMesh& mesh,
                          const std::uint8_t* fixed) {
    GivenTransfer t;
    t.coarse_nodes = space.num_vertices;
    t.offsets.assign(static_cast<std::size_t>(space.num_nodes) + 1, 0);
    for (Index i = 0; i < space.num_nodes; ++i) {
        for (int k = 0; k < 3; ++k) {
            const Index v = space.pro_vertex[3 * i + k];
            if (v < 0) break;
            t.columns.push_back(v);
            t.weights.push_back(space.pro_weight[3 * i + k]);
        }
        t.offsets[i + 1] = static_cast<Index>(t.columns.size());
    }
    t.coarse_positions.resize(3 * static_cast<std::size_t>(space.num_vertices));
    t.coarse_fixed.assign(static_cast<std::size_t>(space.num_vertices), 0);
    for (Index v = 0; v < space.num_vertices; ++v) {
        for (int a = 0; a < 3; ++a) t.coarse_positions[3 * v + a] = mesh.positions[v][a];
        t.coarse_fixed[v] = fixed != nullptr && fixed[v] != 0;
    }
    return t;
}

namespace cpu {

MultigridHierarchy build_mesh_multigrid(const BinBcsrPattern& pattern, const TetMesh& mesh,
                                        const Topology& topology, const NodeLayout& layout,
                                        const std::uint8_t* fixed,
                                        const MultigridSettings& settings) {
    if (layout.order == 1) {
        std::vector<double> positions(3 * mesh.positions.size());
        for (std::size_t i = 0; i < mesh.positions.size(); ++i)
            for (int d = 0; d < 3; ++d) positions[3 * i + d] = mesh.positions[i][d];
        return build_multigrid(pattern, positions.data(), fixed, settings);
    }
    const CoarseSpace space = make_coarse_space(mesh, topology, layout, false);
    const GivenTransfer p1 = p1_transfer(space, mesh, fixed);
    return build_multigrid(pattern, nullptr, fixed, settings, &p1);
}

} // namespace cpu

double MultigridHierarchy::operator_complexity(std::int64_t fine_nnz_blocks) const {
    double total = 9.0 * static_cast<double>(fine_nnz_blocks);
    for (const BlockMatrix& m : coarse)
        total += double(m.block) * m.block * static_cast<double>(m.pattern.nnz_blocks());
    return fine_nnz_blocks > 0 ? total / (9.0 * static_cast<double>(fine_nnz_blocks)) : 1.0;
}

namespace cpu {
namespace {

// Neighbours of `row` in a Bin-BCSR* pattern (off-diagonal, padding excluded).
template <class F> void for_each_neighbour(const BinBcsrPatternView& p, Index row, F&& f) {
    for (Index j = 0; j < p.row_counts[row]; ++j) f(j, p.columns[p.slot(row, j)]);
}

// Greedy aggregation on the pattern's graph over the nodes with active[i]: (1) a node whose
// active neighbours are all free roots an aggregate with them; (2) every other node joins the
// aggregate it has most neighbours in; (3) nodes with no aggregated neighbour form aggregates
// with their unaggregated neighbours. Returns the count; aggregate[i] = -1 for inactive nodes.
Index greedy_aggregates(const BinBcsrPatternView& p, const std::vector<std::uint8_t>& active,
                        std::vector<Index>& aggregate) {
    const Index n = p.num_rows;
    aggregate.assign(static_cast<std::size_t>(n), -1);
    Index count = 0;
    for (Index i = 0; i < n; ++i) {
        if (!active[i] || aggregate[i] >= 0) continue;
        bool all_free = true;
        for (Index j = 0; j < p.row_counts[i] && all_free; ++j) {
            const Index c = p.columns[p.slot(i, j)];
            all_free = !(active[c] && aggregate[c] >= 0);
        }
        if (!all_free) continue;
        aggregate[i] = count;
        for_each_neighbour(p, i, [&](Index, Index c) {
            if (active[c]) aggregate[c] = count;
        });
        ++count;
    }
    std::vector<Index> joined(aggregate); // phase 2 reads the phase-1 result only
    // (aggregate, votes) of a node's neighbours: a handful of distinct aggregates, counted in
    // place
    std::vector<std::pair<Index, Index>> votes;
    for (Index i = 0; i < n; ++i) {
        if (!active[i] || aggregate[i] >= 0) continue;
        votes.clear();
        for_each_neighbour(p, i, [&](Index, Index c) {
            const Index a = aggregate[c];
            if (a < 0) return;
            auto v = std::find_if(votes.begin(), votes.end(),
                                  [a](const std::pair<Index, Index>& x) { return x.first == a; });
            if (v == votes.end())
                votes.emplace_back(a, 1);
            else
                ++v->second;
        });
        if (votes.empty()) continue;
        // the most votes, the smallest aggregate of equals
        Index best = votes[0].first, best_n = votes[0].second;
        for (const auto& [a, count] : votes)
            if (count > best_n || (count == best_n && a < best)) {
                best = a;
                best_n = count;
            }
        joined[i] = best;
    }
    aggregate.swap(joined);
    for (Index i = 0; i < n; ++i) {
        if (!active[i] || aggregate[i] >= 0) continue;
        aggregate[i] = count;
        for_each_neighbour(p, i, [&](Index, Index c) {
            if (active[c] && aggregate[c] < 0) aggregate[c] = count;
        });
        ++count;
    }
    return count;
}

// A node's priority in the parallel aggregation's independent set: a fixed 32-bit mix of its
// index (the same on every backend), ties broken by the index.
std::uint32_t node_priority(Index i) {
    std::uint32_t x = static_cast<std::uint32_t>(i) + 0x9e3779b9u;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// Aggregation::Parallel (solver/multigrid.hpp). Every pass reads the previous pass's arrays
// only, so the result does not depend on the thread count; each pass is a map over nodes (one
// kernel each on a GPU).
Index parallel_aggregates(const BinBcsrPatternView& p, const std::vector<std::uint8_t>& active,
                          std::vector<Index>& aggregate) {
    const Index n = p.num_rows;
    // The distance-2 maximal independent set in rounds. A node's key orders (state, priority,
    // index) with state 2 = in the set, 1 = undecided, 0 = out (or inactive): an undecided node
    // whose largest key over its 2-ring is its own joins the set, one whose 2-ring holds a set
    // node leaves. Every round decides at least the undecided node of the largest key.
    enum : std::uint8_t { kOut = 0, kUndecided = 1, kIn = 2 };
    std::vector<std::uint8_t> state(static_cast<std::size_t>(n));
    std::vector<std::uint64_t> rank(state.size()); // (priority, index): hashed once
    parallel_for(0, n, [&](std::int64_t i) {
        state[i] = active[i] ? kUndecided : kOut;
        rank[i] = (std::uint64_t(node_priority(Index(i))) << 30) |
                  std::uint64_t(i & ((std::int64_t(1) << 30) - 1));
    });
    auto key = [&](Index i) { return (std::uint64_t(state[i]) << 62) | rank[i]; };
    // (the rings of the active nodes' graph: inactive nodes are no path)
    std::vector<std::uint64_t> ring1(static_cast<std::size_t>(n)), ring2(ring1.size());
    for (bool undecided = true; undecided;) {
        parallel_for(0, n, [&](std::int64_t i) {
            std::uint64_t m = key(Index(i));
            for_each_neighbour(p, Index(i), [&](Index, Index c) {
                if (active[c]) m = std::max(m, key(c));
            });
            ring1[i] = m;
        });
        parallel_for(0, n, [&](std::int64_t i) {
            std::uint64_t m = ring1[i];
            for_each_neighbour(p, Index(i), [&](Index, Index c) {
                if (active[c]) m = std::max(m, ring1[c]);
            });
            ring2[i] = m;
        });
        parallel_for(0, n, [&](std::int64_t i) { // (each node reads its own state only)
            if (state[i] != kUndecided) return;
            if (ring2[i] == key(Index(i)))
                state[i] = kIn;
            else if ((ring2[i] >> 62) == kIn)
                state[i] = kOut;
        });
        undecided = std::find(state.begin(), state.end(), std::uint8_t(kUndecided)) != state.end();
    }
    // The roots, numbered in index order; their active neighbours join them (two roots are at
    // least 3 edges apart, so no node has two).
    aggregate.assign(static_cast<std::size_t>(n), -1);
    Index count = 0;
    for (Index i = 0; i < n; ++i)
        if (active[i] && state[i] == kIn) aggregate[i] = count++;
    std::vector<Index> joined(aggregate);
    parallel_for(0, n, [&](std::int64_t i) {
        if (!active[i] || aggregate[i] >= 0) return;
        for_each_neighbour(p, Index(i), [&](Index, Index c) {
            if (active[c] && state[c] == kIn) joined[i] = aggregate[c];
        });
    });
    aggregate.swap(joined);
    // The rest (2 edges from a root) join the aggregate they have most neighbours in, the
    // smallest of equals.
    joined = aggregate;
    parallel_for(0, n, [&](std::int64_t i) {
        if (!active[i] || aggregate[i] >= 0) return;
        Index best_aggregate = -1, best_count = 0;
        for_each_neighbour(p, Index(i), [&](Index, Index c) {
            const Index a = aggregate[c];
            if (a < 0 || !active[c]) return;
            Index votes = 0;
            for_each_neighbour(p, Index(i), [&](Index, Index d) {
                if (active[d] && aggregate[d] == a) ++votes;
            });
            if (votes > best_count || (votes == best_count && a < best_aggregate)) {
                best_count = votes;
                best_aggregate = a;
            }
        });
        joined[i] = best_aggregate;
    });
    aggregate.swap(joined);
    // (the set is maximal on the active graph, so every active node is within 2 edges of a
    // root and aggregated by now; a node that is not would get an aggregate of its own)
    for (Index i = 0; i < n; ++i)
        if (active[i] && aggregate[i] < 0) aggregate[i] = count++;
    return count;
}

// Position of `col` in the sorted row [begin, end) of `columns` (must be present).
Index find_in_row(const std::vector<Index>& columns, Index begin, Index end, Index col) {
    const auto it = std::lower_bound(columns.begin() + begin, columns.begin() + end, col);
    return static_cast<Index>(it - columns.begin());
}

// Rows [0, n) in chunks of kChunkRows on all threads: build(chunk, first, last) fills the
// chunk's part, which the caller then concatenates in order (the result does not depend on the
// thread count).
constexpr Index kChunkRows = 1024;
template <class Part, class Build> std::vector<Part> build_in_chunks(Index n, Build&& build) {
    const Index chunks = (n + kChunkRows - 1) / kChunkRows;
    std::vector<Part> parts(static_cast<std::size_t>(chunks));
    parallel_for(
        0, chunks,
        [&](std::int64_t c) {
            const Index first = static_cast<Index>(c) * kChunkRows;
            build(parts[c], first, std::min(n, first + kChunkRows));
        },
        kHeavyItems);
    return parts;
}
// offsets[row + 1] = offsets[row] + length for each length, from `row` on (which moves past).
void append_row_offsets(std::vector<Index>& offsets, Index& row,
                        const std::vector<Index>& lengths) {
    for (Index length : lengths) {
        offsets[row + 1] = offsets[row] + length;
        ++row;
    }
}

void product_pattern(MultigridLevel& level, const BinBcsrPatternView& p);

// The pattern of P from the aggregates (smoothed: also the aggregates of the neighbours) and
// the smoothing map, then the product's.
void transfer_patterns(MultigridLevel& level, const BinBcsrPatternView& p, bool smooth) {
    const Index n = level.num_nodes;
    const std::int64_t entries = static_cast<std::int64_t>(p.bin_offsets[p.num_bins]) + n;
    auto entry_of = [&](Index row, Index j) {
        return j < 0 ? p.bin_offsets[p.num_bins] + row : p.slot(row, j);
    };
    // P: row i = the aggregates of i and (smoothed) of its aggregated neighbours.
    BlockCsr& pro = level.prolongator;
    pro.num_rows = n;
    pro.num_cols = level.coarse_nodes;
    struct Part {
        std::vector<Index> row_lengths, columns;
    };
    const std::vector<Part> parts = build_in_chunks<Part>(n, [&](Part& out, Index b, Index e) {
        std::vector<Index> row;
        for (Index i = b; i < e; ++i) {
            row.clear();
            if (level.aggregate[i] >= 0) {
                row.push_back(level.aggregate[i]);
                if (smooth)
                    for_each_neighbour(p, i, [&](Index, Index c) {
                        if (level.aggregate[c] >= 0) row.push_back(level.aggregate[c]);
                    });
                std::sort(row.begin(), row.end());
                row.erase(std::unique(row.begin(), row.end()), row.end());
            }
            out.columns.insert(out.columns.end(), row.begin(), row.end());
            out.row_lengths.push_back(static_cast<Index>(row.size()));
        }
    });
    pro.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
    pro.columns.clear();
    Index at = 0;
    for (const Part& part : parts) {
        append_row_offsets(pro.offsets, at, part.row_lengths);
        pro.columns.insert(pro.columns.end(), part.columns.begin(), part.columns.end());
    }
    pro.values.assign(pro.columns.size() * pro.row_block * pro.col_block, 0.0);
    level.smooth_target.assign(static_cast<std::size_t>(entries), -1);
    if (smooth) // each row writes its own entries
        parallel_for(0, n, [&](std::int64_t i) {
            if (level.aggregate[i] < 0) return;
            const Index b = pro.offsets[i], e = pro.offsets[i + 1];
            level.smooth_target[entry_of(Index(i), -1)] =
                find_in_row(pro.columns, b, e, level.aggregate[i]);
            for_each_neighbour(p, Index(i), [&](Index j, Index c) {
                if (level.aggregate[c] >= 0)
                    level.smooth_target[entry_of(Index(i), j)] =
                        find_in_row(pro.columns, b, e, level.aggregate[c]);
            });
        });

    product_pattern(level, p);
}

// A P: row i = union of the P rows of i and its neighbours (rows without P entries: empty);
// its (operator entry, P block) pairs per block.
void product_pattern(MultigridLevel& level, const BinBcsrPatternView& p) {
    const Index n = level.num_nodes;
    const BlockCsr& pro = level.prolongator;
    auto entry_of = [&](Index row, Index j) {
        return j < 0 ? p.bin_offsets[p.num_bins] + row : p.slot(row, j);
    };
    struct Part {
        std::vector<Index> row_blocks, columns, block_pairs, entry, pblock;
    };
    // A row's pairs by column, each column's in ascending entry order: the neighbours' entries
    // ascend with j and the diagonal's (after the slots) comes last, so visiting the sources in
    // that order and bucketing by column gives the pairs sorted by (column, entry) without a
    // sort of the pairs (only the row's distinct columns are sorted).
    const Index nc = level.coarse_nodes;
    const std::vector<Part> parts = build_in_chunks<Part>(n, [&](Part& out, Index b, Index e) {
        std::vector<Index> seen(static_cast<std::size_t>(nc), -1), count(seen.size()), cols;
        auto for_sources = [&](Index i, auto&& f) { // (entry, P row) in ascending entry order
            for_each_neighbour(p, i, [&](Index j, Index c) { f(entry_of(i, j), c); });
            f(entry_of(i, -1), i);
        };
        for (Index i = b; i < e; ++i) {
            cols.clear();
            if (pro.offsets[i + 1] > pro.offsets[i])
                for_sources(i, [&](Index, Index c) {
                    for (Index k = pro.offsets[c]; k < pro.offsets[c + 1]; ++k) {
                        const Index J = pro.columns[k];
                        if (seen[J] != i) {
                            seen[J] = i;
                            count[J] = 0;
                            cols.push_back(J);
                        }
                        ++count[J];
                    }
                });
            std::sort(cols.begin(), cols.end());
            const std::size_t first = out.entry.size();
            std::size_t at = first;
            for (Index J : cols) { // count[J] becomes the next position of column J's pairs
                const Index pairs = count[J];
                count[J] = static_cast<Index>(at - first);
                at += static_cast<std::size_t>(pairs);
                out.block_pairs.push_back(pairs);
                out.columns.push_back(J);
            }
            out.entry.resize(at);
            out.pblock.resize(at);
            if (!cols.empty())
                for_sources(i, [&](Index entry, Index c) {
                    for (Index k = pro.offsets[c]; k < pro.offsets[c + 1]; ++k) {
                        const std::size_t to = first + count[pro.columns[k]]++;
                        out.entry[to] = entry;
                        out.pblock[to] = k;
                    }
                });
            out.row_blocks.push_back(static_cast<Index>(cols.size()));
        }
    });
    BlockCsr& ap = level.product;
    ap.num_rows = n;
    ap.num_cols = level.coarse_nodes;
    ap.offsets.assign(static_cast<std::size_t>(n) + 1, 0);
    ap.columns.clear();
    level.product_offsets.assign(1, 0);
    level.product_entry.clear();
    level.product_p.clear();
    Index row = 0;
    for (const Part& part : parts) {
        append_row_offsets(ap.offsets, row, part.row_blocks);
        ap.columns.insert(ap.columns.end(), part.columns.begin(), part.columns.end());
        for (Index pairs : part.block_pairs)
            level.product_offsets.push_back(level.product_offsets.back() + pairs);
        level.product_entry.insert(level.product_entry.end(), part.entry.begin(), part.entry.end());
        level.product_p.insert(level.product_p.end(), part.pblock.begin(), part.pblock.end());
    }
    ap.values.assign(ap.columns.size() * ap.row_block * ap.col_block, 0.0);
}

// The coarse operator's Bin-BCSR* pattern (exact counts, bins, one allocation, sorted columns)
// and the Galerkin pairs of every coarse entry.
void coarse_pattern(MultigridLevel& level, BlockMatrix& coarse, int modes) {
    const Index nc = level.coarse_nodes;
    const BlockCsr& pro = level.prolongator;
    const BlockCsr& ap = level.product;
    // P^T by counting: for coarse I the P blocks (i, I).
    std::vector<Index>& t_offsets = level.restriction_offsets;
    std::vector<Index>& t_blocks = level.restriction_blocks;
    std::vector<Index>& t_rows = level.restriction_rows;
    t_offsets.assign(static_cast<std::size_t>(nc) + 1, 0);
    for (Index c : pro.columns) ++t_offsets[c + 1];
    std::partial_sum(t_offsets.begin(), t_offsets.end(), t_offsets.begin());
    t_blocks.resize(pro.columns.size());
    t_rows.resize(pro.columns.size());
    {
        std::vector<Index> fill(t_offsets.begin(), t_offsets.end() - 1);
        for (Index i = 0; i < pro.num_rows; ++i)
            for (Index k = pro.offsets[i]; k < pro.offsets[i + 1]; ++k) {
                const Index at = fill[pro.columns[k]]++;
                t_blocks[at] = k;
                t_rows[at] = i;
            }
    }
    // Exact off-diagonal counts with a marker, then bins and columns (rows in parallel chunks,
    // each with its own marker; every row writes its own counts and slots).
    BinBcsrPattern& pat = coarse.pattern;
    pat.num_rows = nc;
    pat.row_counts.assign(static_cast<std::size_t>(nc), 0);
    auto for_row_chunks = [&](auto&& row) {
        const Index chunks = (nc + kChunkRows - 1) / kChunkRows;
        parallel_for(
            0, chunks,
            [&](std::int64_t c) {
                std::vector<Index> marker(static_cast<std::size_t>(nc), -1), cols;
                const Index first = static_cast<Index>(c) * kChunkRows;
                for (Index I = first; I < std::min(nc, first + kChunkRows); ++I) {
                    cols.clear();
                    for (Index t = t_offsets[I]; t < t_offsets[I + 1]; ++t) {
                        const Index i = t_rows[t];
                        for (Index q = ap.offsets[i]; q < ap.offsets[i + 1]; ++q) {
                            const Index J = ap.columns[q];
                            if (J != I && marker[J] != I) {
                                marker[J] = I;
                                cols.push_back(J);
                            }
                        }
                    }
                    row(I, cols);
                }
            },
            kHeavyItems);
    };
    for_row_chunks([&](Index I, std::vector<Index>& cols) {
        pat.row_counts[I] = static_cast<Index>(cols.size());
    });
    pat.bin_offsets = bin_bcsr_bin_offsets(pat.row_counts);
    pat.columns.assign(static_cast<std::size_t>(pat.num_slots()), 0);
    const BinBcsrPatternView v = pat.view();
    for_row_chunks([&](Index I, std::vector<Index>& cols) {
        std::sort(cols.begin(), cols.end());
        const Index w = v.width(I / kBinRows);
        for (Index j = 0; j < w; ++j)
            pat.columns[v.slot(I, j)] = j < static_cast<Index>(cols.size()) ? cols[j] : I;
    });
    coarse.block = modes;
    const std::size_t bb = static_cast<std::size_t>(modes) * modes;
    coarse.values.assign(bb * pat.num_slots(), 0.0);
    coarse.diag.assign(bb * nc, 0.0);

    // Galerkin pairs per coarse entry (slots, then diagonal), by count + scan + fill. Every entry
    // of row I is written by row I only, so rows run in parallel.
    const Index slots = pat.num_slots();
    auto position = [&](Index I, Index J) { // of column J in row I: its j, or the row count
        Index lo = 0, hi = pat.row_counts[I];
        while (lo < hi) { // columns of row I are sorted over j
            const Index mid = (lo + hi) / 2;
            if (pat.columns[v.slot(I, mid)] < J)
                lo = mid + 1;
            else
                hi = mid;
        }
        return lo < pat.row_counts[I] && pat.columns[v.slot(I, lo)] == J ? lo : pat.row_counts[I];
    };
    // A_c is symmetric (A is, and P is on both sides): pairs only for the diagonal and the upper
    // slots (J > I); each upper block is written, transposed, to its mirror slot (J, I) too. A
    // pattern that is not structurally symmetric (never from a symmetric A) keeps every entry.
    std::vector<Index>& mirror = level.galerkin_mirror;
    mirror.assign(static_cast<std::size_t>(slots), -1);
    std::atomic<bool> unsymmetric{false};
    parallel_for(0, nc, [&](std::int64_t row) {
        const Index I = static_cast<Index>(row);
        for (Index j = 0; j < pat.row_counts[I]; ++j) {
            const Index s = v.slot(I, j), J = pat.columns[s];
            if (J < I) continue;
            const Index at = position(J, I);
            if (at == pat.row_counts[J]) { // structurally unsymmetric: every entry summed
                unsymmetric = true;
                return;
            }
            mirror[s] = v.slot(J, at);
        }
    });
    if (unsymmetric) mirror.clear();
    std::vector<Index>& off = level.galerkin_offsets;
    off.assign(static_cast<std::size_t>(slots) + nc + 1, 0);
    // (rows in chunks, each with a column -> entry table of its current row instead of a
    // binary search per pair)
    auto for_pairs = [&](auto&& f) {
        const Index chunks = (nc + kChunkRows - 1) / kChunkRows;
        parallel_for(
            0, chunks,
            [&](std::int64_t c) {
                std::vector<Index> entry(static_cast<std::size_t>(nc), -1);
                const Index first = static_cast<Index>(c) * kChunkRows;
                for (Index I = first; I < std::min(nc, first + kChunkRows); ++I) {
                    for (Index j = 0; j < pat.row_counts[I]; ++j)
                        entry[pat.columns[v.slot(I, j)]] = v.slot(I, j);
                    entry[I] = slots + I;
                    for (Index t = t_offsets[I]; t < t_offsets[I + 1]; ++t) {
                        const Index i = t_rows[t];
                        for (Index q = ap.offsets[i]; q < ap.offsets[i + 1]; ++q)
                            if (mirror.empty() || ap.columns[q] >= I)
                                f(entry[ap.columns[q]], t_blocks[t], q);
                    }
                }
            },
            kHeavyItems);
    };
    for_pairs([&](Index e, Index, Index) { ++off[e + 1]; });
    std::partial_sum(off.begin(), off.end(), off.begin());
    level.galerkin_p.resize(off.back());
    level.galerkin_ap.resize(off.back());
    std::vector<Index> fill(off.begin(), off.end() - 1);
    for_pairs([&](Index e, Index pb, Index q) {
        const Index at = fill[e]++;
        level.galerkin_p[at] = pb;
        level.galerkin_ap[at] = q;
    });
}

// The first level of a p-multigrid: P is the given interpolation (weight * I blocks, fixed);
// pinned coarse nodes get no P entries.
MultigridLevel given_level(const BinBcsrPatternView& p, const GivenTransfer& given,
                           const std::vector<std::uint8_t>& fixed) {
    MultigridLevel level;
    level.num_nodes = p.num_rows;
    level.block = 3;
    level.coarse_nodes = given.coarse_nodes;
    level.fixed_prolongator = true;
    level.aggregate.assign(static_cast<std::size_t>(p.num_rows), -1);
    BlockCsr& pro = level.prolongator;
    pro.num_rows = p.num_rows;
    pro.num_cols = given.coarse_nodes;
    pro.row_block = pro.col_block = 3;
    pro.offsets.assign(static_cast<std::size_t>(p.num_rows) + 1, 0);
    std::vector<std::pair<Index, double>> row;
    for (Index i = 0; i < p.num_rows; ++i) {
        row.clear();
        if (!fixed[i])
            for (Index k = given.offsets[i]; k < given.offsets[i + 1]; ++k)
                if (!given.coarse_fixed[given.columns[k]] && given.weights[k] != 0)
                    row.emplace_back(given.columns[k], given.weights[k]);
        std::sort(row.begin(), row.end());
        for (const auto& [col, w] : row) {
            pro.columns.push_back(col);
            for (int r = 0; r < 3; ++r)
                for (int c = 0; c < 3; ++c) pro.values.push_back(r == c ? w : 0.0);
        }
        pro.offsets[i + 1] = static_cast<Index>(pro.columns.size());
    }
    level.smooth_target.assign(static_cast<std::size_t>(p.bin_offsets[p.num_bins]) + p.num_rows,
                               -1);
    product_pattern(level, p);
    return level;
}

} // namespace

bool build_aggregated_level(const BinBcsrPatternView& pattern,
                            const std::vector<std::uint8_t>& active, int block, Index level_dofs,
                            const MultigridSettings& settings, MultigridLevel& level,
                            BlockMatrix& coarse) {
    level.num_nodes = pattern.num_rows;
    level.block = block;
    level.coarse_nodes = aggregate_nodes(pattern, active, settings.aggregation, level.aggregate);
    const int modes = settings.modes;
    if (level.coarse_nodes == 0 ||
        static_cast<double>(level.coarse_nodes) * modes > 0.85 * level_dofs)
        return false; // no useful coarsening left
    level.prolongator.row_block = level.product.row_block = block;
    level.prolongator.col_block = level.product.col_block = modes;
    transfer_patterns(level, pattern, settings.prolongator_damping > 0);
    coarse_pattern(level, coarse, modes);
    return true;
}

MultigridHierarchy build_multigrid(const BinBcsrPattern& fine, const double* positions,
                                   const std::uint8_t* fixed, const MultigridSettings& settings,
                                   const GivenTransfer* first) {
    EDN_VERIFY(settings.modes == 3 || settings.modes == 6, ErrorCode::Usage,
               "multigrid: modes must be 3 or 6, not " << settings.modes);
    EDN_VERIFY(settings.smoother_degree >= 1 && settings.smoother_degree <= kMaxChebyshevDegree &&
                   settings.given_smoother_degree >= 0 &&
                   settings.given_smoother_degree <= kMaxChebyshevDegree &&
                   settings.max_levels >= 1 && settings.power_iterations >= 1 &&
                   settings.power_iterations <= kMaxLanczosSteps &&
                   settings.coarse_power_iterations >= 1 &&
                   settings.coarse_power_iterations <= kMaxLanczosSteps &&
                   settings.coarsest_dofs >= 1,
               ErrorCode::Usage, "multigrid: invalid settings");
    MultigridHierarchy h;
    h.settings = settings;
    const Index n0 = fine.num_rows;
    h.fixed.assign(static_cast<std::size_t>(n0), 0);
    if (fixed) std::copy_n(fixed, n0, h.fixed.begin());
    const int modes = settings.modes;

    // The first aggregated level's nodes: the fine nodes, or the given transfer's coarse nodes.
    std::vector<std::uint8_t> active(static_cast<std::size_t>(n0));
    for (Index i = 0; i < n0; ++i) active[i] = h.fixed[i] ? 0 : 1;
    if (first) {
        EDN_VERIFY(static_cast<Index>(first->offsets.size()) == n0 + 1 &&
                       first->coarse_positions.size() == 3 * std::size_t(first->coarse_nodes) &&
                       first->coarse_fixed.size() == std::size_t(first->coarse_nodes),
                   ErrorCode::Usage, "multigrid: the given transfer does not fit the matrix");
        h.levels.push_back(given_level(fine.view(), *first, h.fixed));
        BlockMatrix coarse;
        coarse_pattern(h.levels.back(), coarse, 3);
        h.coarse.push_back(std::move(coarse));
        positions = first->coarse_positions.data();
        active.assign(first->coarse_fixed.size(), 0);
        for (std::size_t v = 0; v < active.size(); ++v) active[v] = first->coarse_fixed[v] ? 0 : 1;
    }
    // The near-null space: rigid-body modes about the centroid of the active nodes.
    std::vector<double> near_null =
        detail::rigid_near_null(positions, active.data(), active.size(), modes);
    const Index free_nodes =
        static_cast<Index>(std::count(active.begin(), active.end(), std::uint8_t(1)));
    Index level_dofs = 3 * free_nodes;
    int block = 3;
    while (static_cast<int>(h.levels.size()) + 1 < settings.max_levels &&
           level_dofs > settings.coarsest_dofs) {
        const BinBcsrPattern& pat = h.levels.empty() ? fine : h.coarse.back().pattern;
        MultigridLevel level;
        BlockMatrix coarse;
        if (!build_aggregated_level(pat.view(), active, block, level_dofs, settings, level, coarse))
            break;
        std::vector<double> coarse_null;
        detail::tentative_prolongator(level, near_null, modes, coarse_null);
        h.levels.push_back(std::move(level));
        h.coarse.push_back(std::move(coarse));
        near_null.swap(coarse_null);
        // (coarse dofs of dropped modes stay in the count: inert, see the header)
        block = modes;
        active.assign(static_cast<std::size_t>(h.coarse.back().pattern.num_rows), 1);
        level_dofs = static_cast<Index>(h.coarse.back().pattern.num_rows) * modes;
    }
    h.coarsest_dofs =
        h.coarse.empty() ? 3 * n0 : h.coarse.back().pattern.num_rows * h.coarse.back().block;
    const int levels = h.num_levels();
    h.b.resize(levels);
    h.x.resize(levels);
    h.r.resize(levels);
    h.d.resize(levels);
    h.q.resize(levels);
    for (int l = 0; l < levels; ++l) {
        const std::size_t dofs = l == 0
                                     ? 3 * static_cast<std::size_t>(n0)
                                     : static_cast<std::size_t>(h.coarse[l - 1].pattern.num_rows) *
                                           h.coarse[l - 1].block;
        for (auto* v : {&h.b, &h.x, &h.r, &h.d, &h.q}) (*v)[l].assign(dofs, 0.0);
    }
    return h;
}

Index aggregate_nodes(const BinBcsrPatternView& p, const std::vector<std::uint8_t>& active,
                      Aggregation method, std::vector<Index>& aggregate) {
    return method == Aggregation::Parallel ? parallel_aggregates(p, active, aggregate)
                                           : greedy_aggregates(p, active, aggregate);
}

MultigridStats multigrid_stats(const MultigridHierarchy& h, const BinBcsrPattern& fine) {
    MultigridStats s;
    s.level_nodes.push_back(fine.num_rows);
    s.level_nnz_blocks.push_back(fine.nnz_blocks());
    for (const BlockMatrix& m : h.coarse) {
        s.level_nodes.push_back(m.pattern.num_rows);
        s.level_nnz_blocks.push_back(m.pattern.nnz_blocks());
    }
    return s;
}

} // namespace cpu
} // namespace edn
