#pragma once
/// CUDA-GL interop for the surface vertex buffer: with the CUDA backend the buffer is written on
/// the device straight from the solver's node positions (no device-to-host copy of the mesh per
/// frame). Plain C++ header: the CUDA side lives in interop.cu (interop_none.cpp without CUDA).

#include "core/types.hpp"
#include "surface_map_eval.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace edn {

/// True when the app was built with CUDA, so SurfaceInterop can work.
bool interop_built();

/// Which colour-map scalar SurfaceInterop writes into the vertex buffer.
enum class InteropScalar : std::uint8_t {
    None,         ///< zeros
    Displacement, ///< |x - rest| per surface vertex, computed on the device
    Host,         ///< given per surface vertex by the caller (host path)
    Cells, ///< per surface vertex the mean of its faces' cell values (device, e.g. von Mises)
};

/// Owns the CUDA side of the surface vertex buffer (7 floats per vertex: position, normal, colour
/// scalar) for one surface topology: an imported buffer of its own (external_buffer()) or the
/// registration of the renderer's buffer. Each update() maps the buffer (registered path),
/// gathers the boundary vertices' positions from the device positions, accumulates area-weighted
/// normals over the boundary faces (atomics), normalises them, writes the scalar, and unmaps.
/// How the surface interop runs (measurement switches of the app's command line).
struct InteropOptions {
    bool force_mapped = false; ///< --interop-mapped: the registered-buffer path even where the
                               ///< external-memory path works (comparisons, tests)
    bool profile = false;      ///< --interop-profile: print the update's median split at exit
};

/// A device array of floats owned by the app (CUDA builds): the simulation thread's copy of the
/// solver's positions or cell values after a step (app/sim_snapshot.hpp), which the UI's interop
/// upload reads while the next step writes the solver's own arrays. Empty and unusable without
/// CUDA.
class DeviceFloats {
public:
    /// An empty array (no device memory).
    DeviceFloats() = default;
    ~DeviceFloats();
    /// Moves the array (the moved-from one is empty).
    DeviceFloats(DeviceFloats&& other) noexcept;
    /// Moves the array, freeing this one's first.
    DeviceFloats& operator=(DeviceFloats&& other) noexcept;
    DeviceFloats(const DeviceFloats&) = delete;
    DeviceFloats& operator=(const DeviceFloats&) = delete;
    /// Copies `count` floats from device memory `source`, growing the array when needed. Queued
    /// on the calling thread's stream: done once that thread's device work is (Simulation::
    /// finish_device_work). Throws edn::Error(Device), Unsupported without CUDA.
    void copy_from(const float* source, std::size_t count);
    /// The device array (nullptr while empty).
    const float* data() const { return data_; }
    /// Floats copied by the last copy_from.
    std::size_t size() const { return size_; }

private:
    void release() noexcept;
    float* data_ = nullptr;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
};

class SurfaceInterop {
public:
    /// Registers GL buffer `vbo` (already allocated for #S vertices; its GL context current).
    /// Re-create after the buffer is reallocated (new topology). Throws edn::Error(Device) when
    /// CUDA cannot register it (e.g. the GL context is not on a CUDA device), Unsupported
    /// without CUDA.
    /// @param[in] mesh_vertex  #S node (= tet-mesh vertex, vertex nodes first) of each vertex
    /// @param[in] triangles    #B surface triangles over the #S vertices
    /// @param[in] face_cell    #B cell of each surface triangle (InteropScalar::Cells)
    /// @param[in] rest         #S rest positions (displacement colours)
    SurfaceInterop(unsigned vbo, const std::vector<Index>& mesh_vertex,
                   const std::vector<Tri>& triangles, const std::vector<Index>& face_cell,
                   const std::vector<Vec3>& rest, const InteropOptions& options = {});
    /// The curved surface (order p >= 2, app/surface_map.hpp): GL buffer `vbo` holds the #R
    /// render vertices of `map`, each update() evaluates the map on the device (positions,
    /// normals from the curved geometry, scalar per render vertex; the faces' cells for
    /// InteropScalar::Cells). The map's host arrays are copied to the device here, once.
    /// @param[in] rest  3 #R rest positions of the render vertices (displacement colours)
    SurfaceInterop(unsigned vbo, const SurfaceMapView& map, const std::vector<float>& rest,
                   const InteropOptions& options = {});
    ~SurfaceInterop();
    SurfaceInterop(const SurfaceInterop&) = delete;
    SurfaceInterop& operator=(const SurfaceInterop&) = delete;

    /// Map, write, unmap; returns when the device is done (honest frame timings). Returns the
    /// largest scalar written (0 for None; reads one float back for Displacement and Cells).
    /// @param[in] device_positions    3 #nodes floats in device memory
    /// (Simulation::device_positions)
    /// @param[in] host_scalars        #S values for InteropScalar::Host, else ignored
    /// @param[in] device_cell_values  #cells floats in device memory for InteropScalar::Cells
    ///                                (Simulation::device_von_mises_stress), else ignored
    float update(const float* device_positions, InteropScalar scalar,
                 const std::vector<float>& host_scalars, const float* device_cell_values = nullptr);

    /// Copies `count` floats from device memory to `host` (a few values, e.g. dragged vertices).
    static void download(const float* device, std::size_t count, float* host);

    /// The GL buffer update() writes when the external-memory path is in use (its storage is
    /// CUDA memory imported through GL_EXT_memory_object_fd): the renderer must draw the surface
    /// from it (Renderer::use_surface_buffer). 0 when the renderer's own buffer is registered and
    /// mapped every frame instead.
    unsigned external_buffer() const;

    /// Call after the frame's draws that read the buffer: sets the GL fence the next update()
    /// waits for (external-memory path; without it update() has to fence everything itself).
    void frame_drawn();

private:
    bool try_external_memory();
    void finish_setup(unsigned vbo, const InteropOptions& options);
    void release_external_memory() noexcept;

    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace edn
