// `bench spmv`: Bin-BCSR* SpMV (warp-dynamic bins on the GPU, cpu::spmv on the CPU) against its
// peers in the same run: cuSPARSE BSR (3x3) and CSR SpMV on the GPU, Eigen row-major SpMV on the
// CPU; with the byte floor of the product and the achieved bandwidth.
#include "bench_common.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cuda/cuda_assembly.hpp"
#include "cuda/cuda_pcg.hpp"
#include "cuda_peers.hpp"
#include "mesh/node_layout.hpp"
#include "sparse/bin_bcsr_matrix.hpp"
#include "sparse/spmv.hpp"
#include "sparse/summation.hpp"

#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <random>

namespace edn::bench {
namespace {

constexpr double kYoung = 1.0e5;
constexpr double kPoisson = 0.3;
/// Largest mesh that runs p = 3 in the SpMV benchmark (the 400K-tet box): the BSR and CSR
/// copies of larger p = 3 matrices make the run too long for one benchmark call.
constexpr std::int64_t kP3SpmvLimit = 450'000;
/// Nominal H100 SXM HBM3 bandwidth used as a second reference (the measured copy is the first).
constexpr double kNominalGbps = 3000.0;

/// Bytes a y = A x must move at least: stored values and columns of the off-diagonal blocks
/// (padding excluded), the diagonal blocks, x read once and y written once.
double byte_floor(const BinBcsrPattern& p, std::size_t scalar) {
    const double off = double(p.nnz_blocks() - p.num_rows);
    return off * (9.0 * scalar + 4.0) + double(p.num_rows) * (9.0 * scalar + 6.0 * scalar);
}

template <class T> std::vector<T> random_vector(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(u(rng));
    return v;
}

template <class T> double max_rel_diff(const std::vector<T>& y, const std::vector<T>& ref) {
    double d = 0, s = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        d = std::max(d, std::abs(double(y[i]) - double(ref[i])));
        s = std::max(s, std::abs(double(ref[i])));
    }
    return s > 0 ? d / s : d;
}

/// 3x3 BSR (row-major blocks, diagonal merged in column order) of a Bin-BCSR* matrix.
template <class T> HostBsr to_bsr(const BinBcsrMatrix<T>& k) {
    const BinBcsrPattern& p = *k.pattern;
    HostBsr b;
    b.num_rows = p.num_rows;
    b.row_offsets.assign(p.num_rows + 1, 0);
    for (Index r = 0; r < p.num_rows; ++r)
        b.row_offsets[r + 1] = b.row_offsets[r] + p.row_counts[r] + 1;
    b.columns.resize(b.row_offsets.back());
    b.values.resize(9 * b.columns.size());
    parallel_for(0, p.num_rows, [&](std::int64_t row64) {
        const Index row = static_cast<Index>(row64);
        Index at = b.row_offsets[row];
        bool diag_done = false;
        auto put_diag = [&] {
            b.columns[at] = row;
            for (int e = 0; e < 9; ++e)
                b.values[9 * std::size_t(at) + e] =
                    float(k.diag[std::size_t(e) * p.num_rows + row]);
            ++at;
            diag_done = true;
        };
        for (Index j = 0; j < p.row_counts[row]; ++j) {
            const Index col = p.columns[p.view().slot(row, j)];
            if (!diag_done && col > row) put_diag();
            b.columns[at] = col;
            for (int e = 0; e < 9; ++e)
                b.values[9 * std::size_t(at) + e] =
                    float(k.values[bin_bcsr_value_index(p.bin_offsets.data(), row, j, e)]);
            ++at;
        }
        if (!diag_done) put_diag();
    });
    return b;
}

JsonObject case_head(const MeshData& md, int order, const BinBcsrPattern& p) {
    JsonObject c;
    c.add("mesh", md.box.name())
        .add("tets", md.box.tets())
        .add("order", order)
        .add("method", "bin_bcsr_spmv")
        .add("nodes", p.num_rows)
        .add("nnz_blocks", p.nnz_blocks());
    return c;
}

void cpu_case(const MeshData& md, int order, const Options& o, std::vector<JsonObject>& cases) {
    const NodeLayout layout = make_node_layout(md.topology, order);
    const int m = nodes_per_cell(order);
    const BinBcsrPattern pattern = build_bin_bcsr_pattern(md.topology, md.mesh.cells, layout);
    const std::vector<Index> cell_nodes = cell_node_table(md.topology, md.mesh.cells, layout);
    const PerEntryMap map =
        cpu::build_per_entry_map(pattern, {cell_nodes.data(), m, md.mesh.num_cells()});
    std::vector<double> blocks(9 * std::size_t(md.mesh.num_cells()) * m * m);
    cpu::linear_elastic_element_blocks(md.mesh.positions, md.mesh.cells, order,
                                       lame_from_young_poisson(kYoung, kPoisson), blocks.data());
    BinBcsrMatrix<double> k(pattern);
    cpu::sum_per_entry(map.view(), blocks.data(), k.view());
    blocks = {};

    const std::size_t n = 3 * std::size_t(pattern.num_rows);
    const std::vector<double> x = random_vector<double>(n, 7);
    std::vector<double> y(n), y_eigen(n);
    const double floor = byte_floor(pattern, sizeof(double));
    const int iterations = std::clamp(static_cast<int>(2e9 / floor), 3, 100);
    auto time_loop = [&](auto&& fn) {
        fn();
        std::vector<double> samples;
        for (int r = 0; r < o.repeat; ++r) {
            const double t = now_ms();
            for (int i = 0; i < iterations; ++i) fn();
            samples.push_back((now_ms() - t) / iterations);
        }
        return median(samples);
    };
    const double ours = time_loop([&] { cpu::spmv(k.view(), x.data(), y.data()); });

    using EigenMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor, int>;
    EigenMatrix a(static_cast<int>(n), static_cast<int>(n));
    {
        const auto coo = to_coo(k);
        std::vector<Eigen::Triplet<double, int>> t;
        t.reserve(coo.size());
        for (const auto& e : coo) t.emplace_back(int(e.row), int(e.col), e.value);
        a.setFromTriplets(t.begin(), t.end());
    }
    Eigen::setNbThreads(num_threads());
    const Eigen::Map<const Eigen::VectorXd> ex(x.data(), static_cast<Eigen::Index>(n));
    Eigen::Map<Eigen::VectorXd> ey(y_eigen.data(), static_cast<Eigen::Index>(n));
    const double eigen_ms = time_loop([&] { ey.noalias() = a * ex; });

    JsonObject c = case_head(md, order, pattern);
    c.add("median_ms", JsonObject().add("spmv", ours))
        .add("bytes", JsonObject()
                          .add("byte_floor", floor)
                          .add("bin_bcsr", pattern.matrix_bytes(sizeof(double)))
                          .add("eigen_csr", std::size_t(a.nonZeros()) * 12 + (n + 1) * 4))
        .add("bandwidth_gbps", floor / (ours * 1e-3) / 1e9)
        .add("baseline", JsonObject()
                             .add("name", "eigen_rowmajor_spmv")
                             .add("threads", Eigen::nbThreads())
                             .add("median_ms", eigen_ms)
                             .add("bandwidth_gbps", floor / (eigen_ms * 1e-3) / 1e9)
                             .add("max_rel_diff", max_rel_diff(y, y_eigen)))
        .add("speedup", JsonObject().add("over_eigen", eigen_ms / ours))
        .add("iterations", iterations)
        .add("scalar", "double");
    cases.push_back(c);
}

void cuda_case(const MeshData& md, int order, const Options& o, double copy_gbps,
               std::vector<JsonObject>& cases) {
    const auto lame_d = lame_from_young_poisson(kYoung, kPoisson);
    const LameParameters<float> lame{float(lame_d.lambda), float(lame_d.mu)};
    const int m = nodes_per_cell(order);
    const double block_count = double(md.mesh.num_cells()) * m * m;
    if (90.0 * block_count > 0.6 * double(device_info().free_bytes)) {
        cases.push_back(JsonObject()
                            .add("mesh", md.box.name())
                            .add("tets", md.box.tets())
                            .add("order", order)
                            .add("method", "bin_bcsr_spmv")
                            .add("skipped", "estimated device memory above 60% of free memory"));
        return;
    }
    BinBcsrPattern pattern;
    std::vector<float> y_ours;
    std::vector<float> x;
    double ours = 0, upper_ms = 0;
    std::vector<float> y_upper;
    std::size_t upper_bytes = 0;
    int iterations = 0;
    HostBsr bsr;
    {
        cuda::Assembly a(md.mesh, md.topology, order);
        a.build_pattern();
        a.build_per_entry_map();
        a.compute_element_blocks(lame);
        a.sum(SummationMethod::PerEntry, lame);
        pattern = a.download_pattern();
        const std::size_t n = 3 * std::size_t(pattern.num_rows);
        x = random_vector<float>(n, 7);
        DeviceFloats dx(x), dy(std::vector<float>(n, 0.0f));
        iterations =
            std::clamp(static_cast<int>(4e9 / byte_floor(pattern, sizeof(float))), 20, 200);
        ours = time_device_ms([&] { a.spmv_device(dx.data(), dy.data()); }, iterations, o.repeat);
        y_ours = dy.download();
        // The upper part (the PCG's q = A p): zeroing y4 included in its time.
        cuda::UpperMatrix upper;
        upper.update(a.device_matrix());
        DeviceFloats dy4(std::vector<float>(4 * std::size_t(pattern.num_rows), 0.0f));
        upper_ms = time_device_ms([&] { upper.multiply_device(dx.data(), dy4.data()); }, iterations,
                                  o.repeat);
        const std::vector<float> y4 = dy4.download();
        y_upper.resize(y_ours.size());
        for (std::size_t i = 0; i < y_upper.size(); ++i) y_upper[i] = y4[4 * (i / 3) + i % 3];
        upper_bytes = upper.bytes();
        const BinBcsrMatrix<float> k = a.download_matrix(pattern);
        bsr = to_bsr(k);
    }
    const CusparseSpmvResult peer = cusparse_spmv(bsr, x, y_ours, iterations, o.repeat);
    const double floor = byte_floor(pattern, sizeof(float));
    const double gbps = floor / (ours * 1e-3) / 1e9;
    JsonObject c = case_head(md, order, pattern);
    c.add("median_ms", JsonObject().add("spmv", ours))
        .add("bytes", JsonObject()
                          .add("byte_floor", floor)
                          .add("bin_bcsr", pattern.matrix_bytes(sizeof(float)))
                          .add("bin_bcsr_read_with_padding",
                               double(pattern.num_slots()) * 40.0 + double(pattern.num_rows) * 60.0)
                          .add("bsr", peer.bsr_bytes)
                          .add("csr", peer.csr_bytes))
        .add("bandwidth_gbps", gbps)
        .add("fraction_of_copy_bandwidth", gbps / copy_gbps)
        .add("fraction_of_3000_gbps", gbps / kNominalGbps)
        .add("baseline",
             JsonObject()
                 .add("name", "cusparse_bsr_spmv")
                 .add("description", "cusparseSbsrmv, 3x3 row-major blocks, same values")
                 .add("median_ms", peer.bsr_ms)
                 .add("bandwidth_gbps", floor / (peer.bsr_ms * 1e-3) / 1e9)
                 .add("max_rel_diff", peer.bsr_max_rel_diff))
        .add("baseline_csr",
             JsonObject()
                 .add("name", "cusparse_csr_spmv")
                 .add("description", "cusparseSpMV CSR_ALG1, scalar CSR of the same matrix")
                 .add("median_ms", peer.csr_ms)
                 .add("bandwidth_gbps", floor / (peer.csr_ms * 1e-3) / 1e9)
                 .add("max_rel_diff", peer.csr_max_rel_diff))
        .add("speedup", JsonObject()
                            .add("over_bsr", peer.bsr_ms / ours)
                            .add("over_csr", peer.csr_ms / ours)
                            .add("best_over_bsr", peer.bsr_ms / std::min(ours, upper_ms)))
        .add("upper",
             JsonObject()
                 .add("description",
                      "the matrix's upper part (cuda::UpperMatrix): each off-diagonal block read "
                      "once, transposed products by float4 L2 atomics; zeroing y included")
                 .add("median_ms", upper_ms)
                 .add("bytes", upper_bytes)
                 .add("full_floor_fraction", floor / (upper_ms * 1e-3) / 1e9 / copy_gbps)
                 .add("speedup_over_bsr", peer.bsr_ms / upper_ms)
                 .add("speedup_over_full", ours / upper_ms)
                 .add("max_rel_diff", max_rel_diff(y_upper, y_ours)))
        .add("iterations", iterations)
        .add("scalar", "float");
    cases.push_back(c);
}

} // namespace

void run_spmv_bench(const Options& o) {
    std::string device;
    double copy_gbps = 0;
    if (o.backend == "cuda") {
        EDN_VERIFY(built_with_cuda(), ErrorCode::Unsupported,
                   "--backend cuda: elastodyn-bench was built without CUDA");
        EDN_VERIFY(cuda_device_available(), ErrorCode::Unsupported,
                   "--backend cuda: no CUDA device");
        device = device_info().name;
        copy_gbps = copy_bandwidth_gbps(std::size_t(1) << 30, 5);
    } else {
        device = "cpu (" + std::to_string(num_threads()) + " threads)";
    }
    JsonObject header = bench_header(o, device);
    if (o.backend == "cuda")
        header.add("copy_bandwidth_gbps", copy_gbps)
            .add("copy_bandwidth_note", "cudaMemcpy D2D of 1 GiB, bytes read + written per second");
    std::vector<JsonObject> cases;
    for (const BoxCase& box : standard_boxes(o.max_tets)) {
        if (box.tets() < o.min_tets) continue;
        bool any = false;
        for (int order : o.orders) any = any || order_runs_on(order, box.tets(), kP3SpmvLimit);
        if (!any) continue;
        const MeshData md = make_mesh_data(box);
        for (int order : o.orders) {
            if (!order_runs_on(order, box.tets(), kP3SpmvLimit)) continue;
            progress("spmv " + o.backend + " " + box.name() + " p=" + std::to_string(order));
            try {
                if (o.backend == "cuda")
                    cuda_case(md, order, o, copy_gbps, cases);
                else
                    cpu_case(md, order, o, cases);
            } catch (const Error& e) {
                if (e.code() != ErrorCode::OutOfMemory) throw;
                cases.push_back(JsonObject()
                                    .add("mesh", box.name())
                                    .add("tets", box.tets())
                                    .add("order", order)
                                    .add("method", "bin_bcsr_spmv")
                                    .add("skipped", std::string("out of memory: ") + e.what()));
            }
            write_bench_json(o, header, cases, false);
        }
    }
    write_bench_json(o, header, cases, true);
}

} // namespace edn::bench
