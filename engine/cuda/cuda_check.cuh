#pragma once
// Checked CUDA calls and RAII device buffers for the CUDA backend (.cu files only).

#include "core/error.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cuda_runtime.h>
#include <utility>

/// Checks a CUDA runtime call; throws edn::Error naming the call, file and line.
#define EDN_CUDA_CHECK(call)                                                                       \
    do {                                                                                           \
        cudaError_t edn_err_ = (call);                                                             \
        if (edn_err_ != cudaSuccess) {                                                             \
            EDN_THROW(edn_err_ == cudaErrorMemoryAllocation ? ::edn::ErrorCode::OutOfMemory        \
                                                            : ::edn::ErrorCode::Device,            \
                      "CUDA error " << cudaGetErrorName(edn_err_) << " ("                          \
                                    << cudaGetErrorString(edn_err_) << ") in " #call " at "        \
                                    << __FILE__ << ":" << __LINE__);                               \
        }                                                                                          \
    } while (0)

/// Checks the last kernel launch.
#define EDN_CUDA_CHECK_LAUNCH() EDN_CUDA_CHECK(cudaGetLastError())

namespace edn::cuda {

/// Lets the default memory pool keep freed memory for re-use instead of returning it at every
/// synchronisation, once per process: up to a quarter of the device's memory, at least 512 MiB
/// (EDN_CUDA_POOL_KEEP_MIB sets it). A simulation's buffers alone can pass 512 MiB (the 187K
/// bunny's element blocks), and every wait then returned the pool's excess, so that the next large
/// allocation mapped new memory.
inline void keep_pool_memory() {
    static const bool once = [] {
        int device = 0;
        cudaMemPool_t pool{};
        if (cudaGetDevice(&device) == cudaSuccess &&
            cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) {
            std::size_t free_bytes = 0, total_bytes = 0;
            if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) total_bytes = 0;
            std::uint64_t threshold = std::max<std::uint64_t>(512ull << 20, total_bytes / 4);
            if (const char* env = std::getenv("EDN_CUDA_POOL_KEEP_MIB"))
                threshold = std::strtoull(env, nullptr, 10) << 20;
            cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
        }
        cudaGetLastError(); // a device without pools still works, just slower
        return true;
    }();
    (void)once;
}

/// Owning device array of T (stream-ordered allocation on the default stream); move-only. Work on
/// other streams must be synchronised with the default stream before a buffer it uses is freed.
template <class T> class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t count) { resize(count); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        if (this != &other) {
            release();
            data_ = std::exchange(other.data_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    ~DeviceBuffer() { release(); }

    /// Reallocates to exactly `count` elements (contents are not kept). Stream-ordered on the
    /// default stream (see keep_pool_memory): a re-pattern makes dozens of temporaries, and
    /// cudaMalloc/cudaFree (cudaFree synchronises the device) cost more than the kernels then.
    void resize(std::size_t count) {
        release();
        if (count > 0) {
            keep_pool_memory();
            EDN_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&data_), count * sizeof(T), 0));
        }
        size_ = count;
    }
    T* data() const { return data_; }
    std::size_t size() const { return size_; }
    std::size_t bytes() const { return size_ * sizeof(T); }

private:
    void release() noexcept {
        if (data_) cudaFreeAsync(data_, 0);
        data_ = nullptr;
        size_ = 0;
    }
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace edn::cuda
