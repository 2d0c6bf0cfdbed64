#pragma once
/// Checking an input path before it is opened.

#include <filesystem>

namespace edn {

/// Throws edn::Error(Io) unless `path` names a regular file after following symlinks, with one
/// line "<path>: cannot open: no such file | is a directory | not a regular file (a device, pipe
/// or socket)". Devices and pipes are refused before they are opened: reading /dev/zero whole
/// never ends, and opening a pipe blocks until a writer comes.
void verify_regular_file(const std::filesystem::path& path);

} // namespace edn
