#include "core/error.hpp"
#include "mesh/tetgen_io.hpp"
#include "support/errors.hpp"
#include "support/files.hpp"
#include "support/mesh_fixtures.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <random>
#include <set>

namespace edn {
namespace {

using test::expect_error;

namespace fs = std::filesystem;

/// The 8 unit-cube corners, as listed in good/cube.node (index = x + 2y + 4z).
std::vector<Vec3> cube_corners() {
    std::vector<Vec3> corners;
    for (int z = 0; z < 2; ++z)
        for (int y = 0; y < 2; ++y)
            for (int x = 0; x < 2; ++x) corners.push_back({double(x), double(y), double(z)});
    return corners;
}

TEST(TetgenIo, CubeOneBasedWithCommentsAttributesAndMarkers) {
    TetMesh mesh = read_node_ele(test::data_path("good/cube.node"));
    EXPECT_EQ(mesh.positions, cube_corners());
    ASSERT_EQ(mesh.num_cells(), 5);
    EXPECT_EQ(mesh.cells[0], (Cell{0, 1, 2, 4})); // "1  1 2 3 5" in the file
    EXPECT_EQ(mesh.cells[4], (Cell{1, 2, 4, 7}));
    const TetMeshValidation result = validate_tet_mesh(mesh, "cube.node");
    EXPECT_EQ(result.reoriented_cells, 0);
    EXPECT_EQ(result.dropped_vertices, 0);
    EXPECT_EQ(result.components, 1);
    EXPECT_NEAR(total_volume(mesh), 1.0, 1e-14);

    // The .ele path (or the stem) names the same pair.
    const TetMesh via_ele = read_node_ele(test::data_path("good/cube.ele"));
    EXPECT_EQ(via_ele.cells, read_node_ele(test::data_path("good/cube.node")).cells);
    EXPECT_EQ(read_node_ele(test::data_path("good/cube")).positions, cube_corners());
}

TEST(TetgenIo, QuadraticTetsKeepTheirCorners) {
    TetMesh mesh = read_node_ele(test::data_path("good/cube10.node"));
    ASSERT_EQ(mesh.num_cells(), 5);
    // 8 corners + one mid-edge node per distinct edge of the 5 tets.
    std::set<std::pair<Index, Index>> edges;
    for (const Cell& c : mesh.cells)
        for (int i = 0; i < 4; ++i)
            for (int j = i + 1; j < 4; ++j)
                edges.insert({std::min(c[i], c[j]), std::max(c[i], c[j])});
    EXPECT_EQ(mesh.positions.size(), 8 + edges.size());
    for (const Cell& c : mesh.cells)
        for (Index v : c) EXPECT_LT(v, 8) << "only corner nodes are kept in cells";
    const TetMeshValidation result = validate_tet_mesh(mesh, "cube10.node");
    EXPECT_EQ(result.dropped_vertices, static_cast<Index>(edges.size()));
    EXPECT_EQ(mesh.positions, cube_corners());
    EXPECT_NEAR(total_volume(mesh), 1.0, 1e-14);
}

TEST(TetgenIo, InvertedTetIsReoriented) {
    TetMesh mesh = read_node_ele(test::data_path("good/inverted_tet.node"));
    ASSERT_EQ(mesh.num_cells(), 1);
    EXPECT_NEAR(total_volume(mesh), -1.0 / 6.0, 1e-15);
    const TetMeshValidation result = validate_tet_mesh(mesh, "inverted_tet.node");
    EXPECT_EQ(result.reoriented_cells, 1);
    EXPECT_NEAR(total_volume(mesh), 1.0 / 6.0, 1e-15);
}

TEST(TetgenIo, BadFiles) {
    struct Case {
        const char* file;
        ErrorCode code;
        const char* fragment;
    };
    const Case cases[] = {
        {"truncated.node", ErrorCode::Parse, "truncated.node:"},
        {"truncated_ele.node", ErrorCode::Parse, "truncated_ele.ele:"},
        {"bad_index.node", ErrorCode::IndexOutOfRange, "references node 9"},
        {"nan.node", ErrorCode::NonFinite, "nan.node:"},
        {"not_a_number.node", ErrorCode::Parse, "not a number: 'abc'"},
        {"dim2.node", ErrorCode::Parse, "dimension 2"},
        {"no_such_mesh.node", ErrorCode::Io, "no_such_mesh.node"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.file);
        const fs::path path = test::data_path(std::string("bad/") + c.file);
        expect_error([&] { read_node_ele(path); }, c.code, c.fragment);
        // The pair can be named by either file.
        fs::path ele = path;
        ele.replace_extension(".ele");
        expect_error([&] { read_node_ele(ele); }, c.code, c.fragment);
    }
    expect_error([] { read_node_ele(test::data_path("bad/truncated.node")); }, ErrorCode::Parse,
                 "8 points declared, 5 found");
    expect_error([] { read_node_ele(test::data_path("bad/truncated_ele.node")); }, ErrorCode::Parse,
                 "5 tetrahedra declared, 3 found");
    expect_error([] { read_node_ele(test::data_path("bad/bad_index.ele")); },
                 ErrorCode::IndexOutOfRange, "bad_index.ele:");
    expect_error([] { read_node_ele(test::data_path("bad/nan.node")); }, ErrorCode::NonFinite,
                 "node 5 has a non-finite coordinate");
}

TEST(TetgenIo, WrongCountsOnALineAreParseErrors) {
    const test::TempDir scratch("edn_tetgen");
    const fs::path& dir = scratch.path;
    auto write = [&](const char* name, const std::string& text) {
        std::ofstream(dir / name) << text;
        return dir / name;
    };
    write("short.node", "4 3 0 0\n0 0 0 0\n1 1 0\n2 0 1 0\n3 0 0 1\n");
    write("short.ele", "1 4 0\n0 0 1 2 3\n");
    expect_error([&] { read_node_ele(dir / "short.node"); }, ErrorCode::Parse,
                 "short.node:3: expected 4 values for a point, found 3");
    write("extra.node", "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 5 5 5\n");
    write("extra.ele", "1 4 0\n0 0 1 2 3\n");
    expect_error([&] { read_node_ele(dir / "extra.node"); }, ErrorCode::Parse, "extra.node:6");
    write("twice.node", "4 3 0 0\n0 0 0 0\n1 1 0 0\n1 0 1 0\n3 0 0 1\n");
    write("twice.ele", "1 4 0\n0 0 1 2 3\n");
    expect_error([&] { read_node_ele(dir / "twice.node"); }, ErrorCode::Parse, "appears twice");
    write("five.node", "4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n");
    write("five.ele", "1 5 0\n0 0 1 2 3 3\n");
    expect_error([&] { read_node_ele(dir / "five.node"); }, ErrorCode::Parse,
                 "nodes per tetrahedron must be 4 or 10");
    write("zero.node", "0 3 0 0\n");
    write("zero.ele", "0 4 0\n");
    expect_error([&] { read_node_ele(dir / "zero.node"); }, ErrorCode::EmptyMesh, "zero.node");
}

TEST(TetgenIo, SparseNodeIndicesMapThroughTheIndexColumn) {
    const test::TempDir scratch("edn_tetgen");
    const fs::path& dir = scratch.path;
    std::ofstream(dir / "sparse.node") << "4 3 0 0\n100 0 0 0\n7 1 0 0\n55 0 1 0\n3 0 0 1\n";
    std::ofstream(dir / "sparse.ele") << "1 4 0\n9 100 7 55 3\n";
    const TetMesh mesh = read_node_ele(dir / "sparse.ele");
    ASSERT_EQ(mesh.num_cells(), 1);
    EXPECT_EQ(mesh.cells[0], (Cell{0, 1, 2, 3}));
    EXPECT_EQ(mesh.positions[1], (Vec3{1, 0, 0}));
}

TEST(TetgenIo, WriteReadRoundTripIsExact) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-10.0, 10.0);
    TetMesh mesh;
    for (int i = 0; i < 50; ++i) mesh.positions.push_back({u(rng), u(rng) / 3.0, u(rng) * 1e-7});
    for (int c = 0; c < 80; ++c) {
        Cell cell{};
        for (Index& v : cell) v = static_cast<Index>(rng() % 50);
        mesh.cells.push_back(cell);
    }
    const test::TempDir scratch("edn_tetgen");
    const fs::path& dir = scratch.path;
    write_node_ele(dir / "round.node", mesh);
    EXPECT_TRUE(fs::exists(dir / "round.ele"));
    const TetMesh back = read_node_ele(dir / "round.node");
    EXPECT_EQ(back.positions, mesh.positions);
    EXPECT_EQ(back.cells, mesh.cells);
    for (const auto& entry : fs::directory_iterator(dir))
        EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
}

} // namespace
} // namespace edn
