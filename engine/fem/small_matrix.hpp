#pragma once
/// Fixed-size 3-vectors and 3x3 matrices for element kernels, usable on host and device.
///
/// Plain aggregates (no constructors, no std::array) so they can live in registers, be passed to
/// CUDA kernels by value and be brace-initialised: `Mat3<float> a{{{1, 0, 0}, {0, 1, 0}, {0, 0,
/// 1}}}`. Storage is row-major: m[row][col].

#include "core/types.hpp"

#include <cmath>

namespace edn {

/// A 3-vector of scalar type T (float on the GPU, double on the CPU reference).
template <class T> struct Vec3T {
    T v[3]; ///< components x, y, z

    /// Component i (0..2).
    EDN_HOST_DEVICE constexpr T& operator[](int i) { return v[i]; }
    /// Component i (0..2).
    EDN_HOST_DEVICE constexpr const T& operator[](int i) const { return v[i]; }
};

/// A 3x3 matrix of scalar type T, row-major.
template <class T> struct Mat3 {
    T m[3][3]; ///< entries m[row][col]

    /// Entry (row, col).
    EDN_HOST_DEVICE constexpr T& operator()(int row, int col) { return m[row][col]; }
    /// Entry (row, col).
    EDN_HOST_DEVICE constexpr const T& operator()(int row, int col) const { return m[row][col]; }
};

/// The zero vector.
template <class T> EDN_HOST_DEVICE constexpr Vec3T<T> vec3_zero() {
    return Vec3T<T>{{0, 0, 0}};
}

/// A vector from three components.
template <class T> EDN_HOST_DEVICE constexpr Vec3T<T> make_vec3(T x, T y, T z) {
    return Vec3T<T>{{x, y, z}};
}

/// A vector from a plain array of three components.
template <class T> EDN_HOST_DEVICE constexpr Vec3T<T> load_vec3(const T* p) {
    return Vec3T<T>{{p[0], p[1], p[2]}};
}

/// a + b.
template <class T>
EDN_HOST_DEVICE constexpr Vec3T<T> operator+(const Vec3T<T>& a, const Vec3T<T>& b) {
    return Vec3T<T>{{a[0] + b[0], a[1] + b[1], a[2] + b[2]}};
}

/// a - b.
template <class T>
EDN_HOST_DEVICE constexpr Vec3T<T> operator-(const Vec3T<T>& a, const Vec3T<T>& b) {
    return Vec3T<T>{{a[0] - b[0], a[1] - b[1], a[2] - b[2]}};
}

/// s * a.
template <class T> EDN_HOST_DEVICE constexpr Vec3T<T> operator*(T s, const Vec3T<T>& a) {
    return Vec3T<T>{{s * a[0], s * a[1], s * a[2]}};
}

/// Dot product a . b.
template <class T> EDN_HOST_DEVICE constexpr T dot(const Vec3T<T>& a, const Vec3T<T>& b) {
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

/// Cross product a x b.
template <class T> EDN_HOST_DEVICE constexpr Vec3T<T> cross(const Vec3T<T>& a, const Vec3T<T>& b) {
    return Vec3T<T>{
        {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}

/// Euclidean norm |a|.
template <class T> EDN_HOST_DEVICE inline T norm(const Vec3T<T>& a) {
    using std::sqrt;
    return sqrt(dot(a, a));
}

/// The zero matrix.
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> mat3_zero() {
    return Mat3<T>{{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}};
}

/// The identity matrix.
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> mat3_identity() {
    return Mat3<T>{{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
}

/// The matrix whose columns are c0, c1, c2.
template <class T>
EDN_HOST_DEVICE constexpr Mat3<T> mat3_from_columns(const Vec3T<T>& c0, const Vec3T<T>& c1,
                                                    const Vec3T<T>& c2) {
    return Mat3<T>{{{c0[0], c1[0], c2[0]}, {c0[1], c1[1], c2[1]}, {c0[2], c1[2], c2[2]}}};
}

/// Column col of a.
template <class T> EDN_HOST_DEVICE constexpr Vec3T<T> column(const Mat3<T>& a, int col) {
    return Vec3T<T>{{a.m[0][col], a.m[1][col], a.m[2][col]}};
}

/// Outer product a b^T: (a b^T)[r][c] = a[r] b[c].
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> outer(const Vec3T<T>& a, const Vec3T<T>& b) {
    Mat3<T> r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.m[i][j] = a[i] * b[j];
    return r;
}

/// a + b.
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> operator+(const Mat3<T>& a, const Mat3<T>& b) {
    Mat3<T> r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[i][j] + b.m[i][j];
    return r;
}

/// a - b.
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> operator-(const Mat3<T>& a, const Mat3<T>& b) {
    Mat3<T> r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[i][j] - b.m[i][j];
    return r;
}

/// s * a.
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> operator*(T s, const Mat3<T>& a) {
    Mat3<T> r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.m[i][j] = s * a.m[i][j];
    return r;
}

/// Matrix product a b.
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> operator*(const Mat3<T>& a, const Mat3<T>& b) {
    Mat3<T> r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            r.m[i][j] = a.m[i][0] * b.m[0][j] + a.m[i][1] * b.m[1][j] + a.m[i][2] * b.m[2][j];
    return r;
}

/// Matrix-vector product a x.
template <class T>
EDN_HOST_DEVICE constexpr Vec3T<T> operator*(const Mat3<T>& a, const Vec3T<T>& x) {
    Vec3T<T> r{};
    for (int i = 0; i < 3; ++i) r[i] = a.m[i][0] * x[0] + a.m[i][1] * x[1] + a.m[i][2] * x[2];
    return r;
}

/// Transpose a^T.
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> transpose(const Mat3<T>& a) {
    Mat3<T> r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.m[i][j] = a.m[j][i];
    return r;
}

/// a^T x, without forming the transpose.
template <class T>
EDN_HOST_DEVICE constexpr Vec3T<T> transpose_mul(const Mat3<T>& a, const Vec3T<T>& x) {
    Vec3T<T> r{};
    for (int j = 0; j < 3; ++j) r[j] = a.m[0][j] * x[0] + a.m[1][j] * x[1] + a.m[2][j] * x[2];
    return r;
}

/// Trace of a.
template <class T> EDN_HOST_DEVICE constexpr T trace(const Mat3<T>& a) {
    return a.m[0][0] + a.m[1][1] + a.m[2][2];
}

/// Frobenius inner product a : b = sum_ij a_ij b_ij.
template <class T> EDN_HOST_DEVICE constexpr T ddot(const Mat3<T>& a, const Mat3<T>& b) {
    T s = 0;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) s += a.m[i][j] * b.m[i][j];
    return s;
}

/// Symmetric part (a + a^T) / 2.
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> sym(const Mat3<T>& a) {
    Mat3<T> r{};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) r.m[i][j] = T(0.5) * (a.m[i][j] + a.m[j][i]);
    return r;
}

/// Determinant of a (cofactor expansion along the first row).
template <class T> EDN_HOST_DEVICE constexpr T det(const Mat3<T>& a) {
    return a.m[0][0] * (a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1]) -
           a.m[0][1] * (a.m[1][0] * a.m[2][2] - a.m[1][2] * a.m[2][0]) +
           a.m[0][2] * (a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0]);
}

/// Adjugate (transposed cofactor matrix): adj(a) a = det(a) I, defined also for singular a.
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> adjugate(const Mat3<T>& a) {
    Mat3<T> r{};
    r.m[0][0] = a.m[1][1] * a.m[2][2] - a.m[1][2] * a.m[2][1];
    r.m[0][1] = a.m[0][2] * a.m[2][1] - a.m[0][1] * a.m[2][2];
    r.m[0][2] = a.m[0][1] * a.m[1][2] - a.m[0][2] * a.m[1][1];
    r.m[1][0] = a.m[1][2] * a.m[2][0] - a.m[1][0] * a.m[2][2];
    r.m[1][1] = a.m[0][0] * a.m[2][2] - a.m[0][2] * a.m[2][0];
    r.m[1][2] = a.m[0][2] * a.m[1][0] - a.m[0][0] * a.m[1][2];
    r.m[2][0] = a.m[1][0] * a.m[2][1] - a.m[1][1] * a.m[2][0];
    r.m[2][1] = a.m[0][1] * a.m[2][0] - a.m[0][0] * a.m[2][1];
    r.m[2][2] = a.m[0][0] * a.m[1][1] - a.m[0][1] * a.m[1][0];
    return r;
}

/// Inverse of a given its determinant (callers check det != 0; kernels cannot throw).
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> inverse(const Mat3<T>& a, T determinant) {
    return (T(1) / determinant) * adjugate(a);
}

/// Inverse of a (callers check that a is invertible).
template <class T> EDN_HOST_DEVICE constexpr Mat3<T> inverse(const Mat3<T>& a) {
    return inverse(a, det(a));
}

} // namespace edn
