#include "mesh/vtu_io.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"

#include <iomanip>
#include <limits>
#include <ostream>

namespace edn {

namespace {

constexpr int vtk_tetra = 10;

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

} // namespace

void write_vtu(const std::filesystem::path& path, const TetMesh& mesh,
               const std::vector<VtuField>& point_fields,
               const std::vector<VtuField>& cell_fields) {
    verify_fields(point_fields, mesh.positions.size(), "point", path);
    verify_fields(cell_fields, mesh.cells.size(), "cell", path);
    write_file_atomically(path, [&](std::ostream& out) {
        out << std::setprecision(std::numeric_limits<double>::max_digits10);
        out << "<?xml version=\"1.0\"?>\n"
            << "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
               "header_type=\"UInt64\">\n"
            << "  <UnstructuredGrid>\n"
            << "    <Piece NumberOfPoints=\"" << mesh.positions.size() << "\" NumberOfCells=\""
            << mesh.cells.size() << "\">\n";
        out << "      <PointData>\n";
        write_fields(out, point_fields);
        out << "      </PointData>\n      <CellData>\n";
        write_fields(out, cell_fields);
        out << "      </CellData>\n";
        out << "      <Points>\n"
            << "        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n";
        for (const Vec3& p : mesh.positions)
            out << "          " << p[0] << ' ' << p[1] << ' ' << p[2] << '\n';
        out << "        </DataArray>\n      </Points>\n      <Cells>\n";
        out << "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n";
        for (const Cell& c : mesh.cells)
            out << "          " << c[0] << ' ' << c[1] << ' ' << c[2] << ' ' << c[3] << '\n';
        out << "        </DataArray>\n";
        out << "        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n";
        for (std::size_t i = 0; i < mesh.cells.size(); ++i)
            out << ((i % 16 == 0) ? "          " : " ") << 4 * (i + 1)
                << ((i % 16 == 15 || i + 1 == mesh.cells.size()) ? "\n" : "");
        out << "        </DataArray>\n";
        out << "        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n";
        for (std::size_t i = 0; i < mesh.cells.size(); ++i)
            out << ((i % 32 == 0) ? "          " : " ") << vtk_tetra
                << ((i % 32 == 31 || i + 1 == mesh.cells.size()) ? "\n" : "");
        out << "        </DataArray>\n      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n"
            << "</VTKFile>\n";
    });
}

} // namespace edn
