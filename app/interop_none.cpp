// SurfaceInterop in a build without CUDA: never usable; the app uploads with glBufferSubData.

#include "core/error.hpp"
#include "interop.hpp"

namespace edn {

struct SurfaceInterop::Impl {};

bool interop_built() {
    return false;
}

SurfaceInterop::SurfaceInterop(unsigned, const std::vector<Index>&, const std::vector<Tri>&,
                               const std::vector<Index>&, const std::vector<Vec3>&,
                               const InteropOptions&) {
    EDN_THROW(ErrorCode::Unsupported, "CUDA-GL interop: this elastodyn was built without CUDA");
}

SurfaceInterop::SurfaceInterop(unsigned, const SurfaceMapView&, const std::vector<float>&,
                               const InteropOptions&) {
    EDN_THROW(ErrorCode::Unsupported, "CUDA-GL interop: this elastodyn was built without CUDA");
}

SurfaceInterop::~SurfaceInterop() = default;

float SurfaceInterop::update(const float*, InteropScalar, const std::vector<float>&, const float*) {
    EDN_THROW(ErrorCode::Unsupported, "CUDA-GL interop: this elastodyn was built without CUDA");
}

unsigned SurfaceInterop::external_buffer() const {
    return 0;
}

void SurfaceInterop::frame_drawn() {}

void SurfaceInterop::download(const float*, std::size_t, float*) {
    EDN_THROW(ErrorCode::Unsupported, "CUDA-GL interop: this elastodyn was built without CUDA");
}

DeviceFloats::~DeviceFloats() = default;

DeviceFloats::DeviceFloats(DeviceFloats&&) noexcept = default;

DeviceFloats& DeviceFloats::operator=(DeviceFloats&&) noexcept = default;

void DeviceFloats::copy_from(const float*, std::size_t) {
    EDN_THROW(ErrorCode::Unsupported, "device snapshot: this elastodyn was built without CUDA");
}

void DeviceFloats::release() noexcept {}

} // namespace edn
