// The CUDA backend in a build without CUDA: the device queries answer "none" and every entry
// point throws edn::Error(ErrorCode::Unsupported). The classes' members and the cuda:: stage
// functions throw from their declarations (cuda/cuda_only.hpp); only the factory, the device
// queries and throw_no_cuda are here.
#include "core/device.hpp"
#include "core/error.hpp"
#include "cuda/cuda_only.hpp"
#include "sim/simulation_backend.hpp"

namespace edn {

bool built_with_cuda() {
    return false;
}
bool cuda_device_available() {
    return false;
}
std::string cuda_device_name() {
    return "none";
}
void finish_device_work() {}

std::unique_ptr<SimulationBackend> make_cuda_backend(TetMesh, const SimulationSettings&) {
    cuda::throw_no_cuda();
}

namespace cuda {

void throw_no_cuda() {
    EDN_THROW(ErrorCode::Unsupported, "elastodyn was built without CUDA (ELASTODYN_CUDA=OFF)");
}

} // namespace cuda
} // namespace edn
