#pragma once
// Checked CUDA calls and RAII device buffers for the CUDA backend (.cu files only).

#include "core/error.hpp"

#include <cstddef>
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

/// Owning device array of T (cudaMalloc/cudaFree); move-only.
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

    /// Reallocates to exactly `count` elements (contents are not kept).
    void resize(std::size_t count) {
        release();
        if (count > 0)
            EDN_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
        size_ = count;
    }
    T* data() const { return data_; }
    std::size_t size() const { return size_; }
    std::size_t bytes() const { return size_ * sizeof(T); }

private:
    void release() noexcept {
        if (data_) cudaFree(data_);
        data_ = nullptr;
        size_ = 0;
    }
    T* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace edn::cuda
