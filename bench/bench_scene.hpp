#pragma once
/// The bodies the per-frame benchmarks simulate (`bench step`) and solve on (`bench solve`): the
/// box or a user's mesh, where it is pinned and what the drag spring pulls.

#include "bench_common.hpp"
#include "sim/simulation.hpp"

#include <cstdint>
#include <string>

namespace edn::bench {

/// The simulated body: the box or a mesh file, where it is pinned and what the drag pulls.
struct StepScene {
    std::string name; ///< "box-NXxNYxNZ" or the file name
    TetMesh mesh;
    bool is_box = true;
    double pin_below = 0; ///< nodes with rest z below this are pinned
    DragSpring drag;      ///< the drag cases' spring
};

/// Largest near-cubic box (cell counts differ by at most one) with at most `max_tets` tets;
/// edn::Error(Usage) below 6 tets.
BoxCase step_box(std::int64_t max_tets);

/// The unit-height box `box` (cubic cells), pinned below a quarter cell (the bottom layer of
/// nodes only: p >= 2 nodes sit at half cells), the drag spring (2e3 N/m) pulling a top-centre
/// triangle 0.25 m sideways and 0.15 m up.
StepScene box_scene(const BoxCase& box);

/// A user's mesh (OBJ meshed by TetGen, .node/.ele, .msh): pinned in the lowest 2% of its height;
/// the drag pulls the centroid of its highest boundary triangle by 25% of the height sideways and
/// 15% up, with a stiffness that scales with the body (2e3 N/m per m of height, as on the 1 m
/// box). Errors of load_tet_mesh (exit 3 for a bad file).
StepScene file_scene(const std::string& path);

} // namespace edn::bench
