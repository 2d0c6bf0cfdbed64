#pragma once
/// The elastodyn-cli commands. Each takes the arguments after its name, prints its result on
/// stdout and returns the exit code; failures are thrown (edn::Error) and mapped by main().

#include "cli/args.hpp"
#include "core/atomic_file.hpp"
#include "mesh/tetrahedralize.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace edn::cli {

/// One entry of the command table.
struct Command {
    const char* name;                                      ///< e.g. "info"
    const char* synopsis;                                  ///< arguments, e.g. "MESH [--order p]"
    int (*run)(const std::vector<std::string>& arguments); ///< the command's body
};

/// All commands, in the order `--help` lists them.
const std::vector<Command>& commands();

/// `tetrahedralize IN OUT.node [--quality q] [--max-volume v] [--verbose]`
int run_tetrahedralize(const std::vector<std::string>& arguments);

/// `info MESH [--order p] [--quality q] [--max-volume v] [--verbose]`
int run_info(const std::vector<std::string>& arguments);

/// `export MESH --matrix K.mtx [--order p] [--material M] [--E e] [--nu v] [--displacement U]
/// [--force f.txt] [--nodes nodes.txt]`
int run_export(const std::vector<std::string>& arguments);

/// `cut MESH --plane "px py pz nx ny nz" [--radius R --center "x y z"] [--mode split|faces]
/// OUT.node|OUT.vtu`: the cut rest mesh and its quality report (JSON on stdout).
int run_cut(const std::vector<std::string>& arguments);

/// `simulate MESH [--order p] [--material M] ... --frames N --dt h [--out run.json] [--vtu v]
/// [--series DIR [--every K]]`
int run_simulate(const std::vector<std::string>& arguments);

/// `bench assembly|spmv|step [--backend cpu|cuda] [--max-tets N] [--orders 1,2,3] [--repeat R]
/// [--frames F] --out bench.json` (bench/README.md)
int run_bench(const std::vector<std::string>& arguments);

/// The TetGen options shared by every command that may mesh an OBJ surface.
std::vector<OptionSpec> meshing_option_specs();

/// Reads --quality, --max-volume and --verbose (see meshing_option_specs) over `defaults`.
TetrahedralizeOptions meshing_options(const Args& args, TetrahedralizeOptions defaults = {});

/// Records the files that mesh `path` is read from (both files of a .node/.ele pair) as inputs
/// "MESH" of `files`, so that no output overwrites them.
void add_mesh_inputs(OutputFiles& files, const std::filesystem::path& path);

} // namespace edn::cli
