// Binary little-endian PLY surfaces: the writer of the surface series and a reader for tests and
// tools (it reads what common exporters write for triangle meshes, not every PLY variant).
#include "mesh/ply_io.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace edn {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the PLY writer stores native bytes as little-endian");

/// Appends the bytes of `value` to `out`.
template <typename T> void put(std::string& out, T value) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out.append(bytes, sizeof(T));
}

/// Size in bytes of a PLY scalar type name (0 when unknown).
std::size_t type_size(const std::string& type) {
    if (type == "char" || type == "uchar" || type == "int8" || type == "uint8") return 1;
    if (type == "short" || type == "ushort" || type == "int16" || type == "uint16") return 2;
    if (type == "int" || type == "uint" || type == "int32" || type == "uint32" || type == "float" ||
        type == "float32")
        return 4;
    if (type == "double" || type == "float64") return 8;
    return 0;
}

/// Reads one scalar of PLY type `type` at `bytes` as a double.
double read_scalar(const std::string& type, const char* bytes) {
    auto get = [bytes]<typename T>(T) {
        T v;
        std::memcpy(&v, bytes, sizeof(T));
        return static_cast<double>(v);
    };
    if (type == "char" || type == "int8") return get(std::int8_t{});
    if (type == "uchar" || type == "uint8") return get(std::uint8_t{});
    if (type == "short" || type == "int16") return get(std::int16_t{});
    if (type == "ushort" || type == "uint16") return get(std::uint16_t{});
    if (type == "int" || type == "int32") return get(std::int32_t{});
    if (type == "uint" || type == "uint32") return get(std::uint32_t{});
    if (type == "float" || type == "float32") return get(float{});
    return get(double{});
}

/// One property of an element: a scalar, or a list (count type + item type).
struct Property {
    std::string name;
    std::string type;       ///< scalar type, or the item type of a list
    std::string count_type; ///< list count type; empty for a scalar
};

/// One element of the header.
struct Element {
    std::string name;
    std::size_t count = 0;
    std::vector<Property> properties;
};

} // namespace

void write_ply_surface(const std::filesystem::path& path, const SurfaceMesh& surface) {
    std::string body;
    body.reserve(surface.positions.size() * 24 + surface.triangles.size() * 13);
    for (const Vec3& p : surface.positions)
        for (int d = 0; d < 3; ++d) put(body, p[d]);
    for (const Tri& t : surface.triangles) {
        put(body, std::uint8_t{3});
        for (int k = 0; k < 3; ++k) put(body, static_cast<std::int32_t>(t[k]));
    }
    write_file_atomically(path, [&](std::ostream& out) {
        out << "ply\nformat binary_little_endian 1.0\ncomment elastodyn surface\n"
            << "element vertex " << surface.positions.size() << "\n"
            << "property double x\nproperty double y\nproperty double z\n"
            << "element face " << surface.triangles.size() << "\n"
            << "property list uchar int vertex_indices\nend_header\n";
        out.write(body.data(), static_cast<std::streamsize>(body.size()));
    });
}

SurfaceMesh read_ply_surface(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    EDN_VERIFY(in.good(), ErrorCode::Io, path.string() << ": cannot open");
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    auto fail = [&](const std::string& what) {
        EDN_THROW(ErrorCode::Parse, path.string()
                                        << ": not a binary PLY triangle surface: " << what);
    };
    const std::size_t header_end = text.find("end_header\n");
    if (text.rfind("ply\n", 0) != 0 || header_end == std::string::npos) fail("no PLY header");
    std::istringstream header(text.substr(4, header_end - 4));
    std::vector<Element> elements;
    bool little_endian = false;
    for (std::string line; std::getline(header, line);) {
        std::istringstream words(line);
        std::string keyword;
        words >> keyword;
        if (keyword == "format") {
            std::string format;
            words >> format;
            little_endian = format == "binary_little_endian";
        } else if (keyword == "element") {
            Element e;
            words >> e.name >> e.count;
            if (!words) fail("bad element line '" + line + "'");
            elements.push_back(e);
        } else if (keyword == "property") {
            if (elements.empty()) fail("property before any element");
            Property p;
            words >> p.type;
            if (p.type == "list") words >> p.count_type >> p.type;
            words >> p.name;
            if (!words || type_size(p.type) == 0 ||
                (!p.count_type.empty() && type_size(p.count_type) == 0))
                fail("bad property line '" + line + "'");
            elements.back().properties.push_back(p);
        } else if (keyword != "comment" && keyword != "obj_info" && !keyword.empty()) {
            fail("unknown header line '" + line + "'");
        }
    }
    if (!little_endian) fail("only format binary_little_endian is read");

    SurfaceMesh surface;
    std::size_t at = header_end + std::string("end_header\n").size();
    auto need = [&](std::size_t bytes) {
        if (text.size() - at < bytes) fail("file ends inside the data");
    };
    for (const Element& e : elements) {
        for (std::size_t item = 0; item < e.count; ++item) {
            Vec3 p{};
            std::vector<double> indices;
            for (const Property& prop : e.properties) {
                if (prop.count_type.empty()) {
                    need(type_size(prop.type));
                    const double value = read_scalar(prop.type, text.data() + at);
                    at += type_size(prop.type);
                    if (e.name == "vertex" && prop.name.size() == 1 && prop.name[0] >= 'x' &&
                        prop.name[0] <= 'z')
                        p[prop.name[0] - 'x'] = value;
                    continue;
                }
                need(type_size(prop.count_type));
                const double count = read_scalar(prop.count_type, text.data() + at);
                at += type_size(prop.count_type);
                if (!(count >= 0)) fail("negative list count");
                const auto n = static_cast<std::size_t>(count);
                need(n * type_size(prop.type));
                for (std::size_t k = 0; k < n; ++k, at += type_size(prop.type))
                    if (e.name == "face" && prop.name == "vertex_indices")
                        indices.push_back(read_scalar(prop.type, text.data() + at));
            }
            if (e.name == "vertex") surface.positions.push_back(p);
            if (e.name == "face") {
                if (indices.size() != 3) fail("a face is not a triangle");
                Tri t{};
                for (int k = 0; k < 3; ++k) {
                    EDN_VERIFY(indices[k] >= 0 &&
                                   indices[k] < static_cast<double>(surface.positions.size()),
                               ErrorCode::IndexOutOfRange,
                               path.string()
                                   << ": face " << surface.triangles.size() + 1 << " uses vertex "
                                   << indices[k] + 1 << " of " << surface.positions.size());
                    t[k] = static_cast<Index>(indices[k]);
                }
                surface.triangles.push_back(t);
            }
        }
    }
    return surface;
}

} // namespace edn
