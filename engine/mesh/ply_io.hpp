#pragma once
/// PLY triangle surfaces (binary little-endian), the compact per-frame surface format for DCC
/// tools (Blender, Houdini, MeshLab): vertices as `double x y z`, faces as a `uchar` count and
/// `int` vertex indices.

#include "mesh/tet_mesh.hpp"

#include <filesystem>

namespace edn {

/// Writes `surface` as binary little-endian PLY (atomically): element vertex with double x, y, z;
/// element face with `property list uchar int vertex_indices`.
void write_ply_surface(const std::filesystem::path& path, const SurfaceMesh& surface);

/// Reads a binary little-endian PLY triangle surface: vertex x, y, z of type float or double
/// (other vertex properties are skipped), faces as a list of 3 indices (uchar/ushort/int/uint
/// counts and indices). Throws edn::Error: Io when it cannot be read, Parse when it is not such a
/// file (naming it), IndexOutOfRange for a face index past the vertices.
SurfaceMesh read_ply_surface(const std::filesystem::path& path);

} // namespace edn
