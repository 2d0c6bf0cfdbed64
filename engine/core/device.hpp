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

} // namespace edn
