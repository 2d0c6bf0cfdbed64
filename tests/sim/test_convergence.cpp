// sim/convergence: the tallies behind run.json's and the app's "frames met the tolerance".

#include "sim/convergence.hpp"

#include <cmath>
#include <gtest/gtest.h>

namespace edn {
namespace {

StepResult step(bool converged, double relative, double gradient) {
    StepResult r;
    r.converged = converged;
    r.relative_decrement = relative;
    r.final_residual = gradient;
    return r;
}

TEST(Convergence, TallyCountsAndKeepsTheWorst) {
    ConvergenceTally t;
    t.add(step(true, 1e-4, 2.0));
    t.add(step(false, 0.3, 1.0));
    t.add(step(true, 5e-4, 7.0));
    EXPECT_EQ(t.frames, 3);
    EXPECT_EQ(t.converged, 2);
    EXPECT_EQ(t.worst_relative_decrement, 0.3);
    EXPECT_EQ(t.worst_final_residual, 7.0);
    EXPECT_EQ(convergence_line(t, 1e-3),
              "2/3 frames met the tolerance 0.001 (worst relative decrement 0.3, worst |g| 7)");
    // A NaN measure is not hidden by later finite ones.
    t.add(step(false, std::nan(""), 1.0));
    t.add(step(false, 0.5, 1.0));
    EXPECT_TRUE(std::isnan(t.worst_relative_decrement));
}

TEST(Convergence, RecentKeepsTheLastSteps) {
    RecentConvergence recent(2);
    recent.add(step(false, 0.9, 50.0));
    recent.add(step(true, 1e-4, 1.0));
    recent.add(step(true, 2e-4, 2.0)); // the unconverged first step drops out
    ConvergenceTally t = recent.tally();
    EXPECT_EQ(t.frames, 2);
    EXPECT_EQ(t.converged, 2);
    EXPECT_EQ(t.worst_relative_decrement, 2e-4);
    EXPECT_EQ(t.worst_final_residual, 2.0);
    recent.clear();
    EXPECT_EQ(recent.tally().frames, 0);
}

} // namespace
} // namespace edn
