#pragma once
/// VTK XML unstructured grid (.vtu) output for ParaView.

#include "mesh/tet_mesh.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace edn {

/// A named per-point or per-cell field with 1 or 3 components.
struct VtuField {
    std::string name;           ///< array name shown in ParaView
    int components = 1;         ///< 1 (scalar) or 3 (vector)
    std::vector<double> values; ///< #points (or #cells) x components, interleaved
};

/// Writes linear tets with optional point and cell fields, ASCII, atomically.
void write_vtu(const std::filesystem::path& path, const TetMesh& mesh,
               const std::vector<VtuField>& point_fields = {},
               const std::vector<VtuField>& cell_fields = {});

} // namespace edn
