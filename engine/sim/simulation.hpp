#pragma once
/// The per-frame engine: implicit Newton steps on the fixed Bin-BCSR* pattern (see DESIGN.md,
/// "Data flow of one frame"). Backend-agnostic driver; the numerical work runs on the CPU
/// (double) or on the GPU (a double Newton level over a float matrix and PCG) behind the same
/// interface.

#include "mesh/tet_mesh.hpp"
#include "sim/topology_change.hpp"
#include "solver/pcg.hpp"
#include "sparse/summation.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace edn {

/// Constitutive models.
enum class Material : std::uint8_t { Linear, Corotational, NeoHookean };
/// Time integration schemes.
enum class Integrator : std::uint8_t {
    BackwardEuler, ///< minimises the incremental potential (dissipative, very stable)
    Midpoint,      ///< variational implicit midpoint (Cecka et al. 2011, energy conserving)
    Static,        ///< equilibrium: minimises W(x) - f.x (needs pins)
};
/// Where the numbers are crunched.
enum class Backend : std::uint8_t { Cpu, Cuda };
/// Whether the element Hessians are projected onto the PSD cone (per quadrature point).
/// Projection makes every element Hessian PSD, so the system is SPD whatever the deformation,
/// but it changes the Hessian wherever a tangent has negative eigenvalues (every compressed
/// neo-Hookean element): Newton then converges only linearly (81K-tet bunny under gravity, CPU:
/// 4.6 Newton iterations per frame projected, 2.9 exact). OnDemand takes the exact Hessian and
/// projects only when a solve shows it is not positive definite (solver/newton.hpp).
enum class HessianProjection : std::uint8_t {
    OnDemand, ///< exact; an iteration whose exact solve gives no direction is redone projected
    Always,   ///< projected at every iteration
    Never,    ///< exact at every iteration (--exact-hessian)
};

/// "linear", "corotational", "neohookean".
const char* material_name(Material material);
std::optional<Material> parse_material(std::string_view name);
/// "backward_euler", "midpoint", "static".
const char* integrator_name(Integrator integrator);
std::optional<Integrator> parse_integrator(std::string_view name);
/// "cpu", "cuda".
const char* backend_name(Backend backend);
std::optional<Backend> parse_backend(std::string_view name);
/// "block_jacobi", "two_level".
const char* preconditioner_name(Preconditioner preconditioner);
std::optional<Preconditioner> parse_preconditioner(std::string_view name);

/// Everything a user can tune; validated by Simulation (edn::Error(Usage) on bad values).
struct SimulationSettings {
    int order = 1; ///< Lagrange order 1..3
    Material material = Material::NeoHookean;
    double young = 1e5;     ///< Young's modulus E [Pa], > 0
    double poisson = 0.3;   ///< Poisson's ratio, in (-1, 0.5)
    double density = 1000;  ///< rho [kg/m^3], > 0
    double dt = 1.0 / 60.0; ///< time step [s], > 0
    Integrator integrator = Integrator::BackwardEuler;
    Backend backend = Backend::Cpu;
    SummationMethod summation = SummationMethod::Auto; ///< summation_in_use() resolves Auto
    std::array<double, 3> gravity = {0, 0, -9.81};     ///< [m/s^2]
    double mass_damping = 0;                           ///< Rayleigh alpha [1/s] (mass-proportional)
    /// Rayleigh beta [s] (stiffness-proportional): per element (beta/h) Psi_lin(y - x_start), the
    /// linear elastic energy of the step's displacement (zero for static solves).
    double stiffness_damping = 0;
    /// Newton iterates to newton_tolerance every frame; this cap and frame_budget_ms are the
    /// per-frame budget that may stop it earlier (the step then reports converged = false).
    int max_newton_iterations = 40;
    double newton_tolerance = 1e-3; ///< on the Newton decrement, relative to the first
    /// Wall-clock budget of one step's Newton iterations [ms], checked between iterations (at
    /// least one runs); 0: none, the runs are deterministic. The app sets one (app/app.cpp).
    double frame_budget_ms = 0;
    /// Inner linear solves: relative tolerance (the floor of the forcing term) and a cap high
    /// enough that the tolerance, not the cap, ends a solve.
    PcgSettings pcg{.relative_tolerance = 1e-4, .max_iterations = 1000};
    /// Inexact Newton: each solve's CG tolerance follows the gradient's decrease
    /// (solver/newton.hpp, linear_tolerance_for), never tighter than pcg.relative_tolerance.
    /// Measured on the CPU (README "Newton to the tolerance"): 3-4x fewer CG iterations per frame
    /// at the same Newton iterations and frames converged.
    bool cg_forcing = true;
    /// Coarse PCG iterations per application of the two-level preconditioner; 0: the backend's
    /// measured default (solver/two_level.hpp: 6 on the GPU, 16 on the CPU).
    int coarse_iterations = 0;
    /// Preconditioner of the Newton solves. Multigrid (solver/multigrid.hpp, the default since
    /// session 20: smoothed aggregation, p-multigrid to P1 first at p >= 2; its hierarchy is built
    /// on the GPU at every order there), TwoLevel (solver/two_level.hpp: block Jacobi + a P1
    /// coarse correction, for order >= 2; at p = 1, which has no coarser P1 space, it runs the
    /// multigrid: preconditioner_in_use) or BlockJacobi. H100, 187K bunny, median frames:
    /// multigrid 19.9 against two-level's 31.2 ms at p = 2, 102.5 against 110.9 at p = 3.
    Preconditioner preconditioner = Preconditioner::Multigrid;
    /// Multigrid: re-value the hierarchy at every Newton iteration's assembly instead of once per
    /// step (solver/multigrid.hpp, MultigridRefresh).
    bool multigrid_every_iteration = false;
    /// Multigrid: at most this many time steps share one re-value of the hierarchy (sooner when
    /// its solves slow down or fail: MultigridRefresh); 1 = a re-value at every step.
    int multigrid_lag = 2;
    /// Multigrid: the tentative prolongators' rigid-body modes are those of the rest positions
    /// (built once) instead of the current ones (recomputed at each re-value).
    bool multigrid_rest_modes = false;
    HessianProjection projection = HessianProjection::OnDemand; ///< PSD projection of Hessians
    /// CUDA: bitwise-reproducible runs. Off (default), large p = 1 solves take q = A p from the
    /// matrix's upper part with float atomics (cuda::PcgOptions::upper_spmv) and the per-entry
    /// maps list each block's sources in atomic order, so repeated runs agree to rounding, not
    /// bit for bit; on, the PCG uses the full matrix and the maps are sorted (1M tets: 42 -> 51
    /// us per PCG iteration; +0.2-0.65 ms per p = 1 pattern build).
    bool deterministic = false;
    std::optional<double> ground_height; ///< penalty ground plane z = h when set
    double ground_stiffness = 1e5;       ///< [N/m] per node below the plane
    /// Viscous ground friction [1/s]: nodes below the plane at the start of a step add
    /// (friction / h) m_i / 2 |(y_i - x_start_i) tangential|^2 to the potential, a tangential
    /// force m_i friction v_t that opposes sliding (0: frictionless; no effect in static solves).
    /// The contact set is the step's start, so the term is smooth within a step's Newton loop.
    double ground_friction = 0;
};

/// The preconditioner the backends run for `s` at element order `order`: two-level is the
/// multigrid at p = 1, where no coarser P1 space exists (H100 bunny, median frames: 187K 5.0
/// against block Jacobi's 7.8 ms, 1.15M 15.6 against 34.7; its hierarchy is built on the GPU in
/// about 5 ms at 187K: bench/README.md, sessions 19 and 20).
Preconditioner preconditioner_in_use(const SimulationSettings& s, int order);

/// The summation a backend runs for `s` (Auto resolved) at element order `order` on `cells`
/// cells; `l2_bytes`: the GPU's L2 cache on the CUDA backend, 0 on the CPU. Auto is per-entry,
/// except on CUDA at p = 1 without `deterministic` where the element blocks exceed 4x the L2
/// cache: there per-simplex, whose bin sums in shared memory read each cell's row of blocks as
/// one run (H100, bunny, frame median: 1.15M tets 17.27 -> 16.54 ms; at 187K tets, 108 MB of
/// blocks, per-entry's gathers still meet in the L2 and it stays ahead, 5.09 against 5.20).
SummationMethod summation_in_use(const SimulationSettings& s, int order, Index cells,
                                 std::int64_t l2_bytes);

/// The preconditioner's set-up that depends on the pattern and the pins (the multigrid
/// hierarchy: aggregates, prolongator and coarse patterns, maps; on CUDA its upload), on the
/// current backend. A topology change's preparation builds it off the frame (pins as prepared);
/// a step builds it when missing or built for other pins.
struct SolverSetupStats {
    int builds = 0;               ///< set-ups built on this backend (by a preparation or a step)
    int builds_in_step = 0;       ///< of them, inside a step's assembly (the lazy path)
    double last_build_ms = 0;     ///< wall time of the newest build [ms]
    int revalues = 0;             ///< re-values of its levels (CUDA multigrid)
    int matrix_free_revalues = 0; ///< of them, without the assembled matrix (p >= 2)
};

/// Milliseconds per stage of one step.
struct StageTimes {
    double element = 0, summation = 0, pcg = 0, line_search = 0, total = 0;
};

/// Why a step's Newton loop ended.
enum class NewtonStop : std::uint8_t {
    Converged,    ///< the decrement met the tolerance (or the gradient was zero)
    IterationCap, ///< max_newton_iterations ran out first
    TimeBudget,   ///< frame_budget_ms ran out first
    Failed,       ///< non-finite energy or gradient, no descent direction, or no line-search step
};

/// What one step did. Expected numerical trouble is reported here, never thrown.
struct StepResult {
    int newton_iterations = 0;
    int cg_iterations = 0;
    double initial_residual = 0;          ///< |g| at the first iterate (free dofs)
    double final_residual = 0;            ///< |g| after the last update
    double potential = 0;                 ///< incremental potential at the end
    double strain_energy = 0;             ///< W(x) at the end of the step
    double kinetic_energy = 0;            ///< 1/2 v^T M v at the end of the step
    bool converged = false;               ///< Newton decrement below tolerance
    NewtonStop stop = NewtonStop::Failed; ///< why the Newton loop ended
    /// The convergence measure Newton tests, sqrt(decrement / first decrement) of the last
    /// iteration (compared with newton_tolerance): 1 when no decrement was measured, 0 when the
    /// gradient vanished or the decrement fell below round-off (1e-30).
    double relative_decrement = 1;
    int line_search_failures = 0;  ///< iterations whose line search fell back
    int pcg_breakdowns = 0;        ///< inner solves that stopped on p.Ap <= 0 (indefinite H)
    int pcg_unconverged = 0;       ///< inner solves that hit the iteration cap
    bool recovered = false;        ///< a non-finite state was rolled back to the previous frame
    std::vector<double> residuals; ///< |g| (free dofs) at each Newton iterate, then after the last
    /// Per Newton iteration (its solve and line search): the relative decrement it measured, the
    /// CG iterations of its solve and the accepted step length (0 when none was accepted).
    std::vector<double> relative_decrements;
    std::vector<int> solve_iterations;
    std::vector<double> step_lengths;
    /// Iterations whose exact Hessian gave no usable direction (HessianProjection::OnDemand): each
    /// was redone with projected Hessians; the iterations after it start exact again.
    int projection_fallbacks = 0;
    /// Iterations whose solve met negative curvature after some CG progress and took the CG
    /// iterate before it as the direction (Newton-CG truncation; on demand and never).
    int truncated_solves = 0;
    bool projected = false; ///< some iteration of the step solved with projected Hessians
    StageTimes times;
};

/// One node of a region drag (DragSpring::region): pulled toward the drag target plus its own
/// offset, with its share of the stiffness.
struct DragNode {
    Index node = 0;                 ///< a vertex node (its index survives order changes)
    double weight = 0;              ///< share of DragSpring::stiffness, >= 0 (a region sums to 1)
    std::array<double, 3> offset{}; ///< its target minus DragSpring::target [m]
    /// Same node, weight and offset (written out: .cu files compile as C++17).
    bool operator==(const DragNode& o) const {
        return node == o.node && weight == o.weight && offset == o.offset;
    }
};

/// What the mouse drag pulls with. Without a region: a spring from a point on the boundary
/// surface (barycentric on a boundary face's vertices) to `target`,
/// E = k/2 |sum_a w_a x_a - target|^2. With a region (sim/drag_region.hpp): one spring per
/// region node to its own target, E = sum_j k w_j / 2 |x_j - (target + offset_j)|^2, so the
/// grabbed neighbourhood follows the target instead of one point being pulled into a spike.
struct DragSpring {
    std::array<Index, 3> vertices{}; ///< vertex (node) indices of the picked face
    std::array<double, 3> weights{}; ///< barycentric weights, sum 1
    std::array<double, 3> target{};  ///< where the point is pulled [m]
    double stiffness = 1e3;          ///< [N/m] (a region's total: its weights sum to 1)
    /// Region drag: these node springs replace the point spring (each node at most once). The
    /// face above still names the grabbed point (for drawing it).
    std::vector<DragNode> region;
};

/// What the Newton loop carries from one step to the next besides positions and velocities: the
/// energies at the state (the start-at-x safeguard of solver/newton.hpp) and the first correction
/// of the last step (the next step's PCG warm start). Saved with a state (sim/state_file.hpp) so
/// that a resumed run steps bit for bit as the original.
struct SolverMemory {
    double strain_at_x = 0;         ///< W(x) at the end of the last step (NaN: none yet)
    double kinetic_at_x = 0;        ///< its kinetic energy (NaN: none yet)
    std::vector<double> warm_start; ///< 3 per node; empty: none (or a backend that keeps none)
};

class SimulationBackend;
class ChangeBasis;
class PreparedChange;
struct CutPlane;
struct NodeState;
struct RefineResult;

/// One simulated solid.
class Simulation {
public:
    /// Builds topology, node layout, pattern, maps and mass for `mesh` (validated, positive
    /// cells). Throws edn::Error on bad settings or when the backend is unavailable.
    Simulation(TetMesh mesh, const SimulationSettings& settings);
    ~Simulation();
    Simulation(const Simulation&) = delete;
    Simulation& operator=(const Simulation&) = delete;

    /// Advances one time step (or solves for equilibrium with Integrator::Static).
    StepResult step();

    /// Pins (Dirichlet) every node whose rest z is below `z`; returns how many were pinned.
    Index pin_below(double z);
    /// Pins or frees one node.
    void set_pinned(Index node, bool pinned);
    /// Pins exactly the nodes whose entry of `node_mask` (#nodes) is non-zero.
    void set_pins(const std::vector<std::uint8_t>& node_mask);
    /// The drag spring (or none).
    void set_drag(std::optional<DragSpring> drag);
    /// The drag spring in force (or none).
    const std::optional<DragSpring>& drag() const;
    /// What the next step takes over from the last (SolverMemory). Taking it restarts a lagged
    /// multigrid's schedule (its values are not part of it): the next assembly re-values the
    /// hierarchy, as a run resumed from the memory does, so the two continue alike.
    SolverMemory solver_memory() const;
    /// Restores what solver_memory() returned for this mesh and order (a warm start of the wrong
    /// size is a Usage error; a backend that keeps no warm start on the host drops it).
    void set_solver_memory(const SolverMemory& memory);
    /// Changes the ground plane (height, none without one), its stiffness and friction in place:
    /// no rebuild, the state and the drag stay. Throws edn::Error(Usage) on a non-finite height
    /// or a negative stiffness or friction (and then changes nothing).
    void set_ground(std::optional<double> height, double stiffness, double friction);

    /// Current node positions, 3 per node (node order of mesh/node_layout.hpp).
    std::vector<double> positions() const;
    /// Device pointer to the current node positions, 3 floats per node (vertex nodes first), for
    /// CUDA-GL interop: valid until the next step()/set_state(); nullptr for the CPU backend.
    const float* device_positions() const;
    /// Waits for the device work this thread queued for the simulation (CUDA: the thread's own
    /// stream, finish_device_work); a no-op on the CPU. Call it before another thread reads
    /// device_positions() or steps: the app's simulation thread after each step, the UI thread
    /// after its turn (interop, cuts and refinements).
    void finish_device_work() const;
    /// Current node velocities, 3 per node.
    std::vector<double> velocities() const;
    /// Overwrites positions and velocities (3 per node each), e.g. after a topology change.
    void set_state(const std::vector<double>& positions, const std::vector<double>& velocities);
    /// The incremental potential the next step() minimises, at node positions y (3 per node),
    /// and its gradient (zero on pinned nodes) when `gradient` is not null: for tests and tools.
    double incremental_potential(const std::vector<double>& y,
                                 std::vector<double>* gradient = nullptr);
    /// H v with H the Hessian the Newton step assembles at y (pins not applied): for tests.
    std::vector<double> hessian_product(const std::vector<double>& y, const std::vector<double>& v);
    /// The preconditioner's coarse levels as a solve after an assembly at y (3 per node) would
    /// use them, freshly re-valued: per level, its coarse operator's values (then its diagonal)
    /// and, last, its lambda_max; empty where the backend keeps no device multigrid: for tests.
    std::vector<std::vector<double>> multigrid_levels(const std::vector<double>& y);
    /// Rest positions of the nodes.
    const std::vector<double>& rest_positions() const;
    /// Per-node lumped mass (HRZ for p >= 2).
    const std::vector<double>& lumped_mass() const;
    /// Per-cell von Mises stress of the current state (at the cell's first quadrature point).
    std::vector<double> von_mises_stress() const;
    /// The same on the device, #cells floats (CUDA backend; valid until the next call, step()
    /// or set_state()), for colouring the surface without a copy; nullptr for the CPU backend.
    const float* device_von_mises_stress() const;
    /// Whether each node is pinned.
    const std::vector<std::uint8_t>& pinned() const;

    const TetMesh& mesh() const;
    /// #cells x nodes_per_cell(order) global node indices of each cell, in the canonical local
    /// order of mesh/node_layout.hpp (the numbering positions() uses; the CUDA backend's node
    /// slot order may differ from a host-built topology's, so ask here rather than rebuild it).
    const std::vector<Index>& cell_nodes() const;
    const SimulationSettings& settings() const;
    /// The summation the backend runs (settings().summation resolved: summation_in_use).
    SummationMethod summation() const;
    Index num_nodes() const;
    /// Non-zero 3x3 blocks of the system matrix (diagonal included).
    std::int64_t nnz_blocks() const;
    /// Bytes of the system matrix.
    std::size_t matrix_bytes() const;
    /// Bytes of the per-element Hessian data the backend keeps for the summation: the element
    /// blocks, or with CUDA p = 1 inline summation each cell's tangent frame (44 floats); 0 for
    /// inline otherwise, unless the two-level coarse level needs the blocks.
    std::size_t element_block_bytes() const;
    /// Device bytes of the matrix-free product's values (CUDA, p >= 2 with the multigrid: the
    /// quadrature points' tangents, present and snapshot; cuda/matrix_free.cuh), 0 when the
    /// products read the matrix.
    std::size_t matrix_free_bytes() const;
    /// Connected components of the mesh.
    Index components() const;
    /// The preconditioner set-up's builds on the current backend (SolverSetupStats).
    SolverSetupStats solver_setup() const;
    /// Milliseconds the construction spent building the pattern and summation plans (topology,
    /// counts, bins, allocation, columns, maps): device time of the GPU stages for the CUDA
    /// backend, host time for the CPU backend. What a topology change costs before the next frame.
    double pattern_build_ms() const;

    /// Pins exactly the nodes node_pins_from_vertices (sim/state_transfer.hpp) derives from a
    /// per-vertex mask (#V): a vertex node with its vertex, an edge/face node when all vertices
    /// of its simplex are pinned. Every other node is freed.
    void set_vertex_pins(const std::vector<std::uint8_t>& vertex_pins);

    // Topology changes (sim/topology_change.cpp). Each builds a new backend with the current
    // settings for the new mesh, carries positions, velocities and pins over and swaps it in;
    // the drag spring is dropped (its vertices are renumbered). Strong guarantee: on edn::Error
    // the simulation is unchanged. The previous mesh and state go onto the undo history.
    // cut, refine_sphere and refine_uniform are prepare + commit (sim/prepared_change.hpp): a
    // caller may run the preparation on another thread while this simulation steps.

    /// What a change is prepared on: the current topology (kept alive by the basis), settings,
    /// topology options and node positions. Call it between steps (it copies the positions).
    ChangeBasis change_basis() const;
    /// cut()'s first phase on `basis` (any thread; reads nothing but the basis). Throws
    /// edn::Error like cut().
    static PreparedChange prepare_cut(const ChangeBasis& basis, const CutPlane& plane);
    /// refine_sphere()'s first phase on `basis`, as prepare_cut.
    static PreparedChange prepare_refine_sphere(const ChangeBasis& basis, const Vec3& center,
                                                double radius, int levels = 3);
    /// refine_uniform()'s first phase on `basis`, as prepare_cut.
    static PreparedChange prepare_refine_uniform(const ChangeBasis& basis);
    /// The basis of a change to prepare on top of `prepared` (not yet committed; any thread):
    /// its new mesh, `basis`'s positions carried by its transfer plan. Commit the two in order.
    static ChangeBasis chain_basis(const PreparedChange& prepared, const ChangeBasis& basis);
    /// Whether `prepared` was prepared on the current topology (commit() takes it).
    bool is_current(const PreparedChange& prepared) const;
    /// The second phase, between steps: carries the current positions, velocities and pins into
    /// the prepared backend, swaps it in (with the settings now in force) and records it (frame
    /// now, commit_ms). Throws edn::Error(Usage), leaving both unchanged, when `prepared` is
    /// empty or stale (the topology changed since its basis was taken: prepare again). On
    /// success `prepared` is left holding the retired backend and the plan: whoever destroys it
    /// frees them (the app does so off the frame; freeing a large backend takes milliseconds).
    TopologyChangeRecord commit(PreparedChange&& prepared);

    /// Cuts the mesh along `plane`, as topology_options().cut_mode says: split the crossed cells
    /// along the blade (mesh/split_cut.hpp; the state carried like refine_sphere's) or open
    /// existing faces (mesh/cut.hpp; the node state copied exactly). The blade is placed on the
    /// current deformed vertex positions (what the user sees).
    TopologyChangeRecord cut(const CutPlane& plane);
    /// Refines the cells touching the sphere (`center`, `radius`; classified on the deformed
    /// positions) by `levels` (1..8) bisection rounds (mesh/refine.hpp). The state is carried by
    /// evaluating the old finite element field, so the deformed shape is unchanged.
    TopologyChangeRecord refine_sphere(const Vec3& center, double radius, int levels = 3);
    /// Refines every cell into 8, carrying the state like refine_sphere.
    TopologyChangeRecord refine_uniform();
    /// Goes back to the mesh, settings, positions, velocities and pins before the newest cut or
    /// refinement still on the history; throws edn::Error(Usage) when the history is empty.
    TopologyChangeRecord undo();
    /// Cut and refinement snapshots undo() can go back to (at most topology_options().undo_depth).
    std::size_t undo_depth() const;
    /// Opens (true) or closes (false) a group of topology changes that undo() takes back as one
    /// (the pieces of a cut stroke): while it is open only its first change puts a snapshot on
    /// the history; after an undo() the next change in it snapshots again. Each change is still
    /// recorded (topology_changes()).
    void group_changes(bool open);
    /// Every cut, refinement and undo applied, oldest first (kept across undo()).
    const std::vector<TopologyChangeRecord>& topology_changes() const;
    /// Limits of later topology changes; trims the undo history to the new depth.
    void set_topology_options(TopologyChangeOptions options);
    /// The limits in force.
    const TopologyChangeOptions& topology_options() const;

    /// Rebuilds with new settings (order, material, backend, ...) on the same mesh, carrying
    /// displacements, velocities (vertex nodes exact, new edge/face nodes interpolated
    /// linearly), pins (same order: every node's; otherwise derived from the vertex nodes' pins
    /// as set_vertex_pins does) and the drag spring. Not a topology change: not recorded, the
    /// undo history stays. Strong guarantee: on edn::Error (bad settings, backend unavailable)
    /// the simulation is unchanged.
    void change_settings(const SimulationSettings& settings);
    /// change_settings with only the order changed.
    void change_order(int order);

    /// Frame number stamped on topology change records: step() advances it; callers whose
    /// frames do not all step (the app while paused) set it.
    void set_frame(std::int64_t frame);
    /// The current frame number (steps taken unless set).
    std::int64_t frame() const;

private:
    /// What undo() goes back to.
    struct Snapshot {
        TetMesh mesh;                     ///< rest mesh before the change
        SimulationSettings settings;      ///< settings then
        std::vector<double> positions;    ///< 3 per node
        std::vector<double> velocities;   ///< 3 per node
        std::vector<std::uint8_t> pinned; ///< 1 per node
    };

    /// A backend of `settings.backend` for `mesh`.
    static std::unique_ptr<SimulationBackend> make_backend(TetMesh mesh,
                                                           const SimulationSettings& settings);
    /// Swaps in `next` (state and pins already set) and records `record`; the current mesh,
    /// settings, pins and the given node state go onto the undo history first.
    /// Returns the backend it swapped out.
    std::shared_ptr<SimulationBackend> install(std::shared_ptr<SimulationBackend> next,
                                               TopologyChangeRecord record,
                                               std::vector<double> positions,
                                               std::vector<double> velocities);
    /// The refinement `result` of `basis`'s mesh (begun at `start`) prepared: its record made,
    /// then prepare_nested().
    static PreparedChange prepare_refinement(const ChangeBasis& basis, TopologyChangeKind kind,
                                             RefineResult& result,
                                             std::chrono::steady_clock::time_point start);
    /// Builds the backend of `mesh`, whose cells lie in `basis`'s cells `cell_parent`
    /// (refinement, split cut), timed as the record's re-pattern, and plans the nested transfer
    /// into it (its time added to refine_ms); a cut's record takes its component count.
    static PreparedChange prepare_nested(const ChangeBasis& basis, TopologyChangeRecord record,
                                         TetMesh mesh, std::span<const Index> cell_parent);
    /// The end of every preparation: the device work done (CUDA), the basis recorded for the
    /// staleness check and prepare_ms (since `start`).
    static void finish_preparation(const ChangeBasis& basis, PreparedChange& prepared,
                                   std::chrono::steady_clock::time_point start);
    /// prepare_cut() in CutMode::Split.
    static PreparedChange prepare_split_cut(const ChangeBasis& basis, const CutPlane& plane);

    // Shared: a ChangeBasis keeps the backend a preparation reads alive (read only).
    std::shared_ptr<SimulationBackend> backend_;
    std::deque<Snapshot> history_;              // newest last
    std::vector<TopologyChangeRecord> changes_; // oldest first
    TopologyChangeOptions topology_options_;
    std::int64_t frame_ = 0;
    bool group_open_ = false;     // group_changes(true) in force
    bool group_snapshot_ = false; // the open group's snapshot is on the history
};

} // namespace edn
