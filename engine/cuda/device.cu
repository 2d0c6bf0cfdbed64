#include "core/device.hpp"
#include "cuda/cuda_check.cuh"

namespace edn {

bool built_with_cuda() {
    return true;
}

bool cuda_device_available() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError(); // clear the sticky "no device" error
        return false;
    }
    return count > 0;
}

void finish_device_work() {
    EDN_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}

std::string cuda_device_name() {
    if (!cuda_device_available()) return "none";
    cudaDeviceProp prop{};
    EDN_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    return prop.name;
}

} // namespace edn
