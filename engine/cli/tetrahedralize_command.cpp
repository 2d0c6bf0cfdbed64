#include "cli/commands.hpp"
#include "cli/json.hpp"
#include "core/error.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/tetgen_io.hpp"

#include <filesystem>
#include <iostream>
#include <system_error>
#include <unistd.h>

namespace edn::cli {
namespace {

namespace fs = std::filesystem;

/// Sum of the cells' signed volumes.
double total_volume(const TetMesh& mesh) {
    double volume = 0;
    for (const Cell& c : mesh.cells)
        volume += signed_volume(mesh.positions[c[0]], mesh.positions[c[1]], mesh.positions[c[2]],
                                mesh.positions[c[3]]);
    return volume;
}

/// Writes the .node/.ele pair under temporary names beside `node_path`, then renames both, so
/// that a failure leaves neither file (write_node_ele alone is atomic per file, not per pair).
void write_pair_atomically(const fs::path& node_path, const TetMesh& mesh) {
    fs::path ele_path = node_path;
    ele_path.replace_extension(".ele");
    const fs::path directory = node_path.parent_path();
    const std::string temp_stem =
        "." + node_path.stem().string() + ".partial." + std::to_string(::getpid());
    const fs::path temp_node = directory / (temp_stem + ".node");
    const fs::path temp_ele = directory / (temp_stem + ".ele");
    bool ele_renamed = false;
    try {
        write_node_ele(temp_node, mesh);
        std::error_code ec;
        fs::rename(temp_ele, ele_path, ec);
        EDN_VERIFY(!ec, ErrorCode::Io, ele_path.string() << ": cannot write: " << ec.message());
        ele_renamed = true;
        fs::rename(temp_node, node_path, ec);
        EDN_VERIFY(!ec, ErrorCode::Io, node_path.string() << ": cannot write: " << ec.message());
    } catch (...) {
        std::error_code ignored;
        fs::remove(temp_node, ignored);
        fs::remove(temp_ele, ignored);
        if (ele_renamed) fs::remove(ele_path, ignored);
        throw;
    }
}

} // namespace

int run_tetrahedralize(const std::vector<std::string>& arguments) {
    const Args args("tetrahedralize", arguments, meshing_option_specs());
    if (args.help_requested()) {
        std::cout
            << args.usage("IN OUT.node [options]")
            << "Meshes IN (.obj surface, .node/.ele or .msh) and writes OUT.node + OUT.ele.\n";
        return 0;
    }
    args.expect_positionals({"IN", "OUT.node"});
    const TetrahedralizeOptions options = meshing_options(args);
    const fs::path input = args.positionals()[0];
    const fs::path node_path = args.positionals()[1];
    if (node_path.extension() != ".node")
        usage_error("tetrahedralize: output '" + node_path.string() + "' must end in .node");

    // Check the destination before the (possibly long) meshing.
    std::error_code ec;
    const fs::path directory = node_path.parent_path().empty() ? "." : node_path.parent_path();
    EDN_VERIFY(fs::is_directory(directory, ec), ErrorCode::Io,
               node_path.string() << ": directory '" << directory.string() << "' does not exist");

    const TetMesh mesh = load_tet_mesh(input, options);
    write_pair_atomically(node_path, mesh);

    fs::path ele_path = node_path;
    ele_path.replace_extension(".ele");
    JsonObject summary;
    summary.add("input", input.string())
        .add("node", node_path.string())
        .add("ele", ele_path.string())
        .add("vertices", mesh.num_vertices())
        .add("cells", mesh.num_cells())
        .add("volume", total_volume(mesh));
    std::cout << summary.dump(false) << std::endl;
    return 0;
}

} // namespace edn::cli
