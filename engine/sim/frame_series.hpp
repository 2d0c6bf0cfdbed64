#pragma once
/// Animations out, written while a run goes: a ParaView time series (`VtuSeries`: one binary .vtu
/// per recorded frame plus a .pvd index) and a surface sequence for DCC tools (`SurfaceSeries`:
/// one OBJ or PLY of the deformed boundary per recorded frame). Used by `simulate --series /
/// --surface-series` and by the app's recorder. Every frame file is self-contained, so a cut or a
/// refinement mid-run (the vertex and cell counts change) needs nothing special: the next frame
/// simply has other counts.

#include "sim/frame_snapshot.hpp"
#include "sim/surface_tessellation.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace edn {

/// File format of the surface sequence.
enum class SurfaceFormat : std::uint8_t {
    Obj, ///< Wavefront OBJ (text, exact decimal coordinates)
    Ply, ///< binary little-endian PLY (double coordinates, int indices; compact)
};

/// "obj", "ply".
const char* surface_format_name(SurfaceFormat format);
/// Parses "obj" or "ply"; nullopt otherwise.
std::optional<SurfaceFormat> parse_surface_format(std::string_view name);

/// The directory a sequence of frame files goes to, and the files this run wrote there: unless
/// commit() is called, the destructor removes them, and the directory when this object created
/// it and it is empty then (a failed run leaves no sequence behind).
class SeriesDirectory {
public:
    /// Creates `dir` (and its parents) when missing. `what` names the output in messages (e.g.
    /// "simulate: option '--series'"). Throws edn::Error: Usage when `dir` exists and is not a
    /// directory, Io when it cannot be created or is not writable.
    SeriesDirectory(std::filesystem::path dir, std::string what);
    SeriesDirectory(const SeriesDirectory&) = delete;
    SeriesDirectory& operator=(const SeriesDirectory&) = delete;
    /// Removes what was written unless committed.
    ~SeriesDirectory();

    /// The directory.
    const std::filesystem::path& dir() const { return dir_; }
    /// Notes that `name` (in dir()) is written by this run (call before writing it, so a failed
    /// write is cleaned up too) and returns its path.
    std::filesystem::path add(const std::string& name);
    /// Keeps every file.
    void commit() { committed_ = true; }

private:
    std::filesystem::path dir_;
    bool created_dir_ = false;
    bool committed_ = false;
    std::vector<std::string> files_;
};

/// `DIR/frame_NNNNN.vtu` (binary appended encoding) for every `every`-th frame and
/// `DIR/series.pvd` listing them with their times. The .pvd is rewritten (atomically) after each
/// frame, so it is valid during the run.
class VtuSeries {
public:
    /// See SeriesDirectory for `dir` and `what`; also checks that series.pvd can be written.
    VtuSeries(std::filesystem::path dir, long long every,
              std::string what = "simulate: option '--series'");

    /// Whether frame `frame` is recorded (frame % every == 0).
    bool wants(long long frame) const { return frame % every_ == 0; }
    /// Records `snapshot` as frame `frame` at `time` [s] when wants(frame).
    void record(long long frame, double time, const FrameSnapshot& snapshot);
    /// record() of the current state of `sim` (a snapshot is taken only when wanted).
    void record(long long frame, double time, const Simulation& sim);
    /// Rewrites the final series.pvd and keeps every file.
    void commit();
    /// Frames written so far.
    std::size_t frames() const { return entries_.size(); }

    /// "frame_00042.vtu": the file name of frame `frame` (at least 5 digits).
    static std::string frame_file_name(long long frame);

private:
    SeriesDirectory dir_;
    long long every_ = 1;
    std::vector<PvdEntry> entries_;
};

/// `DIR/frame_NNNNN.obj` (or .ply) for every `every`-th frame: the deformed boundary surface, each
/// file complete with its own vertices and triangles. At p = 1 the boundary triangles over their
/// corner vertices; at p >= 2 each boundary face curved through its face nodes, cut into n x n
/// triangles (default_surface_subdivisions; surface_tessellation.hpp), the corner vertices first.
/// The tessellation is rebuilt only when the cells or the order change (a cut, a refinement, an
/// undo, an order change, another mesh).
class SurfaceSeries {
public:
    /// See SeriesDirectory for `dir` and `what`.
    SurfaceSeries(std::filesystem::path dir, long long every, SurfaceFormat format,
                  std::string what = "simulate: option '--surface-series'");

    /// Whether frame `frame` is recorded (frame % every == 0).
    bool wants(long long frame) const { return frame % every_ == 0; }
    /// Records `snapshot` as frame `frame` when wants(frame).
    void record(long long frame, const FrameSnapshot& snapshot);
    /// record() of the current state of `sim` (a snapshot is taken only when wanted).
    void record(long long frame, const Simulation& sim);
    /// Keeps every file.
    void commit() { dir_.commit(); }
    /// Frames written so far.
    std::size_t frames() const { return frames_; }

    /// "frame_00042.obj" / ".ply": the file name of frame `frame` (at least 5 digits).
    static std::string frame_file_name(long long frame, SurfaceFormat format);

private:
    SeriesDirectory dir_;
    long long every_ = 1;
    SurfaceFormat format_ = SurfaceFormat::Obj;
    std::size_t frames_ = 0;
    // The tessellated boundary of `cells_` over `num_vertices_` vertices at order `order_` (the
    // cache key).
    std::vector<Cell> cells_;
    Index num_vertices_ = -1;
    int order_ = 0;
    SurfaceTessellation tessellation_;
};

/// Writes `surface` as OBJ or PLY (atomically).
void write_surface(const std::filesystem::path& path, const SurfaceMesh& surface,
                   SurfaceFormat format);

} // namespace edn
