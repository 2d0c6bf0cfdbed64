// Stand-ins for the CUDA PCG in a build without CUDA: every entry point fails loudly.
#include "core/error.hpp"
#include "cuda/cuda_pcg.hpp"

namespace edn::cuda {

[[noreturn]] static void no_cuda() {
    EDN_THROW(ErrorCode::Unsupported, "elastodyn was built without CUDA (ELASTODYN_CUDA=OFF)");
}

void spmv(const BinBcsrMatrixView<float>&, const float*, float*, void*) {
    no_cuda();
}
void device_synchronize() {
    no_cuda();
}

struct DeviceMatrix::Impl {};
DeviceMatrix::DeviceMatrix(const BinBcsrMatrix<float>&) {
    no_cuda();
}
DeviceMatrix::~DeviceMatrix() = default;
BinBcsrMatrixView<float> DeviceMatrix::view() const {
    no_cuda();
}
std::vector<float> DeviceMatrix::multiply(const std::vector<float>&) const {
    no_cuda();
}

struct UpperMatrix::Impl {};
UpperMatrix::UpperMatrix(void*) {
    no_cuda();
}
UpperMatrix::~UpperMatrix() = default;
void UpperMatrix::update(const BinBcsrMatrixView<float>&) {
    no_cuda();
}
UpperBinBcsrView<float> UpperMatrix::view() const {
    no_cuda();
}
void UpperMatrix::multiply_device(const float*, float*, int) const {
    no_cuda();
}
std::vector<float> UpperMatrix::multiply(const std::vector<float>&, int) const {
    no_cuda();
}
UpperPattern UpperMatrix::download_pattern() const {
    no_cuda();
}
std::vector<float> UpperMatrix::download_values() const {
    no_cuda();
}
std::size_t UpperMatrix::bytes() const {
    no_cuda();
}

struct Pcg::Impl {};
Pcg::Pcg(Index, PcgOptions, void*) {
    no_cuda();
}
Pcg::~Pcg() = default;
PcgResult Pcg::solve(const BinBcsrMatrixView<float>&, const float*, float*, const PcgSettings&,
                     const std::uint8_t*) {
    no_cuda();
}
PcgResult Pcg::solve_two_level(const BinBcsrMatrixView<float>&, const CoarseLevelView&,
                               const float*, float*, const PcgSettings&, const std::uint8_t*) {
    no_cuda();
}
PcgResult Pcg::solve_two_level_host(const BinBcsrMatrixView<float>&, const CoarseLevelView&,
                                    const std::vector<float>&, std::vector<float>&,
                                    const PcgSettings&, const std::vector<std::uint8_t>&) {
    no_cuda();
}
PcgResult Pcg::solve_host(const BinBcsrMatrixView<float>&, const std::vector<float>&,
                          std::vector<float>&, const PcgSettings&,
                          const std::vector<std::uint8_t>&) {
    no_cuda();
}
Index Pcg::num_rows() const {
    no_cuda();
}
const PcgOptions& Pcg::options() const {
    no_cuda();
}
void Pcg::set_options(const PcgOptions&) {
    no_cuda();
}

} // namespace edn::cuda
