// The preconditioner's set-up prepared with a topology change (sim/prepared_change.hpp,
// SimulationBackend::prepare_solver): with multigrid, a cut prepared on another thread commits a
// backend whose hierarchy is already built (CUDA: uploaded on the preparing thread), and its first
// step builds nothing and equals the first step of a backend that builds the hierarchy lazily
// (bit for bit on the CPU); pins changed between the preparation and the commit make the first
// step build it again, and the result equals the one-phase cut with those pins. Changes prepared
// on top of one another carry the pins too.

#include "mesh/cut.hpp"
#include "sim/prepared_change.hpp"
#include "sim/simulation.hpp"
#include "support/backend.hpp"
#include "support/mesh_fixtures.hpp"
#include "support/prepared_cuts.hpp"
#include "support/soft_settings.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <memory>
#include <thread>

namespace edn {
namespace {

/// beam_settings(order) with the multigrid preconditioner on `backend` (CUDA: reproducible runs).
SimulationSettings multigrid_settings(int order, Backend backend = Backend::Cpu) {
    SimulationSettings s = test::beam_settings(order);
    s.preconditioner = Preconditioner::Multigrid;
    s.backend = backend;
    s.deterministic = true;
    return s;
}

/// The same state: bit for bit on the CPU; on the device (float solves) to 1e-5 m.
void expect_same_state(const Simulation& a, const Simulation& b) {
    if (a.settings().backend == Backend::Cpu) {
        EXPECT_EQ(a.positions(), b.positions());
        EXPECT_EQ(a.velocities(), b.velocities());
        return;
    }
    const std::vector<double> x = a.positions(), y = b.positions();
    ASSERT_EQ(x.size(), y.size());
    double worst = 0;
    for (std::size_t k = 0; k < x.size(); ++k) worst = std::max(worst, std::abs(x[k] - y[k]));
    EXPECT_LE(worst, 1e-5);
}

/// A 1 x 1 x 2 beam fine enough for a hierarchy below the fine level, pinned at its foot, after
/// two frames of sagging.
std::unique_ptr<Simulation> sagging_beam(const SimulationSettings& settings) {
    auto sim = std::make_unique<Simulation>(test::make_box_mesh(4, 4, 8, 1.0, 1.0, 2.0), settings);
    sim->pin_below(1e-9);
    for (int f = 0; f < 2; ++f) sim->step();
    return sim;
}

using test::blade;
using test::prepare_on_thread;

/// A fresh simulation of `sim`'s mesh, state and pins: its first step builds the hierarchy
/// inside the step (the lazy path).
std::unique_ptr<Simulation> lazy_twin(const Simulation& sim) {
    auto twin = std::make_unique<Simulation>(sim.mesh(), sim.settings());
    twin->set_pins(sim.pinned());
    twin->set_state(sim.positions(), sim.velocities());
    return twin;
}

/// The top node of the beam (largest rest z).
Index top_node(const Simulation& sim) {
    Index top = 0;
    for (Index i = 0; i < sim.num_nodes(); ++i)
        if (sim.rest_positions()[3 * i + 2] > sim.rest_positions()[3 * top + 2]) top = i;
    return top;
}

class PreparedSolver : public test::BackendOrderTest {};

TEST_P(PreparedSolver, APreparedCutCommitsABuiltHierarchyAndStepsAsTheLazyPath) {
    const std::unique_ptr<Simulation> sim = sagging_beam(multigrid_settings(order(), backend()));
    EXPECT_EQ(sim->solver_setup().builds_in_step, 1); // the scene's first step built it
    PreparedChange prepared = prepare_on_thread(sim->change_basis(), blade(1.05));
    ASSERT_TRUE(prepared);
    EXPECT_GT(prepared.record().hierarchy_ms, 0.0);
    EXPECT_GE(prepared.record().repattern_ms, prepared.record().hierarchy_ms);
    const TopologyChangeRecord record = sim->commit(std::move(prepared));
    EXPECT_GT(record.split_cells, 0);
    EXPECT_EQ(sim->solver_setup().builds, 1); // built by the preparation
    EXPECT_EQ(sim->solver_setup().builds_in_step, 0);

    const std::unique_ptr<Simulation> lazy = lazy_twin(*sim);
    EXPECT_EQ(lazy->solver_setup().builds, 0);
    const StepResult a = sim->step();
    const StepResult b = lazy->step();
    EXPECT_EQ(sim->solver_setup().builds, 1); // the first step built nothing
    EXPECT_EQ(sim->solver_setup().builds_in_step, 0);
    EXPECT_EQ(lazy->solver_setup().builds_in_step, 1);
    EXPECT_EQ(a.newton_iterations, b.newton_iterations);
    if (backend() == Backend::Cpu) {
        EXPECT_EQ(a.cg_iterations, b.cg_iterations);
    }
    EXPECT_GT(a.cg_iterations, 0);
    expect_same_state(*sim, *lazy);
}

TEST_P(PreparedSolver, PinsChangedBeforeTheCommitRebuildTheHierarchyInTheFirstStep) {
    const SimulationSettings settings = multigrid_settings(order(), backend());
    const std::unique_ptr<Simulation> two = sagging_beam(settings);
    const std::unique_ptr<Simulation> one = sagging_beam(settings);
    const CutPlane plane = blade(1.05);
    PreparedChange prepared = prepare_on_thread(two->change_basis(), plane);
    EXPECT_GT(prepared.record().hierarchy_ms, 0.0);
    // The user pins the top meanwhile: the prepared hierarchy was built for other pins.
    two->set_pinned(top_node(*two), true);
    one->set_pinned(top_node(*one), true);
    two->commit(std::move(prepared));
    one->cut(plane); // one phase, prepared with the new pins
    EXPECT_EQ(one->solver_setup().builds, 1);
    EXPECT_EQ(one->solver_setup().builds_in_step, 0);
    ASSERT_EQ(two->pinned(), one->pinned());

    const StepResult a = two->step();
    const StepResult b = one->step();
    EXPECT_EQ(two->solver_setup().builds, 2); // prepared, then again for the pins of the commit
    EXPECT_EQ(two->solver_setup().builds_in_step, 1);
    EXPECT_EQ(one->solver_setup().builds_in_step, 0);
    if (backend() == Backend::Cpu) {
        EXPECT_EQ(a.cg_iterations, b.cg_iterations);
    }
    expect_same_state(*two, *one);
    // Later steps keep the rebuilt hierarchy.
    two->step();
    EXPECT_EQ(two->solver_setup().builds, 2);
}

INSTANTIATE_TEST_SUITE_P(Backends, PreparedSolver,
                         ::testing::Combine(test::all_backends(), ::testing::Values(1, 2)),
                         test::backend_order_name);

TEST(PreparedSolverCpu, ChainedChangesPrepareWithTheCarriedPins) {
    const std::unique_ptr<Simulation> sim = sagging_beam(multigrid_settings(1));
    const ChangeBasis basis = sim->change_basis();
    EXPECT_EQ(basis.pinned(), sim->pinned());
    PreparedChange first = Simulation::prepare_cut(basis, blade(0.7));
    const ChangeBasis chained = Simulation::chain_basis(first, basis);
    PreparedChange second = Simulation::prepare_cut(chained, blade(1.4));
    sim->commit(std::move(first));
    EXPECT_EQ(sim->pinned(), chained.pinned()); // what the second preparation was built for
    sim->commit(std::move(second));
    sim->step();
    EXPECT_EQ(sim->solver_setup().builds, 1);
    EXPECT_EQ(sim->solver_setup().builds_in_step, 0);
}

TEST(PreparedSolverCpu, OtherPreconditionersBuildNothing) {
    SimulationSettings s = test::beam_settings(1);
    s.preconditioner = Preconditioner::BlockJacobi;
    const std::unique_ptr<Simulation> sim = sagging_beam(s);
    PreparedChange prepared = Simulation::prepare_cut(sim->change_basis(), blade(1.05));
    EXPECT_EQ(prepared.record().hierarchy_ms, 0.0);
    sim->commit(std::move(prepared));
    sim->step();
    EXPECT_EQ(sim->solver_setup().builds, 0);
}

} // namespace
} // namespace edn
