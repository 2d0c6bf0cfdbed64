// `bench repattern`: what a topology change costs before the next frame. A box mesh is cut by a
// plane (mesh/cut.hpp: separation along faces, vertex duplication) or refined in a sphere
// (mesh/refine.hpp: one round of longest-edge bisection with closure), then the exact pattern and
// summation plans of the cut mesh are rebuilt from scratch: topology -> exact counts (Eq. 6) ->
// bins -> one allocation -> columns -> per-entry map. CUDA: all of it on the device from the
// uploaded cells (cuda::Assembly(mesh, order)); its peer in the same run is the same rebuild on
// the host (what the CPU backend does). The whole Simulation rebuild (host set-up included:
// masses, rest positions, components) is timed too, so the stage sum is not mistaken for it.
// With --mesh FILE: the split cut of that mesh instead (bench_split_cut.cpp).
#include "bench_common.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "cuda/cuda_assembly.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/cut.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/refine.hpp"
#include "sim/simulation.hpp"
#include "sparse/bin_bcsr_pattern.hpp"
#include "sparse/summation.hpp"

#include <algorithm>
#include <filesystem>

namespace edn::bench {
namespace {

/// Host rebuild: topology, layout, pattern, cell node table, per-entry map (ms per stage).
JsonObject host_rebuild(const TetMesh& mesh, int order, int repeat) {
    std::vector<double> topo, pattern, maps, total;
    std::int64_t nnz = 0;
    for (int r = 0; r < repeat; ++r) {
        double t0 = now_ms();
        const Topology topology = build_topology(mesh);
        const NodeLayout layout = make_node_layout(topology, order);
        double t1 = now_ms();
        const BinBcsrPattern p = build_bin_bcsr_pattern(topology, mesh.cells, layout);
        double t2 = now_ms();
        const std::vector<Index> cells = cell_node_table(topology, mesh.cells, layout);
        const PerEntryMap map =
            cpu::build_per_entry_map(p, {cells.data(), nodes_per_cell(order), mesh.num_cells()});
        double t3 = now_ms();
        topo.push_back(t1 - t0);
        pattern.push_back(t2 - t1);
        maps.push_back(t3 - t2);
        total.push_back(t3 - t0);
        nnz = p.nnz_blocks();
    }
    JsonObject j;
    j.add("topology", median(topo))
        .add("pattern", median(pattern))
        .add("maps", median(maps))
        .add("total", median(total))
        .add("nnz_blocks", nnz);
    return j;
}

/// Device rebuild from the uploaded cells (median over `repeat`, after one warm-up).
JsonObject device_rebuild(const TetMesh& mesh, int order, int repeat) {
    std::vector<double> upload, topo, count, bins, alloc, columns, maps, total, wall;
    std::size_t peak = 0, held = 0;
    for (int r = 0; r <= repeat; ++r) {
        const double t0 = now_ms();
        cuda::Assembly a(mesh, order);
        a.build_pattern();
        a.build_per_entry_map();
        const double w = now_ms() - t0;
        if (r == 0) continue; // warm-up
        const cuda::AssemblyTimes& t = a.times();
        upload.push_back(t.upload);
        topo.push_back(t.topology);
        count.push_back(t.count);
        bins.push_back(t.bin_offsets);
        alloc.push_back(t.alloc);
        columns.push_back(t.columns);
        maps.push_back(t.maps);
        total.push_back(t.topology + t.count + t.bin_offsets + t.alloc + t.columns + t.maps);
        wall.push_back(w);
        peak = a.peak_bytes();
        held = a.matrix_bytes() + a.map_bytes() + a.mesh_bytes();
    }
    JsonObject j;
    j.add("upload", median(upload))
        .add("topology", median(topo))
        .add("count", median(count))
        .add("bin_offsets", median(bins))
        .add("alloc", median(alloc))
        .add("columns", median(columns))
        .add("maps", median(maps))
        .add("total", median(total))
        .add("wall_incl_upload_and_setup", median(wall))
        .add("peak_bytes", peak)
        .add("matrix_maps_mesh_bytes", held);
    return j;
}

} // namespace

void run_repattern_bench(const Options& o) {
    EDN_VERIFY(o.backend == "cpu" || cuda_device_available(), ErrorCode::Unsupported,
               "no CUDA device for --backend cuda");
    const std::string device = o.backend == "cuda" ? cuda_device_name() : "cpu";
    const JsonObject header = bench_header(o, device);
    std::vector<JsonObject> cases;
    if (!o.mesh.empty()) {
        // A mesh file: the split cut's cases on it (bench_split_cut.cpp) instead of the boxes.
        const TetMesh mesh = load_tet_mesh(o.mesh);
        add_split_cut_cases(o, std::filesystem::path(o.mesh).filename().string(), mesh,
                            [&](JsonObject c) {
                                cases.push_back(std::move(c));
                                write_bench_json(o, header, cases, false);
                            });
        write_bench_json(o, header, cases, true);
        return;
    }
    const std::vector<int> orders = o.orders_given ? o.orders : std::vector<int>{1, 2};
    // The targets are at 125K and 1.7M tets: boxes from 100K up; below a --max-tets of 100K only
    // the largest box allowed (quick runs, tests).
    std::vector<BoxCase> boxes;
    for (const BoxCase& box : standard_boxes(o.max_tets))
        if (box.tets() >= 100'000) boxes.push_back(box);
    if (boxes.empty() && !standard_boxes(o.max_tets).empty())
        boxes.push_back(standard_boxes(o.max_tets).back());
    for (const BoxCase& box : boxes) {
        const TetMesh mesh = make_box_tet_mesh(box.nx, box.ny, box.nz, {0, 0, 0}, {1, 1, 1});
        CutPlane plane;
        plane.point = {0.5, 0.5, 0.5};
        plane.normal = {1.0, 0.3, 0.1};
        double c0 = now_ms();
        const CutResult cut = cut_mesh(mesh, plane);
        const double cut_ms = now_ms() - c0;
        c0 = now_ms();
        const RefineResult refined = refine_sphere(mesh, {0.5, 0.5, 0.5}, 0.1, 1);
        const double refine_ms = now_ms() - c0;
        struct Changed {
            const char* change;
            const TetMesh* mesh;
            double host_ms;
        };
        const Changed changes[] = {{"plane cut", &cut.mesh, cut_ms},
                                   {"sphere refine (r = 0.1, 1 level)", &refined.mesh, refine_ms}};
        for (const Changed& changed : changes)
            for (int order : orders) {
                if (!order_runs_on(order, box.tets(), 720'000)) continue;
                progress("repattern " + box.name() + " p" + std::to_string(order) + " " +
                         changed.change);
                const int repeat = o.repeat > 0 ? o.repeat : (o.backend == "cuda" ? 10 : 3);
                const int host_repeat = box.tets() > 500'000 ? 1 : std::min(repeat, 3);
                const TetMesh& changed_mesh = *changed.mesh;
                JsonObject c;
                c.add("mesh", box.name())
                    .add("tets_before", box.tets())
                    .add("tets", static_cast<std::int64_t>(changed_mesh.cells.size()))
                    .add("vertices", static_cast<std::int64_t>(changed_mesh.num_vertices()))
                    .add("order", order)
                    .add("change", changed.change)
                    .add("change_ms_host", changed.host_ms);
                if (o.backend == "cuda")
                    c.add("device_ms", device_rebuild(changed_mesh, order, repeat));
                c.add("baseline", JsonObject()
                                      .add("name", "host rebuild (CPU backend path)")
                                      .add("ms", host_rebuild(changed_mesh, order, host_repeat)));
                // The whole Simulation rebuild after the change, as the app and CLI do it.
                SimulationSettings s;
                s.order = order;
                s.backend = o.backend == "cuda" ? Backend::Cuda : Backend::Cpu;
                s.material = Material::Corotational;
                const double s0 = now_ms();
                {
                    Simulation sim(changed_mesh, s);
                    c.add("simulation_rebuild_ms_wall", now_ms() - s0);
                    c.add("simulation_pattern_build_ms", sim.pattern_build_ms());
                }
                cases.push_back(c);
                write_bench_json(o, header, cases, false);
            }
    }
    write_bench_json(o, header, cases, true);
}

} // namespace edn::bench
