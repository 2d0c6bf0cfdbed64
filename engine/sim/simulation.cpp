#include "sim/simulation.hpp"

#include "core/device.hpp"
#include "core/dispatch.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "fem/linear_elasticity.hpp"
#include "sim/simulation_backend.hpp"
#include "sim/state_transfer.hpp"

#include <algorithm>
#include <cmath>

namespace edn {

Preconditioner preconditioner_in_use(const SimulationSettings& s, int order) {
    return s.preconditioner == Preconditioner::TwoLevel && order == 1 ? Preconditioner::Multigrid
                                                                      : s.preconditioner;
}

SummationMethod summation_in_use(const SimulationSettings& s, int order, Index cells,
                                 std::int64_t l2_bytes) {
    if (s.summation != SummationMethod::Auto) return s.summation;
    const std::int64_t m = nodes_per_cell(order);
    const std::int64_t block_bytes = static_cast<std::int64_t>(cells) * m * m * 9 * 4;
    return order == 1 && l2_bytes > 0 && !s.deterministic && block_bytes > 4 * l2_bytes
               ? SummationMethod::PerSimplex
               : SummationMethod::PerEntry;
}

namespace {

void validate(const SimulationSettings& s) {
    auto finite = [](double v) { return std::isfinite(v); };
    EDN_VERIFY(s.order >= 1 && s.order <= 3, ErrorCode::Usage,
               "element order " << s.order << " not in 1..3");
    EDN_VERIFY(finite(s.young) && s.young > 0, ErrorCode::Usage,
               "Young's modulus must be > 0, got " << s.young);
    EDN_VERIFY(finite(s.poisson) && s.poisson > -1 && s.poisson < 0.5, ErrorCode::Usage,
               "Poisson's ratio must be in (-1, 0.5), got " << s.poisson);
    EDN_VERIFY(finite(s.density) && s.density > 0, ErrorCode::Usage,
               "density must be > 0, got " << s.density);
    EDN_VERIFY(finite(s.dt) && s.dt > 0, ErrorCode::Usage, "time step must be > 0, got " << s.dt);
    for (double g : s.gravity) EDN_VERIFY(finite(g), ErrorCode::Usage, "gravity must be finite");
    EDN_VERIFY(finite(s.mass_damping) && s.mass_damping >= 0, ErrorCode::Usage,
               "damping must be >= 0, got " << s.mass_damping);
    EDN_VERIFY(finite(s.stiffness_damping) && s.stiffness_damping >= 0, ErrorCode::Usage,
               "stiffness damping must be >= 0, got " << s.stiffness_damping);
    EDN_VERIFY(s.max_newton_iterations >= 1 && s.max_newton_iterations <= 1000, ErrorCode::Usage,
               "Newton iterations must be in 1..1000, got " << s.max_newton_iterations);
    EDN_VERIFY(finite(s.newton_tolerance) && s.newton_tolerance > 0, ErrorCode::Usage,
               "Newton tolerance must be > 0");
    EDN_VERIFY(finite(s.frame_budget_ms) && s.frame_budget_ms >= 0, ErrorCode::Usage,
               "frame budget must be >= 0 ms (0: none), got " << s.frame_budget_ms);
    EDN_VERIFY(finite(s.pcg.relative_tolerance) && s.pcg.relative_tolerance > 0 &&
                   s.pcg.relative_tolerance < 1,
               ErrorCode::Usage, "CG tolerance must be in (0, 1)");
    EDN_VERIFY(s.pcg.max_iterations >= 1, ErrorCode::Usage, "CG iteration cap must be >= 1");
    EDN_VERIFY(s.coarse_iterations >= 0 && s.coarse_iterations <= 1000, ErrorCode::Usage,
               "coarse iterations must be in 0..1000 (0: default), got " << s.coarse_iterations);
    EDN_VERIFY(!s.ground_height || finite(*s.ground_height), ErrorCode::Usage,
               "ground height must be finite");
    EDN_VERIFY(finite(s.ground_stiffness) && s.ground_stiffness >= 0, ErrorCode::Usage,
               "ground stiffness must be >= 0");
    EDN_VERIFY(finite(s.ground_friction) && s.ground_friction >= 0, ErrorCode::Usage,
               "ground friction must be >= 0, got " << s.ground_friction);
}

/// HRZ lumping: each element's consistent-mass diagonal scaled to the element mass. The
/// elements' diagonals are computed in parallel, then added in cell order (the serial sums, bit
/// for bit).
template <int P>
void add_lumped_mass(const TetMesh& mesh, const std::vector<Index>& cell_nodes, double rho,
                     std::vector<double>& mass) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const QuadratureTet<double> rule = quadrature_for_degree<double>(2 * P);
    std::vector<double> lumped(static_cast<std::size_t>(mesh.num_cells()) * m);
    parallel_for(
        0, mesh.num_cells(),
        [&](std::int64_t t) {
            double X[4][3];
            for (int v = 0; v < 4; ++v)
                for (int d = 0; d < 3; ++d) X[v][d] = mesh.positions[mesh.cells[t][v]][d];
            double M[m][m];
            consistent_mass<P>(X, rho, rule, M);
            double diag = 0, total = 0;
            for (int a = 0; a < m; ++a) {
                diag += M[a][a];
                for (int b = 0; b < m; ++b) total += M[a][b];
            }
            for (int a = 0; a < m; ++a) lumped[t * m + a] = M[a][a] * total / diag;
        },
        kHeavyItems * 64);
    for (std::size_t i = 0; i < lumped.size(); ++i) mass[cell_nodes[i]] += lumped[i];
}

} // namespace

void SimulationBackend::check(const TetMesh& mesh, const SimulationSettings& s) {
    validate(s);
    EDN_VERIFY(mesh.num_cells() > 0, ErrorCode::EmptyMesh, "simulation: mesh has no cells");
}

SimulationBackend::SimulationBackend(TetMesh mesh_in, const SimulationSettings& s,
                                     bool host_pattern, std::optional<Topology> prebuilt)
    : mesh(std::move(mesh_in)), settings(s) {
    check(mesh, settings);
    const auto start = std::chrono::steady_clock::now();
    topology = prebuilt ? std::move(*prebuilt) : build_topology(mesh);
    layout = make_node_layout(topology, settings.order);
    if (host_pattern) {
        pattern = build_bin_bcsr_pattern(topology, mesh.cells, layout);
        pattern_ms = elapsed_ms(start);
    }
    cell_nodes = cell_node_table(topology, mesh.cells, layout);
    const std::vector<Vec3> x = node_positions(mesh, topology, layout);
    rest.resize(3 * x.size());
    for (std::size_t i = 0; i < x.size(); ++i)
        for (int d = 0; d < 3; ++d) rest[3 * i + d] = x[i][d];
    mass.assign(layout.num_nodes(), 0.0);
    with_order(settings.order,
               [&]<int P>() { add_lumped_mass<P>(mesh, cell_nodes, settings.density, mass); });
    fixed.assign(layout.num_nodes(), 0);
    components = num_components(topology);
}

double SimulationBackend::effective_dt() const {
    return settings.integrator == Integrator::Midpoint ? 0.5 * settings.dt : settings.dt;
}

double SimulationBackend::inertia_coefficient() const {
    if (settings.integrator == Integrator::Static) return 0.0;
    const double h = effective_dt();
    return 1.0 / (h * h);
}

std::unique_ptr<SimulationBackend> Simulation::make_backend(TetMesh mesh,
                                                            const SimulationSettings& settings) {
    if (settings.backend == Backend::Cuda) {
        // One clear line instead of the first failing CUDA call deep in the set-up.
        EDN_VERIFY(cuda_device_available(), ErrorCode::Unsupported,
                   "CUDA backend: " << (built_with_cuda()
                                            ? "no usable CUDA device (no GPU or driver)"
                                            : "this elastodyn was built without CUDA")
                                    << "; use the CPU backend");
        return make_cuda_backend(std::move(mesh), settings);
    }
    return make_cpu_backend(std::move(mesh), settings);
}

Simulation::Simulation(TetMesh mesh, const SimulationSettings& settings)
    : backend_(make_backend(std::move(mesh), settings)) {}

Simulation::~Simulation() = default;

StepResult Simulation::step() {
    StepResult result = backend_->step();
    ++frame_;
    return result;
}

Index Simulation::pin_below(double z) {
    EDN_VERIFY(std::isfinite(z), ErrorCode::Usage, "pin height must be finite");
    Index count = 0;
    for (Index i = 0; i < backend_->layout.num_nodes(); ++i)
        if (backend_->rest[3 * i + 2] < z) {
            backend_->fixed[i] = 1;
            ++count;
        }
    backend_->pins_changed();
    return count;
}

void Simulation::set_pinned(Index node, bool pinned) {
    EDN_VERIFY(node >= 0 && node < backend_->layout.num_nodes(), ErrorCode::Usage,
               "node " << node << " out of range");
    backend_->fixed[node] = pinned ? 1 : 0;
    backend_->pins_changed();
}

void Simulation::set_vertex_pins(const std::vector<std::uint8_t>& vertex_pins) {
    backend_->fixed = node_pins_from_vertices(backend_->topology, backend_->layout, vertex_pins);
    backend_->pins_changed();
}

void Simulation::set_pins(const std::vector<std::uint8_t>& node_mask) {
    EDN_VERIFY(node_mask.size() == static_cast<std::size_t>(backend_->layout.num_nodes()),
               ErrorCode::Usage,
               "set_pins: expected " << backend_->layout.num_nodes() << " entries, got "
                                     << node_mask.size());
    for (std::size_t i = 0; i < node_mask.size(); ++i) backend_->fixed[i] = node_mask[i] ? 1 : 0;
    backend_->pins_changed();
}

const std::optional<DragSpring>& Simulation::drag() const {
    return backend_->drag;
}

SolverMemory Simulation::solver_memory() const {
    // A lagged multigrid's values (re-valued every second step from that step's matrix) are not
    // part of the memory, so a run resumed from it re-values at its first assembly; this run
    // does the same from here on, and the two continue alike (bit for bit on the CPU).
    backend_->restart_preconditioner();
    const NewtonMemory& memory = backend_->newton_memory;
    SolverMemory result{memory.strain_at_x, memory.kinetic_at_x, {}};
    if (memory.have_first_direction) result.warm_start = backend_->warm_start();
    return result;
}

void Simulation::set_solver_memory(const SolverMemory& memory) {
    const std::size_t n = 3 * static_cast<std::size_t>(backend_->layout.num_nodes());
    EDN_VERIFY(memory.warm_start.empty() || memory.warm_start.size() == n, ErrorCode::Usage,
               "set_solver_memory: expected " << n << " warm start values, got "
                                              << memory.warm_start.size());
    NewtonMemory next;
    next.strain_at_x = memory.strain_at_x;
    next.kinetic_at_x = memory.kinetic_at_x;
    next.have_first_direction =
        !memory.warm_start.empty() && backend_->set_warm_start(memory.warm_start);
    backend_->newton_memory = next;
}

void Simulation::set_drag(std::optional<DragSpring> drag) {
    if (drag) {
        for (Index v : drag->vertices)
            EDN_VERIFY(v >= 0 && v < backend_->layout.num_vertices, ErrorCode::Usage,
                       "drag vertex " << v << " out of range");
        for (double t : drag->target)
            EDN_VERIFY(std::isfinite(t), ErrorCode::Usage, "drag target not finite");
        EDN_VERIFY(std::isfinite(drag->stiffness) && drag->stiffness >= 0, ErrorCode::Usage,
                   "drag stiffness must be >= 0");
        // Each region node once: the backends add its gradient and Hessian without atomics.
        std::vector<std::uint8_t> seen(static_cast<std::size_t>(backend_->layout.num_vertices), 0);
        for (const DragNode& n : drag->region) {
            EDN_VERIFY(n.node >= 0 && n.node < backend_->layout.num_vertices, ErrorCode::Usage,
                       "drag region node " << n.node << " is not a vertex node");
            EDN_VERIFY(!seen[static_cast<std::size_t>(n.node)], ErrorCode::Usage,
                       "drag region node " << n.node << " appears twice");
            seen[static_cast<std::size_t>(n.node)] = 1;
            EDN_VERIFY(std::isfinite(n.weight) && n.weight >= 0, ErrorCode::Usage,
                       "drag region weight must be >= 0, got " << n.weight);
            for (double o : n.offset)
                EDN_VERIFY(std::isfinite(o), ErrorCode::Usage, "drag region offset not finite");
        }
    }
    backend_->drag = std::move(drag);
    backend_->drag_changed();
}

void Simulation::set_ground(std::optional<double> height, double stiffness, double friction) {
    SimulationSettings next = backend_->settings;
    next.ground_height = height;
    next.ground_stiffness = stiffness;
    next.ground_friction = friction;
    validate(next);
    backend_->settings = next;
}

std::vector<double> Simulation::positions() const {
    return backend_->positions();
}
void Simulation::finish_device_work() const {
    if (settings().backend == Backend::Cuda) edn::finish_device_work();
}

const float* Simulation::device_positions() const {
    return backend_->device_positions();
}
std::vector<double> Simulation::velocities() const {
    return backend_->velocities();
}
void Simulation::set_state(const std::vector<double>& x, const std::vector<double>& v) {
    const std::size_t n = 3 * static_cast<std::size_t>(backend_->layout.num_nodes());
    EDN_VERIFY(x.size() == n && v.size() == n, ErrorCode::Usage,
               "set_state: expected " << n << " values");
    backend_->set_state(x, v);
}
double Simulation::incremental_potential(const std::vector<double>& y,
                                         std::vector<double>* gradient) {
    const std::size_t n = 3 * static_cast<std::size_t>(backend_->layout.num_nodes());
    EDN_VERIFY(y.size() == n, ErrorCode::Usage,
               "incremental_potential: expected " << n << " values");
    return backend_->incremental_potential(y, gradient);
}

std::vector<double> Simulation::hessian_product(const std::vector<double>& y,
                                                const std::vector<double>& v) {
    const std::size_t n = 3 * static_cast<std::size_t>(backend_->layout.num_nodes());
    EDN_VERIFY(y.size() == n && v.size() == n, ErrorCode::Usage,
               "hessian_product: expected " << n << " values");
    return backend_->hessian_product(y, v);
}

std::vector<std::vector<double>> Simulation::multigrid_levels(const std::vector<double>& y) {
    const std::size_t n = 3 * static_cast<std::size_t>(backend_->layout.num_nodes());
    EDN_VERIFY(y.size() == n, ErrorCode::Usage, "multigrid_levels: expected " << n << " values");
    return backend_->multigrid_levels(y);
}

const std::vector<double>& Simulation::rest_positions() const {
    return backend_->rest;
}
const std::vector<double>& Simulation::lumped_mass() const {
    return backend_->mass;
}
std::vector<double> Simulation::von_mises_stress() const {
    return backend_->von_mises_stress();
}
const float* Simulation::device_von_mises_stress() const {
    return backend_->device_von_mises_stress();
}
const std::vector<std::uint8_t>& Simulation::pinned() const {
    return backend_->fixed;
}
const TetMesh& Simulation::mesh() const {
    return backend_->mesh;
}
const std::vector<Index>& Simulation::cell_nodes() const {
    return backend_->cell_nodes;
}
const SimulationSettings& Simulation::settings() const {
    return backend_->settings;
}
Index Simulation::num_nodes() const {
    return backend_->layout.num_nodes();
}
SummationMethod Simulation::summation() const {
    return backend_->summation();
}
std::int64_t Simulation::nnz_blocks() const {
    return backend_->nnz_blocks();
}
std::size_t Simulation::matrix_bytes() const {
    return backend_->matrix_bytes();
}
std::size_t Simulation::matrix_free_bytes() const {
    return backend_->matrix_free_bytes();
}

std::size_t Simulation::element_block_bytes() const {
    return backend_->element_block_bytes();
}
double Simulation::pattern_build_ms() const {
    return backend_->pattern_ms;
}
Index Simulation::components() const {
    return backend_->components;
}
SolverSetupStats Simulation::solver_setup() const {
    return backend_->solver_setup;
}

} // namespace edn
