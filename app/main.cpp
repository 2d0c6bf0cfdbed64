// elastodyn: the interactive app. main() only parses the command line and hands over to App.

#include "app.hpp"
#include "core/error.hpp"
#include "sim/presets.hpp"
#include "sim/settings_options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

namespace {

constexpr const char* kUsage =
    "usage: elastodyn [--scene FILE] [--frames N] [--headless] [--screenshot OUT.png|OUT.ppm]\n"
    "                 [--timings OUT.csv] [--width W] [--height H] [--no-gui]\n"
    "                 [--script ACTIONS.json] [--stats OUT.json] [--color MODE] [--paused]\n"
    "                 [--no-interop] [--interop-mapped] [--interop-profile]\n"
    "                 [--shader-dir DIR] [--sim-thread|--lockstep]\n"
    "                 [--full-resolution] [--progress] [--record DIR] [--record-every K]\n"
    "                 [--record-outputs LIST] [simulation settings, below]\n"
    "  --scene FILE       tet mesh to show: OBJ surface (meshed by TetGen), .node/.ele or .msh;\n"
    "                     a path, or a file name in the assets folder\n"
    "                     (default: the model named in assets/default_scene.txt); or a scene\n"
    "                     file (.json, docs/SCENES.md: mesh, settings, pins, ground, actions),\n"
    "                     whose settings the settings options given here override; or a\n"
    "                     saved state (.edns) to resume\n"
    "  --frames N         run N frames, then exit\n"
    "  --headless         render offscreen through EGL, without a window or display\n"
    "  --screenshot FILE  save the last frame (.png or .ppm)\n"
    "  --timings FILE     save per-frame stage timings as CSV\n"
    "  --width W, --height H  framebuffer size in pixels (default 1280 x 720)\n"
    "  --no-gui           draw only the scene, without the panels (clean screenshots)\n"
    "  --script FILE      timed actions (pins, drags, settings), see app/README.md\n"
    "  --stats FILE       write the final state (bounding box, finite flag, errors) as JSON\n"
    "  --color MODE       surface colour: none, von_mises (default) or displacement\n"
    "  --paused           start with the simulation paused\n"
    "  --no-interop       with cuda, upload from host positions with glBufferSubData instead\n"
    "                     (comparison runs)\n"
    "  --interop-mapped   with cuda, the registered-buffer interop path even where the\n"
    "                     external-memory path works (comparison runs)\n"
    "  --interop-profile  print the median split of the surface update at exit\n"
    "  --shader-dir DIR   GLSL sources from DIR instead of the installed shaders (editing)\n"
    "  --sim-thread       step on the simulation thread while the UI runs at the display rate\n"
    "                     (default for windowed runs without --frames or --script)\n"
    "  --lockstep         one step per frame on the UI thread (default headless, with --frames\n"
    "                     or --script: runs are reproducible frame by frame)\n"
    "  --full-resolution  mesh OBJ scenes with TetGen's quality bound 1.4 also on the CPU backend\n"
    "                     (default there: quality 0, e.g. the bunny 3.9K instead of 28.7K tets)\n"
    "  --progress         print the frame count and frame time to stderr every 2 s\n"
    "  --record DIR       record from the start (the Record button): DIR/frame_NNNNN.vtu +\n"
    "                     series.pvd, DIR/surface/frame_NNNNN.obj, DIR/png/frame_NNNNNN.png and\n"
    "                     at exit DIR/recording.mp4 (ffmpeg from the PATH; without it the PNGs\n"
    "                     stay); frame k is the state k steps after the start; every file is\n"
    "                     complete in itself, so cuts and refinements change the counts of\n"
    "                     later frames only (docs/RECORDING.md)\n"
    "  --record-every K   recordings (--record, the Record button, the script's \"record\"):\n"
    "                     every K-th step (default 1)\n"
    "  --record-outputs LIST  recordings: comma-separated vtu, obj, ply, png, mp4 (mp4 adds\n"
    "                     png; default vtu,obj,png,mp4)\n";

/// Parses a positive integer option value; throws a usage error naming the option.
int parse_positive(std::string_view option, std::string_view text, int max_value) {
    int value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    EDN_VERIFY(ec == std::errc() && end == text.data() + text.size() && value >= 1 &&
                   value <= max_value,
               edn::ErrorCode::Usage,
               option << ": expected an integer in [1, " << max_value << "], got '" << text << "'");
    return value;
}

edn::AppOptions parse_arguments(int argc, char** argv) {
    edn::AppOptions options;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        auto value = [&]() -> std::string_view {
            EDN_VERIFY(i + 1 < argc, edn::ErrorCode::Usage, arg << ": missing value");
            return argv[++i];
        };
        if (arg == "--scene") {
            options.scene = std::filesystem::path(value());
        } else if (arg == "--frames") {
            options.frames = parse_positive(arg, value(), 1'000'000'000);
        } else if (arg == "--headless") {
            options.headless = true;
        } else if (arg == "--screenshot") {
            options.screenshot = std::filesystem::path(value());
            const auto extension = options.screenshot->extension();
            EDN_VERIFY(extension == ".png" || extension == ".ppm", edn::ErrorCode::Usage,
                       arg << ": " << options.screenshot->string() << ": must end in .png or .ppm");
        } else if (arg == "--timings") {
            options.timings = std::filesystem::path(value());
        } else if (arg == "--width") {
            options.width = parse_positive(arg, value(), 16384);
        } else if (arg == "--height") {
            options.height = parse_positive(arg, value(), 16384);
        } else if (arg == "--no-gui") {
            options.show_gui = false;
        } else if (arg == "--script") {
            options.script = std::filesystem::path(value());
        } else if (arg == "--stats") {
            options.stats = std::filesystem::path(value());
        } else if (arg == "--color") {
            const std::string_view name = value();
            options.color = edn::parse_color_mode(name);
            EDN_VERIFY(options.color, edn::ErrorCode::Usage,
                       arg << ": expected none, von_mises or displacement, got '" << name << "'");
        } else if (arg == "--no-interop") {
            options.interop = false;
        } else if (arg == "--shader-dir") {
            options.shader_dir = std::filesystem::path(value());
        } else if (arg == "--interop-mapped") {
            options.interop_options.force_mapped = true;
        } else if (arg == "--interop-profile") {
            options.interop_options.profile = true;
        } else if (arg == "--sim-thread") {
            options.sim_thread = true;
        } else if (arg == "--progress") {
            options.progress = true;
        } else if (arg == "--full-resolution") {
            options.full_resolution = true;
        } else if (arg == "--lockstep") {
            options.sim_thread = false;
        } else if (arg == "--record") {
            if (!options.record) options.record = edn::default_record_options();
            options.record->dir = std::filesystem::path(value());
        } else if (arg == "--record-every") {
            if (!options.record) options.record = edn::default_record_options();
            options.record->every = parse_positive(arg, value(), 1'000'000'000);
        } else if (arg == "--record-outputs") {
            if (!options.record) options.record = edn::default_record_options();
            edn::parse_record_outputs(std::string(value()), *options.record);
        } else if (arg == "--paused") {
            options.paused = true;
        } else if (arg == "--help" || arg == "-h") {
            options.show_help = true;
        } else if (const edn::SettingsOption* setting =
                       arg.starts_with("--") ? edn::find_settings_option(arg.substr(2)) : nullptr) {
            // simulate's settings flags, parsed by its parser (sim/settings_options.hpp).
            options.settings.emplace_back(setting->name,
                                          setting->takes_value() ? std::string(value()) : "");
        } else {
            EDN_THROW(edn::ErrorCode::Usage, "unknown argument '" << arg << "' (see --help)");
        }
    }
    // Bad values fail here, before any window opens; App applies the same list to its defaults.
    edn::SimulationSettings given;
    edn::apply_settings_options(options.settings, given);
    for (const auto& [name, text] : options.settings) {
        if (name == "backend") options.backend = given.backend;
        if (name == "frame-budget-ms") options.frame_budget_ms = given.frame_budget_ms;
    }
    return options;
}

/// The usage text: the app's own options, then the settings options shared with simulate.
std::string usage() {
    std::string text = kUsage;
    text += "Simulation settings (as elastodyn-cli simulate; defaults there, except that the app\n"
            "picks cuda when a device is usable and a --frame-budget-ms of 16, or 100 with\n"
            "--sim-thread):\n";
    for (const edn::SettingsOption& option : edn::settings_options()) {
        std::string left = std::string("  --") + option.name;
        if (option.takes_value()) left += std::string(" ") + option.value_name;
        left.resize(std::max<std::size_t>(left.size() + 1, 21), ' ');
        text += left + option.help + "\n";
        if (std::string_view(option.name) == "preset")
            text += std::string(21, ' ') + edn::preset_names() + "\n";
    }
    text += "Exit codes: 0 success, 2 usage error, 3 bad input, 4 display, GL or internal error.\n";
    return text;
}

} // namespace

int main(int argc, char** argv) {
    try {
        const edn::AppOptions options = parse_arguments(argc, argv);
        if (options.show_help) {
            std::cout << usage();
            return 0;
        }
        edn::App app(options);
        return app.run();
    } catch (const edn::Error& error) {
        std::cerr << "elastodyn: error: " << error.what() << '\n';
        return edn::exit_code_for(error.code());
    } catch (const std::exception& error) {
        std::cerr << "elastodyn: error: internal: " << error.what() << '\n';
        return 4;
    }
}
