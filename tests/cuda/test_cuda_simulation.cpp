// CUDA and CPU trajectories agree (the device's double Newton level over a float matrix and PCG
// vs double on the host), skipped without a device. Checks of one backend at a time run on both:
// sim/test_simulation.cpp (SimulationPerBackend).
#include "mesh/box_mesh.hpp"
#include "sim/drag_region.hpp"
#include "sim/simulation.hpp"
#include "support/backend.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <gtest/gtest.h>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace edn {
namespace {

/// The 2 x 2 x 3 box (0.2 x 0.2 x 0.3 m) of the small comparisons.
TetMesh twin_box() {
    return make_box_tet_mesh(2, 2, 3, {0, 0, 0}, {0.2, 0.2, 0.3});
}

/// s on the CUDA backend.
SimulationSettings on_cuda(SimulationSettings s) {
    s.backend = Backend::Cuda;
    return s;
}

/// max |reference[k]| and max |reference[k] - other[k]| of two vectors of one length.
struct Deviation {
    double scale = 0, diff = 0;
};
Deviation deviation(const std::vector<double>& reference, const std::vector<double>& other) {
    Deviation d;
    for (std::size_t k = 0; k < reference.size(); ++k)
        d.scale = std::max(d.scale, std::abs(reference[k])),
        d.diff = std::max(d.diff, std::abs(reference[k] - other[k]));
    return d;
}

struct TrajectoryCase {
    int order;
    Material material;
    SummationMethod summation;
    Integrator integrator;
};

class CudaSimulationTest : public ::testing::TestWithParam<TrajectoryCase> {
protected:
    void SetUp() override { EDN_SKIP_WITHOUT_CUDA(); }
};

TEST_P(CudaSimulationTest, TrajectoryMatchesCpuOver100Frames) {
    const TrajectoryCase c = GetParam();
    SimulationSettings s;
    s.order = c.order;
    s.material = c.material;
    s.summation = c.summation;
    s.integrator = c.integrator;
    s.young = 2e5;
    s.poisson = 0.3;
    s.density = 1000;
    s.dt = 1.0 / 60;
    s.max_newton_iterations = 8;
    s.newton_tolerance = 1e-4;
    s.pcg.relative_tolerance = 1e-5; // reachable in float
    s.pcg.max_iterations = 2000;
    s.cg_forcing = false; // every solve to 1e-5: the twins compared, not the forcing term
    s.gravity = {0, 0, -9.81};
    const TetMesh mesh = make_box_tet_mesh(2, 2, 6, {0, 0, 0}, {0.2, 0.2, 0.6});
    // Sideways gravity on a beam standing on its clamped end: it bends and swings.
    s.gravity = {-9.81, 0, 0};
    SimulationSettings gpu_settings = s;
    gpu_settings.backend = Backend::Cuda;
    Simulation cpu(mesh, s), gpu(mesh, gpu_settings);
    cpu.pin_below(1e-9);
    gpu.pin_below(1e-9);
    double worst = 0, scale = 0;
    for (int frame = 0; frame < 100; ++frame) {
        const StepResult rc = cpu.step();
        const StepResult rg = gpu.step();
        ASSERT_FALSE(rg.recovered) << "frame " << frame;
        const auto xc = cpu.positions(), xg = gpu.positions();
        const auto& rest = cpu.rest_positions();
        for (std::size_t k = 0; k < xc.size(); ++k) {
            ASSERT_TRUE(std::isfinite(xg[k]));
            worst = std::max(worst, std::abs(xc[k] - xg[k]));
            scale = std::max(scale, std::abs(xc[k] - rest[k]));
        }
        (void)rc;
    }
    EXPECT_GT(scale, 1e-3) << "the beam must actually move";
    EXPECT_LT(worst, 0.02 * scale) << "max |x_cpu - x_gpu| over 100 frames vs max displacement";
    const auto sc = cpu.von_mises_stress(), sg = gpu.von_mises_stress();
    ASSERT_EQ(sc.size(), sg.size());
    double smax = 0, sdiff = 0;
    for (std::size_t i = 0; i < sc.size(); ++i)
        smax = std::max(smax, sc[i]), sdiff = std::max(sdiff, std::abs(sc[i] - sg[i]));
    EXPECT_LT(sdiff, 0.05 * smax);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CudaSimulationTest,
    ::testing::Values(
        TrajectoryCase{1, Material::NeoHookean, SummationMethod::PerEntry,
                       Integrator::BackwardEuler},
        TrajectoryCase{1, Material::Corotational, SummationMethod::PerSimplex,
                       Integrator::BackwardEuler},
        TrajectoryCase{1, Material::Linear, SummationMethod::Inline, Integrator::BackwardEuler},
        TrajectoryCase{2, Material::NeoHookean, SummationMethod::PerEntry, Integrator::Midpoint},
        TrajectoryCase{2, Material::Corotational, SummationMethod::PerEntry,
                       Integrator::BackwardEuler},
        TrajectoryCase{3, Material::NeoHookean, SummationMethod::PerEntry,
                       Integrator::BackwardEuler}),
    [](const auto& info) {
        return std::string(material_name(info.param.material)) + "_p" +
               std::to_string(info.param.order) + "_" +
               summation_method_name(info.param.summation) + "_" +
               integrator_name(info.param.integrator);
    });

/// A CPU-vs-CUDA case of the converged trajectories: Rayleigh damping on or off.
struct ConvergedCase {
    int order;
    Material material;
    SummationMethod summation;
    bool damping;
};

class CudaConvergedTrajectoryTest : public ::testing::TestWithParam<ConvergedCase> {
protected:
    void SetUp() override { EDN_SKIP_WITHOUT_CUDA(); }
};

TEST_P(CudaConvergedTrajectoryTest, EveryStepConvergesAndTheStatesMatchTheCpu) {
    // A tolerance float cannot reach (the float Newton stalled near 1e-3): with the Newton level
    // in double on the device, every step converges on both backends and the two trajectories,
    // each within 1e-8 of its steps' minimisers, agree closely (the float Newton's tests needed
    // 2% of the motion over 100 frames at a tolerance of 1e-4).
    const ConvergedCase c = GetParam();
    SimulationSettings s;
    s.order = c.order;
    s.material = c.material;
    s.summation = c.summation;
    s.young = 2e5;
    s.gravity = {-9.81, 0, 0};
    s.newton_tolerance = 1e-8;
    s.max_newton_iterations = 40;
    s.pcg.relative_tolerance = 1e-5; // reachable by the float PCG
    s.pcg.max_iterations = 2000;
    if (c.damping) {
        s.mass_damping = 0.5;
        s.stiffness_damping = 0.01;
    }
    const TetMesh mesh = make_box_tet_mesh(2, 2, 6, {0, 0, 0}, {0.2, 0.2, 0.6});
    Simulation cpu(mesh, s), gpu(mesh, on_cuda(s));
    DragSpring drag; // on a top face (vertex i + 3 j + 9 k of the 3 x 3 x 7 lattice)
    drag.vertices = {58, 59, 62};
    drag.weights = {0.3, 0.3, 0.4};
    drag.target = {0.3, 0.25, 0.65};
    drag.stiffness = 500;
    for (Simulation* sim : {&cpu, &gpu}) {
        sim->pin_below(1e-9);
        sim->set_drag(drag);
    }
    const auto& rest = cpu.rest_positions();
    double worst = 0, scale = 0;
    for (int frame = 0; frame < 30; ++frame) {
        const StepResult rc = cpu.step();
        const StepResult rg = gpu.step();
        EXPECT_TRUE(rc.converged) << "CPU frame " << frame;
        EXPECT_TRUE(rg.converged) << "CUDA frame " << frame << ": " << rg.newton_iterations
                                  << " Newton iterations (CPU " << rc.newton_iterations
                                  << "), residual " << rg.initial_residual << " -> "
                                  << rg.final_residual << ", line-search failures "
                                  << rg.line_search_failures << ", unconverged PCG "
                                  << rg.pcg_unconverged;
        ASSERT_FALSE(rg.recovered) << "frame " << frame;
        const auto xc = cpu.positions(), xg = gpu.positions();
        for (std::size_t k = 0; k < xc.size(); ++k) {
            ASSERT_TRUE(std::isfinite(xg[k]));
            worst = std::max(worst, std::abs(xc[k] - xg[k]));
            scale = std::max(scale, std::abs(xc[k] - rest[k]));
        }
    }
    EXPECT_GT(scale, 0.02) << "the beam must bend";
    EXPECT_LT(worst, 1e-6 * scale) << "max |x_cpu - x_gpu| over 30 frames vs max displacement";
    // Velocities are position differences over a step: the same bound over dt (twice).
    const auto vc = cpu.velocities(), vg = gpu.velocities();
    double vdiff = 0;
    for (std::size_t k = 0; k < vc.size(); ++k) vdiff = std::max(vdiff, std::abs(vc[k] - vg[k]));
    EXPECT_LT(vdiff, 2e-6 * scale / s.dt) << "velocities";
    // Stresses follow the strains (position differences over an element's 0.1 m; the colouring
    // rounds the double stress to float): the float Newton's tests needed 5%.
    const auto sc = cpu.von_mises_stress(), sgm = gpu.von_mises_stress();
    ASSERT_EQ(sc.size(), sgm.size());
    double smax = 0, sdiff = 0;
    for (std::size_t i = 0; i < sc.size(); ++i)
        smax = std::max(smax, sc[i]), sdiff = std::max(sdiff, std::abs(sc[i] - sgm[i]));
    EXPECT_LT(sdiff, 1e-4 * smax);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CudaConvergedTrajectoryTest,
    ::testing::Values(ConvergedCase{1, Material::NeoHookean, SummationMethod::PerEntry, false},
                      ConvergedCase{1, Material::Corotational, SummationMethod::PerSimplex, false},
                      ConvergedCase{1, Material::Linear, SummationMethod::Inline, true},
                      ConvergedCase{1, Material::NeoHookean, SummationMethod::PerEntry, true},
                      ConvergedCase{2, Material::NeoHookean, SummationMethod::PerEntry, false},
                      ConvergedCase{2, Material::Corotational, SummationMethod::PerEntry, true},
                      ConvergedCase{3, Material::NeoHookean, SummationMethod::PerEntry, false}),
    [](const auto& info) {
        return std::string(material_name(info.param.material)) + "_p" +
               std::to_string(info.param.order) + "_" +
               summation_method_name(info.param.summation) + (info.param.damping ? "_damped" : "");
    });

} // namespace
} // namespace edn

namespace edn {
namespace {

TEST(CudaSimulation, PotentialAndGradientMatchCpuAtADeformedState) {
    // Both evaluate and sum the potential and its gradient in double (the device from
    // displacements, the host from positions): they agree to double round-off, not float's.
    EDN_SKIP_WITHOUT_CUDA();
    for (Material material : {Material::Linear, Material::NeoHookean, Material::Corotational}) {
        for (int order = 1; order <= 2; ++order) {
            // extras: every node term (mass and stiffness damping, a ground the perturbation
            // pushes nodes through, a drag spring) besides inertia, gravity and the elements.
            for (bool extras : {false, true}) {
                SimulationSettings s;
                s.material = material;
                s.order = order;
                s.gravity = {-9.81, 0, 0};
                if (extras) {
                    s.mass_damping = 0.5;
                    s.stiffness_damping = 0.01;
                    s.ground_height = 0.1;
                }
                const TetMesh mesh = twin_box();
                Simulation cpu(mesh, s), gpu(mesh, on_cuda(s));
                cpu.pin_below(1e-9);
                gpu.pin_below(1e-9);
                if (extras) {
                    DragSpring drag; // a top face (vertex i + 3 j + 9 k of the 3 x 3 x 4 lattice)
                    drag.vertices = {31, 32, 35};
                    drag.weights = {0.3, 0.3, 0.4};
                    drag.target = {0.3, 0.25, 0.35};
                    drag.stiffness = 500;
                    cpu.set_drag(drag);
                    gpu.set_drag(drag);
                }
                std::vector<double> y = cpu.rest_positions();
                for (std::size_t k = 0; k < y.size(); ++k) y[k] += 0.01 * std::sin(0.7 * k + 0.3);
                std::vector<double> gc, gg;
                const double ec = cpu.incremental_potential(y, &gc);
                const double eg = gpu.incremental_potential(y, &gg);
                const std::string label = std::string(material_name(material)) + " p" +
                                          std::to_string(order) + (extras ? " extras" : "");
                EXPECT_NEAR(eg, ec, 1e-9 * std::abs(ec) + 1e-12) << label; // float: 1e-4
                const auto [scale, diff] = deviation(gc, gg);
                EXPECT_LT(diff, 1e-9 * scale) << label; // float: 1e-3
                // Pinned nodes: zero gradient on both.
                for (std::size_t i = 0; i < gc.size() / 3; ++i)
                    if (cpu.pinned()[i])
                        for (int d = 0; d < 3; ++d) {
                            EXPECT_EQ(gg[3 * i + d], 0.0);
                        }
            }
        }
    }
}

TEST(CudaSimulation, UpperPartSolvesAgreeWithTheDeterministicPath) {
    // 19683 nodes (>= 16K): the PCG takes q = A p from the matrix's upper part (float atomics)
    // unless `deterministic`. Both follow the same trajectory to rounding; the deterministic
    // one repeats bit for bit.
    EDN_SKIP_WITHOUT_CUDA();
    SimulationSettings s;
    s.backend = Backend::Cuda;
    s.material = Material::NeoHookean;
    s.young = 2e5;
    s.gravity = {-9.81, 0, 0};
    const TetMesh mesh = make_box_tet_mesh(26, 26, 26, {0, 0, 0}, {0.3, 0.3, 0.3});
    SimulationSettings det = s;
    det.deterministic = true;
    Simulation fast(mesh, s), a(mesh, det), b(mesh, det);
    for (Simulation* sim : {&fast, &a, &b}) sim->pin_below(1e-9);
    double scale = 0, diff = 0;
    for (int frame = 0; frame < 30; ++frame) {
        const StepResult rf = fast.step();
        a.step();
        b.step();
        ASSERT_TRUE(rf.converged || rf.newton_iterations > 0) << "frame " << frame;
        const auto xf = fast.positions(), xa = a.positions(), xb = b.positions();
        const auto& rest = a.rest_positions();
        ASSERT_EQ(xa, xb) << "frame " << frame;
        for (std::size_t k = 0; k < xf.size(); ++k) {
            ASSERT_TRUE(std::isfinite(xf[k]));
            diff = std::max(diff, std::abs(xf[k] - xa[k]));
            scale = std::max(scale, std::abs(xa[k] - rest[k]));
        }
    }
    EXPECT_GT(scale, 1e-4);
    EXPECT_LT(diff, 1e-2 * scale);
}

} // namespace
} // namespace edn

namespace edn {
namespace {

TEST(CudaSimulation, FirstFrameMatchesCpu) {
    EDN_SKIP_WITHOUT_CUDA();
    for (Integrator integrator : {Integrator::BackwardEuler, Integrator::Midpoint}) {
        for (int newton : {1, 6}) {
            SimulationSettings s;
            s.material = Material::Linear;
            s.integrator = integrator;
            s.gravity = {-9.81, 0, 0};
            s.young = 2e5;
            s.max_newton_iterations = newton;
            s.pcg.relative_tolerance = 1e-5;
            s.pcg.max_iterations = 5000;
            s.cg_forcing = false; // one Newton iteration: its solve must be the tight one
            s.newton_tolerance = 1e-5;
            const TetMesh mesh = make_box_tet_mesh(2, 2, 6, {0, 0, 0}, {0.2, 0.2, 0.6});
            Simulation cpu(mesh, s), gpu(mesh, on_cuda(s));
            cpu.pin_below(1e-9);
            gpu.pin_below(1e-9);
            const StepResult rc = cpu.step(), rg = gpu.step();
            const auto xc = cpu.positions(), xg = gpu.positions();
            const auto& rest = cpu.rest_positions();
            double diff = 0, scale = 0;
            for (std::size_t k = 0; k < xc.size(); ++k)
                diff = std::max(diff, std::abs(xc[k] - xg[k])),
                scale = std::max(scale, std::abs(xc[k] - rest[k]));
            std::ostringstream log;
            log << integrator_name(integrator) << " newton<=" << newton << ": cpu it "
                << rc.newton_iterations << " cg " << rc.cg_iterations << " res";
            for (double r : rc.residuals) log << ' ' << r;
            log << " | gpu it " << rg.newton_iterations << " cg " << rg.cg_iterations << " res";
            for (double r : rg.residuals) log << ' ' << r;
            log << " | pcg breakdown " << rc.pcg_breakdowns << "/" << rg.pcg_breakdowns
                << " unconverged " << rc.pcg_unconverged << "/" << rg.pcg_unconverged;
            log << " | max diff " << diff << " scale " << scale << " ls fail "
                << rc.line_search_failures << "/" << rg.line_search_failures;
            std::cout << log.str() << std::endl;
            // One Newton iteration leaves the inexact inner solve's error in x (float vs double
            // PCG stop at different iterates); converged Newton (double on both) must agree to
            // about its tolerance (float Newton: 0.01).
            EXPECT_LT(diff, (newton == 1 ? 0.1 : 1e-3) * scale) << log.str();
        }
    }
}

} // namespace
} // namespace edn

namespace edn {
namespace {

TEST(CudaSimulation, RegionDragAndGroundFrictionMatchCpu) {
    // The region drag (sim/drag_region.hpp) and the ground friction of the nodes in contact at
    // the step's start: potential and gradient in double on both (to double round-off), the
    // Hessian product through the float matrix (to float round-off).
    EDN_SKIP_WITHOUT_CUDA();
    for (int order = 1; order <= 2; ++order) {
        SimulationSettings s;
        s.order = order;
        s.material = Material::Linear; // the Hessian product compares assembled matrices
        s.ground_height = 0.05;
        s.ground_friction = 5.0;
        const TetMesh mesh = twin_box();
        Simulation cpu(mesh, s), gpu(mesh, on_cuda(s));
        // Some nodes below the plane at the step's start, all moving.
        std::vector<double> x = cpu.rest_positions(), v(x.size());
        for (std::size_t k = 0; k < x.size(); ++k)
            x[k] += 0.01 * std::sin(0.7 * k + 0.3), v[k] = 0.4 * std::cos(0.9 * k);
        cpu.set_state(x, v);
        gpu.set_state(x, v);
        // Vertex i + 3 j + 9 k of the 3 x 3 x 4 lattice: a top face; the region reaches down.
        DragSpring drag = make_drag(cpu, {31, 32, 35}, {0.3, 0.3, 0.4}, 0.15, 500.0);
        ASSERT_GT(drag.region.size(), 4u);
        drag.target = {0.3, 0.25, 0.35};
        cpu.set_drag(drag);
        gpu.set_drag(drag);
        std::vector<double> y = x, dir(x.size());
        for (std::size_t k = 0; k < y.size(); ++k)
            y[k] += 0.01 * std::cos(1.1 * k), dir[k] = std::sin(1.7 * k);
        std::vector<double> gc, gg;
        const double ec = cpu.incremental_potential(y, &gc);
        const double eg = gpu.incremental_potential(y, &gg);
        EXPECT_NEAR(eg, ec, 1e-9 * std::abs(ec) + 1e-12) << "p" << order;
        const auto [scale, diff] = deviation(gc, gg);
        EXPECT_LT(diff, 1e-9 * scale) << "p" << order;
        const auto hc = cpu.hessian_product(y, dir), hg = gpu.hessian_product(y, dir);
        const Deviation h = deviation(hc, hg);
        EXPECT_LT(h.diff, 1e-4 * h.scale) << "p" << order;
        // Moving the target only: the device keeps its region and follows the new target.
        drag.target = {0.25, 0.3, 0.4};
        cpu.set_drag(drag);
        gpu.set_drag(drag);
        EXPECT_NEAR(gpu.incremental_potential(y), cpu.incremental_potential(y),
                    1e-9 * std::abs(ec));
    }
}

// Every material and order: the element kernels (the staged p = 1 blocks, the SVD-frame
// Hessians, the cooperative p >= 2 kernels) against the CPU's double matrices. At p >= 2 the
// multigrid's products are matrix-free; block Jacobi takes the assembled blocks, formed from the
// pass's tangent values (element_blocks_from_tangents_kernel) in the upper layout (per-entry) and
// the full one (per-simplex).
TEST(CudaSimulation, HessianProductMatchesCpu) {
    EDN_SKIP_WITHOUT_CUDA();
    struct Case {
        Material material;
        int order;
        SummationMethod method;
        Integrator integrator;
        Preconditioner preconditioner = Preconditioner::Multigrid;
    };
    std::vector<Case> cases;
    for (SummationMethod method : {SummationMethod::PerEntry, SummationMethod::PerSimplex})
        for (Integrator integrator : {Integrator::Static, Integrator::BackwardEuler})
            cases.push_back({Material::Linear, 1, method, integrator});
    for (Material material : {Material::Corotational, Material::NeoHookean})
        for (int order = 1; order <= 3; ++order)
            cases.push_back(
                {material, order, SummationMethod::PerEntry, Integrator::BackwardEuler});
    for (Material material : {Material::Linear, Material::Corotational, Material::NeoHookean})
        for (int order = 2; order <= 3; ++order)
            for (SummationMethod method : {SummationMethod::PerEntry, SummationMethod::PerSimplex})
                cases.push_back({material, order, method, Integrator::BackwardEuler,
                                 Preconditioner::BlockJacobi});
    for (const Case& c : cases) {
        {
            SimulationSettings s;
            s.material = c.material;
            s.order = c.order;
            s.integrator = c.integrator;
            s.summation = c.method;
            s.preconditioner = c.preconditioner;
            const SummationMethod method = c.method;
            const Integrator integrator = c.integrator;
            const TetMesh mesh = twin_box();
            Simulation cpu(mesh, s), gpu(mesh, on_cuda(s));
            std::vector<double> y = cpu.rest_positions(), v(y.size());
            for (std::size_t k = 0; k < y.size(); ++k)
                y[k] += 0.01 * std::sin(0.7 * k + 0.3), v[k] = std::cos(1.3 * k);
            const auto hc = cpu.hessian_product(y, v), hg = gpu.hessian_product(y, v);
            const auto [scale, diff] = deviation(hc, hg);
            EXPECT_LT(diff, 1e-4 * scale)
                << material_name(c.material) << " p" << c.order << " "
                << summation_method_name(method) << " " << integrator_name(integrator) << " "
                << preconditioner_name(c.preconditioner) << " diff " << diff << " scale " << scale
                << " first " << hc[0] << " vs " << hg[0];
        }
    }
}

// The p = 3 element blocks on the tensor cores (element_blocks_mma_kernel, three tf32 products a
// tile, the upper layout of per-entry summation) equal the multiply-add kernel's
// (EDN_ELEMENT_BLOCKS_MMA=0) to float rounding, for every material, through block Jacobi's
// assembled matrix: a wrong fragment, a lost transpose or a block written to the wrong place
// fails (a product is 1e-2 of the scale apart or worse).
TEST(CudaSimulation, TensorCoreBlocksEqualMultiplyAddBlocks) {
    EDN_SKIP_WITHOUT_CUDA();
    const TetMesh mesh = twin_box();
    const int order = 3;
    for (Material material : {Material::Linear, Material::Corotational, Material::NeoHookean}) {
        SimulationSettings s = on_cuda(SimulationSettings{});
        s.material = material;
        s.order = order;
        s.summation = SummationMethod::PerEntry;
        s.preconditioner = Preconditioner::BlockJacobi;
        Simulation mma(mesh, s), fma(mesh, s);
        std::vector<double> y = mma.rest_positions(), v(y.size());
        for (std::size_t k = 0; k < y.size(); ++k)
            y[k] += 0.01 * std::sin(0.7 * k + 0.3), v[k] = std::cos(1.3 * k);
        const auto hm = mma.hessian_product(y, v);
        setenv("EDN_ELEMENT_BLOCKS_MMA", "0", 1);
        const auto hf = fma.hessian_product(y, v);
        unsetenv("EDN_ELEMENT_BLOCKS_MMA");
        const auto [scale, diff] = deviation(hf, hm);
        EXPECT_GT(scale, 0.0);
        EXPECT_LT(diff, 2e-6 * scale)
            << material_name(material) << " diff " << diff << " scale " << scale;
    }
}

// The assembled p >= 2 element blocks on a mesh of 7,722 cells, more than one round of every
// thread block of the persistent blocks kernels (element_blocks_from_tangents_kernel in both
// layouts, element_blocks_mma_kernel), the last round of 12 cells (p = 2) and the last chunk of
// 1,024 part-full, equal the CPU's double blocks through block Jacobi's
// matrix: in one pass, in chunks of 1,024 cells (EDN_TANGENT_CHUNK_MIB) and at p = 3 with the
// multiply-adds (EDN_ELEMENT_BLOCKS_MMA=0, whose rounds of 3 cells start at outputs of every
// alignment). A round lost or written to another's place fails by the scale.
TEST(CudaSimulation, ElementBlocksOfManyCellsEqualCpu) {
    EDN_SKIP_WITHOUT_CUDA();
    const TetMesh mesh = make_box_tet_mesh(13, 11, 9, {0, 0, 0}, {1.3, 1.1, 0.9});
    struct Variant {
        SummationMethod method;
        const char* chunk_mib;
        const char* mma;
    };
    const Variant variants[] = {{SummationMethod::PerEntry, nullptr, nullptr},
                                {SummationMethod::PerSimplex, nullptr, nullptr},
                                {SummationMethod::PerEntry, "0.001", nullptr},
                                {SummationMethod::PerEntry, nullptr, "0"},
                                {SummationMethod::PerSimplex, "0.001", nullptr}};
    for (int order : {2, 3}) {
        SimulationSettings s;
        s.material = Material::NeoHookean;
        s.order = order;
        s.preconditioner = Preconditioner::BlockJacobi;
        Simulation cpu(mesh, s);
        std::vector<double> y = cpu.rest_positions(), v(y.size());
        for (std::size_t k = 0; k < y.size(); ++k)
            y[k] += 0.02 * std::sin(0.7 * k + 0.3), v[k] = std::cos(1.3 * k);
        const auto hc = cpu.hessian_product(y, v);
        for (const Variant& variant : variants) {
            if (variant.mma && order != 3) continue;
            s.summation = variant.method;
            if (variant.chunk_mib) setenv("EDN_TANGENT_CHUNK_MIB", variant.chunk_mib, 1);
            if (variant.mma) setenv("EDN_ELEMENT_BLOCKS_MMA", variant.mma, 1);
            Simulation gpu(mesh, on_cuda(s));
            const auto hg = gpu.hessian_product(y, v);
            unsetenv("EDN_TANGENT_CHUNK_MIB");
            unsetenv("EDN_ELEMENT_BLOCKS_MMA");
            const auto [scale, diff] = deviation(hc, hg);
            EXPECT_GT(scale, 0.0);
            EXPECT_LT(diff, 1e-4 * scale)
                << "p" << order << " " << summation_method_name(variant.method) << " chunk "
                << (variant.chunk_mib ? variant.chunk_mib : "-") << " mma "
                << (variant.mma ? variant.mma : "-") << " diff " << diff << " scale " << scale;
        }
    }
}

// The matrix-free tests' settings: the multigrid at order p, with ground penalty and friction.
SimulationSettings matrix_free_test_settings(Material material, int order) {
    SimulationSettings s = on_cuda(SimulationSettings{});
    s.material = material;
    s.order = order;
    s.preconditioner = Preconditioner::Multigrid;
    s.ground_height = 0.04;
    s.ground_friction = 5.0;
    return s;
}

// The matrix-free tests' drag: a region drag around three vertices of a cell near the end of
// `mesh`'s cells (more than four nodes), or a point drag between them.
DragSpring matrix_free_test_drag(Simulation& sim, const TetMesh& mesh, bool region) {
    const Cell cell = mesh.cells[mesh.num_cells() - 5];
    DragSpring drag;
    if (region) {
        drag = make_drag(sim, {cell[0], cell[1], cell[2]}, {0.3, 0.3, 0.4}, 0.12, 500.0);
        EXPECT_GT(drag.region.size(), 4u);
    } else {
        drag.vertices = {cell[0], cell[1], cell[2]};
        drag.weights = {0.2, 0.3, 0.5};
        drag.stiffness = 800.0;
    }
    drag.target = {0.3, 0.25, 0.35};
    return drag;
}

// The matrix-free product of p >= 2 (cuda/matrix_free.cuh: the default with the multigrid)
// equals the assembled matrix's product (EDN_MATRIX_FREE=0) to float rounding, with every term
// the assembly adds: mass, ground penalty and friction, the point drag's blocks between three
// vertices of a cell, a region drag; its sums in atomics (EDN_MATRIX_FREE=atomic) equal the
// gathered ones to rounding, the gathered ones are reproducible. A missing term, a wrong point
// value or a wrong gradient fails. The values' tangents come from the double F rounded once,
// the blocks' from a float F: the deformation is moderate (strains up to about 40%), where no
// element is so close to degenerate that its tangent magnifies F's rounding past the bound
// (with displacements up to 0.03, inverted p = 3 cells put the products 1.3e-5 apart). The
// forces and energies of the same pass (element_pass_cooperative_kernel) are checked by
// MatrixFreeStepsFollowTheAssembledSteps, whose assembled twin forms them in another kernel.
TEST(CudaSimulation, MatrixFreeProductEqualsAssembledProduct) {
    EDN_SKIP_WITHOUT_CUDA();
    const TetMesh mesh = make_box_tet_mesh(3, 3, 4, {0, 0, 0}, {0.2, 0.2, 0.3});
    for (Material material : {Material::NeoHookean, Material::Corotational, Material::Linear})
        for (int order = 2; order <= 3; ++order)
            for (bool region : {false, true}) {
                const SimulationSettings s = matrix_free_test_settings(material, order);
                Simulation free(mesh, s);
                setenv("EDN_MATRIX_FREE", "0", 1);
                Simulation assembled(mesh, s);
                setenv("EDN_MATRIX_FREE", "atomic", 1);
                Simulation atomic(mesh, s);
                unsetenv("EDN_MATRIX_FREE");
                SimulationSettings s_inline = s; // (no element blocks: the values all the same)
                s_inline.summation = SummationMethod::Inline;
                Simulation inline_sums(mesh, s_inline);
                EXPECT_GT(free.matrix_free_bytes(), 0u);
                EXPECT_GT(inline_sums.matrix_free_bytes(), 0u);
                EXPECT_EQ(assembled.matrix_free_bytes(), 0u);
                std::vector<double> x = free.rest_positions(), v(x.size());
                for (std::size_t k = 0; k < x.size(); ++k)
                    x[k] += 0.004 * std::sin(0.7 * k + 0.3), v[k] = 0.4 * std::cos(0.9 * k);
                const DragSpring drag = matrix_free_test_drag(free, mesh, region);
                for (Simulation* sim : {&free, &assembled, &atomic, &inline_sums}) {
                    sim->set_state(x, v);
                    sim->set_drag(drag);
                }
                std::vector<double> y = x, dir(x.size());
                for (std::size_t k = 0; k < y.size(); ++k)
                    y[k] += 0.004 * std::cos(1.1 * k), dir[k] = std::sin(1.7 * k);
                const auto a = free.hessian_product(y, dir), b = assembled.hessian_product(y, dir);
                const auto c = atomic.hessian_product(y, dir);
                double scale = 0, diff = 0, diff_atomic = 0;
                for (std::size_t k = 0; k < a.size(); ++k)
                    scale = std::max(scale, std::abs(b[k])),
                    diff = std::max(diff, std::abs(a[k] - b[k])),
                    diff_atomic = std::max(diff_atomic, std::abs(a[k] - c[k]));
                EXPECT_GT(scale, 0.0);
                EXPECT_LT(diff, 2e-6 * scale)
                    << material_name(material) << " p" << order << " region " << region << " diff "
                    << diff << " scale " << scale;
                EXPECT_LT(diff_atomic, 2e-6 * scale) << material_name(material) << " p" << order;
                EXPECT_EQ(free.hessian_product(y, dir), a) << "gathered sums are reproducible";
                const auto with_inline = inline_sums.hessian_product(y, dir);
                double diff_inline = 0;
                for (std::size_t k = 0; k < a.size(); ++k)
                    diff_inline = std::max(diff_inline, std::abs(a[k] - with_inline[k]));
                EXPECT_LT(diff_inline, 2e-6 * scale)
                    << "with inline summation (session 28: once left the values unwritten)";
            }
}

// Steps with the matrix-free products (the CG's and the cycle's order-p level, from the
// snapshot of each re-value) converge as the assembled ones and stay within the solves'
// tolerance of their trajectory, at p = 2 and 3 with pins, gravity and a moving drag.
// The order-p level's re-value from the matrix-free values (MatrixFreeOperator::galerkin: A P and
// the diagonal without the assembled matrix) gives the hierarchy of the assembled re-value
// (EDN_MATRIX_FREE_REVALUE=0): every coarse operator to float rounding and each level's
// lambda_max, at p = 2, 3, with pinned nodes (p = 2 and 3 edge nodes pinned where a vertex of
// their edge is not), mass, ground penalty and friction, and a point or a region drag, at a mild
// deformation (with 0.004 as in MatrixFreeProductEqualsAssembledProduct, nearly inverted p = 3
// neo-Hookean cells put float values near 1e19 into the levels, where either path's Lanczos
// loses its digits). A missing node term, drag block or pin rule, or a wrong part, fails.
TEST(CudaSimulation, MatrixFreeRevalueEqualsAssembledRevalue) {
    EDN_SKIP_WITHOUT_CUDA();
    const TetMesh mesh = make_box_tet_mesh(3, 3, 4, {0, 0, 0}, {0.2, 0.2, 0.3});
    for (Material material : {Material::NeoHookean, Material::Corotational})
        for (int order = 2; order <= 3; ++order)
            for (bool region : {false, true}) {
                SCOPED_TRACE(std::string(material_name(material)) + " p" + std::to_string(order) +
                             (region ? " region drag" : " point drag"));
                const SimulationSettings s = matrix_free_test_settings(material, order);
                SimulationSettings s_inline = s; // (no element blocks: a scratch of its own)
                s_inline.summation = SummationMethod::Inline;
                Simulation free(mesh, s), assembled(mesh, s), inline_sums(mesh, s_inline);
                std::vector<double> x = free.rest_positions(), v(x.size());
                for (std::size_t k = 0; k < x.size(); ++k)
                    x[k] += 0.0015 * std::sin(0.7 * k + 0.3), v[k] = 0.4 * std::cos(0.9 * k);
                const DragSpring drag = matrix_free_test_drag(free, mesh, region);
                for (Simulation* sim : {&free, &assembled, &inline_sums}) {
                    sim->pin_below(0.04);
                    sim->set_state(x, v);
                    sim->set_drag(drag);
                }
                std::vector<double> y = x;
                for (std::size_t k = 0; k < y.size(); ++k) y[k] += 0.0015 * std::cos(1.1 * k);
                const auto a = free.multigrid_levels(y);
                setenv("EDN_MATRIX_FREE_REVALUE", "0", 1); // (read where the hierarchy is built)
                const auto b = assembled.multigrid_levels(y);
                unsetenv("EDN_MATRIX_FREE_REVALUE");
                const auto c = inline_sums.multigrid_levels(y);
                EXPECT_GT(inline_sums.solver_setup().matrix_free_revalues, 0)
                    << "inline summation re-values from the values too";
                EXPECT_GT(free.solver_setup().matrix_free_revalues, 0);
                EXPECT_EQ(assembled.solver_setup().matrix_free_revalues, 0);
                EXPECT_GT(assembled.solver_setup().revalues, 0);
                for (const auto* other : {&b, &c}) {
                    SCOPED_TRACE(other == &b ? "assembled re-value" : "inline summation");
                    ASSERT_EQ(a.size(), other->size());
                    ASSERT_GE(a.size(), 1u);
                    for (std::size_t l = 0; l < a.size(); ++l) {
                        const std::vector<double>& o = (*other)[l];
                        ASSERT_EQ(a[l].size(), o.size()) << "level " << l;
                        double scale = 0, diff = 0;
                        for (std::size_t k = 0; k + 1 < a[l].size(); ++k)
                            scale = std::max(scale, std::abs(o[k])),
                            diff = std::max(diff, std::abs(a[l][k] - o[k]));
                        EXPECT_GT(scale, 0.0) << "level " << l;
                        EXPECT_LT(diff, 1e-5 * scale) << "level " << l;
                        EXPECT_NEAR(a[l].back(), o.back(), 1e-3 * o.back())
                            << "lambda_max of level " << l;
                    }
                }
            }
}

TEST(CudaSimulation, MatrixFreeStepsFollowTheAssembledSteps) {
    EDN_SKIP_WITHOUT_CUDA();
    const TetMesh mesh = make_box_tet_mesh(3, 3, 8, {0, 0, 0}, {0.3, 0.3, 0.8});
    for (int order = 2; order <= 3; ++order) {
        SimulationSettings s = on_cuda(SimulationSettings{});
        s.material = Material::NeoHookean;
        s.order = order;
        s.preconditioner = Preconditioner::Multigrid;
        s.gravity = {0, -9.81, 0};
        s.newton_tolerance = 1e-6;
        Simulation free(mesh, s);
        setenv("EDN_MATRIX_FREE", "0", 1);
        Simulation assembled(mesh, s);
        unsetenv("EDN_MATRIX_FREE");
        ASSERT_GT(free.matrix_free_bytes(), 0u);
        double reach = 0, apart = 0;
        for (Simulation* sim : {&free, &assembled}) {
            sim->pin_below(1e-9);
            for (int f = 0; f < 8; ++f) {
                DragSpring drag;
                drag.vertices = {137, 138, 141};
                drag.weights = {0.3, 0.3, 0.4};
                drag.stiffness = 2e3;
                drag.target = {0.3 + 0.02 * f, 0.3, 0.9};
                sim->set_drag(drag);
                const StepResult r = sim->step();
                EXPECT_TRUE(r.converged) << "p" << order << " frame " << f
                                         << (sim == &free ? " matrix-free" : " assembled");
            }
        }
        const std::vector<double> a = free.positions(), b = assembled.positions(),
                                  rest = free.rest_positions();
        for (std::size_t k = 0; k < a.size(); ++k)
            reach = std::max(reach, std::abs(b[k] - rest[k])),
            apart = std::max(apart, std::abs(a[k] - b[k]));
        EXPECT_GT(reach, 1e-3);
        EXPECT_LT(apart, 1e-3 * reach) << "p" << order;
    }
}

// Element blocks in the upper layout (the default with per-entry summation: the element passes
// write only a <= b) sum to the matrix of the full layout (EDN_ELEMENT_BLOCKS=full) with
// reproducible maps: bit for bit at p = 2 and 3 (the cooperative kernel writes K_ba as the
// transpose of K_ab in both layouts), to float rounding at p = 1 (the full layout sums the
// element kernel's own K_ba); with stiffness damping p >= 2 runs the one-thread kernel, full in
// both. A block written to a wrong place, or read without its transpose, fails.
TEST(CudaSimulation, UpperLayoutElementBlocksSumAsFullLayout) {
    EDN_SKIP_WITHOUT_CUDA();
    const TetMesh mesh = make_box_tet_mesh(4, 5, 6, {0, 0, 0}, {0.2, 0.25, 0.3});
    for (Material material : {Material::NeoHookean, Material::Corotational})
        for (int order = 1; order <= 3; ++order)
            for (double damping : {0.0, 0.02}) {
                SimulationSettings s = on_cuda(SimulationSettings{});
                s.material = material;
                s.order = order;
                s.summation = SummationMethod::PerEntry;
                s.preconditioner = Preconditioner::Multigrid;
                s.integrator = Integrator::BackwardEuler;
                s.stiffness_damping = damping;
                s.deterministic = true;
                setenv("EDN_MATRIX_FREE", "0", 1); // (the matrices' products)
                // (p = 3's upper blocks from the multiply-add kernel, as the full ones, at every
                // launch: the same floats; TensorCoreBlocksEqualMultiplyAddBlocks checks the
                // tensor cores')
                setenv("EDN_ELEMENT_BLOCKS_MMA", "0", 1);
                Simulation upper(mesh, s);
                setenv("EDN_ELEMENT_BLOCKS", "full", 1);
                Simulation full(mesh, s);
                unsetenv("EDN_ELEMENT_BLOCKS");
                unsetenv("EDN_MATRIX_FREE");
                if (order == 1 || damping == 0.0) // (p = 1 stages its blocks either way)
                    EXPECT_LT(upper.element_block_bytes(), full.element_block_bytes() * 2 / 3)
                        << "p" << order << ": the upper layout in use";
                else
                    EXPECT_EQ(upper.element_block_bytes(), full.element_block_bytes());
                std::vector<double> y = upper.rest_positions(), v(y.size());
                for (std::size_t k = 0; k < y.size(); ++k)
                    y[k] += 0.01 * std::sin(0.7 * k + 0.3), v[k] = std::cos(1.3 * k);
                const std::vector<double> a = upper.hessian_product(y, v);
                const std::vector<double> b = full.hessian_product(y, v);
                unsetenv("EDN_ELEMENT_BLOCKS_MMA");
                double scale = 0, diff = 0;
                std::size_t differ = 0;
                for (std::size_t k = 0; k < a.size(); ++k)
                    scale = std::max(scale, std::abs(b[k])),
                    diff = std::max(diff, std::abs(a[k] - b[k])), differ += a[k] != b[k];
                EXPECT_GT(scale, 0.0);
                if (order >= 2)
                    EXPECT_EQ(differ, 0u) << material_name(material) << " p" << order
                                          << " stiffness damping " << damping;
                else
                    EXPECT_LT(diff, 1e-5 * scale) << material_name(material) << " p1";
            }
}

} // namespace
} // namespace edn

namespace edn {
namespace {

/// Every thread queues on its own stream (per-thread default streams): a simulation built on one
/// thread and stepped on others, handing over with finish_device_work() as the app does, steps
/// exactly as one built and stepped on a single thread (deterministic settings: bit for bit).
TEST(CudaSimulation, SteppingAcrossThreadsEqualsOneThread) {
    EDN_SKIP_WITHOUT_CUDA();
    SimulationSettings s = on_cuda(SimulationSettings{});
    s.material = Material::NeoHookean;
    s.deterministic = true;
    s.gravity = {0, -9.81, 0};
    const TetMesh mesh = make_box_tet_mesh(3, 3, 8, {0, 0, 0}, {0.3, 0.3, 0.8});
    constexpr int kFrames = 4;
    Simulation one(mesh, s);
    one.pin_below(1e-9);
    for (int f = 0; f < kFrames; ++f) one.step();

    std::unique_ptr<Simulation> handed;
    std::thread([&] {
        handed = std::make_unique<Simulation>(mesh, s);
        handed->pin_below(1e-9);
        handed->finish_device_work();
    }).join();
    for (int f = 0; f < kFrames; ++f)
        std::thread([&] {
            handed->step();
            handed->finish_device_work();
        }).join();
    EXPECT_EQ(one.positions(), handed->positions());
    EXPECT_EQ(one.velocities(), handed->velocities());
}

} // namespace
} // namespace edn
