// core/dispatch.hpp and sim/material_dispatch.hpp: each run-time choice reaches the matching
// template instantiation / material object, and bad choices are errors, not a silent default.

#include "core/dispatch.hpp"
#include "core/error.hpp"
#include "fem/lagrange_tet.hpp"
#include "sim/material_dispatch.hpp"

#include <gtest/gtest.h>
#include <string>
#include <type_traits>

namespace edn {
namespace {

TEST(Dispatch, WithOrderPassesTheOrderAsATemplateArgument) {
    for (int p = 1; p <= 3; ++p) {
        const int nodes = with_order(p, [&]<int P>() {
            static_assert(P >= 1 && P <= 3);
            return lagrange_tet_num_nodes(P);
        });
        EXPECT_EQ(nodes, lagrange_tet_num_nodes(p));
    }
    int called = 0;
    with_order(2, [&]<int P>() { called = P; }); // void callables work too
    EXPECT_EQ(called, 2);
    for (int bad : {0, 4, -1}) {
        try {
            with_order(bad, [&]<int P>() { return P; });
            ADD_FAILURE() << "no error for order " << bad;
        } catch (const Error& error) {
            EXPECT_EQ(error.code(), ErrorCode::Usage);
            EXPECT_NE(std::string(error.what()).find(std::to_string(bad)), std::string::npos);
        }
    }
}

TEST(Dispatch, WithMaterialBuildsTheMaterialOfEachChoice) {
    const LameParameters<double> lame{2.0, 3.0};
    auto kind = [&](Material m) {
        return with_material(m, lame, [&](const auto& material) -> std::string {
            using M = std::decay_t<decltype(material)>;
            EXPECT_EQ(material.lame.lambda, lame.lambda);
            EXPECT_EQ(material.lame.mu, lame.mu);
            if constexpr (std::is_same_v<M, LinearMaterial<double>>) return "linear";
            if constexpr (std::is_same_v<M, Corotational<double>>) {
                // The simulation's tangent: exact (dR/dF included), projected per point later.
                EXPECT_EQ(material.tangent, CorotationalTangent::exact);
                return "corotational";
            }
            if constexpr (std::is_same_v<M, NeoHookean<double>>) return "neohookean";
            return "?";
        });
    };
    EXPECT_EQ(kind(Material::Linear), "linear");
    EXPECT_EQ(kind(Material::Corotational), "corotational");
    EXPECT_EQ(kind(Material::NeoHookean), "neohookean");
    // float, as the CUDA backend uses it.
    const bool is_float = with_material(
        Material::NeoHookean, LameParameters<float>{1.0f, 1.0f}, [](const auto& material) {
            return std::is_same_v<std::decay_t<decltype(material)>, NeoHookean<float>>;
        });
    EXPECT_TRUE(is_float);
}

} // namespace
} // namespace edn
