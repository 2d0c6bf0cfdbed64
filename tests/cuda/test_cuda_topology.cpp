// CUDA topology kernels against the CPU topology on the same input.
#include "cuda/cuda_topology.hpp"
#include "mesh/topology.hpp"
#include "support/backend.hpp"
#include "support/mesh_fixtures.hpp"

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
    EDN_SKIP_WITHOUT_CUDA();
    const TetMesh mesh =
        test::shuffle_mesh(test::make_random_perturbed_box(12, 9, 7, 1.0, 1.0, 1.0), 21);
    EXPECT_EQ(cuda::vertex_cell_counts(mesh.cells, mesh.num_vertices()),
              cpu_vertex_cell_counts(mesh));
}

TEST(CudaTopology, VertexCellCountsEmptyAndOneCell) {
    EDN_SKIP_WITHOUT_CUDA();
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
