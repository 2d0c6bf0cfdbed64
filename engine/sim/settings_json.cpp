#include "sim/settings_json.hpp"

#include "core/error.hpp"
#include "sim/names.hpp"
#include "sim/presets.hpp"
#include "sim/settings_options.hpp"

#include <array>
#include <charconv>
#include <limits>
#include <utility>
#include <vector>

namespace edn {
namespace {

/// The JSON type a member's value has.
enum class Kind : std::uint8_t {
    Number,  ///< a number, passed as its shortest exact text
    Name,    ///< a string, passed as is
    Switch,  ///< true / false for an on|off option
    Flag,    ///< true sets a flag option; false its default
    Gravity, ///< a number (along -z) or [gx, gy, gz]
};

struct KeyKind {
    SettingsKey key;
    Kind kind;
};

constexpr std::array<KeyKind, 28> kKeys = {{
    {{"", "order", "order"}, Kind::Number},
    {{"material", "preset", "preset"}, Kind::Name},
    {{"material", "model", "material"}, Kind::Name},
    {{"material", "E", "E"}, Kind::Number},
    {{"material", "nu", "nu"}, Kind::Number},
    {{"material", "rho", "rho"}, Kind::Number},
    {{"time", "integrator", "integrator"}, Kind::Name}, // "static": the --static flag
    {{"time", "dt", "dt"}, Kind::Number},
    {{"time", "gravity", "gravity"}, Kind::Gravity},
    {{"time", "damping", "damping"}, Kind::Number},
    {{"time", "stiffness_damping", "stiffness-damping"}, Kind::Number},
    {{"solver", "backend", "backend"}, Kind::Name},
    {{"solver", "summation", "summation"}, Kind::Name},
    {{"solver", "preconditioner", "preconditioner"}, Kind::Name},
    {{"solver", "newton", "newton"}, Kind::Number},
    {{"solver", "newton_tol", "newton-tol"}, Kind::Number},
    {{"solver", "frame_budget_ms", "frame-budget-ms"}, Kind::Number},
    {{"solver", "cg_tol", "cg-tol"}, Kind::Number},
    {{"solver", "cg_max", "cg-max"}, Kind::Number},
    {{"solver", "cg_forcing", "cg-forcing"}, Kind::Switch},
    {{"solver", "multigrid_refresh", "multigrid-refresh"}, Kind::Name},
    {{"solver", "multigrid_lag", "multigrid-lag"}, Kind::Number},
    {{"solver", "multigrid_modes", "multigrid-modes"}, Kind::Name},
    {{"solver", "projection", "projection"}, Kind::Name},
    {{"solver", "exact_hessian", "exact-hessian"}, Kind::Flag}, // read only: projection never
    {{"solver", "deterministic", "deterministic"}, Kind::Flag},
    {{"ground", "height", "ground"}, Kind::Number},
    {{"ground", "friction", "ground-friction"}, Kind::Number},
}};

constexpr std::array<const char*, 5> kGroups = {"material", "time", "solver", "ground", "order"};

/// The shortest text that reads back to the same double (or the integer's digits).
std::string number_text(const Json& value) {
    if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
    char buffer[64];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value.get<double>());
    return std::string(buffer, ec == std::errc() ? end : buffer);
}

/// The option's message without the "option '--name': " prefix apply_settings_option gives it.
std::string problem_of(const Error& error, const char* option) {
    const std::string prefix = std::string("option '--") + option + "': ";
    std::string message = error.what();
    if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
    return message;
}

} // namespace

std::span<const SettingsKey> settings_keys() {
    static const std::array<SettingsKey, kKeys.size()> keys = [] {
        std::array<SettingsKey, kKeys.size()> out{};
        for (std::size_t i = 0; i < kKeys.size(); ++i) out[i] = kKeys[i].key;
        return out;
    }();
    return keys;
}

bool is_settings_member(std::string_view key) {
    for (const char* group : kGroups)
        if (key == group) return true;
    return false;
}

void read_settings_json(const JsonFieldReader& reader, const JsonField& root,
                        SimulationSettings& settings) {
    std::vector<std::pair<std::string, std::string>> given;
    std::optional<bool> exact_hessian, deterministic;
    std::optional<double> ground_stiffness;
    std::optional<int> coarse_iterations;
    bool no_ground = false;
    // A scratch copy checks each member alone, so a bad value names its own key and line.
    auto add = [&](const JsonField& field, const char* option, std::string value) {
        SimulationSettings scratch = settings;
        try {
            apply_settings_option(option, value, scratch);
        } catch (const Error& error) {
            reader.fail(field, problem_of(error, option));
        }
        given.emplace_back(option, std::move(value));
    };
    for (const char* group : {"material", "time", "solver", "ground"}) {
        if (!root->contains(group)) continue;
        const JsonField g = reader.member(root, group);
        if (std::string_view(group) == "ground" && g->is_boolean()) {
            if (g->get<bool>()) reader.fail(g, "expected an object or false (no ground)");
            no_ground = true;
            continue;
        }
        std::vector<std::string_view> keys;
        for (const KeyKind& k : kKeys)
            if (group == std::string_view(k.key.group)) keys.push_back(k.key.key);
        if (std::string_view(group) == "solver") keys.push_back("coarse_iterations");
        if (std::string_view(group) == "ground") keys.push_back("stiffness");
        if (!g->is_object())
            reader.fail(g, std::string("expected an object, got ") + json_type_name(*g));
        for (const auto& [key, value] : g->items()) {
            bool known = false;
            for (std::string_view k : keys) known = known || k == key;
            if (!known) {
                std::string expected;
                for (std::string_view k : keys)
                    expected += (expected.empty() ? "" : ", ") + std::string(k);
                reader.fail(reader.member(g, key), "unknown key (expected " + expected + ")");
            }
        }
    }
    for (const KeyKind& k : kKeys) {
        const std::string_view group = k.key.group;
        JsonField field;
        if (group.empty()) {
            if (!root->contains(k.key.key)) continue;
            field = reader.member(root, k.key.key);
        } else {
            if (!root->contains(group) || !(*root)[std::string(group)].is_object()) continue;
            const JsonField g = reader.member(root, std::string(group));
            if (!g->contains(k.key.key)) continue;
            field = reader.member(g, k.key.key);
        }
        switch (k.kind) {
        case Kind::Number:
            reader.number(field);
            add(field, k.key.option, number_text(*field));
            break;
        case Kind::Name: {
            const std::string& text = reader.string(field);
            if (std::string_view(k.key.option) == "integrator" && text == "static")
                add(field, "static", "");
            else
                add(field, k.key.option, text);
            break;
        }
        case Kind::Switch:
            add(field, k.key.option, reader.boolean(field) ? "on" : "off");
            break;
        case Kind::Flag: {
            const bool on = reader.boolean(field);
            if (on) add(field, k.key.option, "");
            (std::string_view(k.key.option) == "exact-hessian" ? exact_hessian : deterministic) =
                on;
            break;
        }
        case Kind::Gravity:
            if (field->is_array()) {
                const Vec3 g = reader.vec3(field);
                add(field, k.key.option,
                    number_text(Json(g[0])) + "," + number_text(Json(g[1])) + "," +
                        number_text(Json(g[2])));
            } else {
                reader.number(field);
                add(field, k.key.option, number_text(*field));
            }
            break;
        }
    }
    if (root->contains("solver")) {
        const JsonField solver = reader.member(root, "solver");
        if (solver->contains("coarse_iterations"))
            coarse_iterations = static_cast<int>(
                reader.integer(reader.member(solver, "coarse_iterations"), 0, 1000));
    }
    if (root->contains("ground") && (*root)["ground"].is_object()) {
        const JsonField ground = reader.member(root, "ground");
        if (ground->contains("stiffness"))
            ground_stiffness = reader.number_in(reader.member(ground, "stiffness"), 0.0,
                                                std::numeric_limits<float>::max());
    }
    // Every value was checked above; together they apply in the options table's order.
    apply_settings_options(given, settings);
    if (exact_hessian && *exact_hessian) settings.projection = HessianProjection::Never;
    if (deterministic) settings.deterministic = *deterministic;
    if (coarse_iterations) settings.coarse_iterations = *coarse_iterations;
    if (ground_stiffness) settings.ground_stiffness = *ground_stiffness;
    if (no_ground) settings.ground_height.reset();
}

void write_settings_json(const SimulationSettings& s, const SimulationSettings* base, Json& root) {
    root["order"] = s.order;
    Json material = Json::object();
    if (const MaterialPreset* preset = matching_preset(s)) material["preset"] = preset->name;
    material["model"] = name_of(s.material);
    material["E"] = s.young;
    material["nu"] = s.poisson;
    material["rho"] = s.density;
    root["material"] = material;
    Json time = Json::object();
    time["integrator"] = name_of(s.integrator);
    time["dt"] = s.dt;
    time["gravity"] = Json::array({s.gravity[0], s.gravity[1], s.gravity[2]});
    time["damping"] = s.mass_damping;
    time["stiffness_damping"] = s.stiffness_damping;
    root["time"] = time;

    Json solver = Json::object();
    auto put = [&](const char* key, const auto& value, const auto& base_value) {
        if (!base || !(value == base_value)) solver[key] = value;
    };
    const SimulationSettings b = base ? *base : SimulationSettings{};
    put("backend", std::string(name_of(s.backend)), std::string(name_of(b.backend)));
    put("summation", std::string(name_of(s.summation)), std::string(name_of(b.summation)));
    put("preconditioner", std::string(name_of(s.preconditioner)),
        std::string(name_of(b.preconditioner)));
    put("newton", s.max_newton_iterations, b.max_newton_iterations);
    put("newton_tol", s.newton_tolerance, b.newton_tolerance);
    put("frame_budget_ms", s.frame_budget_ms, b.frame_budget_ms);
    put("cg_tol", s.pcg.relative_tolerance, b.pcg.relative_tolerance);
    put("cg_max", s.pcg.max_iterations, b.pcg.max_iterations);
    put("cg_forcing", s.cg_forcing, b.cg_forcing);
    put("multigrid_refresh", std::string(s.multigrid_every_iteration ? "iteration" : "step"),
        std::string(b.multigrid_every_iteration ? "iteration" : "step"));
    put("multigrid_lag", s.multigrid_lag, b.multigrid_lag);
    put("multigrid_modes", std::string(s.multigrid_rest_modes ? "rest" : "current"),
        std::string(b.multigrid_rest_modes ? "rest" : "current"));
    put("projection", std::string(name_of(s.projection)), std::string(name_of(b.projection)));
    put("deterministic", s.deterministic, b.deterministic);
    put("coarse_iterations", s.coarse_iterations, b.coarse_iterations);
    if (!solver.empty()) root["solver"] = solver;

    const bool same_ground = s.ground_height == b.ground_height &&
                             s.ground_friction == b.ground_friction &&
                             s.ground_stiffness == b.ground_stiffness;
    if (base && same_ground) return;
    Json ground = Json::object();
    if (s.ground_height) {
        ground["height"] = *s.ground_height;
    } else if (base && b.ground_height) {
        root["ground"] = false; // friction and stiffness do nothing without a ground
        return;
    }
    ground["friction"] = s.ground_friction;
    ground["stiffness"] = s.ground_stiffness;
    root["ground"] = ground;
}

} // namespace edn
