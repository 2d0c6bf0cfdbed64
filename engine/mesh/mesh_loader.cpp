#include "mesh/mesh_loader.hpp"

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "mesh/msh_io.hpp"
#include "mesh/obj_io.hpp"
#include "mesh/tetgen_io.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace edn {
namespace {

/// The extension of `path`, lower-cased (".OBJ" and ".obj" are the same format).
std::string lower_extension(const std::filesystem::path& path) {
    std::string extension = path.extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return extension;
}

} // namespace

TetMesh load_tet_mesh(const std::filesystem::path& path, const TetrahedralizeOptions& options) {
    const std::string source = path.string();
    const std::string extension = lower_extension(path);
    const bool known =
        extension == ".obj" || extension == ".node" || extension == ".ele" || extension == ".msh";
    EDN_VERIFY(known, ErrorCode::Parse,
               source << ": unknown mesh format '" << extension
                      << "' (expected .obj, .node, .ele or .msh)");

    verify_regular_file(path);

    if (extension == ".obj") {
        SurfaceOrigin origin; // messages number vertices and faces as the file does
        SurfaceMesh surface = read_obj_surface(path, &origin);
        check_and_orient_surface(surface, source, &origin);
        return tetrahedralize(surface, options, source); // validated there
    }
    TetMesh mesh;
    if (extension == ".msh") {
        mesh = read_msh(path);
    } else {
        // Either file of the pair names it; the reader wants the .node.
        std::filesystem::path node_path = path;
        if (extension == ".ele")
            node_path.replace_extension(path.extension().string() == ".ELE" ? ".NODE" : ".node");
        mesh = read_node_ele(node_path);
    }
    validate_tet_mesh(mesh, source);
    return mesh;
}

} // namespace edn
