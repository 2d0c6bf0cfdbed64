#include "resource_paths.hpp"

#include "core/error.hpp"

#include <cstdlib>
#include <fstream>
#include <string>
#include <system_error>

namespace edn {
namespace {

ResourcePaths find_installed_or_source_paths() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path share =
        ec ? std::filesystem::path() : exe.parent_path().parent_path() / "share" / "elastodyn";
    if (!share.empty() && std::filesystem::is_directory(share / "shaders", ec)) {
        return {share / "shaders", share / "assets"};
    }
    const std::filesystem::path source = EDN_SOURCE_DIR;
    EDN_VERIFY(std::filesystem::is_directory(source / "shaders", ec), ErrorCode::Io,
               "cannot find the shaders folder (looked in "
                   << (share / "shaders").string() << " and " << (source / "shaders").string()
                   << ")");
    return {source / "shaders", source / "assets"};
}

} // namespace

ResourcePaths find_resource_paths(const std::optional<std::filesystem::path>& shader_dir) {
    ResourcePaths paths = find_installed_or_source_paths();
    // --shader-dir: edit shaders elsewhere (and test the compile-error path) without touching
    // the installed ones.
    if (shader_dir) paths.shaders = *shader_dir;
    return paths;
}

std::filesystem::path default_scene_path(const ResourcePaths& paths) {
    const std::filesystem::path list = paths.assets / "default_scene.txt";
    std::ifstream in(list);
    EDN_VERIFY(in, ErrorCode::Io, list.string() << ": cannot open");
    std::string name;
    std::getline(in, name);
    const auto first = name.find_first_not_of(" \t\r");
    const auto last = name.find_last_not_of(" \t\r");
    EDN_VERIFY(first != std::string::npos, ErrorCode::Parse,
               list.string() << ": empty; expected the file name of a model in assets/");
    return paths.assets / name.substr(first, last - first + 1);
}

std::filesystem::path resolve_scene_path(const ResourcePaths& paths,
                                         const std::filesystem::path& name) {
    std::error_code ec;
    if (name.empty() || std::filesystem::exists(name, ec) || name.is_absolute()) return name;
    const std::filesystem::path in_assets = paths.assets / name;
    return std::filesystem::exists(in_assets, ec) ? in_assets : name;
}

} // namespace edn
