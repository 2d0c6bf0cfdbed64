#include "core/atomic_file.hpp"

#include "core/error.hpp"

#include <fstream>
#include <system_error>
#include <unistd.h>

namespace edn {
namespace {

namespace fs = std::filesystem;

/// `path` made absolute with its symbolic links (including a final one) resolved as far as they
/// exist: the identity of the file that reading or renaming onto `path` reaches.
fs::path resolve(const fs::path& path) {
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(fs::absolute(path, ec), ec);
    return ec ? fs::absolute(path, ec).lexically_normal() : resolved;
}

/// The directory that holds `path` ("." for a bare name).
fs::path directory_of(const fs::path& path) {
    return path.parent_path().empty() ? fs::path(".") : path.parent_path();
}

} // namespace

void verify_output_target(const fs::path& path) {
    const std::string name = path.string();
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec); // follows symbolic links
    if (fs::exists(status)) {
        EDN_VERIFY(!fs::is_directory(status), ErrorCode::Io,
                   name << ": cannot write: is a directory");
        EDN_VERIFY(fs::is_regular_file(status), ErrorCode::Io,
                   name << ": cannot write: exists and is not a regular file (a device, pipe or "
                           "socket), not replaced");
    } else {
        EDN_VERIFY(!fs::is_symlink(fs::symlink_status(path, ec)), ErrorCode::Io,
                   name << ": cannot write: a symbolic link to nothing");
    }
    const fs::path directory = directory_of(resolve(path));
    EDN_VERIFY(fs::is_directory(directory, ec), ErrorCode::Io,
               name << ": cannot write: directory '" << directory_of(path).string()
                    << "' does not exist");
    EDN_VERIFY(::access(directory.c_str(), W_OK | X_OK) == 0, ErrorCode::Io,
               name << ": cannot write: directory '" << directory_of(path).string()
                    << "' is not writable");
}

void write_file_atomically(const fs::path& path, const std::function<void(std::ostream&)>& write) {
    verify_output_target(path);
    // Through a symbolic link: replace the file it names, keep the link.
    std::error_code ec;
    const fs::path target = fs::is_symlink(fs::symlink_status(path, ec)) ? resolve(path) : path;
    fs::path tmp = target;
    tmp += ".tmp." + std::to_string(::getpid());
    try {
        {
            std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
            EDN_VERIFY(out.good(), ErrorCode::Io, path.string() << ": cannot open for writing");
            write(out);
            out.flush();
            EDN_VERIFY(out.good(), ErrorCode::Io, path.string() << ": write failed (disk full?)");
        }
        fs::rename(tmp, target, ec);
        EDN_VERIFY(!ec, ErrorCode::Io,
                   path.string() << ": cannot rename temporary file: " << ec.message());
    } catch (...) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw;
    }
}

OutputFiles::~OutputFiles() {
    std::error_code ignored;
    if (!committed_)
        for (const Entry& output : outputs_) fs::remove(output.temp, ignored);
}

void OutputFiles::verify_distinct(const Entry& entry) const {
    auto same = [&](const Entry& other) {
        if (entry.resolved == other.resolved) return true;
        std::error_code ec; // hard links: the same file under two names
        return fs::equivalent(entry.path, other.path, ec) && !ec;
    };
    for (const Entry& input : inputs_)
        EDN_VERIFY(!same(input), ErrorCode::Usage,
                   entry.path.string() << ": output " << entry.what << " is the same file as input "
                                       << input.what << " '" << input.path.string() << "'");
    for (const Entry& output : outputs_)
        EDN_VERIFY(!same(output), ErrorCode::Usage,
                   entry.path.string() << ": outputs " << output.what << " and " << entry.what
                                       << " are the same file");
}

void OutputFiles::add_input(const fs::path& path, const std::string& what) {
    inputs_.push_back({path, resolve(path), {}, what});
}

fs::path OutputFiles::add(const fs::path& path, const std::string& what) {
    Entry entry{path, resolve(path), {}, what};
    verify_distinct(entry);
    verify_output_target(path);
    // Beside the file the rename will replace (through a link: the file it names), so that the
    // rename stays within one file system. Same stem pattern for a .node/.ele pair.
    std::error_code ec;
    const fs::path target = fs::is_symlink(fs::symlink_status(path, ec)) ? entry.resolved : path;
    std::string temp_name = ".";
    temp_name += target.stem().string();
    temp_name += ".partial." + std::to_string(::getpid()) + target.extension().string();
    entry.temp = directory_of(target) / temp_name;
    fs::path temp = entry.temp;
    entry.path = target; // what commit() renames onto
    outputs_.push_back(std::move(entry));
    return temp;
}

void OutputFiles::commit() {
    for (const Entry& output : outputs_) {
        std::error_code ec;
        EDN_VERIFY(fs::is_regular_file(output.temp, ec), ErrorCode::Internal,
                   output.path.string() << ": output " << output.what << " was not written");
    }
    for (const Entry& output : outputs_) {
        // Checked again: the target may have changed while the command ran.
        verify_output_target(output.path);
        std::error_code ec;
        fs::rename(output.temp, output.path, ec);
        EDN_VERIFY(!ec, ErrorCode::Io,
                   output.path.string() << ": cannot rename the finished file: " << ec.message());
    }
    committed_ = true;
}

} // namespace edn
