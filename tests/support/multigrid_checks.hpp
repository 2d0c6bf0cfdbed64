#pragma once
// Checks of a multigrid hierarchy and settings shared by the multigrid tests.
#include "sim/simulation.hpp"
#include "solver/multigrid.hpp"
#include "support/random.hpp"

#include <cmath>
#include <cstdint>
#include <gtest/gtest.h>
#include <vector>

namespace edn::test {

/// The cycle of `h` with fine matrix `a` is symmetric (u.Mv = v.Mu) and positive (u.Mu > 0) on
/// three pairs of random vectors with zero pinned rows, and leaves the pinned rows at zero.
inline void expect_cycle_symmetric_positive(const MultigridHierarchy& h,
                                            const BinBcsrMatrixView<double>& a,
                                            const std::vector<std::uint8_t>& fixed) {
    const Index n = static_cast<Index>(fixed.size());
    for (int trial = 0; trial < 3; ++trial) {
        std::vector<double> u = random_vector(3 * n, 11 + trial),
                            v = random_vector(3 * n, 31 + trial);
        for (Index i = 0; i < n; ++i)
            if (fixed[i])
                for (int k = 0; k < 3; ++k) u[3 * i + k] = v[3 * i + k] = 0;
        std::vector<double> mu(3 * n), mv(3 * n);
        cpu::apply_multigrid(h, a, u.data(), mu.data());
        cpu::apply_multigrid(h, a, v.data(), mv.data());
        double muv = 0, umv = 0, umu = 0, norm = 0;
        for (Index k = 0; k < 3 * n; ++k) {
            muv += mu[k] * v[k];
            umv += u[k] * mv[k];
            umu += u[k] * mu[k];
            norm += std::abs(mu[k] * v[k]);
        }
        EXPECT_NEAR(muv, umv, 1e-11 * norm);
        EXPECT_GT(umu, 0);
        for (Index i = 0; i < n; ++i)
            if (fixed[i]) {
                for (int k = 0; k < 3; ++k) EXPECT_EQ(mu[3 * i + k], 0.0);
            }
    }
}

/// Multigrid-preconditioned CG from x = 0 to 1e-8 (relative) within `max_iterations`: the
/// result, and the solution in x (resized).
inline PcgResult solve_with_multigrid(const MultigridHierarchy& h,
                                      const BinBcsrMatrixView<double>& a,
                                      const std::vector<double>& b,
                                      const std::vector<std::uint8_t>& fixed, int max_iterations,
                                      std::vector<double>& x) {
    x.assign(b.size(), 0.0);
    PcgSettings cg;
    cg.relative_tolerance = 1e-8;
    cg.max_iterations = max_iterations;
    cg.warm_start = false;
    PcgWorkspace<double> ws;
    return cpu::pcg_multigrid(a, h, b.data(), x.data(), cg, ws, fixed.data());
}

/// Neo-Hookean at order `order` with tight solves (CG to 1e-9 within `max_cg` iterations, no
/// forcing term), so runs that differ only in the preconditioner follow the same trajectory.
inline SimulationSettings tight_solve_settings(int order, int max_cg) {
    SimulationSettings s;
    s.order = order;
    s.material = Material::NeoHookean;
    s.cg_forcing = false;
    s.pcg.relative_tolerance = 1e-9;
    s.pcg.max_iterations = max_cg;
    return s;
}

} // namespace edn::test
