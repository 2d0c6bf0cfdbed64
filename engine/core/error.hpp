#pragma once
/// Error handling: one exception type with a machine-readable code, and the VERIFY/ASSERT tiers.

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

namespace edn {

/// What went wrong, in classes that tests and callers can branch on.
enum class ErrorCode : std::uint8_t {
    Usage,           ///< bad command line or API argument
    Io,              ///< a file cannot be opened, read or written
    Parse,           ///< malformed file contents
    IndexOutOfRange, ///< an element references a vertex that does not exist
    NonFinite,       ///< NaN or infinite coordinate or parameter
    EmptyMesh,       ///< no usable elements in the input
    OpenSurface,     ///< surface has boundary edges
    NonManifold,     ///< an edge shared by more than two triangles, or a non-manifold vertex
    InconsistentOrientation, ///< neighbouring triangles disagree on orientation
    DegenerateElement,       ///< zero-area triangle or zero-volume tetrahedron
    DuplicateElement,        ///< the same cell appears twice
    SelfIntersecting,        ///< surface intersects itself
    MeshingFailed,           ///< TetGen produced nothing or crashed
    Unsupported,             ///< feature not available in this build (e.g. CUDA)
    OutOfMemory,             ///< host or device allocation failed
    Device,                  ///< CUDA runtime error
    Numerical,               ///< a result overflowed or is NaN (absurd parameters, divergence)
    Internal,                ///< broken invariant: a bug
};

/// Stable lower-case name of an error code, used in messages and JSON.
const char* error_code_name(ErrorCode code);

/// Process exit code of the CLI contract: 2 usage, 3 bad input, 4 resource, numerical or
/// internal.
int exit_code_for(ErrorCode code);

/// The one exception type of elastodyn; the message is one line meant for a user.
class Error : public std::runtime_error {
public:
    Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
    /// The class of the failure.
    ErrorCode code() const noexcept { return code_; }

private:
    ErrorCode code_;
};

namespace detail {
[[noreturn]] void throw_error(ErrorCode code, const std::string& message);
[[noreturn]] void assert_failed(const char* condition, const char* file, int line,
                                const std::string& message);
} // namespace detail

} // namespace edn

/// Throw edn::Error(code, streamed message).
#define EDN_THROW(code, stream_expr)                                                               \
    do {                                                                                           \
        std::ostringstream edn_msg_;                                                               \
        edn_msg_ << stream_expr;                                                                   \
        ::edn::detail::throw_error((code), edn_msg_.str());                                        \
    } while (0)

/// Always-on input check: throws edn::Error with the given code when cond is false.
#define EDN_VERIFY(cond, code, stream_expr)                                                        \
    do {                                                                                           \
        if (!(cond)) EDN_THROW(code, stream_expr);                                                 \
    } while (0)

/// Debug-only invariant check (host code); compiled out in release builds.
#ifndef NDEBUG
#define EDN_ASSERT(cond, stream_expr)                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::ostringstream edn_msg_;                                                           \
            edn_msg_ << stream_expr;                                                               \
            ::edn::detail::assert_failed(#cond, __FILE__, __LINE__, edn_msg_.str());               \
        }                                                                                          \
    } while (0)
#else
#define EDN_ASSERT(cond, stream_expr)                                                              \
    do {                                                                                           \
    } while (0)
#endif
