#pragma once
/// Sparse matrix-vector products on Bin-BCSR* (twins: edn::cpu in cpu/spmv.cpp, edn::cuda in
/// cuda/spmv.cu; the CUDA views and vectors live in device memory).

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

} // namespace edn::cpu
