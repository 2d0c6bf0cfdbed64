// `bench assembly`: Bin-BCSR* first assembly stage by stage (paper Table 2) and summation-only
// repetitions per method, with the peer timed in the same run: Eigen setFromTriplets on the CPU,
// a CUB/cuSPARSE COO -> BSR assembly (sort by key + reduce) on the GPU.
#include "bench_common.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cuda/cuda_assembly.hpp"
#include "cuda_peers.hpp"
#include "mesh/node_layout.hpp"
#include "sparse/bin_bcsr_matrix.hpp"
#include "sparse/summation.hpp"

#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

namespace edn::bench {
namespace {

constexpr double kYoung = 1.0e5;
constexpr double kPoisson = 0.3;
/// Largest mesh that runs p = 3 in the assembly benchmark (the 720K-tet box).
constexpr std::int64_t kP3AssemblyLimit = 750'000;

/// Samples of named stages.
struct Samples {
    std::map<std::string, std::vector<double>> by_stage;
    void add(const std::string& stage, double ms) { by_stage[stage].push_back(ms); }
    double med(const std::string& stage) const {
        auto it = by_stage.find(stage);
        return it == by_stage.end() ? std::nan("") : median(it->second);
    }
};

/// Bytes of the same matrix as Bin-BCSR*, 3x3 BSR and scalar CSR (32-bit indices).
JsonObject format_bytes(const BinBcsrPattern& p, std::size_t scalar) {
    const std::size_t nnz = static_cast<std::size_t>(p.nnz_blocks());
    const std::size_t rows = static_cast<std::size_t>(p.num_rows);
    JsonObject b;
    b.add("scalar_bytes", scalar)
        .add("bin_bcsr", p.matrix_bytes(scalar))
        .add("bsr", nnz * 9 * scalar + nnz * 4 + (rows + 1) * 4)
        .add("csr", 9 * nnz * scalar + 9 * nnz * 4 + (3 * rows + 1) * 4)
        .add("padded_blocks", p.padded_blocks())
        .add("padding_fraction", double(p.padded_blocks()) / double(std::max<std::size_t>(nnz, 1)));
    return b;
}

JsonObject case_head(const MeshData& md, int order, const char* method, const BinBcsrPattern& p) {
    JsonObject c;
    c.add("mesh", md.name)
        .add("tets", md.mesh.num_cells())
        .add("order", order)
        .add("material", "linear")
        .add("path", "fused_linear")
        .add("method", method)
        .add("nodes", p.num_rows)
        .add("nnz_blocks", p.nnz_blocks());
    return c;
}

JsonObject skipped_case(const MeshData& md, int order, const std::string& reason) {
    JsonObject c;
    c.add("mesh", md.name).add("tets", md.mesh.num_cells()).add("order", order);
    c.add("method", "all").add("skipped", reason);
    return c;
}

// ---- CPU
// -----------------------------------------------------------------------------------------

using EigenMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;

void cpu_case(const MeshData& md, int order, const Options& o, std::vector<JsonObject>& cases) {
    const Topology& topo = md.topology;
    const TetMesh& mesh = md.mesh;
    const NodeLayout layout = make_node_layout(topo, order);
    const int m = nodes_per_cell(order);
    const Index num_cells = mesh.num_cells();
    const std::size_t block_count = static_cast<std::size_t>(num_cells) * m * m;
    const auto lame = lame_from_young_poisson(kYoung, kPoisson);

    Samples s;
    BinBcsrPattern pattern;
    std::unique_ptr<BinBcsrMatrix<double>> matrix;
    std::vector<Index> cell_nodes;
    PerEntryMap map;
    std::vector<double> blocks;
    for (int r = 0; r < o.repeat; ++r) {
        matrix.reset();
        pattern = BinBcsrPattern();
        map = PerEntryMap();
        blocks = std::vector<double>();
        double t = now_ms();
        auto lap = [&](const char* stage) {
            const double now = now_ms();
            s.add(stage, now - t);
            t = now;
        };
        pattern.num_rows = layout.num_nodes();
        pattern.row_counts = cpu::bin_bcsr_row_counts(topo, layout);
        lap("count");
        pattern.bin_offsets = cpu::bin_bcsr_bin_offsets(pattern.row_counts);
        lap("bin_offsets");
        pattern.columns.resize(pattern.num_slots());
        matrix = std::make_unique<BinBcsrMatrix<double>>(pattern);
        lap("alloc");
        cpu::fill_bin_bcsr_columns(topo, mesh.cells, layout, pattern);
        lap("columns");
        cell_nodes = cell_node_table(topo, mesh.cells, layout);
        map = cpu::build_per_entry_map(pattern, {cell_nodes.data(), m, num_cells});
        lap("maps");
        blocks.resize(9 * block_count);
        cpu::linear_elastic_element_blocks(mesh.positions, mesh.cells, order, lame, blocks.data());
        lap("element");
        cpu::sum_per_entry(map.view(), blocks.data(), matrix->view());
        lap("summation");
    }
    // Summation only, every method, on the built pattern.
    const NodeCellsView node_cells = node_cells_view(topo, layout);
    const CellNodesView cn{cell_nodes.data(), m, num_cells};
    std::vector<double> x(3 * mesh.positions.size());
    for (std::size_t i = 0; i < mesh.positions.size(); ++i)
        for (int k = 0; k < 3; ++k) x[3 * i + k] = mesh.positions[i][k];
    std::vector<SummationMethod> methods = {SummationMethod::PerEntry, SummationMethod::PerSimplex};
    if (order == 1) methods.push_back(SummationMethod::Inline);
    std::map<SummationMethod, std::vector<double>> sum_only;
    for (SummationMethod method : methods)
        for (int r = 0; r < o.repeat; ++r) {
            const double t = now_ms();
            if (method == SummationMethod::PerEntry)
                cpu::sum_per_entry(map.view(), blocks.data(), matrix->view());
            else if (method == SummationMethod::PerSimplex)
                cpu::sum_per_simplex(node_cells, cn, blocks.data(), matrix->view());
            else
                cpu::sum_inline_linear_p1(node_cells, mesh.cells.data(), x.data(), lame,
                                          matrix->view());
            sum_only[method].push_back(now_ms() - t);
        }
    // The last method left in `matrix` may be inline/per-simplex: redo per-entry for the check.
    cpu::sum_per_entry(map.view(), blocks.data(), matrix->view());

    // Peer: Eigen setFromTriplets from the same element blocks (9 scalar triplets per block).
    Samples peer;
    EigenMatrix eigen;
    for (int r = 0; r < o.repeat; ++r) {
        double t = now_ms();
        std::vector<Eigen::Triplet<double, int>> triplets(9 * block_count);
        parallel_for(0, static_cast<std::int64_t>(block_count), [&](std::int64_t b) {
            const std::int64_t cell = b / (m * m);
            const int ab = static_cast<int>(b % (m * m));
            const int row = cell_nodes[cell * m + ab / m], col = cell_nodes[cell * m + ab % m];
            for (int k = 0; k < 9; ++k)
                triplets[9 * b + k] = {3 * row + k / 3, 3 * col + k % 3, blocks[9 * b + k]};
        });
        peer.add("triplets", now_ms() - t);
        t = now_ms();
        eigen = EigenMatrix(3 * layout.num_nodes(), 3 * layout.num_nodes());
        eigen.setFromTriplets(triplets.begin(), triplets.end());
        peer.add("set_from_triplets", now_ms() - t);
    }
    // Check: the same entries and values (to_coo is sorted like Eigen's row-major storage).
    double max_diff = 0, scale = 0;
    const auto coo = to_coo(*matrix);
    bool same_pattern = static_cast<std::int64_t>(coo.size()) == eigen.nonZeros();
    if (same_pattern) {
        std::size_t i = 0;
        for (int row = 0; row < eigen.outerSize() && same_pattern; ++row)
            for (EigenMatrix::InnerIterator it(eigen, row); it; ++it, ++i) {
                if (coo[i].row != row || coo[i].col != it.col()) {
                    same_pattern = false;
                    break;
                }
                max_diff = std::max(max_diff, std::abs(coo[i].value - it.value()));
                scale = std::max(scale, std::abs(it.value()));
            }
    }
    const double peer_sft = peer.med("set_from_triplets");
    JsonObject baseline;
    baseline.add("name", "eigen_set_from_triplets")
        .add("description", "Eigen::SparseMatrix<double,RowMajor>::setFromTriplets, 9 scalar "
                            "triplets per element block (triplet fill in parallel, timed apart)")
        .add("median_ms", JsonObject()
                              .add("triplets", peer.med("triplets"))
                              .add("set_from_triplets", peer_sft)
                              .add("total", peer.med("triplets") + peer_sft))
        .add("bytes", JsonObject()
                          .add("triplets", 9 * block_count * sizeof(Eigen::Triplet<double, int>))
                          .add("matrix", static_cast<std::size_t>(eigen.nonZeros()) * 12 +
                                             (static_cast<std::size_t>(eigen.outerSize()) + 1) * 4))
        .add("check", JsonObject()
                          .add("same_pattern", same_pattern)
                          .add("max_rel_diff", scale > 0 ? max_diff / scale : max_diff));

    const JsonObject bytes =
        format_bytes(pattern, sizeof(double))
            .add("maps", (map.offsets.size() + map.sources.size()) * sizeof(Index))
            .add("element_blocks", blocks.size() * sizeof(double))
            .add("cell_nodes", cell_nodes.size() * sizeof(Index));
    const double pattern_ms =
        s.med("count") + s.med("bin_offsets") + s.med("alloc") + s.med("columns");
    for (SummationMethod method : methods) {
        JsonObject med;
        med.add("count", s.med("count"))
            .add("bin_offsets", s.med("bin_offsets"))
            .add("alloc", s.med("alloc"))
            .add("columns", s.med("columns"));
        double total = pattern_ms;
        if (method == SummationMethod::PerEntry) {
            med.add("maps", s.med("maps"));
            total += s.med("maps");
        } else if (method == SummationMethod::PerSimplex) {
            // Only the cell node table; no per-entry map.
        }
        if (method != SummationMethod::Inline) {
            med.add("element", s.med("element"));
            total += s.med("element");
        }
        // "summation" of a first assembly is the fresh-pattern run for per-entry; the other
        // methods have only the summation-only repetitions.
        const double first_sum =
            method == SummationMethod::PerEntry ? s.med("summation") : median(sum_only[method]);
        med.add("summation", first_sum).add("total", total + first_sum);
        med.add("summation_only", median(sum_only[method]));
        med.add("topology_host_ms", md.topology_ms);
        JsonObject c = case_head(md, order, summation_method_name(method), pattern);
        c.add("median_ms", med).add("bytes", bytes).add("baseline", baseline);
        c.add("speedup", JsonObject().add("summation_vs_set_from_triplets",
                                          peer_sft / median(sum_only[method])));
        c.add("scalar", "double");
        // The element stage and a summation on the built pattern, as a Newton iteration runs
        // them (inline computes its blocks inside the summation).
        const bool stored = method != SummationMethod::Inline;
        c.add("assembly",
              assembly_json("call", stored ? s.med("element") : 0.0, median(sum_only[method]),
                            stored ? blocks.size() * sizeof(double) : 0));
        cases.push_back(c);
    }
}

// ---- CUDA
// ----------------------------------------------------------------------------------------

void cuda_case(const MeshData& md, int order, const Options& o, const DeviceInfo& dev,
               std::vector<JsonObject>& cases) {
    const TetMesh& mesh = md.mesh;
    const int m = nodes_per_cell(order);
    const Index num_cells = mesh.num_cells();
    const std::size_t block_count = static_cast<std::size_t>(num_cells) * m * m;
    const auto lame_d = lame_from_young_poisson(kYoung, kPoisson);
    const LameParameters<float> lame{static_cast<float>(lame_d.lambda),
                                     static_cast<float>(lame_d.mu)};
    // Rough device needs (bytes per element block): ours ~80 (blocks, map, matrix), the peer
    // ~110 (blocks, keys and indices double-buffered, run arrays, output).
    const double budget = 0.6 * double(device_info().free_bytes);
    if (80.0 * double(block_count) > budget) {
        cases.push_back(
            skipped_case(md, order, "estimated device memory above 60% of free memory"));
        return;
    }

    Samples s;
    std::optional<cuda::Assembly> keep;
    std::size_t peak = 0, matrix_b = 0, map_b = 0, elem_b = 0, mesh_b = 0;
    for (int r = -1; r < o.repeat; ++r) { // r = -1: warm-up, not recorded
        keep.reset();
        keep.emplace(mesh, md.topology, order);
        cuda::Assembly& a = *keep;
        a.build_pattern();
        a.build_per_entry_map();
        a.compute_element_blocks(lame);
        a.sum(SummationMethod::PerEntry, lame);
        if (r < 0) continue;
        const cuda::AssemblyTimes& t = a.times();
        s.add("upload", t.upload);
        s.add("count", t.count);
        s.add("bin_offsets", t.bin_offsets);
        s.add("alloc", t.alloc);
        s.add("columns", t.columns);
        s.add("maps", t.maps);
        s.add("element", t.element);
        s.add("summation", t.summation);
        s.add("total",
              t.count + t.bin_offsets + t.alloc + t.columns + t.maps + t.element + t.summation);
        peak = a.peak_bytes(), matrix_b = a.matrix_bytes(), map_b = a.map_bytes();
        elem_b = a.element_bytes(), mesh_b = a.mesh_bytes();
    }
    cuda::Assembly& a = *keep;
    std::vector<SummationMethod> methods = {SummationMethod::PerEntry, SummationMethod::PerSimplex};
    if (order == 1) methods.push_back(SummationMethod::Inline);
    std::map<SummationMethod, std::vector<double>> sum_only;
    std::map<SummationMethod, double> first_call;
    std::map<SummationMethod, std::size_t> kept_bytes; // element blocks each method stores
    for (SummationMethod method : methods) {
        a.sum(method, lame); // warm-up (per-simplex: materialises the linear element blocks)
        first_call[method] = a.times().summation;
        kept_bytes[method] = method == SummationMethod::PerEntry     ? elem_b
                             : method == SummationMethod::PerSimplex ? a.element_bytes()
                                                                     : 0;
        for (int r = 0; r < o.repeat; ++r) {
            a.sum(method, lame);
            sum_only[method].push_back(a.times().summation);
        }
    }
    a.sum(SummationMethod::PerEntry, lame);
    const BinBcsrPattern pattern = a.download_pattern();
    double ours_sum = 0; // sum of |values|: K's entries themselves sum to ~0 (rigid modes)
    {
        const BinBcsrMatrix<float> k = a.download_matrix(pattern);
        for (float v : k.values) ours_sum += std::abs(double(v));
        for (float v : k.diag) ours_sum += std::abs(double(v));
    }
    // Stored-block path: the element blocks written into device_element_blocks() in the full
    // layout (what a nonlinear material does), summed per entry; checked against the fused
    // linear path above.
    std::vector<float> blocks(9 * block_count);
    cpu::linear_elastic_element_blocks(mesh.positions, mesh.cells, order, lame, blocks.data());
    JsonObject stored;
    if (36.0 * double(block_count) < 0.5 * double(device_info().free_bytes)) {
        upload_element_blocks(a, blocks);
        std::vector<double> t_stored;
        a.sum(SummationMethod::PerEntry, lame); // warm-up
        for (int r = 0; r < o.repeat; ++r) {
            a.sum(SummationMethod::PerEntry, lame);
            t_stored.push_back(a.times().summation);
        }
        const BinBcsrMatrix<float> k = a.download_matrix(pattern);
        double diff = 0, scale = 0;
        a.compute_element_blocks(lame);
        a.sum(SummationMethod::PerEntry, lame);
        const BinBcsrMatrix<float> f = a.download_matrix(pattern);
        for (std::size_t i = 0; i < k.values.size(); ++i) {
            diff = std::max(diff, std::abs(double(k.values[i]) - double(f.values[i])));
            scale = std::max(scale, std::abs(double(f.values[i])));
        }
        for (std::size_t i = 0; i < k.diag.size(); ++i) {
            diff = std::max(diff, std::abs(double(k.diag[i]) - double(f.diag[i])));
            scale = std::max(scale, std::abs(double(f.diag[i])));
        }
        stored.add("summation_ms", median(t_stored))
            .add("element_bytes", a.element_bytes())
            .add("max_rel_diff_vs_fused", diff / std::max(scale, 1e-30));
    } else {
        stored.add("skipped", "element blocks above 50% of free device memory");
    }
    keep.reset(); // free the device for the peer

    // Peer: block COO -> BSR with CUB sort + reduce-by-key and cuSPARSE coo2csr.
    double peer_total = std::nan("");
    JsonObject baseline;
    baseline.add("name", "cub_coo_to_bsr")
        .add("description", "block-level COO (one 64-bit key per 3x3 element block): "
                            "cub::DeviceRadixSort::SortPairs, cub::DeviceRunLengthEncode, "
                            "segmented sum of blocks, cusparseXcoo2csr; temporaries allocated "
                            "and freed inside the timing");
    if (110.0 * double(block_count) > budget) {
        baseline.add("skipped", "estimated device memory above 60% of free memory");
    } else {
        const NodeLayout layout = make_node_layout(md.topology, order);
        const std::vector<Index> cell_nodes = cell_node_table(md.topology, mesh.cells, layout);
        const CooAssemblyResult peer =
            cub_coo_assembly(blocks, cell_nodes, num_cells, m, layout.num_nodes(), o.repeat);
        Samples ps;
        for (const CooAssemblyTimes& t : peer.runs) {
            ps.add("alloc", t.alloc), ps.add("keys", t.keys), ps.add("sort", t.sort);
            ps.add("reduce", t.reduce), ps.add("offsets", t.offsets), ps.add("free", t.free);
            ps.add("total", t.total);
        }
        JsonObject pm;
        for (const char* k : {"alloc", "keys", "sort", "reduce", "offsets", "free", "total"})
            pm.add(k, ps.med(k));
        peer_total = ps.med("total");
        baseline.add("median_ms", pm)
            .add("upload_ms", peer.upload_ms)
            .add("bytes", JsonObject()
                              .add("input", peer.input_bytes)
                              .add("peak_temp_and_output", peer.peak_temp_bytes)
                              .add("output_bsr", peer.output_bytes)
                              .add("peak_total", peer.input_bytes + peer.peak_temp_bytes))
            .add("check",
                 JsonObject()
                     .add("nnz_blocks", peer.nnz_blocks)
                     .add("same_nnz_blocks", peer.nnz_blocks == pattern.nnz_blocks())
                     .add("abs_value_sum_rel_diff", std::abs(peer.value_abs_sum - ours_sum) /
                                                        std::max(1e-30, peer.value_abs_sum)));
    }

    const std::size_t final_b = matrix_b + map_b + mesh_b;
    const JsonObject bytes =
        format_bytes(pattern, sizeof(float))
            .add("device_matrix", matrix_b)
            .add("maps", map_b)
            .add("element_blocks", elem_b)
            .add("mesh", mesh_b)
            .add("peak_device", peak)
            .add("peak_over_matrix_maps_mesh", double(peak) / double(final_b))
            .add("peak_over_matrix_maps_mesh_elements", double(peak) / double(final_b + elem_b))
            .add("device_total", dev.total_bytes);
    const double pattern_ms =
        s.med("count") + s.med("bin_offsets") + s.med("alloc") + s.med("columns");
    for (SummationMethod method : methods) {
        JsonObject med;
        med.add("count", s.med("count"))
            .add("bin_offsets", s.med("bin_offsets"))
            .add("alloc", s.med("alloc"))
            .add("columns", s.med("columns"));
        double total;
        if (method == SummationMethod::PerEntry) {
            med.add("maps", s.med("maps"))
                .add("element", s.med("element"))
                .add("summation", s.med("summation"))
                .add("total", s.med("total"))
                .add("pattern_and_maps", pattern_ms + s.med("maps"));
            total = s.med("total");
            med.add("total_excl_element", total - s.med("element"));
        } else {
            const double sum = median(sum_only[method]);
            total = pattern_ms + sum;
            if (method == SummationMethod::PerSimplex) {
                med.add("element", s.med("element"));
                total += s.med("element");
            }
            med.add("summation", sum).add("total", total);
            med.add("total_excl_element",
                    total - (method == SummationMethod::PerSimplex ? s.med("element") : 0.0));
        }
        med.add("summation_first_call", first_call[method]);
        med.add("summation_only", median(sum_only[method]))
            .add("upload", s.med("upload"))
            .add("topology_host_ms", md.topology_ms);
        JsonObject c = case_head(md, order, summation_method_name(method), pattern);
        c.add("median_ms", med).add("bytes", bytes).add("baseline", baseline);
        if (method == SummationMethod::PerEntry) c.add("stored_blocks", stored);
        // The peer starts from element blocks already on the device: compare without "element".
        double ours = total;
        if (method != SummationMethod::Inline) ours -= s.med("element");
        c.add("speedup", JsonObject().add("baseline_over_total_excl_element", peer_total / ours));
        c.add("scalar", "float");
        c.add("assembly",
              assembly_json("call", method == SummationMethod::Inline ? 0.0 : s.med("element"),
                            median(sum_only[method]), kept_bytes[method]));
        cases.push_back(c);
    }
}

} // namespace

void run_assembly_bench(const Options& o) {
    std::string device = "cpu";
    DeviceInfo dev;
    if (o.backend == "cuda") {
        EDN_VERIFY(built_with_cuda(), ErrorCode::Unsupported,
                   "--backend cuda: elastodyn-bench was built without CUDA");
        EDN_VERIFY(cuda_device_available(), ErrorCode::Unsupported,
                   "--backend cuda: no CUDA device");
        dev = device_info();
        device = dev.name;
    } else {
        device = "cpu (" + std::to_string(num_threads()) + " threads)";
    }
    JsonObject header = bench_header(o, device);
    header.add("topology", "host (build_topology); GPU topology is not part of these timings");
    const std::vector<Material> materials = bench_materials(o, {Material::Linear});
    const std::vector<SummationMethod> methods = bench_methods(o);
    const bool wants_inline =
        std::find(methods.begin(), methods.end(), SummationMethod::Inline) != methods.end();
    header.add("materials", "linear: the fused linear-elastic assembly (cuda::Assembly / the cpu "
                            "twins) with its peer; corotational, neohookean: the simulation "
                            "backend's element pass and summation (bench/README.md)");
    std::vector<JsonObject> cases;
    // One mesh file (--mesh), else the standard boxes within --max-tets, each made when needed.
    std::vector<BoxCase> boxes;
    if (o.mesh.empty())
        for (const BoxCase& box : standard_boxes(o.max_tets))
            if (box.tets() >= o.min_tets) boxes.push_back(box);
    const std::size_t meshes = o.mesh.empty() ? boxes.size() : 1;
    for (std::size_t i = 0; i < meshes; ++i) {
        const std::int64_t tets = o.mesh.empty() ? boxes[i].tets() : 0;
        bool any = !o.mesh.empty();
        for (int order : o.orders) any = any || order_runs_on(order, tets, kP3AssemblyLimit);
        if (!any) continue;
        const MeshData md = o.mesh.empty() ? make_mesh_data(boxes[i]) : load_mesh_data(o.mesh);
        for (int order : o.orders) {
            if (!order_runs_on(order, md.mesh.num_cells(), kP3AssemblyLimit)) continue;
            progress("assembly " + o.backend + " " + md.name + " (" +
                     std::to_string(md.mesh.num_cells()) + " tets) p=" + std::to_string(order));
            for (Material material : materials) {
                try {
                    if (material != Material::Linear)
                        backend_assembly_cases(md.name, md.mesh, order, material, o, cases);
                    else if (o.backend == "cuda")
                        cuda_case(md, order, o, dev, cases);
                    else
                        cpu_case(md, order, o, cases);
                    // The fused linear assembly sums inline at p = 1 only: at p >= 2 linear is
                    // also timed through the backend, whose inline covers every order.
                    if (material == Material::Linear && order >= 2 && wants_inline)
                        backend_assembly_cases(md.name, md.mesh, order, material, o, cases);
                } catch (const Error& e) {
                    if (e.code() != ErrorCode::OutOfMemory) throw;
                    cases.push_back(
                        skipped_case(md, order, std::string("out of memory: ") + e.what())
                            .add("material", material_name(material)));
                }
                header.add("inline_summary", inline_summary(cases));
                write_bench_json(o, header, cases, false);
            }
        }
    }
    write_bench_json(o, header, cases, true);
}

} // namespace edn::bench
