#include "core/error.hpp"

namespace edn {

const char* error_code_name(ErrorCode code) {
    switch (code) {
    case ErrorCode::Usage:
        return "usage";
    case ErrorCode::Io:
        return "io";
    case ErrorCode::Parse:
        return "parse";
    case ErrorCode::IndexOutOfRange:
        return "index_out_of_range";
    case ErrorCode::NonFinite:
        return "non_finite";
    case ErrorCode::EmptyMesh:
        return "empty_mesh";
    case ErrorCode::OpenSurface:
        return "open_surface";
    case ErrorCode::NonManifold:
        return "non_manifold";
    case ErrorCode::InconsistentOrientation:
        return "inconsistent_orientation";
    case ErrorCode::DegenerateElement:
        return "degenerate_element";
    case ErrorCode::DuplicateElement:
        return "duplicate_element";
    case ErrorCode::SelfIntersecting:
        return "self_intersecting";
    case ErrorCode::MeshingFailed:
        return "meshing_failed";
    case ErrorCode::Unsupported:
        return "unsupported";
    case ErrorCode::OutOfMemory:
        return "out_of_memory";
    case ErrorCode::Device:
        return "device";
    case ErrorCode::Numerical:
        return "numerical";
    case ErrorCode::Internal:
        return "internal";
    }
    return "unknown";
}

int exit_code_for(ErrorCode code) {
    switch (code) {
    case ErrorCode::Usage:
        return 2;
    case ErrorCode::Unsupported:
    case ErrorCode::OutOfMemory:
    case ErrorCode::Device:
    case ErrorCode::Numerical:
    case ErrorCode::Internal:
        return 4;
    default:
        return 3;
    }
}

namespace detail {

void throw_error(ErrorCode code, const std::string& message) {
    throw Error(code, message);
}

void assert_failed(const char* condition, const char* file, int line, const std::string& message) {
    std::ostringstream out;
    out << "internal error: " << message << " (" << condition << " at " << file << ":" << line
        << ")";
    throw Error(ErrorCode::Internal, out.str());
}

} // namespace detail
} // namespace edn
