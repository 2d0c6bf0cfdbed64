#include "cli/commands.hpp"

#include <cctype>
#include <limits>
#include <string>

namespace edn::cli {

const std::vector<Command>& commands() {
    static const std::vector<Command> table = {
        {"tetrahedralize",
         "IN OUT.node [--quality q] [--max-volume v] [--time-limit s] [--verbose]",
         &run_tetrahedralize},
        {"info", "MESH [--order p] [--quality q] [--max-volume v] [--time-limit s] [--verbose]",
         &run_info},
        {"export",
         "MESH --order p --material linear|corotational|neohookean [--E e] [--nu v] "
         "[--displacement U.txt] --matrix K.mtx [--force f.txt] [--nodes nodes.txt]",
         &run_export},
        {"cut",
         "MESH --plane \"px py pz nx ny nz\" [--radius R --center \"x y z\"] "
         "[--mode split|faces] OUT.node|OUT.vtu",
         &run_cut},
        {"simulate",
         "MESH|--scene FILE --order p --material M [--E e --nu v --rho r] --frames N --dt h "
         "[--static] "
         "[--backend cpu|cuda] [--summation auto|per_entry|per_simplex|inline] "
         "[--preconditioner block_jacobi|two_level|multigrid] [--pin-below Z] "
         "[--gravity g] [--out run.json] [--vtu out.vtu] [--series DIR [--every K]]",
         &run_simulate},
        {"bench",
         "assembly|spmv|step|reorder|repattern|pcg|solve [--backend cpu|cuda] [--max-tets N] "
         "[--min-tets N] [--orders 1,2,3 | --order P] [--repeat R] [--frames F] "
         "[--coarse-iterations K] [--mesh FILE] [--tol T] [--max-iterations N] [--dt H] "
         "[--methods A,B] "
         "--out bench.json",
         &run_bench},
    };
    return table;
}

std::vector<OptionSpec> meshing_option_specs() {
    return {
        {"quality", "Q", "TetGen radius-edge bound, >= 1 (0 = no quality meshing; default 1.4)"},
        {"max-volume", "V", "TetGen maximum tetrahedron volume (0 = unbounded, the default)"},
        {"time-limit", "S", "seconds TetGen may run before it is stopped (0 = none; default 600)"},
        {"verbose", "", "let TetGen report progress (on stderr)"},
    };
}

TetrahedralizeOptions meshing_options(const Args& args, TetrahedralizeOptions defaults) {
    constexpr double huge = std::numeric_limits<double>::max();
    TetrahedralizeOptions options = defaults;
    options.quality = args.real_or("quality", options.quality, 0.0, 1000.0);
    if (options.quality > 0 && options.quality < 1.0)
        usage_error(args.command() + ": option '--quality': must be 0 (off) or >= 1, got " +
                    args.string_or("quality", ""));
    options.max_volume = args.real_or("max-volume", options.max_volume, 0.0, huge);
    options.time_limit_s = args.real_or("time-limit", options.time_limit_s, 0.0, 1e9);
    options.verbose = options.verbose || args.flag("verbose");
    return options;
}

void add_mesh_inputs(OutputFiles& files, const std::filesystem::path& path) {
    files.add_input(path, "MESH");
    std::string extension = path.extension().string();
    for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (extension != ".node" && extension != ".ele") return;
    // The loader reads both files of the pair whichever one is named.
    std::filesystem::path partner = path;
    partner.replace_extension(extension == ".node" ? ".ele" : ".node");
    files.add_input(partner, "MESH");
}

} // namespace edn::cli
