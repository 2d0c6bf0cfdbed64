#include "mesh/vtu_io.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "mesh/node_layout.hpp"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>

namespace edn {

namespace {

constexpr int vtk_tetra = 10;
constexpr int vtk_quadratic_tetra = 24;
constexpr int vtk_lagrange_tetrahedron = 71;

/// VTK's edges of a tetrahedron (vtkHigherOrderTetra's EdgeVertices), nodes running from the
/// first vertex to the second; note (2,0), the one edge whose direction differs from ours.
constexpr int kVtkEdges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
/// The vertex each VTK face leaves out: faces (0,1,3), (1,2,3), (0,2,3), (0,1,2).
constexpr int kVtkFaceOpposite[4] = {2, 0, 1, 3};

/// Integer barycentric multi-indices (weights of vertices 0..3, sum = order) of VTK's nodes.
std::vector<std::array<int, 4>> vtk_multi_indices(int order) {
    std::vector<std::array<int, 4>> nodes;
    for (int v = 0; v < 4; ++v) {
        std::array<int, 4> alpha{};
        alpha[static_cast<std::size_t>(v)] = order;
        nodes.push_back(alpha);
    }
    for (const auto& edge : kVtkEdges) {
        for (int m = 0; m < order - 1; ++m) {
            std::array<int, 4> alpha{};
            alpha[static_cast<std::size_t>(edge[0])] = order - 1 - m;
            alpha[static_cast<std::size_t>(edge[1])] = 1 + m;
            nodes.push_back(alpha);
        }
    }
    if (order == 3) {
        for (int opposite : kVtkFaceOpposite) {
            std::array<int, 4> alpha{1, 1, 1, 1};
            alpha[static_cast<std::size_t>(opposite)] = 0;
            nodes.push_back(alpha);
        }
    }
    return nodes;
}

/// Field names are user strings; escaped so that the file stays well-formed XML.
std::string xml_escape(const std::string& text) {
    std::string out;
    for (char c : text) {
        switch (c) {
        case '&':
            out += "&amp;";
            break;
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '"':
            out += "&quot;";
            break;
        case '\'':
            out += "&apos;";
            break;
        default:
            out += c;
        }
    }
    return out;
}

void verify_fields(const std::vector<VtuField>& fields, std::size_t count, const char* kind,
                   const std::filesystem::path& path) {
    for (const VtuField& field : fields) {
        EDN_VERIFY(field.components >= 1, ErrorCode::Usage,
                   path.string() << ": " << kind << " field '" << field.name << "' has "
                                 << field.components << " components");
        EDN_VERIFY(field.values.size() == count * static_cast<std::size_t>(field.components),
                   ErrorCode::Usage,
                   path.string() << ": " << kind << " field '" << field.name << "' has "
                                 << field.values.size() << " values, expected " << count << " x "
                                 << field.components);
    }
}

void write_fields(std::ostream& out, const std::vector<VtuField>& fields) {
    for (const VtuField& field : fields) {
        out << "        <DataArray type=\"Float64\" Name=\"" << xml_escape(field.name)
            << "\" NumberOfComponents=\"" << field.components << "\" format=\"ascii\">\n";
        const std::size_t per_line = static_cast<std::size_t>(field.components);
        for (std::size_t i = 0; i < field.values.size(); ++i)
            out << ((i % per_line == 0) ? "          " : " ") << field.values[i]
                << ((i % per_line == per_line - 1) ? "\n" : "");
        out << "        </DataArray>\n";
    }
}

/// The arrays of a binary (raw appended) .vtu: each DataArray tag names its offset into one
/// block after the XML, where a UInt64 byte count precedes the array's little-endian bytes.
class AppendedArrays {
public:
    /// The DataArray tag of `count` values of `T` named `type` (and `name` unless empty), and
    /// those values queued for the appended block.
    template <typename T>
    std::string add(const char* type, const std::string& name, int components, const T* values,
                    std::size_t count) {
        std::ostringstream tag;
        tag << "<DataArray type=\"" << type << "\"";
        if (!name.empty()) tag << " Name=\"" << xml_escape(name) << "\"";
        if (components > 1) tag << " NumberOfComponents=\"" << components << "\"";
        tag << " format=\"appended\" offset=\"" << data_.size() << "\"/>\n";
        const std::uint64_t bytes = count * sizeof(T);
        append(&bytes, sizeof bytes);
        append(values, bytes);
        return tag.str();
    }
    /// The appended block (after the closing </UnstructuredGrid>).
    void write(std::ostream& out) const {
        out << "  <AppendedData encoding=\"raw\">\n   _";
        out.write(data_.data(), static_cast<std::streamsize>(data_.size()));
        out << "\n  </AppendedData>\n";
    }

private:
    void append(const void* bytes, std::size_t count) {
        const std::size_t at = data_.size();
        data_.resize(at + count);
        if (count > 0) std::memcpy(data_.data() + at, bytes, count);
    }
    std::vector<char> data_;
};

/// The binary encoding writes memory as it is: the header declares LittleEndian.
static_assert(std::endian::native == std::endian::little, "vtu: binary output assumes a "
                                                          "little-endian host");

} // namespace

namespace {

/// write_vtu's raw appended encoding (arguments checked by write_vtu).
void write_binary_vtu(const std::filesystem::path& path, const std::vector<Vec3>& points,
                      const std::vector<int>& vtk_order, int cell_type,
                      const std::vector<Index>& cell_nodes,
                      const std::vector<VtuField>& point_fields,
                      const std::vector<VtuField>& cell_fields) {
    const std::size_t per_cell = vtk_order.size();
    const std::size_t num_cells = cell_nodes.size() / per_cell;
    std::vector<std::int64_t> connectivity;
    connectivity.reserve(cell_nodes.size());
    for (std::size_t c = 0; c < num_cells; ++c)
        for (int local : vtk_order)
            connectivity.push_back(cell_nodes[c * per_cell + static_cast<std::size_t>(local)]);
    std::vector<std::int64_t> offsets(num_cells);
    for (std::size_t i = 0; i < num_cells; ++i)
        offsets[i] = static_cast<std::int64_t>(per_cell * (i + 1));
    const std::vector<std::uint8_t> types(num_cells, static_cast<std::uint8_t>(cell_type));
    std::vector<double> xyz;
    xyz.reserve(3 * points.size());
    for (const Vec3& p : points) xyz.insert(xyz.end(), {p[0], p[1], p[2]});

    AppendedArrays data;
    std::ostringstream xml;
    xml << "<?xml version=\"1.0\"?>\n"
        << "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
           "header_type=\"UInt64\">\n"
        << "  <UnstructuredGrid>\n"
        << "    <Piece NumberOfPoints=\"" << points.size() << "\" NumberOfCells=\"" << num_cells
        << "\">\n      <PointData>\n";
    // NumberOfComponents is written even for scalars, as the ASCII encoding does.
    auto add_fields = [&](const std::vector<VtuField>& fields) {
        for (const VtuField& f : fields) {
            std::string tag =
                data.add("Float64", f.name, f.components, f.values.data(), f.values.size());
            if (f.components == 1) tag.insert(tag.find(" format="), " NumberOfComponents=\"1\"");
            xml << "        " << tag;
        }
    };
    add_fields(point_fields);
    xml << "      </PointData>\n      <CellData>\n";
    add_fields(cell_fields);
    xml << "      </CellData>\n      <Points>\n        "
        << data.add("Float64", "", 3, xyz.data(), xyz.size())
        << "      </Points>\n      <Cells>\n        "
        << data.add("Int64", "connectivity", 1, connectivity.data(), connectivity.size())
        << "        " << data.add("Int64", "offsets", 1, offsets.data(), offsets.size())
        << "        " << data.add("UInt8", "types", 1, types.data(), types.size())
        << "      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n";
    write_file_atomically(path, [&](std::ostream& out) {
        out << xml.str();
        data.write(out);
        out << "</VTKFile>\n";
    });
}

} // namespace

std::vector<int> vtk_tet_node_order(int order) {
    EDN_VERIFY(order >= 1 && order <= kMaxOrder, ErrorCode::Usage,
               "vtu: order " << order << " is not 1, 2 or 3");
    const std::vector<std::array<int, 4>> vtk = vtk_multi_indices(order);
    const int count = nodes_per_cell(order);
    EDN_ASSERT(static_cast<int>(vtk.size()) == count, "vtu: VTK node count");
    std::vector<int> ours(static_cast<std::size_t>(count), -1);
    for (int k = 0; k < count; ++k) {
        for (int local = 0; local < count; ++local) {
            const std::array<double, 4> bary = local_node_barycentric(order, local);
            bool same = true;
            for (int i = 0; i < 4; ++i)
                same = same &&
                       static_cast<int>(std::lround(bary[static_cast<std::size_t>(i)] * order)) ==
                           vtk[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)];
            if (same) ours[static_cast<std::size_t>(k)] = local;
        }
        EDN_ASSERT(ours[static_cast<std::size_t>(k)] >= 0, "vtu: VTK node " << k << " unmatched");
    }
    return ours;
}

int vtk_tet_cell_type(int order) {
    EDN_VERIFY(order >= 1 && order <= kMaxOrder, ErrorCode::Usage,
               "vtu: order " << order << " is not 1, 2 or 3");
    return order == 1 ? vtk_tetra : order == 2 ? vtk_quadratic_tetra : vtk_lagrange_tetrahedron;
}

void write_vtu(const std::filesystem::path& path, const std::vector<Vec3>& points, int order,
               const std::vector<Index>& cell_nodes, const std::vector<VtuField>& point_fields,
               const std::vector<VtuField>& cell_fields, VtuEncoding encoding) {
    const std::vector<int> vtk_order = vtk_tet_node_order(order);
    const int cell_type = vtk_tet_cell_type(order);
    const std::size_t per_cell = vtk_order.size();
    EDN_VERIFY(cell_nodes.size() % per_cell == 0, ErrorCode::Usage,
               path.string() << ": " << cell_nodes.size()
                             << " cell node indices are not a multiple of " << per_cell
                             << " (order " << order << ")");
    const std::size_t num_cells = cell_nodes.size() / per_cell;
    for (Index node : cell_nodes)
        EDN_VERIFY(node >= 0 && static_cast<std::size_t>(node) < points.size(), ErrorCode::Usage,
                   path.string() << ": cell node " << node << " outside the " << points.size()
                                 << " points");
    verify_fields(point_fields, points.size(), "point", path);
    verify_fields(cell_fields, num_cells, "cell", path);
    if (encoding == VtuEncoding::Binary) {
        write_binary_vtu(path, points, vtk_order, cell_type, cell_nodes, point_fields, cell_fields);
        return;
    }
    write_file_atomically(path, [&](std::ostream& out) {
        out << std::setprecision(std::numeric_limits<double>::max_digits10);
        out << "<?xml version=\"1.0\"?>\n"
            << "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
               "header_type=\"UInt64\">\n"
            << "  <UnstructuredGrid>\n"
            << "    <Piece NumberOfPoints=\"" << points.size() << "\" NumberOfCells=\"" << num_cells
            << "\">\n";
        out << "      <PointData>\n";
        write_fields(out, point_fields);
        out << "      </PointData>\n      <CellData>\n";
        write_fields(out, cell_fields);
        out << "      </CellData>\n";
        out << "      <Points>\n"
            << "        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n";
        for (const Vec3& p : points)
            out << "          " << p[0] << ' ' << p[1] << ' ' << p[2] << '\n';
        out << "        </DataArray>\n      </Points>\n      <Cells>\n";
        out << "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n";
        for (std::size_t c = 0; c < num_cells; ++c) {
            out << "         ";
            for (int local : vtk_order)
                out << ' ' << cell_nodes[c * per_cell + static_cast<std::size_t>(local)];
            out << '\n';
        }
        out << "        </DataArray>\n";
        out << "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n";
        for (std::size_t i = 0; i < num_cells; ++i)
            out << ((i % 16 == 0) ? "          " : " ") << per_cell * (i + 1)
                << ((i % 16 == 15 || i + 1 == num_cells) ? "\n" : "");
        out << "        </DataArray>\n";
        out << "        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n";
        for (std::size_t i = 0; i < num_cells; ++i)
            out << ((i % 32 == 0) ? "          " : " ") << cell_type
                << ((i % 32 == 31 || i + 1 == num_cells) ? "\n" : "");
        out << "        </DataArray>\n      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n"
            << "</VTKFile>\n";
    });
}

void write_pvd(const std::filesystem::path& path, const std::vector<PvdEntry>& entries) {
    write_file_atomically(path, [&](std::ostream& out) {
        out << std::setprecision(std::numeric_limits<double>::max_digits10);
        out << "<?xml version=\"1.0\"?>\n"
            << "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
            << "  <Collection>\n";
        for (const PvdEntry& e : entries)
            out << "    <DataSet timestep=\"" << e.time << "\" group=\"\" part=\"0\" file=\""
                << xml_escape(e.file) << "\"/>\n";
        out << "  </Collection>\n</VTKFile>\n";
    });
}

void write_vtu(const std::filesystem::path& path, const TetMesh& mesh,
               const std::vector<VtuField>& point_fields,
               const std::vector<VtuField>& cell_fields) {
    // The linear mesh is the order-1 case: its cells are their own node lists.
    std::vector<Index> cell_nodes;
    cell_nodes.reserve(4 * mesh.cells.size());
    for (const Cell& c : mesh.cells) cell_nodes.insert(cell_nodes.end(), c.begin(), c.end());
    write_vtu(path, mesh.positions, 1, cell_nodes, point_fields, cell_fields);
}

} // namespace edn
