// The CLI's user-facing details (issue 17, "CLI polish"): every --help lists every option the
// command reads with its default, `export --symmetric` writes MatrixMarket symmetric storage of
// the same matrix, OBJ errors number vertices as the file does, and `tetrahedralize` shows its
// stages on a terminal and always ends with a summary line on stderr.

#include "support/cli.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace edn {
namespace {

namespace fs = std::filesystem;

using test::CliRun;

class CliPolish : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = scratch_.path;
        capture_ = root_ / "capture";
        fs::create_directories(capture_);
    }

    CliRun run(const std::vector<std::string>& arguments) const {
        return test::run_cli_captured(capture_, arguments, std::chrono::seconds(120));
    }

    test::TempDir scratch_{"edn_cli_polish"};
    fs::path root_, capture_;
};

/// Every match of group 1 of `pattern` in `text`.
std::set<std::string> matches(const std::string& text, const std::string& pattern) {
    std::set<std::string> found;
    const std::regex re(pattern);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
         ++it)
        found.insert((*it)[1].str());
    return found;
}

/// The options of a --help text: option name -> the rest of its line and of the indented lines
/// that continue it.
std::map<std::string, std::string> help_options(const std::string& help) {
    std::map<std::string, std::string> options;
    std::istringstream lines(help);
    std::string line, current;
    const std::regex option_line(R"(^  --([A-Za-z][A-Za-z0-9-]*)(.*)$)");
    std::smatch m;
    while (std::getline(lines, line)) {
        if (std::regex_match(line, m, option_line)) {
            current = m[1].str();
            options[current] = m[2].str();
        } else if (!current.empty() && line.rfind("      ", 0) == 0) {
            options[current] += line;
        } else {
            current.clear();
        }
    }
    return options;
}

/// Whether a help entry (help_options' value) is of an option that takes a value.
bool takes_value(const std::string& rest) {
    return rest.size() > 1 && rest[0] == ' ' && rest[1] != ' ';
}

TEST_F(CliPolish, EveryCommandHelpListsEveryOptionItReadsWithItsDefault) {
    const fs::path cli_dir = test::source_dir() / "engine" / "cli";
    // The options the meshing commands share are read in commands.cpp.
    const std::set<std::string> shared =
        matches(test::read_text(cli_dir / "commands.cpp"),
                R"re(args\.(?:has|flag|string_or|real_or|integer_or)\("([A-Za-z0-9-]+)")re");
    ASSERT_TRUE(shared.count("quality") && shared.count("time-limit")) << "source scan broken";
    for (const std::string command : {"tetrahedralize", "info", "export", "simulate"}) {
        SCOPED_TRACE(command);
        const CliRun help = run({command, "--help"});
        ASSERT_EQ(help.exit_code, 0) << help.err;
        EXPECT_EQ(help.err, "");
        const auto options = help_options(help.out);
        // Every option the command's source reads is listed (a parser lookup of an option that
        // is not in its table would silently read "absent"; one missing from --help is hidden).
        std::set<std::string> read =
            matches(test::read_text(cli_dir / (command + "_command.cpp")),
                    R"re(args\.(?:has|flag|string_or|real_or|integer_or)\("([A-Za-z0-9-]+)")re");
        read.insert(shared.begin(), shared.end());
        ASSERT_GE(read.size(), 4u) << "source scan broken";
        for (const std::string& name : read)
            EXPECT_TRUE(options.count(name)) << "--" << name << " missing from\n" << help.out;
        // Every option that takes a value states its default.
        for (const auto& [name, rest] : options) {
            if (takes_value(rest)) {
                EXPECT_NE(rest.find("default"), std::string::npos) << "--" << name << rest;
            }
        }
    }
    EXPECT_TRUE(help_options(run({"export", "--help"}).out).count("symmetric"));
}

TEST_F(CliPolish, BenchHelpListsEveryBenchmarkAndOptionTheParserAccepts) {
    // bench/ parses with an if-chain, not a table: its accepted options and benchmarks are read
    // from the parser's source, so that a new one cannot be left out of the help texts.
    const std::string parser = test::read_text(test::source_dir() / "bench" / "bench_common.cpp");
    if (parser.empty()) GTEST_SKIP() << "no bench/ sources";
    const std::set<std::string> accepted = matches(parser, R"re(arg == "--([a-z-]+)")re");
    const std::set<std::string> benchmarks = matches(parser, R"re(o\.benchmark == "([a-z]+)")re");
    ASSERT_GE(accepted.size(), 10u) << "source scan broken";
    ASSERT_GE(benchmarks.size(), 7u) << "source scan broken";
    const CliRun top = run({"--help"});
    ASSERT_EQ(top.exit_code, 0);
    for (const std::string& name : benchmarks) {
        EXPECT_NE(top.out.find(name), std::string::npos) << name << " not in\n" << top.out;
        for (const std::vector<std::string>& arguments :
             {std::vector<std::string>{"bench", "--help"}, {"bench", name, "--help"}}) {
            const CliRun help = run(arguments);
            ASSERT_EQ(help.exit_code, 0) << help.err;
            for (const std::string& benchmark : benchmarks)
                EXPECT_NE(help.out.find("  " + benchmark + " "), std::string::npos)
                    << benchmark << " not described in\n"
                    << help.out;
            const auto options = help_options(help.out);
            for (const std::string& option : accepted)
                EXPECT_NE(help.out.find("--" + option), std::string::npos)
                    << "--" << option << " not in\n"
                    << help.out;
            // Each option that takes a value states its default (or that it is required).
            for (const auto& [option, rest] : options) {
                if (takes_value(rest)) {
                    EXPECT_TRUE(rest.find("default") != std::string::npos ||
                                rest.find("required") != std::string::npos)
                        << "--" << option << rest;
                }
            }
        }
    }
}

/// A MatrixMarket coordinate real file as (row, col) -> value (1-based), with its header line.
struct MatrixFile {
    std::string header;
    long n = 0, entries = 0;
    std::map<std::pair<long, long>, double> values;
};

MatrixFile read_matrix(const fs::path& path) {
    MatrixFile m;
    std::ifstream in(path);
    std::getline(in, m.header);
    std::string line;
    while (std::getline(in, line) && !line.empty() && line[0] == '%') {
    }
    long cols = 0;
    std::istringstream(line) >> m.n >> cols >> m.entries;
    EXPECT_EQ(m.n, cols);
    long r = 0, c = 0;
    double v = 0;
    while (in >> r >> c >> v) EXPECT_TRUE(m.values.emplace(std::make_pair(r, c), v).second);
    EXPECT_EQ(static_cast<long>(m.values.size()), m.entries) << path;
    return m;
}

TEST_F(CliPolish, ExportSymmetricIsTheLowerTriangleOfTheGeneralMatrix) {
    const std::string mesh = test::data_path("good/cube.node").string();
    for (const std::vector<std::string>& physics :
         {std::vector<std::string>{"--order", "1"},
          {"--order", "2", "--material", "neohookean", "--E", "3000", "--nu", "0.4"}}) {
        const fs::path general_path = root_ / "K.mtx", symmetric_path = root_ / "Ks.mtx";
        std::vector<std::string> general = {"export", mesh, "--matrix", general_path.string()};
        general.insert(general.end(), physics.begin(), physics.end());
        std::vector<std::string> symmetric = {"export", mesh, "--matrix", symmetric_path.string(),
                                              "--symmetric"};
        symmetric.insert(symmetric.end(), physics.begin(), physics.end());
        const CliRun g = run(general), s = run(symmetric);
        ASSERT_EQ(g.exit_code, 0) << g.err;
        ASSERT_EQ(s.exit_code, 0) << s.err;
        EXPECT_EQ(g.out, s.out); // the same summary: the same matrix

        const MatrixFile full = read_matrix(general_path), lower = read_matrix(symmetric_path);
        EXPECT_EQ(full.header, "%%MatrixMarket matrix coordinate real general");
        EXPECT_EQ(lower.header, "%%MatrixMarket matrix coordinate real symmetric");
        ASSERT_EQ(lower.n, full.n);
        double scale = 0;
        long diagonal = 0;
        for (const auto& [rc, v] : full.values) {
            scale = std::max(scale, std::abs(v));
            diagonal += rc.first == rc.second;
        }
        // Expanded (each off-diagonal entry mirrored), the symmetric file is the general one.
        std::map<std::pair<long, long>, double> expanded;
        for (const auto& [rc, v] : lower.values) {
            EXPECT_GE(rc.first, rc.second) << "upper-triangle entry in symmetric storage";
            expanded[rc] = v;
            expanded[{rc.second, rc.first}] = v;
        }
        ASSERT_EQ(expanded.size(), full.values.size());
        for (const auto& [rc, v] : full.values) {
            const auto it = expanded.find(rc);
            ASSERT_NE(it, expanded.end()) << rc.first << "," << rc.second;
            EXPECT_NEAR(it->second, v, 1e-12 * scale) << rc.first << "," << rc.second;
        }
        EXPECT_EQ(lower.entries, (full.entries + diagonal) / 2);
        EXPECT_LT(fs::file_size(symmetric_path), 0.6 * fs::file_size(general_path));
        fs::remove(general_path);
        fs::remove(symmetric_path);
    }
    // --symmetric describes --matrix: alone it is a usage error.
    const CliRun alone =
        run({"export", mesh, "--nodes", (root_ / "n.txt").string(), "--symmetric"});
    EXPECT_EQ(alone.exit_code, 2) << alone.err;
    EXPECT_NE(alone.err.find("--symmetric"), std::string::npos) << alone.err;
    EXPECT_FALSE(fs::exists(root_ / "n.txt"));
}

TEST_F(CliPolish, ObjErrorsNumberVerticesAndFacesAsTheFileDoes) {
    // The files' comments name the vertex, edge and face in the file's own 1-based numbering.
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"non_manifold_vertex.obj", "non-manifold vertex 1"},
        {"non_manifold_edge.obj", "non-manifold edge at vertices 1-2 "},
        {"degenerate_triangle.obj", "degenerate_triangle.obj:7: face 2 is degenerate"},
        {"out_of_range_index.obj", "face 3 references vertex 12 of 8"},
    };
    for (const auto& [file, message] : cases)
        for (const std::string command : {"info", "tetrahedralize"}) {
            SCOPED_TRACE(command + " " + file);
            std::vector<std::string> arguments = {command, test::data_path("bad/" + file).string()};
            if (command == "tetrahedralize") arguments.push_back((root_ / "x.node").string());
            const CliRun r = run(arguments);
            EXPECT_EQ(r.exit_code, 3) << r.err;
            EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
        }
}

/// tetrahedralize's stderr summary: vertices, cells, volume, seconds.
const std::regex summary_line(
    R"(tetrahedralize: (\d+) vertices, (\d+) cells, volume ([-+0-9.e]+), ([0-9.]+) s)");

/// The JSON number after "key": in `json`.
double json_number(const std::string& json, const std::string& key) {
    const auto at = json.find("\"" + key + "\":");
    EXPECT_NE(at, std::string::npos) << key << " in " << json;
    return at == std::string::npos ? std::nan("") : std::atof(json.c_str() + at + key.size() + 3);
}

TEST_F(CliPolish, TetrahedralizeEndsWithASummaryOnStderrAndKeepsStdoutJson) {
    const fs::path node = root_ / "cube.node";
    const CliRun r = run({"tetrahedralize", test::data_path("good/tet_cli_cube.obj").string(),
                          node.string(), "--max-volume", "0.05"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Not a terminal: no stage line, exactly the summary.
    EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.err, m, summary_line)) << r.err;
    EXPECT_EQ(r.err.rfind("tetrahedralize: ", 0), 0u) << r.err;
    // stdout is still the one JSON line, and both agree.
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    EXPECT_EQ(r.out.front(), '{') << r.out;
    EXPECT_EQ(std::stod(m[1].str()), json_number(r.out, "vertices"));
    EXPECT_EQ(std::stod(m[2].str()), json_number(r.out, "cells"));
    EXPECT_NEAR(std::stod(m[3].str()), 1.0, 1e-5); // the unit cube
    EXPECT_GE(std::stod(m[4].str()), 0.0);
}

TEST_F(CliPolish, TetrahedralizeShowsItsStagesOnATerminal) {
    // stderr on a pseudo-terminal, stdout to a file, as `elastodyn-cli tetrahedralize ... > x`.
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
    ASSERT_GE(master, 0) << "no pseudo-terminals here";
    ASSERT_EQ(::grantpt(master), 0);
    ASSERT_EQ(::unlockpt(master), 0);
    const std::string slave_name = ::ptsname(master);
    const fs::path node = root_ / "cube.node", out = root_ / "stdout.txt";
    const std::string cli = test::cli_path().string(),
                      input = test::data_path("good/tet_cli_cube.obj");
    std::vector<std::string> arguments = {cli,           "tetrahedralize", input,
                                          node.string(), "--max-volume",   "0.05"};
    std::vector<char*> argv;
    for (std::string& a : arguments) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        const int slave = ::open(slave_name.c_str(), O_RDWR | O_NOCTTY);
        const int file = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (slave < 0 || file < 0 || ::dup2(slave, 2) < 0 || ::dup2(file, 1) < 0) ::_exit(127);
        ::close(master);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    std::string terminal;
    char buffer[4096];
    for (;;) { // until the child's end closes the terminal (EIO)
        const ssize_t n = ::read(master, buffer, sizeof buffer);
        if (n > 0) {
            terminal.append(buffer, static_cast<std::size_t>(n));
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            break;
        }
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ::close(master);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << terminal;
    for (const char* stage : {"reading", "meshing", "writing"})
        EXPECT_NE(terminal.find(std::string("\r\033[Ktetrahedralize: ") + stage + " ("),
                  std::string::npos)
            << stage << " not shown in: " << terminal;
    // The stage line is cleared before the summary, which ends the output.
    const auto summary = terminal.rfind("\r\033[Ktetrahedralize: ");
    ASSERT_NE(summary, std::string::npos);
    const std::string tail = terminal.substr(summary + 4);
    std::smatch m;
    EXPECT_TRUE(std::regex_search(tail, m, summary_line)) << terminal;
    EXPECT_EQ(tail.find("tetrahedralize: writing"), std::string::npos) << terminal;
    // stdout stayed the machine-readable line.
    const std::string json = test::read_text(out);
    EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), 1) << json;
    EXPECT_EQ(json.rfind("{", 0), 0u) << json;
}

} // namespace
} // namespace edn
