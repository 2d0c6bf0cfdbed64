#pragma once
/// `simulate --vtu` and `--series`: the state of a Simulation as .vtu files, and a ParaView time
/// series (one .vtu per recorded frame plus a .pvd index) written while the run goes.

#include "mesh/vtu_io.hpp"

#include <filesystem>
#include <vector>

namespace edn {
class Simulation;
}

namespace edn::cli {

/// Writes the current state of `sim` to `path` (atomically): every node (order p >= 2 as VTK
/// quadratic / Lagrange tets), point data displacement, velocity and pinned (0/1), cell data
/// von_mises.
void write_state_vtu(const std::filesystem::path& path, const Simulation& sim,
                     VtuEncoding encoding = VtuEncoding::Ascii);

/// `DIR/frame_NNNNN.vtu` (binary appended encoding) for every `every`-th frame and `DIR/series.pvd`
/// listing them at time frame * dt. The .pvd is rewritten (atomically) after each frame, so it is
/// valid during the run; unless commit() is called, the destructor removes every file this object
/// wrote, and DIR when this object created it (a failed run leaves no series behind).
class VtuSeries {
public:
    /// Creates `dir` when missing. Throws edn::Error: Usage when `dir` exists and is not a
    /// directory, Io when it cannot be created or series.pvd cannot be written in it.
    VtuSeries(std::filesystem::path dir, long long every, double dt);
    VtuSeries(const VtuSeries&) = delete;
    VtuSeries& operator=(const VtuSeries&) = delete;
    /// Removes what was written unless committed.
    ~VtuSeries();

    /// Records `sim` as frame `frame` (the state after `frame` steps) when frame % every == 0.
    void record(long long frame, const Simulation& sim);
    /// Rewrites the final series.pvd and keeps every file.
    void commit();

    /// "frame_00042.vtu": the file name of frame `frame` (at least 5 digits).
    static std::string frame_file_name(long long frame);

private:
    std::filesystem::path dir_;
    long long every_ = 1;
    double dt_ = 0;
    bool created_dir_ = false;
    bool committed_ = false;
    std::vector<PvdEntry> entries_;
};

} // namespace edn::cli
