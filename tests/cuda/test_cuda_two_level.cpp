// CUDA two-level preconditioner (cuda/cuda_two_level.hpp, Pcg::solve_two_level) against the CPU
// twin (solver/two_level.hpp): coarse matrix, solves, and simulation trajectories. Skipped
// without a device.
#include "core/device.hpp"
#include "cuda/cuda_assembly.hpp"
#include "cuda/cuda_pcg.hpp"
#include "cuda/cuda_two_level.hpp"
#include "sim/simulation.hpp"
#include "solver/two_level.hpp"
#include "support/backend.hpp"
#include "support/compare.hpp"
#include "support/linear_system.hpp"
#include "support/random.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <memory>

namespace edn {
namespace {

using test::AssemblyFixture;

class CudaTwoLevel : public test::CudaOrderTest {};

/// K + shift I (shift = fraction * mean (0,0) diagonal entry), double and float.
struct ShiftedSystem {
    double shift = 0;
    BinBcsrMatrix<double> a;
    BinBcsrMatrix<float> af;
    ShiftedSystem(const AssemblyFixture& f, double fraction)
        : a(test::shifted_stiffness(f, fraction, test::DiagonalMean::FirstAxis, &shift)),
          af(test::to_float(a)) {}
};

TEST_P(CudaTwoLevel, CoarseMatrixEqualsCpu) {
    const int order = GetParam();
    AssemblyFixture f(
        test::shuffle_mesh(test::make_random_perturbed_box(6, 5, 4, 1, 1, 1, 0.1, 2), 3), order);
    cuda::CoarseLevel gpu(f.mesh, f.topology, f.layout);
    const std::vector<double> mass = test::random_vector(f.layout.num_nodes(), 4, 0.5, 2.0);
    const float scale = 3.f;
    gpu.assemble_host(std::vector<float>(f.element_blocks.begin(), f.element_blocks.end()),
                      std::vector<float>(mass.begin(), mass.end()), scale);
    const BinBcsrMatrix<float> got = gpu.download_matrix();
    const CoarseSpace host = make_coarse_space(f.mesh, f.topology, f.layout);
    EXPECT_EQ(gpu.space().pattern.columns, host.pattern.columns); // device P1 pattern
    EXPECT_EQ(gpu.space().pro_vertex, host.pro_vertex);
    BinBcsrMatrix<double> expected(host.pattern);
    std::vector<double> scratch, d(mass.size());
    for (std::size_t i = 0; i < mass.size(); ++i) d[i] = scale * mass[i];
    cpu::assemble_coarse(host, f.element_blocks.data(), f.mesh.num_cells(), d, scratch, expected);
    double scale_v = 0, diff = 0;
    for (std::size_t k = 0; k < expected.values.size(); ++k) {
        scale_v = std::max(scale_v, std::abs(expected.values[k]));
        diff = std::max(diff, std::abs(expected.values[k] - got.values[k]));
    }
    for (std::size_t k = 0; k < expected.diag.size(); ++k) {
        scale_v = std::max(scale_v, std::abs(expected.diag[k]));
        diff = std::max(diff, std::abs(expected.diag[k] - got.diag[k]));
    }
    EXPECT_GT(scale_v, 0);
    EXPECT_LT(diff, 2e-6 * scale_v);
}

TEST_P(CudaTwoLevel, SharedTopologyGivesTheSameCoarseLevel) {
    // The P1 level built on the fine assembly's device topology (the simulation's way) equals the
    // one built from the host topology: the same pattern, and the same matrix up to the float
    // rounding of another summation order (the device topology lists a vertex's cells in another
    // order, so the per-entry map adds the same contributions in another order).
    const int order = GetParam();
    AssemblyFixture f(
        test::shuffle_mesh(test::make_random_perturbed_box(5, 4, 4, 1, 1, 1, 0.1, 7), 5), order);
    std::unique_ptr<cuda::CoarseLevel> shared;
    {
        const cuda::Assembly fine(f.mesh, order); // device-built topology, released first
        shared = std::make_unique<cuda::CoarseLevel>(f.mesh, f.topology, f.layout, &fine);
    }
    cuda::CoarseLevel own(f.mesh, f.topology, f.layout);
    EXPECT_EQ(shared->space().pattern.columns, own.space().pattern.columns);
    EXPECT_EQ(shared->space().pattern.bin_offsets, own.space().pattern.bin_offsets);
    std::vector<float> mass(f.layout.num_nodes(), 1.5f);
    const std::vector<float> blocks(f.element_blocks.begin(), f.element_blocks.end());
    shared->assemble_host(blocks, mass, 2.f);
    own.assemble_host(blocks, mass, 2.f);
    const BinBcsrMatrix<float> a = shared->download_matrix(), b = own.download_matrix();
    ASSERT_EQ(a.values.size(), b.values.size());
    ASSERT_EQ(a.diag.size(), b.diag.size());
    double scale = 0, diff = 0;
    for (std::size_t k = 0; k < a.values.size(); ++k) {
        scale = std::max(scale, double(std::abs(b.values[k])));
        diff = std::max(diff, double(std::abs(a.values[k] - b.values[k])));
    }
    for (std::size_t k = 0; k < a.diag.size(); ++k) {
        scale = std::max(scale, double(std::abs(b.diag[k])));
        diff = std::max(diff, double(std::abs(a.diag[k] - b.diag[k])));
    }
    EXPECT_GT(scale, 0);
    EXPECT_LT(diff, 1e-6 * scale);
}

TEST_P(CudaTwoLevel, SolveMatchesCpuTwinAndBeatsBlockJacobi) {
    const int order = GetParam();
    const int n = order == 2 ? 10 : 6;
    AssemblyFixture f(test::make_random_perturbed_box(n, n, n, 1, 1, 1, 0.1, 5), order);
    ShiftedSystem s(f, 0.003);
    cuda::CoarseLevel gpu(f.mesh, f.topology, f.layout);
    const std::vector<float> shift_mass(f.layout.num_nodes(), static_cast<float>(s.shift));
    gpu.assemble_host(std::vector<float>(f.element_blocks.begin(), f.element_blocks.end()),
                      shift_mass, 1.f);
    const CoarseSpace host = make_coarse_space(f.mesh, f.topology, f.layout);
    BinBcsrMatrix<double> coarse(host.pattern);
    std::vector<double> scratch;
    cpu::assemble_coarse(host, f.element_blocks.data(), f.mesh.num_cells(),
                         std::vector<double>(f.layout.num_nodes(), s.shift), scratch, coarse);
    const Index rows = f.pattern.num_rows;
    const std::vector<Vec3> x0 = node_positions(f.mesh, f.topology, f.layout);
    for (bool pins : {false, true}) {
        SCOPED_TRACE(pins ? "pins" : "no pins");
        std::vector<std::uint8_t> fixed(rows, 0);
        if (pins)
            for (Index i = 0; i < rows; ++i) fixed[i] = x0[i][2] < 1e-9;
        std::vector<double> b(3 * std::size_t(rows));
        for (Index i = 0; i < rows; ++i) b[3 * i] = 0.1, b[3 * i + 1] = 0.0, b[3 * i + 2] = -1.0;
        PcgSettings settings;
        settings.relative_tolerance = 1e-5;
        settings.max_iterations = 3000;
        settings.warm_start = false;
        PcgSettings inner;
        inner.relative_tolerance = 0.1;
        inner.max_iterations = 16;
        std::vector<double> x_cpu(b.size(), 0.0);
        TwoLevelWorkspace ws;
        const PcgResult rc =
            cpu::pcg_two_level(s.a.view(), host, coarse.view(), b.data(), x_cpu.data(), settings,
                               inner, ws, pins ? fixed.data() : nullptr);
        ASSERT_TRUE(rc.converged);

        const cuda::DeviceMatrix dm(s.af);
        cuda::Pcg pcg(rows);
        const std::vector<float> bf(b.begin(), b.end());
        std::vector<float> xg(b.size(), 0.f), xj(b.size(), 0.f);
        const PcgResult rj =
            pcg.solve_host(dm.view(), bf, xj, settings, pins ? fixed : std::vector<std::uint8_t>{});
        ASSERT_TRUE(rj.converged);
        const PcgResult rg =
            pcg.solve_two_level_host(dm.view(), gpu.view(0.1, 16), bf, xg, settings,
                                     pins ? fixed : std::vector<std::uint8_t>{});
        EXPECT_TRUE(rg.converged);
        EXPECT_FALSE(rg.breakdown);
        EXPECT_LE(std::abs(rg.iterations - rc.iterations), std::max(3, rc.iterations / 4))
            << "gpu " << rg.iterations << " cpu " << rc.iterations;
        EXPECT_LT(2 * rg.iterations, rj.iterations)
            << "two-level " << rg.iterations << " block Jacobi " << rj.iterations;
        double diff = 0, norm = 0;
        for (std::size_t k = 0; k < b.size(); ++k) {
            diff = std::max(diff, std::abs(double(xg[k]) - x_cpu[k]));
            norm = std::max(norm, std::abs(x_cpu[k]));
        }
        EXPECT_LT(diff, 1e-3 * norm);
        if (pins)
            for (Index i = 0; i < rows; ++i)
                if (fixed[i]) {
                    EXPECT_EQ(xg[3 * i + 2], 0.f);
                }
        // Deterministic: the same solve gives the same bits.
        std::vector<float> xg2(b.size(), 0.f);
        const PcgResult rg2 =
            pcg.solve_two_level_host(dm.view(), gpu.view(0.1, 16), bf, xg2, settings,
                                     pins ? fixed : std::vector<std::uint8_t>{});
        EXPECT_EQ(rg2.iterations, rg.iterations);
        EXPECT_EQ(xg2, xg);
    }
}

INSTANTIATE_TEST_SUITE_P(Orders, CudaTwoLevel, ::testing::Values(2, 3));

TEST(CudaTwoLevelSimulation, TrajectoryMatchesCpuTwoLevel) {
    EDN_SKIP_WITHOUT_CUDA();
    const TetMesh mesh = test::make_box_mesh(5, 5, 5, 1.0, 1.0, 1.0);
    SimulationSettings s;
    s.order = 2;
    s.material = Material::NeoHookean;
    s.max_newton_iterations = 3;
    s.preconditioner = Preconditioner::TwoLevel;
    s.pcg.relative_tolerance = 1e-6;
    s.pcg.max_iterations = 1000;
    s.cg_forcing = false; // every solve to 1e-6: the twins compared, not the forcing term
    Simulation cpu(mesh, s);
    s.backend = Backend::Cuda;
    Simulation gpu(mesh, s);
    const std::vector<double> rest = cpu.positions();
    for (Index i = 0; i < cpu.num_nodes(); ++i)
        if (rest[3 * i + 2] < 1e-9) cpu.set_pinned(i, true), gpu.set_pinned(i, true);
    int cg_gpu = 0;
    for (int frame = 0; frame < 30; ++frame) {
        cpu.step();
        const StepResult r = gpu.step();
        cg_gpu += r.cg_iterations;
        EXPECT_EQ(r.pcg_breakdowns, 0);
        EXPECT_FALSE(r.recovered);
    }
    const std::vector<double> a = cpu.positions(), b = gpu.positions();
    const double diff = test::max_abs_diff(a, b);
    const double motion = test::max_abs_diff(a, rest);
    EXPECT_GT(motion, 1e-3);
    EXPECT_LT(diff, 1e-3 * motion);
    EXPECT_GT(cg_gpu, 0);
}

} // namespace
} // namespace edn
