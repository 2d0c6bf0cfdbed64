#include "interop_gl.hpp"

#include <glad/gl.h>

namespace edn::gl_external {

bool supported() {
    return GLAD_GL_EXT_memory_object && GLAD_GL_EXT_memory_object_fd && glCreateMemoryObjectsEXT &&
           glImportMemoryFdEXT && glNamedBufferStorageMemEXT;
}

ImportedBuffer import_buffer(int fd, std::size_t memory_bytes, std::size_t buffer_bytes) {
    if (!supported() || buffer_bytes > memory_bytes) return {};
    while (glGetError() != GL_NO_ERROR) {
    }
    ImportedBuffer out;
    glCreateMemoryObjectsEXT(1, &out.memory);
    // A dedicated allocation (one cuMemCreate per buffer) must be imported as such.
    const GLint dedicated = GL_TRUE;
    glMemoryObjectParameterivEXT(out.memory, GL_DEDICATED_MEMORY_OBJECT_EXT, &dedicated);
    glImportMemoryFdEXT(out.memory, static_cast<GLuint64>(memory_bytes),
                        GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd);
    if (glGetError() != GL_NO_ERROR) {
        glDeleteMemoryObjectsEXT(1, &out.memory);
        return {};
    }
    glCreateBuffers(1, &out.buffer);
    glNamedBufferStorageMemEXT(out.buffer, static_cast<GLsizeiptr>(buffer_bytes), out.memory, 0);
    if (glGetError() != GL_NO_ERROR) {
        release(out);
        return {};
    }
    return out;
}

void release(const ImportedBuffer& imported) {
    if (imported.buffer) glDeleteBuffers(1, &imported.buffer);
    if (imported.memory) glDeleteMemoryObjectsEXT(1, &imported.memory);
}

void wait_for_gl() {
    GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    if (!fence) return;
    // One second at most: a hung GL would be reported by the next GL call anyway.
    glClientWaitSync(fence, GL_SYNC_FLUSH_COMMANDS_BIT, 1'000'000'000ull);
    glDeleteSync(fence);
}

void* insert_fence() {
    return glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
}

void wait_and_delete_fence(void* fence) {
    if (!fence) return;
    GLsync sync = static_cast<GLsync>(fence);
    if (glClientWaitSync(sync, 0, 0) == GL_TIMEOUT_EXPIRED)
        glClientWaitSync(sync, GL_SYNC_FLUSH_COMMANDS_BIT, 1'000'000'000ull);
    glDeleteSync(sync);
}

} // namespace edn::gl_external
