#pragma once
// Checked CUDA calls and RAII device buffers for the CUDA backend (.cu files only).

#include "core/error.hpp"

#include <cstddef>
#include <cstdint>
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

/// Lets the default memory pool keep up to 512 MiB of freed memory for re-use (instead of
/// returning it at every synchronisation), once per process.
inline void keep_pool_memory() {
    static const bool once = [] {
        int device = 0;
        cudaMemPool_t pool{};
        if (cudaGetDevice(&device) == cudaSuccess &&
            cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess) {
            std::uint64_t threshold = 512ull << 20;
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
