#include "recorder.hpp"

#include "core/error.hpp"
#include "sim/simulation.hpp"
#include "video_encoder.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <sstream>
#include <system_error>
#include <utility>

namespace edn {

namespace fs = std::filesystem;

RecordOptions default_record_options() {
    RecordOptions options;
    options.png = options.video = true;
    return options;
}

void parse_record_outputs(const std::string& list, RecordOptions& options) {
    options.vtu = options.surface = options.png = options.video = false;
    std::istringstream items(list);
    for (std::string item; std::getline(items, item, ',');) {
        if (item == "vtu") {
            options.vtu = true;
        } else if (item == "obj" || item == "ply") {
            options.surface = true;
            options.surface_format = *parse_surface_format(item);
        } else if (item == "png") {
            options.png = true;
        } else if (item == "mp4") {
            options.png = options.video = true;
        } else {
            EDN_THROW(ErrorCode::Usage, "--record-outputs: unknown output '"
                                            << item << "' (expected vtu, obj, ply, png, mp4)");
        }
    }
    EDN_VERIFY(options.vtu || options.surface || options.png, ErrorCode::Usage,
               "--record-outputs: expected at least one of vtu, obj, ply, png, mp4");
}

Recorder::Recorder() : thread_([this] { run(); }) {}

Recorder::~Recorder() {
    stop();
    after_render(); // no picture will come any more
    {
        const std::lock_guard lock(mutex_);
        quit_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void Recorder::start(const RecordOptions& options, const Simulation& sim) {
    EDN_VERIFY(!active_, ErrorCode::Usage, "record: already recording");
    EDN_VERIFY(options.vtu || options.surface || options.png, ErrorCode::Usage,
               "record: nothing to record (choose .vtu, surface or PNG frames)");
    EDN_VERIFY(!busy() && !finish_after_png_, ErrorCode::Usage,
               "record: the previous recording is still being written (or encoded)");
    EDN_VERIFY(options.every >= 1, ErrorCode::Usage, "record: every must be >= 1");
    EDN_VERIFY(!options.dir.empty(), ErrorCode::Usage, "record: no output folder");
    // ffmpeg reads frame_000001.png, 2, ... until one is missing: older frames beyond this
    // recording's would end up in its video.
    EDN_VERIFY(
        !options.png || !fs::exists(options.dir / "png" / "frame_000001.png"), ErrorCode::Usage,
        (options.dir / "png").string() << " already holds PNG frames; record into a new folder");
    // The folders first (on this thread, so that a bad one is reported at once); the writer
    // thread is idle, so it may own the series from here on.
    std::unique_ptr<VtuSeries> vtu;
    std::unique_ptr<SurfaceSeries> surface;
    if (options.vtu) vtu = std::make_unique<VtuSeries>(options.dir, 1, "record");
    if (options.surface)
        surface = std::make_unique<SurfaceSeries>(options.dir / "surface", 1,
                                                  options.surface_format, "record");
    if (options.png) {
        const fs::path png = options.dir / "png";
        std::error_code ec;
        fs::create_directories(png, ec);
        EDN_VERIFY(fs::is_directory(png), ErrorCode::Io,
                   png.string() << ": cannot create the PNG folder"
                                << (ec ? ": " + ec.message() : std::string()));
    }
    // Committed right away: a recording keeps what it wrote whatever happens later.
    if (vtu) vtu->commit();
    if (surface) surface->commit();
    {
        const std::lock_guard lock(mutex_);
        vtu_ = std::move(vtu);
        surface_ = std::move(surface);
        written_frames_ = written_pngs_ = 0;
        png_width_ = png_height_ = 0;
        failed_ = false;
        error_.clear();
        status_.clear();
    }
    options_ = options;
    seconds_per_step_ = sim.settings().dt;
    step_ = 0;
    png_frames_ = 0;
    active_ = true;
}

void Recorder::on_step(const Simulation& sim) {
    if (!active_) return;
    // Frame k: the state k steps after the start (in lockstep runs the turn that starts the
    // recording also steps, so the state at the start has no picture of its own).
    const long long frame = ++step_;
    if (frame % options_.every != 0) return;
    wait_for_room();
    if (options_.vtu || options_.surface) {
        // A copy for the writer thread; the simulation goes on meanwhile.
        auto snapshot = std::make_shared<const FrameSnapshot>(take_snapshot(sim, options_.vtu));
        const double time = static_cast<double>(frame) * seconds_per_step_;
        push([this, snapshot, frame, time] {
            if (vtu_) vtu_->record(frame, time, *snapshot);
            if (surface_) surface_->record(frame, *snapshot);
            const std::lock_guard lock(mutex_);
            ++written_frames_;
        });
    }
    if (options_.png) png_request_ = true;
}

void Recorder::add_png(Image image) {
    if ((!active_ && !finish_after_png_) || !options_.png) return;
    const long long index = ++png_frames_;
    char name[32];
    std::snprintf(name, sizeof name, "frame_%06lld.png", index);
    const fs::path path = options_.dir / "png" / name;
    auto pixels = std::make_shared<const Image>(std::move(image));
    push([this, path, pixels] {
        write_image(path, *pixels);
        const std::lock_guard lock(mutex_);
        if (written_pngs_++ == 0) {
            png_width_ = pixels->width;
            png_height_ = pixels->height;
        }
    });
}

void Recorder::after_render() {
    if (std::exchange(finish_after_png_, false)) push([this] { finish(); }, true);
}

void Recorder::stop() {
    if (!active_) return;
    active_ = false;
    // The step completed before the stop still gets its picture (the frame about to be drawn).
    if (png_request_)
        finish_after_png_ = true;
    else
        push([this] { finish(); }, true);
}

void Recorder::finish() {
    std::string summary;
    {
        const std::lock_guard lock(mutex_);
        std::ostringstream text;
        text << "recorded " << written_frames_ << " frames";
        if (options_.png) text << ", " << written_pngs_ << " PNGs";
        text << " to " << options_.dir.string();
        summary = text.str();
    }
    try {
        // The final series.pvd (it is rewritten after every frame already).
        if (vtu_) vtu_->commit();
    } catch (const std::exception& e) {
        fail(e.what());
    }
    vtu_.reset();
    surface_.reset();
    long long pngs = 0;
    int width = 0, height = 0;
    {
        const std::lock_guard lock(mutex_);
        pngs = written_pngs_;
        width = png_width_;
        height = png_height_;
        if (failed_) return; // the status names the failure
    }
    if (!options_.video || pngs == 0) {
        set_status(summary);
        return;
    }
    const std::optional<fs::path> ffmpeg = find_on_path("ffmpeg");
    if (!ffmpeg) {
        set_status(summary + "; ffmpeg is not on the PATH: no mp4, the PNG frames are kept");
        return;
    }
    VideoJob job;
    job.ffmpeg = *ffmpeg;
    job.png_dir = options_.dir / "png";
    job.output = options_.dir / "recording.mp4";
    job.log = options_.dir / "ffmpeg.log";
    job.frames_per_second =
        std::clamp(1.0 / (seconds_per_step_ * static_cast<double>(options_.every)), 1.0, 240.0);
    job.width = (width + 1) / 2 * 2;
    job.height = (height + 1) / 2 * 2;
    set_status(summary + "; encoding recording.mp4 with ffmpeg ...");
    const std::string failure = encode_video(job);
    if (failure.empty())
        set_status(summary + "; wrote " + job.output.string());
    else
        fail(failure + " (the PNG frames are kept)");
}

void Recorder::push(Job job, bool even_after_failure) {
    {
        const std::lock_guard lock(mutex_);
        jobs_.push_back({std::move(job), even_after_failure});
    }
    changed_.notify_all();
}

void Recorder::wait_for_room() {
    // Frames and PNGs are large (a snapshot of the mesh, an uncompressed image): the stepping
    // thread waits here, so a slow disk slows the simulation instead of filling the memory.
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return jobs_.size() < kMaxQueuedJobs || quit_; });
}

void Recorder::run() {
    std::unique_lock lock(mutex_);
    while (true) {
        changed_.wait(lock, [this] { return quit_ || !jobs_.empty(); });
        if (jobs_.empty()) return; // quit, with nothing left to write
        QueuedJob next = std::move(jobs_.front());
        jobs_.pop_front();
        running_job_ = true;
        // After a failure only the finishing job runs (it keeps what was written).
        const bool skip = failed_ && !next.even_after_failure;
        lock.unlock();
        try {
            if (!skip) next.job();
        } catch (const std::exception& e) {
            fail(e.what());
        }
        lock.lock();
        running_job_ = false;
        changed_.notify_all();
    }
}

void Recorder::set_status(std::string status) {
    const std::lock_guard lock(mutex_);
    status_ = std::move(status);
}

void Recorder::fail(const std::string& message) {
    const std::lock_guard lock(mutex_);
    failed_ = true;
    error_ = message;
    status_ = "recording failed: " + message;
}

std::string Recorder::status() const {
    const std::lock_guard lock(mutex_);
    if (!active_ || failed_) return status_;
    std::ostringstream text;
    text << "recording to " << options_.dir.string() << ": " << written_frames_ << " frames";
    if (options_.png) text << ", " << written_pngs_ << " PNGs";
    if (!jobs_.empty()) text << " (" << jobs_.size() << " queued)";
    return text.str();
}

std::string Recorder::error() const {
    const std::lock_guard lock(mutex_);
    return error_;
}

bool Recorder::busy() const {
    const std::lock_guard lock(mutex_);
    return running_job_ || !jobs_.empty();
}

void Recorder::wait_idle() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return !running_job_ && jobs_.empty(); });
}

} // namespace edn
