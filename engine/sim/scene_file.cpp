#include "sim/scene_file.hpp"

#include "core/error.hpp"
#include "sim/drag_region.hpp"
#include "sim/json_fields.hpp"
#include "sim/settings_json.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace edn {
namespace {

constexpr double kHuge = std::numeric_limits<double>::max();

void read_mesh(const JsonFieldReader& r, const JsonField& field, const std::filesystem::path& path,
               SceneFile& scene) {
    JsonField file = field;
    if (field->is_object()) {
        r.expect_object(field, {"path", "quality", "max_volume", "time_limit"});
        if (!field->contains("path")) r.fail(field, "needs \"path\"");
        file = r.member(field, "path");
        if (field->contains("quality")) {
            const JsonField q = r.member(field, "quality");
            scene.meshing.quality = r.number_in(q, 0.0, 1000.0);
            if (scene.meshing.quality > 0 && scene.meshing.quality < 1.0)
                r.fail(q, "must be 0 (off) or >= 1");
        }
        if (field->contains("max_volume"))
            scene.meshing.max_volume = r.number_in(r.member(field, "max_volume"), 0.0, kHuge);
        if (field->contains("time_limit"))
            scene.meshing.time_limit_s = r.number_in(r.member(field, "time_limit"), 0.0, 1e9);
    }
    const std::string& text = r.string(file);
    if (text.empty()) r.fail(file, "expected a mesh file name");
    const std::filesystem::path mesh(text);
    scene.mesh = mesh.is_absolute() ? mesh : (path.parent_path() / mesh).lexically_normal();
}

PinPlane read_plane(const JsonFieldReader& r, const JsonField& field) {
    r.expect_object(field, {"axis", "side", "fraction", "at"});
    PinPlane plane;
    if (!field->contains("axis")) r.fail(field, "needs \"axis\" (x, y, z)");
    const JsonField axis = r.member(field, "axis");
    const std::optional<int> parsed = parse_axis(r.string(axis));
    if (!parsed) r.fail(axis, "unknown value \"" + r.string(axis) + "\" (expected x, y, z)");
    plane.axis = *parsed;
    if (field->contains("side")) {
        const JsonField side = r.member(field, "side");
        const std::string& text = r.string(side);
        if (text != "below" && text != "above")
            r.fail(side, "unknown value \"" + text + "\" (expected below, above)");
        plane.above = text == "above";
    }
    if (field->contains("fraction"))
        plane.fraction = r.number_in(r.member(field, "fraction"), 0.0, 1.0);
    if (field->contains("at")) plane.coordinate = r.number(r.member(field, "at"));
    if (plane.fraction.has_value() == plane.coordinate.has_value())
        r.fail(field, "needs exactly one of \"fraction\" and \"at\" (world)");
    return plane;
}

ScenePin read_pin(const JsonFieldReader& r, const JsonField& field) {
    r.expect_object(field, {"plane", "box", "vertices"});
    if (field->size() != 1) r.fail(field, "needs exactly one of \"plane\", \"box\", \"vertices\"");
    ScenePin pin;
    pin.where = r.where(field);
    if (field->contains("plane")) pin.plane = read_plane(r, r.member(field, "plane"));
    if (field->contains("box")) {
        const JsonField box = r.member(field, "box");
        r.expect_object(box, {"min", "max"});
        if (!box->contains("min") || !box->contains("max"))
            r.fail(box, "needs \"min\" and \"max\"");
        PinBox b{r.vec3(r.member(box, "min")), r.vec3(r.member(box, "max"))};
        for (int d = 0; d < 3; ++d)
            if (b.lower[d] > b.upper[d]) r.fail(box, "\"min\" must not exceed \"max\"");
        pin.box = b;
    }
    if (field->contains("vertices")) {
        const JsonField list = r.member(field, "vertices");
        r.expect_array(list);
        for (std::size_t i = 0; i < list->size(); ++i)
            pin.vertices.push_back(static_cast<Index>(
                r.integer(r.element(list, i), 1, std::numeric_limits<Index>::max()) - 1));
    }
    return pin;
}

SceneAction read_action(const JsonFieldReader& r, const JsonField& field) {
    r.expect_object(field, {"frame", "drag", "release", "cut", "refine", "refine_uniform"});
    if (!field->contains("frame")) r.fail(field, "needs \"frame\"");
    SceneAction action;
    action.where = r.where(field);
    action.frame = r.integer(r.member(field, "frame"), 0, 100'000'000);
    if (field->contains("drag")) {
        const JsonField f = r.member(field, "drag");
        r.expect_object(f, {"vertex", "to", "stiffness", "radius"});
        if (!f->contains("vertex") || !f->contains("to"))
            r.fail(f, "needs \"vertex\" (1-based) and \"to\" (world)");
        SceneDrag drag;
        drag.vertex = static_cast<Index>(
            r.integer(r.member(f, "vertex"), 1, std::numeric_limits<Index>::max()) - 1);
        drag.target = r.vec3(r.member(f, "to"));
        if (f->contains("stiffness"))
            drag.stiffness = r.number_in(r.member(f, "stiffness"), 0.0, kHuge);
        if (f->contains("radius")) drag.radius = r.number_in(r.member(f, "radius"), 0.0, kHuge);
        action.drag = drag;
    }
    if (field->contains("release")) action.release = r.boolean(r.member(field, "release"));
    if (field->contains("cut")) {
        const JsonField f = r.member(field, "cut");
        r.expect_object(f, {"point", "normal", "radius"});
        if (!f->contains("point") || !f->contains("normal"))
            r.fail(f, "needs \"point\" and \"normal\" (world)");
        CutPlane plane;
        plane.point = r.vec3(r.member(f, "point"));
        plane.normal = r.vec3(r.member(f, "normal"));
        if (plane.normal[0] == 0 && plane.normal[1] == 0 && plane.normal[2] == 0)
            r.fail(r.member(f, "normal"), "must not be zero");
        if (f->contains("radius")) {
            const JsonField radius = r.member(f, "radius");
            plane.radius = r.number_in(radius, 0.0, kHuge);
            if (!(plane.radius > 0)) r.fail(radius, "expected a number > 0");
        }
        action.cut = plane;
    }
    if (field->contains("refine")) {
        const JsonField f = r.member(field, "refine");
        r.expect_object(f, {"center", "radius", "levels"});
        if (!f->contains("center") || !f->contains("radius"))
            r.fail(f, "needs \"center\" (world) and \"radius\"");
        SceneRefine refine;
        refine.center = r.vec3(r.member(f, "center"));
        const JsonField radius = r.member(f, "radius");
        refine.radius = r.number_in(radius, 0.0, kHuge);
        if (!(refine.radius > 0)) r.fail(radius, "expected a number > 0");
        if (f->contains("levels"))
            refine.levels = static_cast<int>(r.integer(r.member(f, "levels"), 1, 8));
        action.refine = refine;
    }
    if (field->contains("refine_uniform"))
        action.refine_uniform = r.boolean(r.member(field, "refine_uniform"));
    return action;
}

SceneFile read_scene(const Json& root, const JsonLines& lines, const std::filesystem::path& path,
                     const SimulationSettings& defaults) {
    const JsonFieldReader r(path.string(), &lines);
    const JsonField top = r.root(root);
    r.expect_object(top, {"version", "mesh", "order", "material", "time", "solver", "ground",
                          "pins", "frames", "actions"});
    if (!root.contains("version"))
        r.fail(top, "needs \"version\" (" + std::to_string(kSceneVersion) + ")");
    const JsonField version = r.member(top, "version");
    const std::int64_t v = r.integer(version, 1, std::numeric_limits<int>::max());
    if (v != kSceneVersion)
        r.fail(version, "version " + std::to_string(v) + " is not one this elastodyn reads (" +
                            std::to_string(kSceneVersion) + ")");
    SceneFile scene;
    scene.path = path;
    scene.settings = defaults;
    if (!root.contains("mesh")) r.fail(top, "needs \"mesh\" (a path or {\"path\": ...})");
    read_mesh(r, r.member(top, "mesh"), path, scene);
    read_settings_json(r, top, scene.settings);
    if (root.contains("frames")) scene.frames = r.integer(r.member(top, "frames"), 0, 100'000'000);
    if (root.contains("pins")) {
        const JsonField pins = r.member(top, "pins");
        r.expect_array(pins);
        for (std::size_t i = 0; i < pins->size(); ++i)
            scene.pins.push_back(read_pin(r, r.element(pins, i)));
    }
    if (root.contains("actions")) {
        const JsonField actions = r.member(top, "actions");
        r.expect_array(actions);
        for (std::size_t i = 0; i < actions->size(); ++i)
            scene.actions.push_back(read_action(r, r.element(actions, i)));
        std::stable_sort(
            scene.actions.begin(), scene.actions.end(),
            [](const SceneAction& a, const SceneAction& b) { return a.frame < b.frame; });
    }
    return scene;
}

Json vec3_json(const Vec3& v) {
    return Json::array({v[0], v[1], v[2]});
}

/// `mesh` as written in a scene in `directory`: relative when it can be.
std::string relative_mesh_path(const std::filesystem::path& mesh,
                               const std::filesystem::path& directory) {
    std::error_code ec;
    const std::filesystem::path from = std::filesystem::absolute(directory, ec);
    const std::filesystem::path to = std::filesystem::absolute(mesh, ec);
    const std::filesystem::path relative =
        to.lexically_normal().lexically_relative(from.lexically_normal());
    return (relative.empty() ? to : relative).generic_string();
}

} // namespace

SceneFile parse_scene(std::string_view text, const std::filesystem::path& path,
                      const SimulationSettings& defaults) {
    JsonLines lines;
    const Json root = parse_json(text, path.string(), &lines);
    return read_scene(root, lines, path, defaults);
}

SceneFile load_scene_file(const std::filesystem::path& path, const SimulationSettings& defaults) {
    JsonLines lines;
    const Json root = read_json_file(path, &lines);
    return read_scene(root, lines, path, defaults);
}

Json scene_to_json(const SceneFile& scene, const std::filesystem::path& directory,
                   const SimulationSettings* defaults) {
    Json root = Json::object();
    root["version"] = kSceneVersion;
    Json mesh = Json::object();
    mesh["path"] = relative_mesh_path(scene.mesh, directory);
    mesh["quality"] = scene.meshing.quality;
    mesh["max_volume"] = scene.meshing.max_volume;
    mesh["time_limit"] = scene.meshing.time_limit_s;
    root["mesh"] = mesh;
    write_settings_json(scene.settings, defaults, root);
    if (scene.frames) root["frames"] = *scene.frames;
    if (!scene.pins.empty()) {
        Json pins = Json::array();
        for (const ScenePin& pin : scene.pins) {
            Json entry = Json::object();
            if (pin.plane) {
                Json plane = Json::object();
                plane["axis"] = axis_name(pin.plane->axis);
                plane["side"] = pin.plane->above ? "above" : "below";
                if (pin.plane->fraction) plane["fraction"] = *pin.plane->fraction;
                if (pin.plane->coordinate) plane["at"] = *pin.plane->coordinate;
                entry["plane"] = plane;
            } else if (pin.box) {
                entry["box"] = JsonObject()
                                   .add("min", vec3_json(pin.box->lower))
                                   .add("max", vec3_json(pin.box->upper))
                                   .json();
            } else {
                Json list = Json::array();
                for (Index v : pin.vertices) list.push_back(static_cast<std::int64_t>(v) + 1);
                entry["vertices"] = list;
            }
            pins.push_back(entry);
        }
        root["pins"] = pins;
    }
    if (!scene.actions.empty()) {
        Json actions = Json::array();
        for (const SceneAction& a : scene.actions) {
            Json entry = Json::object();
            entry["frame"] = a.frame;
            if (a.drag) {
                entry["drag"] = JsonObject()
                                    .add("vertex", static_cast<std::int64_t>(a.drag->vertex) + 1)
                                    .add("to", vec3_json(a.drag->target))
                                    .add("stiffness", a.drag->stiffness)
                                    .add("radius", a.drag->radius)
                                    .json();
            }
            if (a.release) entry["release"] = true;
            if (a.cut) {
                Json cut = JsonObject()
                               .add("point", vec3_json(a.cut->point))
                               .add("normal", vec3_json(a.cut->normal))
                               .json();
                if (std::isfinite(a.cut->radius)) cut["radius"] = a.cut->radius;
                entry["cut"] = cut;
            }
            if (a.refine) {
                Json refine = JsonObject()
                                  .add("center", vec3_json(a.refine->center))
                                  .add("radius", a.refine->radius)
                                  .json();
                if (a.refine->levels) refine["levels"] = *a.refine->levels;
                entry["refine"] = refine;
            }
            if (a.refine_uniform) entry["refine_uniform"] = true;
            actions.push_back(entry);
        }
        root["actions"] = actions;
    }
    return root;
}

void write_scene_file(const std::filesystem::path& path, const SceneFile& scene,
                      const SimulationSettings* defaults) {
    const std::filesystem::path directory =
        path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
    write_json_file(path, scene_to_json(scene, directory, defaults));
}

std::vector<std::uint8_t> scene_vertex_pins(const SceneFile& scene, const TetMesh& mesh) {
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(mesh.num_vertices()), 0);
    for (const ScenePin& pin : scene.pins) {
        std::vector<Index> vertices = pin.vertices;
        if (pin.plane) vertices = pin_plane_vertices(mesh, *pin.plane);
        if (pin.box) vertices = pin_box_vertices(mesh, *pin.box);
        for (Index v : vertices) {
            EDN_VERIFY(v >= 0 && v < mesh.num_vertices(), ErrorCode::Parse,
                       pin.where << ".vertices: vertex " << static_cast<std::int64_t>(v) + 1
                                 << " is not in 1.." << mesh.num_vertices());
            mask[static_cast<std::size_t>(v)] = 1;
        }
    }
    return mask;
}

void apply_scene_action(Simulation& simulation, const SceneAction& action) {
    if (action.release) simulation.set_drag(std::nullopt);
    if (action.drag) {
        const SceneDrag& d = *action.drag;
        const Index n = simulation.mesh().num_vertices();
        EDN_VERIFY(d.vertex >= 0 && d.vertex < n, ErrorCode::Parse,
                   action.where << ".drag.vertex: vertex "
                                << static_cast<std::int64_t>(d.vertex) + 1 << " is not in 1.."
                                << n);
        DragSpring drag = make_drag(simulation, {d.vertex, d.vertex, d.vertex}, {1.0, 0.0, 0.0},
                                    d.radius, d.stiffness);
        drag.target = d.target;
        simulation.set_drag(std::move(drag));
    }
    if (action.cut) simulation.cut(*action.cut);
    if (action.refine) {
        if (action.refine->levels)
            simulation.refine_sphere(action.refine->center, action.refine->radius,
                                     *action.refine->levels);
        else
            simulation.refine_sphere(action.refine->center, action.refine->radius);
    }
    if (action.refine_uniform) simulation.refine_uniform();
}

} // namespace edn
