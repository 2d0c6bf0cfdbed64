// `elastodyn-cli cut MESH --plane "px py pz nx ny nz" [--radius R --center "x y z"] OUT`: cuts the
// rest mesh along a plane (mesh/split_cut.hpp, or the face cut of mesh/cut.hpp with --mode
// faces), writes OUT (.node + .ele, or .vtu) and reports the quality before and after.
#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "mesh/cut.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/split_cut.hpp"
#include "mesh/tetgen_io.hpp"
#include "mesh/vtu_io.hpp"
#include "sim/settings_options.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

namespace edn::cli {
namespace fs = std::filesystem;
namespace {

/// `count` finite numbers of option `name`, else a usage error quoting `expected`.
std::vector<double> numbers_of(const Args& args, const std::string& name, std::size_t count,
                               const std::string& expected) {
    const std::string text = args.string_or(name, "");
    const std::optional<std::vector<double>> values = parse_number_list(text);
    if (!values || values->size() != count)
        usage_error("cut: option '--" + name + "': expected " + expected + ", got '" + text + "'");
    return *values;
}

/// Writes `mesh` to `path` (.node + .ele beside it, or .vtu) through `outputs`.
void write_mesh(OutputFiles& outputs, const fs::path& path, const TetMesh& mesh) {
    if (path.extension() == ".vtu") {
        write_vtu(outputs.add(path, "OUT"), mesh);
        return;
    }
    fs::path ele_path = path;
    ele_path.replace_extension(".ele");
    const fs::path temp_node = outputs.add(path, "OUT.node");
    const fs::path temp_ele = outputs.add(ele_path, "OUT.ele");
    write_node_ele(temp_node, mesh); // writes temp_node and its .ele sibling
    fs::path written_ele = temp_node;
    written_ele.replace_extension(".ele");
    if (written_ele != temp_ele) {
        std::error_code ec;
        fs::rename(written_ele, temp_ele, ec);
        if (ec) fs::remove(written_ele, ec);
        EDN_VERIFY(fs::is_regular_file(temp_ele, ec), ErrorCode::Io,
                   ele_path.string() << ": cannot write beside " << path.string());
    }
}

} // namespace

int run_cut(const std::vector<std::string>& arguments) {
    std::vector<OptionSpec> specs = meshing_option_specs();
    const std::vector<OptionSpec> own = {
        {"plane", "PLANE",
         "the blade's plane \"px py pz nx ny nz\" (or comma-separated; required)"},
        {"radius", "R", "blade radius around --center (default infinite: a full cut)"},
        {"center", "C",
         "\"x y z\" the blade's center, projected onto the plane (default the "
         "plane's point)"},
        {"mode", "M", "split (split the crossed cells; default) or faces (open existing faces)"},
        {"snap", "F",
         "split: a crossing within F of an edge's length of a vertex snaps to it (default 0.05)"},
    };
    specs.insert(specs.begin(), own.begin(), own.end());
    const Args args("cut", arguments, specs);
    if (args.help_requested()) {
        std::cout << args.usage("MESH --plane PLANE [options] OUT.node|OUT.vtu")
                  << "Cuts the rest mesh of MESH along the plane and writes it; prints the "
                     "quality report as JSON.\n";
        return 0;
    }
    args.expect_positionals({"MESH", "OUT"});
    if (!args.has("plane")) usage_error("cut: option '--plane' is required");
    const std::vector<double> p =
        numbers_of(args, "plane", 6, "\"px py pz nx ny nz\" with a non-zero normal");
    if (p[3] == 0 && p[4] == 0 && p[5] == 0)
        usage_error("cut: option '--plane': the normal must be non-zero");
    CutPlane plane;
    plane.point = {p[0], p[1], p[2]};
    plane.normal = {p[3], p[4], p[5]};
    if (args.has("radius"))
        plane.radius = args.real_or("radius", 0, std::numeric_limits<double>::min(),
                                    std::numeric_limits<double>::max());
    if (args.has("center")) {
        if (!args.has("radius")) usage_error("cut: option '--center' needs '--radius'");
        const std::vector<double> c = numbers_of(args, "center", 3, "\"x y z\"");
        // The center projected onto the plane: the same plane, the disc around the center.
        const double nn = p[3] * p[3] + p[4] * p[4] + p[5] * p[5];
        double s = 0;
        for (int d = 0; d < 3; ++d) s += plane.normal[d] * (c[d] - p[d]);
        for (int d = 0; d < 3; ++d) plane.point[d] = c[d] - s / nn * plane.normal[d];
    }
    const std::string mode = args.string_or("mode", "split");
    if (mode != "split" && mode != "faces")
        usage_error("cut: option '--mode': expected split or faces, got '" + mode + "'");
    SplitCutOptions options;
    options.snap_fraction = args.real_or("snap", 0.05, 0.0, 0.49);
    const fs::path input = args.positionals()[0];
    const fs::path output = args.positionals()[1];
    if (output.extension() != ".node" && output.extension() != ".vtu")
        usage_error("cut: output '" + output.string() + "' must end in .node or .vtu");

    OutputFiles outputs;
    add_mesh_inputs(outputs, input);
    const TetMesh mesh = load_tet_mesh(input, meshing_options(args));
    const auto start = std::chrono::steady_clock::now();
    SplitCutResult r;
    if (mode == "split") {
        r = split_cut(mesh, plane, {}, options);
    } else {
        CutResult faces = cut_mesh(mesh, plane);
        r.mesh = std::move(faces.mesh);
        r.cells_before = r.cells_after = mesh.num_cells();
        r.cut_faces = faces.cut_faces;
        r.duplicated_vertices = faces.duplicated_vertices;
        r.components = count_components(r.mesh);
        r.before = mesh_quality(mesh);
        r.after = mesh_quality(r.mesh);
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    write_mesh(outputs, output, r.mesh);
    outputs.commit();

    JsonObject report;
    report.add("input", input.string())
        .add("output", output.string())
        .add("mode", mode)
        .add("cells_before", r.cells_before)
        .add("cells_after", r.cells_after)
        .add("split_cells", r.split_cells)
        .add("new_cells", r.cells_after - r.cells_before)
        .add("new_vertices", r.new_vertices)
        .add("snapped_vertices", r.snapped_vertices)
        .add("moved_vertices", r.moved_vertices)
        .add("max_snap_distance", r.max_snap_distance)
        .add("cut_faces", r.cut_faces)
        .add("duplicated_vertices", r.duplicated_vertices)
        .add("components", r.components)
        .add("min_dihedral_deg_before", r.before.min_dihedral_deg)
        .add("min_dihedral_deg_after", r.after.min_dihedral_deg)
        .add("dihedral_bound_deg", r.dihedral_bound_deg)
        .add("min_volume_before", r.before.min_volume)
        .add("min_volume_after", r.after.min_volume)
        .add("volume_before", total_volume(mesh))
        .add("volume_after", total_volume(r.mesh))
        .add("cut_ms", ms);
    if (mode == "split") {
        const SplitCutTimes& t = r.times;
        report.add("cut_phases_ms", JsonObject()
                                        .add("classify", t.classify)
                                        .add("quality_before", t.quality_before)
                                        .add("snap_and_split", t.snap_and_split)
                                        .add("assemble", t.assemble)
                                        .add("separate", t.separate)
                                        .add("components", t.components)
                                        .add("quality_after", t.quality_after));
    }
    std::cout << to_json_text(report.json(), {JsonLayout::Compact}) << std::endl;
    char line[320];
    std::snprintf(line, sizeof line,
                  "cut: %lld -> %lld cells (%lld split), %lld faces opened, %lld components; "
                  "worst dihedral %.3g -> %.3g deg, smallest volume %.3g -> %.3g\n",
                  static_cast<long long>(r.cells_before), static_cast<long long>(r.cells_after),
                  static_cast<long long>(r.split_cells), static_cast<long long>(r.cut_faces),
                  static_cast<long long>(r.components), r.before.min_dihedral_deg,
                  r.after.min_dihedral_deg, r.before.min_volume, r.after.min_volume);
    std::cerr << line << std::flush;
    return 0;
}

} // namespace edn::cli
