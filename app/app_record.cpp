// The app's side of recording (app/recorder.hpp): the Record button, --record and the script's
// "record" start and stop a recording in the UI's turn; the steps hand their snapshots to the
// recorder where they run (app_sim.cpp); the frame after a recorded step adds its picture here.
#include "app.hpp"
#include "core/error.hpp"
#include "video_encoder.hpp"

#include <cstdio>
#include <ctime>
#include <iostream>
#include <utility>

namespace edn {
namespace {

/// "elastodyn-record-20261126-051500": the folder of a recording started without a name.
std::filesystem::path default_record_folder() {
    const std::time_t now = std::time(nullptr);
    char text[64];
    std::strftime(text, sizeof(text), "elastodyn-record-%Y%m%d-%H%M%S", std::localtime(&now));
    return text;
}

} // namespace

void App::init_recording() {
    gui_.record.ffmpeg = find_on_path("ffmpeg").has_value();
    // The command line's choices are the panel's.
    if (!options_.record) return;
    recording_pending_ = !options_.record->dir.empty();
    gui_.record.options = *options_.record;
    std::snprintf(gui_.record.dir.data(), gui_.record.dir.size(), "%s",
                  options_.record->dir.c_str());
}

RecordOptions App::record_options() const {
    RecordOptions options = gui_.record.options;
    options.dir = gui_.record.dir[0] != '\0' ? std::filesystem::path(gui_.record.dir.data())
                                             : default_record_folder();
    return options;
}

void App::toggle_recording() {
    if (gui_.record.active)
        post([this] { stop_recording(); });
    else
        post([this, options = record_options()] { start_recording(options); });
}

void App::start_pending_recording() {
    // Windowed, the scene loads on a worker: --record starts once its simulation exists.
    if (!recording_pending_ || !session_.sim()) return;
    recording_pending_ = false;
    start_recording(record_options());
}

void App::start_recording(const RecordOptions& options) {
    // In a turn: the simulation is ours to read.
    try {
        EDN_VERIFY(session_.sim(), ErrorCode::Usage, "record: no simulation to record");
        recorder_.start(options, session_.sim()->simulation());
        gui_.record.active = true;
        if (options_.headless)
            std::cerr << "elastodyn: recording to " << options.dir.string() << '\n';
    } catch (const Error& error) {
        if (options_.headless) throw;
        report_error(error.what());
    }
}

void App::stop_recording() {
    recorder_.stop();
    gui_.record.active = false;
}

void App::record_picture() {
    if (std::exchange(picture_due_, false)) recorder_.add_png(renderer_->read_pixels());
    recorder_.after_render();
    // A failed write ends the recording (the files written so far stay).
    if (gui_.record.active && !recorder_.error().empty()) {
        gui_.record.active = false; // reported once
        post([this] { stop_recording(); });
        report_error(recorder_.error());
    }
    gui_.record.status = recorder_.status();
}

void App::finish_recording() {
    if (gui_.record.active) stop_recording();
    recorder_.after_render(); // no more frames: a last picture will not come
    if (recorder_.busy() && options_.progress)
        std::cerr << "elastodyn: finishing the recording ...\n";
    recorder_.wait_idle();
    if (!recorder_.status().empty() && options_.headless)
        std::cerr << "elastodyn: " << recorder_.status() << '\n';
    EDN_VERIFY(!options_.headless || recorder_.error().empty(), ErrorCode::Io, recorder_.error());
}

} // namespace edn
