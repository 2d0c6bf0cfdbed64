// sim/presets.hpp: the named materials every front end offers. Each is a valid, distinct
// material with a source, found by name, recognised from its numbers, and simulates.

#include "mesh/box_mesh.hpp"
#include "sim/presets.hpp"
#include "sim/simulation.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <regex>
#include <set>
#include <string>

namespace edn {
namespace {

TEST(Presets, TheIssuesMaterialsAreThereWithSources) {
    std::set<std::string> names, labels;
    for (const MaterialPreset& preset : material_presets()) {
        SCOPED_TRACE(preset.name);
        EXPECT_TRUE(names.insert(preset.name).second);
        EXPECT_TRUE(labels.insert(preset.label).second);
        EXPECT_GT(preset.young, 0.0);
        EXPECT_GT(preset.poisson, -1.0);
        EXPECT_LT(preset.poisson, 0.5);
        EXPECT_GT(preset.density, 0.0);
        // A source names a reference (a year) and the range the value was taken from.
        const std::string source = preset.source;
        EXPECT_GT(source.size(), 40u);
        EXPECT_TRUE(std::regex_search(source, std::regex("(19|20)[0-9][0-9]"))) << source;
        EXPECT_EQ(find_preset(preset.name), &preset);
    }
    EXPECT_EQ(names,
              (std::set<std::string>{"soft_rubber", "silicone", "gel", "soft_tissue", "foam"}));
    EXPECT_EQ(find_preset("jelly"), nullptr);
    EXPECT_EQ(find_preset(""), nullptr);
    EXPECT_EQ(preset_names(", "), "soft_rubber, silicone, gel, soft_tissue, foam");
}

TEST(Presets, OrderedByStiffnessWhereTheLiteratureIs) {
    // Rubber is stiffer than silicone, silicone than gel; foam is by far the lightest.
    EXPECT_GT(find_preset("soft_rubber")->young, find_preset("silicone")->young);
    EXPECT_GT(find_preset("silicone")->young, find_preset("gel")->young);
    for (const MaterialPreset& preset : material_presets()) {
        if (std::string(preset.name) == "foam") continue;
        EXPECT_GT(preset.density, 10 * find_preset("foam")->density) << preset.name;
    }
}

TEST(Presets, ApplySetsOnlyTheMaterialNumbersAndIsRecognised) {
    SimulationSettings s;
    s.order = 2;
    s.material = Material::Corotational;
    EXPECT_EQ(matching_preset(s), nullptr); // the defaults are no preset
    const MaterialPreset& gel = *find_preset("gel");
    apply_preset(gel, s);
    EXPECT_EQ(s.young, gel.young);
    EXPECT_EQ(s.poisson, gel.poisson);
    EXPECT_EQ(s.density, gel.density);
    EXPECT_EQ(s.order, 2);
    EXPECT_EQ(s.material, Material::Corotational);
    EXPECT_EQ(matching_preset(s), &gel);
    s.young *= 2;
    EXPECT_EQ(matching_preset(s), nullptr);
}

TEST(Presets, EverySimulatesAPinnedBeam) {
    for (const MaterialPreset& preset : material_presets()) {
        SCOPED_TRACE(preset.name);
        SimulationSettings s;
        apply_preset(preset, s);
        Simulation sim(make_box_tet_mesh(1, 1, 3, {0, 0, 0}, {0.1, 0.1, 0.3}), s);
        sim.pin_below(0.01);
        for (int frame = 0; frame < 3; ++frame) {
            const StepResult r = sim.step();
            EXPECT_TRUE(std::isfinite(r.potential));
        }
        for (double x : sim.positions()) ASSERT_TRUE(std::isfinite(x));
    }
}

} // namespace
} // namespace edn
