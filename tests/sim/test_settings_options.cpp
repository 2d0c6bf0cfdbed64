// sim/settings_options.hpp: the one parser of simulate's and the app's settings flags. Every
// option of the table reaches its setting, --preset yields to explicit --E/--nu/--rho in any
// order, and bad values are one-line usage errors naming the option.

#include "sim/names.hpp"
#include "sim/presets.hpp"
#include "sim/settings_options.hpp"
#include "support/errors.hpp"

#include <gtest/gtest.h>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace edn {
namespace {

using Given = std::vector<std::pair<std::string, std::string>>;

/// Every field of `s`, as text (SimulationSettings has no operator==: .cu files are C++17).
std::string describe(const SimulationSettings& s) {
    std::ostringstream out;
    out.precision(17);
    out << s.order << ' ' << int(s.material) << ' ' << s.young << ' ' << s.poisson << ' '
        << s.density << ' ' << s.dt << ' ' << int(s.integrator) << ' ' << int(s.backend) << ' '
        << int(s.summation) << ' ' << s.gravity[0] << ',' << s.gravity[1] << ',' << s.gravity[2]
        << ' ' << s.mass_damping << ' ' << s.stiffness_damping << ' ' << s.max_newton_iterations
        << ' ' << s.newton_tolerance << ' ' << s.frame_budget_ms << ' ' << s.pcg.relative_tolerance
        << ' ' << s.pcg.max_iterations << ' ' << s.cg_forcing << ' ' << s.coarse_iterations << ' '
        << int(s.preconditioner) << ' ' << s.multigrid_every_iteration << ' ' << s.multigrid_lag
        << ' ' << s.multigrid_rest_modes << ' ' << name_of(s.projection) << ' ' << s.deterministic
        << ' ' << (s.ground_height ? *s.ground_height : -1.5) << ' ' << s.ground_stiffness << ' '
        << s.ground_friction;
    return out.str();
}

SimulationSettings parsed(const Given& given) {
    SimulationSettings s;
    apply_settings_options(given, s, "simulate");
    return s;
}

TEST(SettingsOptions, EveryOptionChangesItsSetting) {
    // A value unlike the default for each option of the table: an option the parser ignored
    // would leave the settings at their defaults.
    const std::vector<std::pair<std::string, std::string>> samples = {
        {"preset", "foam"},
        {"order", "2"},
        {"material", "linear"},
        {"E", "2e6"},
        {"nu", "0.45"},
        {"rho", "1200"},
        {"dt", "0.005"},
        {"integrator", "midpoint"},
        {"static", ""},
        {"backend", "cuda"},
        {"summation", "per_simplex"},
        {"preconditioner", "two_level"},
        {"gravity", "1,2,3"},
        {"damping", "0.5"},
        {"stiffness-damping", "0.01"},
        {"newton", "7"},
        {"newton-tol", "1e-5"},
        {"frame-budget-ms", "16"},
        {"cg-tol", "1e-6"},
        {"cg-max", "50"},
        {"cg-forcing", "off"},
        {"multigrid-refresh", "iteration"},
        {"multigrid-lag", "3"},
        {"multigrid-modes", "rest"},
        {"projection", "always"},
        {"exact-hessian", ""},
        {"deterministic", ""},
        {"ground", "-0.25"},
        {"ground-friction", "3"},
    };
    std::set<std::string> covered;
    const std::string defaults = describe(SimulationSettings{});
    for (const auto& [name, value] : samples) {
        SCOPED_TRACE(name);
        ASSERT_NE(find_settings_option(name), nullptr);
        EXPECT_EQ(find_settings_option(name)->takes_value(), !value.empty());
        EXPECT_NE(describe(parsed({{name, value}})), defaults);
        covered.insert(name);
    }
    for (const SettingsOption& option : settings_options())
        EXPECT_TRUE(covered.count(option.name)) << option.name << " has no sample here";
}

// The multigrid is the default at every order; two-level is the multigrid at p = 1 (no coarser
// P1 space); the other choices stay.
TEST(SettingsOptions, PreconditionerInUseFollowsTheOrder) {
    SimulationSettings s;
    EXPECT_EQ(s.preconditioner, Preconditioner::Multigrid);
    for (int order : {1, 2, 3})
        EXPECT_EQ(preconditioner_in_use(s, order), Preconditioner::Multigrid);
    s.preconditioner = Preconditioner::TwoLevel;
    EXPECT_EQ(preconditioner_in_use(s, 1), Preconditioner::Multigrid);
    EXPECT_EQ(preconditioner_in_use(s, 2), Preconditioner::TwoLevel);
    EXPECT_EQ(preconditioner_in_use(s, 3), Preconditioner::TwoLevel);
    for (Preconditioner p : {Preconditioner::BlockJacobi, Preconditioner::Multigrid}) {
        s.preconditioner = p;
        for (int order : {1, 2, 3}) EXPECT_EQ(preconditioner_in_use(s, order), p);
    }
}

// Auto is per-entry, except on CUDA (an L2 size given) at p = 1 without `deterministic` where
// the element blocks exceed 4x the L2 cache; explicit choices stay.
TEST(SettingsOptions, SummationInUseResolvesAuto) {
    SimulationSettings s;
    EXPECT_EQ(s.summation, SummationMethod::Auto);
    const std::int64_t l2 = 50 << 20;             // the H100's
    const Index big = 1'149'238, small = 187'436; // 662 and 108 MB of p = 1 blocks
    EXPECT_EQ(summation_in_use(s, 1, big, l2), SummationMethod::PerSimplex);
    EXPECT_EQ(summation_in_use(s, 1, small, l2), SummationMethod::PerEntry);
    EXPECT_EQ(summation_in_use(s, 1, big, 0), SummationMethod::PerEntry); // the CPU
    EXPECT_EQ(summation_in_use(s, 2, big, l2), SummationMethod::PerEntry);
    s.deterministic = true;
    EXPECT_EQ(summation_in_use(s, 1, big, l2), SummationMethod::PerEntry);
    s.deterministic = false;
    for (SummationMethod m :
         {SummationMethod::PerEntry, SummationMethod::PerSimplex, SummationMethod::Inline}) {
        s.summation = m;
        for (int order : {1, 2, 3}) {
            EXPECT_EQ(summation_in_use(s, order, big, l2), m);
            EXPECT_EQ(summation_in_use(s, order, small, 0), m);
        }
    }
}

TEST(SettingsOptions, ParsesToTheExpectedValues) {
    const SimulationSettings s = parsed({{"order", "3"},
                                         {"gravity", "4"},
                                         {"cg-tol", "1e-6"},
                                         {"newton", "5"},
                                         {"summation", "inline"},
                                         {"ground", "0.5"},
                                         {"multigrid-refresh", "iteration"}});
    EXPECT_EQ(s.order, 3);
    EXPECT_EQ(s.gravity, (std::array<double, 3>{0, 0, -4}));
    EXPECT_EQ(s.pcg.relative_tolerance, 1e-6);
    EXPECT_EQ(s.max_newton_iterations, 5);
    EXPECT_EQ(s.summation, SummationMethod::Inline);
    EXPECT_EQ(s.ground_height, 0.5);
    EXPECT_TRUE(s.multigrid_every_iteration);
    EXPECT_EQ(describe(parsed({})), describe(SimulationSettings{}));
}

TEST(SettingsOptions, ExplicitMaterialNumbersWinOverThePresetInAnyOrder) {
    const MaterialPreset& gel = *find_preset("gel");
    for (const Given& given :
         {Given{{"preset", "gel"}, {"E", "5e4"}}, Given{{"E", "5e4"}, {"preset", "gel"}}}) {
        const SimulationSettings s = parsed(given);
        EXPECT_EQ(s.young, 5e4);
        EXPECT_EQ(s.poisson, gel.poisson);
        EXPECT_EQ(s.density, gel.density);
    }
    const SimulationSettings only = parsed({{"preset", "soft_tissue"}});
    EXPECT_EQ(only.young, find_preset("soft_tissue")->young);
    // --static wins over --integrator wherever it stands.
    EXPECT_EQ(parsed({{"static", ""}, {"integrator", "midpoint"}}).integrator, Integrator::Static);
}

TEST(SettingsOptions, BadValuesAreUsageErrorsNamingTheOption) {
    auto apply = [](std::string name, std::string value) {
        return [name, value] { parsed({{name, value}}); };
    };
    test::expect_error(apply("preset", "jelly"), ErrorCode::Usage,
                       "simulate: option '--preset': unknown preset 'jelly' (soft_rubber, "
                       "silicone, gel, soft_tissue, foam)");
    test::expect_error(apply("E", "-3"), ErrorCode::Usage, "option '--E': -3 is out of range");
    test::expect_error(apply("E", "0x10"), ErrorCode::Usage, "is not a number");
    test::expect_error(apply("nu", "0.5"), ErrorCode::Usage, "option '--nu': must be in");
    test::expect_error(apply("order", "4"), ErrorCode::Usage, "option '--order'");
    test::expect_error(apply("material", "steel"), ErrorCode::Usage, "neohookean");
    test::expect_error(apply("integrator", "static"), ErrorCode::Usage, "--static");
    test::expect_error(apply("gravity", "1,2"), ErrorCode::Usage, "expected g or gx,gy,gz");
    test::expect_error(apply("dt", "1e-300"), ErrorCode::Usage, "option '--dt'");
    test::expect_error(apply("cg-forcing", "maybe"), ErrorCode::Usage, "on or off");
    test::expect_error(apply("speed", "3"), ErrorCode::Usage, "not a simulation setting");
    test::expect_error(
        [] {
            parsed({{"E", "1"}, {"E", "2"}});
        },
        ErrorCode::Usage, "option '--E' given twice");
    // Without a command the message starts at the option (the app prefixes its own name).
    SimulationSettings s;
    test::expect_error([&] { apply_settings_option("E", "x", s); }, ErrorCode::Usage,
                       "option '--E': 'x' is not a number");
}

TEST(SettingsOptions, HelpStatesTheStructsDefaults) {
    // The usage lines quote SimulationSettings' defaults; a changed default must change them.
    const SimulationSettings d;
    auto help = [](const char* name) { return std::string(find_settings_option(name)->help); };
    EXPECT_EQ(d.young, 1e5);
    EXPECT_NE(help("E").find("(default 1e5)"), std::string::npos);
    EXPECT_EQ(d.poisson, 0.3);
    EXPECT_NE(help("nu").find("(default 0.3)"), std::string::npos);
    EXPECT_EQ(d.density, 1000);
    EXPECT_NE(help("rho").find("(default 1000)"), std::string::npos);
    EXPECT_NE(help("newton").find("(default " + std::to_string(d.max_newton_iterations) + ")"),
              std::string::npos);
    EXPECT_EQ(d.newton_tolerance, 1e-3);
    EXPECT_NE(help("newton-tol").find("(default 1e-3)"), std::string::npos);
    EXPECT_EQ(d.pcg.relative_tolerance, 1e-4);
    EXPECT_NE(help("cg-tol").find("(default 1e-4)"), std::string::npos);
    EXPECT_NE(help("cg-max").find("(default " + std::to_string(d.pcg.max_iterations) + ")"),
              std::string::npos);
    EXPECT_EQ(d.mass_damping, 0.0);
    EXPECT_NE(help("damping").find("(default 0)"), std::string::npos);
}

} // namespace
} // namespace edn
