// SurfaceInterop: the surface vertex buffer written by kernels from the CUDA backend's node
// positions every frame. Two paths:
//  - external memory (preferred): CUDA allocates the buffer's memory (cuMemCreate, exportable as
//    a file descriptor), GL imports it (GL_EXT_memory_object_fd) as the storage of a buffer of its
//    own; CUDA writes it in place every frame, with a GL fence wait before (the last frame's draws
//    are done) and a stream synchronisation after (the draws see the data). No map/unmap.
//  - registered buffer (fallback): cudaGraphicsGLRegisterBuffer on the renderer's buffer, mapped
//    and unmapped every frame.
// The driver API functions are fetched at run time (cudaGetDriverEntryPointByVersion), so the app
// does not link libcuda and still starts on machines without a driver.
//
// cuda_gl_interop.h includes <GL/gl.h> for GLuint/GLenum; this file uses no other GL and never
// sees GLAD, so the two GL headers never meet in one translation unit.

#include "core/error.hpp"
#include "cuda/cuda_check.cuh"
#include "interop.hpp"
#include "interop_gl.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>
#include <type_traits>
#include <unistd.h>
#include <utility>

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
                              float* __restrict__ face_count, unsigned* __restrict__ peak_bits) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool valid = i < count; // no early return: every lane joins the peak reduction
    float s = 0.0f;
    if (valid) {
        const long long node = mesh_vertex[i];
        const float px = x[3 * node], py = x[3 * node + 1], pz = x[3 * node + 2];
        float* out = vbo + static_cast<long long>(kFloatsPerVertex) * i;
        out[0] = px;
        out[1] = py;
        out[2] = pz;
        out[3] = out[4] = out[5] = 0.0f;
        if (mode == static_cast<int>(InteropScalar::Displacement)) {
            const float dx = px - rest[3 * i], dy = py - rest[3 * i + 1], dz = pz - rest[3 * i + 2];
            s = sqrtf(dx * dx + dy * dy + dz * dz);
            if (!isfinite(s)) s = 0.0f;
        } else if (mode == static_cast<int>(InteropScalar::Host)) {
            s = scalars[i];
        }
        out[6] = s; // Cells: 0, the faces add their cells' values, normalize_kernel averages
        if (mode == static_cast<int>(InteropScalar::Cells)) face_count[i] = 0.0f;
    }
    if (mode == static_cast<int>(InteropScalar::Displacement)) {
        // One atomic per warp: every lane on one address serialised the kernel.
        unsigned bits = __float_as_uint(s);
        for (int o = 16; o > 0; o >>= 1) bits = max(bits, __shfl_down_sync(0xffffffffu, bits, o));
        if ((threadIdx.x & 31) == 0) atomicMax(peak_bits, bits);
    }
}

/// Adds each face's unnormalised normal (twice its area times the unit normal) to its vertices.
/// Cells mode: also adds the face's cell value to its vertices' scalars and counts the faces.
__global__ void face_normal_kernel(const Index* __restrict__ triangles, int num_triangles,
                                   const Index* __restrict__ face_cell,
                                   const float* __restrict__ cell_values, float* __restrict__ vbo,
                                   float* __restrict__ face_count) {
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
    if (cell_values) {
        float value = cell_values[face_cell[f]];
        if (!isfinite(value)) value = 0.0f;
        for (long long v : {a, b, c}) {
            atomicAdd(vbo + kFloatsPerVertex * v + 6, value);
            atomicAdd(face_count + v, 1.0f);
        }
    }
}

/// Unit normals (zero stays zero, as compute_vertex_normals does on the host); with `cells`, the
/// scalar becomes the mean over the vertex's faces and the peak is taken (one atomic per warp).
__global__ void normalize_kernel(int count, float* __restrict__ vbo, bool cells,
                                 const float* __restrict__ face_count,
                                 unsigned* __restrict__ peak_bits) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    float value = 0.0f;
    if (i < count) {
        float* n = vbo + static_cast<long long>(kFloatsPerVertex) * i + 3;
        const float length = sqrtf(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        const float scale = length > 0.0f ? 1.0f / length : 0.0f;
        n[0] *= scale;
        n[1] *= scale;
        n[2] *= scale;
        if (cells) {
            value = face_count[i] > 0.0f ? n[3] / face_count[i] : 0.0f;
            n[3] = value;
        }
    }
    if (cells) {
        unsigned bits = __float_as_uint(value);
        for (int o = 16; o > 0; o >>= 1) bits = max(bits, __shfl_down_sync(0xffffffffu, bits, o));
        if ((threadIdx.x & 31) == 0) atomicMax(peak_bits, bits);
    }
}

/// The curved surface (p >= 2): each render vertex evaluated through the surface map (position,
/// normal from the curved geometry, scalar), one thread per vertex, no atomics but the peak's.
__global__ void curved_kernel(SurfaceMapView map, const float* __restrict__ x,
                              const float* __restrict__ rest, const float* __restrict__ scalars,
                              const float* __restrict__ cell_values, int mode,
                              float* __restrict__ vbo, unsigned* __restrict__ peak_bits) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    if (r < map.num_vertices) { // no early return: every lane joins the peak reduction
        float* out = vbo + static_cast<long long>(kFloatsPerVertex) * r;
        float normal[3];
        surface_map_vertex(map, x, r, out, normal);
        const float length =
            sqrtf(normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]);
        const float scale = length > 0.0f ? 1.0f / length : 0.0f;
        out[3] = normal[0] * scale;
        out[4] = normal[1] * scale;
        out[5] = normal[2] * scale;
        if (mode == static_cast<int>(InteropScalar::Displacement)) {
            const float dx = out[0] - rest[3 * r], dy = out[1] - rest[3 * r + 1],
                        dz = out[2] - rest[3 * r + 2];
            s = sqrtf(dx * dx + dy * dy + dz * dz);
            if (!isfinite(s)) s = 0.0f;
        } else if (mode == static_cast<int>(InteropScalar::Host)) {
            s = scalars[r];
        } else if (mode == static_cast<int>(InteropScalar::Cells)) {
            s = surface_map_cell_mean(map, cell_values, r);
        }
        out[6] = s;
    }
    if (mode == static_cast<int>(InteropScalar::Displacement) ||
        mode == static_cast<int>(InteropScalar::Cells)) {
        unsigned bits = __float_as_uint(s);
        for (int o = 16; o > 0; o >>= 1) bits = max(bits, __shfl_down_sync(0xffffffffu, bits, o));
        if ((threadIdx.x & 31) == 0) atomicMax(peak_bits, bits);
    }
}

/// Copies a host vector into a device buffer of its size (nothing for an empty one).
template <class T> void upload(cuda::DeviceBuffer<T>& device, const std::vector<T>& host) {
    device.resize(host.size());
    if (!host.empty())
        EDN_CUDA_CHECK(
            cudaMemcpy(device.data(), host.data(), device.bytes(), cudaMemcpyHostToDevice));
}

/// The driver API calls of the external-memory path, looked up at run time.
struct DriverApi {
    decltype(&cuMemGetAllocationGranularity) granularity = nullptr;
    decltype(&cuMemCreate) create = nullptr;
    decltype(&cuMemExportToShareableHandle) export_handle = nullptr;
    decltype(&cuMemAddressReserve) reserve = nullptr;
    decltype(&cuMemMap) map = nullptr;
    decltype(&cuMemSetAccess) set_access = nullptr;
    decltype(&cuMemUnmap) unmap = nullptr;
    decltype(&cuMemAddressFree) address_free = nullptr;
    decltype(&cuMemRelease) release = nullptr;

    /// All found?
    bool load() {
        auto get = [](const char* name, auto& fn) {
            void* p = nullptr;
            cudaDriverEntryPointQueryResult status{};
            if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &status) !=
                    cudaSuccess ||
                status != cudaDriverEntryPointSuccess) {
                cudaGetLastError();
                return false;
            }
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
            return true;
        };
        return get("cuMemGetAllocationGranularity", granularity) && get("cuMemCreate", create) &&
               get("cuMemExportToShareableHandle", export_handle) &&
               get("cuMemAddressReserve", reserve) && get("cuMemMap", map) &&
               get("cuMemSetAccess", set_access) && get("cuMemUnmap", unmap) &&
               get("cuMemAddressFree", address_free) && get("cuMemRelease", release);
    }
};

} // namespace

struct SurfaceInterop::Impl {
    // External-memory path (imported.buffer != 0).
    DriverApi driver;
    CUmemGenericAllocationHandle allocation = 0;
    CUdeviceptr address = 0;
    std::size_t allocation_bytes = 0;
    gl_external::ImportedBuffer imported;
    void* draw_fence = nullptr; // GL fence after the last frame's draws (frame_drawn)
    // Registered-buffer path.
    cudaGraphicsResource_t resource = nullptr;
    // EDN_INTEROP_PROFILE=1: per-update split (prepare + launch, kernels, finish, total) printed
    // as medians to stderr when the object goes away (diagnostics).
    bool profile = false;
    std::vector<std::array<double, 4>> samples;
    int vertices = 0;
    int triangles = 0;
    cuda::DeviceBuffer<Index> mesh_vertex;     // #S
    cuda::DeviceBuffer<Index> triangle_index;  // 3 #B
    cuda::DeviceBuffer<float> rest;            // 3 #S
    cuda::DeviceBuffer<float> scalars;         // #S, InteropScalar::Host
    cuda::DeviceBuffer<Index> face_cell;       // #B, InteropScalar::Cells
    cuda::DeviceBuffer<float> face_count;      // #S faces per vertex, InteropScalar::Cells
    cuda::DeviceBuffer<unsigned> peak_bits{1}; // largest scalar of the last update
    // Curved surface (p >= 2): the surface map on the device; `vertices` counts render vertices.
    bool curved = false;
    SurfaceMapView map;                       // device pointers into the buffers below
    cuda::DeviceBuffer<Index> sample_offsets; // #R+1
    cuda::DeviceBuffer<Index> map_samples;    // sample_offsets[#R]
    cuda::DeviceBuffer<Index> face_nodes;     // #B x K
    cuda::DeviceBuffer<float> weights;        // Q x 3 x K
};

bool interop_built() {
    return true;
}

SurfaceInterop::SurfaceInterop(unsigned vbo, const std::vector<Index>& mesh_vertex,
                               const std::vector<Tri>& triangles,
                               const std::vector<Index>& face_cell, const std::vector<Vec3>& rest,
                               const InteropOptions& options)
    : impl_(std::make_unique<Impl>()) {
    EDN_VERIFY(face_cell.size() == triangles.size(), ErrorCode::Internal,
               "CUDA-GL interop: " << face_cell.size() << " face cells for " << triangles.size()
                                   << " surface triangles");
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
    impl_->face_count.resize(mesh_vertex.size());
    impl_->face_cell.resize(face_cell.size());
    if (!face_cell.empty())
        EDN_CUDA_CHECK(cudaMemcpy(impl_->face_cell.data(), face_cell.data(),
                                  impl_->face_cell.bytes(), cudaMemcpyHostToDevice));
    finish_setup(vbo, options);
}

SurfaceInterop::SurfaceInterop(unsigned vbo, const SurfaceMapView& map,
                               const std::vector<float>& rest, const InteropOptions& options)
    : impl_(std::make_unique<Impl>()) {
    EDN_VERIFY(rest.size() == 3 * static_cast<std::size_t>(map.num_vertices), ErrorCode::Internal,
               "CUDA-GL interop: " << rest.size() / 3 << " rest positions for " << map.num_vertices
                                   << " render vertices");
    Impl& s = *impl_;
    s.curved = true;
    s.vertices = map.num_vertices;
    const auto copy = [](auto& device, const auto* host, std::size_t count) {
        using T = std::remove_cv_t<std::remove_pointer_t<decltype(host)>>;
        upload(device, std::vector<T>(host, host + count));
    };
    const std::size_t num_samples = static_cast<std::size_t>(map.sample_offsets[map.num_vertices]);
    const std::size_t k_count = static_cast<std::size_t>(map.nodes_per_face);
    copy(s.sample_offsets, map.sample_offsets, static_cast<std::size_t>(map.num_vertices) + 1);
    copy(s.map_samples, map.samples, num_samples);
    copy(s.face_nodes, map.face_nodes, static_cast<std::size_t>(map.num_faces) * k_count);
    copy(s.face_cell, map.face_cell, static_cast<std::size_t>(map.num_faces));
    copy(s.weights, map.weights, static_cast<std::size_t>(map.pattern_points) * 3 * k_count);
    upload(s.rest, rest);
    s.scalars.resize(static_cast<std::size_t>(map.num_vertices));
    s.map = map;
    s.map.sample_offsets = s.sample_offsets.data();
    s.map.samples = s.map_samples.data();
    s.map.face_nodes = s.face_nodes.data();
    s.map.face_cell = s.face_cell.data();
    s.map.weights = s.weights.data();
    finish_setup(vbo, options);
}

void SurfaceInterop::finish_setup(unsigned vbo, const InteropOptions& options) {
    impl_->profile = options.profile;
    if (impl_->vertices > 0 && !options.force_mapped && try_external_memory()) return;
    // Every float of the buffer is rewritten each frame, so the old contents may be discarded.
    EDN_CUDA_CHECK(
        cudaGraphicsGLRegisterBuffer(&impl_->resource, vbo, cudaGraphicsRegisterFlagsWriteDiscard));
}

bool SurfaceInterop::try_external_memory() {
    Impl& s = *impl_;
    if (!gl_external::supported() || !s.driver.load()) return false;
    int device = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&device));
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    std::size_t granularity = 0;
    if (s.driver.granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) !=
            CUDA_SUCCESS ||
        granularity == 0)
        return false;
    const std::size_t bytes =
        static_cast<std::size_t>(s.vertices) * kFloatsPerVertex * sizeof(float);
    s.allocation_bytes = (bytes + granularity - 1) / granularity * granularity;
    if (s.driver.create(&s.allocation, s.allocation_bytes, &prop, 0) != CUDA_SUCCESS) return false;
    bool ok = false;
    int fd = -1;
    if (s.driver.export_handle(&fd, s.allocation, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0) ==
            CUDA_SUCCESS &&
        s.driver.reserve(&s.address, s.allocation_bytes, 0, 0, 0) == CUDA_SUCCESS) {
        CUmemAccessDesc access{};
        access.location = prop.location;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        ok = s.driver.map(s.address, s.allocation_bytes, 0, s.allocation, 0) == CUDA_SUCCESS &&
             s.driver.set_access(s.address, s.allocation_bytes, &access, 1) == CUDA_SUCCESS;
        if (ok) {
            s.imported = gl_external::import_buffer(fd, s.allocation_bytes, bytes);
            ok = s.imported.buffer != 0;
            if (ok) fd = -1; // GL owns it now
        }
    }
    if (fd >= 0) close(fd);
    if (!ok) release_external_memory();
    return ok;
}

void SurfaceInterop::release_external_memory() noexcept {
    Impl& s = *impl_;
    if (s.draw_fence) {
        gl_external::wait_and_delete_fence(s.draw_fence);
        s.draw_fence = nullptr;
    }
    if (s.imported.buffer || s.imported.memory) gl_external::release(s.imported);
    s.imported = {};
    if (s.address) {
        s.driver.unmap(s.address, s.allocation_bytes);
        s.driver.address_free(s.address, s.allocation_bytes);
        s.address = 0;
    }
    if (s.allocation) {
        s.driver.release(s.allocation);
        s.allocation = 0;
    }
}

unsigned SurfaceInterop::external_buffer() const {
    return impl_->imported.buffer;
}

void SurfaceInterop::frame_drawn() {
    Impl& s = *impl_;
    if (!s.imported.buffer) return; // the mapped path synchronises in cudaGraphicsMapResources
    if (s.draw_fence) gl_external::wait_and_delete_fence(s.draw_fence); // two draws, no update
    s.draw_fence = gl_external::insert_fence();
}

SurfaceInterop::~SurfaceInterop() {
    // No throwing from a destructor; a failure here only leaks the registration.
    if (!impl_) return;
    if (impl_->profile && !impl_->samples.empty()) {
        std::array<double, 4> median{};
        for (int k = 0; k < 4; ++k) {
            std::vector<double> v;
            for (const auto& sample : impl_->samples) v.push_back(sample[k]);
            std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
            median[k] = v[v.size() / 2];
        }
        std::fprintf(stderr,
                     "interop profile (%s, %zu updates, median ms): prepare+launch %.3f, "
                     "kernels %.3f, finish %.3f, total %.3f\n",
                     impl_->imported.buffer ? "external memory" : "mapped buffer",
                     impl_->samples.size(), median[0], median[1], median[2], median[3]);
    }
    if (impl_->address) {
        cudaDeviceSynchronize(); // no kernel may still write the memory
        release_external_memory();
    }
    if (impl_->resource) cudaGraphicsUnregisterResource(impl_->resource);
}

float SurfaceInterop::update(const float* device_positions, InteropScalar scalar,
                             const std::vector<float>& host_scalars,
                             const float* device_cell_values) {
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
    const bool cells = scalar == InteropScalar::Cells;
    EDN_VERIFY(!cells || device_cell_values != nullptr, ErrorCode::Internal,
               "CUDA-GL interop: no device cell values for the cell colour map");
    if (scalar == InteropScalar::Displacement || cells)
        EDN_CUDA_CHECK(cudaMemsetAsync(s.peak_bits.data(), 0, sizeof(unsigned)));

    using clock = std::chrono::steady_clock;
    const bool profile = s.profile;
    const auto t0 = clock::now();
    float* vbo = nullptr;
    cudaError_t status = cudaSuccess;
    const bool external = s.imported.buffer != 0;
    if (external) {
        // GL's last reads of the buffer (the previous frame's draws) must be done: the fence set
        // after them by frame_drawn(), else a fence now.
        if (s.draw_fence) {
            gl_external::wait_and_delete_fence(s.draw_fence);
            s.draw_fence = nullptr;
        } else {
            gl_external::wait_for_gl();
        }
        vbo = reinterpret_cast<float*>(s.address);
    } else {
        // The map orders the kernels after GL's earlier use of the buffer (last frame's draw).
        EDN_CUDA_CHECK(cudaGraphicsMapResources(1, &s.resource, 0));
        std::size_t mapped_bytes = 0;
        status = cudaGraphicsResourceGetMappedPointer(reinterpret_cast<void**>(&vbo), &mapped_bytes,
                                                      s.resource);
        if (status == cudaSuccess && mapped_bytes < static_cast<std::size_t>(s.vertices) *
                                                        kFloatsPerVertex * sizeof(float)) {
            cudaGraphicsUnmapResources(1, &s.resource, 0);
            EDN_THROW(ErrorCode::Internal, "CUDA-GL interop: the mapped vertex buffer has "
                                               << mapped_bytes << " bytes for " << s.vertices
                                               << " vertices");
        }
    }
    if (status == cudaSuccess && s.vertices > 0 && s.curved) {
        curved_kernel<<<blocks_for(s.vertices), kBlock>>>(
            s.map, device_positions, s.rest.data(), s.scalars.data(),
            cells ? device_cell_values : nullptr, static_cast<int>(scalar), vbo,
            s.peak_bits.data());
        status = cudaGetLastError();
    } else if (status == cudaSuccess && s.vertices > 0) {
        gather_kernel<<<blocks_for(s.vertices), kBlock>>>(
            device_positions, s.mesh_vertex.data(), s.rest.data(), s.scalars.data(),
            static_cast<int>(scalar), s.vertices, vbo, s.face_count.data(), s.peak_bits.data());
        status = cudaGetLastError();
        if (status == cudaSuccess && s.triangles > 0) {
            face_normal_kernel<<<blocks_for(s.triangles), kBlock>>>(
                s.triangle_index.data(), s.triangles, s.face_cell.data(),
                cells ? device_cell_values : nullptr, vbo, s.face_count.data());
            status = cudaGetLastError();
        }
        if (status == cudaSuccess) {
            normalize_kernel<<<blocks_for(s.vertices), kBlock>>>(
                s.vertices, vbo, cells, s.face_count.data(), s.peak_bits.data());
            status = cudaGetLastError();
        }
    }
    auto t1 = t0, t2 = t0;
    if (profile) {
        // (Diagnostics only) wait for the kernels, to split the stage's time.
        t1 = clock::now();
        cudaStreamSynchronize(0);
        t2 = clock::now();
    }
    // Unmap even after a failure, so GL can use the buffer again.
    const cudaError_t unmap =
        external ? cudaSuccess : cudaGraphicsUnmapResources(1, &s.resource, 0);
    EDN_CUDA_CHECK(status);
    EDN_CUDA_CHECK(unmap);

    float peak = 0.0f;
    if (scalar == InteropScalar::Displacement || cells) {
        unsigned bits = 0;
        EDN_CUDA_CHECK(
            cudaMemcpy(&bits, s.peak_bits.data(), sizeof(unsigned), cudaMemcpyDeviceToHost));
        std::memcpy(&peak, &bits, sizeof(float));
    } else {
        // The surface stage's timing covers the kernels, not only their launch; on the external
        // path this is also what makes the data visible to the GL draws issued next.
        EDN_CUDA_CHECK(cudaStreamSynchronize(0));
    }
    if (scalar == InteropScalar::Host) {
        for (float value : host_scalars) peak = std::max(peak, value);
    }
    if (profile) {
        const auto t3 = clock::now();
        const auto ms = [](auto a, auto b) {
            return std::chrono::duration<double, std::milli>(b - a).count();
        };
        s.samples.push_back({ms(t0, t1), ms(t1, t2), ms(t2, t3), ms(t0, t3)});
    }
    return peak;
}

DeviceFloats::~DeviceFloats() {
    release();
}

DeviceFloats::DeviceFloats(DeviceFloats&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

DeviceFloats& DeviceFloats::operator=(DeviceFloats&& other) noexcept {
    if (this != &other) {
        release();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
        capacity_ = std::exchange(other.capacity_, 0);
    }
    return *this;
}

void DeviceFloats::copy_from(const float* source, std::size_t count) {
    if (count > capacity_) {
        release();
        EDN_CUDA_CHECK(cudaMalloc(&data_, count * sizeof(float)));
        capacity_ = count;
    }
    size_ = count;
    if (count == 0) return;
    // The calling thread's stream (--default-stream=per-thread): ordered after the step's
    // kernels that wrote `source`, and done at that thread's finish_device_work.
    EDN_CUDA_CHECK(cudaMemcpyAsync(data_, source, count * sizeof(float), cudaMemcpyDeviceToDevice,
                                   cudaStreamPerThread));
}

void DeviceFloats::release() noexcept {
    if (data_) cudaFree(data_); // synchronises: no copy into it is still running
    data_ = nullptr;
    size_ = capacity_ = 0;
}

void SurfaceInterop::download(const float* device, std::size_t count, float* host) {
    EDN_CUDA_CHECK(cudaMemcpy(host, device, count * sizeof(float), cudaMemcpyDeviceToHost));
}

} // namespace edn
