#pragma once
// Seeded random inputs shared by the tests: rotations, matrices, vectors, tetrahedra. Each helper
// draws from the generator in a fixed order, so a test's inputs are the same on every platform
// and run.

#include "core/types.hpp"
#include "fem/small_matrix.hpp"

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace edn::test {

/// A uniformly random rotation, from a normalised Gaussian quaternion (4 normal draws).
Mat3<double> random_rotation(std::mt19937& rng);

/// A 3x3 matrix of independent uniform entries in [lo, hi), row by row.
Mat3<double> random_matrix(std::mt19937& rng, double lo = -1.0, double hi = 1.0);

/// Q1 diag(s0, s1, s2) Q2 with random rotations Q1, Q2: a matrix with exactly these signed
/// singular values (J = s0 s1 s2).
Mat3<double> with_singular_values(std::mt19937& rng, double s0, double s1, double s2);

/// A uniformly random unit vector (3 normal draws, normalised).
Vec3 random_unit(std::mt19937& rng);

/// `n` independent uniform values in [lo, hi) from a generator seeded with `seed`.
std::vector<double> random_vector(std::size_t n, std::uint32_t seed, double lo = -1.0,
                                  double hi = 1.0);

/// How random_tet shapes a tetrahedron: vertex v, axis r is
/// scale * (base[v][r] + U(-noise, noise)) + t[r] + axis_offset * r, with t uniform in
/// [-translation, translation)^3 drawn first (no draws when translation is 0).
struct RandomTetShape {
    double scale = 1.0;
    double noise = 0.2;
    double translation = 0.0;
    double axis_offset = 0.0;
};

/// A reasonably shaped, positively oriented tetrahedron: a fixed well-shaped base tet
/// (0,0,0), (1,0,0), (0.5,0.9,0), (0.5,0.3,0.8) perturbed, scaled and moved as `shape` says.
/// @param[out] X  4 x 3 vertex positions
void random_tet(std::mt19937& rng, double X[4][3], const RandomTetShape& shape);

} // namespace edn::test
