#pragma once
/// Sparse matrix-vector products on Bin-BCSR* (twins: edn::cpu in cpu/spmv.cpp, edn::cuda in
/// cuda/spmv.cu; the CUDA views and vectors live in device memory).

#include "cuda/cuda_only.hpp"
#include "sparse/bin_bcsr_view.hpp"

#include <cstdint>

namespace edn::cpu {

/// Below this many stored blocks (slots) spmv runs on the calling thread: a fork/join costs more
/// than such a product, and far more when the machine is oversubscribed (a 384-tet rod on two busy
/// cores: 1038 ms per frame with two threads, 11 ms with one).
inline constexpr std::int64_t kSerialSpmvSlots = std::int64_t{1} << 15;

/// y = A x, with x and y of 3 * num_rows scalars (dof 3*node+axis); y must not alias x. Matrices
/// of fewer than `min_parallel_slots` slots are multiplied on the calling thread.
template <class T>
void spmv(const BinBcsrMatrixView<T>& a, const T* x, T* y,
          std::int64_t min_parallel_slots = kSerialSpmvSlots);

/// y = D^{-1} x for the block diagonal D: `inverse_diag` holds the 9 planes of the inverted
/// diagonal blocks (see invert_diagonal).
template <class T> void apply_block_jacobi(Index num_rows, const T* inverse_diag, const T* x, T* y);

/// inverse_diag = inverse of each 3x3 diagonal block of `a` (9 planes); a singular block is
/// replaced by the inverse of its diagonal entries, or identity when those are zero too.
template <class T> void invert_diagonal(const BinBcsrMatrixView<T>& a, T* inverse_diag);

/// y = A x through the upper part (UpperBinBcsrView; serial: the reference of cuda::spmv_upper);
/// x and y of 3 * num_rows scalars, no aliasing.
template <class T> void spmv_upper(const UpperBinBcsrView<T>& a, const T* x, T* y);

} // namespace edn::cpu

/// Device twins (cuda/spmv.cu, the one home of the standalone device products): float, views
/// and vectors in device memory, `stream` a cudaStream_t (nullptr: the default stream).
namespace edn::cuda {

/// Warps per bin and load policy of the multi-warp product.
struct SpmvKernel {
    int warps_per_bin = 4;  ///< 1, 2, 4 or 8 (a bin's row slots split over the warps)
    bool streaming = false; ///< read the matrix evict-first, so x stays in L2
};

/// The measured choice for a matrix of `num_rows` rows and `num_slots` slots (H100,
/// bench/README.md "SpMV policy"): 4 warps with cached loads while the matrix fits what L2 keeps
/// (<= 32 MB), else streaming loads with 2 warps for short rows (<= 20 slots per row), 4 for long.
EDN_CUDA_FN SpmvKernel choose_spmv_kernel(Index num_rows, Index num_slots) EDN_CUDA_ONLY;

/// y = A x with `kernel`'s warps per bin (exact row counts: padding is not read).
EDN_CUDA_FN void spmv(const BinBcsrMatrixView<float>& a, const float* x, float* y,
                      SpmvKernel kernel, void* stream = nullptr) EDN_CUDA_ONLY;

/// y = A x, one warp per bin with evict-first matrix loads (the simulation's product).
EDN_CUDA_FN void spmv(const BinBcsrMatrixView<float>& a, const float* x, float* y,
                      void* stream = nullptr) EDN_CUDA_ONLY;

/// y4 = A x through the upper part (y4: 4 floats per row, zeroed here; transposed blocks added
/// with float atomics, so the last bits vary from run to run) with 1 or 8 warps per bin.
EDN_CUDA_FN void spmv_upper(const UpperBinBcsrView<float>& a, const float* x, float* y4,
                            int warps_per_bin, void* stream = nullptr) EDN_CUDA_ONLY;

/// The same product with the off-diagonal blocks read from `half_values` (IEEE half bits, the
/// layout of a.values) instead, each scaled by *unscale (a device scalar).
EDN_CUDA_FN void spmv_upper_half(const UpperBinBcsrView<float>& a, const std::uint16_t* half_values,
                                 const float* unscale, const float* x, float* y4, int warps_per_bin,
                                 void* stream = nullptr) EDN_CUDA_ONLY;

} // namespace edn::cuda
