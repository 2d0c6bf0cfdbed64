// sim/names.hpp: one table of names and GUI labels; the name/parse functions beside the enums
// read it and round-trip every value.

#include "sim/names.hpp"

#include <gtest/gtest.h>
#include <set>
#include <string>

namespace edn {
namespace {

/// Every value of E: distinct names and labels, name -> value -> name round trip.
template <class E> void check_table() {
    std::set<std::string> names, labels;
    for (const NamedValue<E>& entry : Names<E>::values) {
        EXPECT_TRUE(names.insert(entry.name).second) << entry.name;
        EXPECT_TRUE(labels.insert(entry.label).second) << entry.label;
        EXPECT_EQ(parse_name<E>(entry.name), entry.value);
        EXPECT_STREQ(name_of(entry.value), entry.name);
        EXPECT_STREQ(label_of(entry.value), entry.label);
        EXPECT_EQ(Names<E>::values[index_of(entry.value)].value, entry.value);
    }
    EXPECT_FALSE(parse_name<E>("nonsense").has_value());
    EXPECT_FALSE(parse_name<E>("").has_value());
}

TEST(Names, TablesRoundTrip) {
    check_table<Material>();
    check_table<Integrator>();
    check_table<Backend>();
    check_table<Preconditioner>();
    check_table<SummationMethod>();
    check_table<NewtonStop>();
}

TEST(Names, FunctionsBesideTheEnumsReadTheTable) {
    // The spellings the CLI, scripts and JSON outputs have always used.
    EXPECT_STREQ(material_name(Material::NeoHookean), "neohookean");
    EXPECT_EQ(parse_material("corotational"), Material::Corotational);
    EXPECT_STREQ(integrator_name(Integrator::BackwardEuler), "backward_euler");
    EXPECT_EQ(parse_integrator("static"), Integrator::Static);
    EXPECT_STREQ(backend_name(Backend::Cuda), "cuda");
    EXPECT_EQ(parse_backend("cpu"), Backend::Cpu);
    EXPECT_STREQ(preconditioner_name(Preconditioner::TwoLevel), "two_level");
    EXPECT_EQ(parse_preconditioner("block_jacobi"), Preconditioner::BlockJacobi);
    EXPECT_STREQ(summation_method_name(SummationMethod::PerSimplex), "per_simplex");
    EXPECT_EQ(parse_summation_method("inline"), SummationMethod::Inline);
    EXPECT_FALSE(parse_material("neo-Hookean").has_value()); // labels are not names
    EXPECT_EQ(names_list<Material>(), "linear | corotational | neohookean");
    EXPECT_EQ(names_list<Backend>(", "), "cpu, cuda");
    EXPECT_STREQ(label_of(Material::Corotational), "co-rotational");
    EXPECT_EQ(kOrderNames.size(), 3u);
    for (int p = 1; p <= 3; ++p) EXPECT_EQ(kOrderNames[p - 1].value, p);
}

} // namespace
} // namespace edn
