// Binary PLY surfaces (mesh/ply_io.hpp): a written surface reads back bit for bit, the header is
// what DCC tools expect, and malformed files are Parse errors naming the file.

#include "core/error.hpp"
#include "mesh/ply_io.hpp"
#include "support/errors.hpp"
#include "support/files.hpp"

#include <gtest/gtest.h>

namespace edn {
namespace {

namespace fs = std::filesystem;

SurfaceMesh odd_tetrahedron_surface() {
    SurfaceMesh s;
    // Coordinates that decimal text would round: the binary file must keep every bit.
    s.positions = {
        {0.1, -0.0, 1e-300}, {1.0 / 3.0, 2.5, -7.25}, {0.0, 1.0, 3e10}, {-1.0, 0.2, 0.3}};
    s.triangles = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}};
    return s;
}

TEST(PlyIo, RoundTripIsExactAndTheHeaderIsBinaryLittleEndian) {
    test::TempDir dir("edn_ply");
    const SurfaceMesh s = odd_tetrahedron_surface();
    write_ply_surface(dir.path / "t.ply", s);
    const std::string text = test::read_text(dir.path / "t.ply");
    EXPECT_TRUE(text.starts_with("ply\nformat binary_little_endian 1.0\n")) << text.substr(0, 60);
    EXPECT_NE(text.find("element vertex 4\n"), std::string::npos);
    EXPECT_NE(text.find("element face 4\n"), std::string::npos);
    EXPECT_NE(text.find("property list uchar int vertex_indices\nend_header\n"), std::string::npos);
    // Header + 4 vertices of 3 doubles + 4 faces of (uchar + 3 ints).
    const std::size_t header = text.find("end_header\n") + 11;
    EXPECT_EQ(text.size(), header + 4 * 24 + 4 * 13);
    const SurfaceMesh back = read_ply_surface(dir.path / "t.ply");
    EXPECT_EQ(back.positions, s.positions);
    EXPECT_EQ(back.triangles, s.triangles);
    EXPECT_FALSE(fs::exists(dir.path / ("t.ply.tmp." + std::to_string(::getpid()))));
}

TEST(PlyIo, MalformedFilesAreParseErrorsNamingTheFile) {
    test::TempDir dir("edn_ply");
    const fs::path path = dir.path / "bad.ply";
    write_ply_surface(path, odd_tetrahedron_surface());
    const std::string good = test::read_text(path);
    const std::vector<std::pair<std::string, ErrorCode>> cases = {
        {"not a ply at all", ErrorCode::Parse},
        {good.substr(0, good.size() - 5), ErrorCode::Parse}, // truncated data
        {"ply\nformat ascii 1.0\nelement vertex 0\nend_header\n", ErrorCode::Parse},
        {"ply\nformat binary_little_endian 1.0\nelement vertex 0\nproperty quad x\nend_header\n",
         ErrorCode::Parse},
    };
    for (const auto& [text, code] : cases) {
        test::write_text(path, text);
        test::expect_error([&] { read_ply_surface(path); }, code, "bad.ply");
    }
    // A face index past the vertices.
    std::string bad_index = good;
    bad_index[bad_index.size() - 4] = 9;
    test::write_text(path, bad_index);
    test::expect_error([&] { read_ply_surface(path); }, ErrorCode::IndexOutOfRange, "bad.ply");
    test::expect_error([&] { read_ply_surface(dir.path / "missing.ply"); }, ErrorCode::Io,
                       "missing.ply");
}

} // namespace
} // namespace edn
