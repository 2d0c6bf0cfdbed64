#include "timings.hpp"

#include "core/atomic_file.hpp"

#include <algorithm>
#include <ostream>

namespace edn {
namespace {
double milliseconds(std::chrono::steady_clock::duration duration) {
    return std::chrono::duration<double, std::milli>(duration).count();
}
} // namespace

const char* stage_name(Stage stage) {
    switch (stage) {
    case Stage::Poll:
        return "poll";
    case Stage::NewFrame:
        return "new_frame";
    case Stage::Ui:
        return "ui";
    case Stage::Simulate:
        return "simulate";
    case Stage::Surface:
        return "surface";
    case Stage::Render:
        return "render";
    case Stage::Swap:
        return "swap";
    case Stage::Count:
        break;
    }
    return "total";
}

const char* sim_stage_name(SimStage stage) {
    switch (stage) {
    case SimStage::Element:
        return "element";
    case SimStage::Summation:
        return "summation";
    case SimStage::Pcg:
        return "pcg";
    case SimStage::LineSearch:
        return "line_search";
    case SimStage::Count:
        break;
    }
    return "?";
}

TimingRecorder::TimingRecorder(std::size_t capacity) : ring_(std::max<std::size_t>(capacity, 1)) {}

void TimingRecorder::begin_frame(std::int64_t frame) {
    current_ = FrameTimings{};
    current_.frame = frame;
    frame_start_ = Clock::now();
    last_lap_ = frame_start_;
}

void TimingRecorder::lap(Stage stage) {
    const Clock::time_point now = Clock::now();
    current_.stage_ms[static_cast<std::size_t>(stage)] += milliseconds(now - last_lap_);
    last_lap_ = now;
}

void TimingRecorder::set_simulation(const std::array<double, kSimStageCount>& sim_ms,
                                    int newton_iterations, int cg_iterations) {
    current_.sim_ms = sim_ms;
    current_.newton_iterations = newton_iterations;
    current_.cg_iterations = cg_iterations;
}

const FrameTimings* TimingRecorder::last() const {
    if (size_ == 0) return nullptr;
    return &ring_[(next_ + ring_.size() - 1) % ring_.size()];
}

void TimingRecorder::end_frame() {
    current_.total_ms = milliseconds(Clock::now() - frame_start_);
    ring_[next_] = current_;
    next_ = (next_ + 1) % ring_.size();
    size_ = std::min(size_ + 1, ring_.size());
}

std::vector<FrameTimings> TimingRecorder::frames() const {
    std::vector<FrameTimings> result;
    result.reserve(size_);
    const std::size_t first = (next_ + ring_.size() - size_) % ring_.size();
    for (std::size_t i = 0; i < size_; ++i) result.push_back(ring_[(first + i) % ring_.size()]);
    return result;
}

std::vector<FrameTimings> TimingRecorder::recent(std::size_t count) const {
    count = std::min(count, size_);
    std::vector<FrameTimings> result;
    result.reserve(count);
    const std::size_t first = (next_ + ring_.size() - count) % ring_.size();
    for (std::size_t i = 0; i < count; ++i) result.push_back(ring_[(first + i) % ring_.size()]);
    return result;
}

double TimingRecorder::mean_ms(Stage stage, std::size_t count) const {
    count = std::min(count, size_);
    if (count == 0) return 0.0;
    double sum = 0.0;
    for (std::size_t i = 1; i <= count; ++i) {
        const FrameTimings& frame = ring_[(next_ + ring_.size() - i) % ring_.size()];
        sum += stage == Stage::Count ? frame.total_ms
                                     : frame.stage_ms[static_cast<std::size_t>(stage)];
    }
    return sum / static_cast<double>(count);
}

void TimingRecorder::write_csv(const std::filesystem::path& path) const {
    write_csv(path, frames());
}

void TimingRecorder::write_csv(const std::filesystem::path& path,
                               const std::vector<FrameTimings>& rows) {
    write_file_atomically(path, [&](std::ostream& out) {
        out << "frame";
        for (std::size_t s = 0; s < kStageCount; ++s) {
            out << ',' << stage_name(static_cast<Stage>(s)) << "_ms";
        }
        out << ",total_ms";
        for (std::size_t s = 0; s < kSimStageCount; ++s) {
            out << ',' << sim_stage_name(static_cast<SimStage>(s)) << "_ms";
        }
        out << ",newton_iterations,cg_iterations,repattern_ms\n";
        for (const FrameTimings& row : rows) {
            out << row.frame;
            for (double ms : row.stage_ms) out << ',' << ms;
            out << ',' << row.total_ms;
            for (double ms : row.sim_ms) out << ',' << ms;
            out << ',' << row.newton_iterations << ',' << row.cg_iterations << ','
                << row.repattern_ms << '\n';
        }
    });
}

} // namespace edn
