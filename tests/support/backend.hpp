#pragma once
// Backend-parameterised tests: one test body instantiated for the CPU and the CUDA backend. The
// CUDA instance skips itself (GTEST_SKIP) where the build has no CUDA or the machine no device,
// and its name ends in "/Cuda" (or holds "Cuda"), so --gtest_filter='*Cuda*' selects it.

#include "sim/simulation.hpp"

#include <gtest/gtest.h>
#include <ostream>
#include <string>
#include <tuple>

namespace edn::test {

/// True when this build has the CUDA backend and a CUDA device can be used.
bool has_cuda_device();

/// Why tests cannot run on `backend` here ("built without CUDA", "no CUDA device"); empty when
/// they can (always for the CPU).
std::string unavailable_reason(Backend backend);

/// "Cpu" or "Cuda": the test-name part naming a backend.
std::string backend_label(Backend backend);

/// Both backends, for INSTANTIATE_TEST_SUITE_P.
inline auto all_backends() {
    return ::testing::Values(Backend::Cpu, Backend::Cuda);
}

/// Instance names of a suite over Backend alone: "Cpu", "Cuda".
inline std::string backend_param_name(const ::testing::TestParamInfo<Backend>& info) {
    return backend_label(info.param);
}

/// Fixture of a suite over Backend: the instance of a backend that cannot run here is skipped.
class BackendTest : public ::testing::TestWithParam<Backend> {
protected:
    void SetUp() override;
    /// The backend of this instance.
    Backend backend() const { return GetParam(); }
};

/// Fixture of a suite over (Backend, element order): as BackendTest.
class BackendOrderTest : public ::testing::TestWithParam<std::tuple<Backend, int>> {
protected:
    void SetUp() override;
    /// The backend of this instance.
    Backend backend() const { return std::get<0>(GetParam()); }
    /// The element order of this instance.
    int order() const { return std::get<1>(GetParam()); }
};

/// Fixture of a CPU-vs-CUDA comparison suite over the element order: skipped without a device.
class CudaOrderTest : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override;
};

/// Instance names of a suite over (Backend, order): "Cpu_p1", "Cuda_p2".
inline std::string
backend_order_name(const ::testing::TestParamInfo<std::tuple<Backend, int>>& info) {
    return backend_label(std::get<0>(info.param)) + "_p" + std::to_string(std::get<1>(info.param));
}

} // namespace edn::test

namespace edn {

/// Prints a Backend parameter as its label (gtest's "GetParam() = Cuda"; found by ADL).
inline void PrintTo(Backend backend, std::ostream* os) {
    *os << test::backend_label(backend);
}

} // namespace edn

/// Skips the current test unless `backend` can run here (use in a test body or SetUp).
#define EDN_SKIP_UNLESS_AVAILABLE(backend)                                                         \
    if (const std::string edn_skip_reason_ = ::edn::test::unavailable_reason(backend);             \
        !edn_skip_reason_.empty())                                                                 \
    GTEST_SKIP() << edn_skip_reason_

/// Skips the current test unless a CUDA device can be used (CPU-vs-CUDA comparison tests).
#define EDN_SKIP_WITHOUT_CUDA() EDN_SKIP_UNLESS_AVAILABLE(::edn::Backend::Cuda)
