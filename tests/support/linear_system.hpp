#pragma once
// Linear-elastic test systems for the PCG and two-level tests: K of a fixture mesh plus a
// diagonal shift (K + cI, SPD for c > 0; pure K with pins), in double and float.

#include "support/assembly_fixture.hpp"

#include <cstddef>
#include <memory>

namespace edn::test {

/// Which diagonal entries give the mean the shift is a fraction of.
enum class DiagonalMean {
    AllAxes,  ///< all 3 diagonal entries of every diagonal block
    FirstAxis ///< the (0,0) entries only (as the two-level tests were tuned with)
};

/// K of `f` (its linear-elastic element blocks, per-entry summation) plus `shift_fraction` times
/// the mean diagonal entry on every diagonal entry. `shift`, when given, receives that amount.
BinBcsrMatrix<double> shifted_stiffness(const AssemblyFixture& f, double shift_fraction,
                                        DiagonalMean mean = DiagonalMean::AllAxes,
                                        double* shift = nullptr);

/// `a` rounded to float (same pattern).
BinBcsrMatrix<float> to_float(const BinBcsrMatrix<double>& a);

/// K + cI of a mesh at one order (E = 1000, nu = 0.3), c = shift_fraction * mean diagonal entry.
struct LinearSystem {
    std::unique_ptr<AssemblyFixture> f; ///< owns the pattern the matrices point to
    BinBcsrMatrix<double> a;
    BinBcsrMatrix<float> af; ///< `a` rounded to float
    double shift = 0;        ///< c

    LinearSystem(const TetMesh& mesh, int order, double shift_fraction,
                 DiagonalMean mean = DiagonalMean::AllAxes);
    /// Block rows.
    Index rows() const { return f->pattern.num_rows; }
    /// Scalar unknowns (3 per row).
    std::size_t dofs() const { return 3 * static_cast<std::size_t>(rows()); }
    /// Replaces the matrix by its negative -(K + cI), indefinite (p.Ap < 0 for every p).
    void negate();
    /// Per-node mask of the nodes on the plane z = 0 (the pinned foot of the box meshes).
    std::vector<std::uint8_t> bottom_nodes() const;
};

} // namespace edn::test
