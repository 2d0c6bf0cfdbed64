#include "core/device.hpp"
#include "cuda/cuda_check.cuh"
#include "cuda/svd_device.hpp"

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

namespace edn::cuda {
namespace {

__global__ void svd3_float_kernel(const Mat3<float>* F, Index n, Svd3<float>* out) {
    const Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = svd3_rotation_variant(F[i]);
}

} // namespace

void svd3_float_on_device(const Mat3<float>* F, Index n, Svd3<float>* out) {
    if (n <= 0) return;
    const auto count = static_cast<std::size_t>(n);
    DeviceBuffer<Mat3<float>> in(count);
    DeviceBuffer<Svd3<float>> result(count);
    EDN_CUDA_CHECK(cudaMemcpy(in.data(), F, count * sizeof(Mat3<float>), cudaMemcpyHostToDevice));
    svd3_float_kernel<<<static_cast<unsigned int>((n + 127) / 128), 128>>>(in.data(), n,
                                                                           result.data());
    EDN_CUDA_CHECK_LAUNCH();
    EDN_CUDA_CHECK(
        cudaMemcpy(out, result.data(), count * sizeof(Svd3<float>), cudaMemcpyDeviceToHost));
}

} // namespace edn::cuda
