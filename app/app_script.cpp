// App::apply_script: the actions of --script, applied through the same paths as the mouse and
// the panels (ScriptRunner hands them out by frame; app/script_runner.hpp).
#include "app.hpp"
#include "core/error.hpp"
#include "script_runner.hpp"

#include <cstdio>
#include <string>

namespace edn {

void App::apply_script() {
    while (const ScriptAction* next = script_.next(frame_index_)) {
        const ScriptAction& action = *next;
        SimDriver* sim = session_.sim();
        if (const std::optional<SimulationSettings> settings =
                scripted_settings(action, sim ? sim->simulation().settings() : gui_.settings))
            rebuild_simulation(*settings);
        sim = session_.sim(); // a rebuild may have created it
        if (action.unpin_all && sim) sim->clear_pins();
        if (action.pin_below && sim) sim->pin_below(*action.pin_below);
        if (action.pin_plane) pin_plane(*action.pin_plane);
        if (action.ground || action.ground_height || action.ground_friction) {
            if (action.ground) gui_.ground = *action.ground;
            if (action.ground_height) gui_.ground_height = *action.ground_height;
            if (action.ground_friction) gui_.ground_friction = *action.ground_friction;
            apply_ground();
        }
        if (action.release) end_drag();
        if (action.drag) {
            const ScriptDrag& drag = *action.drag;
            if (drag.stiffness) gui_.drag_stiffness = static_cast<float>(*drag.stiffness);
            const double radius = drag.radius ? *drag.radius : drag_radius();
            if (drag.from_vertex) {
                EDN_VERIFY(sim, ErrorCode::Usage,
                           "drag: vertex " << *drag.from_vertex << " out of range");
                drag_.begin_vertex(*sim, *drag.from_vertex, view_state(), gui_.drag_stiffness,
                                   radius);
            } else {
                begin_drag_at(glm::vec2((*drag.from_pixel)[0], (*drag.from_pixel)[1]), radius);
                if (!drag_.active()) {
                    report_error("script: drag from pixel (" +
                                 std::to_string((*drag.from_pixel)[0]) + ", " +
                                 std::to_string((*drag.from_pixel)[1]) + ") misses the surface");
                }
            }
            if (drag_.active() && sim && drag.to_world) {
                drag_.move_to(
                    *sim, glm::vec3((*drag.to_world)[0], (*drag.to_world)[1], (*drag.to_world)[2]));
            } else if (drag_.active() && sim && drag.to_pixel) {
                drag_.move(*sim, view_state(), glm::vec2((*drag.to_pixel)[0], (*drag.to_pixel)[1]));
            }
        }
        if (action.pause) gui_.paused = *action.pause;
        if (action.step) step_once_ = true;
        if (action.reset && sim) sim->reset();
        if (action.color) gui_.color_mode = *action.color;
        if (action.wireframe) settings_.show_wireframe = *action.wireframe;
        if (action.help) gui_.show_help = *action.help;
        if (action.color_range_auto) gui_.color_range_settings.manual = false;
        if (action.color_range) {
            gui_.color_range_settings.manual = true;
            gui_.color_range_settings.manual_low = static_cast<float>(action.color_range->low);
            gui_.color_range_settings.manual_high = static_cast<float>(action.color_range->high);
        }
        if (action.cut && action.cut->from_pixel) {
            const glm::vec2 from((*action.cut->from_pixel)[0], (*action.cut->from_pixel)[1]);
            const glm::vec2 to((*action.cut->to_pixel)[0], (*action.cut->to_pixel)[1]);
            if (const std::optional<CutPlane> plane = stroke_plane(from, to)) {
                cut(*plane);
            } else {
                report_error("script: cut stroke too short or behind the camera");
            }
        } else if (action.cut) {
            CutPlane plane;
            plane.point = action.cut->point;
            plane.normal = action.cut->normal;
            if (action.cut->radius) plane.radius = *action.cut->radius;
            cut(plane);
        }
        if (action.cut_tool) gui_.cut_tool = *action.cut_tool;
        if (action.stroke) {
            // As the mouse in cut mode: press at the first pixel, then each move cuts.
            const glm::vec2 pixel((*action.stroke)[0], (*action.stroke)[1]);
            if (stroke_.active()) {
                stroke_to_ = pixel;
                stroke_cut_to(pixel, kStrokeStepPixels, false);
            } else {
                stroke_press(pixel);
            }
        }
        if (action.stroke_release) stroke_release(stroke_to_);
        if (action.refine) {
            const ScriptRefine& brush = *action.refine;
            const double radius = brush.radius ? *brush.radius : default_refine_radius();
            const int levels = brush.levels ? *brush.levels : gui_.refine_levels;
            if (brush.pixel) {
                const glm::vec2 pixel((*brush.pixel)[0], (*brush.pixel)[1]);
                if (const std::optional<Vec3> point = pick_world(pixel)) {
                    refine(point, radius, levels);
                } else {
                    char text[96];
                    std::snprintf(text, sizeof(text),
                                  "script: refine at pixel (%g, %g) misses the surface",
                                  static_cast<double>(pixel.x), static_cast<double>(pixel.y));
                    report_error(text);
                }
            } else {
                refine(brush.center, radius, levels);
            }
        }
        if (action.refine_uniform) refine(std::nullopt, 0.0, 1);
        if (action.undo) undo();
        if (action.record && *action.record) {
            RecordOptions options = record_options();
            if (action.record_dir) options.dir = *action.record_dir;
            start_recording(options);
        }
        if (action.record && !*action.record) stop_recording();
        if (action.save_scene) save_scene_file(*action.save_scene);
        if (action.save_state) save_state_file(*action.save_state);
        if (action.load_state) load_state_file(*action.load_state);
    }
}

} // namespace edn
