#include "mesh/tetgen_io.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

namespace edn {

namespace {

/// The data lines of a TetGen file: '#' comments removed, blank lines skipped, split into
/// whitespace-separated tokens, with the line number kept for messages.
class DataLines {
public:
    explicit DataLines(const std::filesystem::path& path) : name_(path.string()) {
        verify_regular_file(path);
        in_.open(path, std::ios::binary);
        EDN_VERIFY(in_.good(), ErrorCode::Io, name_ << ": cannot open for reading");
    }

    /// Next data line into `tokens`; false at end of file.
    bool next(std::vector<std::string>& tokens) {
        std::string line;
        while (std::getline(in_, line)) {
            ++line_;
            tokens.clear();
            const std::size_t hash = line.find('#');
            if (hash != std::string::npos) line.resize(hash);
            std::size_t i = 0;
            while (i < line.size()) {
                while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
                std::size_t j = i;
                while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
                if (j > i) tokens.push_back(line.substr(i, j - i));
                i = j;
            }
            if (!tokens.empty()) return true;
        }
        EDN_VERIFY(!in_.bad(), ErrorCode::Io, name_ << ": read failed");
        return false;
    }

    /// "file:line" for messages.
    std::string where() const { return name_ + ":" + std::to_string(line_); }
    const std::string& name() const { return name_; }

    long long integer(const std::string& token, const char* what) const {
        char* end = nullptr;
        errno = 0;
        const long long value = std::strtoll(token.c_str(), &end, 10);
        EDN_VERIFY(!token.empty() && end == token.c_str() + token.size() && errno != ERANGE,
                   ErrorCode::Parse,
                   where() << ": " << what << ": not an integer: '" << token << "'");
        return value;
    }

    double real(const std::string& token, const char* what) const {
        char* end = nullptr;
        const double value = std::strtod(token.c_str(), &end);
        EDN_VERIFY(!token.empty() && end == token.c_str() + token.size(), ErrorCode::Parse,
                   where() << ": " << what << ": not a number: '" << token << "'");
        return value;
    }

private:
    std::string name_;
    std::ifstream in_;
    int line_ = 0;
};

/// Both paths of a pair from either one (or from the common stem).
std::filesystem::path with_extension(const std::filesystem::path& path, const char* extension) {
    std::filesystem::path base = path;
    if (base.extension() == ".node" || base.extension() == ".ele") base.replace_extension();
    base += extension;
    return base;
}

} // namespace

TetMesh read_node_ele(const std::filesystem::path& node_path) {
    const std::filesystem::path nodes_file = with_extension(node_path, ".node");
    const std::filesystem::path cells_file = with_extension(node_path, ".ele");
    TetMesh mesh;
    std::unordered_map<long long, Index> position_of; // stated node index -> position
    std::vector<std::string> tokens;

    {
        DataLines lines(nodes_file);
        EDN_VERIFY(lines.next(tokens), ErrorCode::EmptyMesh, lines.name() << ": empty file");
        EDN_VERIFY(tokens.size() == 4, ErrorCode::Parse,
                   lines.where() << ": header must be '<#points> 3 <#attributes> <0|1 markers>', "
                                 << "found " << tokens.size() << " values");
        const long long count = lines.integer(tokens[0], "number of points");
        const long long dimension = lines.integer(tokens[1], "dimension");
        const long long attributes = lines.integer(tokens[2], "number of attributes");
        const long long markers = lines.integer(tokens[3], "number of boundary markers");
        EDN_VERIFY(count >= 0 && count < std::numeric_limits<Index>::max(), ErrorCode::Parse,
                   lines.where() << ": invalid number of points " << count);
        EDN_VERIFY(count > 0, ErrorCode::EmptyMesh,
                   lines.where() << ": 0 points (points stored in .poly/.smesh are not supported)");
        EDN_VERIFY(dimension == 3, ErrorCode::Parse,
                   lines.where() << ": dimension " << dimension << ", expected 3");
        EDN_VERIFY(attributes >= 0 && attributes < 1000, ErrorCode::Parse,
                   lines.where() << ": invalid number of attributes " << attributes);
        EDN_VERIFY(markers == 0 || markers == 1, ErrorCode::Parse,
                   lines.where() << ": number of boundary markers must be 0 or 1, found "
                                 << markers);
        const auto expected = static_cast<std::size_t>(4 + attributes + markers);
        mesh.positions.reserve(static_cast<std::size_t>(count));
        for (long long i = 0; i < count; ++i) {
            EDN_VERIFY(lines.next(tokens), ErrorCode::Parse,
                       lines.where() << ": unexpected end of file: " << count
                                     << " points declared, " << i << " found");
            EDN_VERIFY(tokens.size() == expected, ErrorCode::Parse,
                       lines.where() << ": expected " << expected << " values for a point, found "
                                     << tokens.size());
            const long long index = lines.integer(tokens[0], "point index");
            Vec3 p{};
            for (int k = 0; k < 3; ++k) {
                p[k] = lines.real(tokens[1 + k], "coordinate");
                EDN_VERIFY(std::isfinite(p[k]), ErrorCode::NonFinite,
                           lines.where() << ": node " << index << " has a non-finite coordinate");
            }
            for (std::size_t k = 4; k < 4 + static_cast<std::size_t>(attributes); ++k)
                lines.real(tokens[k], "attribute");
            if (markers) lines.integer(tokens.back(), "boundary marker");
            const bool inserted =
                position_of.emplace(index, static_cast<Index>(mesh.positions.size())).second;
            EDN_VERIFY(inserted, ErrorCode::Parse,
                       lines.where() << ": node index " << index << " appears twice");
            mesh.positions.push_back(p);
        }
        EDN_VERIFY(!lines.next(tokens), ErrorCode::Parse,
                   lines.where() << ": unexpected data after the " << count << " declared points");
    }

    {
        DataLines lines(cells_file);
        EDN_VERIFY(lines.next(tokens), ErrorCode::EmptyMesh, lines.name() << ": empty file");
        EDN_VERIFY(tokens.size() == 2 || tokens.size() == 3, ErrorCode::Parse,
                   lines.where() << ": header must be '<#tetrahedra> <4|10> <#attributes>', found "
                                 << tokens.size() << " values");
        const long long count = lines.integer(tokens[0], "number of tetrahedra");
        const long long per_cell = lines.integer(tokens[1], "nodes per tetrahedron");
        const long long attributes =
            tokens.size() == 3 ? lines.integer(tokens[2], "number of attributes") : 0;
        EDN_VERIFY(count >= 0 && count < std::numeric_limits<Index>::max(), ErrorCode::Parse,
                   lines.where() << ": invalid number of tetrahedra " << count);
        EDN_VERIFY(count > 0, ErrorCode::EmptyMesh, lines.where() << ": 0 tetrahedra");
        EDN_VERIFY(per_cell == 4 || per_cell == 10, ErrorCode::Parse,
                   lines.where() << ": nodes per tetrahedron must be 4 or 10, found " << per_cell);
        EDN_VERIFY(attributes >= 0 && attributes < 1000, ErrorCode::Parse,
                   lines.where() << ": invalid number of attributes " << attributes);
        const auto expected = static_cast<std::size_t>(1 + per_cell + attributes);
        mesh.cells.reserve(static_cast<std::size_t>(count));
        for (long long i = 0; i < count; ++i) {
            EDN_VERIFY(lines.next(tokens), ErrorCode::Parse,
                       lines.where() << ": unexpected end of file: " << count
                                     << " tetrahedra declared, " << i << " found");
            EDN_VERIFY(tokens.size() == expected, ErrorCode::Parse,
                       lines.where() << ": expected " << expected
                                     << " values for a tetrahedron, found " << tokens.size());
            const long long index = lines.integer(tokens[0], "tetrahedron index");
            Cell cell{};
            // 10-node tetrahedra list their 4 corners first; the mid-edge nodes are dropped.
            for (int k = 0; k < 4; ++k) {
                const long long node = lines.integer(tokens[1 + k], "node index");
                const auto it = position_of.find(node);
                EDN_VERIFY(it != position_of.end(), ErrorCode::IndexOutOfRange,
                           lines.where() << ": tetrahedron " << index << " references node " << node
                                         << ", which is not in " << nodes_file.string() << " ("
                                         << mesh.positions.size() << " nodes)");
                cell[k] = it->second;
            }
            for (std::size_t k = 5; k < expected; ++k) {
                if (k < static_cast<std::size_t>(1 + per_cell))
                    lines.integer(tokens[k], "node index");
                else
                    lines.real(tokens[k], "attribute");
            }
            mesh.cells.push_back(cell);
        }
        EDN_VERIFY(!lines.next(tokens), ErrorCode::Parse,
                   lines.where() << ": unexpected data after the " << count
                                 << " declared tetrahedra");
    }
    return mesh;
}

void write_node_ele(const std::filesystem::path& node_path, const TetMesh& mesh) {
    const std::filesystem::path nodes_file = with_extension(node_path, ".node");
    const std::filesystem::path cells_file = with_extension(node_path, ".ele");
    write_file_atomically(nodes_file, [&](std::ostream& out) {
        out << "# elastodyn: <#points> <dimension> <#attributes> <#boundary markers>\n";
        out << mesh.positions.size() << " 3 0 0\n";
        out << std::setprecision(std::numeric_limits<double>::max_digits10);
        for (std::size_t i = 0; i < mesh.positions.size(); ++i) {
            const Vec3& p = mesh.positions[i];
            out << i << ' ' << p[0] << ' ' << p[1] << ' ' << p[2] << '\n';
        }
    });
    write_file_atomically(cells_file, [&](std::ostream& out) {
        out << "# elastodyn: <#tetrahedra> <nodes per tetrahedron> <#attributes>\n";
        out << mesh.cells.size() << " 4 0\n";
        for (std::size_t i = 0; i < mesh.cells.size(); ++i) {
            const Cell& c = mesh.cells[i];
            out << i << ' ' << c[0] << ' ' << c[1] << ' ' << c[2] << ' ' << c[3] << '\n';
        }
    });
}

} // namespace edn
