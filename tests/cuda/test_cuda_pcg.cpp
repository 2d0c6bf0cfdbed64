// CUDA block-Jacobi PCG compared with the CPU twin on the same systems (skipped without a
// device), for every direction, launch and upper-part variant; plus a disabled timing printout.
#include "core/device.hpp"
#include "core/error.hpp"
#include "cuda/cuda_pcg.hpp"
#include "solver/pcg.hpp"
#include "sparse/sparse_fixtures.hpp"
#include "sparse/spmv.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <memory>
#include <random>

namespace edn {
namespace {

using test::AssemblyFixture;

/// K (linear elasticity) + `shift_fraction` * mean diagonal entry * I, in double and float.
struct System {
    std::unique_ptr<AssemblyFixture> f;
    BinBcsrMatrix<double> a;
    BinBcsrMatrix<float> af;

    System(const TetMesh& mesh, int order, double shift_fraction)
        : f(std::make_unique<AssemblyFixture>(mesh, order)), a(f->pattern), af(f->pattern) {
        const PerEntryMap map = cpu::build_per_entry_map(f->pattern, f->cell_nodes_view());
        cpu::sum_per_entry(map.view(), f->element_blocks.data(), a.view());
        const std::size_t n = rows();
        double mean = 0;
        for (std::size_t row = 0; row < n; ++row)
            mean += (a.diag[row] + a.diag[4 * n + row] + a.diag[8 * n + row]) / (3.0 * n);
        for (std::size_t row = 0; row < n; ++row)
            for (int d = 0; d < 3; ++d) a.diag[4 * d * n + row] += shift_fraction * mean;
        std::copy(a.values.begin(), a.values.end(), af.values.begin());
        std::copy(a.diag.begin(), a.diag.end(), af.diag.begin());
    }
    Index rows() const { return f->pattern.num_rows; }
    std::size_t dofs() const { return 3 * static_cast<std::size_t>(rows()); }
};

std::vector<double> random_vector(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> v(n);
    for (double& x : v) x = u(rng);
    return v;
}

template <class A, class B>
double relative_error(const std::vector<A>& x, const std::vector<B>& y) {
    double d = 0, s = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        d += (double(x[i]) - double(y[i])) * (double(x[i]) - double(y[i]));
        s += double(y[i]) * double(y[i]);
    }
    return std::sqrt(d / s);
}

/// Every implementation choice.
std::vector<cuda::PcgOptions> all_variants() {
    std::vector<cuda::PcgOptions> v;
    for (bool fused : {true, false})
        for (bool pdl : {true, false})
            for (bool graph : {true, false}) {
                cuda::PcgOptions o;
                o.tuning.fused_direction = fused;
                o.tuning.programmatic_launch = pdl;
                o.tuning.graph = graph;
                o.upper_spmv = false;
                v.push_back(o);
            }
    for (int warps : {1, 2, 4}) { // q = A p with 1, 2 or 4 warps per bin (unfused)
        cuda::PcgOptions o;
        o.tuning.warps_per_bin = warps;
        o.tuning.fused_direction = false;
        o.upper_spmv = false;
        v.push_back(o);
    }
    for (bool pdl : {true, false}) // no L2 prefetch of the matrix head (on by default)
        for (bool graph : {true, false}) {
            cuda::PcgOptions o;
            o.tuning.fused_direction = false;
            o.tuning.prefetch_bytes = 0;
            o.tuning.programmatic_launch = pdl;
            o.tuning.graph = graph;
            o.upper_spmv = false;
            v.push_back(o);
        }
    for (bool fused : {true, false}) // q = A p from the upper part (the default)
        for (bool pdl : {true, false})
            for (bool graph : {true, false})
                for (std::size_t prefetch : {std::size_t{8} << 20, std::size_t{0}}) {
                    if (prefetch == 0 && (!pdl || !graph)) continue;
                    cuda::PcgOptions o;
                    o.upper_spmv = true;
                    o.tuning.upper_min_rows = 0; // these systems are small: force it
                    o.tuning.upper_max_width = 1e9;
                    o.tuning.fused_direction = fused;
                    o.tuning.programmatic_launch = pdl;
                    o.tuning.graph = graph;
                    o.tuning.prefetch_bytes = prefetch;
                    v.push_back(o);
                    if (pdl && graph && prefetch > 0) { // the one-wave kernel variants
                        o.tuning.force_one_wave = true;
                        v.push_back(o);
                    }
                }
    return v;
}

std::string variant_name(const cuda::PcgOptions& o) {
    const cuda::PcgTuning& t = o.tuning;
    return std::string(t.fused_direction ? "fused" : "separate") +
           (t.programmatic_launch ? "+pdl" : "") + (t.graph ? "+graph" : "") +
           (t.warps_per_bin > 0 ? "+warps" + std::to_string(t.warps_per_bin) : "") +
           (t.prefetch_bytes == 0 ? "+no_prefetch" : "") + (o.upper_spmv ? "+upper" : "") +
           (t.force_one_wave ? "+one_wave" : "");
}

class CudaPcg : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override {
        if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device";
    }
};

std::vector<TetMesh> meshes(int order) {
    const int n = order == 1 ? 14 : 8; // many bins, for the warp schedulers
    return {test::make_random_perturbed_box(3, 3, 2, 1, 1, 1, 0.1, 21),
            test::shuffle_mesh(test::make_random_perturbed_box(6, 5, 4, 1.5, 1.2, 1, 0.12, 22), 6),
            test::shuffle_mesh(test::make_random_perturbed_box(n, n, n, 1, 1, 1, 0.1, 23), 7)};
}

TEST_P(CudaPcg, SpmvEqualsCpu) {
    for (const TetMesh& mesh : meshes(GetParam())) {
        System s(mesh, GetParam(), 0.05);
        const cuda::DeviceMatrix dm(s.af);
        const std::vector<double> xd = random_vector(s.dofs(), 30);
        const std::vector<float> x(xd.begin(), xd.end());
        std::vector<float> ref(s.dofs());
        cpu::spmv(s.af.view(), x.data(), ref.data());
        EXPECT_LT(relative_error(dm.multiply(x), ref), 1e-6);
    }
}

TEST_P(CudaPcg, UpperMatrixEqualsHostUpperPart) {
    // Device pattern and values equal the host construction exactly; the product equals the
    // full SpMV to float rounding; a second matrix (another pattern generation) is followed.
    cuda::UpperMatrix um;
    for (const TetMesh& mesh : meshes(GetParam())) {
        System s(mesh, GetParam(), 0.05);
        const cuda::DeviceMatrix dm(s.af);
        um.update(dm.view());
        const UpperPattern ref = build_upper_pattern(s.f->pattern);
        const UpperPattern got = um.download_pattern();
        EXPECT_EQ(got.num_rows, ref.num_rows);
        EXPECT_EQ(got.bin_offsets, ref.bin_offsets);
        EXPECT_EQ(got.columns, ref.columns);
        EXPECT_EQ(got.counts, ref.counts);
        EXPECT_EQ(got.first, ref.first);
        EXPECT_EQ(um.download_values(), gather_upper_values(s.af, ref));
        const std::vector<double> xd = random_vector(s.dofs(), 36);
        const std::vector<float> x(xd.begin(), xd.end());
        std::vector<float> y(s.dofs());
        cpu::spmv(s.af.view(), x.data(), y.data());
        for (int warps : {0, 1, 8}) {
            SCOPED_TRACE("warps per bin " + std::to_string(warps));
            EXPECT_LT(relative_error(um.multiply(x, warps), y), 1e-6);
        }
        um.update(dm.view()); // same generation: values only
        EXPECT_LT(relative_error(um.multiply(x), y), 1e-6);
        EXPECT_THROW(um.multiply(x, 3), Error);
    }
}

TEST_P(CudaPcg, SolveMatchesCpuDoubleAndFloat) {
    const int order = GetParam();
    for (const TetMesh& mesh : meshes(order)) {
        System s(mesh, order, 0.05);
        const std::vector<double> b = random_vector(s.dofs(), 31);
        const std::vector<float> bf(b.begin(), b.end());
        PcgSettings tight;
        tight.relative_tolerance = 1e-10;
        tight.max_iterations = 5000;
        tight.warm_start = false;
        std::vector<double> x_ref(s.dofs(), 0.0);
        PcgWorkspace<double> wsd;
        ASSERT_TRUE(cpu::pcg(s.a.view(), b.data(), x_ref.data(), tight, wsd).converged);

        PcgSettings settings;
        settings.relative_tolerance = 1e-5;
        settings.max_iterations = 2000;
        settings.warm_start = false;
        std::vector<float> x_cpu(s.dofs(), 0.f);
        PcgWorkspace<float> wsf;
        const PcgResult rc = cpu::pcg(s.af.view(), bf.data(), x_cpu.data(), settings, wsf);
        ASSERT_TRUE(rc.converged);

        const cuda::DeviceMatrix dm(s.af);
        for (const cuda::PcgOptions& o : all_variants()) {
            SCOPED_TRACE(variant_name(o));
            cuda::Pcg pcg(s.rows(), o);
            std::vector<float> x(s.dofs(), 3.f); // ignored: cold start
            const PcgResult r = pcg.solve_host(dm.view(), bf, x, settings);
            EXPECT_TRUE(r.converged);
            EXPECT_FALSE(r.breakdown);
            EXPECT_LE(r.final_residual, 1e-5 * r.reference_norm);
            EXPECT_NEAR(r.reference_norm, rc.reference_norm, 1e-6 * rc.reference_norm);
            EXPECT_NEAR(r.initial_residual, rc.initial_residual, 1e-5 * rc.initial_residual);
            EXPECT_LE(std::abs(r.iterations - rc.iterations), 3)
                << "gpu " << r.iterations << " cpu float " << rc.iterations;
            EXPECT_LT(relative_error(x, x_ref), 1e-3);
            // Deterministic: the same solve again gives the same bits; with the upper part the
            // atomics' order varies, so to rounding.
            std::vector<float> x2(s.dofs(), -1.f);
            const PcgResult r2 = pcg.solve_host(dm.view(), bf, x2, settings);
            if (!o.upper_spmv) {
                EXPECT_EQ(r2.iterations, r.iterations);
                EXPECT_EQ(x2, x);
            } else {
                EXPECT_LE(std::abs(r2.iterations - r.iterations), 1);
                EXPECT_LT(relative_error(x2, x), 1e-4);
            }
            // Warm start from the (float-rounded) solution: converged in 0 iterations.
            PcgSettings warm = settings;
            warm.warm_start = true;
            warm.relative_tolerance = 1e-4;
            std::vector<float> xw(x_ref.begin(), x_ref.end());
            const PcgResult w = pcg.solve_host(dm.view(), bf, xw, warm);
            EXPECT_TRUE(w.converged);
            EXPECT_EQ(w.iterations, 0);
        }
    }
}

TEST_P(CudaPcg, GraphReplayEqualsPlainLaunches) {
    // The chunk graph runs the same kernels in the same order: same bits, same iteration count,
    // for caps that end inside a chunk (the graph always runs whole chunks).
    const int order = GetParam();
    const TetMesh mesh = meshes(order)[1];
    System s(mesh, order, 0.05);
    const std::vector<double> b = random_vector(s.dofs(), 35);
    const std::vector<float> bf(b.begin(), b.end());
    const cuda::DeviceMatrix dm(s.af);
    for (int cap : {5, 13, 2000})
        for (int interval : {1, 3, 8})
            for (bool fused : {false, true}) {
                PcgSettings settings;
                settings.relative_tolerance = 1e-5;
                settings.max_iterations = cap;
                settings.warm_start = false;
                cuda::PcgOptions plain;
                plain.upper_spmv = false; // bitwise comparison: no atomics
                plain.tuning.graph = false;
                plain.tuning.check_interval = interval;
                plain.tuning.fused_direction = fused;
                cuda::PcgOptions graph = plain;
                graph.tuning.graph = true;
                cuda::Pcg a(s.rows(), plain), g(s.rows(), graph);
                std::vector<float> xa(s.dofs(), 0.f), xg(s.dofs(), 0.f);
                const PcgResult ra = a.solve_host(dm.view(), bf, xa, settings);
                const PcgResult rg = g.solve_host(dm.view(), bf, xg, settings);
                SCOPED_TRACE("cap " + std::to_string(cap) + " interval " +
                             std::to_string(interval) + (fused ? " fused" : ""));
                EXPECT_EQ(ra.iterations, rg.iterations);
                EXPECT_LE(rg.iterations, cap);
                EXPECT_EQ(ra.converged, rg.converged);
                EXPECT_EQ(xa, xg);
            }
}

TEST_P(CudaPcg, PinsZeroRhsWarmStartCapAndBreakdown) {
    const int order = GetParam();
    System s(test::make_random_perturbed_box(5, 4, 3, 1.5, 1, 1, 0.1, 24), order, 0.0);
    const Index n = s.rows();
    const auto nodes = node_positions(s.f->mesh, s.f->topology, s.f->layout);
    std::vector<std::uint8_t> fixed(n, 0);
    for (Index i = 0; i < n; ++i) fixed[i] = nodes[i][2] < 1e-9 ? 1 : 0;
    const std::vector<double> b = random_vector(s.dofs(), 32);
    const std::vector<double> x0 = random_vector(s.dofs(), 33);
    const std::vector<float> bf(b.begin(), b.end());
    const std::vector<float> x0f(x0.begin(), x0.end());
    const cuda::DeviceMatrix dm(s.af);

    for (const cuda::PcgOptions& o : all_variants()) {
        SCOPED_TRACE(variant_name(o));
        cuda::Pcg pcg(n, o);
        // Pins (pure K: SPD on the free dofs), against the CPU double solve.
        PcgSettings settings;
        settings.relative_tolerance = 1e-6;
        settings.max_iterations = 3000;
        settings.warm_start = false;
        std::vector<double> x_ref(x0.begin(), x0.end());
        PcgWorkspace<double> wsd;
        PcgSettings tight = settings;
        tight.relative_tolerance = 1e-10;
        ASSERT_TRUE(
            cpu::pcg(s.a.view(), b.data(), x_ref.data(), tight, wsd, fixed.data()).converged);
        std::vector<float> x = x0f;
        const PcgResult r = pcg.solve_host(dm.view(), bf, x, settings, fixed);
        EXPECT_TRUE(r.converged);
        EXPECT_LT(relative_error(x, x_ref), 1e-3);
        for (std::size_t i = 0; i < x.size(); ++i) {
            if (fixed[i / 3]) {
                ASSERT_EQ(x[i], x0f[i]) << "fixed dof " << i << " moved";
            }
        }

        settings.warm_start = true;
        settings.relative_tolerance = 1e-4;
        // b = 0 without pins: x = 0 at once.
        std::vector<float> xz = x0f;
        const PcgResult z =
            pcg.solve_host(dm.view(), std::vector<float>(s.dofs(), 0.f), xz, settings);
        EXPECT_TRUE(z.converged);
        EXPECT_EQ(z.iterations, 0);
        EXPECT_EQ(xz, std::vector<float>(s.dofs(), 0.f));

        // Iteration cap across a check interval boundary: exactly 13 updates, finite.
        settings.relative_tolerance = 1e-12;
        settings.max_iterations = 13;
        std::vector<float> xc(s.dofs(), 0.f);
        const PcgResult c = pcg.solve_host(dm.view(), bf, xc, settings, fixed);
        EXPECT_FALSE(c.converged);
        EXPECT_FALSE(c.breakdown);
        EXPECT_EQ(c.iterations, 13);
        EXPECT_TRUE(std::all_of(xc.begin(), xc.end(), [](float v) { return std::isfinite(v); }));
        // Same cap on the CPU float twin: same count, close iterates.
        std::vector<float> xcc(s.dofs(), 0.f);
        PcgWorkspace<float> wsf;
        const PcgResult cc =
            cpu::pcg(s.af.view(), bf.data(), xcc.data(), settings, wsf, fixed.data());
        EXPECT_EQ(cc.iterations, 13);
        EXPECT_LT(relative_error(xc, xcc), 1e-3);
    }

    // -(K + cI): breakdown at the first step, x untouched.
    System neg(test::make_random_perturbed_box(3, 3, 3, 1, 1, 1), order, 0.05);
    for (float& v : neg.af.values) v = -v;
    for (float& v : neg.af.diag) v = -v;
    const cuda::DeviceMatrix dneg(neg.af);
    cuda::Pcg pcg(neg.rows());
    const std::vector<double> bn = random_vector(neg.dofs(), 34);
    std::vector<float> xn(neg.dofs(), 0.5f);
    const PcgResult r =
        pcg.solve_host(dneg.view(), std::vector<float>(bn.begin(), bn.end()), xn, PcgSettings{});
    EXPECT_TRUE(r.breakdown);
    EXPECT_FALSE(r.converged);
    EXPECT_EQ(r.iterations, 0);
    EXPECT_EQ(xn, std::vector<float>(neg.dofs(), 0.5f));
}

INSTANTIATE_TEST_SUITE_P(Orders, CudaPcg, ::testing::Values(1, 2));

} // namespace
} // namespace edn
