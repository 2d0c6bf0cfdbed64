#include "script.hpp"

#include "core/error.hpp"
#include "core/json.hpp"
#include "sim/names.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace edn {
namespace {

/// Reads the members of one action, with messages "FILE: action N (line L): key: problem".
class ActionReader {
public:
    ActionReader(const Json& value, const std::string& where) : value_(value), where_(where) {}

    [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
        EDN_THROW(ErrorCode::Parse, where_ << ": " << key << ": " << problem);
    }

    double number(const std::string& key, const Json& v) const {
        if (!v.is_number()) fail(key, std::string("expected a number, got ") + json_type_name(v));
        return v.get<double>();
    }

    std::int64_t integer(const std::string& key, const Json& v, std::int64_t lo,
                         std::int64_t hi) const {
        const double x = number(key, v);
        if (x != std::floor(x) || x < static_cast<double>(lo) || x > static_cast<double>(hi)) {
            std::ostringstream range;
            range << "expected an integer in [" << lo << ", " << hi << "], got " << x;
            fail(key, range.str());
        }
        return static_cast<std::int64_t>(x);
    }

    double positive(const std::string& key, const Json& v) const {
        const double x = number(key, v);
        if (!(x > 0.0)) fail(key, "expected a positive number");
        return x;
    }

    bool boolean(const std::string& key, const Json& v) const {
        if (!v.is_boolean()) {
            fail(key, std::string("expected true or false, got ") + json_type_name(v));
        }
        return v.get<bool>();
    }

    const std::string& string(const std::string& key, const Json& v) const {
        if (!v.is_string()) fail(key, std::string("expected a string, got ") + json_type_name(v));
        return v.get_ref<const std::string&>();
    }

    template <std::size_t N>
    std::array<double, N> vector(const std::string& key, const Json& v) const {
        if (!v.is_array() || v.size() != N) {
            fail(key, "expected an array of " + std::to_string(N) + " numbers");
        }
        std::array<double, N> out{};
        for (std::size_t i = 0; i < N; ++i) out[i] = number(key, v[i]);
        return out;
    }

    template <class T, class Parse>
    T named(const std::string& key, const Json& v, Parse parse, const char* choices) const {
        const std::string& text = string(key, v);
        const std::optional<T> parsed = parse(text);
        if (!parsed) fail(key, "unknown value \"" + text + "\" (expected " + choices + ")");
        return *parsed;
    }

    /// A value of a choice in the names table (sim/names.hpp).
    template <class T> T choice(const std::string& key, const Json& v) const {
        const std::string choices = names_list<T>(", ");
        return named<T>(key, v, parse_name<T>, choices.c_str());
    }

    /// "auto", or a manual [low, high] with low < high.
    void color_range(const Json& v, ScriptAction& action) const {
        if (v.is_string()) {
            if (v.get_ref<const std::string&>() != "auto")
                fail("color_range", "expected \"auto\" or [low, high]");
            action.color_range_auto = true;
            return;
        }
        const std::array<double, 2> range = vector<2>("color_range", v);
        if (!(std::isfinite(range[0]) && std::isfinite(range[1]) && range[0] < range[1]))
            fail("color_range", "expected finite [low, high] with low < high");
        action.color_range = ScriptColorRange{range[0], range[1]};
    }

    ScriptDrag drag(const Json& v) const {
        if (!v.is_object()) fail("drag", "expected an object");
        ScriptDrag drag;
        for (const auto& [key, member] : v.items()) {
            const std::string name = "drag." + key;
            if (key == "from") {
                drag.from_pixel = vector<2>(name, member);
            } else if (key == "vertex") {
                drag.from_vertex = static_cast<Index>(integer(name, member, 0, 2147483647));
            } else if (key == "to") {
                if (member.is_array() && member.size() == 2) {
                    drag.to_pixel = vector<2>(name, member);
                } else {
                    drag.to_world = vector<3>(name, member);
                }
            } else if (key == "stiffness") {
                drag.stiffness = positive(name, member);
            } else if (key == "radius") {
                drag.radius = number(name, member);
                if (!(*drag.radius >= 0.0) || !std::isfinite(*drag.radius))
                    fail(name, "expected a finite number >= 0");
            } else {
                fail(name, "unknown key (expected from, vertex, to, stiffness, radius)");
            }
        }
        if (drag.from_pixel.has_value() == drag.from_vertex.has_value()) {
            fail("drag", "needs exactly one of \"from\" (pixel) and \"vertex\"");
        }
        if (!drag.to_pixel && !drag.to_world) fail("drag", "needs \"to\"");
        return drag;
    }

    ScriptCut cut(const Json& v) const {
        if (!v.is_object()) fail("cut", "expected an object");
        ScriptCut cut;
        bool point = false;
        bool normal = false;
        for (const auto& [key, member] : v.items()) {
            const std::string name = "cut." + key;
            if (key == "point") {
                cut.point = vector<3>(name, member);
                point = true;
            } else if (key == "normal") {
                cut.normal = vector<3>(name, member);
                normal = true;
            } else if (key == "radius") {
                cut.radius = positive(name, member);
            } else if (key == "from") {
                cut.from_pixel = vector<2>(name, member);
            } else if (key == "to") {
                cut.to_pixel = vector<2>(name, member);
            } else {
                fail(name, "unknown key (expected point, normal, radius, from, to)");
            }
        }
        const bool stroke = cut.from_pixel || cut.to_pixel;
        if (stroke) {
            if (!cut.from_pixel || !cut.to_pixel || point || normal || cut.radius) {
                fail("cut", "a stroke needs \"from\" and \"to\" and no plane keys");
            }
            return cut;
        }
        if (!point || !normal)
            fail("cut", "needs \"point\" and \"normal\" (or \"from\" and \"to\")");
        if (cut.normal[0] == 0.0 && cut.normal[1] == 0.0 && cut.normal[2] == 0.0) {
            fail("cut.normal", "must not be zero");
        }
        return cut;
    }

    PinPlane pin_plane(const Json& v) const {
        if (!v.is_object()) fail("pin_plane", "expected an object");
        PinPlane plane;
        bool axis = false;
        for (const auto& [key, member] : v.items()) {
            const std::string name = "pin_plane." + key;
            if (key == "axis") {
                plane.axis = named<int>(name, member, parse_axis, "x, y, z");
                axis = true;
            } else if (key == "side") {
                const std::string& side = string(name, member);
                if (side != "below" && side != "above")
                    fail(name, "unknown value \"" + side + "\" (expected below, above)");
                plane.above = side == "above";
            } else if (key == "fraction") {
                plane.fraction = number(name, member);
                if (!(*plane.fraction >= 0.0 && *plane.fraction <= 1.0))
                    fail(name, "expected a number in [0, 1]");
            } else if (key == "at") {
                plane.coordinate = number(name, member);
            } else {
                fail(name, "unknown key (expected axis, side, fraction, at)");
            }
        }
        if (!axis) fail("pin_plane", "needs \"axis\"");
        if (plane.fraction.has_value() == plane.coordinate.has_value())
            fail("pin_plane", "needs exactly one of \"fraction\" and \"at\" (world)");
        return plane;
    }

    ScriptRefine refine(const Json& v) const {
        if (!v.is_object()) fail("refine", "expected an object");
        ScriptRefine refine;
        for (const auto& [key, member] : v.items()) {
            const std::string name = "refine." + key;
            if (key == "center") {
                refine.center = vector<3>(name, member);
            } else if (key == "pixel") {
                refine.pixel = vector<2>(name, member);
            } else if (key == "radius") {
                refine.radius = positive(name, member);
                if (!std::isfinite(*refine.radius)) fail(name, "expected a finite number");
            } else if (key == "levels") {
                refine.levels = static_cast<int>(integer(name, member, 1, 8));
            } else {
                fail(name, "unknown key (expected center, pixel, radius, levels)");
            }
        }
        if (refine.center.has_value() == refine.pixel.has_value()) {
            fail("refine", "needs exactly one of \"center\" (world) and \"pixel\"");
        }
        return refine;
    }

    ScriptAction read() const {
        if (!value_.is_object()) {
            EDN_THROW(ErrorCode::Parse,
                      where_ << ": expected an object, got " << json_type_name(value_));
        }
        if (!value_.contains("frame")) EDN_THROW(ErrorCode::Parse, where_ << ": missing \"frame\"");
        ScriptAction action;
        action.frame = integer("frame", value_.at("frame"), 0, 1'000'000'000);
        for (const auto& [key, v] : value_.items()) {
            if (key == "frame") continue;
            if (key == "pin_below") {
                action.pin_below = number(key, v);
            } else if (key == "pin_plane") {
                action.pin_plane = pin_plane(v);
            } else if (key == "ground") {
                action.ground = boolean(key, v);
            } else if (key == "ground_height") {
                action.ground_height = number(key, v);
            } else if (key == "ground_friction") {
                action.ground_friction = number(key, v);
                if (!(*action.ground_friction >= 0.0)) fail(key, "expected a number >= 0");
            } else if (key == "unpin_all") {
                action.unpin_all = boolean(key, v);
            } else if (key == "drag") {
                action.drag = drag(v);
            } else if (key == "release") {
                action.release = boolean(key, v);
            } else if (key == "order") {
                action.order = static_cast<int>(integer(key, v, 1, 3));
            } else if (key == "summation") {
                action.summation = choice<SummationMethod>(key, v);
            } else if (key == "preconditioner") {
                action.preconditioner = choice<Preconditioner>(key, v);
            } else if (key == "material") {
                action.material = choice<Material>(key, v);
            } else if (key == "backend") {
                action.backend = choice<Backend>(key, v);
            } else if (key == "integrator") {
                action.integrator = choice<Integrator>(key, v);
            } else if (key == "preset") {
                action.preset = find_preset(string(key, v));
                if (action.preset == nullptr)
                    fail(key,
                         "unknown preset '" + string(key, v) + "' (" + preset_names(", ") + ")");
            } else if (key == "young") {
                action.young = positive(key, v);
            } else if (key == "poisson") {
                action.poisson = number(key, v);
            } else if (key == "density") {
                action.density = positive(key, v);
            } else if (key == "dt") {
                action.dt = positive(key, v);
            } else if (key == "damping") {
                action.damping = number(key, v);
            } else if (key == "newton_iterations") {
                action.newton_iterations = static_cast<int>(integer(key, v, 1, 1000));
            } else if (key == "gravity") {
                action.gravity = vector<3>(key, v);
            } else if (key == "pause") {
                action.pause = boolean(key, v);
            } else if (key == "step") {
                action.step = boolean(key, v);
            } else if (key == "reset") {
                action.reset = boolean(key, v);
            } else if (key == "color") {
                action.color =
                    named<ColorMode>(key, v, parse_color_mode, "none, von_mises, displacement");
            } else if (key == "wireframe") {
                action.wireframe = boolean(key, v);
            } else if (key == "help") {
                action.help = boolean(key, v);
            } else if (key == "color_range") {
                color_range(v, action);
            } else if (key == "cut") {
                action.cut = cut(v);
            } else if (key == "cut_tool") {
                action.cut_tool = named<CutTool>(key, v, parse_cut_tool, "stroke, plane");
            } else if (key == "stroke") {
                action.stroke = vector<2>(key, v);
            } else if (key == "stroke_release") {
                action.stroke_release = boolean(key, v);
            } else if (key == "refine") {
                action.refine = refine(v);
            } else if (key == "refine_uniform") {
                action.refine_uniform = boolean(key, v);
            } else if (key == "record") {
                // true, false or the folder to record into.
                if (v.is_string()) {
                    action.record = true;
                    action.record_dir = string(key, v);
                } else {
                    action.record = boolean(key, v);
                }
            } else if (key == "undo") {
                action.undo = boolean(key, v);
            } else if (key == "save_scene") {
                action.save_scene = string(key, v);
            } else if (key == "save_state") {
                action.save_state = string(key, v);
            } else if (key == "load_state") {
                action.load_state = string(key, v);
            } else {
                fail(key, "unknown action");
            }
        }
        return action;
    }

private:
    const Json& value_;
    std::string where_;
};

} // namespace

const char* color_mode_name(ColorMode mode) {
    switch (mode) {
    case ColorMode::None:
        return "none";
    case ColorMode::VonMises:
        return "von_mises";
    case ColorMode::Displacement:
        return "displacement";
    }
    return "?";
}

std::optional<ColorMode> parse_color_mode(std::string_view name) {
    for (ColorMode mode : {ColorMode::None, ColorMode::VonMises, ColorMode::Displacement}) {
        if (name == color_mode_name(mode)) return mode;
    }
    return std::nullopt;
}

namespace {

/// The actions of a parsed script; `lines` locates them in the file for messages.
std::vector<ScriptAction> read_actions(const Json& root, const JsonLines& lines,
                                       const std::string& source) {
    EDN_VERIFY(root.is_object() && root.contains("actions"), ErrorCode::Parse,
               source << ": expected an object with an \"actions\" array");
    EDN_VERIFY(root.size() == 1, ErrorCode::Parse,
               source << ": unknown top-level key besides \"actions\"");
    const Json& actions = root.at("actions");
    EDN_VERIFY(actions.is_array(), ErrorCode::Parse,
               source << ": \"actions\" must be an array, got " << json_type_name(actions));
    std::vector<ScriptAction> result;
    for (std::size_t i = 0; i < actions.size(); ++i) {
        const Json& value = actions[i];
        std::ostringstream where;
        where << source << ": action " << i << " (line "
              << lines.at("/actions/" + std::to_string(i)) << ")";
        result.push_back(ActionReader(value, where.str()).read());
    }
    std::stable_sort(
        result.begin(), result.end(),
        [](const ScriptAction& a, const ScriptAction& b) { return a.frame < b.frame; });
    return result;
}

} // namespace

std::vector<ScriptAction> parse_script(const std::string& text, const std::string& source) {
    JsonLines lines;
    const Json root = parse_json(text, source, &lines);
    return read_actions(root, lines, source);
}

std::vector<ScriptAction> load_script(const std::filesystem::path& path) {
    JsonLines lines;
    const Json root = read_json_file(path, &lines);
    return read_actions(root, lines, path.string());
}

} // namespace edn
