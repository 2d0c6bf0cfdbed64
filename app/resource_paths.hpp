#pragma once
/// Where the app finds shaders/ and assets/ at run time.

#include <filesystem>

namespace edn {

/// Folders the app reads files from.
struct ResourcePaths {
    std::filesystem::path shaders; ///< GLSL sources
    std::filesystem::path assets;  ///< models and assets/default_scene.txt
};

/// Install layout first (<prefix>/bin/elastodyn next to <prefix>/share/elastodyn/{shaders,assets}),
/// then the source tree the binary was configured from (running from a build folder).
/// Throws edn::Error (Io) when no shaders folder is found.
ResourcePaths find_resource_paths();

/// assets/<file named in assets/default_scene.txt>. Throws edn::Error (Io, Parse) naming the file.
std::filesystem::path default_scene_path(const ResourcePaths& paths);

} // namespace edn
