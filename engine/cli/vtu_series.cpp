#include "cli/vtu_series.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "sim/simulation.hpp"

#include <cstdio>
#include <system_error>

namespace edn::cli {

namespace fs = std::filesystem;

void write_state_vtu(const fs::path& path, const Simulation& sim, VtuEncoding encoding) {
    const std::vector<double> x = sim.positions();
    const std::vector<double> v = sim.velocities();
    const std::vector<double>& rest = sim.rest_positions();
    const std::vector<std::uint8_t>& pinned = sim.pinned();
    // Every node (vertex nodes first): order p >= 2 writes VTK's quadratic / Lagrange tets, so
    // ParaView shows the curved cells the simulation computed.
    std::vector<Vec3> points(static_cast<std::size_t>(sim.num_nodes()));
    VtuField displacement{"displacement", 3, {}};
    VtuField velocity{"velocity", 3, v};
    VtuField pinned_field{"pinned", 1, {}};
    displacement.values.reserve(3 * points.size());
    pinned_field.values.reserve(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        for (int d = 0; d < 3; ++d) {
            points[i][d] = x[3 * i + d];
            displacement.values.push_back(x[3 * i + d] - rest[3 * i + d]);
        }
        pinned_field.values.push_back(i < pinned.size() && pinned[i] ? 1.0 : 0.0);
    }
    VtuField stress{"von_mises", 1, sim.von_mises_stress()};
    write_vtu(path, points, sim.settings().order, sim.cell_nodes(),
              {displacement, velocity, pinned_field}, {stress}, encoding);
}

std::string VtuSeries::frame_file_name(long long frame) {
    char name[40];
    std::snprintf(name, sizeof name, "frame_%05lld.vtu", frame);
    return name;
}

VtuSeries::VtuSeries(fs::path dir, long long every, double dt)
    : dir_(std::move(dir)), every_(every), dt_(dt) {
    std::error_code ec;
    const fs::file_status status = fs::status(dir_, ec);
    if (fs::exists(status)) {
        EDN_VERIFY(fs::is_directory(status), ErrorCode::Usage,
                   "simulate: option '--series': '" << dir_.string()
                                                    << "' exists and is not a directory");
    } else {
        created_dir_ = fs::create_directories(dir_, ec);
        EDN_VERIFY(!ec && fs::is_directory(dir_), ErrorCode::Io,
                   dir_.string() << ": cannot create the --series directory"
                                 << (ec ? ": " + ec.message() : std::string()));
    }
    try {
        // series.pvd must be replaceable by rename (not a directory, device or pipe).
        verify_output_target(dir_ / "series.pvd");
    } catch (...) {
        if (created_dir_) fs::remove(dir_, ec);
        throw;
    }
}

VtuSeries::~VtuSeries() {
    if (committed_) return;
    std::error_code ignored;
    for (const PvdEntry& e : entries_) fs::remove(dir_ / e.file, ignored);
    if (!entries_.empty()) fs::remove(dir_ / "series.pvd", ignored);
    // Only when empty: never a file this run did not write.
    if (created_dir_) fs::remove(dir_, ignored);
}

void VtuSeries::record(long long frame, const Simulation& sim) {
    if (frame % every_ != 0) return;
    const std::string name = frame_file_name(frame);
    // Listed before writing, so that a failed write is cleaned up too.
    entries_.push_back({static_cast<double>(frame) * dt_, name});
    // Binary: a long series in ASCII is several times larger and slower to write and load.
    write_state_vtu(dir_ / name, sim, VtuEncoding::Binary);
    write_pvd(dir_ / "series.pvd", entries_);
}

void VtuSeries::commit() {
    write_pvd(dir_ / "series.pvd", entries_);
    committed_ = true;
}

} // namespace edn::cli
