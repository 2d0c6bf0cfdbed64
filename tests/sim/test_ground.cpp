// The penalty ground (SimulationSettings::ground_height) and its friction
// (ground_friction): a dropped body comes to rest on the plane on every backend, friction stops
// a sliding body, the friction term against finite differences in double (CPU), and
// Simulation::set_ground changing the plane in place.
#include "core/error.hpp"
#include "mesh/box_mesh.hpp"
#include "sim/simulation.hpp"
#include "support/backend.hpp"
#include "support/random.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace edn {
namespace {

class GroundPerBackend : public test::BackendTest {
protected:
    SimulationSettings settings() const {
        SimulationSettings s;
        s.backend = backend();
        s.ground_height = 0.0;
        s.max_newton_iterations = 40;
        return s;
    }
};

/// Lowest z and largest speed of the current state.
std::pair<double, double> lowest_and_fastest(const Simulation& sim) {
    const std::vector<double> x = sim.positions(), v = sim.velocities();
    double lowest = 1e300, fastest = 0;
    for (std::size_t i = 0; i < x.size(); i += 3) {
        lowest = std::min(lowest, x[i + 2]);
        fastest = std::max(fastest, std::hypot(v[i], v[i + 1], v[i + 2]));
    }
    return {lowest, fastest};
}

TEST_P(GroundPerBackend, ADroppedBodyComesToRestOnThePlane) {
    SimulationSettings s = settings();
    s.mass_damping = 1.0;
    // A 0.2 m cube released 0.1 m above the ground: it lands after ~0.14 s.
    Simulation sim(make_box_tet_mesh(2, 2, 2, {0, 0, 0.1}, {0.2, 0.2, 0.3}), s);
    double lowest_ever = 1e300;
    for (int frame = 0; frame < 180; ++frame) { // 3 s
        sim.step();
        lowest_ever = std::min(lowest_ever, lowest_and_fastest(sim).first);
    }
    const auto [lowest, fastest] = lowest_and_fastest(sim);
    // Resting on the plane: the penalty lets nodes sink by about m g / k (~0.3 mm here).
    EXPECT_LT(lowest, 0.002) << "the body must have come down to the plane";
    EXPECT_GT(lowest, -0.002) << "no node far below the plane";
    EXPECT_GT(lowest_ever, -0.01) << "not through the plane on impact";
    EXPECT_LT(fastest, 0.02) << "at rest";
    // Without the ground it falls on (0.5 g t^2 = 44 m in 3 s).
    s.ground_height.reset();
    Simulation falling(make_box_tet_mesh(2, 2, 2, {0, 0, 0.1}, {0.2, 0.2, 0.3}), s);
    for (int frame = 0; frame < 60; ++frame) falling.step();
    EXPECT_LT(lowest_and_fastest(falling).first, -1.0);
}

/// Mean x of the nodes after a body resting on the plane slides off at 1 m/s for 0.5 s.
double slide(Backend backend, double friction) {
    SimulationSettings s;
    s.backend = backend;
    s.ground_height = 0.0;
    s.ground_friction = friction;
    s.max_newton_iterations = 40;
    Simulation sim(make_box_tet_mesh(2, 2, 1, {0, 0, -1e-4}, {0.2, 0.2, 0.1}), s);
    std::vector<double> v(sim.rest_positions().size(), 0.0);
    for (std::size_t i = 0; i < v.size(); i += 3) v[i] = 1.0;
    sim.set_state(sim.rest_positions(), v);
    for (int frame = 0; frame < 30; ++frame) sim.step();
    const std::vector<double> x = sim.positions();
    double sum = 0;
    for (std::size_t i = 0; i < x.size(); i += 3) sum += x[i];
    return sum / static_cast<double>(x.size() / 3) - 0.1;
}

TEST_P(GroundPerBackend, FrictionSlowsASlidingBody) {
    const double frictionless = slide(backend(), 0.0), rough = slide(backend(), 20.0);
    EXPECT_GT(frictionless, 0.4) << "slides on at about 1 m/s for 0.5 s";
    EXPECT_LT(rough, 0.5 * frictionless);
    EXPECT_GT(rough, 0.0) << "friction slows, never reverses";
}

INSTANTIATE_TEST_SUITE_P(Backends, GroundPerBackend, test::all_backends(),
                         test::backend_param_name);

TEST(Ground, FrictionTermMatchesFiniteDifferences) {
    // The friction term alone (a simulation with it minus one without) at a state with some
    // nodes below the plane at the step's start.
    SimulationSettings s;
    s.ground_height = 0.05;
    s.ground_friction = 5.0;
    SimulationSettings none = s;
    none.ground_friction = 0.0;
    const TetMesh mesh = make_box_tet_mesh(2, 2, 2, {0, 0, 0}, {0.2, 0.2, 0.2});
    Simulation with(mesh, s), without(mesh, none);
    std::vector<double> x = with.rest_positions(), v(x.size());
    const std::vector<double> r = test::random_vector(x.size(), 3);
    for (std::size_t k = 0; k < x.size(); ++k)
        x[k] += 0.01 * r[k], v[k] = 0.5 * r[(k + 7) % x.size()];
    with.set_state(x, v);
    without.set_state(x, v);
    std::vector<double> y = x;
    const std::vector<double> shift = test::random_vector(y.size(), 4);
    for (std::size_t k = 0; k < y.size(); ++k) y[k] += 0.02 * shift[k];
    const std::vector<double> dir = test::random_vector(y.size(), 8);
    auto term = [&](const std::vector<double>& at, std::vector<double>& g,
                    std::vector<double>& hv) {
        std::vector<double> g1, g0;
        const double e =
            with.incremental_potential(at, &g1) - without.incremental_potential(at, &g0);
        const auto h1 = with.hessian_product(at, dir), h0 = without.hessian_product(at, dir);
        g.resize(at.size());
        hv.resize(at.size());
        for (std::size_t k = 0; k < at.size(); ++k) g[k] = g1[k] - g0[k], hv[k] = h1[k] - h0[k];
        return e;
    };
    std::vector<double> g, hv, gp, hvp, gm, hvm;
    const double e = term(y, g, hv);
    EXPECT_GT(e, 0) << "nodes in contact moved tangentially";
    const double h = 1e-6;
    std::vector<double> yp = y, ym = y;
    for (std::size_t k = 0; k < y.size(); ++k) yp[k] += h * dir[k], ym[k] -= h * dir[k];
    const double ep = term(yp, gp, hvp), em = term(ym, gm, hvm);
    double g_dot = 0, scale = 0;
    for (std::size_t k = 0; k < y.size(); ++k) g_dot += g[k] * dir[k];
    EXPECT_NEAR((ep - em) / (2 * h), g_dot, 1e-6 * std::abs(g_dot));
    for (double value : hv) scale = std::max(scale, std::abs(value));
    ASSERT_GT(scale, 0);
    for (std::size_t k = 0; k < y.size(); ++k) {
        EXPECT_NEAR((gp[k] - gm[k]) / (2 * h), hv[k], 1e-6 * scale) << "dof " << k;
        if (k % 3 == 2) {
            EXPECT_EQ(g[k], 0.0) << "friction is tangential";
        }
    }
}

TEST(Ground, SetGroundChangesThePlaneInPlace) {
    SimulationSettings s;
    s.gravity = {0, 0, -9.81};
    Simulation sim(make_box_tet_mesh(1, 1, 1, {0, 0, 0}, {0.1, 0.1, 0.1}), s);
    sim.set_ground(0.0, 2e5, 2.0);
    EXPECT_EQ(sim.settings().ground_height, 0.0);
    EXPECT_EQ(sim.settings().ground_stiffness, 2e5);
    EXPECT_EQ(sim.settings().ground_friction, 2.0);
    for (int i = 0; i < 30; ++i) sim.step();
    EXPECT_GT(lowest_and_fastest(sim).first, -0.002);
    EXPECT_THROW(sim.set_ground(std::nan(""), 1e5, 0.0), Error);
    EXPECT_THROW(sim.set_ground(0.0, -1.0, 0.0), Error);
    EXPECT_THROW(sim.set_ground(0.0, 1e5, -1.0), Error);
    EXPECT_EQ(sim.settings().ground_height, 0.0) << "unchanged after a refusal";
    sim.set_ground(std::nullopt, 1e5, 0.0);
    for (int i = 0; i < 30; ++i) sim.step();
    EXPECT_LT(lowest_and_fastest(sim).first, -0.1);
}

} // namespace
} // namespace edn
