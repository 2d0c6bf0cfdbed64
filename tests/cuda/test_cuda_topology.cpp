// The topology stage on the device (cuda::build_topology, cuda::vertex_cell_counts) against its
// CPU twin on the same input (skipped without a device).
#include "mesh/topology.hpp"
#include "support/backend.hpp"
#include "support/device_arrays.hpp"
#include "support/mesh_fixtures.hpp"
#include "support/stage_meshes.hpp"

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

class CudaTopologyStageTest : public test::CudaOrderTest {};

// cuda::build_topology gives cpu::build_topology's arrays (no boundary), the node slot order for
// the nodes of the order only.
TEST_P(CudaTopologyStageTest, BuildTopologyEqualsCpu) {
#if defined(EDN_WITH_CUDA) && EDN_WITH_CUDA
    const int order = GetParam();
    for (const TetMesh& mesh : test::stage_meshes(order)) {
        const Topology cpu_topology = cpu::build_topology(mesh.cells, mesh.num_vertices());
        cuda::DeviceTopology device = test::device_cells(mesh);
        std::size_t peak = 0;
        cuda::build_topology(device, order, &peak);
        EXPECT_EQ(device.num_edges, cpu_topology.num_edges());
        EXPECT_EQ(device.num_faces, cpu_topology.num_faces());
        EXPECT_GE(peak, device.bytes());
        const Topology t = cuda::download_topology(device);
        EXPECT_EQ(t.edges, cpu_topology.edges);
        EXPECT_EQ(t.faces, cpu_topology.faces);
        EXPECT_EQ(t.face_edges, cpu_topology.face_edges);
        EXPECT_EQ(t.cell_edges, cpu_topology.cell_edges);
        EXPECT_EQ(t.cell_faces, cpu_topology.cell_faces);
        EXPECT_EQ(t.vertex_cells.offsets, cpu_topology.vertex_cells.offsets);
        EXPECT_EQ(t.vertex_cells.indices, cpu_topology.vertex_cells.indices);
        EXPECT_EQ(t.edge_cells.offsets, cpu_topology.edge_cells.offsets);
        EXPECT_EQ(t.edge_cells.indices, cpu_topology.edge_cells.indices);
        EXPECT_EQ(t.face_cells.offsets, cpu_topology.face_cells.offsets);
        EXPECT_EQ(t.face_cells.indices, cpu_topology.face_cells.indices);
        if (order >= 2) {
            EXPECT_EQ(t.edge_at, cpu_topology.edge_at);
            EXPECT_EQ(t.edge_slot, cpu_topology.edge_slot);
        } else {
            EXPECT_TRUE(t.edge_at.empty());
        }
        if (order >= 3) {
            EXPECT_EQ(t.face_at, cpu_topology.face_at);
            EXPECT_EQ(t.face_slot, cpu_topology.face_slot);
        } else {
            EXPECT_TRUE(t.face_at.empty());
        }
    }
#endif
}

INSTANTIATE_TEST_SUITE_P(Orders, CudaTopologyStageTest, ::testing::Values(1, 2, 3));

} // namespace
} // namespace edn
