#include "support/random.hpp"

#include <cmath>

namespace edn::test {

Mat3<double> random_rotation(std::mt19937& rng) {
    std::normal_distribution<double> n(0.0, 1.0);
    double q[4] = {n(rng), n(rng), n(rng), n(rng)};
    const double s = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (double& c : q) c /= s;
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    return Mat3<double>{{{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                         {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                         {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}}};
}

Mat3<double> random_matrix(std::mt19937& rng, double lo, double hi) {
    std::uniform_real_distribution<double> u(lo, hi);
    Mat3<double> a{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) a.m[i][j] = u(rng);
    return a;
}

Mat3<double> with_singular_values(std::mt19937& rng, double s0, double s1, double s2) {
    const Mat3<double> D{{{s0, 0, 0}, {0, s1, 0}, {0, 0, s2}}};
    return random_rotation(rng) * D * random_rotation(rng);
}

Vec3 random_unit(std::mt19937& rng) {
    std::normal_distribution<double> g;
    Vec3 n = {g(rng), g(rng), g(rng)};
    const double l = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (double& x : n) x /= l;
    return n;
}

std::vector<double> random_vector(std::size_t n, std::uint32_t seed, double lo, double hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<double> v(n);
    for (double& x : v) x = u(rng);
    return v;
}

void random_tet(std::mt19937& rng, double X[4][3], const RandomTetShape& shape) {
    const double base[4][3] = {{0, 0, 0}, {1, 0, 0}, {0.5, 0.9, 0}, {0.5, 0.3, 0.8}};
    std::uniform_real_distribution<double> noise(-shape.noise, shape.noise);
    double t[3] = {0, 0, 0};
    if (shape.translation > 0) {
        std::uniform_real_distribution<double> shift(-shape.translation, shape.translation);
        for (double& c : t) c = shift(rng);
    }
    for (int v = 0; v < 4; ++v)
        for (int r = 0; r < 3; ++r)
            X[v][r] = shape.scale * (base[v][r] + noise(rng)) + t[r] + shape.axis_offset * r;
}

} // namespace edn::test
