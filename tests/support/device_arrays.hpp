#pragma once
// Host <-> device copies for the tests of the cuda:: stage functions, which take device pointers.
// Only in a build with CUDA (host code over cuda::DeviceBuffer; the tests skip without a device).

#if defined(EDN_WITH_CUDA) && EDN_WITH_CUDA
#include "cuda/cuda_check.cuh"
#include "cuda/device_topology.cuh"
#include "support/mesh_fixtures.hpp"

#include <cstddef>
#include <vector>

namespace edn::test {

/// A device copy of `count` host elements of type U, stored as T (same size: Cell -> int4).
template <class T, class U> cuda::DeviceBuffer<T> to_device(const U* host, std::size_t count) {
    static_assert(sizeof(T) == sizeof(U));
    cuda::DeviceBuffer<T> device(count);
    if (count)
        EDN_CUDA_CHECK(cudaMemcpy(device.data(), host, device.bytes(), cudaMemcpyHostToDevice));
    return device;
}

/// A device copy of `host`.
template <class T> cuda::DeviceBuffer<T> to_device(const std::vector<T>& host) {
    return to_device<T>(host.data(), host.size());
}

/// A host copy of `device` (waits for the work before it on the default stream).
template <class T> std::vector<T> to_host(const cuda::DeviceBuffer<T>& device) {
    std::vector<T> host(device.size());
    if (!host.empty())
        EDN_CUDA_CHECK(
            cudaMemcpy(host.data(), device.data(), device.bytes(), cudaMemcpyDeviceToHost));
    return host;
}

/// A device topology holding only `mesh`'s cells, ready for cuda::build_topology.
inline cuda::DeviceTopology device_cells(const TetMesh& mesh) {
    cuda::DeviceTopology topology;
    topology.num_vertices = mesh.num_vertices();
    topology.num_cells = mesh.num_cells();
    topology.cells = to_device<int4>(mesh.cells.data(), mesh.cells.size());
    return topology;
}

} // namespace edn::test
#endif
