#pragma once
/// What the app reports about its scene: the Statistics panel's numbers and the --stats file
/// (JSON: frames, scene, settings, sizes, final state, cuts, refinements, undos, errors).

#include "edit_session.hpp"
#include "gui.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace edn {

/// The Statistics panel's numbers for the session's scene and simulation.
SceneStatistics scene_statistics(const EditSession& session, const StepResult& last_step,
                                 bool stepped);

/// Writes the --stats summary after `frames` frames (atomically). `upload_method` names the
/// surface upload path, `errors` the non-fatal errors of the run.
void write_stats(const std::filesystem::path& path, const EditSession& session, std::int64_t frames,
                 const std::string& upload_method, const StepResult& last_step,
                 const std::vector<std::string>& errors);

} // namespace edn
