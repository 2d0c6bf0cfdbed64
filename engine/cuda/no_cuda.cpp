// Stand-ins for the CUDA backend in a build without CUDA: every entry point fails loudly.
#include "core/device.hpp"
#include "core/error.hpp"
#include "cuda/cuda_assembly.hpp"
#include "cuda/cuda_topology.hpp"
#include "cuda/cuda_two_level.hpp"
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

namespace cuda {

std::vector<Index> vertex_cell_counts(std::span<const Cell>, Index) {
    EDN_THROW(ErrorCode::Unsupported, "elastodyn was built without CUDA (ELASTODYN_CUDA=OFF)");
}

[[noreturn]] static void no_cuda() {
    EDN_THROW(ErrorCode::Unsupported, "elastodyn was built without CUDA (ELASTODYN_CUDA=OFF)");
}

struct CoarseLevel::Impl {};
CoarseLevel::CoarseLevel(const TetMesh&, const Topology&, const NodeLayout&, const Assembly*) {
    no_cuda();
}
CoarseLevel::~CoarseLevel() = default;
void CoarseLevel::assemble(const float*, const float*, float) {
    no_cuda();
}
void CoarseLevel::assemble_host(const std::vector<float>&, const std::vector<float>&, float) {
    no_cuda();
}
CoarseLevelView CoarseLevel::view(double, int) const {
    no_cuda();
}
const CoarseSpace& CoarseLevel::space() const {
    no_cuda();
}
BinBcsrMatrix<float> CoarseLevel::download_matrix() const {
    no_cuda();
}

struct Assembly::Impl {};
Assembly::Assembly(const TetMesh&, const Topology&, int) {
    no_cuda();
}
Assembly::Assembly(const Assembly&, const TetMesh&, int) {
    no_cuda();
}
Assembly::Assembly(const TetMesh&, int) {
    no_cuda();
}
Assembly::~Assembly() = default;
Topology Assembly::download_topology() const {
    no_cuda();
}
void Assembly::build_pattern() {
    no_cuda();
}
void Assembly::build_per_entry_map() {
    no_cuda();
}
void Assembly::set_reproducible_maps(bool) {
    no_cuda();
}
void Assembly::compute_element_blocks(const LameParameters<float>&) {
    no_cuda();
}
void Assembly::sum(SummationMethod, const LameParameters<float>&) {
    no_cuda();
}
void Assembly::spmv_device(const float*, float*) const {
    no_cuda();
}
std::vector<float> Assembly::spmv(const std::vector<float>&) const {
    no_cuda();
}
BinBcsrMatrixView<float> Assembly::device_matrix() const {
    no_cuda();
}
BinBcsrPattern Assembly::download_pattern() const {
    no_cuda();
}
BinBcsrMatrix<float> Assembly::download_matrix(const BinBcsrPattern&) const {
    no_cuda();
}
PerEntryMap Assembly::download_per_entry_map() const {
    no_cuda();
}
const AssemblyTimes& Assembly::times() const {
    no_cuda();
}
std::size_t Assembly::matrix_bytes() const {
    no_cuda();
}
std::size_t Assembly::map_bytes() const {
    no_cuda();
}
std::int64_t Assembly::nnz_blocks() const {
    no_cuda();
}
std::size_t Assembly::element_bytes() const {
    no_cuda();
}
std::size_t Assembly::mesh_bytes() const {
    no_cuda();
}
std::size_t Assembly::peak_bytes() const {
    no_cuda();
}
Index Assembly::num_rows() const {
    no_cuda();
}

} // namespace cuda
} // namespace edn

namespace edn {

std::unique_ptr<SimulationBackend> make_cuda_backend(TetMesh, const SimulationSettings&) {
    EDN_THROW(ErrorCode::Unsupported, "elastodyn was built without CUDA (ELASTODYN_CUDA=OFF)");
}

} // namespace edn
