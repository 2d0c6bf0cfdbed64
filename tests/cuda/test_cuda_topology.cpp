// CUDA topology kernels against the CPU topology on the same input.
#include "core/device.hpp"
#include "cuda/cuda_topology.hpp"
#include "mesh/mesh_fixtures.hpp"
#include "mesh/topology.hpp"

#include <gtest/gtest.h>
#include <vector>

namespace edn {
namespace {

std::vector<Index> cpu_vertex_cell_counts(const TetMesh& mesh) {
    const Topology topo = build_topology(mesh);
    std::vector<Index> counts(topo.num_vertices);
    for (Index v = 0; v < topo.num_vertices; ++v) counts[v] = topo.vertex_cells.row_size(v);
    return counts;
}

TEST(CudaTopology, VertexCellCountsMatchCpu) {
    if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
    const TetMesh mesh =
        test::shuffle_mesh(test::make_random_perturbed_box(12, 9, 7, 1.0, 1.0, 1.0), 21);
    EXPECT_EQ(cuda::vertex_cell_counts(mesh.cells, mesh.num_vertices()),
              cpu_vertex_cell_counts(mesh));
}

TEST(CudaTopology, VertexCellCountsEmptyAndOneCell) {
    if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
    TetMesh empty;
    empty.positions = {{0, 0, 0}, {1, 0, 0}};
    EXPECT_EQ(cuda::vertex_cell_counts(empty.cells, empty.num_vertices()),
              std::vector<Index>(2, 0));
    EXPECT_TRUE(cuda::vertex_cell_counts({}, 0).empty());
    const TetMesh one = test::make_single_tet();
    EXPECT_EQ(cuda::vertex_cell_counts(one.cells, one.num_vertices()), cpu_vertex_cell_counts(one));
}

} // namespace
} // namespace edn
