#pragma once
/// Where the app finds shaders/ and assets/ at run time.

#include <filesystem>
#include <optional>

namespace edn {

/// Folders the app reads files from.
struct ResourcePaths {
    std::filesystem::path shaders; ///< GLSL sources
    std::filesystem::path assets;  ///< models and assets/default_scene.txt
};

/// Install layout first (<prefix>/bin/elastodyn next to <prefix>/share/elastodyn/{shaders,assets}),
/// then the source tree the binary was configured from (running from a build folder);
/// `shader_dir` (the app's --shader-dir), when given, replaces the shaders folder.
/// Throws edn::Error (Io) when no shaders folder is found.
ResourcePaths find_resource_paths(const std::optional<std::filesystem::path>& shader_dir = {});

/// assets/<file named in assets/default_scene.txt>. Throws edn::Error (Io, Parse) naming the file.
std::filesystem::path default_scene_path(const ResourcePaths& paths);

/// A scene named by the user: `name` as a path when it exists, else assets/`name` when that
/// exists (so `--scene sphere.obj` works from anywhere), else `name` unchanged (the loader then
/// reports it missing).
std::filesystem::path resolve_scene_path(const ResourcePaths& paths,
                                         const std::filesystem::path& name);

} // namespace edn
