// Runs the real elastodyn-cli binary: exit codes of the DESIGN.md contract, one-line errors that
// name the file, no output file unless successful, and counts checked against brute force.

#include "core/types.hpp"
#include "mesh/tet_mesh.hpp"
#include "mesh/tetgen_io.hpp"
#include "support/cli.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iomanip>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace edn {
namespace {

namespace fs = std::filesystem;

using test::CliRun;
using test::read_text;

/// Fixture: an output directory the CLI writes into, and a separate one for captured output, so
/// that the output directory can be checked for leftovers.
class Cli : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = scratch_.path;
        out_dir_ = root_ / "out";
        capture_dir_ = root_ / "capture";
        fs::create_directories(out_dir_);
        fs::create_directories(capture_dir_);
    }

    /// Runs elastodyn-cli with `arguments` (no shell), with a 120 s limit.
    CliRun run(const std::vector<std::string>& arguments) const {
        return test::run_cli_captured(capture_dir_, arguments, std::chrono::seconds(120));
    }

    /// Names of what is in the output directory.
    std::vector<std::string> leftovers() const {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(out_dir_))
            names.push_back(entry.path().filename().string());
        return names;
    }

    test::TempDir scratch_{"edn_cli_test"};
    fs::path root_, out_dir_, capture_dir_;
};

/// Expects a failed run: exit `code`, not a signal, one "elastodyn-cli: error: " line on stderr
/// that contains `must_contain`, nothing on stdout.
void expect_failure(const CliRun& run, int code, const std::string& must_contain) {
    EXPECT_TRUE(run.exited) << "killed by signal " << run.signal_number;
    EXPECT_EQ(run.exit_code, code) << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
    EXPECT_FALSE(run.err.empty() || run.err.back() != '\n') << run.err;
    EXPECT_EQ(run.err.rfind("elastodyn-cli: error: ", 0), 0u) << run.err;
    EXPECT_NE(run.err.find(must_contain), std::string::npos)
        << "'" << must_contain << "' not in: " << run.err;
    EXPECT_EQ(run.out, "");
}

/// Minimal parser for the CLI's flat JSON objects (string and number values); fails the test on
/// anything else, so malformed output is caught.
std::map<std::string, std::string> parse_flat_json(const std::string& text) {
    std::map<std::string, std::string> members;
    std::size_t i = 0;
    auto skip_space = [&] {
        while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    };
    auto parse_string = [&]() -> std::string {
        std::string value;
        if (i >= text.size() || text[i] != '"') throw std::runtime_error("expected string");
        for (++i; i < text.size() && text[i] != '"'; ++i) {
            if (text[i] == '\\') ++i;
            if (i < text.size()) value += text[i];
        }
        if (i >= text.size()) throw std::runtime_error("unterminated string");
        ++i;
        return value;
    };
    try {
        skip_space();
        if (i >= text.size() || text[i++] != '{') throw std::runtime_error("expected {");
        for (;;) {
            skip_space();
            const std::string key = parse_string();
            skip_space();
            if (i >= text.size() || text[i++] != ':') throw std::runtime_error("expected :");
            skip_space();
            std::string value;
            if (i < text.size() && text[i] == '"') {
                value = parse_string();
            } else {
                const std::size_t start = i;
                while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) ||
                                           std::string("+-.eE").find(text[i]) != std::string::npos))
                    ++i;
                value = text.substr(start, i - start);
                std::size_t used = 0;
                std::stod(value, &used);
                if (used != value.size()) throw std::runtime_error("bad number " + value);
            }
            if (!members.emplace(key, value).second) throw std::runtime_error("duplicate key");
            skip_space();
            if (i < text.size() && text[i] == ',') {
                ++i;
                continue;
            }
            if (i < text.size() && text[i] == '}') {
                ++i;
                break;
            }
            throw std::runtime_error("expected , or }");
        }
        skip_space();
        if (i != text.size()) throw std::runtime_error("trailing text");
    } catch (const std::exception& error) {
        ADD_FAILURE() << "invalid JSON (" << error.what() << "): " << text;
    }
    return members;
}

long long integer_member(const std::map<std::string, std::string>& json, const std::string& key) {
    const auto it = json.find(key);
    if (it == json.end()) {
        ADD_FAILURE() << "missing key " << key;
        return -1;
    }
    return std::stoll(it->second);
}

/// The test cube: our own closed unit cube of 12 triangles.
fs::path cube_obj() {
    return test::data_path("good/tet_cli_cube.obj");
}

TEST_F(Cli, EveryBadFileFailsCleanlyWithExitCode3) {
    // Every bad input file is exit 3 (binary or unknown-version .msh files included).
    const std::map<std::string, int> expected_code = {};
    const std::set<std::string> mesh_extensions = {".obj", ".node", ".ele", ".msh"};
    int tested = 0;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(test::data_path("bad")))
        if (entry.is_regular_file() && mesh_extensions.count(entry.path().extension().string()))
            files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
        const std::string name = file.filename().string();
        const int code = expected_code.count(name) ? expected_code.at(name) : 3;
        // A .node/.ele error may be reported against the other file of the pair: the stem is
        // what both share.
        const std::string named = file.extension() == ".obj" ? name : file.stem().string();
        const fs::path output = out_dir_ / "result.node";
        std::vector<std::vector<std::string>> commands = {
            {"tetrahedralize", file.string(), output.string(), "--quality", "2"},
            {"info", file.string()},
        };
        for (const auto& arguments : commands) {
            SCOPED_TRACE(arguments[0] + " " + name);
            expect_failure(run(arguments), code, named);
            EXPECT_TRUE(leftovers().empty()) << "output left behind for " << name;
        }
        ++tested;
    }
    EXPECT_GE(tested, 1) << "no bad files found in " << test::data_path("bad");
}

TEST_F(Cli, MissingAndUnknownFilesAreBadInput) {
    expect_failure(run({"info", (root_ / "missing.obj").string()}), 3, "missing.obj");
    std::ofstream(root_ / "mesh.xyz") << "1 2 3\n";
    expect_failure(run({"info", (root_ / "mesh.xyz").string()}), 3, "'.xyz'");
    // Output into a directory that does not exist.
    expect_failure(
        run({"tetrahedralize", cube_obj().string(), (root_ / "nowhere" / "x.node").string()}), 3,
        "x.node");
    EXPECT_TRUE(leftovers().empty());
}

TEST_F(Cli, NonRegularInputsAreRefusedWithoutReadingThem) {
    // /dev/zero read whole is 16 GB and more; a pipe blocks until a writer comes.
    const fs::path zero = root_ / "zero.obj";
    fs::create_symlink("/dev/zero", zero);
    const fs::path zero_node = root_ / "zero.node";
    fs::create_symlink("/dev/zero", zero_node);
    const fs::path pipe = root_ / "pipe.obj";
    ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
    const std::string kind = ": cannot open: not a regular file (a device, pipe or socket)";
    expect_failure(run({"info", zero.string()}), 3, "zero.obj" + kind);
    expect_failure(run({"info", zero_node.string()}), 3, "zero.node" + kind);
    expect_failure(run({"info", pipe.string()}), 3, "pipe.obj" + kind);
    const std::string mesh = test::data_path("good/cube.node").string();
    const std::string matrix = (out_dir_ / "K.mtx").string();
    expect_failure(run({"export", mesh, "--displacement", root_.string(), "--matrix", matrix}), 3,
                   root_.string() + ": cannot open: is a directory");
    expect_failure(run({"export", mesh, "--displacement", zero.string(), "--matrix", matrix}), 3,
                   "zero.obj" + kind);
    EXPECT_TRUE(leftovers().empty());
}

TEST_F(Cli, NoOutputOverwritesAnInputOrAnotherOutput) {
    const fs::path in = root_ / "in";
    fs::create_directories(in);
    fs::copy_file(test::data_path("good/cube.node"), in / "cube.node");
    fs::copy_file(test::data_path("good/cube.ele"), in / "cube.ele");
    const std::string node = (in / "cube.node").string();
    const std::string node_text = read_text(in / "cube.node");
    const std::string ele_text = read_text(in / "cube.ele");
    const std::string matrix = (out_dir_ / "K.mtx").string();
    const std::string same_as_input = "is the same file as input";
    expect_failure(run({"export", node, "--matrix", node}), 2,
                   node + ": output --matrix " + same_as_input + " MESH");
    // The other file of the pair, spelt differently.
    expect_failure(run({"export", node, "--force", (in / ".." / "in" / "cube.ele").string(),
                        "--matrix", matrix}),
                   2, same_as_input + " MESH");
    expect_failure(run({"export", node, "--matrix", matrix, "--displacement", matrix}), 2,
                   same_as_input + " --displacement");
    expect_failure(
        run({"export", node, "--matrix", matrix, "--force", (out_dir_ / "." / "K.mtx").string()}),
        2, "outputs --matrix and --force are the same file");
    expect_failure(run({"tetrahedralize", node, node}), 2, same_as_input + " MESH");
    expect_failure(run({"simulate", node, "--frames", "1", "--out", matrix, "--vtu", matrix}), 2,
                   "outputs --out and --vtu are the same file");
    EXPECT_EQ(read_text(in / "cube.node"), node_text);
    EXPECT_EQ(read_text(in / "cube.ele"), ele_text);
    EXPECT_TRUE(leftovers().empty());

    // An existing target that is not a regular file (here a pipe; /dev/full as root is the
    // same case) is refused, not replaced by a regular file.
    const fs::path pipe = out_dir_ / "pipe.mtx";
    ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
    expect_failure(run({"export", node, "--matrix", pipe.string()}), 3,
                   "pipe.mtx: cannot write: exists and is not a regular file");
    EXPECT_TRUE(fs::is_fifo(pipe));
    fs::remove(pipe);

    // Through a symbolic link the file it names is replaced and the link kept.
    { std::ofstream(out_dir_ / "real.mtx") << "old\n"; }
    fs::create_symlink("real.mtx", out_dir_ / "link.mtx");
    const CliRun linked = run({"export", node, "--matrix", (out_dir_ / "link.mtx").string()});
    ASSERT_EQ(linked.exit_code, 0) << linked.err;
    EXPECT_TRUE(fs::is_symlink(fs::symlink_status(out_dir_ / "link.mtx")));
    EXPECT_EQ(read_text(out_dir_ / "real.mtx").rfind("%%MatrixMarket", 0), 0u);
}

TEST_F(Cli, AFailedCommandPublishesNoOutputs) {
    const std::string node = test::data_path("good/cube.node").string();
    const fs::path matrix = out_dir_ / "K.mtx";
    { std::ofstream(matrix) << "old\n"; }
    fs::create_directory(out_dir_ / "f.txt");
    expect_failure(run({"export", node, "--matrix", matrix.string(), "--force",
                        (out_dir_ / "f.txt").string()}),
                   3, "f.txt: cannot write: is a directory");
    expect_failure(run({"export", node, "--matrix", matrix.string(), "--force",
                        (root_ / "nowhere" / "f.txt").string()}),
                   3, "f.txt: cannot write: directory");
    EXPECT_EQ(read_text(matrix), "old\n"); // neither replaced nor removed
    fs::create_directory(out_dir_ / "o.vtu");
    expect_failure(run({"simulate", node, "--frames", "2", "--out",
                        (out_dir_ / "run.json").string(), "--vtu", (out_dir_ / "o.vtu").string()}),
                   3, "o.vtu: cannot write: is a directory");
    std::vector<std::string> files = leftovers();
    std::sort(files.begin(), files.end());
    EXPECT_EQ(files, (std::vector<std::string>{"K.mtx", "f.txt", "o.vtu"}));
    // A bad input after the outputs were checked leaves nothing either.
    fs::remove(out_dir_ / "f.txt");
    expect_failure(
        run({"export", node, "--matrix", matrix.string(), "--force", (out_dir_ / "f.txt").string(),
             "--displacement", (root_ / "missing.txt").string()}),
        3, "missing.txt");
    EXPECT_EQ(read_text(matrix), "old\n");
    files = leftovers();
    std::sort(files.begin(), files.end());
    EXPECT_EQ(files, (std::vector<std::string>{"K.mtx", "o.vtu"}));
    // And a successful run publishes all of them.
    const CliRun ok = run(
        {"export", node, "--matrix", matrix.string(), "--force", (out_dir_ / "f.txt").string()});
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_EQ(read_text(matrix).rfind("%%MatrixMarket", 0), 0u);
    EXPECT_TRUE(fs::is_regular_file(out_dir_ / "f.txt"));
}

TEST_F(Cli, ResourceErrorsExitWith4) {
    // 10^12 tetrahedra are refused before TetGen starts.
    expect_failure(run({"tetrahedralize", cube_obj().string(), (out_dir_ / "x.node").string(),
                        "--max-volume", "1e-12"}),
                   4, "tet_cli_cube.obj");
    EXPECT_TRUE(leftovers().empty());
    // Quality meshing of a 1 x 1 x 1e-4 plate never ends by itself: the clock stops it.
    const fs::path thin = root_ / "thin.obj";
    {
        std::ofstream obj(thin);
        for (double z : {0.0, 1e-4})
            obj << "v 0 0 " << z << "\nv 1 0 " << z << "\nv 1 1 " << z << "\nv 0 1 " << z << "\n";
        obj << "f 1 4 3\nf 1 3 2\nf 5 6 7\nf 5 7 8\nf 1 2 6\nf 1 6 5\n"
            << "f 2 3 7\nf 2 7 6\nf 3 4 8\nf 3 8 7\nf 4 1 5\nf 4 5 8\n";
    }
    expect_failure(run({"tetrahedralize", thin.string(), (out_dir_ / "thin.node").string(),
                        "--time-limit", "0.5"}),
                   4, "thin.obj: TetGen did not finish within the time limit of 0.5 s");
    EXPECT_TRUE(leftovers().empty());
}

TEST_F(Cli, UsageErrorsExitWith2) {
    const std::string cube = cube_obj().string();
    const std::string out = (out_dir_ / "cube.node").string();
    const std::vector<std::vector<std::string>> cases = {
        {"frobnicate"},
        {"info"},
        {"info", cube, "extra"},
        {"info", cube, "--bogus"},
        {"info", cube, "--order"},
        {"info", cube, "--order", "4"},
        {"info", cube, "--order", "0"},
        {"info", cube, "--order", "1.5"},
        {"info", cube, "--order", "1", "--order", "2"},
        {"info", cube, "--quality", "abc"},
        {"info", cube, "--quality", "nan"},
        {"info", cube, "--quality", "inf"},
        {"info", cube, "--quality", "0.5"},
        {"info", cube, "--quality", ""},
        {"info", cube, "--quality", "0x10"},
        {"info", cube, "--verbose=yes"},
        {"info", cube, "-x"},
        {"tetrahedralize", cube},
        {"tetrahedralize", cube, (out_dir_ / "cube.txt").string()},
        {"tetrahedralize", cube, out, "--max-volume", "-1"},
        {"tetrahedralize", cube, out, "--max-volume", "1e999"},
        {"tetrahedralize", cube, out, "--time-limit", "-1"},
    };
    for (const auto& arguments : cases) {
        std::string joined;
        for (const auto& a : arguments) joined += a + " ";
        SCOPED_TRACE(joined);
        expect_failure(run(arguments), 2, "");
        EXPECT_TRUE(leftovers().empty());
    }
}

TEST_F(Cli, HelpVersionAndNoArguments) {
    const CliRun help = run({"--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("tetrahedralize"), std::string::npos);
    EXPECT_NE(help.out.find("info"), std::string::npos);
    const CliRun none = run({});
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("usage"), std::string::npos);
    const CliRun command_help = run({"info", "--help"});
    EXPECT_EQ(command_help.exit_code, 0);
    EXPECT_NE(command_help.out.find("--order"), std::string::npos);
    const CliRun version = run({"--version"});
    EXPECT_EQ(version.exit_code, 0);
    EXPECT_EQ(version.out.rfind("elastodyn-cli ", 0), 0u);
}

/// Brute-force counts of a mesh: edges, faces, boundary faces, components (sharing a vertex).
struct Counts {
    long long edges = 0, faces = 0, boundary_faces = 0, components = 0;
};

Counts brute_force_counts(const TetMesh& mesh) {
    std::set<std::pair<Index, Index>> edges;
    std::map<std::array<Index, 3>, int> faces;
    std::vector<Index> parent(mesh.positions.size());
    std::iota(parent.begin(), parent.end(), 0);
    auto find = [&](Index v) {
        while (parent[v] != v) v = parent[v] = parent[parent[v]];
        return v;
    };
    for (const Cell& c : mesh.cells) {
        for (int i = 0; i < 4; ++i)
            for (int j = i + 1; j < 4; ++j)
                edges.insert({std::min(c[i], c[j]), std::max(c[i], c[j])});
        for (int skip = 0; skip < 4; ++skip) {
            std::array<Index, 3> f{};
            int n = 0;
            for (int k = 0; k < 4; ++k)
                if (k != skip) f[n++] = c[k];
            std::sort(f.begin(), f.end());
            ++faces[f];
        }
        for (int k = 1; k < 4; ++k) parent[find(c[k])] = find(c[0]);
    }
    Counts counts;
    counts.edges = static_cast<long long>(edges.size());
    counts.faces = static_cast<long long>(faces.size());
    for (const auto& [f, n] : faces) counts.boundary_faces += n == 1;
    std::set<Index> roots;
    for (const Cell& c : mesh.cells) roots.insert(find(c[0]));
    counts.components = static_cast<long long>(roots.size());
    return counts;
}

TEST_F(Cli, TetrahedralizeWritesAReadableMeshAndInfoMatchesBruteForce) {
    const fs::path node = out_dir_ / "cube.node";
    const fs::path ele = out_dir_ / "cube.ele";
    const CliRun meshed =
        run({"tetrahedralize", cube_obj().string(), node.string(), "--max-volume", "0.02"});
    ASSERT_EQ(meshed.exit_code, 0) << meshed.err;
    // stderr: only the one-line summary for people (test_cli_polish.cpp checks its numbers).
    EXPECT_EQ(meshed.err.rfind("tetrahedralize: ", 0), 0u) << meshed.err;
    EXPECT_EQ(std::count(meshed.err.begin(), meshed.err.end(), '\n'), 1) << meshed.err;
    EXPECT_EQ(std::count(meshed.out.begin(), meshed.out.end(), '\n'), 1) << meshed.out;
    const auto summary = parse_flat_json(meshed.out);
    std::vector<std::string> files = leftovers();
    std::sort(files.begin(), files.end());
    EXPECT_EQ(files, (std::vector<std::string>{"cube.ele", "cube.node"}));

    TetMesh mesh = read_node_ele(node);
    validate_tet_mesh(mesh, node.string());
    EXPECT_EQ(integer_member(summary, "vertices"), mesh.num_vertices());
    EXPECT_EQ(integer_member(summary, "cells"), mesh.num_cells());
    double volume = 0;
    for (const Cell& c : mesh.cells) {
        const double v = signed_volume(mesh.positions[c[0]], mesh.positions[c[1]],
                                       mesh.positions[c[2]], mesh.positions[c[3]]);
        EXPECT_LE(v, 0.02 * (1 + 1e-9));
        volume += v;
    }
    EXPECT_NEAR(volume, 1.0, 1e-9);
    EXPECT_GE(mesh.num_cells(), 50); // volume 1 in tets of at most 0.02

    const Counts expected = brute_force_counts(mesh);
    const long long V = mesh.num_vertices();
    for (int order = 1; order <= 3; ++order) {
        SCOPED_TRACE("order " + std::to_string(order));
        const CliRun info = run({"info", node.string(), "--order", std::to_string(order)});
        ASSERT_EQ(info.exit_code, 0) << info.err;
        const auto json = parse_flat_json(info.out);
        const std::vector<std::string> keys = {"file",  "vertices",       "edges",      "faces",
                                               "cells", "boundary_faces", "components", "order",
                                               "nodes", "volume"};
        for (const std::string& key : keys) EXPECT_TRUE(json.count(key)) << key;
        EXPECT_EQ(json.at("file"), node.string());
        EXPECT_EQ(integer_member(json, "vertices"), V);
        EXPECT_EQ(integer_member(json, "cells"), mesh.num_cells());
        EXPECT_EQ(integer_member(json, "edges"), expected.edges);
        EXPECT_EQ(integer_member(json, "faces"), expected.faces);
        EXPECT_EQ(integer_member(json, "boundary_faces"), expected.boundary_faces);
        EXPECT_EQ(integer_member(json, "components"), 1);
        EXPECT_EQ(integer_member(json, "order"), order);
        const long long nodes[4] = {0, V, V + expected.edges,
                                    V + 2 * expected.edges + expected.faces};
        EXPECT_EQ(integer_member(json, "nodes"), nodes[order]);
        EXPECT_NEAR(std::stod(json.at("volume")), 1.0, 1e-9);
    }
}

TEST_F(Cli, InfoMeshesAnObjDirectly) {
    const CliRun info = run({"info", cube_obj().string(), "--order", "2", "--quality", "1.5"});
    ASSERT_EQ(info.exit_code, 0) << info.err;
    const auto json = parse_flat_json(info.out);
    const long long V = integer_member(json, "vertices"), E = integer_member(json, "edges");
    const long long F = integer_member(json, "faces"), T = integer_member(json, "cells");
    const long long B = integer_member(json, "boundary_faces");
    EXPECT_GT(T, 0);
    EXPECT_EQ(4 * T, 2 * F - B); // every face has two cells except the boundary ones
    EXPECT_EQ(V - E + F - T, 1); // Euler characteristic of a ball
    EXPECT_EQ(integer_member(json, "nodes"), V + E);
    EXPECT_NEAR(std::stod(json.at("volume")), 1.0, 1e-9);
    EXPECT_TRUE(leftovers().empty());
}

TEST_F(Cli, InfoMeshesAHollowObjWithItsCavity) {
    // The file's cavity shell faces outward; a copy with it facing inward must give the same.
    const fs::path outward = test::data_path("good/hollow_cube.obj");
    const fs::path inward = root_ / "hollow_inward.obj";
    {
        std::ifstream in(outward);
        std::ofstream out(inward);
        std::string line;
        int face = 0;
        while (std::getline(in, line)) {
            if (line.rfind("f ", 0) == 0 && ++face > 12) {
                std::istringstream fields(line.substr(2));
                std::string a, b, c;
                fields >> a >> b >> c;
                line = "f " + a + " " + c + " " + b;
            }
            out << line << "\n";
        }
    }
    for (const fs::path& obj : {outward, inward}) {
        SCOPED_TRACE(obj.string());
        const CliRun info = run({"info", obj.string()});
        ASSERT_EQ(info.exit_code, 0) << info.err;
        const auto json = parse_flat_json(info.out);
        EXPECT_NEAR(std::stod(json.at("volume")), 1.0 - 0.125, 1e-9);
        EXPECT_EQ(integer_member(json, "components"), 1);
        const long long V = integer_member(json, "vertices"), E = integer_member(json, "edges");
        const long long F = integer_member(json, "faces"), T = integer_member(json, "cells");
        // A ball with a cavity: Euler characteristic 2 (two boundary spheres).
        EXPECT_EQ(V - E + F - T, 2);
    }
    EXPECT_TRUE(leftovers().empty());
}

/// Reads a MatrixMarket coordinate file into (row, col) -> value (0-based).
std::map<std::pair<long, long>, double> read_matrix_market(const fs::path& path, long& n) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "%%MatrixMarket matrix coordinate real general");
    while (std::getline(in, line) && line[0] == '%') {
    }
    long rows = 0, cols = 0, entries = 0;
    std::istringstream(line) >> rows >> cols >> entries;
    EXPECT_EQ(rows, cols);
    n = rows;
    std::map<std::pair<long, long>, double> k;
    long r, c;
    double v;
    while (in >> r >> c >> v) k[{r - 1, c - 1}] = v;
    EXPECT_EQ(static_cast<long>(k.size()), entries);
    return k;
}

std::vector<double> read_numbers(const fs::path& path) {
    std::ifstream in(path);
    std::vector<double> v;
    double x;
    while (in >> x) v.push_back(x);
    return v;
}

TEST_F(Cli, ExportLinearMatrixIsSymmetricWithRigidNullSpaceAndForceIsKu) {
    for (int order = 1; order <= 3; ++order) {
        const fs::path mesh = test::data_path("good/cube.node");
        // A displacement: u = A x for the node positions, written after a first run.
        const CliRun first = run({"export", mesh.string(), "--order", std::to_string(order),
                                  "--nodes", (out_dir_ / "nodes.txt").string(), "--matrix",
                                  (out_dir_ / "K.mtx").string(), "--E", "2000", "--nu", "0.25"});
        ASSERT_EQ(first.exit_code, 0) << first.err;
        const std::vector<double> x = read_numbers(out_dir_ / "nodes.txt");
        long n = 0;
        const auto k = read_matrix_market(out_dir_ / "K.mtx", n);
        ASSERT_EQ(static_cast<std::size_t>(n), x.size());
        double scale = 0;
        for (const auto& [rc, v] : k) scale = std::max(scale, std::abs(v));
        for (const auto& [rc, v] : k) {
            const auto t = k.find({rc.second, rc.first});
            ASSERT_NE(t, k.end());
            EXPECT_NEAR(v, t->second, 1e-12 * scale);
        }
        auto apply = [&](const std::vector<double>& u) {
            std::vector<double> y(n, 0.0);
            for (const auto& [rc, v] : k) y[rc.first] += v * u[rc.second];
            return y;
        };
        for (int axis = 0; axis < 3; ++axis) {
            std::vector<double> t(n, 0.0), w(n, 0.0);
            for (long i = 0; i < n / 3; ++i) {
                t[3 * i + axis] = 1;
                const double* p = &x[3 * i];
                double omega[3] = {0, 0, 0};
                omega[axis] = 1;
                w[3 * i] = omega[1] * p[2] - omega[2] * p[1];
                w[3 * i + 1] = omega[2] * p[0] - omega[0] * p[2];
                w[3 * i + 2] = omega[0] * p[1] - omega[1] * p[0];
            }
            for (double v : apply(t)) EXPECT_NEAR(v, 0.0, 1e-10 * scale);
            for (double v : apply(w)) EXPECT_NEAR(v, 0.0, 1e-10 * scale);
        }
        std::vector<double> u(n);
        {
            std::ofstream out(out_dir_ / "U.txt");
            for (long i = 0; i < n; ++i) {
                u[i] = 0.01 * std::sin(1.0 + 3.0 * i);
                out << std::setprecision(17) << u[i] << ((i % 3 == 2) ? '\n' : ' ');
            }
        }
        const CliRun second = run({"export", mesh.string(), "--order", std::to_string(order),
                                   "--displacement", (out_dir_ / "U.txt").string(), "--force",
                                   (out_dir_ / "f.txt").string(), "--E", "2000", "--nu", "0.25"});
        ASSERT_EQ(second.exit_code, 0) << second.err;
        const std::vector<double> f = read_numbers(out_dir_ / "f.txt");
        const std::vector<double> ku = apply(u);
        ASSERT_EQ(f.size(), ku.size());
        for (long i = 0; i < n; ++i) EXPECT_NEAR(f[i], ku[i], 1e-9 * scale);
        for (const char* name : {"nodes.txt", "K.mtx", "U.txt", "f.txt"})
            fs::remove(out_dir_ / name);
    }
}

TEST_F(Cli, ExportRejectsBadParametersAndDisplacementFiles) {
    const std::string mesh = test::data_path("good/cube.node").string();
    const std::string matrix = (out_dir_ / "K.mtx").string();
    expect_failure(run({"export", mesh, "--nu", "0.5", "--matrix", matrix}), 2, "--nu");
    expect_failure(run({"export", mesh, "--E", "nan", "--matrix", matrix}), 2, "E");
    expect_failure(run({"export", mesh, "--E", "-3", "--matrix", matrix}), 2, "E");
    expect_failure(run({"export", mesh, "--material", "rubber", "--matrix", matrix}), 2, "rubber");
    expect_failure(run({"export", mesh}), 2, "nothing to write");
    const fs::path bad = root_ / "U_bad.txt";
    { std::ofstream(bad) << "0 0 0\n1 2\n"; }
    expect_failure(run({"export", mesh, "--displacement", bad.string(), "--matrix", matrix}), 3,
                   "U_bad.txt");
    { std::ofstream(bad) << "0 0 0\n"; }
    expect_failure(run({"export", mesh, "--displacement", bad.string(), "--matrix", matrix}), 3,
                   "one per node");
    { std::ofstream(bad) << "0 0 nan\n"; }
    expect_failure(run({"export", mesh, "--displacement", bad.string(), "--matrix", matrix}), 3,
                   "non-finite");
    EXPECT_TRUE(leftovers().empty());
}

TEST_F(Cli, ExportRefusesNonFiniteResults) {
    const std::string mesh = test::data_path("good/cube.node").string();
    const std::string matrix = (out_dir_ / "K.mtx").string();
    const std::string force = (out_dir_ / "f.txt").string();
    // E near the largest double: lambda and mu overflow in K.
    expect_failure(run({"export", mesh, "--material", "linear", "--E", "1e308", "--nu", "0.49",
                        "--matrix", matrix, "--force", force}),
                   4, "cube.node: the linear tangent is not finite");
    // A displacement whose squares overflow: NaN rotations and stresses.
    const fs::path huge = root_ / "U_huge.txt";
    {
        std::ofstream out(huge);
        out << "1e200 0 0\n";
        for (int i = 1; i < 8; ++i) out << "0 0 0\n";
    }
    for (const char* material : {"corotational", "neohookean"}) {
        SCOPED_TRACE(material);
        expect_failure(run({"export", mesh, "--material", material, "--displacement", huge.string(),
                            "--matrix", matrix, "--force", force}),
                       4, "tangent is not finite");
    }
    EXPECT_TRUE(leftovers().empty());
}

TEST_F(Cli, SimulateRefusesParametersOutOfFloatRangeAndUnheldStaticSolves) {
    const std::string mesh = test::data_path("good/cube.node").string();
    const std::string out = (out_dir_ / "run.json").string();
    // 1/dt^2, dt^2, rho, |g| must be floats (the CUDA backend's type).
    const std::vector<std::vector<std::string>> absurd = {
        {"--dt", "1e-300"},
        {"--dt", "1e300"},
        {"--rho", "1e300"},
        {"--gravity", "1e300"},
        {"--E", "1e300"},
        {"--gravity", "0,1e39,0"},
        {"--damping", "1e300"},
        {"--ground-friction", "1e300"},
        {"--ground-friction", "-1"},
    };
    for (const auto& option : absurd) {
        SCOPED_TRACE(option[0] + " " + option[1]);
        std::vector<std::string> arguments = {"simulate", mesh, "--frames", "2", "--out", out};
        arguments.insert(arguments.end(), option.begin(), option.end());
        expect_failure(run(arguments), 2, option[0]);
    }
    // A free body has no static equilibrium (rigid modes; the system is singular).
    expect_failure(run({"simulate", mesh, "--static", "--out", out}), 2,
                   "--static: 8 of 8 vertices belong to parts with no pinned node");
    EXPECT_TRUE(leftovers().empty());
    const CliRun held = run({"simulate", mesh, "--static", "--pin-below", "0.01", "--out", out});
    EXPECT_EQ(held.exit_code, 0) << held.err;
    EXPECT_TRUE(fs::exists(out));
}

TEST_F(Cli, SimulateRecordsTheDeterministicSetting) {
    const std::string mesh = test::data_path("good/cube.node").string();
    const std::string out = (out_dir_ / "run.json").string();
    for (bool deterministic : {false, true}) {
        std::vector<std::string> arguments = {"simulate", mesh, "--frames", "1", "--out", out};
        if (deterministic) arguments.push_back("--deterministic");
        const CliRun r = run(arguments);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const std::string text = read_text(out);
        const std::regex setting(deterministic ? R"("deterministic":\s*true)"
                                               : R"("deterministic":\s*false)");
        EXPECT_TRUE(std::regex_search(text, setting)) << text.substr(0, 400);
    }
}

TEST_F(Cli, SimulateFailsAtTheFirstNonFiniteFrameAndWritesNothing) {
    // A tet of edge 1e90 with rho 1e38: its mass (1e308) and potential overflow double.
    const fs::path huge = root_ / "huge.node";
    {
        std::ofstream(huge) << "4 3 0 0\n0 0 0 0\n1 1e90 0 0\n2 0 1e90 0\n3 0 0 1e90\n";
        std::ofstream(root_ / "huge.ele") << "1 4 0\n0 0 1 2 3\n";
    }
    expect_failure(run({"simulate", huge.string(), "--frames", "3", "--rho", "1e38", "--out",
                        (out_dir_ / "run.json").string(), "--vtu", (out_dir_ / "o.vtu").string()}),
                   4, "huge.node: frame 0: ");
    EXPECT_TRUE(leftovers().empty());
}

TEST_F(Cli, SimulateVtuWritesEveryNodeOfQuadraticAndCubicCells) {
    const std::string mesh = test::data_path("good/cube.node").string();
    for (const auto& [order, type] : {std::pair{"2", "24"}, std::pair{"3", "71"}}) {
        const CliRun info = run({"info", mesh, "--order", order});
        ASSERT_EQ(info.exit_code, 0) << info.err;
        const std::string nodes = parse_flat_json(info.out).at("nodes");
        const fs::path vtu = out_dir_ / (std::string("p") + order + ".vtu");
        const CliRun r =
            run({"simulate", mesh, "--order", order, "--frames", "1", "--vtu", vtu.string()});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const std::string text = test::read_text(vtu);
        EXPECT_NE(text.find("NumberOfPoints=\"" + nodes + "\""), std::string::npos)
            << "order " << order << ": not " << nodes << " points";
        // Every cell has the order's VTK type and nothing else.
        const std::size_t types = text.find("Name=\"types\"");
        ASSERT_NE(types, std::string::npos);
        std::istringstream values(text.substr(text.find('>', types) + 1));
        std::string value;
        int cells = 0;
        while (values >> value && value.front() != '<') {
            EXPECT_EQ(value, type) << "order " << order;
            ++cells;
        }
        EXPECT_EQ(cells, 5) << "order " << order; // the cube's 5 tets
    }
}

TEST_F(Cli, InfoReportsTheBinBcsrPattern) {
    const CliRun r = run({"info", test::data_path("good/cube.node").string(), "--order", "2"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto json = parse_flat_json(r.out);
    // 5 tets of one cube: every node pair shares a cell except across the two diagonal
    // families; the exact counts are checked against brute force in the sparse tests, here
    // only consistency: nnz + padding = slots + rows, bins = ceil(nodes / 32).
    const long nodes = std::stol(json.at("nodes"));
    const long nnz = std::stol(json.at("nnz_blocks"));
    const long padded = std::stol(json.at("padded_blocks"));
    const long bins = std::stol(json.at("bins"));
    EXPECT_EQ(bins, (nodes + 31) / 32);
    const long slots = nnz - nodes + padded;
    EXPECT_EQ(slots % 32, 0);
    EXPECT_EQ(std::stol(json.at("bytes")), 4 * 9 * (slots + nodes) + 4 * slots + 4 * (bins + 1));
}

/// Energy printed by `export` (its JSON "energy").
double export_energy(const CliRun& run) {
    return std::stod(parse_flat_json(run.out).at("energy"));
}

TEST_F(Cli, ExportNonlinearTangentIsTheJacobianOfTheForceAndRotationsAreFree) {
    const fs::path mesh = test::data_path("good/cube.node");
    for (const char* material : {"neohookean", "corotational"}) {
        for (int order = 1; order <= 2; ++order) {
            const std::string p = std::to_string(order);
            const CliRun nodes_run = run({"export", mesh.string(), "--order", p, "--material",
                                          material, "--nodes", (out_dir_ / "nodes.txt").string()});
            ASSERT_EQ(nodes_run.exit_code, 0) << nodes_run.err;
            const std::vector<double> x = read_numbers(out_dir_ / "nodes.txt");
            const long n = static_cast<long>(x.size());
            // U: a finite deformation; V: a perturbation direction.
            std::vector<double> u(n), v(n);
            for (long i = 0; i < n; ++i) {
                u[i] = 0.05 * std::sin(1.0 + 3.0 * i) + (i % 3 == 2 ? 0.1 * x[i] : 0.0);
                v[i] = std::cos(0.7 * i);
            }
            const double h = 1e-5;
            auto write_u = [&](const std::string& name, double scale) {
                std::ofstream out(out_dir_ / name);
                out << std::setprecision(17);
                for (long i = 0; i < n; ++i)
                    out << u[i] + scale * v[i] << ((i % 3 == 2) ? '\n' : ' ');
            };
            write_u("U0.txt", 0), write_u("Up.txt", h), write_u("Um.txt", -h);
            auto run_at = [&](const std::string& name, bool matrix) {
                std::vector<std::string> args = {"export",
                                                 mesh.string(),
                                                 "--order",
                                                 p,
                                                 "--material",
                                                 material,
                                                 "--E",
                                                 "1000",
                                                 "--nu",
                                                 "0.3",
                                                 "--displacement",
                                                 (out_dir_ / name).string(),
                                                 "--force",
                                                 (out_dir_ / ("f_" + name)).string()};
                if (matrix) args.insert(args.end(), {"--matrix", (out_dir_ / "K.mtx").string()});
                return run(args);
            };
            const CliRun r0 = run_at("U0.txt", true), rp = run_at("Up.txt", false),
                         rm = run_at("Um.txt", false);
            ASSERT_EQ(r0.exit_code, 0) << r0.err;
            ASSERT_EQ(rp.exit_code, 0) << rp.err;
            ASSERT_EQ(rm.exit_code, 0) << rm.err;
            const auto f0 = read_numbers(out_dir_ / "f_U0.txt"),
                       fp = read_numbers(out_dir_ / "f_Up.txt"),
                       fm = read_numbers(out_dir_ / "f_Um.txt");
            long nn = 0;
            const auto k = read_matrix_market(out_dir_ / "K.mtx", nn);
            ASSERT_EQ(nn, n);
            // dW/dx . V against the energy difference.
            double fv = 0;
            for (long i = 0; i < n; ++i) fv += f0[i] * v[i];
            EXPECT_NEAR((export_energy(rp) - export_energy(rm)) / (2 * h), fv,
                        1e-5 * (std::abs(fv) + 1))
                << material << " p" << order;
            // K V against the force difference.
            std::vector<double> kv(n, 0.0);
            double scale = 0;
            for (const auto& [rc, value] : k) kv[rc.first] += value * v[rc.second];
            for (double q : kv) scale = std::max(scale, std::abs(q));
            for (long i = 0; i < n; ++i)
                EXPECT_NEAR((fp[i] - fm[i]) / (2 * h), kv[i], 1e-5 * scale)
                    << material << " p" << order << " dof " << i;
        }
        // A rigid rotation of the rest shape: zero energy and zero force.
        const CliRun nodes_run = run({"export", mesh.string(), "--material", material, "--nodes",
                                      (out_dir_ / "nodes.txt").string()});
        const std::vector<double> x = read_numbers(out_dir_ / "nodes.txt");
        {
            const double c = std::cos(0.8), s = std::sin(0.8);
            std::ofstream out(out_dir_ / "R.txt");
            out << std::setprecision(17);
            for (std::size_t i = 0; i < x.size(); i += 3)
                out << (c * x[i] - s * x[i + 1]) - x[i] << ' '
                    << (s * x[i] + c * x[i + 1]) - x[i + 1] << " 0\n";
        }
        const CliRun rot =
            run({"export", mesh.string(), "--material", material, "--displacement",
                 (out_dir_ / "R.txt").string(), "--force", (out_dir_ / "fR.txt").string()});
        ASSERT_EQ(rot.exit_code, 0) << rot.err;
        EXPECT_NEAR(export_energy(rot), 0.0, 1e-9) << material;
        for (double f : read_numbers(out_dir_ / "fR.txt")) EXPECT_NEAR(f, 0.0, 1e-8) << material;
    }
}

} // namespace
} // namespace edn
