// Simulation's topology changes: cut, refine (brush and uniform), undo and settings/order
// changes. Each builds the new backend completely before anything of the current one changes,
// so a failure leaves the simulation as it was (strong guarantee).
#include "sim/topology_change.hpp"

#include "core/device.hpp"
#include "core/error.hpp"
#include "mesh/cut.hpp"
#include "mesh/refine.hpp"
#include "mesh/split_cut.hpp"
#include "sim/prepared_change.hpp"
#include "sim/simulation.hpp"
#include "sim/simulation_backend.hpp"
#include "sim/state_transfer.hpp"

#include <chrono>
#include <sstream>
#include <utility>

namespace edn {
namespace {

/// The current positions of the vertex nodes (the first #V nodes of `positions`).
std::vector<Vec3> vertex_positions(const TetMesh& mesh, const std::vector<double>& positions) {
    std::vector<Vec3> deformed(mesh.positions.size());
    for (std::size_t v = 0; v < deformed.size(); ++v)
        for (std::size_t d = 0; d < 3; ++d) deformed[v][d] = positions[3 * v + d];
    return deformed;
}

/// The node state of `backend` (positions fetched from the device for the CUDA backend).
NodeState node_state(const SimulationBackend& backend) {
    return {backend.positions(), backend.velocities(), backend.fixed};
}

/// Sets the carried state and pins on a freshly built backend.
void set_node_state(SimulationBackend& backend, const NodeState& state) {
    [[maybe_unused]] const std::size_t n = static_cast<std::size_t>(backend.layout.num_nodes());
    EDN_ASSERT(state.positions.size() == 3 * n && state.velocities.size() == 3 * n &&
                   state.pinned.size() == n,
               "carried state does not match the new node layout");
    backend.set_state(state.positions, state.velocities);
    backend.fixed = state.pinned;
    backend.pins_changed();
}

/// "cut: NAME" style message prefix for `what`.
std::string message_prefix(const TopologyChangeOptions& options, const char* what) {
    std::string prefix = what;
    if (!options.mesh_name.empty()) prefix += ": " + options.mesh_name;
    return prefix;
}

} // namespace

const char* topology_change_kind_name(TopologyChangeKind kind) {
    switch (kind) {
    case TopologyChangeKind::Cut:
        return "cut";
    case TopologyChangeKind::RefineSphere:
        return "sphere";
    case TopologyChangeKind::RefineUniform:
        return "uniform";
    case TopologyChangeKind::Undo:
        return "undo";
    }
    return "unknown";
}

const char* cut_mode_name(CutMode mode) {
    return mode == CutMode::Faces ? "faces" : "split";
}

CutMode parse_cut_mode(const std::string& name, const std::string& what) {
    if (name == "split") return CutMode::Split;
    EDN_VERIFY(name == "faces", ErrorCode::Usage,
               what << ": cut mode must be 'split' or 'faces', got '" << name << "'");
    return CutMode::Faces;
}

ChangeBasis::ChangeBasis() = default;
ChangeBasis::~ChangeBasis() = default;
ChangeBasis::ChangeBasis(const ChangeBasis&) = default;
ChangeBasis& ChangeBasis::operator=(const ChangeBasis&) = default;
ChangeBasis::ChangeBasis(ChangeBasis&&) noexcept = default;
ChangeBasis& ChangeBasis::operator=(ChangeBasis&&) noexcept = default;

const TetMesh& ChangeBasis::mesh() const {
    EDN_ASSERT(backend_, "ChangeBasis::mesh: empty basis");
    return backend_->mesh;
}

PreparedChange::PreparedChange() = default;
PreparedChange::~PreparedChange() = default;
PreparedChange::PreparedChange(PreparedChange&&) noexcept = default;
PreparedChange& PreparedChange::operator=(PreparedChange&&) noexcept = default;

const TetMesh& PreparedChange::mesh() const {
    EDN_ASSERT(next_, "PreparedChange::mesh: nothing prepared");
    return next_->mesh;
}

std::shared_ptr<SimulationBackend> Simulation::install(std::shared_ptr<SimulationBackend> next,
                                                       TopologyChangeRecord record,
                                                       std::vector<double> positions,
                                                       std::vector<double> velocities) {
    // Allocation only from here on (the log's slot and the history entry), then the swap, which
    // cannot throw.
    changes_.reserve(changes_.size() + 1);
    // Inside a group only its first change snapshots: undo goes back before the whole group.
    const bool snapshot = topology_options_.undo_depth > 0 && !(group_open_ && group_snapshot_);
    if (snapshot) {
        history_.push_back(Snapshot{TetMesh{}, backend_->settings, std::move(positions),
                                    std::move(velocities), backend_->fixed});
        if (history_.size() > topology_options_.undo_depth) history_.pop_front();
        group_snapshot_ = group_open_;
    }
    std::shared_ptr<SimulationBackend> previous = std::exchange(backend_, std::move(next));
    if (snapshot) {
        // A basis still held (a preparation on this mesh, stale now) reads it: copy, not move.
        if (previous.use_count() > 1)
            history_.back().mesh = previous->mesh;
        else
            history_.back().mesh = std::move(previous->mesh);
    }
    changes_.push_back(record);
    return previous;
}

ChangeBasis Simulation::change_basis() const {
    ChangeBasis basis;
    basis.backend_ = backend_;
    basis.settings_ = backend_->settings;
    basis.options_ = topology_options_;
    basis.positions_ = backend_->positions();
    basis.pinned_ = backend_->fixed;
    return basis;
}

TopologyChangeRecord Simulation::cut(const CutPlane& plane) {
    return commit(prepare_cut(change_basis(), plane));
}

TopologyChangeRecord Simulation::refine_sphere(const Vec3& center, double radius, int levels) {
    return commit(prepare_refine_sphere(change_basis(), center, radius, levels));
}

TopologyChangeRecord Simulation::refine_uniform() {
    // Checked before the positions are copied: an 8x of a large mesh is refused at once.
    const std::int64_t limit = topology_options_.max_cells;
    const std::int64_t cells = 8 * static_cast<std::int64_t>(backend_->mesh.num_cells());
    EDN_VERIFY(limit <= 0 || cells <= limit, ErrorCode::Usage,
               message_prefix(topology_options_, "refine")
                   << ": 1->8 would make " << cells << " cells, more than the limit of " << limit);
    return commit(prepare_refine_uniform(change_basis()));
}

PreparedChange Simulation::prepare_cut(const ChangeBasis& basis, const CutPlane& plane) {
    EDN_VERIFY(basis, ErrorCode::Usage, "cut: no simulation to prepare the cut on");
    const auto start = std::chrono::steady_clock::now();
    const TopologyChangeOptions& options = basis.options_;
    if (options.cut_mode == CutMode::Split) return prepare_split_cut(basis, plane);
    const TetMesh& mesh = basis.mesh();
    // Classify on the deformed shape: the cut follows what the user sees.
    CutResult result = cut_mesh(mesh, plane, vertex_positions(mesh, basis.positions_));
    EDN_VERIFY(!options.reject_no_op || result.cut_faces > 0, ErrorCode::Usage,
               "cut: the blade crosses no interior face"
                   << (options.mesh_name.empty() ? "" : " of ") << options.mesh_name);
    PreparedChange prepared;
    prepared.plan_ =
        plan_node_transfer(mesh, result.mesh, result.vertex_origin, basis.settings_.order);
    TopologyChangeRecord& record = prepared.record_;
    record.kind = TopologyChangeKind::Cut;
    record.cells_before = mesh.num_cells();
    record.cells_after = result.mesh.num_cells();
    record.cut_mode = CutMode::Faces;
    record.cut_faces = result.cut_faces;
    record.duplicated_vertices = result.duplicated_vertices;
    // The quality report of the split cut, for comparison (the cells keep their shapes).
    const MeshQuality quality = mesh_quality(mesh);
    record.min_dihedral_deg = record.input_min_dihedral_deg = quality.min_dihedral_deg;
    record.min_volume = record.input_min_volume = quality.min_volume;
    record.components = count_components(result.mesh);
    const auto build = std::chrono::steady_clock::now();
    prepared.next_ = make_backend(std::move(result.mesh), basis.settings_);
    record.repattern_ms = elapsed_ms(build);
    record.pattern_build_ms = prepared.next_->pattern_ms;
    finish_preparation(basis, prepared, start);
    return prepared;
}

PreparedChange Simulation::prepare_split_cut(const ChangeBasis& basis, const CutPlane& plane) {
    const TetMesh& mesh = basis.mesh();
    const TopologyChangeOptions& options = basis.options_;
    const auto start = std::chrono::steady_clock::now();
    // The blade is placed on the deformed shape (what the user sees); new vertices sit at the
    // same edge fractions of the rest shape, so the cut is nested in rest space.
    SplitCutOptions split_options;
    split_options.count_components = false; // the new backend counts them (record.components)
    SplitCutResult result =
        edn::split_cut(mesh, plane, vertex_positions(mesh, basis.positions_), split_options);
    EDN_VERIFY(!options.reject_no_op || result.cut_faces > 0, ErrorCode::Usage,
               "cut: the blade crosses no interior face"
                   << (options.mesh_name.empty() ? "" : " of ") << options.mesh_name);
    TopologyChangeRecord record;
    record.kind = TopologyChangeKind::Cut;
    record.cut_mode = CutMode::Split;
    record.cells_before = result.cells_before;
    record.cells_after = result.cells_after;
    record.cut_faces = result.cut_faces;
    record.duplicated_vertices = result.duplicated_vertices;
    record.split_cells = result.split_cells;
    record.snapped_vertices = result.snapped_vertices;
    record.new_vertices = result.new_vertices;
    record.min_dihedral_deg = result.after.min_dihedral_deg;
    record.input_min_dihedral_deg = result.before.min_dihedral_deg;
    record.min_volume = result.after.min_volume;
    record.input_min_volume = result.before.min_volume;
    record.refine_ms = elapsed_ms(start);
    // Every new cell lies in its parent: the old field carries over exactly.
    PreparedChange prepared =
        prepare_nested(basis, std::move(record), std::move(result.mesh), result.cell_parent);
    finish_preparation(basis, prepared, start);
    return prepared;
}

PreparedChange Simulation::prepare_refine_sphere(const ChangeBasis& basis, const Vec3& center,
                                                 double radius, int levels) {
    EDN_VERIFY(basis, ErrorCode::Usage, "refine: no simulation to prepare the refinement on");
    const TetMesh& mesh = basis.mesh();
    const TopologyChangeOptions& options = basis.options_;
    const auto start = std::chrono::steady_clock::now();
    // Classify on the deformed shape: the brush refines what the user points at.
    RefineResult result =
        edn::refine_sphere(mesh, center, radius, levels, vertex_positions(mesh, basis.positions_));
    EDN_VERIFY(!options.reject_no_op || result.split_cells > 0, ErrorCode::Usage,
               "refine: no cell" << (options.mesh_name.empty() ? "" : " of ") << options.mesh_name
                                 << " within " << radius << " of (" << center[0] << ", "
                                 << center[1] << ", " << center[2] << ")");
    const std::int64_t limit = options.max_cells;
    EDN_VERIFY(limit <= 0 || result.cells_after <= limit, ErrorCode::Usage,
               message_prefix(options, "refine")
                   << ": " << result.cells_after << " cells, more than the limit of " << limit);
    return prepare_refinement(basis, TopologyChangeKind::RefineSphere, result, start);
}

PreparedChange Simulation::prepare_refine_uniform(const ChangeBasis& basis) {
    EDN_VERIFY(basis, ErrorCode::Usage, "refine: no simulation to prepare the refinement on");
    const TetMesh& mesh = basis.mesh();
    // Checked before the work: 8x of a large mesh is the allocation to avoid.
    const std::int64_t limit = basis.options_.max_cells;
    const std::int64_t cells = 8 * static_cast<std::int64_t>(mesh.num_cells());
    EDN_VERIFY(limit <= 0 || cells <= limit, ErrorCode::Usage,
               message_prefix(basis.options_, "refine")
                   << ": 1->8 would make " << cells << " cells, more than the limit of " << limit);
    const auto start = std::chrono::steady_clock::now();
    RefineResult result = edn::refine_uniform(mesh);
    return prepare_refinement(basis, TopologyChangeKind::RefineUniform, result, start);
}

PreparedChange Simulation::prepare_refinement(const ChangeBasis& basis, TopologyChangeKind kind,
                                              RefineResult& result,
                                              std::chrono::steady_clock::time_point start) {
    TopologyChangeRecord record;
    record.kind = kind;
    record.cells_before = result.cells_before;
    record.cells_after = result.cells_after;
    record.new_vertices = result.new_vertices;
    record.min_dihedral_deg = result.min_dihedral_deg;
    record.input_min_dihedral_deg = result.input_min_dihedral_deg;
    record.refine_ms = elapsed_ms(start);
    PreparedChange prepared =
        prepare_nested(basis, std::move(record), std::move(result.mesh), result.cell_parent);
    finish_preparation(basis, prepared, start);
    return prepared;
}

PreparedChange Simulation::prepare_nested(const ChangeBasis& basis, TopologyChangeRecord record,
                                          TetMesh mesh, std::span<const Index> cell_parent) {
    PreparedChange prepared;
    const auto build = std::chrono::steady_clock::now();
    prepared.next_ = make_backend(std::move(mesh), basis.settings_);
    record.repattern_ms = elapsed_ms(build);
    const SimulationBackend& next = *prepared.next_;
    record.pattern_build_ms = next.pattern_ms;
    const auto plan_start = std::chrono::steady_clock::now();
    const SimulationBackend& now = *basis.backend_;
    prepared.plan_ =
        plan_nested_transfer({now.mesh, now.topology, now.layout, now.cell_nodes},
                             {next.mesh, next.topology, next.layout, next.cell_nodes}, cell_parent);
    record.refine_ms += elapsed_ms(plan_start);
    if (record.kind == TopologyChangeKind::Cut) record.components = next.components;
    prepared.record_ = record;
    return prepared;
}

void Simulation::finish_preparation(const ChangeBasis& basis, PreparedChange& prepared,
                                    std::chrono::steady_clock::time_point start) {
    // The preconditioner's set-up (the multigrid hierarchy) for the pins the commit will carry
    // unless the user changes them meanwhile: built here instead of in the first step after the
    // commit (which builds it again when the pins differ then).
    SimulationBackend& next = *prepared.next_;
    const auto setup = std::chrono::steady_clock::now();
    const int builds = next.solver_setup.builds;
    next.fixed = transfer_pins(prepared.plan_, basis.pinned_);
    next.pins_changed();
    next.prepare_solver();
    if (next.solver_setup.builds > builds) {
        prepared.record_.hierarchy_ms = elapsed_ms(setup);
        prepared.record_.repattern_ms += prepared.record_.hierarchy_ms;
    }
    // The new backend's device work ran on this thread's stream: done before another thread
    // (the one that commits, then the one that steps) uses the backend.
    if (basis.settings_.backend == Backend::Cuda) edn::finish_device_work();
    prepared.base_ = basis.backend_;
    // The commit's output, allocated and touched here: no page faults on the frame.
    const std::size_t n = prepared.plan_.source.size();
    prepared.carried_.positions.assign(3 * n, 0.0);
    prepared.carried_.velocities.assign(3 * n, 0.0);
    prepared.carried_.pinned.assign(n, 0);
    prepared.record_.prepare_ms = elapsed_ms(start);
}

ChangeBasis Simulation::chain_basis(const PreparedChange& prepared, const ChangeBasis& basis) {
    EDN_VERIFY(prepared && prepared.base_ == basis.backend_, ErrorCode::Usage,
               "chain_basis: the change was not prepared on this basis");
    ChangeBasis next;
    next.backend_ = prepared.next_;
    next.settings_ = basis.settings_;
    next.options_ = basis.options_;
    // The positions place a change and the pins its preconditioner's set-up; velocities are
    // carried at commit.
    const std::size_t n = basis.positions_.size() / 3;
    NodeState state{basis.positions_, std::vector<double>(3 * n, 0.0), basis.pinned_};
    NodeState carried = apply_transfer(prepared.plan_, state).state;
    next.positions_ = std::move(carried.positions);
    next.pinned_ = std::move(carried.pinned);
    return next;
}

bool Simulation::is_current(const PreparedChange& prepared) const {
    return prepared && prepared.base_ == backend_;
}

TopologyChangeRecord Simulation::commit(PreparedChange&& prepared) {
    const auto start = std::chrono::steady_clock::now();
    EDN_VERIFY(prepared, ErrorCode::Usage, "commit: no prepared change");
    EDN_VERIFY(is_current(prepared), ErrorCode::Usage,
               message_prefix(topology_options_, "commit")
                   << ": the mesh changed since this "
                   << (prepared.record_.kind == TopologyChangeKind::Cut ? "cut" : "refinement")
                   << " was prepared (" << prepared.record_.cells_before << " cells then, "
                   << backend_->mesh.num_cells() << " now); prepare it again");
    NodeState state = node_state(*backend_);
    apply_transfer(prepared.plan_, state, prepared.carried_);
    SimulationBackend& next = *prepared.next_;
    // The settings in force: only those changed in place (the ground) can differ, any other
    // change made a new backend and the preparation stale.
    next.settings = backend_->settings;
    set_node_state(next, prepared.carried_);
    TopologyChangeRecord record = prepared.record_;
    record.frame = frame_;
    // The basis no longer holds the mesh the history may take.
    prepared.base_.reset();
    prepared.retired_ = install(std::move(prepared.next_), record, std::move(state.positions),
                                std::move(state.velocities));
    changes_.back().commit_ms = record.commit_ms = elapsed_ms(start);
    return record;
}

TopologyChangeRecord Simulation::undo() {
    EDN_VERIFY(!history_.empty(), ErrorCode::Usage, "undo: nothing to undo");
    const Snapshot& snapshot = history_.back();
    TopologyChangeRecord record;
    record.kind = TopologyChangeKind::Undo;
    record.frame = frame_;
    record.cells_before = backend_->mesh.num_cells();
    record.cells_after = snapshot.mesh.num_cells();
    const auto start = std::chrono::steady_clock::now();
    // A copy of the mesh: the snapshot must stay when the build fails.
    std::unique_ptr<SimulationBackend> next = make_backend(snapshot.mesh, snapshot.settings);
    record.repattern_ms = elapsed_ms(start);
    record.pattern_build_ms = next->pattern_ms;
    set_node_state(*next, {snapshot.positions, snapshot.velocities, snapshot.pinned});
    // Nothing throws from here on but allocation.
    changes_.reserve(changes_.size() + 1);
    history_.pop_back();
    group_snapshot_ = false; // the group's snapshot (if it was the newest) is gone
    backend_ = std::move(next);
    record.commit_ms = elapsed_ms(start); // the whole rebuild runs in the caller's turn
    changes_.push_back(record);
    return record;
}

std::size_t Simulation::undo_depth() const {
    return history_.size();
}

void Simulation::group_changes(bool open) {
    group_open_ = open;
    group_snapshot_ = false;
}

const std::vector<TopologyChangeRecord>& Simulation::topology_changes() const {
    return changes_;
}

void Simulation::set_topology_options(TopologyChangeOptions options) {
    topology_options_ = std::move(options);
    while (history_.size() > topology_options_.undo_depth) history_.pop_front();
}

const TopologyChangeOptions& Simulation::topology_options() const {
    return topology_options_;
}

void Simulation::change_settings(const SimulationSettings& settings) {
    // Throws (bad settings, backend unavailable) before anything changes.
    std::unique_ptr<SimulationBackend> next = make_backend(backend_->mesh, settings);
    const SimulationBackend& now = *backend_;
    // Carry displacements (not positions) so new edge/face nodes sit on the new rest geometry.
    std::vector<double> displacement = now.positions();
    for (std::size_t i = 0; i < displacement.size(); ++i) displacement[i] -= now.rest[i];
    // Both layouts number vertices, edges and faces through the same mesh's topology.
    NodeState state;
    state.positions = transfer_node_values(next->topology, now.layout, next->layout, displacement);
    for (std::size_t i = 0; i < state.positions.size(); ++i) state.positions[i] += next->rest[i];
    state.velocities =
        transfer_node_values(next->topology, now.layout, next->layout, now.velocities());
    if (now.layout.order == next->layout.order) {
        state.pinned = now.fixed;
    } else {
        // Vertex nodes come first: their pins are the per-vertex pins.
        const std::vector<std::uint8_t> vertex_pins(now.fixed.begin(),
                                                    now.fixed.begin() + now.layout.num_vertices);
        state.pinned = node_pins_from_vertices(next->topology, next->layout, vertex_pins);
    }
    set_node_state(*next, state);
    next->drag = now.drag;
    next->drag_changed();
    backend_ = std::move(next);
}

void Simulation::change_order(int order) {
    SimulationSettings settings = backend_->settings;
    settings.order = order;
    change_settings(settings);
}

void Simulation::set_frame(std::int64_t frame) {
    frame_ = frame;
}

std::int64_t Simulation::frame() const {
    return frame_;
}

} // namespace edn
