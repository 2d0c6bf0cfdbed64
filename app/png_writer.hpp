#pragma once
/// Screenshots: an RGB image written as PNG (stb_image_write) or binary PPM, atomically.

#include <cstdint>
#include <filesystem>
#include <vector>

namespace edn {

/// 8-bit RGB image, rows top to bottom.
struct Image {
    int width = 0;                 ///< pixels per row
    int height = 0;                ///< rows
    std::vector<std::uint8_t> rgb; ///< width * height * 3 bytes
};

/// Writes `image` as PNG, or as binary PPM (P6) when the extension is .ppm, through
/// write_file_atomically. Throws edn::Error (Usage for another extension, Io) naming the file.
void write_image(const std::filesystem::path& path, const Image& image);

} // namespace edn
