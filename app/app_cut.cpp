// Cut mode's stroke (app/cut_stroke.hpp): the mouse side (input.cpp calls stroke_mouse), the
// turn side that cuts (stroke_press, stroke_cut_to, stroke_release; also --script's stroke
// keys) and the drawing; and every cut's two phases (EditSession::start_cut, finish_cut): asked
// for in a turn, prepared off the frame, committed in a later turn (poll_cuts) or, lockstep, at
// once. App members defined here to keep app.cpp the frame loop.
#include "app.hpp"

#include <glm/geometric.hpp>
#include <imgui.h>
#include <string>

namespace edn {

void App::stroke_mouse(const glm::vec2& mouse, bool pressed, bool down) {
    if (pressed) {
        stroking_ = true;
        stroke_from_ = stroke_to_ = mouse;
        post([this, mouse] { stroke_press(mouse); });
        return;
    }
    if (!stroking_) return;
    stroke_to_ = mouse;
    if (!down) {
        stroking_ = false;
        post([this, mouse] { stroke_release(mouse); });
        return;
    }
    draw_stroke();
    // One piece queued at a time: it cuts up to wherever the cursor is when its turn comes, so
    // slow cuts make longer pieces instead of a backlog.
    const glm::vec2 last = stroke_.active() ? stroke_.cut_to() : stroke_from_;
    // Nor while a piece is being prepared: the next one is planned on the mesh it leaves.
    if (gui_.cut_tool == CutTool::Stroke && !stroke_piece_queued_ && !session_.cut_pending() &&
        glm::length(mouse - last) >= kStrokeStepPixels) {
        stroke_piece_queued_ = true;
        post([this] {
            stroke_piece_queued_ = false;
            stroke_cut_to(stroke_to_, kStrokeStepPixels, false);
        });
    }
}

void App::draw_stroke() const {
    ImDrawList* draw = ImGui::GetForegroundDrawList();
    const ImU32 cut_colour = IM_COL32(255, 150, 40, 255);
    auto at = [](const glm::vec2& p) { return ImVec2(p.x, p.y); };
    if (gui_.cut_tool == CutTool::Plane || !stroke_.active()) {
        // The plane tool's blade, drawn over the scene and the panels until release.
        draw->AddLine(at(stroke_from_), at(stroke_to_), cut_colour, 2.0f);
        return;
    }
    // The part already cut, then the part the next piece will cut.
    const std::vector<glm::vec2>& points = stroke_.points();
    for (std::size_t i = 1; i < points.size(); ++i)
        draw->AddLine(at(points[i - 1]), at(points[i]), cut_colour, 3.0f);
    draw->AddLine(at(points.back()), at(stroke_to_), IM_COL32(255, 210, 120, 200), 1.5f);
}

void App::stroke_press(const glm::vec2& pixel) {
    commit_cuts(true); // the last stroke's pieces still pending are its own, each shown
    stroke_cancel();   // a stroke whose release was lost ends first
    stroke_.begin(pixel);
    stroke_to_ = pixel;
    // The stroke's pieces undo as one step.
    if (gui_.cut_tool == CutTool::Stroke) session_.group_changes(true, frame_index_);
}

void App::stroke_cut_to(const glm::vec2& pixel, float min_pixels, bool last) {
    if (!stroke_.active() || gui_.cut_tool != CutTool::Stroke) return;
    const glm::vec2 from = stroke_.cut_to();
    if (glm::length(pixel - from) < min_pixels) return;
    // Also when the piece misses the body the point is taken: the next piece starts there.
    if (cut_stroke_piece(from, pixel, last)) stroke_.add_point(pixel);
}

void App::stroke_release(const glm::vec2& pixel) {
    if (!stroke_.active()) return;
    if (gui_.cut_tool == CutTool::Stroke) {
        stroke_cut_to(pixel, kStrokeEndPixels, true);
    } else if (const std::optional<CutPlane> plane = stroke_plane(stroke_.start(), pixel)) {
        cut(*plane); // a click (shorter than kMinStrokePixels) cuts nothing
    }
    stroke_cancel();
}

void App::stroke_cancel() {
    // The group closes once the stroke's pending pieces are committed.
    if (stroke_.active()) session_.group_changes(false, frame_index_);
    stroke_.end();
}

bool App::cut_stroke_piece(const glm::vec2& from, const glm::vec2& to, bool last) {
    SimDriver* sim = session_.sim();
    if (!sim || !session_.scene()) return true;
    // The piece is placed on the deformed shape, as Simulation::cut measures it.
    const TetMesh& mesh = sim->simulation().mesh();
    const std::vector<double>& x = sim->positions();
    std::vector<Vec3> deformed(mesh.positions.size());
    for (std::size_t v = 0; v < deformed.size(); ++v)
        deformed[v] = {x[3 * v], x[3 * v + 1], x[3 * v + 2]};
    const StrokePiece piece =
        plan_stroke_piece(view_state(), mesh, deformed, from, to, stroke_.last_normal(), last);
    if (!piece.ready) return false;
    if (!piece.blade) return true;
    stroke_.set_last_normal(piece.blade->normal);
    start_cut(*piece.blade, true);
    return true;
}

bool App::cut(const CutPlane& plane) {
    start_cut(plane, false);
    return !session_.cut_pending(); // lockstep: applied (or refused) now
}

void App::start_cut(const CutPlane& plane, bool piece) {
    session_.start_cut(plane, piece);
    // Lockstep runs wait here, so a cut lands in the turn that asked for it, as it always did.
    if (worker_->mode() == SimWorker::Mode::Lockstep) commit_cuts(true);
}

void App::poll_cuts() {
    // Only a flag is read here: the commit itself needs the simulation, hence a turn.
    if (cut_commit_posted_ || !session_.cut_ready()) return;
    cut_commit_posted_ = true;
    post([this] {
        cut_commit_posted_ = false;
        commit_cuts(false);
        // The mouse held still while the piece was prepared: cut on to where it is now.
        if (stroking_ && !session_.cut_pending() && gui_.cut_tool == CutTool::Stroke)
            stroke_cut_to(stroke_to_, kStrokeStepPixels, false);
    });
}

void App::commit_cuts(bool wait) {
    while (const std::optional<CutCommit> done = session_.finish_cut(frame_index_, wait)) {
        const EditResult& result = done->result;
        // A piece beside the body (the stroke's ends, a gap) cuts nothing: not an error.
        if (done->piece && !result.record && result.error == ErrorCode::Usage) continue;
        edited(result, done->piece);
        if (done->piece && result.record)
            gui_.cut_message = "cut stroke: " + gui_.cut_message.substr(5);
    }
}

} // namespace edn
