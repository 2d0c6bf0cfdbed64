// Runs the `elastodyn` app headless (EGL, no display needed) and checks what it writes.
// Skipped when the app was not built (ELASTODYN_BUILD_APP=OFF).

#include "core/device.hpp"
#include "support/app_binary.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;

std::string quote(const fs::path& path) {
    return "'" + path.string() + "'";
}

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

std::vector<double> csv_values(const std::string& line) {
    std::istringstream in(line);
    std::vector<double> values;
    for (std::string cell; std::getline(in, cell, ',');) values.push_back(std::stod(cell));
    return values;
}

/// Where the value of the first member `key` starts in a JSON text (the app's --stats output),
/// or nullptr: after `"key":` and any spaces.
const char* json_value(const std::string& text, const std::string& key) {
    const std::size_t at = text.find("\"" + key + "\":");
    if (at == std::string::npos) return nullptr;
    const char* p = text.c_str() + at + key.size() + 3;
    while (*p == ' ') ++p;
    return p;
}

/// Whether the first member `key` of a JSON text has a value starting with `value`.
bool json_member_is(const std::string& text, const std::string& key, std::string_view value) {
    const char* p = json_value(text, key);
    return p && std::string_view(p).starts_with(value);
}

/// The number of the first member `key` in a JSON text; NaN when absent.
double json_number(const std::string& text, const std::string& key) {
    const char* p = json_value(text, key);
    return p ? std::strtod(p, nullptr) : std::nan("");
}

/// The numbers of the array of the first member `key` in a JSON text.
std::vector<double> json_array(const std::string& text, const std::string& key) {
    std::vector<double> values;
    const char* p = json_value(text, key);
    if (!p || *p != '[') return values;
    ++p;
    for (;;) {
        char* end = nullptr;
        const double value = std::strtod(p, &end);
        if (end == p) break;
        values.push_back(value);
        p = end;
        while (*p == ',' || *p == ' ') ++p;
    }
    return values;
}

/// Result of one run of the app.
struct AppRun {
    int exit_code = -1;
    std::string out;
    std::string err;
};

class App : public ::testing::Test {
protected:
    void SetUp() override {
        app_ = edn::test::app_binary();
        if (app_.empty()) GTEST_SKIP() << "elastodyn app not built";
        dir_ = fs::temp_directory_path() /
               ("edn_app_test_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
    }

    /// Runs `env_prefix` app `arguments`, capturing stdout and stderr.
    AppRun run(const std::string& arguments, const std::string& env_prefix = "") const {
        const std::string command = env_prefix + quote(app_) + " " + arguments + " > " +
                                    quote(dir_ / "stdout.txt") + " 2> " +
                                    quote(dir_ / "stderr.txt");
        const int status = std::system(command.c_str());
        AppRun result;
        result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        result.out = read_text(dir_ / "stdout.txt");
        result.err = read_text(dir_ / "stderr.txt");
        return result;
    }

    /// A unit cube of n^3 sub-cubes, six tets each, as a TetGen .node/.ele pair; returns .node.
    fs::path write_cube(int n) const { return write_box({n, n, n}, 1.0 / n); }

    /// A box of nx * ny * nz sub-cubes of edge `h` from the origin, six tets each (Kuhn
    /// subdivision), as cube.node / cube.ele; returns the .node path.
    fs::path write_box(const std::array<int, 3>& cells, double h) const {
        const fs::path node = dir_ / "cube.node";
        const int nx = cells[0], ny = cells[1], nz = cells[2];
        auto id = [&](int i, int j, int k) { return (k * (ny + 1) + j) * (nx + 1) + i; };
        std::ofstream nodes(node);
        nodes << (nx + 1) * (ny + 1) * (nz + 1) << " 3 0 0\n";
        for (int k = 0; k <= nz; ++k)
            for (int j = 0; j <= ny; ++j)
                for (int i = 0; i <= nx; ++i)
                    nodes << id(i, j, k) << ' ' << i * h << ' ' << j * h << ' ' << k * h << '\n';
        // Kuhn subdivision: the six tets along the main diagonal of each sub-cube.
        const std::array<std::array<int, 3>, 6> axis_orders = {
            {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};
        std::ofstream elements(dir_ / "cube.ele");
        elements << 6 * nx * ny * nz << " 4 0\n";
        int cell = 0;
        for (int k = 0; k < nz; ++k)
            for (int j = 0; j < ny; ++j)
                for (int i = 0; i < nx; ++i)
                    for (const auto& order : axis_orders) {
                        std::array<int, 3> corner = {i, j, k};
                        elements << cell++ << ' ' << id(corner[0], corner[1], corner[2]);
                        for (int axis : order) {
                            ++corner[axis];
                            elements << ' ' << id(corner[0], corner[1], corner[2]);
                        }
                        elements << '\n';
                    }
        return node;
    }

    fs::path app_;
    fs::path dir_;
};

/// Binary PPM (P6, maxval 255) as written by the app.
struct Ppm {
    int width = 0;
    int height = 0;
    std::vector<std::uint8_t> rgb;
};

Ppm read_ppm(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::string magic;
    int maxval = 0;
    Ppm image;
    in >> magic >> image.width >> image.height >> maxval;
    in.get(); // the single whitespace after maxval
    if (magic != "P6" || maxval != 255 || image.width <= 0 || image.height <= 0) return {};
    image.rgb.resize(static_cast<std::size_t>(image.width) * image.height * 3);
    in.read(reinterpret_cast<char*>(image.rgb.data()),
            static_cast<std::streamsize>(image.rgb.size()));
    if (in.gcount() != static_cast<std::streamsize>(image.rgb.size())) return {};
    return image;
}

/// The surface is orange (red well above blue); background and grid are grey-blue.
bool is_mesh_pixel(const std::uint8_t* p) {
    return p[0] > 60 && p[0] > p[2] + 40;
}

TEST_F(App, HeadlessScreenshotShowsTheMeshCentred) {
    const fs::path scene = write_cube(3);
    const fs::path shot = dir_ / "shot.ppm";
    const AppRun result =
        run("--headless --frames 3 --no-gui --color none --width 320 --height 240 "
            "--scene " +
            quote(scene) + " --screenshot " + quote(shot));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    ASSERT_TRUE(fs::exists(shot));
    const Ppm image = read_ppm(shot);
    ASSERT_EQ(image.width, 320);
    ASSERT_EQ(image.height, 240);

    std::size_t mesh_pixels = 0;
    double sum_x = 0.0;
    double sum_y = 0.0;
    for (int y = 0; y < image.height; ++y) {
        for (int x = 0; x < image.width; ++x) {
            if (!is_mesh_pixel(&image.rgb[(static_cast<std::size_t>(y) * image.width + x) * 3])) {
                continue;
            }
            ++mesh_pixels;
            sum_x += x;
            sum_y += y;
        }
    }
    const double share = double(mesh_pixels) / (double(image.width) * image.height);
    EXPECT_GT(share, 0.02);
    EXPECT_LT(share, 0.90);
    ASSERT_GT(mesh_pixels, 0u);
    // The camera frames the mesh's bounding box, so the mesh sits near the middle.
    EXPECT_NEAR(sum_x / mesh_pixels, image.width / 2.0, 0.15 * image.width);
    EXPECT_NEAR(sum_y / mesh_pixels, image.height / 2.0, 0.15 * image.height);
    // Top corners look past the mesh at the background: it must not be mesh-coloured.
    EXPECT_FALSE(is_mesh_pixel(&image.rgb[0]));
    EXPECT_FALSE(is_mesh_pixel(&image.rgb[(image.width - 1) * 3]));
}

TEST_F(App, HeadlessPngWithGuiAndTimings) {
    const fs::path scene = write_cube(2);
    const fs::path shot = dir_ / "shot.png";
    const fs::path csv = dir_ / "timings.csv";
    const AppRun result =
        run("--headless --frames 3 --width 200 --height 150 --scene " + quote(scene) +
            " --screenshot " + quote(shot) + " --timings " + quote(csv));
    ASSERT_EQ(result.exit_code, 0) << result.err;

    // PNG signature, then the IHDR chunk with big-endian width and height.
    const std::string png = read_text(shot);
    ASSERT_GT(png.size(), 33u);
    EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_EQ(png.substr(12, 4), "IHDR");
    auto be32 = [&](std::size_t at) {
        std::uint32_t value = 0;
        for (std::size_t i = 0; i < 4; ++i) value = (value << 8) | std::uint8_t(png[at + i]);
        return value;
    };
    EXPECT_EQ(be32(16), 200u);
    EXPECT_EQ(be32(20), 150u);

    const std::vector<std::string> lines = lines_of(read_text(csv));
    ASSERT_EQ(lines.size(), 4u);
    EXPECT_EQ(lines[0], "frame,poll_ms,new_frame_ms,ui_ms,simulate_ms,surface_ms,render_ms,swap_ms,"
                        "total_ms,element_ms,summation_ms,pcg_ms,line_search_ms,newton_iterations,"
                        "cg_iterations,repattern_ms");
    for (std::size_t row = 1; row < lines.size(); ++row) {
        const std::vector<double> values = csv_values(lines[row]);
        ASSERT_EQ(values.size(), 16u) << lines[row];
        EXPECT_EQ(values[15], 0.0) << lines[row]; // no cut in this run
        EXPECT_EQ(values[0], double(row - 1));
        double stages = 0.0;
        for (std::size_t i = 1; i <= 13; ++i) {
            EXPECT_TRUE(std::isfinite(values[i]) && values[i] >= 0.0) << lines[row];
            if (i <= 7) stages += values[i];
        }
        // The stages partition the frame: their sum cannot exceed the total.
        EXPECT_LE(stages, values[8] * 1.0001 + 1e-6) << lines[row];
        // The engine's parts of a step lie inside the Simulate stage.
        EXPECT_LE(values[9] + values[10] + values[11] + values[12], values[4] * 1.0001 + 1e-6)
            << lines[row];
        // The simulation runs every frame: at least one Newton iteration.
        EXPECT_GE(values[13], 1.0) << lines[row];
    }
    // No temporary files left behind by the atomic writers.
    for (const auto& entry : fs::directory_iterator(dir_)) {
        EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << entry.path();
    }
}

TEST_F(App, MissingSceneExits3WithOneLine) {
    const fs::path shot = dir_ / "shot.png";
    const AppRun result = run("--headless --frames 3 --scene " + quote(dir_ / "missing.node") +
                              " --screenshot " + quote(shot));
    EXPECT_EQ(result.exit_code, 3);
    const std::vector<std::string> lines = lines_of(result.err);
    ASSERT_EQ(lines.size(), 1u) << result.err;
    EXPECT_EQ(lines[0].rfind("elastodyn: error: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("missing"), std::string::npos) << lines[0];
    EXPECT_FALSE(fs::exists(shot));
}

TEST_F(App, MalformedSceneExits3WithOneLine) {
    const fs::path node = dir_ / "broken.node";
    std::ofstream(node) << "4 3 0 0\n0 0 0 0\n1 1 0 zero\n";
    std::ofstream(dir_ / "broken.ele") << "1 4 0\n0 0 1 2 3\n";
    const AppRun result = run("--headless --frames 3 --scene " + quote(node));
    EXPECT_EQ(result.exit_code, 3);
    const std::vector<std::string> lines = lines_of(result.err);
    ASSERT_EQ(lines.size(), 1u) << result.err;
    EXPECT_EQ(lines[0].rfind("elastodyn: error: ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find("broken"), std::string::npos) << lines[0];
}

TEST_F(App, NoDisplayWithoutHeadlessExits4SuggestingHeadless) {
    const AppRun result =
        run("--frames 1 --scene " + quote(write_cube(1)), "env -u DISPLAY -u WAYLAND_DISPLAY ");
    EXPECT_EQ(result.exit_code, 4);
    const std::vector<std::string> lines = lines_of(result.err);
    ASSERT_EQ(lines.size(), 1u) << result.err;
    EXPECT_NE(lines[0].find("--headless"), std::string::npos) << lines[0];
}

TEST_F(App, UsageErrorsExit2) {
    EXPECT_EQ(run("--frames 0 --headless").exit_code, 2);
    EXPECT_EQ(run("--frames many --headless").exit_code, 2);
    EXPECT_EQ(run("--no-such-option").exit_code, 2);
    EXPECT_EQ(run("--scene").exit_code, 2);
    EXPECT_EQ(run("--frame-budget-ms -1 --headless").exit_code, 2);
    EXPECT_EQ(run("--frame-budget-ms soon --headless").exit_code, 2);
    const AppRun help = run("--help");
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_NE(help.out.find("--headless"), std::string::npos);
}

TEST_F(App, ScreenshotWithUnknownExtensionFails) {
    const AppRun result = run("--headless --frames 1 --width 64 --height 48 --scene " +
                              quote(write_cube(1)) + " --screenshot " + quote(dir_ / "shot.bmp"));
    EXPECT_EQ(result.exit_code, 2);
    EXPECT_EQ(lines_of(result.err).size(), 1u) << result.err;
    EXPECT_FALSE(fs::exists(dir_ / "shot.bmp"));
}

TEST_F(App, ShaderCompileErrorExits4NamingTheFile) {
    // A copy of the shaders with one broken fragment shader, through --shader-dir.
    const fs::path shaders = dir_ / "shaders";
    fs::create_directories(shaders);
    std::ofstream(shaders / "surface.vert")
        << "#version 330 core\nlayout(location = 0) in vec3 a_position;\n"
           "void main() { gl_Position = vec4(a_position, 1.0); }\n";
    std::ofstream(shaders / "surface.frag") << "#version 330 core\nout vec4 frag_color;\nvoid "
                                               "main() { frag_color = undefined_name; }\n";
    const AppRun result = run("--headless --frames 1 --width 64 --height 48 --shader-dir " +
                              quote(shaders) + " --scene " + quote(write_cube(1)));
    EXPECT_EQ(result.exit_code, 4);
    const std::vector<std::string> lines = lines_of(result.err);
    ASSERT_EQ(lines.size(), 1u) << result.err;
    EXPECT_NE(lines[0].find("surface.frag: compile error"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("undefined_name"), std::string::npos) << lines[0];
}

/// Pixels whose colour differs by more than 30 in some channel.
std::size_t differing_pixels(const Ppm& a, const Ppm& b) {
    std::size_t count = 0;
    for (std::size_t i = 0; i + 2 < a.rgb.size() && i + 2 < b.rgb.size(); i += 3) {
        for (std::size_t c = 0; c < 3; ++c) {
            if (std::abs(int(a.rgb[i + c]) - int(b.rgb[i + c])) > 30) {
                ++count;
                break;
            }
        }
    }
    return count;
}

TEST_F(App, ScriptedDragChangesTheImage) {
    const fs::path scene = write_cube(3);
    // Grab the surface under the image centre (the camera frames the cube there) and pull it far
    // sideways; the cube's base is pinned.
    std::ofstream(dir_ / "drag.json") << R"({"actions": [{"frame": 0, "pin_below": 0.05},
                           {"frame": 1, "drag": {"from": [80, 60], "to": [1.5, -1.5, 1.5]}}]})";
    std::ofstream(dir_ / "still.json") << R"({"actions": [{"frame": 0, "pin_below": 0.05}]})";
    const std::string common = "--headless --frames 12 --no-gui --color none --width 160 "
                               "--height 120 --scene " +
                               quote(scene);
    const AppRun dragged =
        run(common + " --script " + quote(dir_ / "drag.json") + " --screenshot " +
            quote(dir_ / "drag.ppm") + " --stats " + quote(dir_ / "drag.json.out"));
    ASSERT_EQ(dragged.exit_code, 0) << dragged.err;
    EXPECT_TRUE(dragged.err.empty()) << dragged.err; // the pick hit the surface: no warning
    const AppRun still =
        run(common + " --script " + quote(dir_ / "still.json") + " --screenshot " +
            quote(dir_ / "still.ppm") + " --stats " + quote(dir_ / "still.json.out"));
    ASSERT_EQ(still.exit_code, 0) << still.err;

    const Ppm a = read_ppm(dir_ / "drag.ppm");
    const Ppm b = read_ppm(dir_ / "still.ppm");
    ASSERT_EQ(a.rgb.size(), b.rgb.size());
    ASSERT_FALSE(a.rgb.empty());
    // The cube is about a fifth of the image; a pulled corner changes well over 1 % of it.
    EXPECT_GT(double(differing_pixels(a, b)) / double(a.width * a.height), 0.01);

    const std::string drag_stats = read_text(dir_ / "drag.json.out");
    const std::string still_stats = read_text(dir_ / "still.json.out");
    EXPECT_NE(drag_stats.find("\"dragging\": true"), std::string::npos) << drag_stats;
    EXPECT_NE(drag_stats.find("\"finite\": true"), std::string::npos) << drag_stats;
    // The pinned base holds (16 vertices of z = 0), the drag moves the body much more than gravity.
    EXPECT_EQ(json_number(drag_stats, "pinned_vertices"), 16.0);
    EXPECT_GT(json_number(drag_stats, "max_displacement"),
              3.0 * json_number(still_stats, "max_displacement"));
}

TEST_F(App, StatsReportHowManyFramesMetTheNewtonTolerance) {
    const fs::path scene = write_cube(2);
    std::ofstream(dir_ / "pins.json") << R"({"actions": [{"frame": 0, "pin_below": 0.05}]})";
    const std::string common = "--headless --frames 6 --no-gui --width 64 --height 48 --scene " +
                               quote(scene) + " --script " + quote(dir_ / "pins.json");
    // The app's default budget (one 60 Hz frame), and none.
    for (const std::string budget : {"", "0"}) {
        SCOPED_TRACE("budget '" + budget + "'");
        const AppRun r = run(common + (budget.empty() ? "" : " --frame-budget-ms " + budget) +
                             " --stats " + quote(dir_ / "stats.json"));
        ASSERT_EQ(r.exit_code, 0) << r.err;
        const std::string stats = read_text(dir_ / "stats.json");
        EXPECT_EQ(json_number(stats, "frame_budget_ms"), budget.empty() ? 16.0 : 0.0) << stats;
        // The app and the CLI share SimulationSettings' defaults.
        EXPECT_EQ(json_number(stats, "newton"), 40.0) << stats;
        EXPECT_EQ(json_number(stats, "newton_tol"), 1e-3) << stats;
        const double converged = json_number(stats, "frames_converged");
        EXPECT_GE(converged, 0.0) << stats;
        EXPECT_LE(converged, 6.0) << stats;
        EXPECT_GT(json_number(stats, "worst_final_residual"), 0.0) << stats;
        if (!budget.empty()) {
            // No budget: 6 steps of a small cube under gravity each meet the tolerance. (With
            // the 16 ms budget that depends on the machine: a loaded one ends steps early.)
            EXPECT_EQ(converged, 6.0) << stats;
            EXPECT_LE(json_number(stats, "worst_residual"), 1e-3) << stats;
            EXPECT_TRUE(json_member_is(stats, "stop", "\"converged\"")) << stats;
        } else if (converged < 6.0) {
            EXPECT_GT(json_number(stats, "worst_residual"), 1e-3) << stats;
        }
    }
}

TEST_F(App, DragFromVertexPullsTowardsTheTarget) {
    const fs::path scene = write_cube(2);
    // Vertex 26 is the corner (1, 1, 1); pull it up and out, base pinned.
    std::ofstream(dir_ / "drag.json") << R"({"actions": [{"frame": 0, "pin_below": 0.05},
                           {"frame": 0, "drag": {"vertex": 26, "to": [1.6, 1.6, 1.6]}}]})";
    const AppRun result =
        run("--headless --frames 10 --no-gui --width 64 --height 48 --scene " + quote(scene) +
            " --script " + quote(dir_ / "drag.json") + " --stats " + quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string stats = read_text(dir_ / "stats.json");
    const std::vector<double> upper = json_array(stats, "upper");
    ASSERT_EQ(upper.size(), 3u) << stats;
    // Without the drag nothing rises above z = 1 (gravity pulls down, the base is pinned).
    EXPECT_GT(upper[0], 1.02) << stats;
    EXPECT_GT(upper[2], 1.02) << stats;
    const std::vector<double> lower = json_array(stats, "lower");
    ASSERT_EQ(lower.size(), 3u) << stats;
    EXPECT_NEAR(lower[2], 0.0, 1e-9) << stats; // pinned base stays where it was
}

TEST_F(App, GroundAtTheGridHoldsADroppedBody) {
    const fs::path scene = write_cube(2);
    // Unpinned, the ground moved half a metre down: the cube falls onto it and rests there.
    std::ofstream(dir_ / "drop.json") << R"({"actions": [
        {"frame": 0, "unpin_all": true, "ground_height": -0.5, "damping": 1}]})";
    const AppRun result =
        run("--headless --frames 120 --no-gui --width 64 --height 48 --scene " + quote(scene) +
            " --script " + quote(dir_ / "drop.json") + " --stats " + quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_TRUE(json_member_is(stats, "ground", "true")) << stats;
    EXPECT_EQ(json_number(stats, "ground_height"), -0.5) << stats;
    EXPECT_EQ(json_number(stats, "pinned_vertices"), 0.0) << stats;
    const std::vector<double> lower = json_array(stats, "lower");
    ASSERT_EQ(lower.size(), 3u) << stats;
    EXPECT_GT(lower[2], -0.52) << stats; // on the plane, not through it
    EXPECT_LT(lower[2], -0.45) << stats; // and it did fall
    EXPECT_EQ(result.err.find("no pins"), std::string::npos) << result.err;
    // The default: the ground at the grid (the mesh bottom), friction on.
    const AppRun plain = run("--headless --frames 1 --no-gui --width 64 --height 48 --scene " +
                             quote(scene) + " --stats " + quote(dir_ / "plain.json"));
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    const std::string defaults = read_text(dir_ / "plain.json");
    EXPECT_TRUE(json_member_is(defaults, "ground", "true")) << defaults;
    EXPECT_EQ(json_number(defaults, "ground_height"), 0.0) << defaults;
    EXPECT_GT(json_number(defaults, "ground_friction"), 0.0) << defaults;
    // Scaled to the body (1000 kg, diagonal 1.73 m), not the engine's fixed 1e5 N/m.
    EXPECT_NEAR(json_number(defaults, "ground_stiffness"), 1000 * 9.81 / (0.005 * std::sqrt(3.0)),
                1.0)
        << defaults;
}

TEST_F(App, NoPinsAndNoGroundWarnsOnceAndTheBodyFalls) {
    const fs::path scene = write_cube(2);
    std::ofstream(dir_ / "fall.json") << R"({"actions": [
        {"frame": 0, "unpin_all": true, "ground": false}]})";
    const AppRun result =
        run("--headless --frames 30 --no-gui --width 64 --height 48 --scene " + quote(scene) +
            " --script " + quote(dir_ / "fall.json") + " --stats " + quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::vector<std::string> lines = lines_of(result.err);
    ASSERT_EQ(lines.size(), 1u) << result.err;
    EXPECT_NE(lines[0].find("warning: no pins and no ground"), std::string::npos) << lines[0];
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_TRUE(json_member_is(stats, "ground", "false")) << stats;
    EXPECT_LT(json_array(stats, "lower")[2], -0.5) << stats; // 0.5 s of free fall: 1.2 m
}

TEST_F(App, PinPlaneAndRegionDragFromAScript) {
    const fs::path scene = write_cube(2);
    // Only the x = 1 face pinned (3 x 3 vertices); a region drag on the opposite face.
    std::ofstream(dir_ / "plane.json") << R"({"actions": [
        {"frame": 0, "unpin_all": true,
         "pin_plane": {"axis": "x", "side": "above", "fraction": 0}},
        {"frame": 0, "drag": {"vertex": 0, "to": [-0.3, 0, 0], "radius": 0.6}}]})";
    const AppRun result =
        run("--headless --frames 10 --no-gui --width 64 --height 48 --scene " + quote(scene) +
            " --script " + quote(dir_ / "plane.json") + " --stats " + quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_EQ(json_number(stats, "pinned_vertices"), 9.0) << stats;
    // Vertices within 0.6 of the corner (0, 0, 0): itself, its 3 edge neighbours at 0.5.
    EXPECT_EQ(json_number(stats, "drag_region_nodes"), 4.0) << stats;
    EXPECT_LT(json_array(stats, "lower")[0], -0.05) << stats; // pulled out along -x
    EXPECT_TRUE(lines_of(result.err).empty()) << result.err;
}

TEST_F(App, SimulationThreadAppliesTheScriptAndPauses) {
    // The same drag as above, stepped on the simulation thread (--sim-thread): the script's
    // commands reach the simulation through the UI's turns. Frames and steps are no longer
    // paired one to one, so the check is what any number of steps gives: the corner rises.
    const fs::path scene = write_cube(2);
    std::ofstream(dir_ / "drag.json") << R"({"actions": [{"frame": 0, "pin_below": 0.05},
                           {"frame": 0, "drag": {"vertex": 26, "to": [1.6, 1.6, 1.6]}}]})";
    const std::string common = "--headless --sim-thread --no-gui --width 64 --height 48 --scene " +
                               quote(scene) + " --script " + quote(dir_ / "drag.json") +
                               " --stats " + quote(dir_ / "stats.json");
    const AppRun result = run(common + " --frames 200");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_TRUE(json_member_is(stats, "finite", "true")) << stats;
    const std::vector<double> upper = json_array(stats, "upper");
    ASSERT_EQ(upper.size(), 3u) << stats;
    EXPECT_GT(upper[2], 1.02) << stats;
    // Paused, the worker steps never: the cube stays at rest whatever the frame count.
    const AppRun paused = run(common + " --frames 30 --paused");
    ASSERT_EQ(paused.exit_code, 0) << paused.err;
    const std::string at_rest = read_text(dir_ / "stats.json");
    EXPECT_EQ(json_number(at_rest, "max_displacement"), 0.0) << at_rest;
}

TEST_F(App, SimulationThreadStepsWithoutWaitingForTheDisplay) {
    // Nothing queued (no script): the worker steps back to back while the paced display (60 Hz
    // headless) draws the latest snapshot each step publishes. A 2x2x2 cube steps in well under
    // a millisecond, so 30 frames (half a second) see many more steps than frames; the old
    // contract (the worker parked after each step until the next frame) gave at most 30. Each
    // snapshot path: von Mises colours (the default), displacement, and the curved p = 2 surface.
    const fs::path scene = write_cube(2);
    for (const std::string extra : {"", " --color displacement", " --order 2"}) {
        SCOPED_TRACE("options '" + extra + "'");
        const AppRun result =
            run("--headless --sim-thread --no-gui --width 64 --height 48 --frames 30 --scene " +
                quote(scene) + extra + " --stats " + quote(dir_ / "stats.json"));
        ASSERT_EQ(result.exit_code, 0) << result.err;
        const std::string stats = read_text(dir_ / "stats.json");
        EXPECT_TRUE(json_member_is(stats, "finite", "true")) << stats;
        EXPECT_EQ(json_number(stats, "frames"), 30.0) << stats;
        // "convergence": {"frames": steps tallied, ...}
        const std::size_t convergence = stats.find("\"convergence\"");
        ASSERT_NE(convergence, std::string::npos) << stats;
        EXPECT_GT(json_number(stats.substr(convergence), "frames"), 60.0) << stats;
        EXPECT_GT(json_number(stats, "max_displacement"), 0.0) << stats;
    }
}

TEST_F(App, SwitchingOrderSummationMaterialMidRunStaysFinite) {
    const fs::path scene = write_cube(2);
    std::ofstream(dir_ / "switch.json") << R"({"actions": [
        {"frame": 0, "pin_below": 0.05},
        {"frame": 1, "drag": {"vertex": 26, "to": [1.3, 1.3, 1.3]}},
        {"frame": 3, "order": 2},
        {"frame": 4, "summation": "per_simplex", "preconditioner": "block_jacobi"},
        {"frame": 5, "order": 3},
        {"frame": 6, "material": "corotational"},
        {"frame": 7, "summation": "inline"},
        {"frame": 8, "order": 1, "material": "linear", "summation": "inline"},
        {"frame": 9, "backend": "cuda"},
        {"frame": 10, "release": true}]})";
    const fs::path csv = dir_ / "timings.csv";
    const AppRun result =
        run("--headless --frames 12 --no-gui --width 64 --height 48 --scene " + quote(scene) +
            " --script " + quote(dir_ / "switch.json") + " --timings " + quote(csv) + " --stats " +
            quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(lines_of(read_text(csv)).size(), 13u);
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_NE(stats.find("\"finite\": true"), std::string::npos) << stats;
    EXPECT_NE(stats.find("\"order\": 1"), std::string::npos) << stats;
    EXPECT_NE(stats.find("\"summation\": \"inline\""), std::string::npos) << stats;
    EXPECT_NE(stats.find("\"summation_in_use\": \"inline\""), std::string::npos) << stats;
    EXPECT_NE(stats.find("\"material\": \"linear\""), std::string::npos) << stats;
    EXPECT_NE(stats.find("\"preconditioner\": \"block_jacobi\""), std::string::npos) << stats;
    EXPECT_EQ(json_number(stats, "nodes"), 27.0) << stats;
    // Inline works for every material and order (frame 7: p = 3 co-rotational): no refusal.
    EXPECT_EQ(stats.find("inline summation"), std::string::npos) << stats;
    for (const double x : json_array(stats, "lower")) EXPECT_GT(x, -2.0) << stats;
    for (const double x : json_array(stats, "upper")) EXPECT_LT(x, 3.0) << stats;
}

TEST_F(App, BadScriptExits3WithOneLine) {
    const fs::path scene = write_cube(1);
    const std::array<std::pair<const char*, const char*>, 13> scripts = {{
        {"{\"actions\": [", "bad.json"},
        {R"({"actions": [{"frame": 1, "explode": true}]})", "explode"},
        {R"({"actions": [{"frame": 1, "order": 4}]})", "order"},
        {R"({"actions": [{"frame": 1, "drag": {"to": [0, 0, 0]}}]})", "drag"},
        {R"({"steps": []})", "actions"},
        {R"({"actions": [{"frame": 1, "cut": {"point": [0, 0, 0]}}]})", "cut"},
        {R"({"actions": [{"frame": 1, "cut": {"point": [0, 0, 0], "normal": [0, 0, 0]}}]})",
         "cut.normal"},
        {R"({"actions": [{"frame": 1, "cut": {"from": [0, 0]}}]})", "stroke"},
        {R"({"actions": [{"frame": 1, "refine": {"center": [0, 0, 0], "radius": -1}}]})",
         "refine.radius"},
        {R"({"actions": [{"frame": 1, "refine": {"radius": 0.1}}]})", "refine"},
        {R"({"actions": [{"frame": 1, "refine": {"pixel": [1, 1], "levels": 9}}]})",
         "refine.levels"},
        {R"({"actions": [{"frame": 1, "refine_uniform": 1}]})", "refine_uniform"},
        {R"({"actions": [{"frame": 1, "preconditioner": "amg"}]})", "preconditioner"},
    }};
    for (const auto& [text, expected] : scripts) {
        std::ofstream(dir_ / "bad.json") << text;
        const AppRun result = run("--headless --frames 2 --width 64 --height 48 --scene " +
                                  quote(scene) + " --script " + quote(dir_ / "bad.json"));
        EXPECT_EQ(result.exit_code, 3) << text;
        const std::vector<std::string> lines = lines_of(result.err);
        ASSERT_EQ(lines.size(), 1u) << result.err;
        EXPECT_NE(lines[0].find("bad.json"), std::string::npos) << lines[0];
        EXPECT_NE(lines[0].find(expected), std::string::npos) << lines[0];
    }
    EXPECT_EQ(run("--headless --frames 1 --script " + quote(dir_ / "none.json")).exit_code, 3);
}

/// A standing beam 0.5 x 0.5 x 2 (2 x 2 x 8 sub-cubes of 0.25), base pinned by the default pins
/// (below 2 % of the height: the z = 0 layer), stiff enough that uncut it barely sags.
constexpr const char* kBeamRun = "--headless --no-gui --width 64 --height 48 --backend cpu ";

TEST_F(App, ScriptedCutSeparatesTheBeamAndTheTopFalls) {
    const fs::path scene = write_box({2, 2, 8}, 0.25);
    // The plane z = 1 is the vertex layer between sub-cube layers 3 and 4: every interior face
    // on it (2 x 2 squares, 2 triangles each) is cut, and its 3 x 3 vertices are duplicated.
    std::ofstream(dir_ / "cut.json") << R"({"actions": [{"frame": 0, "young": 1e7},
        {"frame": 5, "cut": {"point": [0.25, 0.25, 1.0], "normal": [0, 0, 1]}}]})";
    const fs::path csv = dir_ / "timings.csv";
    const AppRun result = run(std::string(kBeamRun) + "--frames 36 --scene " + quote(scene) +
                              " --script " + quote(dir_ / "cut.json") + " --timings " + quote(csv) +
                              " --stats " + quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_NE(stats.find("\"finite\": true"), std::string::npos) << stats;
    EXPECT_EQ(json_number(stats, "components"), 2.0) << stats;
    EXPECT_EQ(json_number(stats, "vertices"), 81.0 + 9.0) << stats;
    EXPECT_EQ(json_number(stats, "cells"), 6.0 * 32.0) << stats;
    EXPECT_EQ(json_number(stats, "cut_faces"), 8.0) << stats;
    EXPECT_EQ(json_number(stats, "duplicated_vertices"), 9.0) << stats;
    EXPECT_EQ(json_number(stats, "pinned_vertices"), 9.0) << stats; // the base, unchanged
    EXPECT_EQ(json_number(stats, "frame"), 5.0) << stats;           // of the cut record
    EXPECT_NE(stats.find("\"errors\": []"), std::string::npos) << stats;
    // The upper half falls freely for 30 frames (0.5 s): about g t^2 / 2 = 1.2 m, damped a
    // little; uncut, a 1e7 Pa beam sags by rho g L^2 / (2 E) = 2 mm.
    const std::vector<double> upper = json_array(stats, "upper");
    ASSERT_EQ(upper.size(), 3u) << stats;
    EXPECT_LT(upper[2], 1.6) << stats;
    const std::vector<double> lower = json_array(stats, "lower");
    ASSERT_EQ(lower.size(), 3u) << stats;
    EXPECT_LT(lower[2], 0.7) << stats;
    // The re-pattern time is in the timings, on the cut's frame only.
    const std::vector<std::string> lines = lines_of(read_text(csv));
    ASSERT_EQ(lines.size(), 37u);
    EXPECT_NE(lines[0].find(",repattern_ms"), std::string::npos) << lines[0];
    for (std::size_t row = 1; row < lines.size(); ++row) {
        const std::vector<double> values = csv_values(lines[row]);
        ASSERT_EQ(values.size(), 16u) << lines[row];
        if (row - 1 == 5)
            EXPECT_GT(values[15], 0.0) << lines[row];
        else
            EXPECT_EQ(values[15], 0.0) << lines[row];
    }
}

TEST_F(App, ScriptedUndoRestoresTheUncutBeam) {
    const fs::path scene = write_box({2, 2, 8}, 0.25);
    std::ofstream(dir_ / "undo.json") << R"({"actions": [{"frame": 0, "young": 1e7},
        {"frame": 5, "cut": {"point": [0.25, 0.25, 1.0], "normal": [0, 0, 1]}},
        {"frame": 8, "undo": true}]})";
    const AppRun result =
        run(std::string(kBeamRun) + "--frames 36 --scene " + quote(scene) + " --script " +
            quote(dir_ / "undo.json") + " --stats " + quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_NE(stats.find("\"finite\": true"), std::string::npos) << stats;
    EXPECT_EQ(json_number(stats, "components"), 1.0) << stats;
    EXPECT_EQ(json_number(stats, "vertices"), 81.0) << stats;
    EXPECT_EQ(json_number(stats, "pinned_vertices"), 9.0) << stats;
    EXPECT_EQ(json_number(stats, "undos"), 1.0) << stats;
    EXPECT_EQ(json_number(stats, "undo_depth"), 0.0) << stats;
    // Back to the frame-5 state of the whole beam: the top stays up (sag of millimetres).
    const std::vector<double> upper = json_array(stats, "upper");
    ASSERT_EQ(upper.size(), 3u) << stats;
    EXPECT_GT(upper[2], 1.95) << stats;
}

TEST_F(App, ScreenStrokeCutsTheBeamWhereItIsDrawn) {
    const fs::path scene = write_box({2, 2, 8}, 0.25);
    // The camera frames the beam: a horizontal stroke across the middle of the image makes a
    // blade (tilted by the camera's pitch) through the beam's middle that severs it. A stroke
    // shorter than the click threshold cuts nothing and says so.
    std::ofstream(dir_ / "stroke.json") << R"({"actions": [{"frame": 0, "young": 1e7},
        {"frame": 2, "cut": {"from": [1, 24], "to": [63, 24]}}]})";
    const AppRun result =
        run(std::string(kBeamRun) + "--frames 4 --scene " + quote(scene) + " --script " +
            quote(dir_ / "stroke.json") + " --stats " + quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_EQ(json_number(stats, "components"), 2.0) << stats;
    EXPECT_GE(json_number(stats, "duplicated_vertices"), 9.0) << stats;
    EXPECT_NE(stats.find("\"finite\": true"), std::string::npos) << stats;

    std::ofstream(dir_ / "short.json") << R"({"actions": [
        {"frame": 2, "cut": {"from": [32, 24], "to": [33, 24]}}]})";
    const AppRun short_run =
        run(std::string(kBeamRun) + "--frames 4 --scene " + quote(scene) + " --script " +
            quote(dir_ / "short.json") + " --stats " + quote(dir_ / "short_stats.json"));
    ASSERT_EQ(short_run.exit_code, 0) << short_run.err;
    const std::string short_stats = read_text(dir_ / "short_stats.json");
    EXPECT_EQ(json_number(short_stats, "components"), 1.0) << short_stats;
    EXPECT_NE(short_stats.find("stroke too short"), std::string::npos) << short_stats;
}

TEST_F(App, FailedCutAndUndoAreReportedAndTheSceneStays) {
    const fs::path scene = write_box({2, 2, 8}, 0.25);
    // A plane beside the beam cuts nothing; an undo with no cut has nothing to go back to.
    std::ofstream(dir_ / "miss.json") << R"({"actions": [
        {"frame": 2, "cut": {"point": [5, 5, 5], "normal": [0, 0, 1]}},
        {"frame": 3, "undo": true}]})";
    const AppRun result =
        run(std::string(kBeamRun) + "--frames 5 --scene " + quote(scene) + " --script " +
            quote(dir_ / "miss.json") + " --stats " + quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_EQ(json_number(stats, "components"), 1.0) << stats;
    EXPECT_EQ(json_number(stats, "vertices"), 81.0) << stats;
    EXPECT_NE(stats.find("\"cuts\": []"), std::string::npos) << stats;
    EXPECT_NE(stats.find("crosses no interior face"), std::string::npos) << stats;
    EXPECT_NE(stats.find("no cut to undo"), std::string::npos) << stats;
    EXPECT_EQ(lines_of(result.err).size(), 2u) << result.err; // one warning line each
}

} // namespace

TEST_F(App, BackendOptionAndUploadPathInStats) {
    EXPECT_EQ(run("--backend gpu --headless").exit_code, 2);
    EXPECT_EQ(run("--backend").exit_code, 2);
    const fs::path stats = dir_ / "stats.json";
    const AppRun cpu =
        run("--headless --scene sphere.obj --frames 3 --backend cpu --stats " + quote(stats));
    ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
    const std::string text = read_text(stats);
    EXPECT_NE(text.find("\"backend\": \"cpu\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"upload\": \"glBufferSubData (CPU backend)\""), std::string::npos)
        << text;
}

/// simulate's settings flags set the app's settings through the same parser: --order, --preset
/// and an explicit --E over it, the solver options; an unknown preset is a usage error.
TEST_F(App, TakesSimulatesSettingsFlags) {
    const fs::path scene = write_cube(2);
    const fs::path stats = dir_ / "stats.json";
    const std::string common = "--headless --no-gui --width 64 --height 48 --backend cpu "
                               "--frames 2 --scene " +
                               quote(scene) + " --stats " + quote(stats);
    const AppRun preset = run(common + " --order 2 --preset gel");
    ASSERT_EQ(preset.exit_code, 0) << preset.err;
    std::string text = read_text(stats);
    EXPECT_EQ(json_number(text, "order"), 2.0) << text;
    EXPECT_EQ(json_number(text, "E"), 2e4) << text;
    EXPECT_EQ(json_number(text, "nu"), 0.48) << text;
    EXPECT_EQ(json_number(text, "rho"), 1030.0) << text;
    EXPECT_TRUE(json_member_is(text, "preset", "\"gel\"")) << text;
    const AppRun explicit_e = run(common + " --E 3e4 --preset gel --newton 7 --cg-tol 1e-5 "
                                           "--damping 0.5 --material corotational --dt 0.01");
    ASSERT_EQ(explicit_e.exit_code, 0) << explicit_e.err;
    text = read_text(stats);
    EXPECT_EQ(json_number(text, "order"), 1.0) << text;
    EXPECT_EQ(json_number(text, "E"), 3e4) << text;
    EXPECT_EQ(json_number(text, "rho"), 1030.0) << text;
    EXPECT_TRUE(json_member_is(text, "preset", "null")) << text;
    EXPECT_TRUE(json_member_is(text, "material", "\"corotational\"")) << text;
    EXPECT_EQ(json_number(text, "newton"), 7.0) << text;
    EXPECT_EQ(json_number(text, "cg_tol"), 1e-5) << text;
    EXPECT_EQ(json_number(text, "damping"), 0.5) << text;
    EXPECT_EQ(json_number(text, "dt"), 0.01) << text;
    const AppRun unknown = run("--headless --preset jelly");
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("option '--preset': unknown preset 'jelly' (soft_rubber, "),
              std::string::npos)
        << unknown.err;
    EXPECT_EQ(run("--headless --E -1").exit_code, 2);
    EXPECT_EQ(run("--headless --static --static").exit_code, 2);
    const AppRun help = run("--help");
    ASSERT_EQ(help.exit_code, 0);
    for (const char* option : {"--preset NAME", "--order P", "--newton-tol T", "--cg-max K",
                               "--summation S", "--backend B", "--frame-budget-ms MS"})
        EXPECT_NE(help.out.find(option), std::string::npos) << option;
}

/// Without a usable CUDA device `--backend cuda` is one usage line naming the reason and the way
/// out, not a failure deep in CUDA. Skipped where a device exists.
TEST_F(App, CudaBackendWithoutDeviceIsOneUsageLine) {
    if (edn::cuda_device_available()) GTEST_SKIP() << "a CUDA device exists here";
    const AppRun result = run("--headless --scene sphere.obj --frames 2 --backend cuda");
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_EQ(lines_of(result.err).size(), 1u) << result.err;
    EXPECT_NE(result.err.find("--backend cuda: "), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("use --backend cpu"), std::string::npos) << result.err;
}

/// The scripted manual colour range reaches the shader, offset included: a range below every
/// value paints the body in the top colour (red), one above every value in the bottom colour
/// (dark blue).
TEST_F(App, ManualColorRangeSetsTheSurfaceColours) {
    auto dominant = [&](const char* range, const char* name) {
        std::ofstream(dir_ / name)
            << R"({"actions": [{"frame": 0, "color_range": )" << range << "}]}";
        const fs::path shot = dir_ / (std::string(name) + ".ppm");
        const AppRun result =
            run("--headless --scene sphere.obj --frames 3 --paused --no-gui --width 160 "
                "--height 120 --script " +
                quote(dir_ / name) + " --screenshot " + quote(shot));
        EXPECT_EQ(result.exit_code, 0) << result.err;
        const Ppm image = read_ppm(shot);
        std::size_t red = 0, blue = 0;
        for (std::size_t p = 0; p < image.rgb.size(); p += 3) {
            red += image.rgb[p] > image.rgb[p + 2] + 40 ? 1 : 0;
            blue += image.rgb[p + 2] > image.rgb[p] + 40 ? 1 : 0;
        }
        return std::pair{red, blue};
    };
    const auto [low_red, low_blue] = dominant("[-2, -1]", "below.json");
    EXPECT_GT(low_red, 1000u);
    EXPECT_LT(low_blue, low_red / 10);
    const auto [high_red, high_blue] = dominant("[1e12, 2e12]", "above.json");
    EXPECT_GT(high_blue, 1000u);
    EXPECT_LT(high_red, high_blue / 10);
}

/// The interop path writes the same vertex buffer as the host path: at rest (paused, so both
/// runs show the same positions) the two images agree up to float rounding of the normals.
/// Needs the CUDA backend and a GL context on the same GPU; skipped elsewhere.
TEST_F(App, CudaInteropImageMatchesHostUpload) {
    const std::string common = "--headless --scene sphere.obj --backend cuda --paused --frames 3 "
                               "--no-gui --color none --width 320 --height 240 ";
    const fs::path stats = dir_ / "interop.json";
    const AppRun interop =
        run(common + "--screenshot " + quote(dir_ / "interop.ppm") + " --stats " + quote(stats));
    if (interop.exit_code != 0) {
        // No CUDA in this build, or no device: the CUDA backend cannot be built.
        ASSERT_NE(interop.err.find("CUDA"), std::string::npos) << interop.err;
        GTEST_SKIP() << "no CUDA backend here: " << interop.err;
    }
    if (read_text(stats).find("\"upload\": \"CUDA-GL interop") == std::string::npos) {
        GTEST_SKIP() << "CUDA-GL interop unavailable (GL not on the CUDA device): " << interop.err;
    }
    const bool external = read_text(stats).find("external memory") != std::string::npos;
    std::printf("[interop] default path: %s\n", external ? "external memory" : "mapped buffer");
    // The registered, mapped-buffer path, forced (what GL drivers without
    // GL_EXT_memory_object_fd get).
    const fs::path mapped_stats = dir_ / "mapped.json";
    const AppRun mapped = run(common + "--interop-mapped --screenshot " +
                              quote(dir_ / "mapped.ppm") + " --stats " + quote(mapped_stats));
    ASSERT_EQ(mapped.exit_code, 0) << mapped.err;
    EXPECT_NE(read_text(mapped_stats).find("mapped buffer"), std::string::npos);
    const AppRun host = run(common + "--no-interop --screenshot " + quote(dir_ / "host.ppm"));
    ASSERT_EQ(host.exit_code, 0) << host.err;
    const Ppm b = read_ppm(dir_ / "host.ppm");
    for (const char* name : {"interop.ppm", "mapped.ppm"}) {
        SCOPED_TRACE(name);
        const Ppm a = read_ppm(dir_ / name);
        ASSERT_EQ(a.rgb.size(), b.rgb.size());
        ASSERT_FALSE(a.rgb.empty());
        std::size_t mesh = 0, different = 0;
        for (std::size_t p = 0; p < a.rgb.size(); p += 3) {
            mesh += is_mesh_pixel(&a.rgb[p]) ? 1 : 0;
            bool differs = false;
            for (int c = 0; c < 3; ++c)
                differs = differs || std::abs(int(a.rgb[p + c]) - int(b.rgb[p + c])) > 16;
            different += differs ? 1 : 0;
        }
        const std::size_t pixels = a.rgb.size() / 3;
        EXPECT_GT(mesh, pixels / 50) << "the interop image shows no mesh";
        EXPECT_LT(different, pixels / 500) << different << " of " << pixels << " pixels differ";
    }
    // Von Mises colours: averaged over each vertex's faces on the device (interop) and on the
    // host (--no-interop) after the same deterministic CUDA frames. One manual colour range for
    // both: the automatic ranges come from different samples (host percentiles every frame,
    // the interop path's periodic host sample), and the scalars are what is compared here.
    std::ofstream(dir_ / "vm_range.json")
        << R"({"actions": [{"frame": 0, "color_range": [0, 30000]}]})";
    const std::string moving = "--headless --scene sphere.obj --backend cuda --frames 12 --no-gui "
                               "--color von_mises --width 320 --height 240 --script " +
                               quote(dir_ / "vm_range.json") + " ";
    ASSERT_EQ(run(moving + "--screenshot " + quote(dir_ / "vm_interop.ppm")).exit_code, 0);
    ASSERT_EQ(run(moving + "--no-interop --screenshot " + quote(dir_ / "vm_host.ppm")).exit_code,
              0);
    const Ppm va = read_ppm(dir_ / "vm_interop.ppm");
    const Ppm vb = read_ppm(dir_ / "vm_host.ppm");
    ASSERT_EQ(va.rgb.size(), vb.rgb.size());
    std::size_t different = 0;
    for (std::size_t p = 0; p < va.rgb.size(); p += 3) {
        bool differs = false;
        for (int c = 0; c < 3; ++c)
            differs = differs || std::abs(int(va.rgb[p + c]) - int(vb.rgb[p + c])) > 16;
        different += differs ? 1 : 0;
    }
    EXPECT_LT(different, va.rgb.size() / 3 / 200) << different << " pixels differ (von Mises)";
}

namespace {

/// Distinct edges of the cells in a TetGen .ele file (brute force over the 6 edges of each cell).
std::size_t count_edges(const fs::path& ele) {
    std::ifstream in(ele);
    std::size_t cells = 0, corners = 0, attributes = 0;
    in >> cells >> corners >> attributes;
    std::set<std::pair<long, long>> edges;
    for (std::size_t c = 0; c < cells; ++c) {
        long id = 0;
        std::array<long, 4> v{};
        in >> id >> v[0] >> v[1] >> v[2] >> v[3];
        for (int a = 0; a < 4; ++a)
            for (int b = a + 1; b < 4; ++b)
                edges.insert({std::min(v[a], v[b]), std::max(v[a], v[b])});
    }
    return edges.size();
}

TEST_F(App, ScriptedRefineBrushAddsCellsAndUndoRestoresThem) {
    const fs::path scene = write_box({2, 2, 8}, 0.25);
    // A brush around the beam's middle: only cells near z = 1 are split (the closure spreads a
    // little), the base pins stay, and the run goes on with the finer mesh.
    std::ofstream(dir_ / "refine.json") << R"({"actions": [{"frame": 0, "young": 1e7},
        {"frame": 3, "refine": {"center": [0.25, 0.25, 1.0], "radius": 0.2, "levels": 2}}]})";
    const fs::path csv = dir_ / "timings.csv";
    const AppRun result = run(std::string(kBeamRun) + "--frames 8 --scene " + quote(scene) +
                              " --script " + quote(dir_ / "refine.json") + " --timings " +
                              quote(csv) + " --stats " + quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_NE(stats.find("\"finite\": true"), std::string::npos) << stats;
    EXPECT_NE(stats.find("\"errors\": []"), std::string::npos) << stats;
    const double cells = json_number(stats, "cells");
    EXPECT_GT(cells, 192.0) << stats;
    EXPECT_LT(cells, 8.0 * 192.0) << stats; // local, not everywhere
    EXPECT_GT(json_number(stats, "vertices"), 81.0) << stats;
    EXPECT_EQ(json_number(stats, "cells_before"), 192.0) << stats;
    EXPECT_EQ(json_number(stats, "cells_after"), cells) << stats;
    EXPECT_TRUE(json_member_is(stats, "uniform", "false")) << stats;
    // Bisection of Kuhn cells keeps angles bounded well away from 0.
    EXPECT_GT(json_number(stats, "min_dihedral_deg"), 10.0) << stats;
    EXPECT_GT(json_number(stats, "repattern_ms"), 0.0) << stats;
    EXPECT_EQ(json_number(stats, "components"), 1.0) << stats;
    EXPECT_GE(json_number(stats, "pinned_vertices"), 9.0) << stats;
    // Whole beam, stiff: the top stays up (the refined state is the same shape).
    const std::vector<double> upper = json_array(stats, "upper");
    ASSERT_EQ(upper.size(), 3u) << stats;
    EXPECT_GT(upper[2], 1.95) << stats;
    // The re-pattern time is in the timings, on the refinement's frame only.
    const std::vector<std::string> lines = lines_of(read_text(csv));
    ASSERT_EQ(lines.size(), 9u);
    for (std::size_t row = 1; row < lines.size(); ++row) {
        const std::vector<double> values = csv_values(lines[row]);
        ASSERT_EQ(values.size(), 16u) << lines[row];
        if (row - 1 == 3)
            EXPECT_GT(values[15], 0.0) << lines[row];
        else
            EXPECT_EQ(values[15], 0.0) << lines[row];
    }

    std::ofstream(dir_ / "undo.json") << R"({"actions": [{"frame": 0, "young": 1e7},
        {"frame": 3, "refine": {"center": [0.25, 0.25, 1.0], "radius": 0.2, "levels": 2}},
        {"frame": 5, "undo": true}]})";
    const AppRun undone =
        run(std::string(kBeamRun) + "--frames 8 --scene " + quote(scene) + " --script " +
            quote(dir_ / "undo.json") + " --stats " + quote(dir_ / "undo_stats.json"));
    ASSERT_EQ(undone.exit_code, 0) << undone.err;
    const std::string undo_stats = read_text(dir_ / "undo_stats.json");
    EXPECT_NE(undo_stats.find("\"finite\": true"), std::string::npos) << undo_stats;
    EXPECT_EQ(json_number(undo_stats, "cells"), 192.0) << undo_stats;
    EXPECT_EQ(json_number(undo_stats, "vertices"), 81.0) << undo_stats;
    EXPECT_EQ(json_number(undo_stats, "pinned_vertices"), 9.0) << undo_stats;
    EXPECT_EQ(json_number(undo_stats, "undos"), 1.0) << undo_stats;
    EXPECT_EQ(json_number(undo_stats, "undo_depth"), 0.0) << undo_stats;
}

TEST_F(App, ScriptedUniformRefinementGivesEightTimesTheCells) {
    const fs::path scene = write_box({2, 2, 8}, 0.25);
    std::ofstream(dir_ / "uniform.json") << R"({"actions": [{"frame": 0, "young": 1e7},
        {"frame": 1, "refine_uniform": true}]})";
    const AppRun result =
        run(std::string(kBeamRun) + "--frames 4 --scene " + quote(scene) + " --script " +
            quote(dir_ / "uniform.json") + " --stats " + quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_NE(stats.find("\"finite\": true"), std::string::npos) << stats;
    EXPECT_EQ(json_number(stats, "cells"), 8.0 * 192.0) << stats;
    // One new vertex per edge of the input.
    EXPECT_EQ(json_number(stats, "vertices"),
              81.0 + static_cast<double>(count_edges(dir_ / "cube.ele")))
        << stats;
    // The pinned base (3 x 3 vertices at z = 0) becomes the 5 x 5 grid of its refinement: a
    // midpoint is pinned when both ends of its edge are.
    EXPECT_EQ(json_number(stats, "pinned_vertices"), 25.0) << stats;
    EXPECT_TRUE(json_member_is(stats, "uniform", "true")) << stats;
    EXPECT_GT(json_number(stats, "min_dihedral_deg"), 10.0) << stats;
    EXPECT_NE(stats.find("\"errors\": []"), std::string::npos) << stats;
}

TEST_F(App, RefineAtPixelAndMissesAreReportedAndTheSceneStays) {
    const fs::path scene = write_box({2, 2, 8}, 0.25);
    // The camera frames the beam: the image centre is on its surface, a corner is not. A brush
    // far outside the mesh touches no cell. Failures are reported and the refined scene stays.
    std::ofstream(dir_ / "pixel.json") << R"({"actions": [
        {"frame": 1, "refine": {"pixel": [32, 24], "radius": 0.2, "levels": 1}},
        {"frame": 2, "refine": {"center": [5, 5, 5], "radius": 0.1}},
        {"frame": 3, "refine": {"pixel": [0, 0], "radius": 0.1}}]})";
    const AppRun result =
        run(std::string(kBeamRun) + "--frames 4 --scene " + quote(scene) + " --script " +
            quote(dir_ / "pixel.json") + " --stats " + quote(dir_ / "stats.json"));
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string stats = read_text(dir_ / "stats.json");
    EXPECT_NE(stats.find("\"finite\": true"), std::string::npos) << stats;
    const double cells = json_number(stats, "cells");
    EXPECT_GT(cells, 192.0) << stats;
    EXPECT_EQ(json_number(stats, "cells_after"), cells) << stats;
    // One refinement recorded.
    EXPECT_EQ(stats.find("cells_after", stats.find("cells_after") + 1), std::string::npos) << stats;
    EXPECT_NE(stats.find("refine: no cell"), std::string::npos) << stats;
    EXPECT_NE(stats.find("misses the surface"), std::string::npos) << stats;
    EXPECT_EQ(lines_of(result.err).size(), 2u) << result.err; // one warning line each
}

} // namespace
