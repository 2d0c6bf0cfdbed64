// CUDA block-Jacobi PCG compared with the CPU twin on the same systems (skipped without a
// device), for every direction, launch and upper-part variant. The properties both twins share are in
// solver/test_pcg.cpp (PcgTwins, instances .../Cuda_p1, .../Cuda_p2).
#include "core/error.hpp"
#include "cuda/cuda_pcg.hpp"
#include "solver/pcg.hpp"
#include "sparse/spmv.hpp"
#include "support/backend.hpp"
#include "support/compare.hpp"
#include "support/linear_system.hpp"
#include "support/pcg_twins.hpp"
#include "support/random.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <memory>

namespace edn {
namespace {

using System = test::LinearSystem;
using test::random_vector;
using test::relative_error;

class CudaPcg : public test::CudaOrderTest {};

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
        for (const cuda::PcgOptions& o : test::cuda_pcg_variants()) {
            SCOPED_TRACE(test::pcg_variant_name(o));
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

TEST_P(CudaPcg, PinsAndIterationCapMatchCpu) {
    // Pinned solves against the CPU double solve, and an iteration cap that ends inside a check
    // interval against the CPU float twin. (b = 0, pins untouched, breakdown: PcgTwins.)
    const int order = GetParam();
    System s(test::make_random_perturbed_box(5, 4, 3, 1.5, 1, 1, 0.1, 24), order, 0.0);
    const std::vector<std::uint8_t> fixed = s.bottom_nodes();
    const std::vector<double> b = random_vector(s.dofs(), 32);
    const std::vector<double> x0 = random_vector(s.dofs(), 33);
    const std::vector<float> bf(b.begin(), b.end());
    const std::vector<float> x0f(x0.begin(), x0.end());
    const cuda::DeviceMatrix dm(s.af);

    for (const cuda::PcgOptions& o : test::cuda_pcg_variants()) {
        SCOPED_TRACE(test::pcg_variant_name(o));
        cuda::Pcg pcg(s.rows(), o);
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

        // Iteration cap across a check interval boundary: exactly 13 updates, finite.
        settings.warm_start = true;
        settings.relative_tolerance = 1e-12;
        settings.max_iterations = 13;
        std::vector<float> xc(s.dofs(), 0.f);
        const PcgResult c = pcg.solve_host(dm.view(), bf, xc, settings, fixed);
        EXPECT_FALSE(c.converged);
        EXPECT_FALSE(c.breakdown);
        EXPECT_EQ(c.iterations, 13);
        EXPECT_TRUE(test::all_finite(xc));
        // Same cap on the CPU float twin: same count, close iterates.
        std::vector<float> xcc(s.dofs(), 0.f);
        PcgWorkspace<float> wsf;
        const PcgResult cc =
            cpu::pcg(s.af.view(), bf.data(), xcc.data(), settings, wsf, fixed.data());
        EXPECT_EQ(cc.iterations, 13);
        EXPECT_LT(relative_error(xc, xcc), 1e-3);
    }
}

INSTANTIATE_TEST_SUITE_P(Orders, CudaPcg, ::testing::Values(1, 2));

} // namespace
} // namespace edn
