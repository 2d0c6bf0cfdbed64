#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/tetgen_io.hpp"

#include <filesystem>
#include <iostream>
#include <system_error>

namespace edn::cli {
namespace {

namespace fs = std::filesystem;

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

    fs::path ele_path = node_path;
    ele_path.replace_extension(".ele");
    // Check the destination before the (possibly long) meshing; publish the pair together.
    OutputFiles outputs;
    add_mesh_inputs(outputs, input);
    const fs::path temp_node = outputs.add(node_path, "OUT.node");
    const fs::path temp_ele = outputs.add(ele_path, "OUT.ele");

    const TetMesh mesh = load_tet_mesh(input, options);
    write_node_ele(temp_node, mesh); // writes temp_node and its .ele sibling
    fs::path written_ele = temp_node;
    written_ele.replace_extension(".ele");
    if (written_ele != temp_ele) { // OUT.node and OUT.ele resolve into different directories
        std::error_code ec;
        fs::rename(written_ele, temp_ele, ec);
        if (ec) fs::remove(written_ele, ec);
        EDN_VERIFY(fs::is_regular_file(temp_ele, ec), ErrorCode::Io,
                   ele_path.string() << ": cannot write beside " << node_path.string());
    }
    outputs.commit();

    JsonObject summary;
    summary.add("input", input.string())
        .add("node", node_path.string())
        .add("ele", ele_path.string())
        .add("vertices", mesh.num_vertices())
        .add("cells", mesh.num_cells())
        .add("volume", total_volume(mesh));
    std::cout << to_json_text(summary.json(), {JsonLayout::Compact}) << std::endl;
    return 0;
}

} // namespace edn::cli
