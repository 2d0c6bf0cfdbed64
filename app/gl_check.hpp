#pragma once
/// EDN_GL_CHECK: run a GL call and turn a GL error into edn::Error with the call text.

#include "core/error.hpp"

#include <glad/gl.h>

namespace edn::detail {
/// Throws edn::Error (Device) when glGetError reports an error after `call`.
inline void check_gl_error(const char* call, const char* file, int line) {
    const GLenum error = glGetError();
    if (error != GL_NO_ERROR) {
        EDN_THROW(ErrorCode::Device, "OpenGL error 0x" << std::hex << error << std::dec << " in "
                                                       << call << " at " << file << ":" << line);
    }
}
} // namespace edn::detail

/// Wraps a GL call that can fail for reasons outside the app (allocation, FBO setup).
#define EDN_GL_CHECK(call)                                                                         \
    do {                                                                                           \
        call;                                                                                      \
        ::edn::detail::check_gl_error(#call, __FILE__, __LINE__);                                  \
    } while (0)
