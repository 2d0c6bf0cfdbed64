#include "png_writer.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"

// The implementation of stb_image_write is compiled into Debian's libstb, which Dear ImGui
// already links, so only the declarations are needed here.
#include <algorithm>
#include <cctype>
#include <ostream>
#include <stb_image_write.h>
#include <string>

namespace edn {
namespace {

void append_bytes(void* context, void* data, int size) {
    auto* out = static_cast<std::vector<std::uint8_t>*>(context);
    const auto* bytes = static_cast<const std::uint8_t*>(data);
    out->insert(out->end(), bytes, bytes + size);
}

} // namespace

void write_image(const std::filesystem::path& path, const Image& image) {
    EDN_VERIFY(image.width > 0 && image.height > 0 &&
                   image.rgb.size() == static_cast<std::size_t>(image.width) * image.height * 3,
               ErrorCode::Internal,
               path.string() << ": image of " << image.width << " x " << image.height
                             << " pixels holds " << image.rgb.size() << " bytes");
    std::string extension = path.extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });

    if (extension == ".ppm") {
        write_file_atomically(path, [&](std::ostream& out) {
            out << "P6\n" << image.width << ' ' << image.height << "\n255\n";
            out.write(reinterpret_cast<const char*>(image.rgb.data()),
                      static_cast<std::streamsize>(image.rgb.size()));
        });
        return;
    }
    EDN_VERIFY(extension == ".png", ErrorCode::Usage,
               path.string() << ": screenshot must end in .png or .ppm");
    std::vector<std::uint8_t> encoded;
    const int ok = stbi_write_png_to_func(append_bytes, &encoded, image.width, image.height, 3,
                                          image.rgb.data(), image.width * 3);
    EDN_VERIFY(ok != 0, ErrorCode::Io, path.string() << ": PNG encoding failed");
    write_file_atomically(path, [&](std::ostream& out) {
        out.write(reinterpret_cast<const char*>(encoded.data()),
                  static_cast<std::streamsize>(encoded.size()));
    });
}

} // namespace edn
