#include "bench_common.hpp"

#include "core/atomic_file.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/mesh_loader.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <time.h>
#include <tuple>

namespace edn::bench {
namespace {

/// What `--help` prints after the usage line.
constexpr const char* kHelp =
    "benchmarks (each case also times its peer in the same run; bench/README.md):\n"
    "  assembly   pattern build stages and the three summations vs Eigen setFromTriplets (CPU)\n"
    "             / a CUB COO-to-BSR build (CUDA)\n"
    "  spmv       Bin-BCSR* products vs Eigen / cuSPARSE BSR and CSR\n"
    "  step       whole simulation frames on the box meshes (CUDA: the CPU backend as baseline)\n"
    "  reorder    Morton node reordering and its effect on SpMV\n"
    "  repattern  the exact re-pattern after a plane cut and a sphere refinement vs the host\n"
    "  pcg        us per CUDA PCG iteration per solver variant vs the CPU PCG (CUDA only)\n"
    "  solve      the linear solvers (block Jacobi, two-level for p >= 2) vs HYPRE BoomerAMG on\n"
    "             one matrix, K + M/h^2 of a step's first Newton iteration at rest (pinned\n"
    "             base, gravity): setup ms, solve ms, iterations, recomputed residual (CPU)\n"
    "options:\n"
    "  --backend cpu|cuda       where the measured code runs (default cpu)\n"
    "  --max-tets N             skip box meshes above N tets (default 2000000)\n"
    "  --min-tets N             skip box meshes below N tets (default 0)\n"
    "  --orders 1,2,3           element orders to run (step: default 1,2)\n"
    "  --repeat R               repetitions per timing, median reported (default 10 on CUDA,\n"
    "                           3 on the CPU)\n"
    "  --frames F               step: timed frames per case after the warm-up (default 30)\n"
    "  --coarse-iterations K    step: coarse PCG iterations per two-level application\n"
    "                           (default 0: the backend's measured default)\n"
    "  --no-baseline            step: skip the baseline runs (CUDA: the CPU backend's frames,\n"
    "                           minutes at p >= 2 on 100K+ tets; CPU: the one-thread runs)\n"
    "  --mesh FILE              step, solve, assembly: this mesh (OBJ meshed by TetGen,\n"
    "                           .node/.ele, .msh) instead of the box: nodes in its lowest 2%\n"
    "                           pinned, gravity, the drag case pulls its top boundary triangle\n"
    "                           (default: the box meshes)\n"
    "                           repattern: the split cut of this mesh (full and partial blade,\n"
    "                           phase times; Simulation::cut at --orders, default 1)\n"
    "  --order P                solve: the element order (same as --orders P; default 1)\n"
    "  --tol T                  solve: relative tolerance of every method, in (0, 1) (default\n"
    "                           1e-4): ||P(b - A x)||_2 <= T ||P b||_2 from x = 0\n"
    "  --max-iterations N       solve: iteration cap of every method (default 10000)\n"
    "  --dt H                   solve: the time step of the matrix K + M/H^2 (default 1/60)\n"
    "  --methods A,B            solve: run only these of block_jacobi, two_level (p >= 2),\n"
    "                           multigrid,\n"
    "                           hypre_pcg_boomeramg, hypre_pcg_boomeramg_rbm, hypre_boomeramg\n"
    "                           (default: all that apply;\n"
    "                           the first is the reference of the solution differences)\n"
    "                           (solve's box: the largest near-cubic one within --max-tets and\n"
    "                           127008 tets, pinned as bench step's)\n"
    "                           step, assembly: summation methods of per_entry, per_simplex,\n"
    "                           inline (default: all three)\n"
    "  --materials A,B          step, assembly: materials of linear, corotational, neohookean\n"
    "                           (--material M: one; default: step neohookean and corotational\n"
    "                           at every order, linear at p = 1; assembly linear, the fused\n"
    "                           linear assembly; the others run through the simulation backend)\n"
    "  --preconditioner P       repattern --mesh: block_jacobi, two_level or multigrid for the\n"
    "                           Simulation::cut cases (default: the simulation's); multigrid\n"
    "                           adds the first steps after a prepared cut and the hierarchy\n"
    "                           build, with the lazy build (a fresh backend) as the peer;\n"
    "                           step: every case with P instead of block Jacobi (and no\n"
    "                           two-level extras)\n"
    "  --out FILE, --json FILE  the Bench JSON (rewritten after every case; required)\n"
    "exit codes: 0 success, 2 usage error, 4 no CUDA, out of memory or internal error\n";

/// One-line usage text of `program` (argv[0]).
std::string usage_line(const std::string& program) {
    return "usage: " + program +
           " assembly|spmv|step|reorder|repattern|pcg|solve [--backend cpu|cuda] [--max-tets N] "
           "[--min-tets N] [--orders 1,2,3 | --order P] [--repeat R] [--frames F] "
           "[--coarse-iterations K] [--no-baseline] [--mesh FILE] [--tol T] [--max-iterations N] "
           "[--dt H] "
           "[--methods A,B] [--materials A,B] [--preconditioner P] "
           "--out bench.json";
}

Options parse_options(int argc, char** argv, const std::string& program) {
    Options o;
    const std::string usage = usage_line(program);
    EDN_VERIFY(argc >= 2, ErrorCode::Usage, usage);
    o.benchmark = argv[1];
    EDN_VERIFY(o.benchmark == "assembly" || o.benchmark == "spmv" || o.benchmark == "step" ||
                   o.benchmark == "reorder" || o.benchmark == "repattern" || o.benchmark == "pcg" ||
                   o.benchmark == "solve",
               ErrorCode::Usage, "unknown benchmark '" << o.benchmark << "'; " << usage);
    for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        auto value = [&]() -> std::string {
            EDN_VERIFY(i + 1 < argc, ErrorCode::Usage, arg << " needs a value; " << usage);
            return argv[++i];
        };
        auto integer = [&](const std::string& text) -> std::int64_t {
            std::size_t used = 0;
            std::int64_t v = 0;
            try {
                v = std::stoll(text, &used);
            } catch (...) {
                used = 0;
            }
            EDN_VERIFY(used == text.size() && used > 0, ErrorCode::Usage,
                       arg << ": not an integer: '" << text << "'");
            return v;
        };
        auto real = [&](const std::string& text) -> double {
            std::size_t used = 0;
            double v = 0;
            try {
                v = std::stod(text, &used);
            } catch (...) {
                used = 0;
            }
            EDN_VERIFY(used == text.size() && used > 0 && std::isfinite(v), ErrorCode::Usage,
                       arg << ": not a finite number: '" << text << "'");
            return v;
        };
        // The option's integer value, checked to lie in [low, high].
        auto integer_in = [&](int low, int high) -> int {
            const std::int64_t v = integer(value());
            EDN_VERIFY(v >= low && v <= high, ErrorCode::Usage,
                       arg << " must be in " << low << ".." << high);
            return static_cast<int>(v);
        };
        if (arg == "--backend") {
            o.backend = value();
            EDN_VERIFY(o.backend == "cpu" || o.backend == "cuda", ErrorCode::Usage,
                       "--backend must be cpu or cuda, got '" << o.backend << "'");
        } else if (arg == "--max-tets") {
            o.max_tets = integer(value());
            EDN_VERIFY(o.max_tets > 0, ErrorCode::Usage, "--max-tets must be positive");
        } else if (arg == "--min-tets") {
            o.min_tets = integer(value());
            EDN_VERIFY(o.min_tets >= 0, ErrorCode::Usage, "--min-tets must not be negative");
        } else if (arg == "--orders") {
            o.orders.clear();
            std::stringstream list(value());
            std::string item;
            while (std::getline(list, item, ',')) {
                const std::int64_t p = integer(item);
                EDN_VERIFY(p >= 1 && p <= 3, ErrorCode::Usage,
                           "--orders: order " << p << " not in 1..3");
                o.orders.push_back(static_cast<int>(p));
            }
            EDN_VERIFY(!o.orders.empty(), ErrorCode::Usage, "--orders: empty list");
            o.orders_given = true;
        } else if (arg == "--repeat") {
            o.repeat = integer_in(1, 1000);
        } else if (arg == "--frames") {
            o.frames = integer_in(1, 100000);
        } else if (arg == "--coarse-iterations") {
            o.coarse_iterations = static_cast<int>(integer(value()));
            EDN_VERIFY(o.coarse_iterations >= 0 && o.coarse_iterations <= 1000, ErrorCode::Usage,
                       "--coarse-iterations must be in 0..1000 (0: the backend's default)");
        } else if (arg == "--no-baseline") {
            o.no_baseline = true;
        } else if (arg == "--mesh") {
            o.mesh = value();
        } else if (arg == "--order") {
            const std::int64_t p = integer(value());
            EDN_VERIFY(p >= 1 && p <= 3, ErrorCode::Usage, "--order: " << p << " not in 1..3");
            o.orders = {static_cast<int>(p)};
            o.orders_given = true;
        } else if (arg == "--tol") {
            o.tolerance = real(value());
            EDN_VERIFY(o.tolerance > 0 && o.tolerance < 1, ErrorCode::Usage,
                       "--tol must be in (0, 1)");
        } else if (arg == "--max-iterations") {
            o.max_iterations = integer_in(1, 1000000);
        } else if (arg == "--dt") {
            o.dt = real(value());
            EDN_VERIFY(o.dt >= 1e-9 && o.dt <= 1e3, ErrorCode::Usage,
                       "--dt must be in [1e-9, 1e3]");
        } else if (arg == "--methods") {
            std::stringstream list(value());
            std::string item;
            while (std::getline(list, item, ','))
                if (!item.empty()) o.methods.push_back(item);
            EDN_VERIFY(!o.methods.empty(), ErrorCode::Usage, "--methods: empty list");
        } else if (arg == "--materials" || arg == "--material") {
            std::stringstream list(value());
            std::string item;
            while (std::getline(list, item, ','))
                if (!item.empty()) o.materials.push_back(item);
            EDN_VERIFY(!o.materials.empty(), ErrorCode::Usage, arg << ": empty list");
        } else if (arg == "--preconditioner") {
            o.preconditioner = value();
            EDN_VERIFY(parse_preconditioner(o.preconditioner), ErrorCode::Usage,
                       "--preconditioner: '" << o.preconditioner
                                             << "' is not block_jacobi, two_level or multigrid");
        } else if (arg == "--out" || arg == "--json") {
            o.out = value();
        } else {
            EDN_THROW(ErrorCode::Usage, "unknown option '" << arg << "'; " << usage);
        }
    }
    EDN_VERIFY(!o.out.empty(), ErrorCode::Usage, "--out is required; " << usage);
    EDN_VERIFY(o.min_tets <= o.max_tets, ErrorCode::Usage,
               "--min-tets " << o.min_tets << " exceeds --max-tets " << o.max_tets);
    if (o.repeat == 0) o.repeat = o.backend == "cuda" ? 10 : 3;
    if (o.benchmark == "step" || o.benchmark == "assembly") { // names checked before any work
        bench_materials(o, {});
        bench_methods(o);
    }
    return o;
}

} // namespace

std::vector<Material> bench_materials(const Options& options, std::vector<Material> defaults) {
    if (options.materials.empty()) return defaults;
    std::vector<Material> out;
    for (const std::string& name : options.materials) {
        const std::optional<Material> m = parse_material(name);
        EDN_VERIFY(m, ErrorCode::Usage,
                   "--materials: '" << name << "' is not linear, corotational or neohookean");
        if (std::find(out.begin(), out.end(), *m) == out.end()) out.push_back(*m);
    }
    return out;
}

std::vector<SummationMethod> bench_methods(const Options& options) {
    if (options.methods.empty())
        return {SummationMethod::PerEntry, SummationMethod::PerSimplex, SummationMethod::Inline};
    std::vector<SummationMethod> out;
    for (const std::string& name : options.methods) {
        const std::optional<SummationMethod> m = parse_summation_method(name);
        EDN_VERIFY(m, ErrorCode::Usage,
                   "--methods: '" << name << "' is not per_entry, per_simplex or inline");
        if (std::find(out.begin(), out.end(), *m) == out.end()) out.push_back(*m);
    }
    return out;
}

JsonObject assembly_json(const char* per, double element_ms, double summation_ms,
                         std::size_t element_block_bytes) {
    JsonObject a;
    a.add("per", per)
        .add("element_ms", element_ms)
        .add("summation_ms", summation_ms)
        .add("total_ms", element_ms + summation_ms)
        .add("element_blocks_bytes", element_block_bytes)
        .add("element_blocks_mib", double(element_block_bytes) / (1024.0 * 1024.0));
    return a;
}

Json inline_summary(const std::vector<JsonObject>& cases) {
    // Per (mesh, order, material, path) in the order first seen: method -> {total_ms, MiB}.
    using Key = std::tuple<std::string, int, std::string, std::string>;
    std::vector<Key> keys;
    std::map<Key, std::map<std::string, std::pair<double, double>>> rows;
    for (const JsonObject& object : cases) {
        const Json& c = object.json();
        if (c.contains("skipped") || !c.contains("assembly") || !c.contains("material")) continue;
        if (c.value("scene", std::string("gravity")) != "gravity" ||
            c.value("preconditioner", std::string("block_jacobi")) != "block_jacobi")
            continue;
        const Key key{c["mesh"].get<std::string>(), c["order"].get<int>(),
                      c["material"].get<std::string>(), c.value("path", std::string())};
        if (!rows.count(key)) keys.push_back(key);
        const Json& a = c["assembly"];
        const auto number = [](const Json& v) {
            return v.is_number() ? v.get<double>() : std::nan(""); // null: NaN
        };
        rows[key][c["method"].get<std::string>()] = {number(a["total_ms"]),
                                                     number(a["element_blocks_mib"])};
    }
    Json out = Json::array();
    for (const Key& key : keys) {
        const auto& by_method = rows[key];
        const auto get = [&](const char* method, bool mib) {
            const auto it = by_method.find(method);
            if (it == by_method.end()) return std::nan("");
            return mib ? it->second.second : it->second.first;
        };
        const double per_entry = get("per_entry", false), per_simplex = get("per_simplex", false),
                     inline_ms = get("inline", false);
        JsonObject row;
        row.add("mesh", std::get<0>(key))
            .add("order", std::get<1>(key))
            .add("material", std::get<2>(key));
        if (!std::get<3>(key).empty()) row.add("path", std::get<3>(key));
        row.add("per_entry_ms", per_entry)
            .add("per_simplex_ms", per_simplex)
            .add("inline_ms", inline_ms)
            .add("inline_over_per_entry", inline_ms / per_entry)
            .add("inline_over_per_simplex", inline_ms / per_simplex)
            .add("element_blocks_mib_saved", get("per_entry", true) - get("inline", true));
        out.push_back(row.json());
    }
    return out;
}

std::string BoxCase::name() const {
    return "box-" + std::to_string(nx) + "x" + std::to_string(ny) + "x" + std::to_string(nz);
}

std::vector<BoxCase> standard_boxes(std::int64_t max_tets) {
    // 7986, 50400, 127008, 403440, 720300, 1111158, 1724976 tets.
    const BoxCase all[] = {{11, 11, 11}, {20, 20, 21}, {27, 28, 28}, {40, 41, 41},
                           {49, 49, 50}, {57, 57, 57}, {66, 66, 66}};
    std::vector<BoxCase> out;
    for (const BoxCase& b : all)
        if (b.tets() <= max_tets) out.push_back(b);
    return out;
}

bool order_runs_on(int order, std::int64_t tets, std::int64_t p3_limit) {
    if (order == 1) return true;
    if (order == 2) return tets <= 1'200'000;
    return tets <= p3_limit;
}

MeshData make_mesh_data(const BoxCase& box) {
    MeshData d;
    d.box = box;
    d.name = box.name();
    double t0 = now_ms();
    // Cubic cells: the box's extent follows the cell counts.
    d.mesh = make_box_tet_mesh(box.nx, box.ny, box.nz, {0, 0, 0},
                               {double(box.nx) / box.nz, double(box.ny) / box.nz, 1.0});
    d.generate_ms = now_ms() - t0;
    t0 = now_ms();
    d.topology = build_topology(d.mesh);
    d.topology_ms = now_ms() - t0;
    return d;
}

MeshData load_mesh_data(const std::string& path) {
    MeshData d;
    double t0 = now_ms();
    d.mesh = load_tet_mesh(path);
    d.name = std::filesystem::path(path).filename().string();
    EDN_VERIFY(d.mesh.num_cells() > 0, ErrorCode::EmptyMesh, path << ": no cells");
    d.generate_ms = now_ms() - t0;
    t0 = now_ms();
    d.topology = build_topology(d.mesh);
    d.topology_ms = now_ms() - t0;
    return d;
}

double process_cpu_ms() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return 1e3 * double(t.tv_sec) + 1e-6 * double(t.tv_nsec);
}

double median(std::vector<double> samples) {
    if (samples.empty()) return std::nan("");
    std::sort(samples.begin(), samples.end());
    const std::size_t n = samples.size();
    return n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

std::string commit_id() {
    if (const char* env = std::getenv("EDN_COMMIT"); env && *env) return env;
    std::string out;
    if (FILE* pipe = popen("git rev-parse --short HEAD 2>/dev/null", "r")) {
        char buf[64];
        while (std::fgets(buf, sizeof(buf), pipe)) out += buf;
        if (pclose(pipe) != 0) out.clear();
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out.empty() ? "unknown" : out;
}

JsonObject bench_header(const Options& options, const std::string& device) {
    JsonObject h;
    h.add("benchmark", options.benchmark)
        .add("backend", options.backend)
        .add("device", device)
        .add("commit", commit_id())
        .add("host_threads", num_threads())
        .add("repeat", options.repeat)
        .add("max_tets", options.max_tets)
        .add("min_tets", options.min_tets);
    return h;
}

void write_bench_json(const Options& options, const JsonObject& header,
                      const std::vector<JsonObject>& cases, bool complete) {
    JsonObject doc = header;
    doc.add("complete", complete);
    doc.add("cases", cases);
    // Six significant digits: timings are not more precise than that, and the files stay short.
    write_json_file(options.out, doc.json(), {JsonLayout::Lines, 6});
}

void progress(const std::string& line) {
    std::cerr << "[bench] " << line << std::endl;
}

int run_bench(int argc, char** argv) {
    std::string program = argc > 0 ? argv[0] : "elastodyn-bench";
    if (const auto slash = program.rfind('/'); slash != std::string::npos)
        program = program.substr(slash + 1);
    // One line per failure, whatever the message holds.
    auto fail = [&](std::string message, int code) {
        for (char& c : message)
            if (c == '\n' || c == '\r') c = ' ';
        std::cout.flush();
        std::cerr << program << ": error: " << message << std::endl;
        return code;
    };
    try {
        if (argc >= 2 &&
            (std::string(argv[argc - 1]) == "--help" || std::string(argv[argc - 1]) == "-h")) {
            std::cout << usage_line(program) << "\n" << kHelp;
            return 0;
        }
        const Options options = parse_options(argc, argv, program);
        if (options.benchmark == "assembly")
            run_assembly_bench(options);
        else if (options.benchmark == "spmv")
            run_spmv_bench(options);
        else if (options.benchmark == "reorder")
            run_reorder_bench(options);
        else if (options.benchmark == "repattern")
            run_repattern_bench(options);
        else if (options.benchmark == "pcg")
            run_pcg_bench(options);
        else if (options.benchmark == "solve")
            run_solve_bench(options);
        else
            run_step_bench(options);
        return 0;
    } catch (const Error& e) {
        return fail(std::string(error_code_name(e.code())) + ": " + e.what(),
                    exit_code_for(e.code()));
    } catch (const std::bad_alloc&) {
        return fail("out of host memory", 4);
    } catch (const std::exception& e) {
        return fail(std::string("internal error: ") + e.what(), 4);
    }
}

} // namespace edn::bench
