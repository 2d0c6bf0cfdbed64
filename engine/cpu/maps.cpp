// CPU twin of the per-entry map build (cuda/maps.cu): per stored block, the element blocks that
// sum into it, sources ascending per target.
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "sparse/summation.hpp"

#include <atomic>
#include <limits>

namespace edn::cpu {

PerEntryMap build_per_entry_map(const BinBcsrPattern& pattern, const CellNodesView& cell_nodes) {
    const int m = cell_nodes.per_cell;
    const std::int64_t sources = static_cast<std::int64_t>(cell_nodes.num_cells) * m * m;
    EDN_VERIFY(sources <= std::numeric_limits<Index>::max(), ErrorCode::OutOfMemory,
               "per-entry map too large: " << sources << " element blocks");
    PerEntryMap map;
    map.num_slots = pattern.num_slots();
    map.num_rows = pattern.num_rows;
    const std::int64_t targets = static_cast<std::int64_t>(map.num_slots) + map.num_rows;
    std::vector<Index> target(sources);
    std::vector<std::atomic<Index>> counts(targets);
    parallel_for(0, targets,
                 [&](std::int64_t t) { counts[t].store(0, std::memory_order_relaxed); });
    parallel_for(0, cell_nodes.num_cells, [&](std::int64_t t) {
        const Index* nodes = cell_nodes.nodes + t * m;
        for (int a = 0; a < m; ++a)
            for (int b = 0; b < m; ++b) {
                const Index row = nodes[a], col = nodes[b];
                const Index tgt = row == col ? map.num_slots + row : pattern.find_slot(row, col);
                EDN_VERIFY(tgt >= 0, ErrorCode::Internal,
                           "per-entry map: block (" << row << ", " << col << ") not in pattern");
                target[(t * m + a) * m + b] = tgt;
                counts[tgt].fetch_add(1, std::memory_order_relaxed);
            }
    });
    map.offsets.assign(targets + 1, 0);
    for (std::int64_t t = 0; t < targets; ++t)
        map.offsets[t + 1] = map.offsets[t] + counts[t].load(std::memory_order_relaxed);
    // A serial stable fill keeps sources ascending within each target (deterministic sums).
    std::vector<Index> cursor(map.offsets.begin(), map.offsets.end() - 1);
    map.sources.resize(sources);
    for (std::int64_t s = 0; s < sources; ++s)
        map.sources[cursor[target[s]]++] = static_cast<Index>(s);
    return map;
}

} // namespace edn::cpu
