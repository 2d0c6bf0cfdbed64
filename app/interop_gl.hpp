#pragma once
/// The OpenGL half of the external-memory interop path (GL_EXT_memory_object_fd): a GL buffer
/// whose storage is device memory allocated and exported by CUDA, so CUDA writes it directly
/// every frame without cudaGraphicsMapResources/Unmap (about 0.33 ms per frame on the H100).
/// Kept apart from interop.cu because GLAD's gl.h and CUDA's GL interop header cannot meet in one
/// translation unit. All calls need the app's GL context current.

#include <cstddef>

namespace edn::gl_external {

/// True when the context has GL_EXT_memory_object and GL_EXT_memory_object_fd.
bool supported();

/// A GL buffer backed by imported memory.
struct ImportedBuffer {
    unsigned buffer = 0; ///< GL buffer name (0: import failed)
    unsigned memory = 0; ///< GL memory object name
};

/// Imports the opaque file descriptor `fd` of `memory_bytes` (GL owns it on success) and creates
/// a buffer of `buffer_bytes` <= memory_bytes on it. Returns {0, 0} (and closes nothing) on
/// failure, with the GL error cleared.
ImportedBuffer import_buffer(int fd, std::size_t memory_bytes, std::size_t buffer_bytes);

/// Deletes the buffer and the memory object.
void release(const ImportedBuffer& imported);

/// Waits until the GPU has finished every GL command issued so far (a fence), so that CUDA may
/// overwrite what the last frame's draws read. A GPU round trip even when GL is idle (about
/// 0.2 ms on the H100): prefer a fence from insert_fence() after the draws.
void wait_for_gl();

/// A fence after the GL commands issued so far (e.g. the frame's draws), or nullptr.
void* insert_fence();

/// Waits for a fence from insert_fence() (usually long signalled by the next frame: a cheap
/// query) and deletes it.
void wait_and_delete_fence(void* fence);

} // namespace edn::gl_external
