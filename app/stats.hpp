#pragma once
/// What the app reports about its scene: the Statistics panel's numbers and the --stats file
/// (JSON: frames, scene, settings, sizes, final state, cuts, refinements, undos, errors).

#include "edit_session.hpp"
#include "gui.hpp"
#include "sim/convergence.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace edn {

/// Steps the Statistics panel's convergence line covers (2 s at 60 Hz: recent, still readable).
inline constexpr std::size_t kConvergenceWindowFrames = 120;

/// The Statistics panel's numbers for the session's scene and simulation; `recent` is the
/// convergence of the last steps.
SceneStatistics scene_statistics(const EditSession& session, const StepResult& last_step,
                                 bool stepped, const ConvergenceTally& recent);

/// Writes the --stats summary after `frames` frames (atomically). `upload_method` names the
/// surface upload path, `convergence` tallies every step of the run, `errors` lists the
/// non-fatal errors, `wall_seconds` is the run's duration (steps per second over the run).
void write_stats(const std::filesystem::path& path, const EditSession& session, std::int64_t frames,
                 const std::string& upload_method, const StepResult& last_step,
                 const ConvergenceTally& convergence, const std::vector<std::string>& errors,
                 double wall_seconds);

} // namespace edn
