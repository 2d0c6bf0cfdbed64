// The per-entry map stage on the device (cuda::build_per_entry_map) against cpu::
// build_per_entry_map on the same pattern and cell node table (skipped without a device).
#include "sparse/summation.hpp"
#include "support/assembly_fixture.hpp"
#include "support/backend.hpp"
#include "support/device_arrays.hpp"
#include "support/stage_meshes.hpp"

#include <algorithm>
#include <gtest/gtest.h>

namespace edn {
namespace {

class CudaMapsStageTest : public test::CudaOrderTest {};

TEST_P(CudaMapsStageTest, PerEntryMapEqualsCpu) {
#if defined(EDN_WITH_CUDA) && EDN_WITH_CUDA
    const int order = GetParam();
    for (const TetMesh& mesh : test::stage_meshes(order)) {
        const test::AssemblyFixture f(mesh, order);
        const PerEntryMap cpu_map = cpu::build_per_entry_map(f.pattern, f.cell_nodes_view());
        const cuda::DeviceBuffer<Index> bin_offsets = test::to_device(f.pattern.bin_offsets);
        const cuda::DeviceBuffer<Index> columns = test::to_device(f.pattern.columns);
        const cuda::DeviceBuffer<Index> row_counts = test::to_device(f.pattern.row_counts);
        const cuda::DeviceBuffer<Index> cell_nodes = test::to_device(f.cell_nodes);
        const BinBcsrPatternView pattern{f.pattern.num_rows, f.pattern.num_bins(),
                                         bin_offsets.data(), columns.data(), row_counts.data()};
        const CellNodesView nodes{cell_nodes.data(), f.per_cell(), f.mesh.num_cells()};
        cuda::DeviceBuffer<Index> offsets(cpu_map.offsets.size());
        cuda::DeviceBuffer<Index> sources(cpu_map.sources.size());
        for (bool sorted : {false, true}) {
            std::size_t scratch = 0;
            cuda::build_per_entry_map(pattern, nodes, f.pattern.num_slots(), offsets.data(),
                                      sources.data(), sorted, &scratch);
            EXPECT_GT(scratch, 0u);
            const std::vector<Index> got_offsets = test::to_host(offsets);
            std::vector<Index> got_sources = test::to_host(sources);
            ASSERT_EQ(got_offsets, cpu_map.offsets) << "order " << order;
            // Unsorted: the same source set per target, in atomic order. Sorted: ascending, as
            // the CPU map's.
            if (!sorted)
                for (std::size_t t = 0; t + 1 < got_offsets.size(); ++t)
                    std::sort(got_sources.begin() + got_offsets[t],
                              got_sources.begin() + got_offsets[t + 1]);
            EXPECT_EQ(got_sources, cpu_map.sources) << "order " << order << " sorted " << sorted;
        }
    }
#endif
}

INSTANTIATE_TEST_SUITE_P(Orders, CudaMapsStageTest, ::testing::Values(1, 2, 3));

} // namespace
} // namespace edn
