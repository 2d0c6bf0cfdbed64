// The app's recording (app/recorder.hpp) end to end: headless runs with --record and with the
// script's "record" write the requested frames (the .vtu series read back with read_vtu, the
// surface files with the project's OBJ / PLY readers and compared with the .vtu points, the PNG
// frames counted), across a cut, and the mp4 when ffmpeg is on the PATH (skipped otherwise).
// Skipped when the app was not built.

#include "mesh/box_mesh.hpp"
#include "mesh/obj_io.hpp"
#include "mesh/ply_io.hpp"
#include "mesh/tetgen_io.hpp"
#include "mesh/topology.hpp"
#include "mesh/vtu_io.hpp"
#include "support/app_binary.hpp"
#include "support/files.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <set>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace edn {
namespace {

namespace fs = std::filesystem;

bool ffmpeg_on_path() {
    return std::system("command -v ffmpeg > /dev/null 2>&1") == 0;
}

std::string quote(const fs::path& path) {
    std::string text = "'";
    text += path.string();
    text += '\'';
    return text;
}

/// Files in `dir` whose names match `pattern`, sorted.
std::vector<std::string> files_matching(const fs::path& dir, const std::string& pattern) {
    std::vector<std::string> names;
    const std::regex re(pattern);
    if (!fs::is_directory(dir)) return names;
    for (const auto& e : fs::directory_iterator(dir))
        if (std::regex_match(e.path().filename().string(), re))
            names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
}

/// Ascending boundary vertices of the linear tets of a .vtu, and its boundary face count.
std::pair<std::vector<Index>, std::size_t> boundary_of(const VtuData& vtu) {
    std::vector<Cell> cells;
    for (std::size_t c = 0; c < vtu.offsets.size(); ++c) {
        const std::int64_t begin = c == 0 ? 0 : vtu.offsets[c - 1];
        cells.push_back({static_cast<Index>(vtu.connectivity[begin]),
                         static_cast<Index>(vtu.connectivity[begin + 1]),
                         static_cast<Index>(vtu.connectivity[begin + 2]),
                         static_cast<Index>(vtu.connectivity[begin + 3])});
    }
    const Topology t = cpu::build_topology(cells, static_cast<Index>(vtu.points.size()));
    std::set<Index> used;
    for (const Tri& f : t.boundary_faces) used.insert(f.begin(), f.end());
    return {{used.begin(), used.end()}, t.boundary_faces.size()};
}

class AppRecord : public ::testing::Test {
protected:
    void SetUp() override {
        app_ = edn::test::app_binary();
        if (app_.empty()) GTEST_SKIP() << "elastodyn app not built";
        // A 2 x 2 x 8 beam of 0.25 cells (81 vertices), stiff enough to stand.
        write_node_ele(dir_.path / "beam.node",
                       make_box_tet_mesh(2, 2, 8, {0, 0, 0}, {0.5, 0.5, 2.0}));
    }
    /// Runs the app headless on the beam; returns the exit code (stderr in err_).
    int run(const std::string& arguments, const std::string& env = "") {
        const std::string command =
            env + quote(app_) + " --headless --no-gui --width 65 --height 47 --backend cpu " +
            "--E 1e7 --scene " + quote(dir_.path / "beam.node") + " " + arguments + " > " +
            quote(dir_.path / "out.txt") + " 2> " + quote(dir_.path / "err.txt");
        const int status = std::system(command.c_str());
        err_ = test::read_text(dir_.path / "err.txt");
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    /// Checks every surface frame of `rec` against the .vtu frame of the same number.
    void check_surfaces(const fs::path& rec, const std::string& extension,
                        std::vector<std::size_t>* counts = nullptr) {
        for (const std::string& vtu_name : files_matching(rec, R"(frame_\d{5}\.vtu)")) {
            SCOPED_TRACE(vtu_name);
            const VtuData vtu = read_vtu(rec / vtu_name);
            const auto [boundary, faces] = boundary_of(vtu);
            const fs::path surface =
                rec / "surface" / fs::path(vtu_name).replace_extension(extension);
            ASSERT_TRUE(fs::exists(surface)) << surface;
            if (counts) counts->push_back(boundary.size());
            if (extension == "ply") {
                const SurfaceMesh s = read_ply_surface(surface);
                ASSERT_EQ(s.positions.size(), boundary.size());
                EXPECT_EQ(s.triangles.size(), faces);
                for (std::size_t i = 0; i < boundary.size(); ++i)
                    ASSERT_EQ(s.positions[i], vtu.points[boundary[i]]) << "vertex " << i;
            } else {
                SurfaceOrigin origin;
                const SurfaceMesh s = read_obj_surface(surface, &origin);
                EXPECT_EQ(s.triangles.size(), faces);
                for (std::size_t i = 0; i < s.positions.size(); ++i) {
                    const auto k = static_cast<std::size_t>(origin.file_vertex[i]);
                    ASSERT_LT(k, boundary.size());
                    ASSERT_EQ(s.positions[i], vtu.points[boundary[k]]) << "vertex " << i;
                }
            }
        }
    }
    test::TempDir dir_{"edn_app_record"};
    fs::path app_;
    std::string err_;
};

TEST_F(AppRecord, RecordFlagWritesEveryKthStepAsVtuSurfacePngAndMp4) {
    const fs::path rec = dir_.path / "rec";
    ASSERT_EQ(run("--frames 10 --record " + quote(rec) + " --record-every 2"), 0) << err_;
    // Lockstep: one step per frame; frame k is the state k steps after the start.
    const std::vector<std::string> want = {"frame_00002.vtu", "frame_00004.vtu", "frame_00006.vtu",
                                           "frame_00008.vtu", "frame_00010.vtu"};
    EXPECT_EQ(files_matching(rec, R"(frame_\d+\.vtu)"), want);
    const std::string pvd = test::read_text(rec / "series.pvd");
    for (const std::string& name : want) EXPECT_NE(pvd.find(name), std::string::npos) << pvd;
    for (const std::string& name : want) {
        const VtuData vtu = read_vtu(rec / name);
        EXPECT_EQ(vtu.points.size(), 81u) << name;
        EXPECT_EQ(vtu.types, std::vector<std::uint8_t>(6 * 32, 10)) << name;
    }
    check_surfaces(rec, "obj");
    const std::vector<std::string> pngs = files_matching(rec / "png", R"(frame_\d{6}\.png)");
    ASSERT_EQ(pngs.size(), 5u);
    EXPECT_EQ(pngs.front(), "frame_000001.png");
    EXPECT_EQ(pngs.back(), "frame_000005.png");
    if (ffmpeg_on_path()) {
        EXPECT_GT(fs::file_size(rec / "recording.mp4"), 0u) << err_;
        EXPECT_FALSE(fs::exists(rec / "ffmpeg.log")) << "removed after a success";
        EXPECT_NE(err_.find("wrote " + (rec / "recording.mp4").string()), std::string::npos)
            << err_;
    } else {
        EXPECT_FALSE(fs::exists(rec / "recording.mp4"));
    }
}

TEST_F(AppRecord, SimulationThreadRecordsEveryKthStepAndAPictureOfEach) {
    // Threaded, the worker steps back to back and records every K-th step where it runs: the
    // frames are consecutive multiples of K whatever the display did, each surface the state of
    // its .vtu.
    const fs::path rec = dir_.path / "rec";
    ASSERT_EQ(run("--sim-thread --frames 30 --record " + quote(rec) +
                  " --record-every 5 --record-outputs vtu,ply"),
              0)
        << err_;
    const std::vector<std::string> vtus = files_matching(rec, R"(frame_\d{5}\.vtu)");
    ASSERT_FALSE(vtus.empty()) << err_;
    for (std::size_t i = 0; i < vtus.size(); ++i) {
        char name[32];
        std::snprintf(name, sizeof(name), "frame_%05zu.vtu", 5 * (i + 1));
        EXPECT_EQ(vtus[i], name);
    }
    check_surfaces(rec, "ply");
    // With pictures every recorded step must be drawn: the worker waits for the display after
    // each step (one step per frame), so each frame's .vtu has its PNG (the last step may end
    // the run before its picture).
    const fs::path pictures = dir_.path / "pictures";
    ASSERT_EQ(
        run("--sim-thread --frames 30 --record " + quote(pictures) + " --record-outputs vtu,png"),
        0)
        << err_;
    const std::size_t frames = files_matching(pictures, R"(frame_\d{5}\.vtu)").size();
    const std::size_t pngs = files_matching(pictures / "png", R"(frame_\d{6}\.png)").size();
    EXPECT_GE(frames, 5u);
    EXPECT_LE(frames, 31u) << "more steps than frames: not every step was drawn";
    EXPECT_GE(pngs + 1, frames);
    EXPECT_LE(pngs, frames);
}

TEST_F(AppRecord, RecordingAcrossACutKeepsEveryFrameComplete) {
    const fs::path rec = dir_.path / "rec";
    // The plane z = 1 separates the beam at a vertex layer (9 vertices duplicated) at frame 4.
    std::ofstream(dir_.path / "cut.json")
        << R"({"actions": [{"frame": 4, "cut": {"point": [0.25, 0.25, 1.0], "normal": [0, 0, 1]}}]})";
    ASSERT_EQ(run("--frames 8 --record " + quote(rec) + " --record-outputs vtu,ply --script " +
                  quote(dir_.path / "cut.json")),
              0)
        << err_;
    EXPECT_FALSE(fs::exists(rec / "png")) << "no PNG asked for";
    std::vector<long> points;
    for (const std::string& name : files_matching(rec, R"(frame_\d{5}\.vtu)"))
        points.push_back(static_cast<long>(read_vtu(rec / name).points.size()));
    ASSERT_EQ(points.size(), 8u);
    // Steps 1-4 ran before the cut (applied in frame 4's turn, before its step).
    EXPECT_EQ(points[2], 81);
    EXPECT_EQ(points[4], 90);
    EXPECT_EQ(points[7], 90);
    std::vector<std::size_t> surface_vertices;
    check_surfaces(rec, "ply", &surface_vertices);
    ASSERT_EQ(surface_vertices.size(), 8u);
    EXPECT_GT(surface_vertices[7], surface_vertices[0]) << "the cut opened new boundary";
}

TEST_F(AppRecord, ScriptStartsAndStopsARecordingAndWithoutFfmpegThePngsStay) {
    const fs::path rec = dir_.path / "scripted";
    std::ofstream(dir_.path / "rec.json")
        << R"({"actions": [{"frame": 2, "record": ")" << rec.string()
        << R"("}, {"frame": 6, "record": false}]})";
    // No ffmpeg on an empty PATH: the PNGs stay, and the run says why there is no mp4.
    const fs::path empty = dir_.path / "empty-path";
    fs::create_directories(empty);
    ASSERT_EQ(run("--frames 10 --record-outputs mp4 --script " + quote(dir_.path / "rec.json"),
                  "PATH=" + empty.string() + " "),
              0)
        << err_;
    // Started in frame 2's turn, stopped in frame 6's: the steps of frames 2-5.
    EXPECT_EQ(files_matching(rec / "png", R"(frame_\d{6}\.png)").size(), 4u);
    EXPECT_TRUE(files_matching(rec, R"(frame_\d+\.vtu)").empty()) << "only PNG and mp4 asked for";
    EXPECT_FALSE(fs::exists(rec / "recording.mp4"));
    EXPECT_NE(err_.find("ffmpeg is not on the PATH"), std::string::npos) << err_;
}

TEST_F(AppRecord, BadRecordOptionsAreUsageErrors) {
    EXPECT_EQ(run("--frames 1 --record-outputs vtu,gif"), 2) << err_;
    EXPECT_NE(err_.find("unknown output 'gif'"), std::string::npos) << err_;
    EXPECT_EQ(run("--frames 1 --record-every 0"), 2) << err_;
    test::write_text(dir_.path / "file", "x");
    EXPECT_NE(run("--frames 2 --record " + quote(dir_.path / "file")), 0) << err_;
    EXPECT_NE(err_.find("not a directory"), std::string::npos) << err_;
}

} // namespace
} // namespace edn
