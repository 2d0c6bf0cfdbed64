#pragma once
/// Basic scalar/index types and the host/device annotation shared by both backends.

#include <array>
#include <cstdint>

#if defined(__CUDACC__)
#define EDN_HOST_DEVICE __host__ __device__
#else
#define EDN_HOST_DEVICE
#endif

namespace edn {

/// Index of a vertex, node, cell, edge or face. 32 bits: meshes up to 2^31 entities.
using Index = std::int32_t;
/// Coordinates and geometric quantities on the host are double.
using Vec3 = std::array<double, 3>;
/// A tetrahedron's four vertex indices (positive orientation after validation).
using Cell = std::array<Index, 4>;
/// A triangle's three vertex indices.
using Tri = std::array<Index, 3>;

} // namespace edn
