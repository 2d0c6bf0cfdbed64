#include "sim/frame_series.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "mesh/obj_io.hpp"
#include "mesh/ply_io.hpp"
#include "sim/simulation.hpp"

#include <cstdio>
#include <system_error>

namespace edn {

namespace fs = std::filesystem;

const char* surface_format_name(SurfaceFormat format) {
    return format == SurfaceFormat::Ply ? "ply" : "obj";
}

std::optional<SurfaceFormat> parse_surface_format(std::string_view name) {
    if (name == "obj") return SurfaceFormat::Obj;
    if (name == "ply") return SurfaceFormat::Ply;
    return std::nullopt;
}

void write_surface(const fs::path& path, const SurfaceMesh& surface, SurfaceFormat format) {
    if (format == SurfaceFormat::Ply)
        write_ply_surface(path, surface);
    else
        write_obj_surface(path, surface);
}

SeriesDirectory::SeriesDirectory(fs::path dir, std::string what) : dir_(std::move(dir)) {
    std::error_code ec;
    const fs::file_status status = fs::status(dir_, ec);
    if (fs::exists(status)) {
        EDN_VERIFY(fs::is_directory(status), ErrorCode::Usage,
                   what << ": '" << dir_.string() << "' exists and is not a directory");
    } else {
        created_dir_ = fs::create_directories(dir_, ec);
        EDN_VERIFY(!ec && fs::is_directory(dir_), ErrorCode::Io,
                   dir_.string() << ": cannot create the directory of " << what
                                 << (ec ? ": " + ec.message() : std::string()));
    }
}

SeriesDirectory::~SeriesDirectory() {
    if (committed_) return;
    std::error_code ignored;
    for (const std::string& name : files_) fs::remove(dir_ / name, ignored);
    // Only when empty: never a file this run did not write.
    if (created_dir_) fs::remove(dir_, ignored);
}

fs::path SeriesDirectory::add(const std::string& name) {
    files_.push_back(name);
    return dir_ / name;
}

std::string VtuSeries::frame_file_name(long long frame) {
    char name[40];
    std::snprintf(name, sizeof name, "frame_%05lld.vtu", frame);
    return name;
}

VtuSeries::VtuSeries(fs::path dir, long long every, std::string what)
    : dir_(std::move(dir), std::move(what)), every_(every) {
    // series.pvd must be replaceable by rename (not a directory, device or pipe); on failure the
    // directory goes again with dir_.
    verify_output_target(dir_.dir() / "series.pvd");
}

void VtuSeries::record(long long frame, double time, const FrameSnapshot& snapshot) {
    if (!wants(frame)) return;
    const std::string name = frame_file_name(frame);
    if (entries_.empty()) dir_.add("series.pvd");
    // Listed before writing, so that a failed write is cleaned up too.
    const fs::path path = dir_.add(name);
    entries_.push_back({time, name});
    // Binary: a long series in ASCII is several times larger and slower to write and load.
    write_state_vtu(path, snapshot, VtuEncoding::Binary);
    write_pvd(dir_.dir() / "series.pvd", entries_);
}

void VtuSeries::record(long long frame, double time, const Simulation& sim) {
    if (wants(frame)) record(frame, time, take_snapshot(sim));
}

void VtuSeries::commit() {
    write_pvd(dir_.dir() / "series.pvd", entries_);
    dir_.commit();
}

std::string SurfaceSeries::frame_file_name(long long frame, SurfaceFormat format) {
    char name[40];
    std::snprintf(name, sizeof name, "frame_%05lld.%s", frame, surface_format_name(format));
    return name;
}

SurfaceSeries::SurfaceSeries(fs::path dir, long long every, SurfaceFormat format, std::string what)
    : dir_(std::move(dir), std::move(what)), every_(every), format_(format) {}

void SurfaceSeries::record(long long frame, const FrameSnapshot& snapshot) {
    if (!wants(frame)) return;
    if (snapshot.num_vertices != num_vertices_ || snapshot.order != order_ ||
        snapshot.cells != cells_) {
        tessellation_ = tessellate_boundary(
            boundary_triangles(snapshot.cells, snapshot.num_vertices), snapshot.cells,
            snapshot.order, default_surface_subdivisions(snapshot.order));
        cells_ = snapshot.cells;
        num_vertices_ = snapshot.num_vertices;
        order_ = snapshot.order;
    }
    const fs::path path = dir_.add(frame_file_name(frame, format_));
    write_surface(path, evaluate_tessellation(tessellation_, snapshot), format_);
    ++frames_;
}

void SurfaceSeries::record(long long frame, const Simulation& sim) {
    if (wants(frame)) record(frame, take_snapshot(sim, false));
}

} // namespace edn
