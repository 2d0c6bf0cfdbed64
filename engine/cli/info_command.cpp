#include "cli/commands.hpp"
#include "core/json.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sparse/bin_bcsr_pattern.hpp"

#include <iostream>

namespace edn::cli {
namespace {


/// Mesh and topology counts: "vertices" … "volume".
void add_mesh_counts(JsonObject& json, const TetMesh& mesh, const Topology& topology,
                     const NodeLayout& layout) {
    json.add("vertices", mesh.num_vertices())
        .add("edges", topology.num_edges())
        .add("faces", topology.num_faces())
        .add("cells", mesh.num_cells())
        .add("boundary_faces", static_cast<Index>(topology.boundary_faces.size()))
        .add("components", num_components(topology))
        .add("order", layout.order)
        .add("nodes", layout.num_nodes())
        .add("volume", total_volume(mesh));
}

} // namespace

int run_info(const std::vector<std::string>& arguments) {
    std::vector<OptionSpec> specs = meshing_option_specs();
    specs.insert(specs.begin(), {"order", "P", "polynomial order of the nodes, 1..3 (default 1)"});
    const Args args("info", arguments, specs);
    if (args.help_requested()) {
        std::cout << args.usage("MESH [options]")
                  << "Prints mesh, topology and node counts of MESH (.obj, .node/.ele, .msh) as "
                     "JSON.\n";
        return 0;
    }
    args.expect_positionals({"MESH"});
    const int order = static_cast<int>(args.integer_or("order", 1, 1, kMaxOrder));
    const TetrahedralizeOptions options = meshing_options(args);
    const std::string path = args.positionals()[0];

    const TetMesh mesh = load_tet_mesh(path, options);
    const Topology topology = build_topology(mesh);
    const NodeLayout layout = make_node_layout(topology, order);

    JsonObject json;
    json.add("file", path);
    add_mesh_counts(json, mesh, topology, layout);
    // The Bin-BCSR* pattern of the order-p system matrix (float values, as on the GPU).
    const BinBcsrPattern pattern = build_bin_bcsr_pattern(topology, mesh.cells, layout);
    json.add("nnz_blocks", static_cast<std::int64_t>(pattern.nnz_blocks()))
        .add("bins", pattern.num_bins())
        .add("padded_blocks", static_cast<std::int64_t>(pattern.padded_blocks()))
        .add("bytes", static_cast<std::int64_t>(pattern.matrix_bytes(sizeof(float))));
    std::cout << to_json_text(json.json()) << std::endl;
    return 0;
}

} // namespace edn::cli
