#include "support/backend.hpp"

#include "core/device.hpp"

namespace edn::test {

bool has_cuda_device() {
    static const bool available = cuda_device_available(); // one probe per process
    return available;
}

std::string unavailable_reason(Backend backend) {
    if (backend == Backend::Cpu) return {};
    if (!built_with_cuda()) return "built without CUDA (ELASTODYN_CUDA=OFF)";
    if (!has_cuda_device()) return "no CUDA device";
    return {};
}

std::string backend_label(Backend backend) {
    return backend == Backend::Cuda ? "Cuda" : "Cpu";
}

void BackendTest::SetUp() {
    EDN_SKIP_UNLESS_AVAILABLE(backend());
}

void CudaOrderTest::SetUp() {
    EDN_SKIP_WITHOUT_CUDA();
}

void BackendOrderTest::SetUp() {
    EDN_SKIP_UNLESS_AVAILABLE(backend());
}

} // namespace edn::test
