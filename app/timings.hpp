#pragma once
/// Per-frame, per-stage wall-clock timings: a ring buffer for the GUI and a CSV writer.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace edn {

/// Stages of one frame, in the order the frame loop runs them.
/// Surface: positions, normals and colours of the boundary gathered and uploaded (the interop
/// stage; glBufferSubData with the CPU backend).
enum class Stage : std::uint8_t { Poll, NewFrame, Ui, Simulate, Surface, Render, Swap, Count };

/// Parts of the Simulate stage as the engine reports them (StepResult::times).
enum class SimStage : std::uint8_t { Element, Summation, Pcg, LineSearch, Count };

/// Number of simulation sub-stages.
inline constexpr std::size_t kSimStageCount = static_cast<std::size_t>(SimStage::Count);

/// Stable lower-case name of a simulation sub-stage ("element", "summation", "pcg",
/// "line_search").
const char* sim_stage_name(SimStage stage);

/// Number of stages.
inline constexpr std::size_t kStageCount = static_cast<std::size_t>(Stage::Count);

/// Stable lower-case name of a stage, used as CSV column prefix and in the GUI.
const char* stage_name(Stage stage);

/// Timings of one frame in milliseconds.
struct FrameTimings {
    std::int64_t frame = 0;                      ///< frame number, from 0
    std::array<double, kStageCount> stage_ms{};  ///< time spent in each stage
    double total_ms = 0.0;                       ///< begin_frame to end_frame
    std::array<double, kSimStageCount> sim_ms{}; ///< engine-reported parts of Simulate
    int newton_iterations = 0;                   ///< of this frame's step (0: no step)
    int cg_iterations = 0;                       ///< of this frame's step
    double repattern_ms = 0.0; ///< building the Simulation of a cut or undo this frame (0: none)
};

/// Records the last `capacity` frames. Usage per frame: begin_frame, lap(stage) after each
/// stage (the time since the previous lap goes to that stage), end_frame.
class TimingRecorder {
public:
    /// Keeps the most recent `capacity` frames (at least 1).
    explicit TimingRecorder(std::size_t capacity);

    /// Starts frame `frame`.
    void begin_frame(std::int64_t frame);
    /// Charges the time since the previous lap (or begin_frame) to `stage`.
    void lap(Stage stage);
    /// Records the engine's stage times and iteration counts of this frame's step.
    void set_simulation(const std::array<double, kSimStageCount>& sim_ms, int newton_iterations,
                        int cg_iterations);
    /// Adds the time spent re-patterning (building a new Simulation after a cut or an undo) in
    /// this frame; it lies inside the stage that did it.
    void add_repattern(double ms) { current_.repattern_ms += ms; }
    /// Closes the frame and stores it, dropping the oldest when full.
    void end_frame();

    /// Stored frames, oldest first.
    std::vector<FrameTimings> frames() const;
    /// The last `count` stored frames (fewer when fewer are stored), oldest first.
    std::vector<FrameTimings> recent(std::size_t count) const;
    /// Mean of `stage` (or of the total when stage == Stage::Count) over the last `count`
    /// stored frames; 0 when none are stored.
    double mean_ms(Stage stage, std::size_t count) const;
    /// Number of stored frames.
    std::size_t size() const { return size_; }

    /// Writes "frame,poll_ms,...,swap_ms,total_ms,element_ms,...,line_search_ms,
    /// newton_iterations,cg_iterations,repattern_ms" and one row per stored frame, atomically.
    /// Throws edn::Error (Io) naming the file.
    void write_csv(const std::filesystem::path& path) const;
    /// The same CSV for the given frames.
    static void write_csv(const std::filesystem::path& path, const std::vector<FrameTimings>& rows);
    /// The most recent frame, or nullptr when none is stored.
    const FrameTimings* last() const;

private:
    using Clock = std::chrono::steady_clock;
    std::vector<FrameTimings> ring_;
    std::size_t next_ = 0; // slot the next frame goes to
    std::size_t size_ = 0;
    FrameTimings current_;
    Clock::time_point frame_start_;
    Clock::time_point last_lap_;
};

} // namespace edn
