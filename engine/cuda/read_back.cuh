#pragma once
// Small read-backs of the device builds (sizes before exact allocations) through pinned memory:
// a pageable cudaMemcpy stages each one through a driver buffer, and the multigrid build reads
// back some 40 sizes (cuda/multigrid_build.cu, cuda/pattern.cu).
#include "cuda/cuda_check.cuh"

#include <cstring>

namespace edn::cuda {

namespace detail {
// A thread's pinned host scratch of kPinnedBytes (allocated at its first read-back).
inline constexpr std::size_t kPinnedBytes = 256;
inline void* pinned_scratch() {
    struct Scratch {
        void* p = nullptr;
        Scratch() { EDN_CUDA_CHECK(cudaMallocHost(&p, kPinnedBytes)); }
        ~Scratch() { cudaFreeHost(p); } // (at thread exit; errors of a torn-down runtime ignored)
    };
    thread_local Scratch scratch;
    return scratch.p;
}
} // namespace detail

/// `count` values at `device` copied to `host` on the legacy default stream (waits for the
/// work queued there).
template <class T> void read_back(const T* device, T* host, std::size_t count = 1) {
    const std::size_t bytes = count * sizeof(T);
    EDN_VERIFY(bytes <= detail::kPinnedBytes, ErrorCode::Internal,
               "read_back: " << bytes << " bytes");
    void* pinned = detail::pinned_scratch();
    EDN_CUDA_CHECK(cudaMemcpyAsync(pinned, device, bytes, cudaMemcpyDeviceToHost, 0));
    EDN_CUDA_CHECK(cudaStreamSynchronize(0));
    std::memcpy(host, pinned, bytes);
}

} // namespace edn::cuda
