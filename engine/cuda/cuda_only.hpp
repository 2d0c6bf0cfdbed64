#pragma once
/// The CUDA backend's classes (cuda_assembly.hpp, cuda_pcg.hpp, cuda_two_level.hpp) end each
/// member declaration with `EDN_CUDA_ONLY;`: with CUDA a plain declaration (defined in the .cu
/// files), without CUDA an inline body that throws edn::Error(ErrorCode::Unsupported). So the
/// declaration is the one list of the API, a build without CUDA still links every caller (tests,
/// bench) and fails loudly and clearly when CUDA is asked for, and no stub mirrors the API by hand.
/// Free functions (the cuda:: twins of the cpu:: stages, declared beside them) do the same with
/// `EDN_CUDA_FN` in front: `EDN_CUDA_FN Index f(...) EDN_CUDA_ONLY;` (inline without CUDA).

#if defined(EDN_WITH_CUDA) && EDN_WITH_CUDA
#define EDN_CUDA_ONLY
/// Nothing with CUDA: the .cu file defines the function.
#define EDN_CUDA_FN
/// Completes a class's pimpl in a build without CUDA (nothing with CUDA: the .cu file does).
#define EDN_CUDA_ONLY_IMPL(Class) static_assert(true)
#else
#define EDN_CUDA_ONLY                                                                              \
    { ::edn::cuda::throw_no_cuda(); }
#define EDN_CUDA_FN inline
#define EDN_CUDA_ONLY_IMPL(Class)                                                                  \
    struct Class::Impl {}
#endif

namespace edn::cuda {

/// Throws edn::Error(ErrorCode::Unsupported): elastodyn was built without CUDA.
[[noreturn]] void throw_no_cuda();

} // namespace edn::cuda
