#include "edit_session.hpp"

#include "core/device.hpp"
#include "core/error.hpp"

#include <atomic>
#include <cstdio>
#include <glm/geometric.hpp>
#include <new>
#include <system_error>
#include <thread>
#include <utility>

namespace edn {

std::optional<CutPlane> stroke_plane(const ViewState& view, const glm::vec2& from,
                                     const glm::vec2& to,
                                     const std::optional<glm::vec3>& surface_point) {
    if (glm::length(to - from) < kMinStrokePixels) return std::nullopt;
    const glm::vec2 middle = 0.5f * (from + to);
    // The blade sits at the depth of the surface under the stroke's middle (else the orbit
    // target): there the stroke's world length is what the user sees.
    const float depth = view.depth(surface_point ? *surface_point : view.target);
    const std::optional<glm::vec3> a = view.at_depth(from, depth);
    const std::optional<glm::vec3> b = view.at_depth(to, depth);
    const std::optional<glm::vec3> m = view.at_depth(middle, depth);
    if (!a || !b || !m) return std::nullopt;
    // The plane holds the stroke and the view ray through its middle, so it holds the eye and
    // both end rays: the stroke swept along the view.
    const glm::vec3 normal = glm::cross(*b - *a, view.ray(middle).direction);
    if (!(glm::length(normal) > 0.0f)) return std::nullopt;
    CutPlane plane;
    plane.point = {m->x, m->y, m->z};
    plane.normal = {normal.x, normal.y, normal.z};
    plane.radius = 0.5 * static_cast<double>(glm::length(*b - *a));
    return plane;
}

/// A cut being prepared on its own thread. The thread writes everything but `thread` and
/// `request`, then sets `done`; the UI thread reads them only after joining.
struct EditSession::CutJob {
    CutRequest request;
    std::thread thread;
    std::atomic<bool> done{false};
    PreparedChange prepared;
    std::optional<Scene> scene; // of the prepared mesh
    std::optional<Error> error;

    /// The preparation: the engine's (Simulation::prepare_cut on `basis`) and the new scene's
    /// boundary, which the UI thread would otherwise build at the commit.
    void prepare(const ChangeBasis& basis, const std::filesystem::path& path) {
        try {
            prepared = Simulation::prepare_cut(basis, request.plane);
            scene = make_scene(path, prepared.mesh());
        } catch (const Error& e) {
            error = e;
        } catch (const std::bad_alloc&) {
            error = Error(ErrorCode::OutOfMemory, "cut: out of memory preparing the cut");
        } catch (const std::exception& e) {
            error = Error(ErrorCode::Internal, std::string("cut: ") + e.what());
        }
        done.store(true, std::memory_order_release);
    }
};

EditSession::EditSession() = default;

EditSession::~EditSession() {
    drop_cuts();
}

void EditSession::load(std::unique_ptr<Scene> scene, std::unique_ptr<Simulation> simulation) {
    drop_cuts(); // prepared on the scene that goes
    if (sim_) {
        const std::vector<TopologyChangeRecord>& changes = sim_->simulation().topology_changes();
        earlier_changes_.insert(earlier_changes_.end(), changes.begin(), changes.end());
        sim_.reset();
    }
    scene_ = std::move(scene);
    if (simulation) attach(std::move(simulation));
}

void EditSession::attach(std::unique_ptr<Simulation> simulation) {
    EDN_ASSERT(scene_ && !sim_, "attach: needs a scene without a simulation");
    sim_ = std::make_unique<SimDriver>(std::move(simulation));
    TopologyChangeOptions options;
    options.undo_depth = kMaxUndo;
    options.reject_no_op = true; // a cut or brush that changes nothing is reported, not applied
    options.max_cells = kMaxRefineCells;
    options.mesh_name = scene_->path.filename().string();
    sim_->set_topology_options(std::move(options));
}

namespace {

/// The panel's line for an applied cut.
std::string cut_message(const TopologyChangeRecord& record, Index components) {
    char times[128];
    std::snprintf(times, sizeof(times), " (prepared in %.1f ms, committed in %.2f ms)",
                  record.prepare_ms, record.commit_ms);
    return "cut: " + std::to_string(record.cut_faces) + " faces, " +
           std::to_string(record.duplicated_vertices) + " vertices duplicated, " +
           std::to_string(components) + " components" + times;
}

} // namespace

EditResult EditSession::cut(const CutPlane& plane, std::int64_t frame) {
    if (!sim_ || !scene_) return {std::nullopt, "cut: no simulation to cut", std::nullopt};
    settle_cuts(frame);
    start_cut(plane, false);
    std::optional<CutCommit> done = finish_cut(frame, true);
    return done ? done->result : EditResult{std::nullopt, "cut: nothing cut", std::nullopt};
}

void EditSession::start_cut(const CutPlane& plane, bool piece) {
    if (!sim_ || !scene_) return;
    const CutRequest request{plane, piece};
    if (cut_pending())
        waiting_.push_back(request);
    else
        launch(request);
}

void EditSession::launch(const CutRequest& request) {
    auto job = std::make_unique<CutJob>();
    job->request = request;
    // Taken in this turn: the positions now; the backend the basis holds stays alive for the
    // job even when the simulation changes meanwhile.
    ChangeBasis basis = sim_->change_basis();
    try {
        job->thread = std::thread([job = job.get(), basis = std::move(basis), path = scene_->path] {
            job->prepare(basis, path);
        });
    } catch (const std::system_error&) {
        job->prepare(sim_->change_basis(), scene_->path); // no thread to be had: here, now
    }
    job_ = std::move(job);
}

bool EditSession::cut_ready() const {
    return job_ && job_->done.load(std::memory_order_acquire);
}

std::optional<CutCommit> EditSession::finish_cut(std::int64_t frame, bool wait) {
    if (!job_) next_cut();
    while (job_) {
        if (!wait && !cut_ready()) return std::nullopt;
        if (job_->thread.joinable()) job_->thread.join();
        std::unique_ptr<CutJob> job = std::move(job_);
        CutCommit out;
        out.piece = job->request.piece;
        if (job->error) {
            out.result = {std::nullopt, job->error->what(), job->error->code()};
        } else if (!sim_ || !scene_) {
            out.result = {std::nullopt, "cut: no simulation to cut", std::nullopt};
        } else if (!sim_->simulation().is_current(job->prepared)) {
            // The simulation was rebuilt meanwhile (a settings change): again on the new one.
            launch(job->request);
            continue;
        } else {
            try {
                const TopologyChangeRecord record = sim_->commit(std::move(job->prepared), frame);
                scene_ = std::make_unique<Scene>(std::move(*job->scene));
                out.result = {record, cut_message(record, sim_->simulation().components()),
                              std::nullopt};
                retire(std::move(job));
            } catch (const Error& error) {
                out.result = {std::nullopt, error.what(), error.code()}; // the current scene stays
            }
        }
        next_cut();
        return out;
    }
    return std::nullopt;
}

void EditSession::next_cut() {
    if (job_) return;
    if (!waiting_.empty()) {
        const CutRequest request = waiting_.front();
        waiting_.pop_front();
        if (sim_ && scene_) {
            launch(request);
            return;
        }
    }
    if (close_group_pending_ && waiting_.empty()) {
        close_group_pending_ = false;
        if (sim_) sim_->group_changes(false);
    }
}

void EditSession::settle_cuts(std::int64_t frame) {
    while (cut_pending()) finish_cut(frame, true);
}

void EditSession::retire(std::unique_ptr<CutJob> job) {
    if (retiring_.joinable()) retiring_.join();
    const bool cuda = sim_ && sim_->simulation().settings().backend == Backend::Cuda;
    try {
        retiring_ = std::thread([job = std::move(job), cuda]() mutable {
            job.reset();
            if (cuda) finish_device_work(); // the frees queued on this thread's stream
        });
    } catch (const std::system_error&) {
        // No thread to be had: the job was freed here.
    }
}

void EditSession::drop_cuts() {
    if (job_ && job_->thread.joinable()) job_->thread.join();
    if (retiring_.joinable()) retiring_.join();
    job_.reset();
    waiting_.clear();
    close_group_pending_ = false;
}

void EditSession::group_changes(bool open, std::int64_t frame) {
    if (!sim_) return;
    if (open) {
        // Pieces of an earlier stroke still pending belong to its group, not this one.
        settle_cuts(frame);
        close_group_pending_ = false;
        sim_->group_changes(true);
    } else if (cut_pending()) {
        close_group_pending_ = true;
    } else {
        sim_->group_changes(false);
    }
}

EditResult EditSession::refine(const std::optional<Vec3>& center, double radius, int levels,
                               std::int64_t frame) {
    if (!sim_ || !scene_) return {std::nullopt, "refine: no simulation to refine", std::nullopt};
    settle_cuts(frame); // the cuts asked for before it come first
    try {
        const TopologyChangeRecord record =
            center ? sim_->refine_sphere(*center, radius, levels, frame)
                   : sim_->refine_uniform(frame);
        rebuild_scene();
        char text[256];
        std::snprintf(text, sizeof(text),
                      "refine%s: %d -> %d cells, worst dihedral %.1f deg, refine %.2f ms, "
                      "re-pattern %.2f ms (pattern %.2f ms)",
                      center ? "" : " 1->8", record.cells_before, record.cells_after,
                      record.min_dihedral_deg, record.refine_ms, record.repattern_ms,
                      record.pattern_build_ms);
        return {record, text, std::nullopt};
    } catch (const Error& error) {
        return {std::nullopt, error.what(), error.code()}; // the current scene stays
    }
}

EditResult EditSession::undo(std::int64_t frame) {
    settle_cuts(frame); // undo takes back the last cut asked for, also when still pending
    if (!sim_ || sim_->simulation().undo_depth() == 0)
        return {std::nullopt, "undo: no cut to undo", std::nullopt};
    try {
        const TopologyChangeRecord record = sim_->undo(frame);
        rebuild_scene();
        return {record,
                "undo: back to " + std::to_string(scene_->mesh.num_vertices()) + " vertices, " +
                    std::to_string(scene_->mesh.num_cells()) + " cells, " +
                    std::to_string(sim_->simulation().components()) + " components",
                std::nullopt};
    } catch (const Error& error) {
        return {std::nullopt, error.what(), error.code()};
    }
}

std::vector<TopologyChangeRecord> EditSession::topology_changes() const {
    std::vector<TopologyChangeRecord> all = earlier_changes_;
    if (sim_) {
        const std::vector<TopologyChangeRecord>& changes = sim_->simulation().topology_changes();
        all.insert(all.end(), changes.begin(), changes.end());
    }
    return all;
}

void EditSession::rebuild_scene() {
    scene_ = std::make_unique<Scene>(make_scene(scene_->path, sim_->simulation().mesh()));
}

} // namespace edn
