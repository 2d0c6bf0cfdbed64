// The pattern stages on the device (cuda::bin_bcsr_row_counts, cuda::bin_bcsr_bin_offsets,
// cuda::fill_bin_bcsr_columns) against their CPU twins on the same topology, each stage fed the
// CPU result of the stage before (skipped without a device).
#include "sparse/bin_bcsr_pattern.hpp"
#include "support/assembly_fixture.hpp"
#include "support/backend.hpp"
#include "support/device_arrays.hpp"
#include "support/stage_meshes.hpp"

#include <gtest/gtest.h>

namespace edn {
namespace {

class CudaPatternStageTest : public test::CudaOrderTest {};

TEST_P(CudaPatternStageTest, CountsBinOffsetsAndColumnsEqualCpu) {
#if defined(EDN_WITH_CUDA) && EDN_WITH_CUDA
    const int order = GetParam();
    for (const TetMesh& mesh : test::stage_meshes(order)) {
        const test::AssemblyFixture f(mesh, order);
        cuda::DeviceTopology topology;
        cuda::upload_topology(f.mesh, f.topology, topology);
        const NodeLayout layout = cuda::with_device_slots(f.layout, topology);
        const Index rows = f.layout.num_nodes();

        cuda::DeviceBuffer<Index> row_counts(rows);
        std::size_t scratch = 0;
        cuda::bin_bcsr_row_counts(topology.view(), layout, row_counts.data(), &scratch);
        EXPECT_EQ(test::to_host(row_counts), cpu::bin_bcsr_row_counts(f.topology, f.layout));
        EXPECT_GE(scratch, sizeof(Index) * f.layout.num_vertices);

        const Index bins = (rows + kBinRows - 1) / kBinRows;
        cuda::DeviceBuffer<Index> bin_offsets(static_cast<std::size_t>(bins) + 1);
        const cuda::DeviceBuffer<Index> cpu_counts = test::to_device(f.pattern.row_counts);
        const Index slots =
            cuda::bin_bcsr_bin_offsets(cpu_counts.data(), rows, bin_offsets.data(), &scratch);
        EXPECT_EQ(test::to_host(bin_offsets), cpu::bin_bcsr_bin_offsets(f.pattern.row_counts));
        EXPECT_EQ(slots, f.pattern.num_slots());

        const cuda::DeviceBuffer<Index> cpu_offsets = test::to_device(f.pattern.bin_offsets);
        const cuda::DeviceBuffer<Index> cell_nodes = test::to_device(f.cell_nodes);
        cuda::DeviceBuffer<Index> columns(f.pattern.num_slots());
        cuda::DeviceBuffer<unsigned int> counter(1);
        const BinBcsrPatternView pattern{rows, bins, cpu_offsets.data(), columns.data(),
                                         cpu_counts.data()};
        cuda::fill_bin_bcsr_columns(topology.view(), cell_nodes.data(), layout, pattern,
                                    columns.data(), counter.data());
        EXPECT_EQ(test::to_host(columns), f.pattern.columns) << "order " << order;
    }
#endif
}

INSTANTIATE_TEST_SUITE_P(Orders, CudaPatternStageTest, ::testing::Values(1, 2, 3));

} // namespace
} // namespace edn
