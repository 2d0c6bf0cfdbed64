// Runs `elastodyn-cli bench` as a user would: the step benchmark on a small CPU mesh writes the
// Bench JSON with finite timings and plausible iteration counts; usage errors exit 2 with one
// line and leave no output file.

#include "core/json.hpp"
#include "support/backend.hpp"
#include "support/cli.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace edn {
namespace {

namespace fs = std::filesystem;

using BenchRun = test::CliRun;
using test::read_text;

class CliBench : public ::testing::Test {
protected:
    void SetUp() override { root_ = scratch_.path; }

    /// Runs elastodyn-cli with `arguments` (no shell), stdout and stderr captured in files.
    BenchRun run(const std::vector<std::string>& arguments) const {
        return test::run_cli_captured(root_, arguments);
    }

    test::TempDir scratch_{"edn_cli_bench"};
    fs::path root_;
};

/// The numbers of the flat JSON object that follows `"key":` at `from` (values only).
std::vector<double> object_numbers(const std::string& text, std::size_t from) {
    std::vector<double> values;
    const std::size_t open = text.find('{', from), close = text.find('}', open);
    std::size_t at = open;
    while ((at = text.find(':', at)) != std::string::npos && at < close) {
        ++at;
        char* end = nullptr;
        const double v = std::strtod(text.c_str() + at, &end);
        values.push_back(end == text.c_str() + at ? std::nan("") : v); // null -> NaN
    }
    return values;
}

/// The number after `"key":` at or after `from` (NaN when absent or not a number).
double number_after(const std::string& text, const std::string& key, std::size_t from) {
    const std::size_t at = text.find("\"" + key + "\":", from);
    if (at == std::string::npos) return std::nan("");
    const char* start = text.c_str() + at + key.size() + 3;
    char* end = nullptr;
    const double v = std::strtod(start, &end);
    return end == start ? std::nan("") : v;
}

TEST_F(CliBench, StepWritesFiniteTimingsAndIterations) {
    const fs::path json = root_ / "bench.json";
    const BenchRun r = run({"bench", "step", "--backend", "cpu", "--max-tets", "2000", "--frames",
                            "3", "--out", json.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string text = read_text(json);
    for (const char* key : {"\"benchmark\": \"step\"", "\"backend\": \"cpu\"", "\"device\"",
                            "\"commit\"", "\"complete\": true", "\"cases\""})
        EXPECT_NE(text.find(key), std::string::npos) << key;

    // One case per line: p = 1 and 2 x 2 materials x 3 methods, drag, linear x 3 methods, and
    // p = 2 x 2 materials with the two-level preconditioner.
    int cases = 0;
    // (the header's "scene" object also starts with "mesh": count from "cases" on).
    for (std::size_t at = text.find("{\"mesh\":", text.find("\"cases\"")); at != std::string::npos;
         at = text.find("{\"mesh\":", at + 1)) {
        ++cases;
        const std::string line = text.substr(at, text.find('\n', at) - at);
        SCOPED_TRACE(line.substr(0, 120));
        for (const char* key : {"\"tets\":", "\"order\":", "\"method\":", "\"material\":",
                                "\"median_ms\":", "\"baseline\":"})
            EXPECT_NE(line.find(key), std::string::npos) << key;
        // The 2000-tet cap gives the largest near-cubic box below it: 6 x 7 x 7 hexahedra.
        EXPECT_EQ(number_after(line, "tets", 0), 1764);
        EXPECT_EQ(number_after(line, "frames", 0), 3);
        const std::size_t median_at = line.find("\"median_ms\":");
        ASSERT_NE(median_at, std::string::npos);
        const std::vector<double> ms = object_numbers(line, median_at);
        ASSERT_EQ(ms.size(), 6u); // element, summation, pcg, line_search, total, assembly
        for (double v : ms) {
            EXPECT_TRUE(std::isfinite(v));
            EXPECT_GE(v, 0);
        }
        // assembly: the median of element + summation per frame. Per frame it is at least
        // either stage and at most the whole step, so its median is too (6 digits kept).
        EXPECT_GE(ms[5] * (1 + 1e-5), std::max(ms[0], ms[1]));
        EXPECT_LE(ms[5], ms[4] * (1 + 1e-5));
        // The total covers every stage (each median is over the same frames, so allow slack).
        EXPECT_GE(ms[4], 0.5 * (ms[0] + ms[1] + ms[2] + ms[3]));
        const double fps = number_after(line, "fps", 0);
        EXPECT_TRUE(std::isfinite(fps));
        EXPECT_NEAR(fps, 1000.0 / ms[4], 1e-3 * fps);
        const double newton = number_after(line, "newton_iterations", 0);
        EXPECT_GE(newton, 1); // gravity moves the box: at least one Newton step per frame
        EXPECT_LE(newton, 3); // max_newton_iterations = 3
        const double cg = number_after(line, "cg_iterations", 0);
        EXPECT_GE(cg, newton);  // each Newton step solves with at least one CG iteration
        EXPECT_LE(cg, 3 * 200); // the CG cap per solve
        EXPECT_NE(line.find("\"finite\":true"), std::string::npos);
    }
    EXPECT_EQ(cases, 18);
    EXPECT_NE(text.find("\"preconditioner\":\"two_level\""), std::string::npos);

    // Per case the assembly per Newton iteration and the element blocks kept; inline keeps none
    // (block Jacobi), the other methods all of them.
    const Json bench = read_json_file(json);
    int inline_cases = 0;
    for (const Json& c : bench["cases"]) {
        SCOPED_TRACE(c.dump().substr(0, 160));
        const Json& a = c["assembly"];
        ASSERT_TRUE(a.is_object());
        EXPECT_EQ(a["per"], "newton_iteration");
        const double element = a["element_ms"].get<double>(),
                     summation = a["summation_ms"].get<double>();
        EXPECT_TRUE(std::isfinite(element) && element > 0);
        EXPECT_TRUE(std::isfinite(summation) && summation > 0);
        // The JSON keeps 6 significant digits.
        EXPECT_NEAR(a["total_ms"].get<double>(), element + summation, 1e-5 * (element + summation));
        const int order = c["order"].get<int>();
        const double kept = a["element_blocks_bytes"].get<double>();
        if (c["method"] == "inline") {
            ++inline_cases;
            EXPECT_EQ(kept, 0);
        } else {
            const double m = order == 1 ? 4 : 10;
            EXPECT_EQ(kept, 1764 * m * m * 9 * sizeof(double));
        }
        EXPECT_NEAR(a["element_blocks_mib"].get<double>(), kept / (1024.0 * 1024.0),
                    1e-5 * kept / (1024.0 * 1024.0));
    }
    EXPECT_EQ(inline_cases, 5); // neo-Hookean and co-rotational at p = 1, 2; linear at p = 1
    // The summary: per (order, material) of the gravity, block-Jacobi cases, inline over
    // per-entry of element + summation.
    const Json& summary = bench["inline_summary"];
    ASSERT_EQ(summary.size(), 5u) << summary.dump();
    for (const Json& row : summary) {
        SCOPED_TRACE(row.dump());
        const double ratio = row["inline_over_per_entry"].get<double>();
        EXPECT_TRUE(std::isfinite(ratio) && ratio > 0);
        EXPECT_NEAR(ratio, row["inline_ms"].get<double>() / row["per_entry_ms"].get<double>(),
                    1e-4 * ratio);
        EXPECT_TRUE(std::isfinite(row["inline_over_per_simplex"].get<double>()));
        EXPECT_GT(row["element_blocks_mib_saved"].get<double>(), 0);
    }
}

TEST_F(CliBench, StepMaterialsAndMethodsSelectTheCases) {
    const fs::path json = root_ / "select.json";
    const BenchRun r =
        run({"bench", "step", "--max-tets", "500", "--orders", "2", "--frames", "1", "--materials",
             "linear", "--methods", "inline,per_entry", "--out", json.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json bench = read_json_file(json);
    // Linear at p = 2 (named explicitly), inline and per-entry, no two-level or drag case.
    ASSERT_EQ(bench["cases"].size(), 2u);
    EXPECT_EQ(bench["cases"][0]["method"], "inline");
    EXPECT_EQ(bench["cases"][1]["method"], "per_entry");
    for (const Json& c : bench["cases"]) {
        EXPECT_EQ(c["material"], "linear");
        EXPECT_EQ(c["order"], 2);
        EXPECT_EQ(c["preconditioner"], "block_jacobi");
    }
    ASSERT_EQ(bench["inline_summary"].size(), 1u);
    EXPECT_TRUE(bench["inline_summary"][0]["per_simplex_ms"].is_null()); // not run
}

// --preconditioner P gives every step case P (the app's multigrid; matrix-free products at
// p >= 2 on CUDA) and drops the two-level extras.
TEST_F(CliBench, StepPreconditionerOptionSetsEveryCase) {
    const fs::path json = root_ / "multigrid.json";
    const BenchRun r =
        run({"bench", "step", "--max-tets", "500", "--orders", "2", "--frames", "1", "--materials",
             "neohookean", "--methods", "per_entry", "--preconditioner", "multigrid", "--out",
             json.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json bench = read_json_file(json);
    ASSERT_EQ(bench["cases"].size(), 1u);
    EXPECT_EQ(bench["cases"][0]["preconditioner"], "multigrid");
    EXPECT_EQ(bench["cases"][0]["method"], "per_entry");
    EXPECT_TRUE(bench["cases"][0]["finite"].get<bool>());
}

TEST_F(CliBench, AssemblyTimesEveryMaterialAndMethodOnAMesh) {
    const fs::path json = root_ / "assembly.json";
    const BenchRun r =
        run({"bench", "assembly", "--mesh", (test::source_dir() / "assets/beam.obj").string(),
             "--materials", "linear,corotational,neohookean", "--orders", "1,2,3", "--repeat", "1",
             "--out", json.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json bench = read_json_file(json);
    EXPECT_TRUE(bench["complete"].get<bool>());
    // 3 orders x 3 materials x 3 methods, except the fused linear assembly at p >= 2 (no inline:
    // per-entry and per-simplex) and linear at p >= 2 through the backend (3 methods).
    ASSERT_EQ(bench["cases"].size(), 31u);
    for (const Json& c : bench["cases"]) {
        SCOPED_TRACE(c.dump().substr(0, 200));
        EXPECT_EQ(c["mesh"], "beam.obj");
        ASSERT_FALSE(c.contains("skipped"));
        const Json& a = c["assembly"];
        EXPECT_EQ(a["per"], "call");
        const double element = a["element_ms"].get<double>(),
                     summation = a["summation_ms"].get<double>();
        EXPECT_TRUE(std::isfinite(element) && element >= 0);
        EXPECT_TRUE(std::isfinite(summation) && summation > 0);
        EXPECT_NEAR(a["total_ms"].get<double>(), element + summation, 1e-5 * (element + summation));
        const bool kept = c["method"] != "inline";
        EXPECT_EQ(a["element_blocks_bytes"].get<double>() > 0, kept);
        if (c["path"] == "fused_linear") {
            EXPECT_EQ(c["material"], "linear");
            EXPECT_TRUE(c.contains("baseline")); // the fused linear assembly has its peer
            continue;
        }
        EXPECT_EQ(c["path"], "simulation_backend");
        EXPECT_GT(element, 0); // energy and gradient at least
        // Every method assembles the same matrix as per-entry (double: to rounding).
        EXPECT_LT(c["check"]["hv_rel_diff_vs_per_entry"].get<double>(), 1e-10);
    }
    // A row per (order, material, path): 3 x 3 + linear p = 2, 3 through the backend.
    const Json& summary = bench["inline_summary"];
    ASSERT_EQ(summary.size(), 11u) << summary.dump();
    for (const Json& row : summary) {
        SCOPED_TRACE(row.dump());
        if (row["path"] == "fused_linear" && row["order"].get<int>() >= 2) {
            EXPECT_TRUE(row["inline_ms"].is_null());
            continue;
        }
        EXPECT_TRUE(std::isfinite(row["inline_over_per_entry"].get<double>()));
        EXPECT_TRUE(std::isfinite(row["inline_over_per_simplex"].get<double>()));
        EXPECT_GT(row["element_blocks_mib_saved"].get<double>(), 0);
    }
}

TEST_F(CliBench, RepatternWithMultigridTimesTheFirstStepsAfterAPreparedCut) {
    const fs::path json = root_ / "repattern_mg.json";
    const std::string mesh = (test::source_dir() / "assets/beam.obj").string();
    const BenchRun r = run({"bench", "repattern", "--mesh", mesh, "--preconditioner", "multigrid",
                            "--repeat", "1", "--out", json.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json bench = read_json_file(json);
    int found = 0;
    for (const Json& c : bench["cases"]) {
        if (c["change"].get<std::string>().rfind("first steps", 0) != 0) continue;
        ++found;
        SCOPED_TRACE(c.dump().substr(0, 300));
        EXPECT_EQ(c["preconditioner"], "multigrid");
        // The preparation built the hierarchy; the first step built none and equals the lazy
        // peer's, whose first step built it.
        EXPECT_GT(c["hierarchy_ms_in_prepare"].get<double>(), 0);
        EXPECT_EQ(c["first_step_hierarchy_builds"].get<int>(), 0);
        EXPECT_TRUE(c["first_step_equal_to_lazy"].get<bool>());
        EXPECT_EQ(c["baseline"]["first_step_hierarchy_builds"].get<int>(), 1);
        EXPECT_GT(c["baseline"]["hierarchy_build_ms"].get<double>(), 0);
        EXPECT_GT(c["first_step_ms_wall"].get<double>(), 0);
    }
    EXPECT_EQ(found, 1);
    const BenchRun bad = run({"bench", "repattern", "--mesh", mesh, "--preconditioner", "amg",
                              "--out", (root_ / "bad.json").string()});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--preconditioner"), std::string::npos) << bad.err;
}

TEST_F(CliBench, RepatternTimesTheHostRebuildAfterACutAndARefinement) {
    const fs::path json = root_ / "repattern.json";
    const BenchRun r = run({"bench", "repattern", "--backend", "cpu", "--max-tets", "10000",
                            "--orders", "1", "--repeat", "1", "--out", json.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string text = read_text(json);
    for (const char* key : {"\"benchmark\": \"repattern\"", "\"complete\": true", "\"cases\""})
        EXPECT_NE(text.find(key), std::string::npos) << key;
    int cases = 0;
    for (std::size_t at = text.find("{\"mesh\":", text.find("\"cases\"")); at != std::string::npos;
         at = text.find("{\"mesh\":", at + 1)) {
        ++cases;
        const std::string line = text.substr(at, text.find('\n', at) - at);
        SCOPED_TRACE(line.substr(0, 160));
        // Below 100K tets the largest allowed box: 11 x 11 x 11 hexahedra, 7986 tets.
        EXPECT_EQ(number_after(line, "tets_before", 0), 7986);
        const double tets = number_after(line, "tets", line.find("\"tets\":"));
        if (line.find("plane cut") != std::string::npos)
            EXPECT_EQ(tets, 7986); // a cut separates faces, it adds no cell
        else
            EXPECT_GT(tets, 7986); // the refinement splits cells
        for (const char* key : {"topology", "pattern", "maps", "total"}) {
            const double ms = number_after(line, key, line.find("\"baseline\""));
            EXPECT_TRUE(std::isfinite(ms) && ms >= 0) << key;
        }
        EXPECT_GT(number_after(line, "nnz_blocks", 0), tets / 6);
        EXPECT_GT(number_after(line, "simulation_pattern_build_ms", 0), 0);
        EXPECT_GT(number_after(line, "simulation_rebuild_ms_wall", 0), 0);
    }
    EXPECT_EQ(cases, 2);
}

TEST_F(CliBench, UsageErrorsExit2WithOneLine) {
    const fs::path json = root_ / "bench.json";
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"bench", "nonsense", "--out", json.string()},
          std::vector<std::string>{"bench", "step", "--frames", "0", "--out", json.string()},
          std::vector<std::string>{"bench", "step", "--max-tets", "2000"},
          std::vector<std::string>{"bench", "step", "--bogus", "--out", json.string()},
          std::vector<std::string>{"bench", "step", "--materials", "rubber", "--out",
                                   json.string()},
          std::vector<std::string>{"bench", "assembly", "--methods", "fused", "--out",
                                   json.string()},
          std::vector<std::string>{"bench", "spmv", "--min-tets", "100", "--max-tets", "10",
                                   "--out", json.string()},
          std::vector<std::string>{"bench", "pcg", "--backend", "cpu", "--out", json.string()},
          std::vector<std::string>{"bench", "solve", "--tol", "0", "--out", json.string()},
          std::vector<std::string>{"bench", "solve", "--order", "4", "--out", json.string()},
          std::vector<std::string>{"bench", "solve", "--dt", "nan", "--json", json.string()},
          std::vector<std::string>{"bench", "solve", "--backend", "cuda", "--out", json.string()},
          std::vector<std::string>{"bench"}}) {
        SCOPED_TRACE(args.size() > 1 ? args[1] : "(none)");
        const BenchRun r = run(args);
        EXPECT_EQ(r.exit_code, 2);
        ASSERT_FALSE(r.err.empty());
        EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
        EXPECT_FALSE(fs::exists(json));
    }
}

TEST_F(CliBench, CudaWithoutDeviceFailsCleanly) {
    if (test::has_cuda_device()) GTEST_SKIP() << "a CUDA device is present";
    const fs::path json = root_ / "bench.json";
    const BenchRun r =
        run({"bench", "step", "--backend", "cuda", "--max-tets", "2000", "--out", json.string()});
    EXPECT_EQ(r.exit_code, 4);
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_FALSE(fs::exists(json));
}

TEST_F(CliBench, StepRunsOnAUsersMeshPinnedAtItsBase) {
    const fs::path json = root_ / "beam.json";
    const BenchRun r =
        run({"bench", "step", "--mesh", (test::source_dir() / "assets/beam.obj").string(),
             "--orders", "1", "--frames", "2", "--out", json.string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json bench = read_json_file(json);
    EXPECT_EQ(bench["scene"]["mesh"], "beam.obj");
    ASSERT_FALSE(bench["cases"].empty());
    bool drag = false;
    for (const Json& c : bench["cases"]) {
        EXPECT_EQ(c["mesh"], "beam.obj");
        EXPECT_EQ(c["tets"], bench["scene"]["tets"]);
        EXPECT_GT(c["pinned_nodes"].get<double>(), 0) << c.dump();
        EXPECT_TRUE(c["finite"].get<bool>()) << c.dump();
        EXPECT_FALSE(c.contains("target")); // the box's targets do not apply
        drag = drag || c["scene"] == "gravity+drag";
    }
    EXPECT_TRUE(drag);
    // A mesh that is not there: exit 3 with one line, no output.
    const fs::path missing_json = root_ / "missing.json";
    const BenchRun missing = run({"bench", "step", "--mesh", (root_ / "nope.node").string(),
                                  "--out", missing_json.string()});
    EXPECT_EQ(missing.exit_code, 3) << missing.err;
    EXPECT_EQ(missing.err.find('\n'), missing.err.size() - 1) << missing.err;
    EXPECT_FALSE(fs::exists(missing_json));
}

TEST_F(CliBench, HelpListsEveryBenchmarkAndOption) {
    for (const std::vector<std::string>& arguments : {std::vector<std::string>{"bench", "--help"},
                                                      {"bench", "step", "--help"},
                                                      {"bench", "solve", "--help"}}) {
        const BenchRun help = run(arguments);
        EXPECT_EQ(help.exit_code, 0) << help.err;
        for (const char* word : {"assembly",    "spmv",      "step",
                                 "reorder",     "repattern", "pcg",
                                 "solve",       "--backend", "--max-tets",
                                 "--min-tets",  "--orders",  "--order",
                                 "--repeat",    "--frames",  "--coarse-iterations",
                                 "--materials", "--tol",     "--max-iterations",
                                 "--dt",        "--json",    "--out"})
            EXPECT_NE(help.out.find(word), std::string::npos) << word << "\n" << help.out;
    }
    // The top-level usage names all six benchmarks too.
    const BenchRun top = run({"--help"});
    EXPECT_NE(top.out.find("reorder|repattern|pcg|solve"), std::string::npos) << top.out;
}

TEST_F(CliBench, SolveRunsEveryMethodOnTheSameSystem) {
    const fs::path json = root_ / "solve.json";
    const double tol = 1e-8; // tight, so that the solutions must agree closely
    // The HYPRE peer's OpenMPI keeps allocations to the end of the process (LeakSanitizer reports
    // them from libmpi and its unloaded components): a sanitized child runs with leak checks off
    // (the engine's own code is leak-checked in process by the solver tests).
    const char* asan = std::getenv("ASAN_OPTIONS");
    const std::string saved = asan ? asan : "";
    const std::string off = saved.empty() ? "detect_leaks=0" : saved + ":detect_leaks=0";
    setenv("ASAN_OPTIONS", off.c_str(), 1);
    const BenchRun r = run({"bench", "solve", "--max-tets", "1000", "--orders", "1,2", "--tol",
                            "1e-8", "--repeat", "1", "--json", json.string()});
    if (asan)
        setenv("ASAN_OPTIONS", saved.c_str(), 1);
    else
        unsetenv("ASAN_OPTIONS");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const Json bench = read_json_file(json);
    EXPECT_EQ(bench["benchmark"], "solve");
    EXPECT_TRUE(bench["complete"].get<bool>());
    EXPECT_EQ(bench["scene"]["relative_tolerance"].get<double>(), tol);
    const bool hypre = bench["hypre_built"].get<bool>();
    EXPECT_EQ(r.out.find("hypre: not built") == std::string::npos, hypre) << r.out;
    ASSERT_EQ(bench["cases"].size(), 2u);
    for (const Json& c : bench["cases"]) {
        SCOPED_TRACE(c.dump().substr(0, 200));
        const int order = c["order"].get<int>();
        EXPECT_EQ(c["tets"], 900); // the largest near-cubic box within 1000 tets: 5 x 5 x 6
        EXPECT_GT(c["pinned_nodes"].get<double>(), 0);
        EXPECT_LT(c["free_dofs"].get<double>(), c["dofs"].get<double>());
        // The matrix is the simulation's own Newton Hessian (a random product compared).
        EXPECT_LT(c["newton_matrix_check"].get<double>(), 1e-12);
        std::map<std::string, Json> methods;
        for (const Json& m : c["methods"]) methods[m["method"].get<std::string>()] = m;
        std::vector<std::string> expected = {"block_jacobi"};
        if (order >= 2) expected.push_back("two_level");
        expected.insert(expected.end(), {"multigrid", "multigrid_parallel_aggregation"});
        if (hypre)
            expected.insert(expected.end(),
                            {"hypre_pcg_boomeramg", "hypre_pcg_boomeramg_rbm", "hypre_boomeramg"});
        EXPECT_EQ(methods.size(), expected.size());
        for (const std::string& name : expected) {
            SCOPED_TRACE(name);
            ASSERT_TRUE(methods.count(name));
            const Json& m = methods[name];
            for (const char* key :
                 {"setup_ms", "solve_ms", "setup_cpu_ms", "solve_cpu_ms", "ms_per_iteration"}) {
                const double v = m[key].get<double>();
                EXPECT_TRUE(std::isfinite(v) && v >= 0) << key;
            }
            EXPECT_TRUE(m["converged"].get<bool>());
            EXPECT_GT(m["iterations"].get<int>(), 0);
            // Recomputed with a fresh A x: every method meets the same rule on the same system,
            // so all solutions agree to what the tolerance allows.
            EXPECT_LE(m["relative_residual"].get<double>(), 1.01 * tol);
            EXPECT_LE(m["difference_to_reference"].get<double>(), 1e-6);
            // Each method's own stopping quantity is this relative 2-norm residual (HYPRE's PCG
            // only with two_norm; its default preconditioned norm would differ).
            const double recomputed = m["relative_residual"].get<double>();
            EXPECT_NEAR(m["reported_relative_residual"].get<double>(), recomputed,
                        0.01 * recomputed);
        }
        const int jacobi = methods["block_jacobi"]["iterations"].get<int>();
        if (order >= 2) {
            EXPECT_LT(methods["two_level"]["iterations"].get<int>(), jacobi);
        }
        EXPECT_LT(methods["multigrid"]["iterations"].get<int>(), jacobi);
        EXPECT_LT(methods["multigrid_parallel_aggregation"]["iterations"].get<int>(), jacobi);
        if (hypre) {
            EXPECT_LT(methods["hypre_pcg_boomeramg"]["iterations"].get<int>(), jacobi);
        }
    }
}

} // namespace
} // namespace edn
