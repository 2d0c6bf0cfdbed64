#include "solver/newton.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace edn {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Armijo constant of the sufficient-decrease test.
constexpr double kArmijo = 1e-4;

} // namespace

double linear_tolerance_for(int it, double gnorm, double previous_gnorm, double first_gnorm,
                            double previous_eta, double tolerance, double floor) {
    double eta = kMaxForcing;
    if (it > 0 && previous_gnorm > 0) {
        constexpr double gamma = 0.9;
        const double ratio = gnorm / previous_gnorm;
        eta = gamma * ratio * ratio;
        // A sudden drop of the gradient may be luck: do not tighten faster than the last eta
        // squared while that is still large.
        const double kept = gamma * previous_eta * previous_eta;
        if (kept > 0.1) eta = std::max(eta, kept);
        eta = std::min(eta, kMaxForcing);
    }
    // Solving beyond what the Newton tolerance needs of this step buys nothing.
    if (gnorm > 0) eta = std::max(eta, 0.5 * tolerance * first_gnorm / gnorm);
    return std::max(std::min(eta, kMaxForcing), floor);
}

NewtonSettings newton_settings(const SimulationSettings& settings, double inertia, double dt) {
    NewtonSettings s;
    s.max_iterations = settings.max_newton_iterations;
    s.tolerance = settings.newton_tolerance;
    s.budget_ms = settings.frame_budget_ms;
    s.forcing = settings.cg_forcing;
    s.linear_tolerance = settings.pcg.relative_tolerance;
    s.dynamic = settings.integrator != Integrator::Static;
    s.inertia = inertia;
    s.dt = dt;
    s.state_is_iterate = settings.integrator != Integrator::Midpoint;
    s.projection = settings.projection;
    // Block Jacobi's CG meets negative curvature many iterations in, its residual grown on the
    // indefinite matrix: its iterate is a poor step (NewtonSettings::truncated_residual).
    if (settings.preconditioner == Preconditioner::BlockJacobi) s.truncated_residual = 1.0;
    return s;
}

StepResult newton_step(NewtonOperations& ops, const NewtonSettings& settings,
                       NewtonMemory& memory) {
    using V = NewtonVector;
    const auto step_start = Clock::now();
    // The budget's clock: the injected one, else the steady clock.
    const auto budget_now = [&settings, step_start] {
        return settings.clock ? settings.clock() : ms_since(step_start);
    };
    const double budget_start = settings.budget_ms > 0 ? budget_now() : 0.0;
    StepResult result;
    ops.begin_step();
    // Projection (NewtonSettings::projection): on demand, every evaluation is exact; only an
    // iteration whose exact Hessian gives no usable direction is redone projected.
    const bool on_demand = settings.projection == HessianProjection::OnDemand;
    const bool always = settings.projection == HessianProjection::Always;
    ops.set_projection(always);
    result.projected = always;
    bool projected_at_y = always; // the element Hessians kept at y are projected ones
    // Energies at the iterate (NaN until known), so reporting needs no extra element pass;
    // strain_* is W alone (the element passes also return the stiffness-damping potential).
    double e_at_y = std::nan(""), strain_at_y = std::nan("");
    double first_decrement = 0;
    double first_gnorm = 0, previous_gnorm = 0, eta = kMaxForcing; // the forcing term's inputs
    // True when the accepted line-search point was evaluated with gradient and Hessian (the full
    // step, alpha = 1, accepted): the next iteration starts from that evaluation (the same y, so
    // the same numbers) instead of repeating the element pass.
    bool evaluated_at_y = false;
    result.stop = NewtonStop::IterationCap; // unless the loop ends otherwise
    // On demand: the element Hessians at y evaluated again, projected (for this iteration's
    // solve; the evaluations after it are exact again).
    const auto fall_back = [&] {
        projected_at_y = result.projected = true;
        ++result.projection_fallbacks;
        ops.set_projection(true);
        const auto te = Clock::now();
        e_at_y = ops.evaluate(V::Iterate, kEnergy | kGradient | kHessian, V::Gradient);
        strain_at_y = ops.last_strain_energy();
        result.times.element += ms_since(te);
    };
    for (int it = 0; it < settings.max_iterations; ++it) {
        // The budget: stop before an iteration that would likely end past it (its cost guessed
        // as the mean iteration so far). The first iteration always runs.
        if (it > 0 && settings.budget_ms > 0) {
            const double elapsed = budget_now() - budget_start;
            if (elapsed + elapsed / it > settings.budget_ms) {
                result.stop = NewtonStop::TimeBudget;
                break;
            }
        }
        auto t0 = Clock::now();
        double e0 = e_at_y;
        if (!evaluated_at_y) {
            e0 = ops.evaluate(V::Iterate, kEnergy | kGradient | kHessian, V::Gradient);
            strain_at_y = ops.last_strain_energy();
            // The start x instead of the prediction (see start_at_previous_state). The potential
            // at x is at least its inertia term c h^2 KE(v) plus W(x) (its other terms are >= 0
            // there), and a switch needs e0 above three times that: only then is the exact value
            // (a node pass) worth computing. The shortcut never changes the decision.
            const double start_bound =
                settings.inertia * settings.dt * settings.dt * memory.kinetic_at_x +
                memory.strain_at_x;
            if (it == 0 && settings.dynamic && std::isfinite(start_bound) &&
                (!std::isfinite(e0) || e0 > 3 * start_bound) &&
                start_at_previous_state(e0, ops.start_potential(memory.strain_at_x))) {
                ops.restart_at_start();
                e0 = ops.evaluate(V::Iterate, kEnergy | kGradient | kHessian, V::Gradient);
                strain_at_y = ops.last_strain_energy();
            }
            e_at_y = e0;
            projected_at_y = always;
        }
        evaluated_at_y = false;
        const double gnorm = std::sqrt(ops.dot(V::Gradient, V::Gradient));
        result.times.element += ms_since(t0);
        if (it == 0) result.initial_residual = gnorm;
        result.final_residual = gnorm;
        result.residuals.push_back(gnorm);
        if (!std::isfinite(e0) || !std::isfinite(gnorm)) {
            result.stop = NewtonStop::Failed;
            break;
        }
        if (gnorm == 0) { // stationary already (every node pinned, or an exact prediction)
            result.converged = true;
            result.stop = NewtonStop::Converged;
            result.relative_decrement = 0;
            break;
        }
        if (it == 0) first_gnorm = gnorm;
        if (settings.forcing) {
            eta = linear_tolerance_for(it, gnorm, previous_gnorm, first_gnorm, eta,
                                       settings.tolerance, settings.linear_tolerance);
            ops.set_linear_tolerance(eta);
        }
        previous_gnorm = gnorm;

        // The first correction of a step resembles the last step's (smooth motion): start PCG
        // from it (a guess only; the tolerance is unchanged). Later iterations start from 0.
        const bool warm = it == 0 && memory.have_first_direction;
        // Assembles H at y, solves, returns g.dx (negative for a descent direction).
        bool breakdown = false;
        double relative_residual = 1; // ||H dx + g|| / ||g|| of the last solve
        const auto assemble_and_solve = [&](int& solve_iterations) {
            auto ts = Clock::now();
            ops.assemble();
            result.times.summation += ms_since(ts);
            ts = Clock::now();
            const PcgResult solve = ops.solve(warm);
            result.cg_iterations += solve.iterations;
            solve_iterations += solve.iterations;
            result.pcg_breakdowns += solve.breakdown;
            result.pcg_unconverged += !solve.converged && !solve.breakdown;
            result.times.pcg += ms_since(ts);
            breakdown = solve.breakdown;
            relative_residual = solve.reference_norm > 0
                                    ? solve.final_residual / solve.reference_norm
                                    : (solve.converged ? 0.0 : 1.0);
            return ops.dot(V::Gradient, V::Direction);
        };
        int solve_iterations = 0;
        double slope = assemble_and_solve(solve_iterations);
        const bool descends = slope < 0 && std::isfinite(slope);
        // Negative curvature met after CG made progress: the last CG iterate minimises the
        // quadratic model on the Krylov space explored so far and descends (Newton-CG truncation,
        // Nocedal and Wright, Algorithm 7.1). On demand keeps it (below the preconditioner's
        // residual bound, NewtonSettings::truncated_residual): the exact curvature it holds is
        // worth more than a projected solve, which converges only linearly where crushed
        // elements make the Hessian indefinite.
        const bool truncated = breakdown && solve_iterations > 0 && descends &&
                               relative_residual <= settings.truncated_residual;
        result.truncated_solves += truncated;
        if (on_demand && !projected_at_y && !truncated && (breakdown || !descends)) {
            // No usable exact direction: redo this iteration projected.
            fall_back();
            slope = assemble_and_solve(solve_iterations);
        }
        // The next evaluations (line search, next iterate) are exact again.
        if (on_demand) ops.set_projection(false);
        result.solve_iterations.push_back(solve_iterations);
        if (it == 0) {
            ops.keep_first_direction();
            memory.have_first_direction = true;
        }
        if (!(slope < 0) || !std::isfinite(slope)) {
            // Not a descent direction (indefinite exact Hessian or a broken solve): the
            // mass-scaled gradient, always a descent direction.
            ++result.line_search_failures;
            ops.scaled_gradient_direction(settings.inertia + 1.0 / (settings.dt * settings.dt));
            slope = ops.dot(V::Gradient, V::Direction);
            if (!(slope < 0)) {
                result.stop = NewtonStop::Failed;
                break;
            }
        }
        const double decrement = -slope;
        if (it == 0) first_decrement = decrement;
        const bool negligible = decrement <= 1e-30; // below round-off of any energy we report
        result.relative_decrement = negligible ? 0.0 : std::sqrt(decrement / first_decrement);
        result.relative_decrements.push_back(result.relative_decrement);
        const bool converging =
            decrement <= settings.tolerance * settings.tolerance * first_decrement || negligible;
        // When another iteration follows an accepted full step, evaluate the full step with
        // gradient and Hessian: that iteration needs exactly this evaluation (timed as an element
        // pass, not as line search).
        const bool full_first = !converging && it + 1 < settings.max_iterations;

        t0 = Clock::now();
        double alpha = 1.0, et = 0, strain_t = 0, element_in_search = 0;
        bool accepted = false;
        // Energies are sums of rounded element terms: allow their round-off in the test.
        const double rounding = ops.energy_rounding() * std::abs(e0);
        for (int ls = 0; ls < settings.max_line_search; ++ls) {
            ops.set_trial(alpha);
            if (ls == 0 && full_first) {
                const auto te = Clock::now();
                et = ops.evaluate(V::Trial, kEnergy | kGradient | kHessian, V::TrialGradient);
                element_in_search = ms_since(te);
            } else {
                et = ops.evaluate(V::Trial, kEnergy, V::TrialGradient);
            }
            strain_t = ops.last_strain_energy();
            if (std::isfinite(et) && et <= e0 + kArmijo * alpha * slope + rounding) {
                accepted = true;
                evaluated_at_y = ls == 0 && full_first;
                break;
            }
            alpha *= 0.5;
        }
        result.step_lengths.push_back(accepted ? alpha : 0.0);
        result.times.element += element_in_search;
        result.times.line_search += ms_since(t0) - element_in_search;
        if (!accepted) {
            // The decrement at y already meets the tolerance: y is converged, and the step is
            // too small for the potential's round-off to show its decrease.
            if (converging) {
                result.converged = true;
                break;
            }
            if (on_demand && !projected_at_y) {
                // The exact Newton direction found no decrease: the next iteration solves at y
                // with the projected Hessians fall_back evaluates there.
                fall_back();
                evaluated_at_y = true;
                continue;
            }
            ++result.line_search_failures;
            result.stop = NewtonStop::Failed;
            break; // keep y: no step decreased the potential
        }
        ops.accept_trial(evaluated_at_y);
        e_at_y = et, strain_at_y = strain_t;
        projected_at_y = always; // the trial was evaluated exact unless always projecting
        result.newton_iterations = it + 1;
        if (converging) {
            result.converged = true;
            result.stop = NewtonStop::Converged;
            break;
        }
    }

    // The new state; never a non-finite one.
    result.recovered = !ops.update_state();
    // W(x) is W at the last accepted iterate unless the state differs from it (midpoint's x =
    // 2 y - x_start, a recovery).
    result.strain_energy =
        settings.state_is_iterate && !result.recovered && std::isfinite(strain_at_y)
            ? strain_at_y
            : ops.state_strain_energy();
    result.kinetic_energy = ops.state_kinetic_energy();
    memory.strain_at_x = result.strain_energy;
    memory.kinetic_at_x = result.kinetic_energy;
    result.potential =
        std::isfinite(e_at_y) ? e_at_y : ops.evaluate(V::Iterate, kEnergy, V::TrialGradient);
    result.times.total = ms_since(step_start);
    return result;
}

} // namespace edn
