// `bench reorder`: the effect of node order on SpMV and per-entry summation (zayer-2017: layout
// can dominate). The same box mesh in three numberings: the generator's (structured), randomly
// shuffled (what an unstructured mesher may hand over), and the shuffled mesh renumbered along
// a Morton curve (mesh/reorder.hpp).
#include "bench_common.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "cuda/cuda_assembly.hpp"
#include "cuda_peers.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/reorder.hpp"
#include "sparse/bin_bcsr_matrix.hpp"
#include "sparse/spmv.hpp"
#include "sparse/summation.hpp"

#include <algorithm>
#include <numeric>
#include <random>

namespace edn::bench {
namespace {

/// Random renumbering of vertices and cells (orientation kept).
TetMesh shuffled(const TetMesh& mesh, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<Index> order(mesh.positions.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    TetMesh out = reorder_mesh(mesh, order); // renumbers vertices, sorts cells by Morton centroid
    std::shuffle(out.cells.begin(), out.cells.end(), rng);
    return out;
}

/// Mean |i - j| over the off-diagonal blocks: how far a row gathers from.
double mean_column_distance(const BinBcsrPattern& p) {
    double sum = 0;
    std::int64_t count = 0;
    for (Index row = 0; row < p.num_rows; ++row)
        for (Index j = 0; j < p.row_counts[row]; ++j) {
            sum += std::abs(double(p.columns[p.view().slot(row, j)]) - row);
            ++count;
        }
    return count ? sum / count : 0.0;
}

JsonObject measure(const Options& o, const std::string& name, const TetMesh& mesh, int order) {
    const auto lame_d = lame_from_young_poisson(1e5, 0.3);
    const Topology topology = build_topology(mesh);
    const NodeLayout layout = make_node_layout(topology, order);
    const BinBcsrPattern pattern = build_bin_bcsr_pattern(topology, mesh.cells, layout);
    const int repeat = o.repeat > 0 ? o.repeat : (o.backend == "cuda" ? 10 : 3);
    JsonObject ms;
    if (o.backend == "cuda") {
        const LameParameters<float> lame{float(lame_d.lambda), float(lame_d.mu)};
        cuda::Assembly a(mesh, topology, order);
        a.build_pattern();
        a.build_per_entry_map();
        a.compute_element_blocks(lame);
        std::vector<double> sums;
        for (int r = 0; r < repeat; ++r) {
            a.sum(SummationMethod::PerEntry, lame);
            sums.push_back(a.times().summation);
        }
        const std::size_t n = 3 * std::size_t(layout.num_nodes());
        DeviceFloats dx(std::vector<float>(n, 1.0f)), dy(std::vector<float>(n, 0.0f));
        const double spmv =
            time_device_ms([&] { a.spmv_device(dx.data(), dy.data()); }, 50, repeat);
        ms.add("summation", median(sums)).add("spmv", spmv);
    } else {
        const int m = nodes_per_cell(order);
        const std::vector<Index> cells = cell_node_table(topology, mesh.cells, layout);
        std::vector<double> blocks(mesh.cells.size() * m * m * 9);
        cpu::linear_elastic_element_blocks(mesh.positions, mesh.cells, order, lame_d,
                                           blocks.data());
        const PerEntryMap map =
            cpu::build_per_entry_map(pattern, {cells.data(), m, mesh.num_cells()});
        BinBcsrMatrix<double> k(pattern);
        std::vector<double> sums, spmvs;
        std::vector<double> x(3 * std::size_t(layout.num_nodes()), 1.0), y(x.size());
        for (int r = 0; r < repeat; ++r) {
            double t0 = now_ms();
            cpu::sum_per_entry(map.view(), blocks.data(), k.view());
            sums.push_back(now_ms() - t0);
            t0 = now_ms();
            for (int i = 0; i < 10; ++i) cpu::spmv(k.view(), x.data(), y.data());
            spmvs.push_back((now_ms() - t0) / 10);
        }
        ms.add("summation", median(sums)).add("spmv", median(spmvs));
    }
    JsonObject c;
    c.add("mesh", name)
        .add("tets", static_cast<std::int64_t>(mesh.cells.size()))
        .add("order", order)
        .add("method", "per_entry")
        .add("median_ms", ms)
        .add("mean_column_distance", mean_column_distance(pattern))
        .add("padded_blocks", static_cast<std::int64_t>(pattern.padded_blocks()));
    return c;
}

} // namespace

void run_reorder_bench(const Options& o) {
    EDN_VERIFY(o.backend == "cpu" || cuda_device_available(), ErrorCode::Unsupported,
               "no CUDA device for --backend cuda");
    const std::string device = o.backend == "cuda" ? cuda_device_name() : "cpu";
    const JsonObject header = bench_header(o, device);
    std::vector<JsonObject> cases;
    for (const BoxCase& box : standard_boxes(std::min<std::int64_t>(o.max_tets, 500'000))) {
        const TetMesh natural = make_box_tet_mesh(box.nx, box.ny, box.nz, {0, 0, 0}, {1, 1, 1});
        const TetMesh shuffle = shuffled(natural, 17);
        const TetMesh morton = reorder_mesh(shuffle, Reordering::Morton);
        for (int order : o.orders) {
            if (order > 2) continue; // p = 3 adds nothing to the layout question and takes long
            for (const auto& [label, mesh] :
                 {std::pair<const char*, const TetMesh*>{"natural", &natural},
                  {"shuffled", &shuffle},
                  {"morton", &morton}}) {
                progress("reorder " + box.name() + " p" + std::to_string(order) + " " + label);
                JsonObject c = measure(o, box.name(), *mesh, order);
                c.add("ordering", label);
                cases.push_back(c);
                write_bench_json(o, header, cases, false);
            }
        }
    }
    write_bench_json(o, header, cases, true);
}

} // namespace edn::bench
