#pragma once
/// TetGen .node/.ele files.

#include "mesh/tet_mesh.hpp"

#include <filesystem>

namespace edn {

/// Reads `node_path` and the .ele file beside it (same stem): 0- or 1-based indices, attributes
/// and boundary markers ignored, '#' comments. Returns the raw mesh (call validate_tet_mesh).
/// Throws edn::Error (Io, Parse, IndexOutOfRange, NonFinite, EmptyMesh) naming the file.
TetMesh read_node_ele(const std::filesystem::path& node_path);

/// Writes `node_path` and the .ele beside it, 0-based, each atomically.
void write_node_ele(const std::filesystem::path& node_path, const TetMesh& mesh);

} // namespace edn
