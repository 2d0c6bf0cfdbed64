// Simulation behaviour: static cantilever against beam theory, energy behaviour of the
// integrators, Newton convergence, and robustness (squash, extreme drag) on the CPU backend; pins,
// trivially converged steps and a tight Newton tolerance met in every step on every backend
// (SimulationPerBackend, .../Cpu and .../Cuda).
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "mesh/box_mesh.hpp"
#include "sim/simulation.hpp"
#include "sim/simulation_backend.hpp"
#include "support/backend.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <string>
#include <tuple>
#include <vector>

namespace edn {
namespace {

/// Beam along z, clamped at z = 0, cross-section a x a.
TetMesh beam(int n_cross, int n_long, double a = 0.1, double length = 1.0) {
    return make_box_tet_mesh(n_cross, n_cross, n_long, {0, 0, 0}, {a, a, length});
}

/// Mean tip deflection in x of the nodes at z = L.
double tip_deflection(const Simulation& sim, double length) {
    const auto x = sim.positions();
    const auto& rest = sim.rest_positions();
    double sum = 0;
    int count = 0;
    for (std::size_t i = 0; i < rest.size() / 3; ++i)
        if (rest[3 * i + 2] > length - 1e-9) {
            sum += x[3 * i] - rest[3 * i];
            ++count;
        }
    return sum / count;
}

double static_cantilever(int order, int n_cross, int n_long) {
    SimulationSettings s;
    s.order = order;
    s.material = Material::Linear;
    s.integrator = Integrator::Static;
    s.young = 1e7;
    s.poisson = 0.0; // no Poisson stiffening at the clamp: compare with Euler-Bernoulli
    s.density = 1000;
    s.gravity = {-1.0, 0, 0};
    s.pcg.relative_tolerance = 1e-10;
    s.pcg.max_iterations = 5000;
    s.max_newton_iterations = 3;
    Simulation sim(beam(n_cross, n_long), s);
    sim.pin_below(1e-9);
    sim.step();
    return tip_deflection(sim, 1.0);
}

TEST(Simulation, StaticCantileverConvergesToBeamTheoryAndP2BeatsP1) {
    // Distributed load q = rho g A; Euler-Bernoulli tip deflection q L^4 / (8 E I).
    const double a = 0.1, q = 1000 * 1.0 * a * a, I = a * a * a * a / 12;
    const double theory = -q / (8 * 1e7 * I);
    const double p1_coarse = static_cantilever(1, 2, 10);
    const double p1_fine = static_cantilever(1, 4, 20);
    const double p2_coarse = static_cantilever(2, 2, 10);
    const double e1c = std::abs(p1_coarse / theory - 1), e1f = std::abs(p1_fine / theory - 1);
    const double e2c = std::abs(p2_coarse / theory - 1);
    EXPECT_LT(e1f, e1c) << "refinement must reduce the error (locking of linear tets)";
    EXPECT_LT(e2c, e1c) << "p = 2 on the coarse mesh must beat p = 1 on the same mesh";
    EXPECT_LT(e2c, 0.05) << p2_coarse << " vs " << theory;
}

SimulationSettings free_settings(Integrator integrator, Material material) {
    SimulationSettings s;
    s.material = material;
    s.integrator = integrator;
    s.gravity = {0, 0, 0};
    s.young = 1e4;
    s.poisson = 0.3;
    s.density = 100;
    s.dt = 0.01;
    s.pcg.relative_tolerance = 1e-10;
    s.pcg.max_iterations = 1000;
    s.max_newton_iterations = 20;
    s.newton_tolerance = 1e-6;
    return s;
}

/// A stretched initial state: x = rest * (1 + 0.1 z), at rest velocity.
void stretch(Simulation& sim, double amount) {
    auto x = sim.rest_positions();
    for (std::size_t i = 0; i < x.size(); i += 3) x[i + 2] *= 1 + amount;
    sim.set_state(x, std::vector<double>(x.size(), 0.0));
}

TEST(Simulation, MidpointConservesEnergyOver1000Steps) {
    Simulation sim(make_box_tet_mesh(2, 2, 2, {0, 0, 0}, {1, 1, 1}),
                   free_settings(Integrator::Midpoint, Material::NeoHookean));
    stretch(sim, 0.1);
    double e0 = -1, emax = 0, emin = 1e300;
    for (int i = 0; i < 1000; ++i) {
        const StepResult r = sim.step();
        ASSERT_FALSE(r.recovered);
        const double e = r.kinetic_energy + r.strain_energy;
        if (e0 < 0) e0 = e;
        emax = std::max(emax, e), emin = std::min(emin, e);
    }
    EXPECT_GT(e0, 0);
    // Stated tolerance: total energy stays within 2% of its value after the first step.
    EXPECT_LT((emax - emin) / e0, 0.02) << emin << " .. " << emax;
}

TEST(Simulation, BackwardEulerDissipatesMonotonically) {
    Simulation sim(make_box_tet_mesh(2, 2, 2, {0, 0, 0}, {1, 1, 1}),
                   free_settings(Integrator::BackwardEuler, Material::NeoHookean));
    stretch(sim, 0.1);
    double previous = 1e300;
    for (int i = 0; i < 100; ++i) {
        const StepResult r = sim.step();
        const double e = r.kinetic_energy + r.strain_energy;
        EXPECT_LE(e, previous * (1 + 1e-9)) << "step " << i;
        previous = e;
    }
    EXPECT_LT(previous, 0.5 * 1e300);
}

TEST(Simulation, NewtonConvergesQuadraticallyNearTheSolution) {
    SimulationSettings s = free_settings(Integrator::Static, Material::NeoHookean);
    s.gravity = {0, 0, -20};
    s.projection = HessianProjection::Never; // exact Hessian: quadratic convergence
    s.pcg.relative_tolerance = 1e-12;
    s.max_newton_iterations = 12;
    s.newton_tolerance = 1e-14;
    Simulation sim(beam(2, 6, 0.2, 1.0), s);
    sim.pin_below(1e-9);
    const StepResult r = sim.step();
    ASSERT_GE(r.residuals.size(), 4u);
    // Estimated order of convergence of the last informative iterations (residual above round-off).
    double best_order = 0;
    for (std::size_t k = 1; k + 1 < r.residuals.size(); ++k) {
        const double r0 = r.residuals[k - 1], r1 = r.residuals[k], r2 = r.residuals[k + 1];
        if (r2 < 1e-9 * r.residuals[0] || r1 >= r0) continue;
        best_order = std::max(best_order, std::log(r2 / r1) / std::log(r1 / r0));
    }
    EXPECT_GT(best_order, 1.7) << "residuals did not converge quadratically";
}

TEST(Simulation, SquashedCubeRecoversItsVolume) {
    SimulationSettings s = free_settings(Integrator::BackwardEuler, Material::NeoHookean);
    s.max_newton_iterations = 8;
    s.pcg.relative_tolerance = 1e-4;
    s.newton_tolerance = 1e-3;
    s.mass_damping = 2.0;
    Simulation sim(make_box_tet_mesh(3, 3, 3, {0, 0, 0}, {1, 1, 1}), s);
    auto x = sim.rest_positions();
    for (std::size_t i = 2; i < x.size(); i += 3) x[i] *= 0.05; // squash to 5% height
    sim.set_state(x, std::vector<double>(x.size(), 0.0));
    for (int i = 0; i < 300; ++i) {
        const StepResult r = sim.step();
        for (double v : sim.positions()) ASSERT_TRUE(std::isfinite(v)) << "step " << i;
        (void)r;
    }
    const auto p = sim.positions();
    double zmin = 1e9, zmax = -1e9;
    for (std::size_t i = 2; i < p.size(); i += 3)
        zmin = std::min(zmin, p[i]), zmax = std::max(zmax, p[i]);
    EXPECT_GT(zmax - zmin, 0.8) << "height did not recover";
}

TEST(Simulation, OnDemandProjectionNeedsFewerNewtonIterationsForTheSameMotion) {
    // A neo-Hookean column clamped at its foot, sagging under its own weight and swaying: its
    // compressed elements have tangents with negative (rotational) eigenvalues, where the
    // projected Hessian differs from the exact one and Newton converges linearly; the exact
    // Hessian stays positive definite, so on demand never projects and converges faster.
    const auto run = [](HessianProjection projection) {
        SimulationSettings s;
        s.material = Material::NeoHookean;
        s.young = 1e5;
        s.gravity = {-3, 0, -9.81};
        s.projection = projection;
        Simulation sim(beam(3, 12, 0.2, 1.2), s);
        sim.pin_below(1e-9);
        int newton = 0, fallbacks = 0;
        for (int i = 0; i < 20; ++i) {
            const StepResult r = sim.step();
            EXPECT_TRUE(r.converged) << "step " << i;
            newton += r.newton_iterations;
            fallbacks += r.projection_fallbacks;
        }
        return std::make_tuple(newton, fallbacks, tip_deflection(sim, 1.2));
    };
    const auto [always_newton, always_fallbacks, always_tip] = run(HessianProjection::Always);
    const auto [demand_newton, demand_fallbacks, demand_tip] = run(HessianProjection::OnDemand);
    EXPECT_EQ(always_fallbacks, 0);
    EXPECT_EQ(demand_fallbacks, 0);
    EXPECT_LT(demand_newton, always_newton); // 60 against 73 when written
    // The same steps to the Newton tolerance: the same motion.
    EXPECT_LT(always_tip, -0.05);
    EXPECT_NEAR(demand_tip, always_tip, 1e-3 * std::abs(always_tip));
}

TEST(Simulation, DragFarBeyondYieldNeverProducesNaN) {
    for (Material material : {Material::NeoHookean, Material::Corotational}) {
        SimulationSettings s = free_settings(Integrator::BackwardEuler, material);
        s.max_newton_iterations = 4;
        s.pcg.relative_tolerance = 1e-3;
        s.newton_tolerance = 1e-2;
        s.gravity = {0, 0, -9.81};
        Simulation sim(make_box_tet_mesh(2, 2, 4, {0, 0, 0}, {0.2, 0.2, 1}), s);
        sim.pin_below(1e-9);
        DragSpring drag;
        drag.vertices = {sim.num_nodes() - 1, sim.num_nodes() - 2, sim.num_nodes() - 4};
        drag.weights = {0.3, 0.3, 0.4};
        drag.target = {50, -30, 80};
        drag.stiffness = 1e7;
        sim.set_drag(drag);
        for (int i = 0; i < 60; ++i) {
            sim.step();
            for (double v : sim.positions())
                ASSERT_TRUE(std::isfinite(v)) << material_name(material);
            for (double v : sim.von_mises_stress()) ASSERT_TRUE(std::isfinite(v));
        }
    }
}

TEST(Simulation, RejectsBadSettings) {
    const TetMesh mesh = make_box_tet_mesh(1, 1, 1, {0, 0, 0}, {1, 1, 1});
    auto bad = [&](auto mutate) {
        SimulationSettings s;
        mutate(s);
        EXPECT_THROW(Simulation(mesh, s), Error);
    };
    bad([](SimulationSettings& s) { s.young = std::nan(""); });
    bad([](SimulationSettings& s) { s.poisson = 0.5; });
    bad([](SimulationSettings& s) { s.dt = 0; });
    bad([](SimulationSettings& s) { s.order = 4; });
    bad([](SimulationSettings& s) { s.density = -1; });
    bad([](SimulationSettings& s) { s.frame_budget_ms = -1; });
    bad([](SimulationSettings& s) { s.frame_budget_ms = std::nan(""); });
}

TEST(Simulation, DefaultStepsConvergeAndTheForcingTermLeavesTheSettingsAlone) {
    // A soft beam bent by sideways gravity: several Newton iterations per frame.
    SimulationSettings s;
    s.young = 2e4;
    s.gravity = {9.81, 0, 0};
    Simulation sim(make_box_tet_mesh(2, 2, 6, {0, 0, 0}, {0.2, 0.2, 0.6}), s);
    sim.pin_below(1e-9);
    int iterations = 0;
    for (int frame = 0; frame < 5; ++frame) {
        const StepResult r = sim.step();
        EXPECT_TRUE(r.converged) << "frame " << frame;
        EXPECT_EQ(r.stop, NewtonStop::Converged);
        EXPECT_LE(r.relative_decrement, s.newton_tolerance);
        iterations = std::max(iterations, r.newton_iterations);
        // The forcing term set the CG tolerance during the step; the user's value is back.
        EXPECT_EQ(sim.settings().pcg.relative_tolerance, s.pcg.relative_tolerance);
    }
    EXPECT_GT(iterations, 1); // the tolerance, not a single iteration, ended the steps
}

TEST(Simulation, OneThreadAndAllThreadsStepBitForBit) {
    // On one thread the CPU backend sums each element's Hessian blocks as it goes (per-entry
    // order, cpu/element_sum.hpp); on more it stores them and sums them by the per-entry map.
    // Both, and the batched neo-Hookean SVDs, must give the same bits.
    for (const Material material : {Material::NeoHookean, Material::Corotational})
        for (int order : {1, 2}) {
            SimulationSettings s;
            s.young = 2e4;
            s.order = order;
            s.material = material;
            s.stiffness_damping = 0.01;
            s.gravity = {9.81, 0, -9.81};
            auto run = [&](int threads) {
                const int before = set_num_threads(threads);
                Simulation sim(make_box_tet_mesh(2, 2, 6, {0, 0, 0}, {0.2, 0.2, 0.6}), s);
                sim.pin_below(1e-9);
                for (int frame = 0; frame < 3; ++frame) EXPECT_TRUE(sim.step().converged);
                set_num_threads(before);
                return sim.positions();
            };
            EXPECT_EQ(run(1), run(num_threads())) << material_name(material) << " p" << order;
        }
}

TEST(Simulation, CudaWithoutADeviceIsOneClearError) {
    if (cuda_device_available()) GTEST_SKIP() << "a CUDA device exists here";
    SimulationSettings s;
    s.backend = Backend::Cuda;
    try {
        Simulation sim(make_box_tet_mesh(1, 1, 1, {0, 0, 0}, {1, 1, 1}), s);
        ADD_FAILURE() << "no error without a CUDA device";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::Unsupported);
        EXPECT_EQ(std::string(e.what()).rfind("CUDA backend: ", 0), 0u) << e.what();
    }
}

TEST(Simulation, LumpedMassIsPositiveAndSumsToRhoV) {
    for (int order = 1; order <= 3; ++order) {
        SimulationSettings s;
        s.order = order;
        s.density = 7.5;
        Simulation sim(make_box_tet_mesh(2, 1, 1, {0, 0, 0}, {2, 1, 1}), s);
        double total = 0;
        for (double m : sim.lumped_mass()) {
            EXPECT_GT(m, 0.0);
            total += m;
        }
        EXPECT_NEAR(total, 7.5 * 2.0, 1e-10);
    }
}

TEST(Simulation, NewtonStartsAtThePreviousStateOnlyWhenThePredictionIsFarWorse) {
    // A prediction that inverts slivers (a 1e-4 needle on a sphere) had a potential of 1.5e4
    // against 13 at the step's start, and the frames' strain energy grew 2.8 -> 1.5e4 -> 7e7.
    EXPECT_TRUE(start_at_previous_state(1.5e4, 13.0));
    EXPECT_TRUE(start_at_previous_state(std::nan(""), 13.0)); // a non-finite prediction
    EXPECT_TRUE(start_at_previous_state(10.0, -10.0));
    // Ordinary motion: the two are close, or the prediction is the better start.
    EXPECT_FALSE(start_at_previous_state(14.0, 13.0));
    EXPECT_FALSE(start_at_previous_state(12.0, 13.0));
    EXPECT_FALSE(start_at_previous_state(-5.0, -10.0));
    EXPECT_FALSE(start_at_previous_state(0.0, 0.0));
    EXPECT_FALSE(start_at_previous_state(1e30, std::nan(""))); // W at the start unknown
}

// ---- per backend: the same checks on the CPU and the CUDA backend -------------------------------

/// Simulation behaviour every backend must show (CUDA instances skipped without a device).
class SimulationPerBackend : public test::BackendTest {
protected:
    /// Default settings on this instance's backend, gravity along -x.
    SimulationSettings settings() const {
        SimulationSettings s;
        s.backend = backend();
        s.gravity = {-9.81, 0, 0};
        return s;
    }
};

TEST_P(SimulationPerBackend, PinnedNodesDoNotMove) {
    Simulation sim(make_box_tet_mesh(2, 2, 3, {0, 0, 0}, {0.2, 0.2, 0.3}), settings());
    ASSERT_GT(sim.pin_below(1e-9), 0);
    for (int i = 0; i < 5; ++i) sim.step();
    const auto x = sim.positions();
    const auto& rest = sim.rest_positions();
    for (std::size_t i = 0; i < x.size() / 3; ++i)
        if (sim.pinned()[i])
            for (int d = 0; d < 3; ++d) {
                EXPECT_EQ(x[3 * i + d], rest[3 * i + d]) << "node " << i;
            }
}

TEST_P(SimulationPerBackend, NodesPinnedMidRunStayPut) {
    Simulation sim(make_box_tet_mesh(2, 2, 4, {0, 0, 0}, {0.2, 0.2, 0.4}), settings());
    sim.pin_below(1e-9);
    for (int i = 0; i < 5; ++i) sim.step();
    // Pin a second layer while it moves: from now on it must not move (warm starts included).
    const auto& rest = sim.rest_positions();
    for (Index i = 0; i < sim.num_nodes(); ++i)
        if (std::abs(rest[3 * i + 2] - 0.1) < 1e-9) sim.set_pinned(i, true);
    const auto held = sim.positions();
    for (int i = 0; i < 5; ++i) sim.step();
    const auto x = sim.positions();
    for (Index i = 0; i < sim.num_nodes(); ++i)
        if (sim.pinned()[i])
            for (int d = 0; d < 3; ++d) {
                EXPECT_EQ(x[3 * i + d], held[3 * i + d]) << "node " << i;
            }
}

TEST_P(SimulationPerBackend, EveryNodePinnedIsTriviallyConverged) {
    for (Integrator integrator : {Integrator::BackwardEuler, Integrator::Static}) {
        SCOPED_TRACE(integrator_name(integrator));
        SimulationSettings s;
        s.backend = backend();
        s.integrator = integrator;
        Simulation sim(make_box_tet_mesh(1, 1, 2, {0, 0, 0}, {0.1, 0.1, 0.2}), s);
        EXPECT_EQ(sim.pin_below(1.0), sim.num_nodes());
        const auto held = sim.positions();
        for (int i = 0; i < 2; ++i) {
            const StepResult r = sim.step();
            EXPECT_TRUE(r.converged); // nothing is free: the start is the solution
            EXPECT_EQ(r.final_residual, 0.0);
            EXPECT_EQ(r.line_search_failures, 0);
        }
        EXPECT_EQ(sim.positions(), held);
    }
}

TEST_P(SimulationPerBackend, ATightNewtonToleranceIsMetInEveryStepWithGravityAndADrag) {
    // Newton's residual, energies and line search in double on every backend (CUDA: over the
    // float matrix and PCG): a tolerance far below float round-off (in float, Newton stalled
    // near 1e-3) is met in every step of a dynamic run.
    for (int order : {1, 2}) {
        SCOPED_TRACE("p" + std::to_string(order));
        SimulationSettings s = settings();
        s.order = order;
        s.young = 2e5;
        s.newton_tolerance = 1e-8;
        s.max_newton_iterations = 40;
        s.pcg.relative_tolerance = 1e-5; // reachable by the float PCG
        s.pcg.max_iterations = 2000;
        Simulation sim(make_box_tet_mesh(2, 2, 6, {0, 0, 0}, {0.2, 0.2, 0.6}), s);
        sim.pin_below(1e-9);
        DragSpring drag; // on a top face (vertex i + 3 j + 9 k of the 3 x 3 x 7 lattice)
        drag.vertices = {58, 59, 62};
        drag.weights = {0.3, 0.3, 0.4};
        drag.target = {0.3, 0.25, 0.65};
        drag.stiffness = 500;
        sim.set_drag(drag);
        const auto& rest = sim.rest_positions();
        double moved = 0;
        for (int frame = 0; frame < 30; ++frame) {
            const StepResult r = sim.step();
            EXPECT_TRUE(r.converged)
                << "frame " << frame << ": " << r.newton_iterations
                << " Newton iterations, residual " << r.initial_residual << " -> "
                << r.final_residual << ", line-search failures " << r.line_search_failures;
            EXPECT_FALSE(r.recovered) << "frame " << frame;
            const auto x = sim.positions();
            for (std::size_t k = 0; k < x.size(); ++k)
                moved = std::max(moved, std::abs(x[k] - rest[k]));
        }
        EXPECT_GT(moved, 0.02) << "the beam must bend";
    }
}

TEST_P(SimulationPerBackend, OnDemandProjectionFallsBackOnAnIndefiniteHessianAndKeepsStepping) {
    // A cube squashed to 5% of its height, solved for equilibrium with its foot pinned: without
    // an inertia term the exact Hessian of the squashed state is indefinite (the PCG breaks down
    // or the direction does not descend), so on demand projects the iterations that need it (or
    // takes a truncated exact direction), and the cube comes back up.
    // Both preconditioners: the multigrid levels are re-valued from the projected matrix.
    for (Preconditioner preconditioner : {Preconditioner::BlockJacobi, Preconditioner::Multigrid}) {
        SCOPED_TRACE(preconditioner_name(preconditioner));
        SimulationSettings s = free_settings(Integrator::Static, Material::NeoHookean);
        s.backend = backend();
        s.preconditioner = preconditioner;
        s.max_newton_iterations = 8;
        s.pcg.relative_tolerance = 1e-4;
        s.newton_tolerance = 1e-3;
        ASSERT_EQ(s.projection, HessianProjection::OnDemand); // the default
        Simulation sim(make_box_tet_mesh(3, 3, 3, {0, 0, 0}, {1, 1, 1}), s);
        sim.pin_below(1e-9);
        auto x = sim.rest_positions();
        for (std::size_t i = 2; i < x.size(); i += 3) x[i] *= 0.05;
        sim.set_state(x, std::vector<double>(x.size(), 0.0));
        int fallbacks = 0, truncated = 0;
        for (int i = 0; i < 40; ++i) {
            const StepResult r = sim.step();
            for (double v : sim.positions()) ASSERT_TRUE(std::isfinite(v)) << "step " << i;
            fallbacks += r.projection_fallbacks;
            truncated += r.truncated_solves;
            if (i == 0) {
                EXPECT_GE(r.projection_fallbacks + r.truncated_solves, 1);
            }
        }
        EXPECT_GE(fallbacks + truncated, 1);
        const auto p = sim.positions();
        double zmin = 1e9, zmax = -1e9;
        for (std::size_t i = 2; i < p.size(); i += 3)
            zmin = std::min(zmin, p[i]), zmax = std::max(zmax, p[i]);
        EXPECT_GT(zmax - zmin, 0.8) << "the cube did not recover";
    }
}

INSTANTIATE_TEST_SUITE_P(Backends, SimulationPerBackend, test::all_backends(),
                         test::backend_param_name);

} // namespace
} // namespace edn
