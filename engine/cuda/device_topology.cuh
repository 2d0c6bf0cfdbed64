#pragma once
// Mesh topology on the device (twin of mesh/topology.hpp's Topology, minus the boundary), built
// from cellVertices with CUB sorts (cuda::build_topology, paper sec. 4.1) or uploaded from a host
// Topology. Host code only (no kernels): CUDA tests include it too.

#include "cuda/cuda_check.cuh"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"

namespace edn::cuda {

/// Device arrays of a tetrahedral mesh's topology.
struct DeviceTopology {
    Index num_vertices = 0, num_cells = 0, num_edges = 0, num_faces = 0;
    DeviceBuffer<int4> cells;       ///< #T cell vertices
    DeviceBuffer<int2> edges;       ///< #E (a < b), sorted
    DeviceBuffer<Index> faces;      ///< 3 #F (a < b < c), sorted
    DeviceBuffer<Index> face_edges; ///< 3 #F ascending edge ids of each face
    DeviceBuffer<Index> cell_edges; ///< 6 #T local edge order (0,1),(0,2),(0,3),(1,2),(1,3),(2,3)
    DeviceBuffer<Index> cell_faces; ///< 4 #T face opposite local vertex i
    DeviceBuffer<Index> vertex_offsets, vertex_cells; ///< vertexCells CSR (ascending cells)
    DeviceBuffer<Index> edge_offsets, edge_cells;     ///< edgeCells CSR (ascending cells)
    DeviceBuffer<Index> face_offsets, face_cells;     ///< faceCells CSR (ascending cells)
    /// Node slot order (Topology::edge_slot ...); empty where not built (the identity).
    DeviceBuffer<Index> edge_slot, edge_at, face_slot, face_at;

    /// Bytes held on the device.
    std::size_t bytes() const {
        return cells.bytes() + edges.bytes() + faces.bytes() + face_edges.bytes() +
               cell_edges.bytes() + cell_faces.bytes() + vertex_offsets.bytes() +
               vertex_cells.bytes() + edge_offsets.bytes() + edge_cells.bytes() +
               face_offsets.bytes() + face_cells.bytes() + edge_slot.bytes() + edge_at.bytes() +
               face_slot.bytes() + face_at.bytes();
    }
    /// The arrays as a POD view (device pointers) for the stage functions.
    TopologyView view() const {
        return {num_vertices,
                num_cells,
                num_edges,
                num_faces,
                reinterpret_cast<const Index*>(cells.data()),
                reinterpret_cast<const Index*>(edges.data()),
                faces.data(),
                face_edges.data(),
                cell_edges.data(),
                cell_faces.data(),
                {vertex_offsets.data(), vertex_cells.data()},
                {edge_offsets.data(), edge_cells.data()},
                {face_offsets.data(), face_cells.data()}};
    }
};

/// `layout` with its node slot order pointed at `topology`'s device arrays (the identity where
/// the topology has none for the layout's order), as the device stages need it.
inline NodeLayout with_device_slots(NodeLayout layout, const DeviceTopology& topology) {
    const bool edges =
        layout.order >= 2 && topology.edge_at.size() == std::size_t(topology.num_edges);
    const bool faces =
        layout.order >= 3 && topology.face_at.size() == std::size_t(topology.num_faces);
    layout.edge_slot = edges ? topology.edge_slot.data() : nullptr;
    layout.edge_at = edges ? topology.edge_at.data() : nullptr;
    layout.face_slot = faces ? topology.face_slot.data() : nullptr;
    layout.face_at = faces ? topology.face_at.data() : nullptr;
    return layout;
}

/// Uploads a host topology (and the mesh cells).
void upload_topology(const TetMesh& mesh, const Topology& host, DeviceTopology& topology);

/// Copies a device topology back into a host Topology (no boundary), for tests.
Topology download_topology(const DeviceTopology& topology);

} // namespace edn::cuda
