#pragma once
/// Difference, cross and dot products of the host geometry type Vec3 (core/types.hpp) for the
/// mesh code (surface checks, nesting); the kernels use fem/small_matrix.hpp's Vec3T.

#include "core/types.hpp"

namespace edn::vec3 {

inline Vec3 sub(const Vec3& a, const Vec3& b) {
    return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}

inline Vec3 cross(const Vec3& a, const Vec3& b) {
    return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

inline double dot(const Vec3& a, const Vec3& b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

} // namespace edn::vec3
