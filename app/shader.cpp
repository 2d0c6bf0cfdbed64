#include "shader.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <fstream>
#include <glad/gl.h>
#include <sstream>
#include <string>
#include <utility>

namespace edn {
namespace {

std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    EDN_VERIFY(in, ErrorCode::Io, path.string() << ": cannot open shader");
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Driver logs span several lines; error messages are one line.
std::string one_line(std::string log) {
    while (!log.empty() && (log.back() == '\n' || log.back() == '\r' || log.back() == ' ')) {
        log.pop_back();
    }
    for (char& c : log) {
        if (c == '\n' || c == '\r') c = ' ';
    }
    return log.empty() ? "(no log)" : log;
}

GLuint compile(GLenum stage, const std::filesystem::path& path) {
    const std::string source = read_text(path);
    const char* text = source.c_str();
    const GLuint shader = glCreateShader(stage);
    glShaderSource(shader, 1, &text, nullptr);
    glCompileShader(shader);
    GLint ok = GL_FALSE;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (ok != GL_TRUE) {
        GLint length = 0;
        glGetShaderiv(shader, GL_INFO_LOG_LENGTH, &length);
        std::string log(static_cast<std::size_t>(std::max(length, 1)), '\0');
        glGetShaderInfoLog(shader, length, nullptr, log.data());
        glDeleteShader(shader);
        log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
        EDN_THROW(ErrorCode::Device, path.string() << ": compile error: " << one_line(log));
    }
    return shader;
}

} // namespace

ShaderProgram::~ShaderProgram() {
    if (program_ != 0) glDeleteProgram(program_);
}

ShaderProgram::ShaderProgram(ShaderProgram&& other) noexcept
    : program_(std::exchange(other.program_, 0)) {}

ShaderProgram& ShaderProgram::operator=(ShaderProgram&& other) noexcept {
    if (this != &other) {
        if (program_ != 0) glDeleteProgram(program_);
        program_ = std::exchange(other.program_, 0);
    }
    return *this;
}

ShaderProgram ShaderProgram::load(const std::filesystem::path& directory,
                                  const std::string& vertex_file,
                                  const std::string& fragment_file) {
    const GLuint vertex = compile(GL_VERTEX_SHADER, directory / vertex_file);
    GLuint fragment = 0;
    try {
        fragment = compile(GL_FRAGMENT_SHADER, directory / fragment_file);
    } catch (...) {
        glDeleteShader(vertex);
        throw;
    }
    ShaderProgram result;
    result.program_ = glCreateProgram();
    glAttachShader(result.program_, vertex);
    glAttachShader(result.program_, fragment);
    glLinkProgram(result.program_);
    glDeleteShader(vertex); // flagged for deletion; freed with the program
    glDeleteShader(fragment);
    GLint ok = GL_FALSE;
    glGetProgramiv(result.program_, GL_LINK_STATUS, &ok);
    if (ok != GL_TRUE) {
        GLint length = 0;
        glGetProgramiv(result.program_, GL_INFO_LOG_LENGTH, &length);
        std::string log(static_cast<std::size_t>(std::max(length, 1)), '\0');
        glGetProgramInfoLog(result.program_, length, nullptr, log.data());
        log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
        EDN_THROW(ErrorCode::Device, (directory / vertex_file).string()
                                         << " + " << fragment_file
                                         << ": link error: " << one_line(log));
    }
    return result;
}

void ShaderProgram::use() const {
    glUseProgram(program_);
}

int ShaderProgram::uniform(const char* name) const {
    return glGetUniformLocation(program_, name);
}

} // namespace edn
