#pragma once
/// Writing output files so that no partial file is ever left behind.

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

namespace edn {

/// Throws edn::Error(Io) unless `path` can receive an output file by rename: its directory
/// exists and is writable, and `path` is absent or a regular file (a rename would replace a
/// device such as /dev/full, a pipe or a socket by a regular file, and cannot replace a
/// directory).
void verify_output_target(const std::filesystem::path& path);

/// Calls `write` with a stream on `path`.tmp.<pid>, then renames it onto `path`. On any exception
/// the temporary is removed and the exception propagates; `path` is untouched. A symbolic link at
/// `path` is followed (the file it names is replaced, the link kept); see verify_output_target
/// for what is refused.
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);

/// The output files of one command, published together: every output is checked before any work
/// is done, written under a temporary name beside its target, and renamed onto the target only
/// when all have been written (commit). Until then no existing file is touched; whatever was not
/// committed is removed when the object is destroyed.
class OutputFiles {
public:
    OutputFiles() = default;
    OutputFiles(const OutputFiles&) = delete;
    OutputFiles& operator=(const OutputFiles&) = delete;
    /// Removes the temporaries that were not committed.
    ~OutputFiles();

    /// Records an input file that no output may name; `what` names it in messages ("MESH").
    void add_input(const std::filesystem::path& path, const std::string& what);
    /// Checks output `path` and returns the temporary path to write it to. Throws edn::Error:
    /// Usage when `path` is the same file as an input or another output, Io as
    /// verify_output_target. `what` names it in messages ("--matrix").
    std::filesystem::path add(const std::filesystem::path& path, const std::string& what);
    /// Renames every written temporary onto its target (Io when one cannot be renamed; the
    /// targets renamed before it stay published).
    void commit();

private:
    /// One named file: its path as given, its identity for comparisons and its role.
    struct Entry {
        std::filesystem::path path;     ///< as given
        std::filesystem::path resolved; ///< absolute, symbolic links resolved
        std::filesystem::path temp;     ///< temporary (outputs only)
        std::string what;               ///< role in messages
    };
    /// Throws Usage when `entry` names the same file as an earlier input or output.
    void verify_distinct(const Entry& entry) const;

    std::vector<Entry> inputs_;
    std::vector<Entry> outputs_;
    bool committed_ = false;
};

} // namespace edn
