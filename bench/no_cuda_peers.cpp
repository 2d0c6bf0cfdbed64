// Stand-ins for the GPU peers in a build without CUDA: every entry point throws Unsupported.
#include "core/error.hpp"
#include "cuda_peers.hpp"

namespace edn::bench {
namespace {
[[noreturn]] void no_cuda() {
    EDN_THROW(ErrorCode::Unsupported,
              "elastodyn-bench was built without CUDA (ELASTODYN_CUDA=OFF)");
}
} // namespace

DeviceInfo device_info() {
    no_cuda();
}
double copy_bandwidth_gbps(std::size_t, int) {
    no_cuda();
}
double time_device_ms(const std::function<void()>&, int, int) {
    no_cuda();
}
void upload_element_blocks(cuda::Assembly&, const std::vector<float>&) {
    no_cuda();
}
DeviceFloats::DeviceFloats(const std::vector<float>&) {
    no_cuda();
}
DeviceFloats::~DeviceFloats() = default;
DeviceFloats::DeviceFloats(DeviceFloats&&) noexcept = default;
DeviceFloats& DeviceFloats::operator=(DeviceFloats&&) noexcept = default;
std::vector<float> DeviceFloats::download() const {
    no_cuda();
}
CooAssemblyResult cub_coo_assembly(const std::vector<float>&, const std::vector<Index>&, Index, int,
                                   Index, int) {
    no_cuda();
}
CusparseSpmvResult cusparse_spmv(const HostBsr&, const std::vector<float>&,
                                 const std::vector<float>&, int, int) {
    no_cuda();
}

} // namespace edn::bench
