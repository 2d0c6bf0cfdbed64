// Rayleigh stiffness damping (SimulationSettings::stiffness_damping, beta): the damping term of
// the incremental potential against finite differences and against the linear elastic energy,
// invariance under rigid motions, and its effect on a vibrating beam (CPU backend).
#include "core/error.hpp"
#include "mesh/box_mesh.hpp"
#include "sim/simulation.hpp"
#include "support/random.hpp"
#include "support/term_difference.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

constexpr double kBeta = 0.02; // [s]

SimulationSettings damped_settings(Material material, int order, double beta) {
    SimulationSettings s;
    s.order = order;
    s.material = material;
    s.young = 1e5;
    s.poisson = 0.3;
    s.dt = 1.0 / 60.0;
    s.gravity = {0, 0, -9.81};
    s.stiffness_damping = beta;
    s.projection = HessianProjection::Never; // exact Hessians: comparable with finite differences
    return s;
}

TetMesh small_box() {
    return make_box_tet_mesh(2, 2, 2, {0, 0, 0}, {0.2, 0.2, 0.2});
}

/// A deformed state with a velocity, the same for every simulation built from `sim`'s mesh.
void set_moving_state(Simulation& sim, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> x = sim.rest_positions(), v(x.size());
    for (std::size_t k = 0; k < x.size(); ++k) {
        x[k] += 0.01 * u(rng);
        v[k] = 0.3 * u(rng);
    }
    sim.set_state(x, v);
}

/// `n` values uniform in [-scale, scale) (scale times support's random_vector).
std::vector<double> random_vector(std::size_t n, std::uint32_t seed, double scale) {
    std::vector<double> out = test::random_vector(n, seed);
    for (double& v : out) v *= scale;
    return out;
}

class StiffnessDampingFd : public ::testing::TestWithParam<std::tuple<Material, int>> {};

TEST_P(StiffnessDampingFd, GradientAndHessianMatchFiniteDifferences) {
    const auto [material, order] = GetParam();
    Simulation damped(small_box(), damped_settings(material, order, kBeta));
    Simulation undamped(small_box(), damped_settings(material, order, 0.0));
    set_moving_state(damped, 7);
    set_moving_state(undamped, 7);
    std::vector<double> y = damped.positions();
    const auto shift = random_vector(y.size(), 11, 0.005);
    for (std::size_t k = 0; k < y.size(); ++k) y[k] += shift[k];
    const auto dir = random_vector(y.size(), 13, 1.0);
    const test::TermParts d = test::expect_term_derivatives(damped, undamped, y, dir, 1e-10);
    EXPECT_GT(d.energy, 0) << "y differs from x_start by a non-rigid displacement";
    // The damping Hessian (beta/h) K0 does not depend on y.
    std::vector<double> yp = y;
    for (std::size_t k = 0; k < y.size(); ++k) yp[k] += 1e-6 * dir[k];
    const test::TermParts p = test::term_difference(damped, undamped, yp, dir);
    double scale = 0;
    for (double v : d.hessian_v) scale = std::max(scale, std::abs(v));
    for (std::size_t k = 0; k < y.size(); ++k)
        EXPECT_NEAR(p.hessian_v[k], d.hessian_v[k], 1e-9 * scale) << "dof " << k;
}

INSTANTIATE_TEST_SUITE_P(Materials, StiffnessDampingFd,
                         ::testing::Values(std::make_tuple(Material::Corotational, 1),
                                           std::make_tuple(Material::NeoHookean, 1),
                                           std::make_tuple(Material::Corotational, 2),
                                           std::make_tuple(Material::Linear, 2)));

TEST(StiffnessDamping, EqualsBetaOverHTimesTheLinearElasticEnergyOfTheStep) {
    // From the rest state, the damping potential is (beta/h) W_lin(y) with W_lin the linear
    // elastic energy of y, which a gravity-free static simulation evaluates directly.
    for (int order : {1, 2}) {
        SimulationSettings s = damped_settings(Material::Corotational, order, kBeta);
        Simulation damped(small_box(), s);
        s.stiffness_damping = 0;
        Simulation undamped(small_box(), s);
        SimulationSettings lin = s;
        lin.material = Material::Linear;
        lin.integrator = Integrator::Static;
        lin.gravity = {0, 0, 0};
        Simulation linear(small_box(), lin);
        std::vector<double> y = damped.rest_positions();
        const auto shift = random_vector(y.size(), 17, 0.01);
        for (std::size_t k = 0; k < y.size(); ++k) y[k] += shift[k];
        std::vector<double> g_lin;
        const double w_lin = linear.incremental_potential(y, &g_lin);
        const auto dir = random_vector(y.size(), 19, 1.0);
        const test::TermParts d = test::term_difference(damped, undamped, y, dir);
        const double c = kBeta / s.dt;
        EXPECT_NEAR(d.energy, c * w_lin, 1e-9 * c * w_lin) << "p = " << order;
        const auto k_dir = linear.hessian_product(y, dir);
        double scale = 0;
        for (double v : k_dir) scale = std::max(scale, c * std::abs(v));
        for (std::size_t k = 0; k < y.size(); ++k) {
            EXPECT_NEAR(d.gradient[k], c * g_lin[k], 1e-9 * scale) << "dof " << k;
            EXPECT_NEAR(d.hessian_v[k], c * k_dir[k], 1e-9 * scale) << "dof " << k;
        }
    }
}

TEST(StiffnessDamping, RigidTranslationAndInfinitesimalRotationAreNotDamped) {
    SimulationSettings s = damped_settings(Material::Corotational, 2, kBeta);
    Simulation damped(small_box(), s);
    s.stiffness_damping = 0;
    Simulation undamped(small_box(), s);
    set_moving_state(damped, 23);
    set_moving_state(undamped, 23);
    const std::vector<double> x = damped.positions();
    const auto dir = random_vector(x.size(), 29, 1.0);
    // Translation by (0.03, -0.02, 0.05): exactly zero strain.
    std::vector<double> y = x;
    for (std::size_t k = 0; k < y.size(); ++k)
        y[k] += (k % 3 == 0 ? 0.03 : k % 3 == 1 ? -0.02 : 0.05);
    test::TermParts d = test::term_difference(damped, undamped, y, dir);
    std::vector<double> g_ref;
    const double e_ref = damped.incremental_potential(y, &g_ref);
    EXPECT_NEAR(d.energy, 0, 1e-12 * std::abs(e_ref));
    for (double g : d.gradient) EXPECT_NEAR(g, 0, 1e-9);
    // Infinitesimal rotation of the rest shape, delta = omega x X: its (rest) gradient is skew,
    // the symmetric part that the damping sees is zero.
    const double omega[3] = {1e-3, -2e-3, 1.5e-3};
    const std::vector<double>& rest = damped.rest_positions();
    for (std::size_t i = 0; i < x.size() / 3; ++i) {
        const double* p = &rest[3 * i];
        y[3 * i] = x[3 * i] + omega[1] * p[2] - omega[2] * p[1];
        y[3 * i + 1] = x[3 * i + 1] + omega[2] * p[0] - omega[0] * p[2];
        y[3 * i + 2] = x[3 * i + 2] + omega[0] * p[1] - omega[1] * p[0];
    }
    d = test::term_difference(damped, undamped, y, dir);
    EXPECT_NEAR(d.energy, 0, 1e-12 * std::abs(e_ref));
    for (double g : d.gradient) EXPECT_NEAR(g, 0, 1e-9);
}

/// Cantilever along x (clamped at x = 0), no gravity, released from a bending velocity; returns
/// kinetic + strain energy after each frame.
std::vector<double> beam_energies(double beta, Integrator integrator, int frames) {
    SimulationSettings s;
    s.order = 1;
    s.material = Material::Corotational;
    s.young = 1e5;
    s.poisson = 0.3;
    s.density = 1000;
    s.dt = 1.0 / 60.0;
    s.integrator = integrator;
    s.gravity = {0, 0, 0};
    s.stiffness_damping = beta;
    s.max_newton_iterations = 20;
    s.newton_tolerance = 1e-6;
    s.pcg.relative_tolerance = 1e-10;
    s.pcg.max_iterations = 2000;
    Simulation sim(make_box_tet_mesh(8, 2, 2, {0, 0, 0}, {0.8, 0.1, 0.1}), s);
    const auto& rest = sim.rest_positions();
    std::vector<double> v(rest.size(), 0.0);
    for (Index i = 0; i < sim.num_nodes(); ++i) {
        if (rest[3 * i] < 1e-9) sim.set_pinned(i, true);
        v[3 * i + 2] = 0.5 * rest[3 * i] / 0.8; // bending: z velocity grows along the beam
    }
    for (Index i = 0; i < sim.num_nodes(); ++i)
        if (sim.pinned()[i]) v[3 * i + 2] = 0;
    sim.set_state(rest, v);
    std::vector<double> energies;
    for (int f = 0; f < frames; ++f) {
        const StepResult r = sim.step();
        EXPECT_FALSE(r.recovered);
        energies.push_back(r.kinetic_energy + r.strain_energy);
    }
    return energies;
}

TEST(StiffnessDamping, VibratingBeamLosesEnergyFasterWithBeta) {
    for (Integrator integrator : {Integrator::BackwardEuler, Integrator::Midpoint}) {
        const auto undamped = beam_energies(0.0, integrator, 40);
        const auto damped = beam_energies(0.05, integrator, 40);
        EXPECT_LT(damped.back(), 0.5 * undamped.back()) << integrator_name(integrator);
        EXPECT_GT(damped.back(), 0) << integrator_name(integrator);
    }
}

TEST(StiffnessDamping, BackwardEulerEnergyNeverIncreases) {
    const auto e = beam_energies(0.05, Integrator::BackwardEuler, 40);
    for (std::size_t f = 1; f < e.size(); ++f) EXPECT_LE(e[f], e[f - 1] * (1 + 1e-9)) << f;
}

TEST(StiffnessDamping, StaticSolveIgnoresBetaAndNegativeBetaIsRejected) {
    SimulationSettings s = damped_settings(Material::Corotational, 1, kBeta);
    s.integrator = Integrator::Static;
    Simulation damped(small_box(), s);
    s.stiffness_damping = 0;
    Simulation undamped(small_box(), s);
    std::vector<double> y = damped.rest_positions();
    const auto shift = random_vector(y.size(), 31, 0.01);
    for (std::size_t k = 0; k < y.size(); ++k) y[k] += shift[k];
    EXPECT_EQ(damped.incremental_potential(y), undamped.incremental_potential(y));
    for (double bad : {-1e-3, std::nan(""), double(INFINITY)}) {
        s.stiffness_damping = bad;
        try {
            Simulation sim(small_box(), s);
            ADD_FAILURE() << "beta = " << bad << " accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), ErrorCode::Usage);
            EXPECT_NE(std::string(e.what()).find("stiffness damping"), std::string::npos);
        }
    }
}

} // namespace
} // namespace edn
