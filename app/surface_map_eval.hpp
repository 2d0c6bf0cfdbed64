#pragma once
/// Evaluation of one render vertex of a curved surface map (app/surface_map.hpp), written once
/// for the host loop (surface_map.cpp) and the CUDA-GL interop kernel (interop.cu). Plain header:
/// no GL, no glm, no CUDA headers.

#include "core/types.hpp"

namespace edn {

/// A SurfaceMap's arrays as raw pointers (host or device memory), passed to kernels by value.
struct SurfaceMapView {
    int num_vertices = 0;                  ///< #R render vertices
    int num_faces = 0;                     ///< #B boundary faces
    int nodes_per_face = 0;                ///< K = (p+1)(p+2)/2 Lagrange nodes of a face
    const Index* sample_offsets = nullptr; ///< #R+1: samples of render vertex r
    const Index* samples = nullptr;    ///< face * Q + pattern point, one per face the vertex is on
    const Index* face_nodes = nullptr; ///< #B x K global node of each face-local node
    const Index* face_cell = nullptr;  ///< #B cell of each boundary face
    const float* weights = nullptr;    ///< Q x 3 x K: value, d/du, d/dv of each face basis
    int pattern_points = 0;            ///< Q sample points per face
};

/// Position and unnormalised normal of render vertex r from node positions x (3 per node, float
/// or double). The position is its first sample's (so a vertex shared by faces has one position
/// bit for bit); the normal sums dX/du x dX/dv over every face the vertex lies on, the curved
/// counterpart of the area-weighted vertex normal (exact analytic normal inside a face). Returns
/// the number of samples (faces) of the vertex.
template <class X>
EDN_HOST_DEVICE inline int surface_map_vertex(const SurfaceMapView& map, const X* x, int r,
                                              float position[3], float normal[3]) {
    const Index begin = map.sample_offsets[r];
    const Index end = map.sample_offsets[r + 1];
    const int k_count = map.nodes_per_face;
    for (int d = 0; d < 3; ++d) normal[d] = 0.0f;
    for (Index s = begin; s < end; ++s) {
        const Index sample = map.samples[s];
        const Index face = sample / map.pattern_points;
        const Index point = sample - face * map.pattern_points;
        const float* w = map.weights + static_cast<long long>(point) * 3 * k_count;
        const Index* nodes = map.face_nodes + static_cast<long long>(face) * k_count;
        float p[3] = {0.0f, 0.0f, 0.0f}, du[3] = {0.0f, 0.0f, 0.0f}, dv[3] = {0.0f, 0.0f, 0.0f};
        for (int k = 0; k < k_count; ++k) {
            const X* xn = x + 3 * static_cast<long long>(nodes[k]);
            for (int d = 0; d < 3; ++d) {
                const float c = static_cast<float>(xn[d]);
                p[d] += w[k] * c;
                du[d] += w[k_count + k] * c;
                dv[d] += w[2 * k_count + k] * c;
            }
        }
        if (s == begin)
            for (int d = 0; d < 3; ++d) position[d] = p[d];
        normal[0] += du[1] * dv[2] - du[2] * dv[1];
        normal[1] += du[2] * dv[0] - du[0] * dv[2];
        normal[2] += du[0] * dv[1] - du[1] * dv[0];
    }
    return static_cast<int>(end - begin);
}

/// Mean of per-cell values over the faces render vertex r lies on (the von Mises colour; a
/// non-finite cell value counts as 0, as on the flat surface).
template <class V>
EDN_HOST_DEVICE inline float surface_map_cell_mean(const SurfaceMapView& map, const V* cell_values,
                                                   int r) {
    const Index begin = map.sample_offsets[r];
    const Index end = map.sample_offsets[r + 1];
    if (end <= begin) return 0.0f;
    float sum = 0.0f;
    for (Index s = begin; s < end; ++s) {
        const Index face = map.samples[s] / map.pattern_points;
        float value = static_cast<float>(cell_values[map.face_cell[face]]);
        if (!(value - value == 0.0f)) value = 0.0f; // inf or NaN (isfinite differs host/device)
        sum += value;
    }
    return sum / static_cast<float>(end - begin);
}

} // namespace edn
