#pragma once
/// The app's Record button (and --record, and the script's "record"): while recording, every
/// K-th completed simulation step is written as a ParaView series frame (DIR/frame_NNNNN.vtu +
/// DIR/series.pvd), a surface frame (DIR/surface/frame_NNNNN.obj or .ply) and, optionally, a PNG
/// of the rendered view (DIR/png/frame_000001.png, numbered 1, 2, ... for ffmpeg); on stop the
/// PNGs become DIR/recording.mp4 when ffmpeg is on the PATH. Frame k is the state k steps after
/// the recording started (with every K: frames K, 2K, ...; the PNGs are numbered 1, 2, ...).
///
/// Threads: start(), stop() and take_png_request() run in the UI's turn (the simulation thread is
/// parked), on_step() runs where steps run (the simulation thread, or the turn in lockstep mode),
/// add_png() on the UI (GL) thread after the turn. Only snapshots and pixel copies are taken on
/// those threads; every file is written, and ffmpeg waited for, on the recorder's own writer
/// thread. A slow disk holds up the simulation thread (at most kMaxQueuedJobs snapshots wait),
/// never the UI.

#include "png_writer.hpp"
#include "sim/frame_series.hpp"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace edn {

class Simulation;

/// What a recording writes.
struct RecordOptions {
    std::filesystem::path dir; ///< output folder (created with its parents)
    int every = 1;             ///< record every K-th step (K >= 1)
    bool vtu = true;           ///< ParaView series: DIR/frame_NNNNN.vtu + DIR/series.pvd
    bool surface = true;       ///< surface sequence: DIR/surface/frame_NNNNN.obj|ply
    SurfaceFormat surface_format = SurfaceFormat::Obj; ///< of the surface sequence
    bool png = false;   ///< PNG frames of the rendered view (no panels): DIR/png/frame_NNNNNN.png
    bool video = false; ///< on stop, DIR/recording.mp4 from the PNGs (needs png and ffmpeg)
};

/// Every output on (.vtu, OBJ surface, PNG, mp4): the Record button's and --record's defaults.
RecordOptions default_record_options();

/// Parses --record-outputs: a comma-separated subset of vtu, obj, ply, png, mp4 (mp4 implies
/// png) into `options`. Throws edn::Error(Usage) naming the unknown item.
void parse_record_outputs(const std::string& list, RecordOptions& options);

/// Writes the recorded frames on its own thread (see the file comment).
class Recorder {
public:
    /// Jobs (snapshots, images) waiting for the writer before on_step() waits for it.
    static constexpr std::size_t kMaxQueuedJobs = 6;

    /// Starts the writer thread (idle until a recording starts).
    Recorder();
    /// Finishes what was queued (and waits for ffmpeg) before it goes.
    ~Recorder();
    Recorder(const Recorder&) = delete;
    Recorder& operator=(const Recorder&) = delete;

    /// Starts a recording of `sim`: frame k is its state k steps later (time k dt).
    /// Throws edn::Error (Usage: no output chosen, a recording still being finished; Io: the
    /// folder cannot be made).
    void start(const RecordOptions& options, const Simulation& sim);
    /// Ends the recording: the writer commits the series and, with video, runs ffmpeg. Nothing
    /// when not recording.
    void stop();
    /// A recording is running.
    bool active() const { return active_; }
    /// A recording with PNG frames is running: every recorded step must be drawn.
    bool records_png() const { return active_ && options_.png; }
    /// After a completed step of the recorded simulation: every K-th is queued for writing.
    void on_step(const Simulation& sim);
    /// In the turn: whether the state now being uploaded should be captured as a PNG (once).
    bool take_png_request() { return png_request_.exchange(false); }
    /// A PNG frame of the view (the image of the state take_png_request() asked for).
    void add_png(Image image);
    /// After each rendered frame (UI thread): finishes a stopped recording whose last picture
    /// was due this frame (once the picture was added, or when none came).
    void after_render();

    /// One line for the GUI: what is being written, how far, the encoder's state or the error.
    std::string status() const;
    /// The writer failed (the message), else empty; the recording stopped at the failure.
    std::string error() const;
    /// The writer has work queued or running (including ffmpeg).
    bool busy() const;
    /// Blocks until the writer is idle.
    void wait_idle();

private:
    using Job = std::function<void()>;
    /// A job of the writer thread; after a failure only those marked even_after_failure run.
    struct QueuedJob {
        Job job;
        bool even_after_failure = false;
    };
    void push(Job job, bool even_after_failure = false);
    void wait_for_room();
    void run();
    void set_status(std::string status);
    void fail(const std::string& message);
    void finish(); // on the writer thread

    // Owned by the UI / stepping threads (never both at once: the turn protocol).
    bool active_ = false;
    RecordOptions options_;
    double seconds_per_step_ = 0;
    long long step_ = 0;       // steps since start
    long long png_frames_ = 0; // PNGs handed to the writer
    std::atomic<bool> png_request_{false};
    bool finish_after_png_ = false; // stopped; the last picture is still to come

    // Owned by the writer thread between start and finish.
    std::unique_ptr<VtuSeries> vtu_;
    std::unique_ptr<SurfaceSeries> surface_;
    long long written_frames_ = 0;
    long long written_pngs_ = 0;
    int png_width_ = 0, png_height_ = 0;

    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<QueuedJob> jobs_;
    bool running_job_ = false;
    bool failed_ = false;
    bool quit_ = false;
    std::string status_;
    std::string error_;
    std::thread thread_;
};

} // namespace edn
