// read_vtu: reads back what write_vtu writes (both encodings), for round-trip tests and tools.
#include "core/error.hpp"
#include "mesh/vtu_io.hpp"

#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace edn {

namespace {

/// The attributes of one XML tag (`tag` is the text between '<' and '>').
std::map<std::string, std::string> attributes_of(const std::string& tag) {
    std::map<std::string, std::string> result;
    static const std::regex attribute(R"re(([A-Za-z_]+)="([^"]*)")re");
    for (auto it = std::sregex_iterator(tag.begin(), tag.end(), attribute);
         it != std::sregex_iterator(); ++it)
        result[(*it)[1]] = (*it)[2];
    return result;
}

/// Copies `count` values of type T from raw little-endian bytes into doubles.
template <typename T> std::vector<double> decode(const char* bytes, std::size_t count) {
    std::vector<double> values(count);
    for (std::size_t i = 0; i < count; ++i) {
        T v;
        std::memcpy(&v, bytes + i * sizeof(T), sizeof(T));
        values[i] = static_cast<double>(v);
    }
    return values;
}

} // namespace

VtuData read_vtu(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    EDN_VERIFY(in.good(), ErrorCode::Io, path.string() << ": cannot open");
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    auto fail = [&](const std::string& what) {
        EDN_THROW(ErrorCode::Parse, path.string() << ": not a .vtu of elastodyn: " << what);
    };
    if (text.find("<VTKFile type=\"UnstructuredGrid\"") == std::string::npos)
        fail("no UnstructuredGrid VTKFile");
    // Raw appended data starts after the '_' that follows <AppendedData ...>.
    const std::size_t appended = text.find("<AppendedData");
    const std::size_t xml_end = appended == std::string::npos ? text.size() : appended;
    std::size_t data_start = std::string::npos;
    if (appended != std::string::npos) {
        data_start = text.find('_', appended);
        if (data_start == std::string::npos) fail("AppendedData without '_'");
        ++data_start;
    }
    const std::size_t piece = text.find("<Piece");
    if (piece == std::string::npos || piece > xml_end) fail("no Piece");
    const auto piece_attributes = attributes_of(text.substr(piece, text.find('>', piece) - piece));
    if (!piece_attributes.count("NumberOfPoints") || !piece_attributes.count("NumberOfCells"))
        fail("Piece without NumberOfPoints / NumberOfCells");
    const std::size_t num_points = std::stoull(piece_attributes.at("NumberOfPoints"));
    const std::size_t num_cells = std::stoull(piece_attributes.at("NumberOfCells"));

    VtuData data;
    for (std::size_t at = text.find("<DataArray", piece); at < xml_end;
         at = text.find("<DataArray", at + 1)) {
        const std::size_t tag_end = text.find('>', at);
        if (tag_end == std::string::npos || tag_end > xml_end) fail("unterminated DataArray");
        const auto a = attributes_of(text.substr(at, tag_end - at));
        const std::string type = a.count("type") ? a.at("type") : "";
        const std::string format = a.count("format") ? a.at("format") : "";
        const int components =
            a.count("NumberOfComponents") ? std::stoi(a.at("NumberOfComponents")) : 1;
        std::vector<double> values;
        if (format == "ascii") {
            const std::size_t end = text.find("</DataArray>", tag_end);
            if (end == std::string::npos || end > xml_end) fail("unterminated DataArray");
            std::istringstream numbers(text.substr(tag_end + 1, end - tag_end - 1));
            for (double v; numbers >> v;) values.push_back(v);
            if (!numbers.eof()) fail("non-numeric DataArray value");
        } else if (format == "appended" && data_start != std::string::npos && a.count("offset")) {
            const std::size_t offset = data_start + std::stoull(a.at("offset"));
            std::uint64_t bytes = 0;
            if (offset + sizeof bytes > text.size()) fail("appended offset past the end");
            std::memcpy(&bytes, text.data() + offset, sizeof bytes);
            if (offset + sizeof bytes + bytes > text.size()) fail("appended array past the end");
            const char* raw = text.data() + offset + sizeof bytes;
            const std::size_t size = type == "UInt8" ? 1 : 8;
            if (bytes % size != 0) fail("appended byte count");
            if (type == "Float64")
                values = decode<double>(raw, bytes / 8);
            else if (type == "Int64")
                values = decode<std::int64_t>(raw, bytes / 8);
            else if (type == "UInt8")
                values = decode<std::uint8_t>(raw, bytes);
            else
                fail("DataArray type '" + type + "'");
        } else {
            fail("DataArray format '" + format + "'");
        }
        // Which section holds it: the nearest opening section tag before it.
        std::size_t best = 0;
        std::string section;
        for (const char* name : {"<PointData", "<CellData", "<Points", "<Cells"}) {
            const std::size_t p = text.rfind(name, at);
            if (p != std::string::npos && p >= best) best = p, section = name;
        }
        const std::string name = a.count("Name") ? a.at("Name") : "";
        if (section == "<Points") {
            if (components != 3 || values.size() != 3 * num_points) fail("Points size");
            data.points.resize(num_points);
            for (std::size_t i = 0; i < num_points; ++i)
                data.points[i] = {values[3 * i], values[3 * i + 1], values[3 * i + 2]};
        } else if (section == "<Cells") {
            if (name == "connectivity")
                data.connectivity.assign(values.begin(), values.end());
            else if (name == "offsets")
                data.offsets.assign(values.begin(), values.end());
            else if (name == "types")
                data.types.assign(values.begin(), values.end());
        } else {
            const bool point = section == "<PointData";
            const std::size_t count = point ? num_points : num_cells;
            if (values.size() != count * static_cast<std::size_t>(components))
                fail("size of field '" + name + "'");
            (point ? data.point_fields : data.cell_fields)
                .push_back({name, components, std::move(values)});
        }
    }
    if (data.points.size() != num_points || data.offsets.size() != num_cells ||
        data.types.size() != num_cells ||
        (num_cells > 0 &&
         data.connectivity.size() != static_cast<std::size_t>(data.offsets.back())))
        fail("points or cells missing");
    return data;
}

} // namespace edn
