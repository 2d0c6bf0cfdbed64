// CUDA topology kernels (twins of mesh/topology.cpp).
#include "cuda/cuda_check.cuh"
#include "cuda/cuda_topology.hpp"

namespace edn::cuda {
namespace {

__global__ void count_vertex_cells_kernel(const int4* cells, Index num_cells, Index* counts) {
    Index cell = blockIdx.x * blockDim.x + threadIdx.x;
    if (cell >= num_cells) return;
    int4 v = cells[cell]; // one 16-byte load per cell (paper sec. 4.1)
    atomicAdd(&counts[v.x], 1);
    atomicAdd(&counts[v.y], 1);
    atomicAdd(&counts[v.z], 1);
    atomicAdd(&counts[v.w], 1);
}

} // namespace

std::vector<Index> vertex_cell_counts(std::span<const Cell> cells, Index num_vertices) {
    static_assert(sizeof(Cell) == sizeof(int4));
    std::vector<Index> counts(num_vertices, 0);
    if (cells.empty() || num_vertices == 0) return counts;
    DeviceBuffer<int4> d_cells(cells.size());
    DeviceBuffer<Index> d_counts(num_vertices);
    EDN_CUDA_CHECK(cudaMemcpy(d_cells.data(), cells.data(), d_cells.bytes(), cudaMemcpyHostToDevice));
    EDN_CUDA_CHECK(cudaMemset(d_counts.data(), 0, d_counts.bytes()));
    const int block = 256;
    const auto grid = static_cast<unsigned>((cells.size() + block - 1) / block);
    count_vertex_cells_kernel<<<grid, block>>>(d_cells.data(), static_cast<Index>(cells.size()),
                                               d_counts.data());
    EDN_CUDA_CHECK_LAUNCH();
    EDN_CUDA_CHECK(cudaMemcpy(counts.data(), d_counts.data(), d_counts.bytes(), cudaMemcpyDeviceToHost));
    return counts;
}

} // namespace edn::cuda
