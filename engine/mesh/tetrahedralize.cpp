// TetGen runs in a forked child: a crash (Debian's TetGen 1.5 segfaults on self-intersecting
// input with -pq) or an exit() inside the library then becomes an edn::Error in the parent. The
// child streams its result through a pipe that the parent drains until EOF before reaping it, so
// a result larger than the pipe buffer cannot deadlock.

#include "mesh/tetrahedralize.hpp"

#include "core/error.hpp"
#include "mesh/reorder.hpp"
#include "mesh/shell_nesting.hpp"
#include "mesh/tetgen_bridge.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <poll.h>
#include <string>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <utility>
#include <vector>

namespace edn {
namespace {

constexpr std::uint32_t result_magic = 0x45444e54; // "EDNT"
/// Child exit status when it could not run TetGen or send the result (not a TetGen code).
constexpr int child_failure_status = 120;
/// Meshes that would need more tetrahedra than this are refused before TetGen runs for hours or
/// exhausts memory (TetGen needs a few hundred bytes per tet).
constexpr double max_tetrahedra = 2e7;

// ---- child side ---------------------------------------------------------------------------------

/// write() all of `size` bytes, retrying on EINTR and short writes.
bool write_all(int fd, const void* data, std::size_t size) {
    const char* bytes = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t n = ::write(fd, bytes, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        bytes += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

/// Writes a count followed by the raw elements of `values`.
template <class T> bool write_array(int fd, const std::vector<T>& values) {
    const std::uint64_t count = values.size();
    return write_all(fd, &count, sizeof count) &&
           write_all(fd, values.data(), values.size() * sizeof(T));
}

/// Serialises `result`: magic, termination code, positions, cells, intersecting triangles.
bool write_result(int fd, const TetgenResult& result) {
    const std::int32_t code = result.termination_code;
    return write_all(fd, &result_magic, sizeof result_magic) && write_all(fd, &code, sizeof code) &&
           write_array(fd, result.mesh.positions) && write_array(fd, result.mesh.cells) &&
           write_array(fd, result.intersecting_triangles);
}

/// Body of the child process; never returns.
[[noreturn]] void run_child(int write_fd, const SurfaceMesh& surface, const TetgenRequest& request,
                            pid_t parent) {
    // If the parent is killed (Ctrl-C, timeout), TetGen must not run on as an orphan.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(child_failure_status); // parent died before prctl
    // A crashing child must not leave core files in the user's working directory.
    struct rlimit no_core {};
    ::setrlimit(RLIMIT_CORE, &no_core);
    // TetGen prints with printf even with -Q on some paths ("Warning: Unknown switch"): keep it
    // off our stdout (which may carry JSON) unless the user asked for it, then send it to stderr.
    const int null_fd = ::open("/dev/null", O_WRONLY);
    if (request.verbose) {
        ::dup2(STDERR_FILENO, STDOUT_FILENO);
    } else if (null_fd >= 0) {
        ::dup2(null_fd, STDOUT_FILENO);
        ::dup2(null_fd, STDERR_FILENO);
    }
    // Crashes must reach the parent as signals, even where a sanitizer runtime installed its own
    // handlers (which would turn a segfault into exit status 1).
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, SIG_DFL);
    if (request.crash_child_for_tests) std::raise(SIGSEGV); // what a TetGen segfault looks like

    bool ok = false;
    try {
        const TetgenResult result = run_tetgen(surface, request);
        ok = write_result(write_fd, result);
    } catch (...) {
        ok = false;
    }
    std::fflush(stdout);
    // _exit: no atexit handlers or static destructors of the parent's copy run in the child.
    ::_exit(ok ? 0 : child_failure_status);
}

// ---- parent side --------------------------------------------------------------------------------

/// Reads `fd` until EOF, or until `time_limit_s` (<= 0: no limit) has passed; returns false
/// then (the data read so far is incomplete).
bool read_until_eof(int fd, double time_limit_s, std::vector<char>& data) {
    using Clock = std::chrono::steady_clock;
    const auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(time_limit_s > 0 ? time_limit_s : 0));
    std::size_t used = 0;
    data.resize(1 << 16);
    for (;;) {
        if (time_limit_s > 0) {
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
            if (left.count() <= 0) return false;
            pollfd ready{fd, POLLIN, 0};
            const int polled =
                ::poll(&ready, 1,
                       static_cast<int>(std::min<long long>(left.count() + 1, 24LL * 3600 * 1000)));
            if (polled < 0 && errno == EINTR) continue;
            EDN_VERIFY(polled >= 0, ErrorCode::Internal,
                       "waiting for TetGen's result failed: " << std::strerror(errno));
            if (polled == 0) continue; // the deadline check above decides
        }
        if (used == data.size()) data.resize(data.size() * 2);
        const ssize_t n = ::read(fd, data.data() + used, data.size() - used);
        if (n < 0 && errno == EINTR) continue;
        EDN_VERIFY(
            n >= 0, ErrorCode::Internal,
            "reading TetGen's result from the child process failed: " << std::strerror(errno));
        if (n == 0) break;
        used += static_cast<std::size_t>(n);
    }
    data.resize(used);
    return true;
}

/// Cursor over the child's bytes; every read is bounds-checked.
struct ResultReader {
    const std::vector<char>& data;
    std::size_t offset = 0;

    bool read_bytes(void* out, std::size_t size) {
        if (size > data.size() - offset) return false;
        if (size == 0) return true; // memcpy with a null pointer is undefined even for 0 bytes
        std::memcpy(out, data.data() + offset, size);
        offset += size;
        return true;
    }
    template <class T> bool read_array(std::vector<T>& values) {
        std::uint64_t count = 0;
        if (!read_bytes(&count, sizeof count)) return false;
        if (count > (data.size() - offset) / sizeof(T)) return false;
        values.resize(count);
        return read_bytes(values.data(), count * sizeof(T));
    }
};

/// Parses what write_result() wrote; false when truncated or malformed.
bool parse_result(const std::vector<char>& data, TetgenResult& result) {
    ResultReader reader{data};
    std::uint32_t magic = 0;
    std::int32_t code = 0;
    if (!reader.read_bytes(&magic, sizeof magic) || magic != result_magic) return false;
    if (!reader.read_bytes(&code, sizeof code)) return false;
    result.termination_code = code;
    return reader.read_array(result.mesh.positions) && reader.read_array(result.mesh.cells) &&
           reader.read_array(result.intersecting_triangles) && reader.offset == data.size();
}

/// Closes a file descriptor once.
struct FdGuard {
    int fd = -1;
    ~FdGuard() { close_now(); }
    void close_now() {
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
};

/// Waits for `pid`; returns its wait status (or -1 when it cannot be reaped).
int reap(pid_t pid) {
    int status = 0;
    for (;;) {
        const pid_t r = ::waitpid(pid, &status, 0);
        if (r == pid) return status;
        if (r < 0 && errno == EINTR) continue;
        return -1;
    }
}

/// Runs TetGen in a child process, killed after `time_limit_s` (<= 0: no limit). `what` says what
/// TetGen was doing ("meshing", "checking for self-intersections") for the messages.
TetgenResult run_isolated(const SurfaceMesh& surface, const TetgenRequest& request,
                          double time_limit_s, const std::string& source, const char* what) {
    int fds[2];
    EDN_VERIFY(::pipe2(fds, O_CLOEXEC) == 0, ErrorCode::Internal,
               source << ": cannot create a pipe for TetGen: " << std::strerror(errno));
    FdGuard read_end{fds[0]};
    FdGuard write_end{fds[1]};

    // Unflushed parent output would otherwise be duplicated by the child's verbose output.
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    EDN_VERIFY(pid >= 0, ErrorCode::OutOfMemory,
               source << ": cannot start the TetGen process: " << std::strerror(errno));
    if (pid == 0) {
        ::close(fds[0]);
        run_child(fds[1], surface, request, parent);
    }
    write_end.close_now(); // so that read() sees EOF when the child ends

    std::vector<char> data;
    bool finished = false;
    try {
        finished = read_until_eof(read_end.fd, time_limit_s, data);
    } catch (...) {
        ::kill(pid, SIGKILL); // never leave a running or zombie child behind
        reap(pid);
        throw;
    }
    read_end.close_now();
    if (!finished) {
        ::kill(pid, SIGKILL);
        reap(pid);
        EDN_THROW(ErrorCode::OutOfMemory,
                  source << ": TetGen did not finish within the time limit of " << time_limit_s
                         << " s while " << what
                         << " (try --quality 0, a larger --quality, a coarser --max-volume or a "
                            "larger --time-limit)");
    }
    const int status = reap(pid);

    EDN_VERIFY(status != -1, ErrorCode::Internal,
               source << ": lost track of the TetGen process: " << std::strerror(errno));
    if (WIFSIGNALED(status)) {
        const int signal_number = WTERMSIG(status);
        // SIGKILL is almost always the kernel's out-of-memory killer: a resource error.
        EDN_VERIFY(signal_number != SIGKILL, ErrorCode::OutOfMemory,
                   source << ": TetGen was killed (signal 9, out of memory?) while " << what);
        EDN_THROW(ErrorCode::MeshingFailed,
                  source << ": TetGen crashed (signal " << signal_number << ") while " << what);
    }
    const int exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    TetgenResult result;
    if (exit_status != 0 && exit_status != child_failure_status) {
        // A TetGen built without TETLIBRARY calls exit(code) instead of throwing it.
        result.termination_code = exit_status;
        return result;
    }
    EDN_VERIFY(exit_status == 0, ErrorCode::Internal,
               source << ": the TetGen process failed to return its result while " << what);
    EDN_VERIFY(parse_result(data, result), ErrorCode::Internal,
               source << ": malformed result from the TetGen process (" << data.size()
                      << " bytes) while " << what);
    return result;
}

/// One TetGen run, isolated or not as the options say; a meshing run adds at most
/// `max_steiner_points` points (<= 0: unbounded) and carves the cavities around `holes`.
TetgenResult run_pass(const SurfaceMesh& surface, const TetrahedralizeOptions& options, bool detect,
                      long long max_steiner_points, const std::string& source,
                      std::vector<Vec3> holes = {}) {
    TetgenRequest request;
    request.holes = std::move(holes);
    request.detect_intersections = detect;
    request.quality = options.quality;
    request.max_volume = options.max_volume;
    request.max_steiner_points = detect ? 0 : max_steiner_points;
    request.verbose = options.verbose;
    request.crash_child_for_tests = options.crash_child_for_tests;
    const char* what = detect ? "checking for self-intersections" : "meshing";
    TetgenResult result = options.isolate
                              ? run_isolated(surface, request, options.time_limit_s, source, what)
                              : run_tetgen(surface, request);
    const int code = result.termination_code;
    if (code != 0) {
        EDN_VERIFY(code != 1, ErrorCode::OutOfMemory,
                   source << ": TetGen ran out of memory while " << what);
        EDN_VERIFY(code != 3, ErrorCode::SelfIntersecting,
                   source << ": self-intersecting surface (TetGen stopped while " << what << ")");
        EDN_THROW(ErrorCode::MeshingFailed, source << ": TetGen failed while " << what << ": "
                                                   << tetgen_termination_reason(code) << " (code "
                                                   << code << ")");
    }
    return result;
}

/// Volume enclosed by a closed surface oriented away from its material (divergence theorem; cavity
/// shells oriented inward subtract theirs).
double enclosed_volume(const SurfaceMesh& surface) {
    double volume = 0;
    for (const Tri& t : surface.triangles) {
        const Vec3& a = surface.positions[t[0]];
        const Vec3& b = surface.positions[t[1]];
        const Vec3& c = surface.positions[t[2]];
        volume += a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                  a[2] * (b[0] * c[1] - b[1] * c[0]);
    }
    return std::abs(volume) / 6.0;
}

/// Checks what TetGen would otherwise crash on or misread.
void check_input(const SurfaceMesh& surface, const TetrahedralizeOptions& options,
                 const std::string& source) {
    EDN_VERIFY(std::isfinite(options.quality) && (options.quality <= 0 || options.quality >= 1.0),
               ErrorCode::Usage,
               source << ": quality (radius-edge ratio) must be >= 1 or <= 0 (off), got "
                      << options.quality);
    EDN_VERIFY(std::isfinite(options.max_volume), ErrorCode::Usage,
               source << ": max volume must be finite, got " << options.max_volume);
    EDN_VERIFY(!surface.triangles.empty(), ErrorCode::EmptyMesh,
               source << ": the surface has no triangles");
    const auto num_vertices = static_cast<Index>(surface.positions.size());
    for (std::size_t i = 0; i < surface.positions.size(); ++i)
        for (double x : surface.positions[i])
            EDN_VERIFY(std::isfinite(x), ErrorCode::NonFinite,
                       source << ": vertex " << i + 1 << " (1-based) has a non-finite coordinate");
    for (std::size_t t = 0; t < surface.triangles.size(); ++t)
        for (Index v : surface.triangles[t])
            EDN_VERIFY(v >= 0 && v < num_vertices, ErrorCode::IndexOutOfRange,
                       source << ": triangle " << t + 1 << " references vertex " << v + 1LL
                              << " of " << num_vertices << " (1-based)");
}

/// Splits every cell above `max_volume` at its centroid into four cells of a quarter of its
/// volume, until none is above. The split keeps the cell's faces, so the mesh stays conforming;
/// it is the guarantee behind -a for the few tets TetGen's refinement leaves above the bound.
void enforce_max_volume(TetMesh& mesh, double max_volume) {
    if (max_volume <= 0) return;
    for (std::size_t c = 0; c < mesh.cells.size(); ++c) {
        for (;;) {
            const Cell cell = mesh.cells[c];
            const Vec3& a = mesh.positions[cell[0]];
            const Vec3& b = mesh.positions[cell[1]];
            const Vec3& d = mesh.positions[cell[2]];
            const Vec3& e = mesh.positions[cell[3]];
            if (std::abs(signed_volume(a, b, d, e)) <= max_volume) break;
            Vec3 centroid{};
            for (int k = 0; k < 3; ++k) centroid[k] = (a[k] + b[k] + d[k] + e[k]) / 4.0;
            const Index m = mesh.num_vertices();
            mesh.positions.push_back(centroid);
            // Replacing corner i by the centroid keeps each sub-cell's orientation.
            mesh.cells[c] = {m, cell[1], cell[2], cell[3]};
            mesh.cells.push_back({cell[0], m, cell[2], cell[3]});
            mesh.cells.push_back({cell[0], cell[1], m, cell[3]});
            mesh.cells.push_back({cell[0], cell[1], cell[2], m});
            // The three appended cells are checked when the loop reaches them.
        }
    }
}

} // namespace

IntersectionReport find_self_intersections(const SurfaceMesh& surface,
                                           const TetrahedralizeOptions& options) {
    const std::string source = "surface";
    check_input(surface, options, source);
    IntersectionReport report;
    report.triangles =
        run_pass(surface, options, /*detect=*/true, 0, source).intersecting_triangles;
    return report;
}

TetMesh tetrahedralize(const SurfaceMesh& surface, const TetrahedralizeOptions& options,
                       const std::string& source) {
    check_input(surface, options, source);
    double needed = 0;
    if (options.max_volume > 0) {
        needed = enclosed_volume(surface) / options.max_volume;
        EDN_VERIFY(needed <= max_tetrahedra, ErrorCode::OutOfMemory,
                   source << ": max volume " << options.max_volume << " needs at least " << needed
                          << " tetrahedra (limit " << max_tetrahedra << ")");
    }
    // Quality refinement of features much thinner than the body (a 1 x 1 x 1e-4 plate) adds
    // points without end: bound what TetGen may add. -a needs about one point per few tets of
    // the requested size on top of that, so those are granted in full (needed overestimates them).
    const long long steiner_budget =
        options.max_steiner_points > 0
            ? options.max_steiner_points + static_cast<long long>(std::ceil(needed))
            : 0;

    // Detect first: the meshing pass segfaults on self-intersecting input.
    const TetgenResult check = run_pass(surface, options, /*detect=*/true, 0, source);
    EDN_VERIFY(check.intersecting_triangles.empty(), ErrorCode::SelfIntersecting,
               source << ": self-intersecting surface: " << check.intersecting_triangles.size()
                      << " intersecting triangles");

    // Shells nested in an odd number of others bound cavities: TetGen meshes everything inside
    // the outermost shells unless a hole point in each cavity tells it otherwise.
    std::vector<Vec3> holes = cavity_points(surface, find_shell_nesting(surface), source);
    TetgenResult meshed =
        run_pass(surface, options, /*detect=*/false, steiner_budget, source, std::move(holes));
    EDN_VERIFY(!meshed.mesh.cells.empty(), ErrorCode::MeshingFailed,
               source << ": TetGen produced no tetrahedra (surface open or degenerate?)");
    // TetGen ends refinement with a valid but unfinished mesh when the budget runs out.
    const auto added = static_cast<long long>(meshed.mesh.positions.size()) -
                       static_cast<long long>(surface.positions.size());
    EDN_VERIFY(steiner_budget <= 0 || added < steiner_budget, ErrorCode::OutOfMemory,
               source << ": meshing needs more than " << steiner_budget
                      << " added points (features much thinner than the body?); try --quality 0,"
                         " a larger --quality or a coarser --max-volume");
    TetMesh mesh = std::move(meshed.mesh);
    enforce_max_volume(mesh, options.max_volume);
    validate_tet_mesh(mesh, source);
    // TetGen's numbering has little locality (mean |row - col| of the p = 1 pattern ~6300 on a
    // 110K-tet bunny, ~420 after): renumber along a Morton curve, which speeds up summation and
    // SpMV (bench/README.md, "Node order"), with rows of equal length together in each bin
    // (MortonBalanced). The mesh is ours, so no external numbering is lost.
    return reorder_mesh(mesh, Reordering::MortonBalanced);
}

} // namespace edn
