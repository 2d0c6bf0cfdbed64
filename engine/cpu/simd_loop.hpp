#pragma once
/// Loops whose bodies are compiled for AVX2 when the CPU has it: the product build targets the
/// x86-64 baseline (SSE2), and the element kernels' 3x3 products and the SVD's lanes run about
/// 20% fewer instructions with 4-wide vectors. Fused multiply-adds stay off (AVX2 alone does not
/// enable them), so both builds round alike and give the same bits.

#include "core/parallel.hpp"

#include <algorithm>
#include <cstdint>

namespace edn::cpu {

namespace detail {

/// body(i) for i in [begin, end) with every call inside inlined (flatten), baseline target.
template <class Body>
[[gnu::flatten]] void simd_range_baseline(std::int64_t begin, std::int64_t end, Body& body) {
    for (std::int64_t i = begin; i < end; ++i) body(i);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EDN_SIMD_LOOP_AVX2 1
/// The same loop compiled for AVX2.
template <class Body>
[[gnu::flatten, gnu::target("avx2")]] void simd_range_avx2(std::int64_t begin, std::int64_t end,
                                                           Body& body) {
    for (std::int64_t i = begin; i < end; ++i) body(i);
}
#endif

/// True when this CPU runs the AVX2 loops.
inline bool simd_loop_avx2() {
#ifdef EDN_SIMD_LOOP_AVX2
    static const bool avx2 = __builtin_cpu_supports("avx2");
    return avx2;
#else
    return false;
#endif
}

} // namespace detail

/// body(i) for i in [begin, end) in order on the calling thread, compiled for AVX2 where the CPU
/// has it.
template <class Body> void simd_for(std::int64_t begin, std::int64_t end, Body&& body) {
#ifdef EDN_SIMD_LOOP_AVX2
    if (detail::simd_loop_avx2()) {
        detail::simd_range_avx2(begin, end, body);
        return;
    }
#endif
    detail::simd_range_baseline(begin, end, body);
}

/// Items per parallel part of parallel_simd_for.
inline constexpr std::int64_t kSimdForPart = 16;

/// simd_for over [0, count) on all threads (parts of kSimdForPart items; serial below
/// `min_parts` parts). body must be thread-safe.
template <class Body>
void parallel_simd_for(std::int64_t count, Body&& body, std::int64_t min_parts = 2) {
    const std::int64_t parts = (count + kSimdForPart - 1) / kSimdForPart;
    parallel_for(
        0, parts,
        [&](std::int64_t part) {
            simd_for(part * kSimdForPart, std::min(count, (part + 1) * kSimdForPart), body);
        },
        min_parts);
}

} // namespace edn::cpu
