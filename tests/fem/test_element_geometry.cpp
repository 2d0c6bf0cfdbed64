#include "fem/element_geometry.hpp"
#include "support/random.hpp"

#include <gtest/gtest.h>
#include <random>

namespace edn {
namespace {

/// A random, reasonably shaped, positively oriented tet anywhere in [-3, 3]^3.
void random_tet(std::mt19937& rng, double X[4][3]) {
    test::random_tet(rng, X, {.scale = 1.7, .noise = 0.2, .translation = 3.0, .axis_offset = 0});
}

TEST(FemElementGeometry, JacobianVolumeAndInverse) {
    std::mt19937 rng(5);
    for (int t = 0; t < 20; ++t) {
        double X[4][3];
        random_tet(rng, X);
        const TetGeometry<double> g = tet_geometry(X);
        // Volume by the scalar triple product (x1-x0) . ((x2-x0) x (x3-x0)) / 6.
        const Vec3T<double> e1 = load_vec3(X[1]) - load_vec3(X[0]);
        const Vec3T<double> e2 = load_vec3(X[2]) - load_vec3(X[0]);
        const Vec3T<double> e3 = load_vec3(X[3]) - load_vec3(X[0]);
        EXPECT_NEAR(tet_signed_volume(X), dot(e1, cross(e2, e3)) / 6.0, 1e-13);
        EXPECT_NEAR(g.det_jacobian, dot(e1, cross(e2, e3)), 1e-13);
        EXPECT_GT(g.det_jacobian, 0.0);
        // The map sends reference vertex k+1 to X[k+1].
        for (int k = 0; k < 3; ++k)
            for (int r = 0; r < 3; ++r) EXPECT_NEAR(X[0][r] + g.jacobian(r, k), X[k + 1][r], 1e-14);
        const Mat3<double> p = g.inverse_jacobian * g.jacobian;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) EXPECT_NEAR(p(i, j), i == j ? 1.0 : 0.0, 1e-12);
    }
}

template <int P> void check_physical_gradients() {
    SCOPED_TRACE(testing::Message() << "order " << P);
    constexpr int m = LagrangeTet<P, double>::num_nodes;
    std::mt19937 rng(6 + P);
    double X[4][3];
    random_tet(rng, X);
    const TetGeometry<double> g = tet_geometry(X);
    double nodes[m][3];
    element_node_positions<P>(X, nodes);
    const double L[4] = {0.1, 0.2, 0.3, 0.4};
    double grad[m][3];
    shape_gradients<P>(g, L, grad);
    // Interpolating the coordinate functions x_r gives grad x_r = e_r: sum_a x_a g_a^T = I.
    for (int r = 0; r < 3; ++r)
        for (int i = 0; i < 3; ++i) {
            double s = 0;
            for (int a = 0; a < m; ++a) s += nodes[a][r] * grad[a][i];
            EXPECT_NEAR(s, r == i ? 1.0 : 0.0, 1e-12);
        }
    // Finite differences in physical space: N(x) = N(L(x)) with L from the inverse map.
    const double h = 1e-6;
    double x[3];
    barycentric_to_physical(X, L, x);
    for (int i = 0; i < 3; ++i) {
        double Np[m], Nm[m];
        for (int sgn = -1; sgn <= 1; sgn += 2) {
            double xs[3] = {x[0], x[1], x[2]};
            xs[i] += sgn * h;
            const Vec3T<double> xi = g.inverse_jacobian * (load_vec3(xs) - load_vec3(X[0]));
            double Ls[4];
            reference_to_barycentric(xi.v, Ls);
            LagrangeTet<P, double>::eval(Ls, sgn > 0 ? Np : Nm);
        }
        for (int a = 0; a < m; ++a) EXPECT_NEAR(grad[a][i], (Np[a] - Nm[a]) / (2 * h), 1e-6);
    }
}

TEST(FemElementGeometry, PhysicalGradients) {
    check_physical_gradients<1>();
    check_physical_gradients<2>();
    check_physical_gradients<3>();
}

TEST(FemElementGeometry, NodePositionsAreAffineImages) {
    std::mt19937 rng(9);
    double X[4][3];
    random_tet(rng, X);
    double nodes[20][3];
    element_node_positions<3>(X, nodes);
    for (int v = 0; v < 4; ++v)
        for (int r = 0; r < 3; ++r) EXPECT_DOUBLE_EQ(nodes[v][r], X[v][r]);
    // Edge (0,1) nodes at 1/3 and 2/3 from vertex 0; face node 16 at the centroid of 1,2,3.
    for (int r = 0; r < 3; ++r) {
        EXPECT_NEAR(nodes[4][r], X[0][r] + (X[1][r] - X[0][r]) / 3.0, 1e-14);
        EXPECT_NEAR(nodes[5][r], X[0][r] + 2.0 * (X[1][r] - X[0][r]) / 3.0, 1e-14);
        EXPECT_NEAR(nodes[16][r], (X[1][r] + X[2][r] + X[3][r]) / 3.0, 1e-14);
    }
}

} // namespace
} // namespace edn
