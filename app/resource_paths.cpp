#include "resource_paths.hpp"

#include "core/error.hpp"

#include <fstream>
#include <string>
#include <system_error>

namespace edn {

ResourcePaths find_resource_paths() {
    std::error_code ec;
    const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const std::filesystem::path share = exe.parent_path().parent_path() / "share" / "elastodyn";
        if (std::filesystem::is_directory(share / "shaders", ec)) {
            return {share / "shaders", share / "assets"};
        }
    }
    const std::filesystem::path source = EDN_SOURCE_DIR;
    EDN_VERIFY(std::filesystem::is_directory(source / "shaders", ec), ErrorCode::Io,
               "cannot find the shaders folder (looked in "
                   << (exe.parent_path().parent_path() / "share/elastodyn/shaders").string()
                   << " and " << (source / "shaders").string() << ")");
    return {source / "shaders", source / "assets"};
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

} // namespace edn
