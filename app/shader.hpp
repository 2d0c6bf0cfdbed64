#pragma once
/// GLSL programs loaded from files in shaders/, with compile and link logs turned into errors.

#include <filesystem>

namespace edn {

/// A linked vertex + fragment program. Move-only; owns the GL program object.
class ShaderProgram {
public:
    ShaderProgram() = default;
    ~ShaderProgram();
    ShaderProgram(ShaderProgram&& other) noexcept;
    ShaderProgram& operator=(ShaderProgram&& other) noexcept;
    ShaderProgram(const ShaderProgram&) = delete;
    ShaderProgram& operator=(const ShaderProgram&) = delete;

    /// Compiles `directory`/`vertex_file` and `directory`/`fragment_file` and links them.
    /// Throws edn::Error (Io for a missing file, Device for a compile or link failure) whose
    /// one-line message names the file and carries the driver's log.
    static ShaderProgram load(const std::filesystem::path& directory,
                              const std::string& vertex_file, const std::string& fragment_file);

    /// True when a program is held.
    bool valid() const { return program_ != 0; }
    /// Makes the program current.
    void use() const;
    /// Location of uniform `name` (-1 when the driver optimised it away).
    int uniform(const char* name) const;

private:
    unsigned program_ = 0;
};

} // namespace edn
