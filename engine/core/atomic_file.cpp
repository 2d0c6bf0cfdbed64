#include "core/atomic_file.hpp"

#include "core/error.hpp"

#include <fstream>
#include <system_error>
#include <unistd.h>

namespace edn {

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write) {
    std::filesystem::path tmp = path;
    tmp += ".tmp." + std::to_string(::getpid());
    try {
        {
            std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
            EDN_VERIFY(out.good(), ErrorCode::Io, path.string() << ": cannot open for writing");
            write(out);
            out.flush();
            EDN_VERIFY(out.good(), ErrorCode::Io, path.string() << ": write failed (disk full?)");
        }
        std::error_code ec;
        std::filesystem::rename(tmp, path, ec);
        EDN_VERIFY(!ec, ErrorCode::Io,
                   path.string() << ": cannot rename temporary file: " << ec.message());
    } catch (...) {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        throw;
    }
}

} // namespace edn
