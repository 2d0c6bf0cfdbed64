#pragma once
/// Which compute devices this build and machine offer. Never includes CUDA headers.

#include <string>

namespace edn {

/// True when elastodyn was compiled with the CUDA backend.
bool built_with_cuda();

/// True when the CUDA backend is built and at least one CUDA device can be used.
bool cuda_device_available();

/// Name of CUDA device 0 ("none" when unavailable).
std::string cuda_device_name();

/// Waits until the device work the calling thread has queued is done. Every thread has its own
/// CUDA stream (the per-thread default stream: the app's simulation thread steps while the UI
/// thread draws through interop), so device data written by one thread is handed to another
/// only after this. A no-op without CUDA; call it only where the CUDA backend is in use.
void finish_device_work();

} // namespace edn
