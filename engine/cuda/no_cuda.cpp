// Stand-ins for the CUDA backend in a build without CUDA: every entry point fails loudly.
#include "core/device.hpp"
#include "core/error.hpp"
#include "cuda/cuda_topology.hpp"

namespace edn {

bool built_with_cuda() { return false; }
bool cuda_device_available() { return false; }
std::string cuda_device_name() { return "none"; }

namespace cuda {

std::vector<Index> vertex_cell_counts(std::span<const Cell>, Index) {
    EDN_THROW(ErrorCode::Unsupported, "elastodyn was built without CUDA (ELASTODYN_CUDA=OFF)");
}

} // namespace cuda
} // namespace edn
