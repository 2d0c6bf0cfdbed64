#pragma once
/// Newton's method with a backtracking (Armijo) line search on the incremental potential, and the
/// integrators' state update: written once for every backend (the CPU in double; CUDA with a
/// double Newton level over a float matrix and PCG) over the small set of operations a backend
/// supplies (NewtonOperations), as MFEM's NewtonSolver is written once over an operator. The
/// convergence rules live here and only here.
///
/// One step (see DESIGN.md, "Data flow of one frame"):
///   begin: x_start = x, prediction y~ = x + h v (static: x), iterate y = y~ on free nodes
///   until the Newton decrement g.dx meets the tolerance relative to the first; only the
///   per-step budget stops it earlier: the iteration cap, or a wall-clock budget checked before
///   each further iteration (StepResult::stop says which):
///     evaluate energy, gradient and element Hessians at y (skipped when the line search already
///     evaluated the accepted full step with them); at the first iteration of a dynamic step,
///     restart at x_start when the prediction's potential is far above the start's
///     assemble H; solve H dx = -g (PCG, warm-started from the last frame's first correction;
///     with the forcing term its relative tolerance follows the gradient's decrease)
///     a solve that meets negative curvature (PCG breakdown) after some CG iterations keeps
///     its last iterate when that descends (Newton-CG truncation); on demand, an exact solve
///     with no descent direction is redone with projected Hessians (that iteration only)
///     dx not a descent direction -> the mass-scaled gradient instead
///     backtracking line search from alpha = 1 (Armijo constant 1e-4, plus the backend's energy
///     round-off), the full step evaluated with gradient and Hessian when another iteration
///     follows (it then needs exactly that evaluation); when no step shows a decrease but the
///     decrement already met the tolerance, y is converged as it is
///   update x, v by the integrator (never keeping a non-finite state), report energies.

#include "sim/element_output.hpp"
#include "sim/simulation.hpp"

#include <cmath>
#include <functional>
#include <limits>

namespace edn {

/// Vectors of 3 #nodes values the Newton loop names; their storage belongs to the backend.
enum class NewtonVector : std::uint8_t {
    Iterate,       ///< y, the current Newton iterate
    Trial,         ///< y + alpha dx, the line search's point
    Gradient,      ///< gradient of the potential at Iterate (zero on pinned dofs)
    TrialGradient, ///< gradient at Trial, when evaluated with one
    Direction,     ///< dx, the Newton correction
};
/// How many NewtonVector values there are (a backend keeps its vectors in an array of this size).
inline constexpr int kNewtonVectors = 5;

/// What a backend supplies to newton_step: the potential and its derivatives, the linear solve
/// and a few vector operations. Nothing here decides anything.
class NewtonOperations {
public:
    virtual ~NewtonOperations() = default;

    /// x_start = x; y~ = x + h v (x for static solves); Iterate = y~ on free nodes, x on pinned.
    virtual void begin_step() = 0;
    /// Incremental potential at `at` (Iterate or Trial). With kGradient the gradient goes to
    /// `gradient` (zero on pinned nodes); with kHessian the element Hessians are kept for
    /// assemble(). last_strain_energy() is W at `at` afterwards.
    virtual double evaluate(NewtonVector at, int outputs, NewtonVector gradient) = 0;
    /// W (the elastic energy alone, no damping potential) of the last evaluate().
    virtual double last_strain_energy() const = 0;
    /// The incremental potential at x_start given W(x_start) (its node terms and the drag).
    virtual double start_potential(double strain_at_start) = 0;
    /// Iterate = x_start.
    virtual void restart_at_start() = 0;
    /// Sums the kept element Hessians and the node terms at Iterate into the system matrix (and
    /// the preconditioner's levels); returns when the matrix is complete (timed by the caller).
    virtual void assemble() = 0;
    /// Direction = H^-1 (-Gradient) by PCG; `warm`: start from the kept first correction (zero on
    /// pinned dofs) instead of zero.
    virtual PcgResult solve(bool warm) = 0;
    /// The relative tolerance of the following solves (the forcing term; newton_step sets it only
    /// when NewtonSettings::forcing is on, else the backend's own tolerance applies).
    virtual void set_linear_tolerance(double relative_tolerance) = 0;
    /// Keeps Direction as the warm start of the next step's first solve.
    virtual void keep_first_direction() = 0;
    /// a.b in double.
    virtual double dot(NewtonVector a, NewtonVector b) = 0;
    /// Trial = Iterate + alpha Direction.
    virtual void set_trial(double alpha) = 0;
    /// Direction = -Gradient_i / (m_i scale) on free nodes, 0 on pinned ones.
    virtual void scaled_gradient_direction(double scale) = 0;
    /// Iterate = Trial (and Gradient = TrialGradient when `with_gradient`), by swapping.
    virtual void accept_trial(bool with_gradient) = 0;
    /// x, v from the minimiser Iterate by the integrator, v = 0 on pinned nodes. A non-finite
    /// result is not kept: x = x_start, v = 0, and false is returned.
    virtual bool update_state() = 0;
    /// W(x) of the state (an element pass).
    virtual double state_strain_energy() = 0;
    /// 1/2 v^T M v of the state.
    virtual double state_kinetic_energy() = 0;
    /// Whether the following evaluations project the element Hessians onto the PSD cone
    /// (newton_step decides it per iteration: NewtonSettings::projection).
    virtual void set_projection(bool project) = 0;
    /// Relative round-off of the potential's sums (kDoubleEnergyRounding where the potential is
    /// summed in double from double terms, as on both backends), allowed in the line search's
    /// sufficient-decrease test.
    virtual double energy_rounding() const = 0;
};

/// Milliseconds on a monotonic clock (only differences are used).
using MillisecondClock = std::function<double()>;

/// Relative round-off of an incremental potential evaluated and summed in double: near a
/// converged iterate the potential at a point and at a step of 1e-8 relative from it scatter by
/// up to 9e-15 |E| (the CPU backend, a 144-cell neo-Hookean beam bent by gravity and a drag:
/// each element's psi rounds relative to its terms, not to itself), so the line search cannot
/// see decreases below that; 1e-13 allows it with a margin. (Float element sums needed 1e-7.)
inline constexpr double kDoubleEnergyRounding = 1e-13;

/// The rules of one step, from SimulationSettings.
struct NewtonSettings {
    int max_iterations = 40; ///< cap on Newton iterations per step (a budget, not a count)
    double tolerance = 1e-3; ///< on the Newton decrement, relative to the first
    /// Wall-clock budget of one step [ms]; 0: none. Checked before each iteration after the
    /// first: the step stops when the elapsed time plus the mean iteration so far would pass it.
    double budget_ms = 0;
    /// The budget's clock; empty: std::chrono::steady_clock (tests inject a fake one).
    MillisecondClock clock;
    /// Inexact Newton: each solve's relative tolerance from the gradient's decrease
    /// (linear_tolerance_for), at least `linear_tolerance`; off: every solve uses the backend's.
    bool forcing = false;
    double linear_tolerance = 1e-4; ///< the forcing term's floor (the CG tolerance)
    bool dynamic = true;            ///< false for static solves (no prediction, no start rule)
    double inertia = 0;             ///< c of the inertia term c/2 (y - y~)^T M (y - y~)
    double dt = 0;                  ///< the effective step h of the prediction
    int max_line_search = 20;       ///< halvings of alpha before the line search gives up
    bool state_is_iterate = true;   ///< x = y after the update (not for the midpoint rule)
    /// PSD projection of the element Hessians. OnDemand: every evaluation is exact. A solve
    /// that meets negative curvature (a PCG breakdown) after some CG iterations takes the CG
    /// iterate before it when that descends and its relative residual is at most
    /// truncated_residual (Newton-CG truncation); any other exact solve without a descent
    /// direction (breakdown at once, an ascent direction, or a line search that finds no
    /// decrease) has its iteration redone with projected Hessians, and the next iteration is
    /// exact again. (Projecting for the rest of a step and a few more, as before session 22,
    /// left a crushed p = 2 bunny converging linearly: bench/README.md, session 22.)
    HessianProjection projection = HessianProjection::Always;
    /// Largest relative residual ||H dx + g|| / ||g|| at which on demand keeps a truncated
    /// direction. Measured on the 187K bunny (H100, session 22): with the multigrid, truncating
    /// at any residual converged the most frames (co-rotational p = 2: 24 of 24 frames, against
    /// 14 with a bound of 1); with block Jacobi, whose CG residual grows on the indefinite
    /// matrix before it breaks down (CPU: 1.3-572 times the first), a bound of 1 (bench step's
    /// drag case: 18 of 20 frames converged in its 3 Newton iterations, against 8 without).
    /// newton_settings() sets 1 for block Jacobi.
    double truncated_residual = std::numeric_limits<double>::infinity();
};

/// What newton_step carries from one step to the next. Reset it when the state is overwritten.
struct NewtonMemory {
    double strain_at_x = std::nan("");  ///< W(x) at the end of the last step
    double kinetic_at_x = std::nan(""); ///< its kinetic energy
    bool have_first_direction = false;  ///< keep_first_direction() holds a correction
};

/// Newton starts a dynamic step at the prediction y~ = x + h v. When the incremental potential
/// there is far above its value at the step's start x (a prediction that inverts slivers: a
/// needle on a sphere went 2.8 -> 1.5e4 -> 7e7 in strain energy, frame by frame, because the line
/// search only ever improved on the prediction), Newton starts at x instead. "Far": more than
/// half the energies' magnitude apart, so ordinary smooth motion never switches.
inline bool start_at_previous_state(double e_prediction, double e_start) {
    return std::isfinite(e_start) &&
           (!std::isfinite(e_prediction) ||
            e_prediction - e_start > 0.5 * (std::abs(e_prediction) + std::abs(e_start)));
}

/// The forcing term (Eisenstat and Walker 1996, choice 2, with their safeguards) of iteration `it`:
/// eta = 0.9 (|g_it| / |g_it-1|)^2, not below 0.9 eta_prev^2 when that exceeds 0.1, at most
/// kMaxForcing; then not below 0.5 tolerance |g_0| / |g_it| (no oversolving once the gradient is
/// near what the Newton tolerance asks) and not below `floor`. The first solve uses kMaxForcing.
double linear_tolerance_for(int it, double gnorm, double previous_gnorm, double first_gnorm,
                            double previous_eta, double tolerance, double floor);
/// Largest relative CG tolerance the forcing term asks for.
inline constexpr double kMaxForcing = 0.1;

/// The rules for a backend's SimulationSettings.
NewtonSettings newton_settings(const SimulationSettings& settings, double inertia, double dt);

/// One implicit step (or static solve) of `ops`; see the file comment.
StepResult newton_step(NewtonOperations& ops, const NewtonSettings& settings, NewtonMemory& memory);

} // namespace edn
