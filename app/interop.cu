// SurfaceInterop: the surface vertex buffer registered with CUDA once per topology, mapped and
// written by kernels from the CUDA backend's node positions every frame, then unmapped.
//
// cuda_gl_interop.h includes <GL/gl.h> for GLuint/GLenum; this file uses no other GL and never
// sees GLAD, so the two GL headers never meet in one translation unit.

#include "core/error.hpp"
#include "cuda/cuda_check.cuh"
#include "interop.hpp"

#include <algorithm>
#include <cstring>
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

namespace edn {
namespace {

/// Surface vertex layout, as in renderer.cpp: position (3), normal (3), colour scalar (1).
constexpr int kFloatsPerVertex = 7;
constexpr int kBlock = 256;

int blocks_for(int count) {
    return (count + kBlock - 1) / kBlock;
}

/// Positions of the surface vertices from the node positions, normals cleared, scalar written.
/// Non-negative floats order like their bit patterns, so the peak is an unsigned atomicMax.
__global__ void gather_kernel(const float* __restrict__ x, const Index* __restrict__ mesh_vertex,
                              const float* __restrict__ rest, const float* __restrict__ scalars,
                              int mode, int count, float* __restrict__ vbo,
                              unsigned* __restrict__ peak_bits) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    const long long node = mesh_vertex[i];
    const float px = x[3 * node], py = x[3 * node + 1], pz = x[3 * node + 2];
    float* out = vbo + static_cast<long long>(kFloatsPerVertex) * i;
    out[0] = px;
    out[1] = py;
    out[2] = pz;
    out[3] = out[4] = out[5] = 0.0f;
    float s = 0.0f;
    if (mode == static_cast<int>(InteropScalar::Displacement)) {
        const float dx = px - rest[3 * i], dy = py - rest[3 * i + 1], dz = pz - rest[3 * i + 2];
        s = sqrtf(dx * dx + dy * dy + dz * dz);
        if (!isfinite(s)) s = 0.0f;
        atomicMax(peak_bits, __float_as_uint(s));
    } else if (mode == static_cast<int>(InteropScalar::Host)) {
        s = scalars[i];
    }
    out[6] = s;
}

/// Adds each face's unnormalised normal (twice its area times the unit normal) to its vertices.
__global__ void face_normal_kernel(const Index* __restrict__ triangles, int num_triangles,
                                   float* __restrict__ vbo) {
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= num_triangles) return;
    const long long a = triangles[3 * f], b = triangles[3 * f + 1], c = triangles[3 * f + 2];
    const float* pa = vbo + kFloatsPerVertex * a;
    const float* pb = vbo + kFloatsPerVertex * b;
    const float* pc = vbo + kFloatsPerVertex * c;
    const float ux = pb[0] - pa[0], uy = pb[1] - pa[1], uz = pb[2] - pa[2];
    const float vx = pc[0] - pa[0], vy = pc[1] - pa[1], vz = pc[2] - pa[2];
    const float nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
    for (long long v : {a, b, c}) {
        float* n = vbo + kFloatsPerVertex * v + 3;
        atomicAdd(n, nx);
        atomicAdd(n + 1, ny);
        atomicAdd(n + 2, nz);
    }
}

/// Unit normals (zero stays zero, as compute_vertex_normals does on the host).
__global__ void normalize_kernel(int count, float* __restrict__ vbo) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    float* n = vbo + static_cast<long long>(kFloatsPerVertex) * i + 3;
    const float length = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    const float scale = length > 0.0f ? 1.0f / length : 0.0f;
    n[0] *= scale;
    n[1] *= scale;
    n[2] *= scale;
}

} // namespace

struct SurfaceInterop::Impl {
    cudaGraphicsResource_t resource = nullptr;
    int vertices = 0;
    int triangles = 0;
    cuda::DeviceBuffer<Index> mesh_vertex;     // #S
    cuda::DeviceBuffer<Index> triangle_index;  // 3 #B
    cuda::DeviceBuffer<float> rest;            // 3 #S
    cuda::DeviceBuffer<float> scalars;         // #S, InteropScalar::Host
    cuda::DeviceBuffer<unsigned> peak_bits{1}; // largest scalar of the last update
};

bool interop_built() {
    return true;
}

SurfaceInterop::SurfaceInterop(unsigned vbo, const std::vector<Index>& mesh_vertex,
                               const std::vector<Tri>& triangles, const std::vector<Vec3>& rest)
    : impl_(std::make_unique<Impl>()) {
    EDN_VERIFY(rest.size() == mesh_vertex.size(), ErrorCode::Internal,
               "CUDA-GL interop: " << rest.size() << " rest positions for " << mesh_vertex.size()
                                   << " surface vertices");
    impl_->vertices = static_cast<int>(mesh_vertex.size());
    impl_->triangles = static_cast<int>(triangles.size());
    // Topology and rest positions go to the device once; only positions change per frame.
    impl_->mesh_vertex.resize(mesh_vertex.size());
    EDN_CUDA_CHECK(cudaMemcpy(impl_->mesh_vertex.data(), mesh_vertex.data(),
                              impl_->mesh_vertex.bytes(), cudaMemcpyHostToDevice));
    std::vector<Index> flat;
    flat.reserve(3 * triangles.size());
    for (const Tri& tri : triangles) flat.insert(flat.end(), tri.begin(), tri.end());
    impl_->triangle_index.resize(flat.size());
    EDN_CUDA_CHECK(cudaMemcpy(impl_->triangle_index.data(), flat.data(),
                              impl_->triangle_index.bytes(), cudaMemcpyHostToDevice));
    std::vector<float> rest_float;
    rest_float.reserve(3 * rest.size());
    for (const Vec3& p : rest) {
        for (double c : p) rest_float.push_back(static_cast<float>(c));
    }
    impl_->rest.resize(rest_float.size());
    EDN_CUDA_CHECK(cudaMemcpy(impl_->rest.data(), rest_float.data(), impl_->rest.bytes(),
                              cudaMemcpyHostToDevice));
    impl_->scalars.resize(mesh_vertex.size());
    // Every float of the buffer is rewritten each frame, so the old contents may be discarded.
    EDN_CUDA_CHECK(
        cudaGraphicsGLRegisterBuffer(&impl_->resource, vbo, cudaGraphicsRegisterFlagsWriteDiscard));
}

SurfaceInterop::~SurfaceInterop() {
    // No throwing from a destructor; a failure here only leaks the registration.
    if (impl_ && impl_->resource) cudaGraphicsUnregisterResource(impl_->resource);
}

float SurfaceInterop::update(const float* device_positions, InteropScalar scalar,
                             const std::vector<float>& host_scalars) {
    Impl& s = *impl_;
    EDN_VERIFY(device_positions != nullptr, ErrorCode::Internal,
               "CUDA-GL interop: no device positions (not the CUDA backend)");
    if (scalar == InteropScalar::Host) {
        EDN_VERIFY(host_scalars.size() == static_cast<std::size_t>(s.vertices), ErrorCode::Internal,
                   "CUDA-GL interop: " << host_scalars.size() << " scalars for " << s.vertices
                                       << " surface vertices");
        EDN_CUDA_CHECK(cudaMemcpy(s.scalars.data(), host_scalars.data(), s.scalars.bytes(),
                                  cudaMemcpyHostToDevice));
    }
    if (scalar == InteropScalar::Displacement)
        EDN_CUDA_CHECK(cudaMemsetAsync(s.peak_bits.data(), 0, sizeof(unsigned)));

    // The map orders the kernels after GL's earlier use of the buffer (last frame's draw).
    EDN_CUDA_CHECK(cudaGraphicsMapResources(1, &s.resource, 0));
    float* vbo = nullptr;
    std::size_t mapped_bytes = 0;
    cudaError_t status = cudaGraphicsResourceGetMappedPointer(reinterpret_cast<void**>(&vbo),
                                                              &mapped_bytes, s.resource);
    if (status == cudaSuccess &&
        mapped_bytes < static_cast<std::size_t>(s.vertices) * kFloatsPerVertex * sizeof(float)) {
        cudaGraphicsUnmapResources(1, &s.resource, 0);
        EDN_THROW(ErrorCode::Internal, "CUDA-GL interop: the mapped vertex buffer has "
                                           << mapped_bytes << " bytes for " << s.vertices
                                           << " vertices");
    }
    if (status == cudaSuccess && s.vertices > 0) {
        gather_kernel<<<blocks_for(s.vertices), kBlock>>>(
            device_positions, s.mesh_vertex.data(), s.rest.data(), s.scalars.data(),
            static_cast<int>(scalar), s.vertices, vbo, s.peak_bits.data());
        status = cudaGetLastError();
        if (status == cudaSuccess && s.triangles > 0) {
            face_normal_kernel<<<blocks_for(s.triangles), kBlock>>>(s.triangle_index.data(),
                                                                    s.triangles, vbo);
            status = cudaGetLastError();
        }
        if (status == cudaSuccess) {
            normalize_kernel<<<blocks_for(s.vertices), kBlock>>>(s.vertices, vbo);
            status = cudaGetLastError();
        }
    }
    // Unmap even after a failure, so GL can use the buffer again.
    const cudaError_t unmap = cudaGraphicsUnmapResources(1, &s.resource, 0);
    EDN_CUDA_CHECK(status);
    EDN_CUDA_CHECK(unmap);

    float peak = 0.0f;
    if (scalar == InteropScalar::Displacement) {
        unsigned bits = 0;
        EDN_CUDA_CHECK(
            cudaMemcpy(&bits, s.peak_bits.data(), sizeof(unsigned), cudaMemcpyDeviceToHost));
        std::memcpy(&peak, &bits, sizeof(float));
    } else {
        // The surface stage's timing covers the kernels, not only their launch.
        EDN_CUDA_CHECK(cudaStreamSynchronize(0));
    }
    if (scalar == InteropScalar::Host) {
        for (float value : host_scalars) peak = std::max(peak, value);
    }
    return peak;
}

void SurfaceInterop::download(const float* device, std::size_t count, float* host) {
    EDN_CUDA_CHECK(cudaMemcpy(host, device, count * sizeof(float), cudaMemcpyDeviceToHost));
}

} // namespace edn
