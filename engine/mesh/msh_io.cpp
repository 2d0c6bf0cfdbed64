#include "mesh/msh_io.hpp"

#include "core/error.hpp"
#include "core/input_file.hpp"

#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

namespace edn {

namespace {

constexpr int gmsh_tetrahedron = 4;     ///< 4-node tetrahedron
constexpr int gmsh_tetrahedron_10 = 11; ///< 10-node tetrahedron: corners first, used as linear

/// Lines of a .msh file split into tokens; blank lines are skipped (Gmsh never writes them, but
/// hand-edited files have them).
class MshLines {
public:
    MshLines(std::string text, std::string name) : text_(std::move(text)), name_(std::move(name)) {}

    /// Next non-blank line into `tokens`; false at end of file.
    bool next(std::vector<std::string>& tokens) {
        while (pos_ < text_.size()) {
            std::size_t end = text_.find('\n', pos_);
            if (end == std::string::npos) end = text_.size();
            ++line_;
            tokens.clear();
            std::size_t i = pos_;
            while (i < end) {
                while (i < end && std::isspace(static_cast<unsigned char>(text_[i]))) ++i;
                std::size_t j = i;
                while (j < end && !std::isspace(static_cast<unsigned char>(text_[j]))) ++j;
                if (j > i) tokens.push_back(text_.substr(i, j - i));
                i = j;
            }
            pos_ = end + 1;
            if (!tokens.empty()) return true;
        }
        return false;
    }

    /// Next line, which must exist: `what` names what was expected.
    void require(std::vector<std::string>& tokens, const std::string& what) {
        EDN_VERIFY(next(tokens), ErrorCode::Parse,
                   where() << ": unexpected end of file, expected " << what);
    }

    /// "file:line" for messages.
    std::string where() const { return name_ + ":" + std::to_string(line_); }

    long long integer(const std::string& token, const char* what) const {
        char* end = nullptr;
        errno = 0;
        const long long value = std::strtoll(token.c_str(), &end, 10);
        EDN_VERIFY(end == token.c_str() + token.size() && errno != ERANGE, ErrorCode::Parse,
                   where() << ": " << what << ": not an integer: '" << token << "'");
        return value;
    }

    double real(const std::string& token, const char* what) const {
        char* end = nullptr;
        const double value = std::strtod(token.c_str(), &end);
        EDN_VERIFY(end == token.c_str() + token.size(), ErrorCode::Parse,
                   where() << ": " << what << ": not a number: '" << token << "'");
        return value;
    }

    /// Count from a header, checked to be a sane non-negative size.
    long long count(const std::string& token, const char* what) const {
        const long long value = integer(token, what);
        EDN_VERIFY(value >= 0 && value < std::numeric_limits<Index>::max(), ErrorCode::Parse,
                   where() << ": invalid " << what << " " << value);
        return value;
    }

    void expect_fields(const std::vector<std::string>& tokens, std::size_t expected,
                       const char* what) const {
        EDN_VERIFY(tokens.size() == expected, ErrorCode::Parse,
                   where() << ": expected " << expected << " values for " << what << ", found "
                           << tokens.size());
    }

    void expect_end(const std::string& section) {
        std::vector<std::string> tokens;
        require(tokens, "$End" + section);
        EDN_VERIFY(tokens[0] == "$End" + section, ErrorCode::Parse,
                   where() << ": expected $End" << section << ", found '" << tokens[0] << "'");
    }

private:
    std::string text_;
    std::string name_;
    std::size_t pos_ = 0;
    int line_ = 0;
};

/// A tetrahedron as read: node tags are resolved once all sections are read.
struct RawTet {
    long long tag;
    std::array<long long, 4> nodes;
    std::string where;
};

struct MshContents {
    std::unordered_map<long long, Index> position_of; ///< node tag -> dense index
    std::vector<Vec3> positions;
    std::vector<RawTet> tets;
    long long elements = 0;
    bool has_nodes = false;
    bool has_elements = false;
};

void add_node(MshContents& msh, MshLines& lines, long long tag, const Vec3& p) {
    for (double x : p)
        EDN_VERIFY(std::isfinite(x), ErrorCode::NonFinite,
                   lines.where() << ": node " << tag << " has a non-finite coordinate");
    const bool inserted =
        msh.position_of.emplace(tag, static_cast<Index>(msh.positions.size())).second;
    EDN_VERIFY(inserted, ErrorCode::Parse,
               lines.where() << ": node tag " << tag << " appears twice");
    msh.positions.push_back(p);
}

Vec3 read_point(MshLines& lines, const std::vector<std::string>& tokens, std::size_t first) {
    return {lines.real(tokens[first], "coordinate"), lines.real(tokens[first + 1], "coordinate"),
            lines.real(tokens[first + 2], "coordinate")};
}

void read_nodes_v2(MshContents& msh, MshLines& lines) {
    std::vector<std::string> tokens;
    lines.require(tokens, "number of nodes");
    lines.expect_fields(tokens, 1, "the number of nodes");
    const long long count = lines.count(tokens[0], "number of nodes");
    for (long long i = 0; i < count; ++i) {
        lines.require(tokens, "node " + std::to_string(i + 1) + " of " + std::to_string(count));
        lines.expect_fields(tokens, 4, "a node");
        add_node(msh, lines, lines.integer(tokens[0], "node tag"), read_point(lines, tokens, 1));
    }
    lines.expect_end("Nodes");
}

void read_elements_v2(MshContents& msh, MshLines& lines) {
    std::vector<std::string> tokens;
    lines.require(tokens, "number of elements");
    lines.expect_fields(tokens, 1, "the number of elements");
    const long long count = lines.count(tokens[0], "number of elements");
    for (long long i = 0; i < count; ++i) {
        lines.require(tokens, "element " + std::to_string(i + 1) + " of " + std::to_string(count));
        EDN_VERIFY(tokens.size() >= 3, ErrorCode::Parse,
                   lines.where() << ": an element needs at least 3 values, found "
                                 << tokens.size());
        const long long tag = lines.integer(tokens[0], "element tag");
        const long long type = lines.integer(tokens[1], "element type");
        const long long num_tags = lines.integer(tokens[2], "number of tags");
        EDN_VERIFY(num_tags >= 0 && static_cast<std::size_t>(num_tags) + 3 <= tokens.size(),
                   ErrorCode::Parse,
                   lines.where() << ": element " << tag << ": invalid number of tags " << num_tags);
        ++msh.elements;
        if (type != gmsh_tetrahedron && type != gmsh_tetrahedron_10) continue;
        const std::size_t first = 3 + static_cast<std::size_t>(num_tags);
        lines.expect_fields(tokens, first + (type == gmsh_tetrahedron ? 4 : 10), "a tetrahedron");
        RawTet tet{tag, {}, lines.where()};
        for (int k = 0; k < 4; ++k) tet.nodes[k] = lines.integer(tokens[first + k], "node tag");
        msh.tets.push_back(tet);
    }
    lines.expect_end("Elements");
}

void read_nodes_v41(MshContents& msh, MshLines& lines) {
    std::vector<std::string> tokens;
    lines.require(tokens, "$Nodes header");
    lines.expect_fields(tokens, 4, "the $Nodes header");
    const long long blocks = lines.count(tokens[0], "number of entity blocks");
    const long long total = lines.count(tokens[1], "number of nodes");
    long long read = 0;
    std::vector<long long> tags;
    for (long long b = 0; b < blocks; ++b) {
        lines.require(tokens, "node entity block header");
        lines.expect_fields(tokens, 4, "a node entity block header");
        const long long dimension = lines.integer(tokens[0], "entity dimension");
        const long long parametric = lines.integer(tokens[2], "parametric flag");
        const long long count = lines.count(tokens[3], "number of nodes in block");
        EDN_VERIFY(dimension >= 0 && dimension <= 3, ErrorCode::Parse,
                   lines.where() << ": invalid entity dimension " << dimension);
        EDN_VERIFY(parametric == 0 || parametric == 1, ErrorCode::Parse,
                   lines.where() << ": invalid parametric flag " << parametric);
        // All tags of the block come first, then all coordinates (plus u, v, w when parametric).
        tags.clear();
        for (long long i = 0; i < count; ++i) {
            lines.require(tokens, "node tag");
            lines.expect_fields(tokens, 1, "a node tag");
            tags.push_back(lines.integer(tokens[0], "node tag"));
        }
        const std::size_t fields = 3 + (parametric ? static_cast<std::size_t>(dimension) : 0);
        for (long long i = 0; i < count; ++i) {
            lines.require(tokens, "node coordinates");
            lines.expect_fields(tokens, fields, "node coordinates");
            add_node(msh, lines, tags[i], read_point(lines, tokens, 0));
        }
        read += count;
    }
    EDN_VERIFY(read == total, ErrorCode::Parse,
               lines.where() << ": $Nodes declares " << total << " nodes, blocks hold " << read);
    lines.expect_end("Nodes");
}

void read_elements_v41(MshContents& msh, MshLines& lines) {
    std::vector<std::string> tokens;
    lines.require(tokens, "$Elements header");
    lines.expect_fields(tokens, 4, "the $Elements header");
    const long long blocks = lines.count(tokens[0], "number of entity blocks");
    const long long total = lines.count(tokens[1], "number of elements");
    long long read = 0;
    for (long long b = 0; b < blocks; ++b) {
        lines.require(tokens, "element entity block header");
        lines.expect_fields(tokens, 4, "an element entity block header");
        const long long type = lines.integer(tokens[2], "element type");
        const long long count = lines.count(tokens[3], "number of elements in block");
        const bool tetrahedra = type == gmsh_tetrahedron || type == gmsh_tetrahedron_10;
        for (long long i = 0; i < count; ++i) {
            lines.require(tokens, "element");
            if (!tetrahedra) continue;
            lines.expect_fields(tokens, type == gmsh_tetrahedron ? 5 : 11, "a tetrahedron");
            RawTet tet{lines.integer(tokens[0], "element tag"), {}, lines.where()};
            for (int k = 0; k < 4; ++k) tet.nodes[k] = lines.integer(tokens[1 + k], "node tag");
            msh.tets.push_back(tet);
        }
        read += count;
    }
    msh.elements += read;
    EDN_VERIFY(read == total, ErrorCode::Parse,
               lines.where() << ": $Elements declares " << total << " elements, blocks hold "
                             << read);
    lines.expect_end("Elements");
}

} // namespace

TetMesh read_msh(const std::filesystem::path& path) {
    const std::string name = path.string();
    verify_regular_file(path);
    std::ifstream in(path, std::ios::binary);
    EDN_VERIFY(in.good(), ErrorCode::Io, name << ": cannot open for reading");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    EDN_VERIFY(!in.bad(), ErrorCode::Io, name << ": read failed");

    MshLines lines(std::move(buffer).str(), name);
    std::vector<std::string> tokens;
    EDN_VERIFY(lines.next(tokens) && tokens[0] == "$MeshFormat", ErrorCode::Parse,
               name << ": not a Gmsh file (no $MeshFormat at the start)");
    lines.require(tokens, "version line");
    lines.expect_fields(tokens, 3, "the format line '<version> <file-type> <data-size>'");
    const double version = lines.real(tokens[0], "version");
    const long long file_type = lines.integer(tokens[1], "file type");
    EDN_VERIFY(file_type != 1, ErrorCode::Parse,
               name << ": binary .msh is not supported (save as ASCII)");
    EDN_VERIFY(file_type == 0, ErrorCode::Parse,
               lines.where() << ": invalid file type " << file_type);
    const bool v2 = version >= 2.0 && version < 3.0;
    const bool v41 = std::abs(version - 4.1) < 1e-9;
    EDN_VERIFY(v2 || v41, ErrorCode::Parse,
               name << ": .msh version " << tokens[0] << " is not supported (2.2 and 4.1 are)");
    lines.expect_end("MeshFormat");

    MshContents msh;
    while (lines.next(tokens)) {
        const std::string& head = tokens[0];
        EDN_VERIFY(head.size() > 1 && head[0] == '$', ErrorCode::Parse,
                   lines.where() << ": expected a section ($Name), found '" << head << "'");
        const std::string section = head.substr(1);
        if (section == "Nodes") {
            EDN_VERIFY(!msh.has_nodes, ErrorCode::Parse,
                       lines.where() << ": second $Nodes section");
            msh.has_nodes = true;
            v2 ? read_nodes_v2(msh, lines) : read_nodes_v41(msh, lines);
        } else if (section == "Elements") {
            EDN_VERIFY(!msh.has_elements, ErrorCode::Parse,
                       lines.where() << ": second $Elements section");
            msh.has_elements = true;
            v2 ? read_elements_v2(msh, lines) : read_elements_v41(msh, lines);
        } else {
            // $Entities, $PhysicalNames, $NodeData, comments...: skipped up to their end.
            const std::string end = "$End" + section;
            do {
                lines.require(tokens, end);
            } while (tokens[0] != end);
        }
    }
    EDN_VERIFY(msh.has_nodes, ErrorCode::Parse, name << ": no $Nodes section");
    EDN_VERIFY(msh.has_elements, ErrorCode::Parse, name << ": no $Elements section");
    EDN_VERIFY(!msh.tets.empty(), ErrorCode::EmptyMesh,
               name << ": no tetrahedra (element type 4) among " << msh.elements << " elements");

    TetMesh mesh;
    mesh.positions = std::move(msh.positions);
    mesh.cells.reserve(msh.tets.size());
    for (const RawTet& tet : msh.tets) {
        Cell cell{};
        for (int k = 0; k < 4; ++k) {
            const auto it = msh.position_of.find(tet.nodes[k]);
            EDN_VERIFY(it != msh.position_of.end(), ErrorCode::IndexOutOfRange,
                       tet.where << ": element " << tet.tag << " references node " << tet.nodes[k]
                                 << ", which is not in $Nodes (" << mesh.positions.size()
                                 << " nodes)");
            cell[k] = it->second;
        }
        mesh.cells.push_back(cell);
    }
    return mesh;
}

} // namespace edn
