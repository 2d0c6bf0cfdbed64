// Inline summation (each row computes its cells' Hessian rows; no element matrices) against the
// per-entry summation of stored element matrices, for every material and order, with and without
// stiffness damping, projected and exact, on the CPU (double) and, where a device is usable, on
// the GPU (float) against the CPU.
#include "mesh/box_mesh.hpp"
#include "sim/simulation.hpp"
#include "support/backend.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace edn {
namespace {

struct InlineCase {
    Material material;
    int order;
    double stiffness_damping;
    bool project;
};

std::vector<InlineCase> inline_cases() {
    std::vector<InlineCase> cases;
    for (Material material : {Material::Linear, Material::Corotational, Material::NeoHookean})
        for (int order = 1; order <= 3; ++order) cases.push_back({material, order, 0.0, true});
    cases.push_back({Material::Linear, 1, 0.01, true});
    cases.push_back({Material::NeoHookean, 2, 0.01, true});
    cases.push_back({Material::NeoHookean, 1, 0.0, false});
    cases.push_back({Material::Corotational, 2, 0.01, false});
    return cases;
}

/// H(y) v of `s` and of `s` with inline summation, at a deformed state of a small box.
void compare(const InlineCase& c, Backend backend, double tolerance) {
    const TetMesh mesh = make_box_tet_mesh(2, 2, 3, {0, 0, 0}, {0.2, 0.2, 0.3});
    SimulationSettings s;
    s.material = c.material;
    s.order = c.order;
    s.stiffness_damping = c.stiffness_damping;
    s.projection = c.project ? HessianProjection::Always : HessianProjection::Never;
    s.preconditioner = Preconditioner::BlockJacobi;
    SimulationSettings reference = s; // per-entry on the CPU, double
    s.backend = backend;
    s.summation = SummationMethod::Inline;
    Simulation expected(mesh, reference), actual(mesh, s);
    std::vector<double> y = expected.rest_positions(), v(y.size());
    for (std::size_t k = 0; k < y.size(); ++k)
        y[k] += 0.01 * std::sin(0.7 * k + 0.3), v[k] = std::cos(1.3 * k);
    const auto he = expected.hessian_product(y, v), ha = actual.hessian_product(y, v);
    ASSERT_EQ(he.size(), ha.size());
    double scale = 0, diff = 0;
    for (std::size_t k = 0; k < he.size(); ++k)
        scale = std::max(scale, std::abs(he[k])), diff = std::max(diff, std::abs(he[k] - ha[k]));
    EXPECT_LE(diff, tolerance * scale)
        << material_name(c.material) << " p" << c.order << " damping " << c.stiffness_damping
        << " project " << c.project;
}

TEST(InlineSummation, EqualsPerEntryForEveryMaterialAndOrder) {
    for (const InlineCase& c : inline_cases()) compare(c, Backend::Cpu, 1e-12);
}

TEST(InlineSummation, CudaEqualsTheCpuForEveryMaterialAndOrder) {
    EDN_SKIP_WITHOUT_CUDA();
    for (const InlineCase& c : inline_cases()) compare(c, Backend::Cuda, 1e-4);
}

} // namespace
} // namespace edn
