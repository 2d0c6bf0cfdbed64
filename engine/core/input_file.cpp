#include "core/input_file.hpp"

#include "core/error.hpp"

#include <system_error>

namespace edn {

void verify_regular_file(const std::filesystem::path& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec); // follows symlinks
    const std::string name = path.string();
    if (fs::is_regular_file(status)) return;
    EDN_VERIFY(!ec || ec == std::errc::no_such_file_or_directory, ErrorCode::Io,
               name << ": cannot open: " << ec.message());
    EDN_VERIFY(fs::exists(status), ErrorCode::Io, name << ": cannot open: no such file");
    EDN_VERIFY(!fs::is_directory(status), ErrorCode::Io, name << ": cannot open: is a directory");
    EDN_THROW(ErrorCode::Io,
              name << ": cannot open: not a regular file (a device, pipe or socket)");
}

} // namespace edn
