// App::update_color_range: the range the surface colours span (app/color_range.hpp), from the
// surface scalars on the host path and from a periodic host sample on the interop path, whose
// scalars stay on the device.
#include "app.hpp"
#include "color_range.hpp"

#include <cmath>
#include <glm/geometric.hpp>

namespace edn {
namespace {

/// Frames between host samples of the range on the interop path: one download of the cell
/// stresses (or the surface positions) per half second at 60 Hz instead of every frame; the
/// shown range is smoothed over about a second anyway.
constexpr std::int64_t kSamplePeriodFrames = 30;

} // namespace

void App::update_color_range(bool device_scalars, const SurfaceSource& source) {
    const ColorRangeSettings& range = gui_.color_range_settings;
    const bool new_mode = gui_.color_range_mode != gui_.color_mode;
    ColorRange measured;
    if (!device_scalars) {
        measured = percentile_range(surface_scalars_, range.low_percent, range.high_percent);
    } else {
        // The interop path's scalars stay on the device: percentiles of host values fetched
        // every kSamplePeriodFrames frames (von Mises: each boundary face's cell, which the
        // device averages per vertex; displacement: per surface vertex).
        const bool due = new_mode || sampled_range_frame_ < 0 ||
                         frame_index_ < sampled_range_frame_ ||
                         frame_index_ - sampled_range_frame_ >= kSamplePeriodFrames;
        if (due) {
            const BoundarySurface& surface = session_.scene()->surface;
            std::vector<float> sample;
            if (gui_.color_mode == ColorMode::VonMises) {
                const std::vector<double>& stress = source.stress();
                sample.reserve(surface.face_cell.size());
                for (Index cell : surface.face_cell)
                    sample.push_back(static_cast<float>(stress[static_cast<std::size_t>(cell)]));
            } else {
                copy_surface_positions(source.positions()); // also refreshes the picker's copy
                const std::vector<glm::vec3>& positions = picker_.positions();
                sample.reserve(positions.size());
                for (std::size_t i = 0; i < positions.size(); ++i) {
                    const Vec3& rest =
                        session_.scene()
                            ->mesh.positions[static_cast<std::size_t>(surface.mesh_vertex[i])];
                    sample.push_back(glm::length(positions[i] - to_glm(rest)));
                }
            }
            sampled_range_ = percentile_range(sample, range.low_percent, range.high_percent);
            sampled_range_frame_ = frame_index_;
        }
        measured = sampled_range_;
    }
    if (new_mode) gui_.color_range = measured; // another quantity: no smoothing from the old one
    gui_.color_range_mode = gui_.color_mode;
    gui_.color_range = next_color_range(gui_.color_range, measured, range);
    settings_.scalar_min = gui_.color_range.low;
    settings_.scalar_scale = 1.0f / (gui_.color_range.high - gui_.color_range.low);
}

} // namespace edn
