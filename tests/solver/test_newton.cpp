// The one Newton loop (solver/newton.hpp) on a small host problem, independent of the backends:
// convergence, the reuse of the accepted full step's evaluation, the descent fallback, the start
// rule, the recovery from a non-finite state, the per-step budget (iteration cap and a wall-clock
// budget on a fake clock) and the forcing term.
#include "solver/newton.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace edn {
namespace {

/// W(y) = sum_k (a_k/2 y_k^2 + y_k^4 / 4) - b_k y_k (convex, separable) as NewtonOperations,
/// with the backward-Euler update x = y, v = (y - x_start) / h and no inertia term.
class QuarticOperations final : public NewtonOperations {
public:
    explicit QuarticOperations(std::size_t n) : a(n, 2.0), b(n, 1.0), x(n, 0.0), v(n, 0.0) {
        for (std::size_t k = 0; k < n; ++k) b[k] = 1.0 + 0.5 * double(k);
        for (auto& vec : vectors) vec.assign(n, 0.0);
    }

    void begin_step() override {
        x_start = x;
        vector(NewtonVector::Iterate) = x;
    }
    double evaluate(NewtonVector at, int outputs, NewtonVector gradient) override {
        ++evaluations;
        clock_ms += ms_per_evaluation;
        if (outputs & kHessian) ++hessian_evaluations;
        const std::vector<double>& y = vector(at);
        double e = 0;
        for (std::size_t k = 0; k < y.size(); ++k)
            e += 0.5 * a[k] * y[k] * y[k] + 0.25 * std::pow(y[k], 4) - b[k] * y[k];
        if (outputs & kGradient)
            for (std::size_t k = 0; k < y.size(); ++k)
                vector(gradient)[k] = a[k] * y[k] + std::pow(y[k], 3) - b[k];
        if (outputs & kHessian) hessian_at = y, hessian_projected = projecting;
        strain = e;
        return e + energy_offset + (outputs == kEnergy ? energy_only_noise : 0.0);
    }
    double last_strain_energy() const override { return strain; }
    double start_potential(double strain_at_start) override {
        ++start_potentials;
        return strain_at_start;
    }
    void restart_at_start() override {
        ++restarts;
        vector(NewtonVector::Iterate) = x_start;
    }
    void assemble() override {
        assembled_at = hessian_at;
        assembled_projected = hessian_projected;
    }
    PcgResult solve(bool warm) override {
        warm_solves += warm;
        std::vector<double>& dx = vector(NewtonVector::Direction);
        const std::vector<double>& g = vector(NewtonVector::Gradient);
        // An "exact Hessian" that is indefinite: the solve breaks down and returns an ascent
        // direction unless the Hessians it sums were projected.
        // Variants: negative curvature met after `broken_iterations` CG iterations whose iterate
        // is half the Newton step (`truncated_when_broken`: a descent direction), or at once
        // (broken_iterations = 0: x stays 0).
        const bool broken = exact_indefinite && !assembled_projected;
        const double scale = !broken                ? solve_sign
                             : broken_iterations == 0 ? 0.0
                             : truncated_when_broken  ? 0.5
                                                      : -1.0;
        for (std::size_t k = 0; k < dx.size(); ++k)
            dx[k] = -g[k] / (a[k] + 3 * assembled_at[k] * assembled_at[k]) * scale;
        solved_projected.push_back(assembled_projected);
        PcgResult r;
        r.iterations = broken ? broken_iterations : 1;
        r.reference_norm = 1.0;
        r.final_residual = broken ? broken_residual : 0.0;
        r.converged = !broken;
        r.breakdown = broken && breakdown_when_broken;
        return r;
    }
    void set_projection(bool project) override {
        projecting = project;
        projections.push_back(project);
    }
    void set_linear_tolerance(double relative_tolerance) override {
        linear_tolerances.push_back(relative_tolerance);
    }
    void keep_first_direction() override {}
    double dot(NewtonVector p, NewtonVector q) override {
        double s = 0;
        for (std::size_t k = 0; k < x.size(); ++k) s += vector(p)[k] * vector(q)[k];
        return s;
    }
    void set_trial(double alpha) override {
        for (std::size_t k = 0; k < x.size(); ++k)
            vector(NewtonVector::Trial)[k] =
                vector(NewtonVector::Iterate)[k] + alpha * vector(NewtonVector::Direction)[k];
    }
    void scaled_gradient_direction(double scale) override {
        ++fallbacks;
        for (std::size_t k = 0; k < x.size(); ++k)
            vector(NewtonVector::Direction)[k] = -vector(NewtonVector::Gradient)[k] / scale;
    }
    void accept_trial(bool with_gradient) override {
        std::swap(vector(NewtonVector::Iterate), vector(NewtonVector::Trial));
        if (with_gradient)
            std::swap(vector(NewtonVector::Gradient), vector(NewtonVector::TrialGradient));
    }
    bool update_state() override {
        const std::vector<double>& y = vector(NewtonVector::Iterate);
        for (double value : y)
            if (!std::isfinite(value) || poison_state) {
                x = x_start;
                std::fill(v.begin(), v.end(), 0.0);
                return false;
            }
        for (std::size_t k = 0; k < x.size(); ++k) v[k] = (y[k] - x_start[k]) / dt, x[k] = y[k];
        return true;
    }
    double state_strain_energy() override {
        vector(NewtonVector::Trial) = x;
        evaluate(NewtonVector::Trial, kEnergy, NewtonVector::TrialGradient);
        return strain;
    }
    double state_kinetic_energy() override {
        double e = 0;
        for (double value : v) e += 0.5 * value * value;
        return e;
    }
    double energy_rounding() const override { return 0.0; }

    std::vector<double>& vector(NewtonVector which) { return vectors[static_cast<int>(which)]; }

    std::vector<double> a, b, x, v, x_start, hessian_at, assembled_at;
    std::array<std::vector<double>, kNewtonVectors> vectors;
    double strain = 0, energy_offset = 0, dt = 0.01, solve_sign = 1.0;
    double clock_ms = 0, ms_per_evaluation = 0; ///< a fake clock: each element pass takes this
    /// Added to energy-only evaluations (the line search's after the full step): round-off that
    /// hides small decreases.
    double energy_only_noise = 0;
    bool poison_state = false;
    /// The exact Hessian is indefinite (see solve()); breakdown: the solve says so, else it only
    /// returns an ascent direction.
    bool exact_indefinite = false, breakdown_when_broken = true, truncated_when_broken = false;
    int broken_iterations = 1;
    double broken_residual = 0.25; ///< relative residual of a broken solve's iterate
    std::vector<bool> solved_projected; ///< per solve: whether its Hessians were projected
    bool projecting = true, hessian_projected = true, assembled_projected = true;
    std::vector<bool> projections;         ///< set_projection calls, in order
    std::vector<double> linear_tolerances; ///< set_linear_tolerance calls, in order
    int evaluations = 0, hessian_evaluations = 0, warm_solves = 0, fallbacks = 0, restarts = 0,
        start_potentials = 0;
};

NewtonSettings rules(int iterations, double tolerance) {
    NewtonSettings s;
    s.max_iterations = iterations;
    s.tolerance = tolerance;
    s.dynamic = false;
    s.dt = 0.01;
    return s;
}

TEST(Newton, ConvergesQuadraticallyAndReusesTheAcceptedFullStep) {
    QuarticOperations ops(5);
    NewtonMemory memory;
    const StepResult r = newton_step(ops, rules(20, 1e-6), memory);
    EXPECT_TRUE(r.converged);
    EXPECT_FALSE(r.recovered);
    ASSERT_GE(r.residuals.size(), 3u);
    for (std::size_t k = 0; k < ops.x.size(); ++k) // the minimiser: a y + y^3 = b
        EXPECT_NEAR(ops.a[k] * ops.x[k] + std::pow(ops.x[k], 3), ops.b[k], 1e-8);
    // Newton's local rate: each residual at most a constant times the square of the last.
    for (std::size_t i = 2; i + 1 < r.residuals.size(); ++i)
        EXPECT_LE(r.residuals[i + 1], 10 * r.residuals[i] * r.residuals[i] + 1e-14);
    // One Hessian evaluation per Newton iteration: the accepted full steps were evaluated with
    // gradient and Hessian and the next iteration started from them.
    EXPECT_EQ(ops.hessian_evaluations, r.newton_iterations);
    EXPECT_EQ(r.line_search_failures, 0);
    EXPECT_DOUBLE_EQ(r.strain_energy, ops.strain);
}

TEST(Newton, AStepBelowTheEnergysRoundOffEndsAConvergedIterationAsConverged) {
    // Energy-only evaluations read 1e-7 high. The steps of the early iterations are evaluated
    // with the gradient (no noise) and accepted; the iteration whose decrement meets the
    // tolerance (1e-8 of the first) searches by energy alone and cannot show its decrease of
    // ~1e-8 or less. Its iterate met the tolerance already: converged, no line-search failure.
    QuarticOperations ops(5);
    ops.energy_only_noise = 1e-7;
    NewtonMemory memory;
    const StepResult r = newton_step(ops, rules(20, 1e-4), memory);
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.line_search_failures, 0);
    EXPECT_GE(r.newton_iterations, 2);
    for (std::size_t k = 0; k < ops.x.size(); ++k) // close to the minimiser: a y + y^3 = b
        EXPECT_NEAR(ops.a[k] * ops.x[k] + std::pow(ops.x[k], 3), ops.b[k], 1e-3);

    // A decrement far above the tolerance that the noise hides (one iteration: its step is
    // searched by energy alone): a line-search failure, not converged.
    QuarticOperations hidden(5);
    hidden.energy_only_noise = 1e3;
    NewtonMemory hidden_memory;
    const StepResult h = newton_step(hidden, rules(1, 1e-4), hidden_memory);
    EXPECT_FALSE(h.converged);
    EXPECT_EQ(h.line_search_failures, 1);
    EXPECT_EQ(h.newton_iterations, 0);
}

TEST(Newton, AnAscentDirectionFallsBackToTheScaledGradient) {
    QuarticOperations ops(3);
    ops.solve_sign = -1.0; // the "solver" returns an ascent direction
    NewtonMemory memory;
    const StepResult r = newton_step(ops, rules(50, 1e-3), memory);
    EXPECT_GT(ops.fallbacks, 0);
    EXPECT_EQ(r.line_search_failures, ops.fallbacks);
    EXPECT_LT(r.final_residual, r.initial_residual); // still descends
}

TEST(Newton, OnDemandProjectionStaysExactWhileTheExactHessianWorks) {
    QuarticOperations ops(4);
    NewtonSettings s = rules(20, 1e-6);
    s.projection = HessianProjection::OnDemand;
    NewtonMemory memory;
    for (int step = 0; step < 3; ++step) {
        ops.x.assign(4, 0.1 * step); // away from the minimiser: every step solves
        const StepResult r = newton_step(ops, s, memory);
        EXPECT_TRUE(r.converged);
        EXPECT_EQ(r.projection_fallbacks, 0);
        EXPECT_FALSE(r.projected);
    }
    for (const bool projected : ops.projections) EXPECT_FALSE(projected);
    for (const bool projected : ops.solved_projected) EXPECT_FALSE(projected);

    // Always projects, whatever happens.
    QuarticOperations always(4);
    NewtonSettings a = rules(20, 1e-6);
    a.projection = HessianProjection::Always;
    NewtonMemory always_memory;
    EXPECT_TRUE(newton_step(always, a, always_memory).projected);
    EXPECT_EQ(always.projections, std::vector<bool>{true});
}

TEST(Newton, OnDemandProjectionRedoesOnlyTheIterationsWhoseExactSolveGivesNoDirection) {
    // A PCG breakdown whose iterate ascends, one at once (no CG progress: x = 0), or only an
    // ascent direction without a breakdown.
    struct Case {
        bool breakdown;
        int iterations;
    };
    for (const Case c : {Case{true, 1}, Case{true, 0}, Case{false, 1}}) {
        SCOPED_TRACE(std::to_string(c.breakdown) + " " + std::to_string(c.iterations));
        QuarticOperations ops(4);
        ops.exact_indefinite = true;
        ops.breakdown_when_broken = c.breakdown;
        ops.broken_iterations = c.iterations;
        NewtonSettings s = rules(20, 1e-6);
        s.projection = HessianProjection::OnDemand;
        NewtonMemory memory;
        for (int step = 0; step < 2; ++step) {
            ops.x.assign(4, 0.0); // away from the minimiser: every step solves
            ops.solved_projected.clear();
            const StepResult r = newton_step(ops, s, memory);
            // Every iteration tried the exact Hessian first, and was redone projected (its
            // Hessians evaluated again at the same iterate); Newton converged as the projected
            // Newton does, without scaled-gradient steps or truncations.
            EXPECT_TRUE(r.converged);
            EXPECT_TRUE(r.projected);
            const int solves = static_cast<int>(r.solve_iterations.size());
            EXPECT_EQ(r.projection_fallbacks, solves);
            EXPECT_EQ(r.truncated_solves, 0);
            EXPECT_EQ(r.line_search_failures, 0);
            EXPECT_EQ(ops.fallbacks, 0);
            ASSERT_EQ(ops.solved_projected.size(), 2u * solves);
            for (int i = 0; i < 2 * solves; ++i) EXPECT_EQ(ops.solved_projected[i], i % 2 == 1);
            for (std::size_t k = 0; k < ops.x.size(); ++k)
                EXPECT_NEAR(ops.a[k] * ops.x[k] + std::pow(ops.x[k], 3), ops.b[k], 1e-8);
        }
        // Once the exact Hessian works, the very next step is exact throughout (no hold).
        ops.exact_indefinite = false;
        ops.x.assign(4, 0.0);
        ops.solved_projected.clear();
        const StepResult exact = newton_step(ops, s, memory);
        EXPECT_TRUE(exact.converged);
        EXPECT_FALSE(exact.projected);
        EXPECT_EQ(exact.projection_fallbacks, 0);
        for (const bool projected : ops.solved_projected) EXPECT_FALSE(projected);
    }
}

TEST(Newton, NegativeCurvatureAfterCgProgressKeepsTheTruncatedExactDirection) {
    // The exact solve breaks down after some CG iterations with a descent direction (half the
    // Newton step here) whose relative residual is within the bound: on demand and
    // never take it (Newton-CG truncation), no projected solve; Newton still converges
    // (linearly, at rate 1/2, on this model).
    for (const HessianProjection projection :
         {HessianProjection::OnDemand, HessianProjection::Never}) {
        QuarticOperations ops(4);
        ops.exact_indefinite = true;
        ops.truncated_when_broken = true;
        ops.broken_iterations = 3;
        NewtonSettings s = rules(40, 1e-3);
        s.projection = projection;
        NewtonMemory memory;
        const StepResult r = newton_step(ops, s, memory);
        EXPECT_TRUE(r.converged);
        EXPECT_FALSE(r.projected);
        EXPECT_EQ(r.projection_fallbacks, 0);
        EXPECT_EQ(r.line_search_failures, 0);
        EXPECT_EQ(r.pcg_breakdowns, static_cast<int>(r.solve_iterations.size()));
        EXPECT_EQ(r.truncated_solves, r.pcg_breakdowns);
        for (const bool projected : ops.solved_projected) EXPECT_FALSE(projected);
        for (std::size_t k = 0; k < ops.x.size(); ++k)
            EXPECT_NEAR(ops.a[k] * ops.x[k] + std::pow(ops.x[k], 3), ops.b[k], 1e-2);
    }

    // The same direction with a residual above the bound (block Jacobi's, 1: CG's residual grew
    // before the breakdown): on demand redoes the iteration projected instead.
    QuarticOperations ops(4);
    ops.exact_indefinite = true;
    ops.truncated_when_broken = true;
    ops.broken_iterations = 3;
    ops.broken_residual = 2;
    NewtonSettings s = rules(40, 1e-3);
    s.projection = HessianProjection::OnDemand;
    s.truncated_residual = 1;
    NewtonMemory memory;
    const StepResult r = newton_step(ops, s, memory);
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.truncated_solves, 0);
    EXPECT_EQ(r.projection_fallbacks, static_cast<int>(r.solve_iterations.size()));
}

TEST(Newton, OnlyBlockJacobiBoundsTheTruncatedResidual) {
    SimulationSettings settings;
    for (const Preconditioner p :
         {Preconditioner::BlockJacobi, Preconditioner::TwoLevel, Preconditioner::Multigrid}) {
        settings.preconditioner = p;
        const double bound = newton_settings(settings, 1.0, 0.01).truncated_residual;
        if (p == Preconditioner::BlockJacobi)
            EXPECT_EQ(bound, 1.0);
        else
            EXPECT_TRUE(std::isinf(bound));
    }
}

TEST(Newton, ANonFiniteStateIsRolledBack) {
    QuarticOperations ops(3);
    ops.x = {0.1, 0.2, 0.3};
    ops.poison_state = true;
    NewtonMemory memory;
    const StepResult r = newton_step(ops, rules(5, 1e-6), memory);
    EXPECT_TRUE(r.recovered);
    EXPECT_EQ(ops.x, (std::vector<double>{0.1, 0.2, 0.3}));
    for (double value : ops.v) EXPECT_EQ(value, 0.0);
}

TEST(Newton, TheStartRuleRestartsOnlyWhenThePredictionIsFarAbove) {
    QuarticOperations ops(3);
    NewtonSettings s = rules(5, 1e-6);
    s.dynamic = true;
    NewtonMemory memory;
    memory.strain_at_x = 0.0;
    memory.kinetic_at_x = 0.0;
    memory.have_first_direction = true;
    ops.energy_offset = 1e6; // every potential far above W(x) = 0 at the start
    newton_step(ops, s, memory);
    EXPECT_EQ(ops.restarts, 1);
    EXPECT_EQ(ops.warm_solves, 1); // the first solve of a step starts from the kept correction

    QuarticOperations calm(3);
    NewtonMemory calm_memory;
    calm_memory.strain_at_x = 1e6; // the prediction is below three times the bound: no check
    calm_memory.kinetic_at_x = 0.0;
    newton_step(calm, s, calm_memory);
    EXPECT_EQ(calm.restarts, 0);
    EXPECT_EQ(calm.start_potentials, 0);
    EXPECT_TRUE(std::isfinite(calm_memory.strain_at_x));
}

TEST(Newton, StopsAtTheToleranceNotAtTheCap) {
    QuarticOperations ops(5);
    NewtonMemory memory;
    const StepResult r = newton_step(ops, rules(40, 1e-6), memory);
    EXPECT_TRUE(r.converged);
    EXPECT_EQ(r.stop, NewtonStop::Converged);
    EXPECT_LT(r.newton_iterations, 10); // quadratic convergence, far below the cap
    EXPECT_LE(r.relative_decrement, 1e-6);
    // The iteration before the last had not met the tolerance: Newton stopped at the first one
    // that did. The residuals (|g| per iterate) fell all the way.
    EXPECT_EQ(r.residuals.size(), static_cast<std::size_t>(r.newton_iterations));
    EXPECT_LT(r.residuals.back(), 1e-2 * r.residuals.front());

    QuarticOperations once(5);
    NewtonMemory once_memory;
    const StepResult shorter = newton_step(once, rules(r.newton_iterations - 1, 1e-6), once_memory);
    EXPECT_FALSE(shorter.converged);
    EXPECT_GT(shorter.relative_decrement, 1e-6);
}

TEST(Newton, RespectsTheIterationCap) {
    QuarticOperations ops(5);
    NewtonMemory memory;
    const StepResult r = newton_step(ops, rules(2, 1e-12), memory);
    EXPECT_FALSE(r.converged);
    EXPECT_EQ(r.stop, NewtonStop::IterationCap);
    EXPECT_EQ(r.newton_iterations, 2);
    EXPECT_EQ(ops.hessian_evaluations, 2); // the last full step was not evaluated for a third
    EXPECT_GT(r.relative_decrement, 1e-12);
    EXPECT_LT(r.relative_decrement, 1.0); // but it made progress
    EXPECT_FALSE(r.recovered);
}

TEST(Newton, RespectsTheTimeBudgetOnAFakeClock) {
    // Every element pass takes 1 ms on the fake clock. The first iteration takes two (its own and
    // the full step's), later ones one (the accepted full step's evaluation is reused), so the
    // iterations end at 2, 3, 4, 5, ... ms.
    QuarticOperations ops(5);
    ops.ms_per_evaluation = 1.0;
    NewtonSettings s = rules(40, 1e-15);
    s.budget_ms = 5.5;
    s.clock = [&ops] { return ops.clock_ms; };
    NewtonMemory memory;
    const StepResult r = newton_step(ops, s, memory);
    // After 4 iterations (5 ms, 1.25 ms each on average) a fifth would likely end at 6.25 ms >
    // 5.5: stop before it. (After 3, at 4 ms, a fourth was expected to end at 5.33 ms.)
    EXPECT_EQ(r.stop, NewtonStop::TimeBudget);
    EXPECT_FALSE(r.converged);
    EXPECT_EQ(r.newton_iterations, 4);
    EXPECT_LE(ops.clock_ms, s.budget_ms + 1.0); // at most the last full step's pass beyond it
    EXPECT_FALSE(r.recovered);

    // No budget: the same problem runs to the tolerance.
    QuarticOperations free_ops(5);
    free_ops.ms_per_evaluation = 1.0;
    s.budget_ms = 0;
    NewtonMemory free_memory;
    const StepResult unlimited = newton_step(free_ops, s, free_memory);
    EXPECT_EQ(unlimited.stop, NewtonStop::Converged);
    EXPECT_GT(unlimited.newton_iterations, 4);

    // A budget shorter than one iteration still runs one (a frame always makes progress).
    QuarticOperations tight_ops(5);
    tight_ops.ms_per_evaluation = 1.0;
    s.budget_ms = 0.01;
    s.clock = [&tight_ops] { return tight_ops.clock_ms; };
    NewtonMemory tight_memory;
    const StepResult tight = newton_step(tight_ops, s, tight_memory);
    EXPECT_EQ(tight.stop, NewtonStop::TimeBudget);
    EXPECT_EQ(tight.newton_iterations, 1);
}

TEST(Newton, TheSteadyClockBudgetStopsASlowStep) {
    // The default clock: a budget far below what 40 iterations take ends the step early.
    QuarticOperations ops(5);
    NewtonSettings s = rules(40, 1e-15);
    s.budget_ms = 1e-9;
    NewtonMemory memory;
    const StepResult r = newton_step(ops, s, memory);
    EXPECT_EQ(r.stop, NewtonStop::TimeBudget);
    EXPECT_EQ(r.newton_iterations, 1);
}

TEST(Newton, TheForcingTermLoosensEarlySolvesAndTightensAsTheGradientFalls) {
    QuarticOperations fixed(5);
    NewtonMemory fixed_memory;
    const StepResult a = newton_step(fixed, rules(40, 1e-8), fixed_memory);
    EXPECT_TRUE(fixed.linear_tolerances.empty()); // off: the backend's tolerance throughout

    QuarticOperations ops(5);
    NewtonSettings s = rules(40, 1e-8);
    s.forcing = true;
    s.linear_tolerance = 1e-6;
    NewtonMemory memory;
    const StepResult r = newton_step(ops, s, memory);
    EXPECT_TRUE(r.converged);
    ASSERT_EQ(ops.linear_tolerances.size(), static_cast<std::size_t>(r.newton_iterations));
    EXPECT_EQ(ops.linear_tolerances.front(), kMaxForcing);
    for (double eta : ops.linear_tolerances) {
        EXPECT_LE(eta, kMaxForcing);
        EXPECT_GE(eta, 1e-6);
    }
    // Quadratic convergence tightens the middle solves; the last ones need no more accuracy
    // than the Newton tolerance asks of the gradient (the oversolving safeguard).
    EXPECT_LT(*std::min_element(ops.linear_tolerances.begin(), ops.linear_tolerances.end()),
              0.1 * kMaxForcing);
    // The (exact) fake solver ignores the tolerance: the same iterates as without forcing.
    EXPECT_EQ(r.newton_iterations, a.newton_iterations);
}

TEST(Newton, ForcingTermFormula) {
    const double floor = 1e-4, tol = 1e-3;
    // The first solve, and a slow decrease, get the loosest tolerance.
    EXPECT_EQ(linear_tolerance_for(0, 10, 0, 10, kMaxForcing, tol, floor), kMaxForcing);
    EXPECT_EQ(linear_tolerance_for(1, 9, 10, 10, kMaxForcing, tol, floor), kMaxForcing);
    // A fast decrease: 0.9 (|g| / |g_prev|)^2 = 0.9e-2 (0.9 eta_prev^2 = 0.9e-2 is below 0.1).
    EXPECT_NEAR(linear_tolerance_for(2, 1, 10, 10, kMaxForcing, tol, floor), 0.9e-2, 1e-15);
    // A sudden drop (0.9e-4 asked) after a loose solve keeps 0.9 eta_prev^2 = 0.225 (above 0.1),
    // capped at kMaxForcing.
    EXPECT_EQ(linear_tolerance_for(2, 1, 100, 10, 0.5, tol, 1e-9), kMaxForcing);
    // Never below the floor (0.9e-4 asked) ...
    EXPECT_EQ(linear_tolerance_for(3, 10, 1000, 1, 0.01, tol, floor), floor);
    // ... nor tighter than the Newton tolerance needs: 0.5 tol |g0| / |g| = 0.05 > 0.9e-4.
    EXPECT_NEAR(linear_tolerance_for(3, 0.1, 10, 10, 0.01, tol, floor), 0.05, 1e-15);
    // A floor above the cap wins (a user's loose --cg-tol).
    EXPECT_EQ(linear_tolerance_for(0, 1, 0, 1, kMaxForcing, tol, 0.5), 0.5);
}

} // namespace
} // namespace edn
