// The recorder (app/recorder.hpp) without GL: --record-outputs parsing, the PATH lookup of
// ffmpeg, frames and pictures written by its thread in order, and a failed write that stops the
// recording without blocking the stepping thread.

#include "core/error.hpp"
#include "recorder.hpp"
#include "sim/simulation.hpp"
#include "support/files.hpp"
#include "support/mesh_fixtures.hpp"
#include "video_encoder.hpp"

#include <gtest/gtest.h>

namespace edn {
namespace {

namespace fs = std::filesystem;

TEST(RecordOutputs, ParseTheListAndMp4ImpliesPng) {
    RecordOptions o = default_record_options();
    EXPECT_TRUE(o.vtu && o.surface && o.png && o.video);
    parse_record_outputs("ply", o);
    EXPECT_TRUE(!o.vtu && o.surface && !o.png && !o.video);
    EXPECT_EQ(o.surface_format, SurfaceFormat::Ply);
    parse_record_outputs("vtu,mp4", o);
    EXPECT_TRUE(o.vtu && !o.surface && o.png && o.video);
    EXPECT_THROW(parse_record_outputs("vtu,avi", o), Error);
    EXPECT_THROW(parse_record_outputs("", o), Error);
}

TEST(FindOnPath, FindsAnExecutableAndNotAMissingOne) {
    const std::optional<fs::path> sh = find_on_path("sh");
    ASSERT_TRUE(sh);
    EXPECT_EQ(sh->filename(), "sh");
    EXPECT_FALSE(find_on_path("elastodyn-no-such-program"));
}

/// A small simulated box.
std::unique_ptr<Simulation> box() {
    SimulationSettings s;
    s.dt = 0.01;
    auto sim = std::make_unique<Simulation>(test::make_box_mesh(1, 1, 2, 1.0, 1.0, 2.0), s);
    sim->pin_below(0.01);
    return sim;
}

TEST(Recorder, WritesEveryKthStepAndItsPictureOnItsThread) {
    test::TempDir dir("edn_recorder");
    auto sim = box();
    Recorder recorder;
    RecordOptions o;
    o.dir = dir.path / "r";
    o.every = 2;
    o.png = true;
    o.surface_format = SurfaceFormat::Ply;
    recorder.start(o, *sim);
    EXPECT_TRUE(recorder.active());
    EXPECT_THROW(recorder.start(o, *sim), Error) << "already recording";
    int pictures = 0;
    for (int step = 1; step <= 5; ++step) {
        sim->step();
        recorder.on_step(*sim);
        if (recorder.take_png_request()) {
            Image image{4, 2, std::vector<std::uint8_t>(24, static_cast<std::uint8_t>(step))};
            recorder.add_png(image);
            ++pictures;
        }
        recorder.after_render();
    }
    EXPECT_EQ(pictures, 2) << "steps 2 and 4";
    recorder.stop();
    recorder.after_render();
    recorder.wait_idle();
    EXPECT_TRUE(recorder.error().empty()) << recorder.error();
    EXPECT_FALSE(recorder.busy());
    for (const char* name :
         {"frame_00002.vtu", "frame_00004.vtu", "series.pvd", "surface/frame_00002.ply",
          "surface/frame_00004.ply", "png/frame_000001.png", "png/frame_000002.png"})
        EXPECT_TRUE(fs::exists(o.dir / name)) << name;
    EXPECT_FALSE(fs::exists(o.dir / "frame_00005.vtu"));
    EXPECT_FALSE(fs::exists(o.dir / "recording.mp4")) << "no video asked for";
    EXPECT_NE(recorder.status().find("recorded 2 frames, 2 PNGs"), std::string::npos)
        << recorder.status();
    // The same folder again: its PNG frames would end up in the new video.
    EXPECT_THROW(recorder.start(o, *sim), Error);
}

TEST(Recorder, AFailedWriteStopsWritingWithoutBlockingTheSteps) {
    test::TempDir dir("edn_recorder");
    auto sim = box();
    Recorder recorder;
    RecordOptions o;
    o.dir = dir.path / "gone";
    o.png = false;
    recorder.start(o, *sim);
    fs::remove_all(o.dir); // the folder vanishes under the recording
    // Far more steps than the queue holds: none may wait forever.
    for (int step = 0; step < 4 * static_cast<int>(Recorder::kMaxQueuedJobs); ++step)
        recorder.on_step(*sim);
    recorder.wait_idle();
    EXPECT_FALSE(recorder.error().empty());
    EXPECT_NE(recorder.status().find("recording failed"), std::string::npos) << recorder.status();
    recorder.stop();
    recorder.wait_idle();
    EXPECT_FALSE(recorder.busy());
}

} // namespace
} // namespace edn
