#include "sim/convergence.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace edn {
namespace {

/// `value` when it is NaN or above `worst`, else `worst`: a NaN stays visible.
double worse(double worst, double value) {
    return std::isnan(worst) ? worst : (std::isnan(value) || value > worst ? value : worst);
}

} // namespace

void ConvergenceTally::add(const StepResult& step) {
    ++frames;
    converged += step.converged;
    worst_relative_decrement = worse(worst_relative_decrement, step.relative_decrement);
    worst_final_residual = worse(worst_final_residual, step.final_residual);
}

std::string convergence_line(const ConvergenceTally& tally, double tolerance) {
    char text[200];
    std::snprintf(text, sizeof(text),
                  "%lld/%lld frames met the tolerance %.3g (worst relative decrement %.3g, worst "
                  "|g| %.3g)",
                  static_cast<long long>(tally.converged), static_cast<long long>(tally.frames),
                  tolerance, tally.worst_relative_decrement, tally.worst_final_residual);
    return text;
}

RecentConvergence::RecentConvergence(std::size_t capacity)
    : capacity_(std::max<std::size_t>(capacity, 1)) {}

void RecentConvergence::add(const StepResult& step) {
    entries_.push_back({step.converged, step.relative_decrement, step.final_residual});
    while (entries_.size() > capacity_) entries_.pop_front();
}

void RecentConvergence::clear() {
    entries_.clear();
}

ConvergenceTally RecentConvergence::tally() const {
    ConvergenceTally tally;
    for (const Entry& e : entries_) {
        StepResult step;
        step.converged = e.converged;
        step.relative_decrement = e.relative_decrement;
        step.final_residual = e.final_residual;
        tally.add(step);
    }
    return tally;
}

} // namespace edn
