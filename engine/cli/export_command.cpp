// `elastodyn-cli export`: the tangent matrix (Bin-BCSR*, written as MatrixMarket), the energy
// gradient and the node positions of a mesh at rest positions + U, for comparison with other
// FEM codes.
#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json.hpp"
#include "mesh/mesh_loader.hpp"
#include "sim/material_tangent.hpp"
#include "sim/names.hpp"
#include "sparse/spmv.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

namespace edn::cli {
namespace {

/// Reads one "x y z" line per node.
std::vector<double> read_vectors(const std::string& path, Index expected) {
    verify_regular_file(path);
    std::ifstream in(path);
    EDN_VERIFY(in.good(), ErrorCode::Io, path << ": cannot open for reading");
    std::vector<double> values;
    values.reserve(3 * static_cast<std::size_t>(expected));
    std::string line;
    long long line_number = 0, rows = 0;
    while (std::getline(in, line)) {
        ++line_number;
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#') continue;
        // strtod, not operator>>, so that "nan" and "inf" are read and then rejected clearly.
        std::istringstream fields(line);
        std::string token;
        double v[3];
        int count = 0;
        while (fields >> token) {
            char* end = nullptr;
            const double value = std::strtod(token.c_str(), &end);
            EDN_VERIFY(end && *end == '\0' && count < 3, ErrorCode::Parse,
                       path << ":" << line_number << ": expected three numbers \"ux uy uz\"");
            EDN_VERIFY(std::isfinite(value), ErrorCode::NonFinite,
                       path << ":" << line_number << ": non-finite value '" << token << "'");
            v[count++] = value;
        }
        EDN_VERIFY(count == 3, ErrorCode::Parse,
                   path << ":" << line_number << ": expected three numbers \"ux uy uz\"");
        EDN_VERIFY(rows < expected, ErrorCode::Parse,
                   path << ": more than " << expected << " rows (one per node expected)");
        values.insert(values.end(), v, v + 3);
        ++rows;
    }
    EDN_VERIFY(rows == expected, ErrorCode::Parse,
               path << ": " << rows << " rows, expected one per node (" << expected << ")");
    return values;
}

void write_vectors(const std::filesystem::path& path, const std::vector<double>& values) {
    write_file_atomically(path, [&](std::ostream& out) {
        out << std::setprecision(17);
        for (std::size_t i = 0; i + 2 < values.size(); i += 3)
            out << values[i] << ' ' << values[i + 1] << ' ' << values[i + 2] << '\n';
    });
}

/// Writes the lower triangle of `k` as a MatrixMarket coordinate real symmetric file (about half
/// the general file). Each entry is the mean of K_ij and K_ji: the tangent of an energy is
/// symmetric, so they differ by roundoff only, checked against `tolerance` x max |K|.
void write_symmetric_matrix_market(const std::filesystem::path& path,
                                   const BinBcsrMatrix<double>& k, double tolerance,
                                   const std::string& source) {
    const std::vector<CooEntry<double>> coo = to_coo(k);
    double scale = 0, asymmetry = 0;
    std::vector<CooEntry<double>> lower;
    lower.reserve(coo.size() / 2 + 3 * static_cast<std::size_t>(k.pattern->num_rows));
    for (const CooEntry<double>& e : coo) {
        scale = std::max(scale, std::abs(e.value));
        if (e.row < e.col) continue;
        // The block pattern is structurally symmetric, so the mirror entry is stored.
        const double mirror = k.entry(static_cast<Index>(e.col / 3), static_cast<Index>(e.row / 3),
                                      static_cast<int>(e.col % 3), static_cast<int>(e.row % 3));
        asymmetry = std::max(asymmetry, std::abs(e.value - mirror));
        lower.push_back({e.row, e.col, 0.5 * (e.value + mirror)});
    }
    EDN_VERIFY(asymmetry <= tolerance * scale, ErrorCode::Numerical,
               source << ": --symmetric: K is not symmetric (max |K_ij - K_ji| = " << asymmetry
                      << ", max |K| = " << scale << ")");
    const std::int64_t n = 3 * std::int64_t(k.pattern->num_rows);
    write_file_atomically(path, [&](std::ostream& out) {
        out << "%%MatrixMarket matrix coordinate real symmetric\n"
            << "% elastodyn: dof index 3*node+axis (1-based here); lower triangle, "
               "entries (K_ij + K_ji) / 2\n"
            << n << ' ' << n << ' ' << lower.size() << '\n';
        out << std::setprecision(std::numeric_limits<double>::max_digits10);
        for (const auto& e : lower) out << e.row + 1 << ' ' << e.col + 1 << ' ' << e.value << '\n';
    });
}

} // namespace

int run_export(const std::vector<std::string>& arguments) {
    std::vector<OptionSpec> specs = meshing_option_specs();
    const std::vector<OptionSpec> own = {
        {"order", "P", "polynomial order of the nodes, 1..3 (default 1)"},
        {"material", "M", names_list<Material>() + " (default linear)"},
        {"E", "E", "Young's modulus, > 0 (default 1e5)"},
        {"nu", "NU", "Poisson's ratio, in (-1, 0.5) (default 0.3)"},
        {"displacement", "U.txt", "one \"ux uy uz\" line per node (default zero)"},
        {"matrix", "K.mtx",
         "output: tangent K as 3n x 3n MatrixMarket (dof 3*node+axis; default none)"},
        {"symmetric", "",
         "--matrix in MatrixMarket symmetric storage: the lower triangle only, about half the "
         "size (default: general storage, every entry)"},
        {"force", "f.txt", "output: energy gradient dW/dx, one line per node (default none)"},
        {"nodes", "nodes.txt", "output: node positions x y z, one line per node (default none)"},
    };
    specs.insert(specs.begin(), own.begin(), own.end());
    const Args args("export", arguments, specs);
    if (args.help_requested()) {
        std::cout << args.usage("MESH --matrix K.mtx [options]")
                  << "Writes the tangent stiffness K (the Jacobian of the energy gradient, "
                     "unprojected) at rest positions + U.\n";
        return 0;
    }
    args.expect_positionals({"MESH"});
    if (!args.has("matrix") && !args.has("force") && !args.has("nodes"))
        usage_error("export: nothing to write (give --matrix, --force and/or --nodes)");
    if (args.flag("symmetric") && !args.has("matrix"))
        usage_error("export: --symmetric applies to --matrix, which is not given");
    const int order = static_cast<int>(args.integer_or("order", 1, 1, kMaxOrder));
    const std::string material_name = args.string_or("material", "linear");
    const auto material = parse_material(material_name);
    if (!material)
        usage_error("export: unknown material '" + material_name + "' (expected " +
                    names_list<Material>(", ") + ")");
    const double young = args.real_or("E", 1e5, std::numeric_limits<double>::min(),
                                      std::numeric_limits<double>::max());
    const double poisson = args.real_or("nu", 0.3, -1.0, 0.5);
    if (poisson <= -1.0 || poisson >= 0.5)
        usage_error("export: option '--nu': must be in (-1, 0.5), got " + args.string_or("nu", ""));
    const std::string path = args.positionals()[0];

    // Every output is checked before the work, and published only when all are written.
    OutputFiles outputs;
    add_mesh_inputs(outputs, path);
    if (args.has("displacement"))
        outputs.add_input(args.string_or("displacement", ""), "--displacement");
    std::optional<std::filesystem::path> matrix_file, force_file, nodes_file;
    if (args.has("matrix")) matrix_file = outputs.add(args.string_or("matrix", ""), "--matrix");
    if (args.has("force")) force_file = outputs.add(args.string_or("force", ""), "--force");
    if (args.has("nodes")) nodes_file = outputs.add(args.string_or("nodes", ""), "--nodes");

    const TetMesh mesh = load_tet_mesh(path, meshing_options(args));
    const Topology topology = build_topology(mesh);
    const NodeLayout layout = make_node_layout(topology, order);
    const std::vector<Vec3> rest = node_positions(mesh, topology, layout);
    std::vector<double> displacement(3 * static_cast<std::size_t>(layout.num_nodes()), 0.0);
    if (args.has("displacement"))
        displacement = read_vectors(args.string_or("displacement", ""), layout.num_nodes());

    const BinBcsrPattern pattern = build_bin_bcsr_pattern(topology, mesh.cells, layout);
    const MaterialTangent tangent =
        material_tangent(*material, lame_from_young_poisson(young, poisson), mesh, topology, layout,
                         pattern, rest, displacement);

    // Huge E or displacements overflow (inf in K) or turn the rotation NaN: no such file.
    std::size_t non_finite_k = 0, non_finite_f = 0;
    for (double v : tangent.stiffness.values) non_finite_k += !std::isfinite(v);
    for (double v : tangent.stiffness.diag) non_finite_k += !std::isfinite(v);
    for (double v : tangent.gradient) non_finite_f += !std::isfinite(v);
    EDN_VERIFY(non_finite_k == 0 && non_finite_f == 0 && std::isfinite(tangent.energy),
               ErrorCode::Numerical,
               path << ": the " << material_name << " tangent is not finite (" << non_finite_k
                    << " entries of K, " << non_finite_f
                    << " of f overflow or are NaN; E or the displacement too large?)");

    // Everything is computed before the first file is written.
    if (matrix_file && args.flag("symmetric"))
        write_symmetric_matrix_market(*matrix_file, tangent.stiffness, 1e-9, path);
    else if (matrix_file)
        write_matrix_market(*matrix_file, tangent.stiffness);
    if (force_file) write_vectors(*force_file, tangent.gradient);
    if (nodes_file) {
        std::vector<double> flat;
        flat.reserve(3 * rest.size());
        for (const Vec3& x : rest) flat.insert(flat.end(), x.begin(), x.end());
        write_vectors(*nodes_file, flat);
    }
    outputs.commit();
    JsonObject json;
    json.add("file", path)
        .add("order", order)
        .add("material", material_name)
        .add("nodes", layout.num_nodes())
        .add("nnz_blocks", static_cast<std::int64_t>(pattern.nnz_blocks()))
        .add("energy", tangent.energy);
    std::cout << to_json_text(json.json()) << std::endl;
    return 0;
}

} // namespace edn::cli
