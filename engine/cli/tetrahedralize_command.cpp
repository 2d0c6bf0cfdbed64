#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/json.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/obj_io.hpp"
#include "mesh/tetgen_io.hpp"

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <system_error>
#include <thread>
#include <unistd.h>

namespace edn::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// The live stage line of a long tetrahedralize on a terminal: "tetrahedralize: meshing (12 s)"
/// rewritten in place twice a second on stderr, cleared when the command ends (also on error, so
/// that the error line stands alone). Silent unless stderr is a terminal: logs and pipes get
/// only the final summary. TetGen exposes no cheap count of inserted points (it runs in a child
/// process), so the line shows the stage and the elapsed time.
class StageLine {
public:
    /// `live`: draw the line (stderr is a terminal and TetGen's own output is off).
    explicit StageLine(bool live) : live_(live), start_(Clock::now()) {
        if (live_) ticker_ = std::thread([this] { tick(); });
    }
    StageLine(const StageLine&) = delete;
    StageLine& operator=(const StageLine&) = delete;
    ~StageLine() { finish(); }

    /// Stops and clears the line (idempotent).
    void finish() {
        if (!live_) return;
        live_ = false;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        ticker_.join();
        write_raw("\r\033[K");
    }

    /// Enters stage `name` (a string literal: the ticker keeps the pointer).
    void stage(const char* name) {
        if (!live_) return;
        std::lock_guard<std::mutex> lock(mutex_);
        stage_ = name;
        draw(); // now, so that no stage goes unshown between two ticks
    }

    /// Seconds since construction.
    double elapsed_s() const {
        return std::chrono::duration<double>(Clock::now() - start_).count();
    }

private:
    // write(2) of a stack buffer, not iostreams or stdio: TetGen is forked from another thread
    // meanwhile, and a child must not inherit a stdio lock held by this one.
    static void write_raw(const char* text) {
        std::size_t length = 0;
        while (text[length] != '\0') ++length;
        while (length > 0) {
            const ssize_t written = ::write(STDERR_FILENO, text, length);
            if (written <= 0) return; // a closed terminal is no reason to fail the command
            text += written;
            length -= static_cast<std::size_t>(written);
        }
    }

    /// Rewrites the line; the caller holds mutex_.
    void draw() const {
        char line[128];
        std::snprintf(line, sizeof line, "\r\033[Ktetrahedralize: %s (%.0f s)", stage_,
                      elapsed_s());
        write_raw(line);
    }

    void tick() {
        std::unique_lock<std::mutex> lock(mutex_);
        while (!stop_) {
            draw();
            wake_.wait_for(lock, std::chrono::milliseconds(500));
        }
    }

    bool live_;
    Clock::time_point start_;
    std::mutex mutex_;
    std::condition_variable wake_;
    const char* stage_ = "starting";
    bool stop_ = false;
    std::thread ticker_;
};

/// Reads `input`; an OBJ surface is read and checked here and meshed as a stage of its own.
TetMesh read_and_mesh(const fs::path& input, const TetrahedralizeOptions& options,
                      StageLine& progress) {
    progress.stage("reading");
    std::string extension = input.extension().string();
    for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (extension != ".obj") return load_tet_mesh(input, options); // already a volume mesh
    verify_regular_file(input);
    SurfaceOrigin origin; // messages number vertices and faces as the file does
    SurfaceMesh surface = read_obj_surface(input, &origin);
    check_and_orient_surface(surface, input.string(), &origin);
    progress.stage("meshing");
    return tetrahedralize(surface, options, input.string());
}

} // namespace

int run_tetrahedralize(const std::vector<std::string>& arguments) {
    const Args args("tetrahedralize", arguments, meshing_option_specs());
    if (args.help_requested()) {
        std::cout
            << args.usage("IN OUT.node [options]")
            << "Meshes IN (.obj surface, .node/.ele or .msh) and writes OUT.node + OUT.ele.\n";
        return 0;
    }
    args.expect_positionals({"IN", "OUT.node"});
    const TetrahedralizeOptions options = meshing_options(args);
    const fs::path input = args.positionals()[0];
    const fs::path node_path = args.positionals()[1];
    if (node_path.extension() != ".node")
        usage_error("tetrahedralize: output '" + node_path.string() + "' must end in .node");

    fs::path ele_path = node_path;
    ele_path.replace_extension(".ele");
    // Check the destination before the (possibly long) meshing; publish the pair together.
    OutputFiles outputs;
    add_mesh_inputs(outputs, input);
    const fs::path temp_node = outputs.add(node_path, "OUT.node");
    const fs::path temp_ele = outputs.add(ele_path, "OUT.ele");

    // Stage line only when a person watches, and not over TetGen's own --verbose output.
    StageLine progress(::isatty(STDERR_FILENO) == 1 && !options.verbose);
    const TetMesh mesh = read_and_mesh(input, options, progress);
    progress.stage("writing");
    write_node_ele(temp_node, mesh); // writes temp_node and its .ele sibling
    fs::path written_ele = temp_node;
    written_ele.replace_extension(".ele");
    if (written_ele != temp_ele) { // OUT.node and OUT.ele resolve into different directories
        std::error_code ec;
        fs::rename(written_ele, temp_ele, ec);
        if (ec) fs::remove(written_ele, ec);
        EDN_VERIFY(fs::is_regular_file(temp_ele, ec), ErrorCode::Io,
                   ele_path.string() << ": cannot write beside " << node_path.string());
    }
    outputs.commit();

    const double volume = total_volume(mesh);
    const double seconds = progress.elapsed_s();
    JsonObject summary;
    summary.add("input", input.string())
        .add("node", node_path.string())
        .add("ele", ele_path.string())
        .add("vertices", mesh.num_vertices())
        .add("cells", mesh.num_cells())
        .add("volume", volume);
    std::cout << to_json_text(summary.json(), {JsonLayout::Compact}) << std::endl;
    progress.finish();
    // The person's summary goes to stderr: stdout stays the one JSON line scripts read.
    char line[256];
    std::snprintf(line, sizeof line,
                  "tetrahedralize: %lld vertices, %lld cells, volume %.6g, %.2f s\n",
                  static_cast<long long>(mesh.num_vertices()),
                  static_cast<long long>(mesh.num_cells()), volume, seconds);
    std::cerr << line << std::flush;
    return 0;
}

} // namespace edn::cli
