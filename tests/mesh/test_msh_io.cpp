#include "core/error.hpp"
#include "mesh/msh_io.hpp"
#include "mesh/tetgen_io.hpp"
#include "support/errors.hpp"
#include "support/files.hpp"

#include <algorithm>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>

namespace edn {
namespace {

using test::expect_error;

namespace fs = std::filesystem;

/// Cells as sorted lists of sorted corner coordinates: equal for the same geometric mesh,
/// whatever the node numbering.
std::vector<std::array<Vec3, 4>> geometric_cells(const TetMesh& mesh) {
    std::vector<std::array<Vec3, 4>> out;
    for (const Cell& c : mesh.cells) {
        std::array<Vec3, 4> corners{mesh.positions[c[0]], mesh.positions[c[1]],
                                    mesh.positions[c[2]], mesh.positions[c[3]]};
        std::sort(corners.begin(), corners.end());
        out.push_back(corners);
    }
    std::sort(out.begin(), out.end());
    return out;
}

TEST(MshIo, Version22And41MatchTheTetgenCube) {
    const TetMesh reference = read_node_ele(test::data_path("good/cube.node"));
    for (const char* name : {"good/cube_v22.msh", "good/cube_v41.msh"}) {
        SCOPED_TRACE(name);
        TetMesh mesh = read_msh(test::data_path(name));
        EXPECT_EQ(mesh.num_vertices(), 8);
        ASSERT_EQ(mesh.num_cells(), 5) << "triangles and points are ignored";
        EXPECT_EQ(mesh.positions, reference.positions);
        EXPECT_EQ(mesh.cells, reference.cells);
        EXPECT_EQ(geometric_cells(mesh), geometric_cells(reference));
        const TetMeshValidation result = validate_tet_mesh(mesh, name);
        EXPECT_EQ(result.components, 1);
        EXPECT_EQ(result.reoriented_cells, 0);
    }
}

TEST(MshIo, BadFiles) {
    struct Case {
        const char* file;
        ErrorCode code;
        const char* fragment;
    };
    const Case cases[] = {
        {"binary.msh", ErrorCode::Parse, "binary .msh is not supported"},
        {"truncated.msh", ErrorCode::Parse, "unexpected end of file"},
        {"bad_index.msh", ErrorCode::IndexOutOfRange, "element 8 references node 99"},
        {"nan.msh", ErrorCode::NonFinite, "node 3 has a non-finite coordinate"},
        {"no_tets.msh", ErrorCode::EmptyMesh, "no tetrahedra"},
        {"no_such_file.msh", ErrorCode::Io, "cannot open"},
        {"open_surface.obj", ErrorCode::Parse, "not a Gmsh file"},
        {"binary_garbage.obj", ErrorCode::Parse, "not a Gmsh file"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.file);
        expect_error([&] { read_msh(test::data_path(std::string("bad/") + c.file)); }, c.code,
                     c.file);
        expect_error([&] { read_msh(test::data_path(std::string("bad/") + c.file)); }, c.code,
                     c.fragment);
    }
}

TEST(MshIo, UnsupportedVersionAndCountMismatch) {
    const test::TempDir scratch("edn_msh");
    const fs::path& dir = scratch.path;
    std::ofstream(dir / "v3.msh") << "$MeshFormat\n3.0 0 8\n$EndMeshFormat\n";
    expect_error([&] { read_msh(dir / "v3.msh"); }, ErrorCode::Parse, "version 3.0");
    // 4.1: header declares 3 nodes, the blocks hold 2.
    std::ofstream(dir / "count.msh") << "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n"
                                        "1 3 1 3\n0 1 0 2\n1\n2\n0 0 0\n1 0 0\n$EndNodes\n";
    expect_error([&] { read_msh(dir / "count.msh"); }, ErrorCode::Parse,
                 "declares 3 nodes, blocks hold 2");
    // Unterminated unknown section.
    std::ofstream(dir / "open.msh") << "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Foo\n1 2 3\n";
    expect_error([&] { read_msh(dir / "open.msh"); }, ErrorCode::Parse, "expected $EndFoo");
}

} // namespace
} // namespace edn
