#pragma once
/// How many steps met the Newton tolerance and how far off the worst one was: what `simulate`'s
/// run.json and console line and the app's Statistics panel and --stats report.

#include "sim/simulation.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>

namespace edn {

/// Counts over a sequence of steps.
struct ConvergenceTally {
    std::int64_t frames = 0;    ///< steps added
    std::int64_t converged = 0; ///< of them, those with StepResult::converged
    /// Largest StepResult::relative_decrement: the measure Newton compares with its tolerance.
    double worst_relative_decrement = 0;
    /// Largest StepResult::final_residual: |g| (free dofs) at the last evaluated iterate.
    double worst_final_residual = 0;

    /// Counts `step` (a NaN measure makes the worst NaN: it is not hidden).
    void add(const StepResult& step);
};

/// "58/60 frames met the tolerance 1e-3 (worst relative decrement 0.042, worst |g| 43.5)".
std::string convergence_line(const ConvergenceTally& tally, double tolerance);

/// The tally of the most recent steps (the app's overlay: how the last seconds went).
class RecentConvergence {
public:
    /// Keeps the last `capacity` (>= 1) steps.
    explicit RecentConvergence(std::size_t capacity);
    /// Adds `step`, dropping the oldest beyond the capacity.
    void add(const StepResult& step);
    /// Forgets every step (a new scene or rebuilt simulation).
    void clear();
    /// The tally of the kept steps.
    ConvergenceTally tally() const;

private:
    /// The part of a StepResult the tally reads.
    struct Entry {
        bool converged;
        double relative_decrement;
        double final_residual;
    };
    std::size_t capacity_;
    std::deque<Entry> entries_; // oldest first
};

} // namespace edn
