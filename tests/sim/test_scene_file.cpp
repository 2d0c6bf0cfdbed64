// Scene files (sim/scene_file.hpp): every settings option has a scene key, a scene's settings are
// what the same command-line flags make, what a scene leaves out keeps the defaults it is read
// onto, the writer's output loads back equal, and every bad input is one line naming the file,
// the line and the key.

#include "core/error.hpp"
#include "core/json.hpp"
#include "sim/presets.hpp"
#include "sim/scene_file.hpp"
#include "sim/settings_json.hpp"
#include "sim/settings_options.hpp"
#include "support/files.hpp"

#include <gtest/gtest.h>
#include <string>
#include <utility>
#include <vector>

namespace edn {
namespace {

namespace fs = std::filesystem;

/// Every setting as JSON (write_settings_json without a base): equal JSON, equal settings.
Json all_settings(const SimulationSettings& s) {
    Json root = Json::object();
    write_settings_json(s, nullptr, root);
    return root;
}

TEST(SceneFile, EverySettingsOptionHasASceneKey) {
    for (const SettingsOption& option : settings_options()) {
        if (std::string_view(option.name) == "static") continue; // time.integrator "static"
        int found = 0;
        for (const SettingsKey& key : settings_keys())
            found += option.name == std::string(key.option);
        EXPECT_EQ(found, 1) << option.name;
    }
}

TEST(SceneFile, SettingsAreWhatTheSameFlagsMake) {
    const std::string text = R"({"version": 1, "mesh": "m.node", "order": 2,
        "material": {"preset": "silicone", "model": "corotational", "nu": 0.4},
        "time": {"integrator": "midpoint", "dt": 0.01, "gravity": [1, 0, -3.5], "damping": 0.25,
                 "stiffness_damping": 0.001},
        "solver": {"backend": "cpu", "summation": "per_simplex", "preconditioner": "block_jacobi",
                   "newton": 7, "newton_tol": 1e-4, "frame_budget_ms": 3, "cg_tol": 1e-5,
                   "cg_max": 300, "cg_forcing": false, "multigrid_refresh": "iteration",
                   "exact_hessian": true, "deterministic": true},
        "ground": {"height": -0.5, "friction": 2}})";
    const SceneFile scene = parse_scene(text, "dir/s.json");
    SimulationSettings flags;
    apply_settings_options({{"preset", "silicone"},
                            {"material", "corotational"},
                            {"nu", "0.4"},
                            {"order", "2"},
                            {"integrator", "midpoint"},
                            {"dt", "0.01"},
                            {"gravity", "1,0,-3.5"},
                            {"damping", "0.25"},
                            {"stiffness-damping", "0.001"},
                            {"backend", "cpu"},
                            {"summation", "per_simplex"},
                            {"preconditioner", "block_jacobi"},
                            {"newton", "7"},
                            {"newton-tol", "1e-4"},
                            {"frame-budget-ms", "3"},
                            {"cg-tol", "1e-5"},
                            {"cg-max", "300"},
                            {"cg-forcing", "off"},
                            {"multigrid-refresh", "iteration"},
                            {"exact-hessian", ""},
                            {"deterministic", ""},
                            {"ground", "-0.5"},
                            {"ground-friction", "2"}},
                           flags);
    EXPECT_EQ(all_settings(scene.settings), all_settings(flags));
    EXPECT_EQ(scene.mesh, fs::path("dir/m.node"));
    // "static" is the --static flag.
    const SceneFile still =
        parse_scene(R"({"version": 1, "mesh": "m.node", "time": {"integrator": "static"}})", "s");
    EXPECT_EQ(still.settings.integrator, Integrator::Static);
}

TEST(SceneFile, WhatASceneLeavesOutKeepsTheDefaultsItIsReadOnto) {
    const std::string text = R"({"version": 1, "mesh": "m.node", "material": {"E": 2e5}})";
    SimulationSettings expected;
    expected.young = 2e5;
    EXPECT_EQ(all_settings(parse_scene(text, "s.json").settings), all_settings(expected));
    SimulationSettings app;
    app.frame_budget_ms = 16;
    app.ground_height = 0.25;
    SimulationSettings app_expected = app;
    app_expected.young = 2e5;
    EXPECT_EQ(all_settings(parse_scene(text, "s.json", app).settings), all_settings(app_expected));
    const SceneFile plain = parse_scene(R"({"version": 1, "mesh": "m.obj"})", "s.json");
    EXPECT_EQ(plain.meshing.quality, TetrahedralizeOptions{}.quality);
    EXPECT_EQ(plain.meshing.max_volume, TetrahedralizeOptions{}.max_volume);
    EXPECT_FALSE(plain.frames);
}

SceneFile sample_scene(const fs::path& mesh) {
    SceneFile scene;
    scene.mesh = mesh;
    scene.meshing.quality = 2;
    scene.meshing.max_volume = 0.125;
    scene.settings.order = 2;
    scene.settings.young = 1.0 / 3.0;
    scene.settings.dt = 1.0 / 120.0;
    scene.settings.gravity = {0.1, 0.2, -9.7};
    scene.settings.integrator = Integrator::Midpoint;
    scene.settings.pcg.relative_tolerance = 3e-5;
    scene.settings.cg_forcing = false;
    scene.settings.ground_height = -0.3;
    scene.settings.ground_friction = 0.7;
    scene.settings.ground_stiffness = 4e5;
    scene.settings.coarse_iterations = 5;
    scene.settings.projection = HessianProjection::Never;
    scene.frames = 42;
    ScenePin plane;
    plane.plane = PinPlane{0, true, 0.1, std::nullopt};
    ScenePin at;
    at.plane = PinPlane{2, false, std::nullopt, -0.25};
    ScenePin box;
    box.box = PinBox{{0, 0, 0}, {0.5, 0.5, 0.5}};
    ScenePin list;
    list.vertices = {0, 4, 7};
    scene.pins = {plane, at, box, list};
    SceneAction drag;
    drag.frame = 3;
    drag.drag = SceneDrag{5, {0.1, 0.2, 0.3}, 250, 0.05};
    SceneAction cut;
    cut.frame = 10;
    cut.cut = CutPlane{{0, 0, 0.5}, {0, 0, 1}, 0.3};
    cut.release = true;
    SceneAction refine;
    refine.frame = 12;
    refine.refine = SceneRefine{{0.5, 0.5, 0.5}, 0.2, 2};
    refine.refine_uniform = true;
    scene.actions = {drag, cut, refine};
    return scene;
}

TEST(SceneFile, WrittenScenesLoadBackEqual) {
    const test::TempDir dir("edn_scene_round_trip");
    fs::create_directories(dir.path / "scenes");
    const SceneFile scene = sample_scene(dir.path / "meshes" / "box.node");
    const SimulationSettings defaults;
    for (const SimulationSettings* base :
         {static_cast<const SimulationSettings*>(nullptr), &defaults}) {
        const fs::path file = dir.path / "scenes" / "a.json";
        write_scene_file(file, scene, base);
        const SceneFile back = load_scene_file(file);
        EXPECT_EQ(fs::weakly_canonical(back.mesh), fs::weakly_canonical(scene.mesh));
        // Relative to the scene's folder.
        EXPECT_EQ(read_json_file(file).at("mesh").at("path").get<std::string>(),
                  "../meshes/box.node");
        EXPECT_EQ(scene_to_json(back, dir.path, nullptr), scene_to_json(scene, dir.path, nullptr));
        EXPECT_EQ(all_settings(back.settings), all_settings(scene.settings));
        // Written again, the same text.
        EXPECT_EQ(to_json_text(scene_to_json(back, dir.path / "scenes", base)),
                  to_json_text(scene_to_json(scene, dir.path / "scenes", base)));
    }
    // A preset is written by name when the numbers are the preset's.
    SceneFile gel = scene;
    apply_preset(*find_preset("gel"), gel.settings);
    EXPECT_EQ(scene_to_json(gel, dir.path).at("material").at("preset"), "gel");
}

TEST(SceneFile, PinsResolveToVertices) {
    TetMesh mesh;
    mesh.positions = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};
    mesh.cells = {{0, 1, 2, 3}, {1, 2, 3, 4}};
    SceneFile scene = parse_scene(R"({"version": 1, "mesh": "m.node", "pins": [
        {"plane": {"axis": "x", "side": "above", "at": 0.5}},
        {"box": {"min": [-1, -1, 0.5], "max": [0.5, 0.5, 2]}},
        {"vertices": [3]}]})",
                                  "s.json");
    EXPECT_EQ(scene_vertex_pins(scene, mesh), (std::vector<std::uint8_t>{0, 1, 1, 1, 1}));
    scene = parse_scene(R"({"version": 1, "mesh": "m.node",
        "pins": [{"vertices": [1, 6]}]})",
                        "s.json");
    try {
        scene_vertex_pins(scene, mesh);
        FAIL() << "vertex 6 of 5 accepted";
    } catch (const Error& error) {
        EXPECT_EQ(std::string(error.what()), "s.json:2: pins[0].vertices: vertex 6 is not in 1..5");
    }
}

/// The one-line message parse_scene throws for `text`.
std::string scene_error(const std::string& text) {
    try {
        parse_scene(text, "bad.json");
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), ErrorCode::Parse) << error.what();
        return error.what();
    }
    ADD_FAILURE() << "accepted: " << text;
    return {};
}

TEST(SceneFile, BadInputIsOneLineNamingFileLineAndKey) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{\"version\": 1, \"mesh\": \"m\",\n \"colour\": 1}", "bad.json:2: colour: unknown key"},
        {"{\"version\": 1, \"mesh\": \"m\",\n \"solver\": {\"cg_tol\": \"small\"}}",
         "bad.json:2: solver.cg_tol: expected a number, got string"},
        {"{\"version\": 1, \"mesh\": \"m\",\n \"solver\": {\"cg_tolerance\": 1}}",
         "bad.json:2: solver.cg_tolerance: unknown key (expected backend"},
        {"{\"version\": 1, \"mesh\": \"m\", \"time\": {\n\"damping\": -1}}",
         "bad.json:2: time.damping: -1 is out of range"},
        {"{\"version\": 1, \"mesh\": \"m\", \"time\": {\n\"dt\": 1e999}}",
         "bad.json:2:"}, // the JSON reader refuses numbers beyond double
        {"{\"version\": 1, \"mesh\": \"m\", \"material\": {\n\"nu\": 0.5}}",
         "bad.json:2: material.nu: must be in (-1, 0.5), got 0.5"},
        {"{\"version\": 1, \"mesh\": \"m\", \"material\": {\n\"preset\": \"jelly\"}}",
         "bad.json:2: material.preset: unknown preset 'jelly'"},
        {"{\"version\": 1, \"mesh\": \"m\",\n\"order\": 4}",
         "bad.json:2: order: 4 is out of range"},
        {"{\"version\": 2, \"mesh\": \"m\"}", "bad.json:1: version: version 2 is not one"},
        {"{\"mesh\": \"m\"}", "bad.json:1: needs \"version\""},
        {"{\"version\": 1}", "bad.json:1: needs \"mesh\""},
        {"{\"version\": 1, \"mesh\": {\"path\": \"m\",\n\"quality\": 0.5}}",
         "bad.json:2: mesh.quality: must be 0 (off) or >= 1"},
        {"{\"version\": 1, \"mesh\": \"m\", \"pins\": [\n{\"plane\": {\"axis\": \"w\", \"at\": "
         "0}}]}",
         "bad.json:2: pins[0].plane.axis: unknown value \"w\""},
        {"{\"version\": 1, \"mesh\": \"m\", \"pins\": [\n{\"vertices\": [0]}]}",
         "bad.json:2: pins[0].vertices[0]: expected an integer in [1, "},
        {"{\"version\": 1, \"mesh\": \"m\", \"actions\": [\n{\"cut\": {}}]}",
         "bad.json:2: actions[0]: needs \"frame\""},
        {"{\"version\": 1, \"mesh\": \"m\", \"actions\": [{\"frame\": 1,\n\"cut\": {\"point\": "
         "[0, 0, 0], \"normal\": [0, 0, 0]}}]}",
         "bad.json:2: actions[0].cut.normal: must not be zero"},
        {"{\"version\": 1, \"mesh\": \"m\", \"actions\": [{\"frame\": 1,\n\"paint\": true}]}",
         "bad.json:2: actions[0].paint: unknown key"},
        {"{\"version\": 1, \"mesh\": \"m\",\n\"ground\": true}",
         "bad.json:2: ground: expected an object or false"},
        {"{\"version\": 1, \"mesh\": \"m\", \"time\": {\"gravity\": [1, 2]}}",
         "bad.json:1: time.gravity: expected an array of 3 numbers"},
        {"{\"version\": 1, \"mesh\": \"m\", \"solver\": {\"backend\": \"gpu\"}}",
         "bad.json:1: solver.backend: unknown value 'gpu'"},
        {"{\"version\": 1, \"mesh\": \"m\",", "bad.json:1:"},
        {"[1, 2]", "bad.json:1: expected an object, got array"},
    };
    for (const auto& [text, expected] : cases) {
        const std::string message = scene_error(text);
        EXPECT_EQ(message.rfind(expected, 0), 0u) << "got: " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
}

} // namespace
} // namespace edn

namespace edn {
namespace {

TEST(SceneFile, TheExampleSceneLoads) {
    const std::filesystem::path path =
        std::filesystem::path(EDN_SOURCE_DIR) / "assets" / "scenes" / "cantilever.json";
    const SceneFile scene = load_scene_file(path);
    EXPECT_TRUE(std::filesystem::is_regular_file(scene.mesh)) << scene.mesh;
    EXPECT_EQ(scene.settings.order, 2);
    EXPECT_EQ(scene.settings.young, 5e7); // over the preset
    EXPECT_EQ(scene.settings.density, find_preset("soft_rubber")->density);
    EXPECT_EQ(scene.actions.size(), 4u);
    EXPECT_EQ(scene.actions[0].drag->vertex, 1073); // 1-based in the file
}

} // namespace
} // namespace edn

namespace edn {
namespace {

TEST(SceneFile, MangledScenesAreErrorsNeverCrashes) {
    const std::string text =
        to_json_text(scene_to_json(sample_scene("/tmp/m.node"), "/tmp", nullptr));
    std::uint64_t seed = 12345;
    auto next = [&] { return seed = seed * 6364136223846793005ull + 1442695040888963407ull; };
    const std::string replacements = "{}[]:,\"0-.e9xtn ";
    int errors = 0;
    for (int trial = 0; trial < 400; ++trial) {
        std::string mangled = text;
        for (int k = 0; k < 1 + trial % 3; ++k) {
            const std::size_t at = (next() >> 33) % mangled.size();
            if (next() % 2)
                mangled.erase(at, 1);
            else
                mangled[at] = replacements[(next() >> 33) % replacements.size()];
        }
        try {
            parse_scene(mangled, "m.json");
        } catch (const Error& error) {
            ++errors;
            EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
        }
    }
    EXPECT_GT(errors, 200);
}

} // namespace
} // namespace edn
