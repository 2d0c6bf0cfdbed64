#pragma once
/// Internal: state shared by the backends of Simulation and the interface they implement.

#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sim/simulation.hpp"
#include "solver/multigrid.hpp"
#include "solver/newton.hpp"
#include "sparse/bin_bcsr_pattern.hpp"

#include <chrono>
#include <cmath>
#include <optional>

namespace edn {

/// Milliseconds since `start`.
inline double elapsed_ms(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
}

/// Whether a backend keeps the element Hessian blocks in memory: for every summation but inline,
/// and for inline with the two-level preconditioner at p >= 2, whose Galerkin coarse matrix sums
/// them. Inline otherwise computes each row's blocks where it adds them.
inline bool keeps_element_blocks(const SimulationSettings& s, int order) {
    return s.summation != SummationMethod::Inline ||
           preconditioner_in_use(s, order) == Preconditioner::TwoLevel;
}

/// Host-side set-up common to every backend (topology, node layout, pattern, masses, pins) and
/// the operations the one Newton loop (solver/newton.hpp) runs on: a backend implements those
/// operations and the state access below, nothing of the loop.
class SimulationBackend : public NewtonOperations {
public:
    /// `host_pattern`: build the Bin-BCSR* pattern on the host (the CPU backend; the CUDA backend
    /// builds its own on the device and leaves `pattern` empty). `prebuilt`: the mesh's topology
    /// when the caller already has it (the CUDA backend downloads the one built on the device;
    /// boundary faces and the per-simplex counts may be missing), else it is built here.
    SimulationBackend(TetMesh mesh, const SimulationSettings& settings, bool host_pattern = true,
                      std::optional<Topology> prebuilt = std::nullopt);
    /// Throws edn::Error like the constructor for bad settings or an empty mesh.
    static void check(const TetMesh& mesh, const SimulationSettings& settings);
    virtual ~SimulationBackend() = default;

    /// One step by solver/newton over this backend's operations.
    StepResult step() {
        // The forcing term sets settings.pcg's tolerance (what solve() reads) for the solves of
        // this step: the user's value comes back afterwards, also when the step throws.
        struct Restore {
            PcgSettings& pcg;
            double tolerance;
            ~Restore() { pcg.relative_tolerance = tolerance; }
        } restore{settings.pcg, settings.pcg.relative_tolerance};
        return newton_step(*this, newton_settings(settings, inertia_coefficient(), effective_dt()),
                           newton_memory);
    }
    /// The next solves' CG tolerance (the forcing term), until the end of the step.
    void set_linear_tolerance(double relative_tolerance) override {
        settings.pcg.relative_tolerance = relative_tolerance;
    }
    /// Newton's choice for the next evaluations (HessianProjection::OnDemand); a change makes
    /// the next assembly re-value the preconditioner's levels (restart_preconditioner()).
    void set_projection(bool project) override {
        if (project == projecting_) return;
        projecting_ = project;
        restart_preconditioner();
    }
    /// Whether element Hessians are projected now: always, never, or as Newton last set it.
    bool project_hessians() const {
        return settings.projection == HessianProjection::Always ||
               (settings.projection == HessianProjection::OnDemand && projecting_);
    }
    virtual std::vector<double> positions() const = 0;
    virtual std::vector<double> velocities() const = 0;
    /// Device pointer to 3 #nodes float positions (CUDA backend), nullptr on the host backends.
    virtual const float* device_positions() const { return nullptr; }
    /// Overwrites the state; what the Newton loop kept of the last step no longer applies.
    void set_state(const std::vector<double>& x, const std::vector<double>& v) {
        newton_memory = {};
        load_state(x, v);
    }
    virtual std::vector<double> von_mises_stress() const = 0;
    /// Per-cell von Mises stress of the current state in device memory (CUDA backend; valid
    /// until the next call or step), nullptr on the host backends.
    virtual const float* device_von_mises_stress() { return nullptr; }
    /// Incremental potential of the next step at node positions y (3 per node) from the current
    /// state, and its gradient (free dofs) when `gradient` is not null.
    virtual double incremental_potential(const std::vector<double>& y,
                                         std::vector<double>* gradient) = 0;
    /// H v for the Hessian of incremental_potential at y (as the Newton step assembles it).
    virtual std::vector<double> hessian_product(const std::vector<double>& y,
                                                const std::vector<double>& v) = 0;
    /// Simulation::multigrid_levels.
    virtual std::vector<std::vector<double>> multigrid_levels(const std::vector<double>& /*y*/) {
        return {};
    }
    /// The PCG warm start the next step's first solve uses (3 per node, host copy); empty when
    /// none is kept or the backend does not hand it out (then a restored state starts cold).
    virtual std::vector<double> warm_start() const { return {}; }
    /// Sets the warm start; false when the backend does not take one.
    virtual bool set_warm_start(const std::vector<double>& /*warm_start*/) { return false; }
    /// Builds now the preconditioner set-up that assemble() would build lazily for the present
    /// pattern and pins (SolverSetupStats; the multigrid hierarchy, uploaded on CUDA): a topology
    /// change's preparation calls it off the step thread. Idempotent; when the pins differ at an
    /// assembly, that assembly builds it again (the lazy path stays the fallback).
    virtual void prepare_solver() {}
    /// Called after pins changed.
    virtual void pins_changed() {}
    /// Drops the multigrid's lagged values: the next assembly re-values them (a state taken for
    /// saving resumes with none, Simulation::solver_memory; the element Hessians change kind,
    /// set_projection).
    void restart_preconditioner() { multigrid_refresh_.invalidate(); }
    /// Called after `drag` changed (the CUDA backend uploads a new region).
    virtual void drag_changed() {}
    /// The summation it runs (settings.summation resolved: summation_in_use).
    virtual SummationMethod summation() const = 0;
    /// Non-zero blocks and bytes of the system matrix.
    virtual std::int64_t nnz_blocks() const { return pattern.nnz_blocks(); }
    virtual std::size_t matrix_bytes() const { return pattern.matrix_bytes(sizeof(double)); }
    /// Bytes of the element Hessian blocks kept between evaluate() and assemble() (0 when
    /// keeps_element_blocks() is false: inline summation computes them where it adds them).
    virtual std::size_t element_block_bytes() const { return 0; }
    /// Simulation::matrix_free_bytes.
    virtual std::size_t matrix_free_bytes() const { return 0; }

    TetMesh mesh;
    SimulationSettings settings;
    Topology topology;
    NodeLayout layout;
    BinBcsrPattern pattern;
    std::vector<Index> cell_nodes;   ///< #T x m
    std::vector<double> rest;        ///< 3 #nodes rest positions
    std::vector<double> mass;        ///< #nodes lumped (HRZ) mass
    std::vector<std::uint8_t> fixed; ///< #nodes pin mask
    std::optional<DragSpring> drag;
    Index components = 0;
    NewtonMemory newton_memory; ///< what the Newton loop carries between steps
    /// Milliseconds of the last pattern build, topology to summation plans (CUDA: device time of
    /// the GPU stages; CPU: host time).
    double pattern_ms = 0;
    SolverSetupStats solver_setup; ///< the backend's preconditioner set-up builds

    /// Counts a set-up build begun at `start`, inside a step's assembly when `in_step`.
    void count_solver_setup(std::chrono::steady_clock::time_point start, bool in_step) {
        ++solver_setup.builds;
        if (in_step) ++solver_setup.builds_in_step;
        solver_setup.last_build_ms = elapsed_ms(start);
    }

    /// Coefficient c of the inertia term c/2 (y - y~)^T M (y - y~) and the effective step.
    double inertia_coefficient() const;
    double effective_dt() const;
    /// Coefficient (ground_friction / h) of the friction term of the nodes in contact; 0 without
    /// a ground and in static solves.
    double ground_friction_coefficient() const {
        if (!settings.ground_height || settings.integrator == Integrator::Static) return 0.0;
        return settings.ground_friction / effective_dt();
    }
    /// Coarse PCG iterations per two-level preconditioner application: the settings' value, or
    /// the backend's measured default when it is 0.
    int coarse_iterations(int backend_default) const {
        return settings.coarse_iterations > 0 ? settings.coarse_iterations : backend_default;
    }

protected:
    /// When the backend's multigrid hierarchy is re-valued (the same rule on both backends).
    MultigridRefresh multigrid_refresh_;
    /// Positions and velocities (3 per node each) into the backend's state.
    virtual void load_state(const std::vector<double>& x, const std::vector<double>& v) = 0;

private:
    bool projecting_ = false; ///< set_projection's last value (on demand: starts exact)
};

/// The CPU backend (double).
std::unique_ptr<SimulationBackend> make_cpu_backend(TetMesh mesh,
                                                    const SimulationSettings& settings);
/// The CUDA backend (double Newton level, float matrix and PCG); throws edn::Error(Unsupported)
/// in a build without CUDA.
std::unique_ptr<SimulationBackend> make_cuda_backend(TetMesh mesh,
                                                     const SimulationSettings& settings);

} // namespace edn
