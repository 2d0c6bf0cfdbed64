// `bench pcg`: the cost of one block-Jacobi PCG iteration on a fixed matrix, per implementation
// variant of the CUDA solver (cuda/cuda_pcg.hpp), and iterations/time of a 1e-4 solve. The
// matrix is the linear-elastic stiffness of a box (E = 1e5, nu = 0.3) plus 1% of its mean
// diagonal on the diagonal (a mass-like shift, as in a dynamic step), assembled on the device.
// Per-iteration time: the difference of two capped solves (40 and 440 iterations, tolerance 0),
// so the set-up and the host copies cancel; best of `repeat`. Peer in the same run: the CPU PCG
// (cpu/pcg.cpp, float, all host threads) on the same matrix. CUDA only.
#include "bench_common.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cuda/cuda_assembly.hpp"
#include "cuda/cuda_pcg.hpp"
#include "fem/linear_elasticity.hpp"
#include "mesh/box_mesh.hpp"
#include "solver/pcg.hpp"
#include "sparse/bin_bcsr_pattern.hpp"
#include "sparse/summation.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

namespace edn::bench {
namespace {

struct Variant {
    std::string name;
    cuda::PcgOptions options;
};

std::vector<Variant> variants() {
    std::vector<Variant> v;
    const cuda::PcgOptions standard; // the defaults: upper part where it pays, fused, 8 MB
    v.push_back(
        {"default (upper part for p = 1 systems of >= 16K rows, else full; fused)", standard});
    cuda::PcgOptions upper = standard;
    upper.tuning.upper_min_rows = 0;
    upper.tuning.upper_max_width = 1e9;
    v.push_back({"upper part (q = A (z + beta p) | update)", upper});
    cuda::PcgOptions upper_separate = upper;
    upper_separate.tuning.fused_direction = false;
    v.push_back({"upper part, separate direction (q = A p | update | direction)", upper_separate});
    cuda::PcgOptions full = standard;
    full.upper_spmv = false;
    v.push_back({"full matrix (q = A (z + beta p) | update; L2 prefetch 8 MB)", full});
    cuda::PcgOptions separate = full;
    separate.tuning.fused_direction = false;
    v.push_back({"full matrix, separate direction (q = A p | update | direction)", separate});
    for (int warps : {2, 4}) {
        cuda::PcgOptions w = separate;
        w.tuning.warps_per_bin = warps;
        v.push_back(
            {"full matrix, separate direction, " + std::to_string(warps) + " warps per bin", w});
    }
    for (int mb : {0, 4, 16}) {
        cuda::PcgOptions pf = standard;
        pf.tuning.prefetch_bytes = static_cast<std::size_t>(mb) << 20;
        v.push_back({mb == 0 ? std::string("default, no L2 prefetch")
                             : "default, L2 prefetch " + std::to_string(mb) + " MB",
                     pf});
    }
    cuda::PcgOptions pf0 = full;
    pf0.tuning.prefetch_bytes = 0;
    v.push_back({"full matrix, no L2 prefetch", pf0});
    return v;
}

std::vector<float> random_vector(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
}

} // namespace

void run_pcg_bench(const Options& o) {
    EDN_VERIFY(o.backend == "cuda", ErrorCode::Usage, "bench pcg needs --backend cuda");
    EDN_VERIFY(cuda_device_available(), ErrorCode::Unsupported, "no CUDA device for bench pcg");
    const JsonObject header = bench_header(o, cuda_device_name());
    std::vector<JsonObject> cases;
    const std::vector<int> orders = o.orders_given ? o.orders : std::vector<int>{1, 2};
    const int repeat = o.repeat > 0 ? o.repeat : 3;
    // 127K (the step benchmark's size), 403K, 998K (the "1M p = 1 tets" of the PCG target) and
    // 1.7M tets, within [--min-tets, --max-tets]; below 127K the largest standard box allowed.
    const BoxCase sizes[] = {{27, 28, 28}, {40, 41, 41}, {55, 55, 55}, {66, 66, 66}};
    std::vector<BoxCase> boxes;
    for (const BoxCase& box : sizes)
        if (box.tets() <= o.max_tets && box.tets() >= o.min_tets) boxes.push_back(box);
    if (boxes.empty() && !standard_boxes(o.max_tets).empty())
        boxes.push_back(standard_boxes(o.max_tets).back());
    for (const BoxCase& box : boxes)
        for (int order : orders) {
            if (order > 2 || (order == 2 && box.tets() > 450'000)) continue;
            progress("pcg " + box.name() + " p" + std::to_string(order));
            const TetMesh mesh = make_box_tet_mesh(box.nx, box.ny, box.nz, {0, 0, 0}, {1, 1, 1});
            cuda::Assembly assembly(mesh, order);
            assembly.build_pattern();
            if (order > 1) assembly.build_per_entry_map();
            const LameParameters<float> lame = lame_from_young_poisson(1e5f, 0.3f);
            if (order > 1) assembly.compute_element_blocks(lame);
            assembly.sum(order == 1 ? SummationMethod::Inline : SummationMethod::PerEntry, lame);
            const BinBcsrPattern pattern = assembly.download_pattern();
            BinBcsrMatrix<float> k = assembly.download_matrix(pattern);
            const std::size_t n = pattern.num_rows;
            double mean = 0;
            for (std::size_t row = 0; row < n; ++row)
                mean += (double(k.diag[row]) + k.diag[4 * n + row] + k.diag[8 * n + row]) /
                        (3.0 * double(n));
            for (std::size_t row = 0; row < n; ++row)
                for (int d = 0; d < 3; ++d)
                    k.diag[4 * d * n + row] += 0.01f * static_cast<float>(mean);
            const cuda::DeviceMatrix dm(k);
            const std::vector<float> b = random_vector(3 * n, 40);

            JsonObject c;
            c.add("mesh", box.name())
                .add("tets", box.tets())
                .add("order", order)
                .add("rows", static_cast<std::int64_t>(n))
                .add("nnz_blocks", static_cast<std::int64_t>(pattern.nnz_blocks()))
                .add("padded_blocks", static_cast<std::int64_t>(pattern.padded_blocks()));
            std::vector<JsonObject> results;
            for (const Variant& v : variants()) {
                cuda::Pcg pcg(static_cast<Index>(n), v.options);
                PcgSettings never; // tolerance 0: runs to the cap
                never.relative_tolerance = 0;
                never.warm_start = false;
                std::vector<float> x(3 * n, 0.f);
                never.max_iterations = 40;
                pcg.solve_host(dm.view(), b, x, never); // warm-up (and graph capture)
                const int short_cap = 40, long_cap = 440;
                std::vector<double> per_iteration;
                for (int rep = 0; rep < repeat; ++rep) {
                    never.max_iterations = short_cap;
                    double t0 = now_ms();
                    pcg.solve_host(dm.view(), b, x, never);
                    const double s = now_ms() - t0;
                    never.max_iterations = long_cap;
                    t0 = now_ms();
                    const PcgResult r = pcg.solve_host(dm.view(), b, x, never);
                    const double l = now_ms() - t0;
                    if (r.iterations == long_cap)
                        per_iteration.push_back(1e3 * (l - s) / (long_cap - short_cap));
                }
                PcgSettings real;
                real.relative_tolerance = 1e-4;
                real.max_iterations = 5000;
                real.warm_start = false;
                std::fill(x.begin(), x.end(), 0.f);
                const double t0 = now_ms();
                const PcgResult rr = pcg.solve_host(dm.view(), b, x, real);
                const double solve_ms = now_ms() - t0;
                JsonObject j;
                j.add("variant", v.name)
                    .add("us_per_iteration",
                         per_iteration.empty()
                             ? -1.0
                             : *std::min_element(per_iteration.begin(), per_iteration.end()))
                    .add("tol_1e-4_iterations", rr.iterations)
                    .add("tol_1e-4_converged", rr.converged)
                    .add("tol_1e-4_ms_incl_host_copies", solve_ms);
                results.push_back(j);
            }
            c.add("variants", results);
            // Peer: the CPU PCG on the same matrix (all host threads), 20 capped iterations.
            {
                PcgWorkspace<float> ws;
                PcgSettings cap;
                cap.relative_tolerance = 0;
                cap.warm_start = false;
                cap.max_iterations = 20;
                std::vector<float> x(3 * n, 0.f);
                cpu::pcg(k.view(), b.data(), x.data(), cap, ws); // warm-up
                const double t0 = now_ms();
                const PcgResult r = cpu::pcg(k.view(), b.data(), x.data(), cap, ws);
                const double ms = now_ms() - t0;
                c.add("baseline",
                      JsonObject()
                          .add("name", "cpu::pcg (float, host threads)")
                          .add("threads", num_threads())
                          .add("us_per_iteration", 1e3 * ms / std::max(1, r.iterations)));
            }
            cases.push_back(c);
            write_bench_json(o, header, cases, false);
        }
    write_bench_json(o, header, cases, true);
}

} // namespace edn::bench
