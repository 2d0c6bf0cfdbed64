#pragma once
/// The mp4 of a recording: a PNG frame sequence encoded by the `ffmpeg` program (Debian's, found
/// on the PATH) in a child process. The app links no video library; without ffmpeg the PNGs stay.

#include <filesystem>
#include <optional>
#include <string>

namespace edn {

/// The first executable regular file named `program` in the directories of the PATH (the only
/// environment variable the app reads, and only to find ffmpeg); nullopt when there is none.
std::optional<std::filesystem::path> find_on_path(const std::string& program);

/// One encoding job: `png_dir`/frame_000001.png ... frame_NNNNNN.png into `output`.
struct VideoJob {
    std::filesystem::path ffmpeg;  ///< the program (find_on_path("ffmpeg"))
    std::filesystem::path png_dir; ///< folder of frame_%06d.png, numbered from 1
    std::filesystem::path output;  ///< the .mp4 to write (replaced atomically when done)
    std::filesystem::path log;     ///< ffmpeg's stdout and stderr (removed after a success)
    double frames_per_second = 60; ///< playback rate
    int width = 0;                 ///< frame size: the first PNG's, rounded up to even
    int height = 0;                ///< (H.264 yuv420p needs even dimensions)
};

/// Runs ffmpeg on `job` and waits for it (call it off the UI thread): H.264, yuv420p, every frame
/// scaled to fit and padded to width x height (a window resized mid-recording still encodes).
/// Returns an empty string on success, else why it failed (one line, naming the log).
std::string encode_video(const VideoJob& job);

} // namespace edn
