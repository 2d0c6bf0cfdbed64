// Coarse level of the two-level preconditioner on the device (cuda/cuda_two_level.hpp).
#include "cuda/cuda_assembly.hpp"
#include "cuda/cuda_check.cuh"
#include "cuda/cuda_two_level.hpp"
#include "mesh/node_layout.hpp"

#include <vector>

namespace edn::cuda {
namespace {

constexpr int kBlock = 256;
constexpr int kMaxPerVertex = 10; // local nodes with a nonzero weight on a vertex (p = 3)

/// Per local vertex A of a cell: the local nodes a with local[a][A] != 0 and those weights.
struct LocalLists {
    int count[4];
    int node[4][kMaxPerVertex];
    float weight[4][kMaxPerVertex];
};

/// One thread per (cell, A, B): coarse block (A, B) = sum_{a, b} w_aA w_bB H_ab.
__global__ void coarse_blocks_kernel(const float* __restrict__ fine, Index cells, int m,
                                     LocalLists lists, float* __restrict__ out) {
    const std::int64_t id = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (id >= 16 * static_cast<std::int64_t>(cells)) return;
    const std::int64_t t = id / 16;
    const int A = static_cast<int>(id % 16) / 4, B = static_cast<int>(id % 4);
    const float* h = fine + t * m * m * 9;
    float acc[9] = {};
    for (int i = 0; i < lists.count[A]; ++i) {
        const int a = lists.node[A][i];
        const float wa = lists.weight[A][i];
        for (int j = 0; j < lists.count[B]; ++j) {
            const float w = wa * lists.weight[B][j];
            const float* blk = h + (a * m + lists.node[B][j]) * 9;
            for (int k = 0; k < 9; ++k) acc[k] += w * __ldg(blk + k);
        }
    }
    float* o = out + id * 9;
    for (int k = 0; k < 9; ++k) o[k] = acc[k];
}

/// diag(v) += scale * sum_k w_k mass[i_k] (row sums of P^T diag(scale mass) P).
__global__ void restricted_diagonal_kernel(const Index* offsets, const Index* indices,
                                           const float* weight, const float* mass, float scale,
                                           Index vertices, float* diag) {
    const Index v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= vertices) return;
    float add = 0.f;
    for (Index k = offsets[v]; k < offsets[v + 1]; ++k) add += weight[k] * mass[indices[k]];
    add *= scale;
    const std::int64_t n = vertices;
    diag[v] += add, diag[4 * n + v] += add, diag[8 * n + v] += add;
}

template <class T> void upload(DeviceBuffer<T>& dst, const std::vector<T>& src) {
    dst.resize(src.size());
    if (!src.empty())
        EDN_CUDA_CHECK(cudaMemcpy(dst.data(), src.data(), dst.bytes(), cudaMemcpyHostToDevice));
}

std::vector<float> to_float(const std::vector<double>& v) {
    return std::vector<float>(v.begin(), v.end());
}

} // namespace

struct CoarseLevel::Impl {
    CoarseSpace space;
    std::unique_ptr<Assembly> p1; // P1 pattern, per-entry map and matrix of the same mesh
    DeviceBuffer<Index> pro_vertex, restriction_offsets, restriction_indices;
    DeviceBuffer<float> pro_weight, restriction_weight;
    LocalLists lists{};
    Index cells = 0;
    int m = 4;
};

CoarseLevel::CoarseLevel(const TetMesh& mesh, const Topology& topology, const NodeLayout& layout,
                         const Assembly* fine)
    : impl_(std::make_unique<Impl>()) {
    Impl& d = *impl_;
    d.space = make_coarse_space(mesh, topology, layout, /*host_plans=*/false);
    d.cells = mesh.num_cells();
    d.m = nodes_per_cell(layout.order);
    for (int A = 0; A < 4; ++A) {
        d.lists.count[A] = 0;
        for (int a = 0; a < d.m; ++a) {
            const double w = d.space.local[4 * a + A];
            if (w == 0) continue;
            EDN_ASSERT(d.lists.count[A] < kMaxPerVertex, "too many nodes on a vertex");
            d.lists.node[A][d.lists.count[A]] = a;
            d.lists.weight[A][d.lists.count[A]] = static_cast<float>(w);
            ++d.lists.count[A];
        }
    }
    upload(d.pro_vertex, d.space.pro_vertex);
    upload(d.pro_weight, to_float(d.space.pro_weight));
    upload(d.restriction_offsets, d.space.restriction.offsets);
    upload(d.restriction_indices, d.space.restriction.indices);
    upload(d.restriction_weight, to_float(d.space.restriction_weight));
    d.p1 = fine ? std::make_unique<Assembly>(*fine, mesh, 1)
                : std::make_unique<Assembly>(mesh, topology, 1);
    d.p1->build_pattern();
    d.p1->build_per_entry_map();
    d.space.pattern = d.p1->download_pattern(); // the host copy (download_matrix, tests)
    d.p1->device_element_blocks();              // allocated once
}

CoarseLevel::~CoarseLevel() = default;

void CoarseLevel::assemble(const float* fine_blocks, const float* node_mass, float scale) {
    Impl& d = *impl_;
    if (d.cells > 0) {
        const std::int64_t threads = 16 * static_cast<std::int64_t>(d.cells);
        coarse_blocks_kernel<<<static_cast<unsigned int>((threads + kBlock - 1) / kBlock),
                               kBlock>>>(fine_blocks, d.cells, d.m, d.lists,
                                         d.p1->device_element_blocks());
        EDN_CUDA_CHECK_LAUNCH();
    }
    d.p1->sum(SummationMethod::PerEntry, {0.f, 0.f}); // the blocks as written
    const Index nv = d.space.num_vertices;
    if (nv > 0 && node_mass != nullptr) {
        restricted_diagonal_kernel<<<(nv + kBlock - 1) / kBlock, kBlock>>>(
            d.restriction_offsets.data(), d.restriction_indices.data(), d.restriction_weight.data(),
            node_mass, scale, nv, d.p1->device_matrix().diag);
        EDN_CUDA_CHECK_LAUNCH();
    }
}

void CoarseLevel::assemble_host(const std::vector<float>& fine_blocks,
                                const std::vector<float>& node_mass, float scale) {
    DeviceBuffer<float> blocks, mass;
    upload(blocks, fine_blocks);
    upload(mass, node_mass);
    assemble(blocks.data(), node_mass.empty() ? nullptr : mass.data(), scale);
    EDN_CUDA_CHECK(cudaDeviceSynchronize());
}

CoarseLevelView CoarseLevel::view(double inner_tolerance, int inner_iterations) const {
    const Impl& d = *impl_;
    CoarseLevelView v;
    v.matrix = d.p1->device_matrix();
    v.pro_vertex = d.pro_vertex.data();
    v.pro_weight = d.pro_weight.data();
    v.restriction_offsets = d.restriction_offsets.data();
    v.restriction_indices = d.restriction_indices.data();
    v.restriction_weight = d.restriction_weight.data();
    v.inner_tolerance = inner_tolerance;
    v.inner_iterations = inner_iterations;
    return v;
}

const CoarseSpace& CoarseLevel::space() const {
    return impl_->space;
}

BinBcsrMatrix<float> CoarseLevel::download_matrix() const {
    return impl_->p1->download_matrix(impl_->space.pattern);
}

} // namespace edn::cuda
