#pragma once
// Norms and differences of result vectors, for tolerances relative to a reference.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace edn::test {

/// Euclidean norm.
template <class T> double norm(const std::vector<T>& v) {
    double s = 0;
    for (T x : v) s += double(x) * double(x);
    return std::sqrt(s);
}

/// Largest |v_i| (0 for an empty vector).
template <class T> double max_abs(const std::vector<T>& v) {
    double m = 0;
    for (T x : v) m = std::max(m, std::abs(double(x)));
    return m;
}

/// Largest |a_i - b_i| over the indices of `a` (b at least as long).
template <class A, class B> double max_abs_diff(const std::vector<A>& a, const std::vector<B>& b) {
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        m = std::max(m, std::abs(double(a[i]) - double(b[i])));
    return m;
}

/// ||x - reference|| / ||reference|| in double, whatever the two element types.
template <class A, class B>
double relative_error(const std::vector<A>& x, const std::vector<B>& reference) {
    double d = 0, s = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double e = double(x[i]) - double(reference[i]);
        d += e * e;
        s += double(reference[i]) * double(reference[i]);
    }
    return std::sqrt(d / s);
}

/// True when every entry is finite.
template <class T> bool all_finite(const std::vector<T>& v) {
    return std::all_of(v.begin(), v.end(), [](T x) { return std::isfinite(x); });
}

} // namespace edn::test
