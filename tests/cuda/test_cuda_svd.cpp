// The GPU's float SVD (Jacobi rotations with the hardware division and roots) against the
// host's double SVD of the same matrices: singular values to float accuracy of ||F||, U and V
// rotations, F reconstructed, sigma sorted (to rounding) with the sign of det F on the last
// (H200: worst 3.1e-7, 9.1e-7 and 5.8e-7 of ||F|| over the 1,801 matrices), over random,
// near-identity, rotated, inverted, rank-deficient, repeated-value and badly scaled F.
#include "cuda/svd_device.hpp"
#include "support/backend.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <iostream>
#include <random>
#include <vector>

namespace edn {
namespace {

Mat3<double> to_double(const Mat3<float>& a) {
    Mat3<double> d{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) d.m[i][j] = a.m[i][j];
    return d;
}

double frobenius_norm(const Mat3<double>& a) {
    double s = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) s += a.m[i][j] * a.m[i][j];
    return std::sqrt(s);
}

double distance_from_rotation(const Mat3<double>& R) {
    const Mat3<double> e = transpose(R) * R;
    double d = std::abs(det(R) - 1.0);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) d = std::max(d, std::abs(e.m[i][j] - (i == j ? 1.0 : 0.0)));
    return d;
}

// The test matrices (float, as the GPU kernels see them).
std::vector<Mat3<float>> test_matrices() {
    std::mt19937 rng(20261129);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const auto random_rotation = [&] {
        const Svd3<double> s = svd3_rotation_variant(
            Mat3<double>{{{u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)}}});
        return s.U;
    };
    const auto with_values = [&](double a, double b, double c) {
        const Mat3<double> D{{{a, 0, 0}, {0, b, 0}, {0, 0, c}}};
        return random_rotation() * D * transpose(random_rotation());
    };
    std::vector<Mat3<double>> F;
    for (int k = 0; k < 400; ++k) // general
        F.push_back(Mat3<double>{{{u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)}, {u(rng), u(rng), u(rng)}}});
    for (int k = 0; k < 400; ++k) { // near the identity (a simulation's usual F)
        Mat3<double> a = mat3_identity<double>();
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) a.m[i][j] += 0.05 * u(rng);
        F.push_back(a);
    }
    for (int k = 0; k < 200; ++k) F.push_back(random_rotation()); // rigid rotations
    for (int k = 0; k < 200; ++k) // inverted
        F.push_back(with_values(1.0 + 0.5 * u(rng), 0.6 + 0.3 * u(rng), -(0.3 + 0.2 * u(rng))));
    for (int k = 0; k < 100; ++k) F.push_back(with_values(1.0, 0.7, 0.0));   // rank 2
    for (int k = 0; k < 100; ++k) F.push_back(with_values(1.0, 0.0, 0.0));   // rank 1
    for (int k = 0; k < 100; ++k) F.push_back(with_values(0.8, 0.8, 0.8));   // repeated
    for (int k = 0; k < 100; ++k) F.push_back(with_values(1.3, 0.9, 0.9));   // two repeated
    for (int k = 0; k < 100; ++k) F.push_back(with_values(1.0, 1e-4, 1e-6)); // ill-conditioned
    for (int k = 0; k < 100; ++k) // scaled far from 1
        F.push_back((k % 2 ? 1e-5 : 1e5) * with_values(1.0 + 0.5 * u(rng), 0.5, 0.25));
    F.push_back(Mat3<double>{}); // zero
    std::vector<Mat3<float>> out;
    for (const Mat3<double>& a : F) {
        Mat3<float> f{};
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) f.m[i][j] = static_cast<float>(a.m[i][j]);
        out.push_back(f);
    }
    return out;
}

TEST(CudaSvd, FloatSvdOnDeviceMatchesDoubleSvd) {
    EDN_SKIP_WITHOUT_CUDA();
    const std::vector<Mat3<float>> F = test_matrices();
    std::vector<Svd3<float>> gpu(F.size());
    cuda::svd3_float_on_device(F.data(), static_cast<Index>(F.size()), gpu.data());
    double worst_sigma = 0, worst_rotation = 0, worst_reconstruction = 0;
    for (std::size_t k = 0; k < F.size(); ++k) {
        const Mat3<double> Fd = to_double(F[k]);
        const double scale = std::max(frobenius_norm(Fd), 1e-300);
        const Svd3<double> ref = svd3_rotation_variant(Fd);
        const Svd3<float>& s = gpu[k];
        const Mat3<double> U = to_double(s.U), V = to_double(s.V);
        double sigma_error = 0;
        for (int i = 0; i < 3; ++i)
            sigma_error = std::max(sigma_error, std::abs(s.sigma[i] - ref.sigma[i]) / scale);
        Mat3<double> S{};
        for (int i = 0; i < 3; ++i) S.m[i][i] = s.sigma[i];
        const double reconstruction = frobenius_norm(U * S * transpose(V) - Fd) / scale;
        const double rotation = std::max(distance_from_rotation(U), distance_from_rotation(V));
        EXPECT_LT(sigma_error, 2e-6) << "matrix " << k;
        EXPECT_LT(reconstruction, 4e-6) << "matrix " << k;
        EXPECT_LT(rotation, 4e-6) << "matrix " << k;
        // sorted (equal values, as a rotation's, may come out a rounding apart either way)
        EXPECT_GE(s.sigma[0] - s.sigma[1], -1e-6 * scale) << "matrix " << k;
        EXPECT_GE(s.sigma[1] - std::abs(s.sigma[2]), -1e-6 * scale) << "matrix " << k;
        if (std::abs(det(Fd)) > 1e-3 * scale * scale * scale) {
            EXPECT_EQ(s.sigma[2] < 0, det(Fd) < 0) << "matrix " << k;
        }
        worst_sigma = std::max(worst_sigma, sigma_error);
        worst_rotation = std::max(worst_rotation, rotation);
        worst_reconstruction = std::max(worst_reconstruction, reconstruction);
    }
    std::cout << "float SVD on the GPU, " << F.size() << " matrices: sigma " << worst_sigma
              << ", rotations " << worst_rotation << ", reconstruction " << worst_reconstruction
              << " (relative to ||F||)\n";
}

} // namespace
} // namespace edn
