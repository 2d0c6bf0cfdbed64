#pragma once
/// One entry point for every mesh file the app and CLI accept.

#include "mesh/tetrahedralize.hpp"

#include <filesystem>

namespace edn {

/// Loads an OBJ surface (checked, then meshed by TetGen with `options`), a TetGen .node/.ele
/// pair (the .node or .ele path), or a Gmsh .msh file, and validates the result.
/// Throws edn::Error naming the file.
TetMesh load_tet_mesh(const std::filesystem::path& path, const TetrahedralizeOptions& options = {});

} // namespace edn
