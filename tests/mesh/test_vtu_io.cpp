#include "core/error.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "mesh/vtu_io.hpp"
#include "sparse/bin_bcsr_pattern.hpp"
#include "support/files.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>

namespace edn {
namespace {

namespace fs = std::filesystem;

/// One XML element as seen by the minimal reader below.
struct XmlElement {
    std::string name;
    std::map<std::string, std::string> attributes;
    std::string text; ///< character data directly inside the element
};

/// Minimal XML reader for the subset a .vtu uses: checks that tags nest and close properly and
/// that attribute values are quoted, and returns every element in document order.
std::vector<XmlElement> parse_xml(const std::string& xml) {
    std::vector<XmlElement> elements;
    std::vector<std::size_t> open;
    std::size_t i = 0;
    while (i < xml.size()) {
        if (xml[i] != '<') {
            const std::size_t next = xml.find('<', i);
            const std::string text = xml.substr(i, next - i);
            if (!open.empty())
                elements[open.back()].text += text;
            else
                EXPECT_EQ(text.find_first_not_of(" \n"), std::string::npos) << "text outside root";
            EXPECT_EQ(text.find_first_of("&>"), std::string::npos) << "unescaped character data";
            i = next == std::string::npos ? xml.size() : next;
            continue;
        }
        const std::size_t close = xml.find('>', i);
        if (close == std::string::npos) {
            ADD_FAILURE() << "unterminated tag at " << i;
            return elements;
        }
        std::string tag = xml.substr(i + 1, close - i - 1);
        i = close + 1;
        if (tag.starts_with("?")) {
            EXPECT_TRUE(tag.ends_with("?")) << tag;
            continue;
        }
        if (tag.starts_with("/")) {
            EXPECT_FALSE(open.empty()) << "closing tag without opening: " << tag;
            if (open.empty()) return elements;
            EXPECT_EQ(tag.substr(1), elements[open.back()].name) << "mismatched closing tag";
            open.pop_back();
            continue;
        }
        const bool self_closing = tag.ends_with("/");
        if (self_closing) tag.pop_back();
        XmlElement element;
        std::istringstream in(tag);
        in >> element.name;
        std::string rest;
        std::getline(in, rest);
        // name="value" pairs; values may hold escaped characters but no raw quotes or '<'.
        std::size_t p = 0;
        while ((p = rest.find_first_not_of(' ', p)) != std::string::npos) {
            const std::size_t eq = rest.find('=', p);
            EXPECT_NE(eq, std::string::npos) << rest;
            EXPECT_EQ(rest[eq + 1], '"') << "unquoted attribute in " << tag;
            const std::size_t end = rest.find('"', eq + 2);
            EXPECT_NE(end, std::string::npos) << rest;
            if (eq == std::string::npos || end == std::string::npos) return elements;
            element.attributes[rest.substr(p, eq - p)] = rest.substr(eq + 2, end - eq - 2);
            p = end + 1;
        }
        elements.push_back(element);
        if (!self_closing) open.push_back(elements.size() - 1);
    }
    EXPECT_TRUE(open.empty()) << "unclosed elements";
    return elements;
}

std::vector<double> numbers(const std::string& text) {
    std::istringstream in(text);
    std::vector<double> out;
    double x;
    while (in >> x) out.push_back(x);
    EXPECT_TRUE(in.eof()) << "non-numeric data";
    return out;
}

TetMesh two_tets() {
    TetMesh mesh;
    mesh.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1.0 / 3.0, 1, 1}};
    mesh.cells = {{0, 1, 2, 3}, {1, 2, 3, 4}};
    return mesh;
}

TEST(VtuIo, WritesWellFormedUnstructuredGrid) {
    const TetMesh mesh = two_tets();
    VtuField displacement{"displacement", 3, {}};
    for (int i = 0; i < 15; ++i) displacement.values.push_back(0.1 * i);
    VtuField stress{"von Mises <&>", 1, {2.5, -1e-300}};
    const test::TempDir scratch("edn_vtu");
    const fs::path path = scratch / "grid.vtu";
    write_vtu(path, mesh, {displacement}, {stress});
    const std::vector<XmlElement> elements = parse_xml(test::read_text(path));
    ASSERT_FALSE(elements.empty());
    EXPECT_EQ(elements[0].name, "VTKFile");
    EXPECT_EQ(elements[0].attributes.at("type"), "UnstructuredGrid");

    std::map<std::string, const XmlElement*> arrays;
    const XmlElement* piece = nullptr;
    int data_arrays = 0;
    for (const XmlElement& e : elements) {
        if (e.name == "Piece") piece = &e;
        if (e.name != "DataArray") continue;
        ++data_arrays;
        const auto name = e.attributes.find("Name");
        arrays[name == e.attributes.end() ? "Points" : name->second] = &e;
    }
    ASSERT_NE(piece, nullptr);
    EXPECT_EQ(piece->attributes.at("NumberOfPoints"), "5");
    EXPECT_EQ(piece->attributes.at("NumberOfCells"), "2");
    EXPECT_EQ(data_arrays, 6);

    ASSERT_TRUE(arrays.count("Points"));
    const auto points = numbers(arrays["Points"]->text);
    ASSERT_EQ(points.size(), 15u);
    for (int v = 0; v < 5; ++v)
        for (int k = 0; k < 3; ++k) EXPECT_EQ(points[3 * v + k], mesh.positions[v][k]);
    EXPECT_EQ(arrays["Points"]->attributes.at("type"), "Float64");

    const auto connectivity = numbers(arrays.at("connectivity")->text);
    ASSERT_EQ(connectivity.size(), 8u);
    for (int c = 0; c < 2; ++c)
        for (int k = 0; k < 4; ++k) EXPECT_EQ(connectivity[4 * c + k], mesh.cells[c][k]);
    EXPECT_EQ(arrays.at("connectivity")->attributes.at("type"), "Int64");
    EXPECT_EQ(numbers(arrays.at("offsets")->text), (std::vector<double>{4, 8}));
    EXPECT_EQ(numbers(arrays.at("types")->text), (std::vector<double>{10, 10}));

    ASSERT_TRUE(arrays.count("displacement"));
    EXPECT_EQ(arrays["displacement"]->attributes.at("NumberOfComponents"), "3");
    EXPECT_EQ(numbers(arrays["displacement"]->text), displacement.values);
    ASSERT_TRUE(arrays.count("von Mises &lt;&amp;&gt;"));
    EXPECT_EQ(numbers(arrays["von Mises &lt;&amp;&gt;"]->text), stress.values);
}

TEST(VtuIo, WrongFieldSizeIsRejectedWithoutOutput) {
    const test::TempDir scratch("edn_vtu");
    const fs::path path = scratch / "bad.vtu";
    VtuField wrong{"u", 3, std::vector<double>(14, 0.0)};
    try {
        write_vtu(path, two_tets(), {wrong});
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::Usage);
        EXPECT_NE(std::string(e.what()).find("14 values, expected 5 x 3"), std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(fs::exists(path));
}

TEST(VtuIo, VtkNodeOrderOfQuadraticAndCubicTets) {
    // Written out by hand from VTK's documented order (vtkQuadraticTetra: mid-edge nodes of
    // (0,1), (1,2), (2,0), (0,3), (1,3), (2,3); vtkLagrangeTetra: the same edges, each from its
    // first vertex to its second, then faces (0,1,3), (1,2,3), (0,2,3), (0,1,2)) against ours
    // (edges (0,1), (0,2), (0,3), (1,2), (1,3), (2,3); face i opposite vertex i).
    EXPECT_EQ(vtk_tet_node_order(1), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(vtk_tet_node_order(2), (std::vector<int>{0, 1, 2, 3, 4, 7, 5, 6, 8, 9}));
    EXPECT_EQ(vtk_tet_node_order(3), (std::vector<int>{0, 1, 2,  3,  4,  5,  10, 11, 7,  6,
                                                       8, 9, 12, 13, 14, 15, 18, 16, 17, 19}));
    EXPECT_EQ(vtk_tet_cell_type(1), 10);
    EXPECT_EQ(vtk_tet_cell_type(2), 24);
    EXPECT_EQ(vtk_tet_cell_type(3), 71);
}

/// The arrays of a written .vtu by name ("Points" for the unnamed one).
std::map<std::string, std::vector<double>> read_arrays(const fs::path& path,
                                                       std::string* piece_points = nullptr) {
    std::map<std::string, std::vector<double>> arrays;
    for (const XmlElement& e : parse_xml(test::read_text(path))) {
        if (e.name == "Piece" && piece_points) *piece_points = e.attributes.at("NumberOfPoints");
        if (e.name != "DataArray") continue;
        const auto name = e.attributes.find("Name");
        arrays[name == e.attributes.end() ? "Points" : name->second] = numbers(e.text);
    }
    return arrays;
}

TEST(VtuIo, HigherOrderCellsCarryEveryNodeWhereVtkExpectsIt) {
    // Straight-sided cells: each written edge node must sit on VTK's edge of the written
    // corners, at (m+1)/p from its first vertex, and each face node at its face's centroid.
    const TetMesh mesh = make_box_tet_mesh(2, 1, 1, {0, 0, 0}, {2, 1, 1});
    const Topology topology = build_topology(mesh);
    const int vtk_edges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
    const int vtk_faces[4][3] = {{0, 1, 3}, {1, 2, 3}, {0, 2, 3}, {0, 1, 2}};
    for (int order : {1, 2, 3}) {
        const NodeLayout layout = make_node_layout(topology, order);
        const std::vector<Index> cells = cell_node_table(topology, mesh.cells, layout);
        const std::vector<Vec3> points = node_positions(mesh, topology, layout);
        VtuField displacement{"displacement", 3, std::vector<double>(3 * points.size(), 0.5)};
        const test::TempDir scratch("edn_vtu");
        const fs::path path = scratch / "p.vtu";
        write_vtu(path, points, order, cells, {displacement});
        std::string piece_points;
        auto arrays = read_arrays(path, &piece_points);
        EXPECT_EQ(piece_points, std::to_string(points.size()));
        const int per_cell = nodes_per_cell(order);
        const std::size_t num_cells = mesh.cells.size();
        const std::vector<double>& connectivity = arrays["connectivity"];
        ASSERT_EQ(connectivity.size(), num_cells * per_cell) << "order " << order;
        EXPECT_EQ(arrays["types"], std::vector<double>(num_cells, order == 1   ? 10
                                                                  : order == 2 ? 24
                                                                               : 71));
        EXPECT_EQ(arrays["offsets"].back(), static_cast<double>(num_cells * per_cell));
        EXPECT_EQ(arrays["displacement"].size(), 3 * points.size());
        const std::vector<double>& xyz = arrays["Points"];
        ASSERT_EQ(xyz.size(), 3 * points.size());
        auto point = [&](std::size_t c, int k) {
            const std::size_t node = static_cast<std::size_t>(connectivity[c * per_cell + k]);
            return Vec3{xyz[3 * node], xyz[3 * node + 1], xyz[3 * node + 2]};
        };
        for (std::size_t c = 0; c < num_cells; ++c) {
            for (int k = 0; k < 4; ++k)
                for (int d = 0; d < 3; ++d)
                    EXPECT_EQ(point(c, k)[d], mesh.positions[mesh.cells[c][k]][d]);
            for (int e = 0; e < 6; ++e) {
                for (int m = 0; m < order - 1; ++m) {
                    const Vec3 a = point(c, vtk_edges[e][0]), b = point(c, vtk_edges[e][1]);
                    const Vec3 node = point(c, 4 + e * (order - 1) + m);
                    const double t = (m + 1.0) / order;
                    for (int d = 0; d < 3; ++d)
                        EXPECT_NEAR(node[d], a[d] + t * (b[d] - a[d]), 1e-12)
                            << "order " << order << " cell " << c << " edge " << e << " node " << m;
                }
            }
            if (order == 3) {
                for (int f = 0; f < 4; ++f) {
                    const Vec3 node = point(c, 16 + f);
                    for (int d = 0; d < 3; ++d) {
                        const double centroid =
                            (point(c, vtk_faces[f][0])[d] + point(c, vtk_faces[f][1])[d] +
                             point(c, vtk_faces[f][2])[d]) /
                            3.0;
                        EXPECT_NEAR(node[d], centroid, 1e-12) << "cell " << c << " face " << f;
                    }
                }
            }
        }
    }
}

TEST(VtuIo, BinaryAppendedReadsBackAsTheAsciiEncoding) {
    const TetMesh mesh = make_box_tet_mesh(2, 1, 1, {0, 0, 0}, {2, 1, 1});
    const Topology topology = build_topology(mesh);
    for (int order : {1, 2, 3}) {
        const NodeLayout layout = make_node_layout(topology, order);
        const std::vector<Index> cells = cell_node_table(topology, mesh.cells, layout);
        const std::vector<Vec3> points = node_positions(mesh, topology, layout);
        VtuField displacement{"displacement", 3, {}}, flag{"pinned", 1, {}};
        for (std::size_t i = 0; i < points.size(); ++i) {
            for (int d = 0; d < 3; ++d) displacement.values.push_back(1.0 / (3.0 + i + d));
            flag.values.push_back(i % 3 == 0 ? 1 : 0);
        }
        VtuField stress{"von_mises", 1, {}};
        for (std::size_t c = 0; c < mesh.cells.size(); ++c) stress.values.push_back(c * 0.1);
        const test::TempDir scratch("edn_vtu");
        write_vtu(scratch / "a.vtu", points, order, cells, {displacement, flag}, {stress});
        write_vtu(scratch / "b.vtu", points, order, cells, {displacement, flag}, {stress},
                  VtuEncoding::Binary);
        EXPECT_LT(fs::file_size(scratch / "b.vtu"), fs::file_size(scratch / "a.vtu"));
        const VtuData a = read_vtu(scratch / "a.vtu"), b = read_vtu(scratch / "b.vtu");
        // The ASCII file also through this file's independent reader.
        auto arrays = read_arrays(scratch / "a.vtu", nullptr);
        EXPECT_EQ(std::vector<double>(a.connectivity.begin(), a.connectivity.end()),
                  arrays["connectivity"]);
        EXPECT_EQ(a.points, points);
        EXPECT_EQ(b.points, points) << "order " << order;
        EXPECT_EQ(b.connectivity, a.connectivity);
        EXPECT_EQ(b.offsets, a.offsets);
        EXPECT_EQ(b.types, a.types);
        EXPECT_EQ(b.types,
                  std::vector<std::uint8_t>(mesh.cells.size(),
                                            static_cast<std::uint8_t>(vtk_tet_cell_type(order))));
        ASSERT_EQ(b.point_fields.size(), 2u);
        ASSERT_EQ(b.cell_fields.size(), 1u);
        EXPECT_EQ(b.point_fields[0].name, "displacement");
        EXPECT_EQ(b.point_fields[0].components, 3);
        EXPECT_EQ(b.point_fields[0].values, displacement.values);
        EXPECT_EQ(b.point_fields[1].values, flag.values);
        EXPECT_EQ(b.cell_fields[0].values, stress.values);
        EXPECT_EQ(a.point_fields[0].values, displacement.values) << "ASCII round-trips exactly";
    }
}

TEST(VtuIo, ReadVtuRejectsOtherFiles) {
    const test::TempDir scratch("edn_vtu");
    test::write_text(scratch / "x.vtu", "<VTKFile type=\"PolyData\"></VTKFile>\n");
    try {
        read_vtu(scratch / "x.vtu");
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::Parse);
    }
}

} // namespace
} // namespace edn
