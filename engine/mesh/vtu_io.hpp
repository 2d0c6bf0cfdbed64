#pragma once
/// VTK XML unstructured grid (.vtu) output for ParaView: linear tets (VTK_TETRA, 10), and for
/// higher orders every Lagrange node: VTK_QUADRATIC_TETRA (24, 10 nodes) for p = 2,
/// VTK_LAGRANGE_TETRAHEDRON (71, 20 nodes) for p = 3, in VTK's node order (vtk_tet_node_order).

#include "core/types.hpp"
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

/// How a .vtu stores its arrays.
enum class VtuEncoding {
    Ascii,  ///< decimal text inside each DataArray (round-trip precision)
    Binary, ///< raw appended data: one <AppendedData encoding="raw"> block, a UInt64 byte count
            ///< before each array, little-endian (compact and fast; ParaView reads it)
};

/// Writes linear tets with optional point and cell fields, ASCII, atomically.
void write_vtu(const std::filesystem::path& path, const TetMesh& mesh,
               const std::vector<VtuField>& point_fields = {},
               const std::vector<VtuField>& cell_fields = {});

/// Writes order-p Lagrange tets (p = 1, 2, 3) over all nodes, atomically.
/// @param[in] points      #nodes node positions (point fields have one tuple per node)
/// @param[in] order       p; the VTK cell type follows from it (10, 24, 71)
/// @param[in] cell_nodes  #cells x nodes_per_cell(p) node indices in the canonical local order
///                        of mesh/node_layout.hpp (Simulation::cell_nodes), reordered for VTK here
void write_vtu(const std::filesystem::path& path, const std::vector<Vec3>& points, int order,
               const std::vector<Index>& cell_nodes, const std::vector<VtuField>& point_fields = {},
               const std::vector<VtuField>& cell_fields = {},
               VtuEncoding encoding = VtuEncoding::Ascii);

/// A .vtu as read back by read_vtu (cells in VTK's node order and types).
struct VtuData {
    std::vector<Vec3> points;               ///< #points positions
    std::vector<std::int64_t> connectivity; ///< concatenated cell node lists
    std::vector<std::int64_t> offsets;      ///< end of each cell in connectivity
    std::vector<std::uint8_t> types;        ///< VTK cell type of each cell
    std::vector<VtuField> point_fields;     ///< in file order
    std::vector<VtuField> cell_fields;      ///< in file order
};

/// Reads a .vtu that write_vtu wrote (either encoding; one Piece, Float64 fields). Throws
/// edn::Error: Io when it cannot be read, Parse when it is not such a file.
VtuData read_vtu(const std::filesystem::path& path);

/// One data set of a ParaView collection (.pvd): a file (relative to the .pvd) at a time.
struct PvdEntry {
    double time = 0;  ///< the timestep attribute [s]
    std::string file; ///< path of the data set, relative to the .pvd's directory
};

/// Writes a ParaView Collection (.pvd) listing `entries` in order, atomically.
void write_pvd(const std::filesystem::path& path, const std::vector<PvdEntry>& entries);

/// VTK's local node order of an order-p tetrahedron in terms of ours: VTK node k is our
/// canonical local node result[k]. VTK lists the vertices, then the edges (0,1), (1,2), (2,0),
/// (0,3), (1,3), (2,3) (each edge's nodes from its first vertex to its second), then the faces
/// (0,1,3), (1,2,3), (0,2,3), (0,1,2) (vtkHigherOrderTetra); ours is in mesh/node_layout.hpp.
std::vector<int> vtk_tet_node_order(int order);

/// VTK cell type of an order-p tetrahedron: 10 (VTK_TETRA), 24 (VTK_QUADRATIC_TETRA) or 71
/// (VTK_LAGRANGE_TETRAHEDRON).
int vtk_tet_cell_type(int order);

} // namespace edn
