#pragma once
/// Gmsh .msh import (ASCII 2.2 and 4.1), tetrahedra only.

#include "mesh/tet_mesh.hpp"

#include <filesystem>

namespace edn {

/// Reads 4-node tetrahedra (type 4) from a Gmsh ASCII 2.2 or 4.1 file; other element types are
/// ignored; node tags mapped to dense indices. Returns the raw mesh (call validate_tet_mesh).
/// Throws edn::Error (Io, Parse also for binary files and unknown versions, IndexOutOfRange,
/// NonFinite, EmptyMesh).
TetMesh read_msh(const std::filesystem::path& path);

} // namespace edn
