#pragma once
/// The GPU's float SVD (svd3_rotation_variant of fem/polar_decomposition.hpp, whose Jacobi
/// rotations use the hardware division and roots there) of n matrices, for tests against the
/// host's double one.
#include "core/types.hpp"
#include "cuda/cuda_only.hpp"
#include "fem/polar_decomposition.hpp"

namespace edn::cuda {

/// out[i] = svd3_rotation_variant(F[i]) in float on the device (host arrays of n entries).
EDN_CUDA_FN void svd3_float_on_device(const Mat3<float>* F, Index n, Svd3<float>* out) EDN_CUDA_ONLY;

} // namespace edn::cuda
