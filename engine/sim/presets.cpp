#include "sim/presets.hpp"

#include <array>

namespace edn {
namespace {

// Representative values inside the quoted ranges. Real rubbers, silicones, gels and tissues are
// nearly incompressible (nu -> 0.5); 0.45-0.48 keeps that character while linear (p = 1) tets do
// not lock outright.
constexpr std::array<MaterialPreset, 5> kPresets = {{
    {"soft_rubber", "soft rubber", 2e6, 0.48, 950,
     "natural / soft vulcanised rubber: E ~1-5 MPa, nu ~0.5, rho 920-1200 kg/m^3 (A. N. Gent, "
     "Engineering with Rubber, 3rd ed., 2012)"},
    {"silicone", "silicone", 1e5, 0.48, 1070,
     "soft casting silicones (Ecoflex 00-30 .. Dragon Skin 10): E ~0.05-0.5 MPa, rho ~1070 "
     "kg/m^3 (Smooth-On technical bulletins; Marechal et al., Soft Robotics 8(3), 2021)"},
    {"gel", "gel", 2e4, 0.48, 1030,
     "gelatin 5-10 wt% / agar 1-3 wt% hydrogels: E ~5-100 kPa, nearly incompressible, rho close "
     "to water (Culjat et al., Ultrasound Med. Biol. 36(6), 2010)"},
    {"soft_tissue", "soft tissue", 1e4, 0.45, 1060,
     "liver ~1-10 kPa, relaxed muscle ~10-100 kPa, nu ~0.45-0.5, rho 1050-1060 kg/m^3 (Y. C. "
     "Fung, Biomechanics, 2nd ed., 1993; F. A. Duck, Physical Properties of Tissue, 1990)"},
    {"foam", "foam", 5e4, 0.3, 30,
     "flexible open-cell polyurethane foam: E ~0.01-1 MPa, nu ~0.3, rho 20-60 kg/m^3 (L. J. "
     "Gibson, M. F. Ashby, Cellular Solids, 2nd ed., 1997)"},
}};

} // namespace

std::span<const MaterialPreset> material_presets() {
    return kPresets;
}

const MaterialPreset* find_preset(std::string_view name) {
    for (const MaterialPreset& preset : kPresets)
        if (name == preset.name) return &preset;
    return nullptr;
}

const MaterialPreset* matching_preset(const SimulationSettings& settings) {
    for (const MaterialPreset& preset : kPresets)
        if (settings.young == preset.young && settings.poisson == preset.poisson &&
            settings.density == preset.density)
            return &preset;
    return nullptr;
}

void apply_preset(const MaterialPreset& preset, SimulationSettings& settings) {
    settings.young = preset.young;
    settings.poisson = preset.poisson;
    settings.density = preset.density;
}

std::string preset_names(std::string_view separator) {
    std::string out;
    for (const MaterialPreset& preset : kPresets) {
        if (!out.empty()) out += separator;
        out += preset.name;
    }
    return out;
}

} // namespace edn
