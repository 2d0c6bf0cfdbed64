#pragma once
// The meshes the CPU-vs-CUDA stage tests run on: a single cell, shuffled perturbed boxes, two
// components with unreferenced vertices, and one with many bins for the warp-dynamic scheduler.

#include "support/mesh_fixtures.hpp"

#include <vector>

namespace edn::test {

/// Stage-test meshes for element order `order` (the largest has a few thousand rows at p = 3).
inline std::vector<TetMesh> stage_meshes(int order) {
    std::vector<TetMesh> meshes = {
        make_single_tet(), shuffle_mesh(make_random_perturbed_box(5, 4, 3, 2.0, 1.0, 1.0), 11),
        concatenate_meshes(make_two_tets(), make_box_mesh(3, 2, 2, 1, 1, 1))};
    const int n = order == 1 ? 24 : order == 2 ? 12 : 8;
    meshes.push_back(shuffle_mesh(make_random_perturbed_box(n, n, n, 1, 1, 1), 3));
    return meshes;
}

} // namespace edn::test
