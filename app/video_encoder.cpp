#include "video_encoder.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <spawn.h>
#include <string_view>
#include <sys/stat.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace edn {

namespace fs = std::filesystem;

std::optional<fs::path> find_on_path(const std::string& program) {
    const char* path = std::getenv("PATH");
    if (path == nullptr) return std::nullopt;
    std::string_view rest = path;
    while (true) {
        const std::size_t colon = rest.find(':');
        // An empty entry is the working directory (POSIX).
        const std::string_view entry = rest.substr(0, colon);
        const fs::path candidate = fs::path(entry.empty() ? "." : std::string(entry)) / program;
        struct stat status {};
        if (::stat(candidate.c_str(), &status) == 0 && S_ISREG(status.st_mode) &&
            ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
        if (colon == std::string_view::npos) return std::nullopt;
        rest.remove_prefix(colon + 1);
    }
}

std::string encode_video(const VideoJob& job) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.6g", job.frames_per_second);
    const std::string w = std::to_string(job.width), h = std::to_string(job.height);
    const std::string filter = "scale=" + w + ":" + h +
                               ":force_original_aspect_ratio=decrease,pad=" + w + ":" + h +
                               ":(ow-iw)/2:(oh-ih)/2";
    fs::path temporary = job.output;
    temporary += ".part";
    const std::vector<std::string> arguments = {job.ffmpeg.string(),
                                                "-nostdin",
                                                "-y",
                                                "-loglevel",
                                                "error",
                                                "-framerate",
                                                rate,
                                                "-start_number",
                                                "1",
                                                "-i",
                                                (job.png_dir / "frame_%06d.png").string(),
                                                "-vf",
                                                filter,
                                                "-c:v",
                                                "libx264",
                                                "-pix_fmt",
                                                "yuv420p",
                                                "-movflags",
                                                "+faststart",
                                                "-f",
                                                "mp4",
                                                temporary.string()};
    std::vector<char*> argv;
    for (const std::string& a : arguments) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, job.log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    pid_t pid = 0;
    const int spawned =
        posix_spawn(&pid, job.ffmpeg.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) return "cannot start " + job.ffmpeg.string() + ": " + std::strerror(spawned);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return std::string("waiting for ffmpeg: ") + std::strerror(errno);
    }
    std::error_code ec;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fs::remove(temporary, ec);
        return "ffmpeg failed (" +
               (WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                  : std::string("killed")) +
               "), see " + job.log.string();
    }
    fs::rename(temporary, job.output, ec);
    if (ec) return job.output.string() + ": cannot rename the encoded file: " + ec.message();
    fs::remove(job.log, ec);
    return {};
}

} // namespace edn
