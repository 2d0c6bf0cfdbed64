// The CUDA backend in a build without CUDA: the device queries answer "none" and every entry
// point throws edn::Error(ErrorCode::Unsupported). The classes' members throw from their
// declarations (cuda/cuda_only.hpp); only the factory and the free functions are here.
#include "core/device.hpp"
#include "core/error.hpp"
#include "cuda/cuda_only.hpp"
#include "cuda/cuda_pcg.hpp"
#include "sim/simulation_backend.hpp"
#include "sparse/spmv.hpp"
#include "sparse/summation.hpp"

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

std::unique_ptr<SimulationBackend> make_cuda_backend(TetMesh, const SimulationSettings&) {
    cuda::throw_no_cuda();
}

namespace cuda {

void throw_no_cuda() {
    EDN_THROW(ErrorCode::Unsupported, "elastodyn was built without CUDA (ELASTODYN_CUDA=OFF)");
}

void device_synchronize() {
    throw_no_cuda();
}
SpmvKernel choose_spmv_kernel(Index, Index) {
    throw_no_cuda();
}
void spmv(const BinBcsrMatrixView<float>&, const float*, float*, SpmvKernel, void*) {
    throw_no_cuda();
}
void spmv(const BinBcsrMatrixView<float>&, const float*, float*, void*) {
    throw_no_cuda();
}
void spmv_upper(const UpperBinBcsrView<float>&, const float*, float*, int, void*) {
    throw_no_cuda();
}
void linear_elastic_element_blocks(const Cell*, const float*, Index, int,
                                   const LameParameters<float>&, float*) {
    throw_no_cuda();
}
void sum_per_entry(const PerEntryMapView&, const float*, BinBcsrMatrixView<float>) {
    throw_no_cuda();
}
void sum_per_entry_linear(const PerEntryMapView&, const Cell*, const float*, const float*, int,
                          const LameParameters<float>&, BinBcsrMatrixView<float>) {
    throw_no_cuda();
}
void sum_per_simplex(const NodeCellsView&, const CellNodesView&, const float*,
                     BinBcsrMatrixView<float>, Index, unsigned int*) {
    throw_no_cuda();
}
void sum_inline_linear_p1(const NodeCellsView&, const Cell*, const float*,
                          const LameParameters<float>&, BinBcsrMatrixView<float>, Index,
                          unsigned int*) {
    throw_no_cuda();
}

} // namespace cuda
} // namespace edn
