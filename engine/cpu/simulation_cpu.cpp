// CPU backend of Simulation (double): the operations of the Newton loop (solver/newton.hpp) on
// host vectors. Element kernels in parallel over cells, gradient gathered per node, Hessian summed
// into the fixed Bin-BCSR* pattern, block-Jacobi or two-level PCG.
#include "core/dispatch.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "cpu/element_sum.hpp"
#include "cpu/simd_loop.hpp"
#include "cpu/summation_rows.hpp"
#include "fem/polar_decomposition.hpp"
#include "sim/element_kernels.hpp"
#include "sim/material_dispatch.hpp"
#include "sim/simulation_backend.hpp"
#include "solver/multigrid.hpp"
#include "solver/two_level.hpp"
#include "sparse/bin_bcsr_matrix.hpp"
#include "sparse/spmv.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

namespace edn {
namespace {

/// Elements whose SVDs the neo-Hookean Hessian pass computes side by side.
constexpr int kSvdBatch = 4;

class CpuBackend final : public SimulationBackend {
public:
    CpuBackend(TetMesh m, const SimulationSettings& s)
        : SimulationBackend(std::move(m), s), matrix_(pattern),
          summation_(summation_in_use(settings, layout.order, mesh.num_cells(), 0)) {
        const int npc = nodes_per_cell(layout.order);
        rest_elements_.resize(mesh.num_cells());
        parallel_for(
            0, mesh.num_cells(),
            [&](std::int64_t t) {
                double X[4][3];
                for (int v = 0; v < 4; ++v)
                    for (int d = 0; d < 3; ++d) X[v][d] = mesh.positions[mesh.cells[t][v]][d];
                const TetGeometry<double> g = tet_geometry(X);
                RestElement<double>& r = rest_elements_[t];
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j)
                        r.inverse_jacobian[i][j] = g.inverse_jacobian.m[i][j];
                r.abs_det = std::abs(g.det_jacobian);
            },
            kHeavyItems);
        rule_ = quadrature_for_degree<double>(element_quadrature_degree(layout.order));
        // Inline summation computes the blocks where it adds them: no element matrices, unless
        // the two-level preconditioner's Galerkin coarse matrix (p >= 2) needs them.
        if (element_blocks_needed())
            blocks_.resize(static_cast<std::size_t>(mesh.num_cells()) * npc * npc * 9);
        forces_.resize(static_cast<std::size_t>(mesh.num_cells()) * npc * 3);
        cell_energy_.resize(mesh.num_cells());
        cell_damping_energy_.resize(mesh.num_cells());
        const CellNodesView cells_view{cell_nodes.data(), npc, mesh.num_cells()};
        if (summation_ == SummationMethod::PerEntry) {
            map_ = cpu::build_per_entry_map(pattern, cells_view);
            element_sum_.emplace(pattern, cells_view);
        }
        if (preconditioner_in_use(settings, layout.order) == Preconditioner::TwoLevel) {
            coarse_ = make_coarse_space(mesh, topology, layout);
            coarse_matrix_ = BinBcsrMatrix<double>(coarse_->pattern);
        }
        x_ = rest;
        v_.assign(rest.size(), 0.0);
        lame_ = lame_from_young_poisson(settings.young, settings.poisson);
        positions_flat_.resize(3 * mesh.positions.size());
        for (std::size_t i = 0; i < mesh.positions.size(); ++i)
            for (int d = 0; d < 3; ++d) positions_flat_[3 * i + d] = mesh.positions[i][d];
    }

    std::vector<double> positions() const override { return x_; }
    std::vector<double> velocities() const override { return v_; }
    std::vector<double> von_mises_stress() const override;
    double incremental_potential(const std::vector<double>& y,
                                 std::vector<double>* gradient) override {
        prepare_step();
        const double w = evaluate_elements(y, gradient ? (kEnergy | kGradient) : kEnergy);
        if (gradient) gradient->assign(y.size(), 0.0);
        return potential(y, w, gradient);
    }

    std::vector<double> hessian_product(const std::vector<double>& y,
                                        const std::vector<double>& v) override {
        prepare_step();
        evaluate_elements(y, kEnergy | kGradient | kHessian);
        assemble_hessian(y);
        std::vector<double> out(v.size());
        cpu::spmv(matrix_.view(), v.data(), out.data());
        return out;
    }

    SummationMethod summation() const override { return summation_; }
    std::size_t element_block_bytes() const override { return blocks_.size() * sizeof(double); }

    // Newton operations (solver/newton.hpp).
    void begin_step() override;
    double evaluate(NewtonVector at, int outputs, NewtonVector gradient) override {
        // potential() writes every entry of the gradient (sized by begin_step).
        std::vector<double>* g = (outputs & kGradient) ? &vector(gradient) : nullptr;
        return potential(vector(at), evaluate_elements(vector(at), outputs), g);
    }
    double last_strain_energy() const override { return last_strain_energy_; }
    double start_potential(double strain_at_start) override {
        return potential(x_start_, strain_at_start, nullptr);
    }
    void restart_at_start() override { y_ = x_start_; }
    void assemble() override;
    PcgResult solve(bool warm) override;
    void keep_first_direction() override { first_dx_ = dx_; }
    std::vector<double> warm_start() const override { return first_dx_; }
    bool set_warm_start(const std::vector<double>& warm_start) override {
        first_dx_ = warm_start;
        return true;
    }
    double dot(NewtonVector a, NewtonVector b) override {
        const std::vector<double>&u = vector(a), &w = vector(b);
        double s = 0;
        for (std::size_t k = 0; k < u.size(); ++k) s += u[k] * w[k];
        return s;
    }
    void set_trial(double alpha) override {
        trial_.resize(y_.size());
        for (std::size_t k = 0; k < y_.size(); ++k) trial_[k] = y_[k] + alpha * dx_[k];
    }
    void scaled_gradient_direction(double scale) override {
        for (Index i = 0; i < layout.num_nodes(); ++i)
            for (int d = 0; d < 3; ++d)
                dx_[3 * i + d] = fixed[i] ? 0.0 : -g_[3 * i + d] / (mass[i] * scale);
    }
    void accept_trial(bool with_gradient) override {
        y_.swap(trial_);
        if (with_gradient) g_.swap(g_trial_);
    }
    bool update_state() override;
    double state_strain_energy() override {
        evaluate_elements(x_, kEnergy);
        return last_strain_energy_;
    }
    double state_kinetic_energy() override {
        double kinetic = 0;
        for (Index i = 0; i < layout.num_nodes(); ++i)
            for (int d = 0; d < 3; ++d) kinetic += 0.5 * mass[i] * v_[3 * i + d] * v_[3 * i + d];
        return kinetic;
    }
    double energy_rounding() const override { return kDoubleEnergyRounding; } // double sums

protected:
    void load_state(const std::vector<double>& x, const std::vector<double>& v) override {
        x_ = x;
        v_ = v;
    }

private:
    std::vector<double>& vector(NewtonVector v) { return newton_vectors_[static_cast<int>(v)]; }
    /// x_start = x, y~ = x + h v (or x for static).
    void prepare_step() {
        const double h = effective_dt();
        const bool dynamic = settings.integrator != Integrator::Static;
        x_start_ = x_;
        y_tilde_.resize(x_.size());
        for (std::size_t k = 0; k < x_.size(); ++k)
            y_tilde_[k] = x_[k] + (dynamic ? h * v_[k] : 0.0);
    }
    /// Element energies (and gradients, Hessians) at node positions y, Rayleigh stiffness
    /// damping included; returns the sum (W plus the damping potential) and keeps W alone in
    /// last_strain_energy_.
    double evaluate_elements(const std::vector<double>& y, int outputs);
    template <int P, class Material>
    double evaluate_elements_with(const Material& material, const std::vector<double>& y,
                                  int outputs);
    /// The sum of the cells' energies (and damping potentials when damping > 0) in cell order;
    /// keeps W alone in last_strain_energy_.
    double sum_cell_energies(double damping);
    /// Incremental potential and (optionally) its gradient on free dofs.
    double potential(const std::vector<double>& y, double strain_energy,
                     std::vector<double>* gradient) const;
    /// The element Hessians of the last evaluation and the node terms at y into matrix_ (and the
    /// coarse level's matrix).
    void assemble_hessian(const std::vector<double>& y);
    /// Builds the multigrid hierarchy when it is missing or was built for other pins
    /// (`in_step`: by an assembly, SolverSetupStats).
    void ensure_multigrid(bool in_step) {
        if (multigrid_ && multigrid_->fixed == fixed) return;
        const auto start = std::chrono::steady_clock::now();
        multigrid_ = cpu::build_mesh_multigrid(pattern, mesh, topology, layout, fixed.data(),
                                               simulation_multigrid_settings(layout.order));
        multigrid_refresh_.invalidate();
        count_solver_setup(start, in_step);
    }
    void prepare_solver() override {
        if (preconditioner_in_use(settings, layout.order) == Preconditioner::Multigrid)
            ensure_multigrid(false);
        // The solves' buffers allocated and touched here too: no page faults in the first step
        // (the two-level coarse blocks: 1.2 KB per cell).
        if (coarse_) {
            coarse_blocks_.assign(static_cast<std::size_t>(mesh.num_cells()) * 16 * 9, 0.0);
            two_level_ws_.fine.resize(layout.num_nodes());
        } else {
            pcg_workspace_.resize(layout.num_nodes());
        }
    }
    /// Re-values the hierarchy with matrix_, assembled at `y`: the tentative prolongators follow
    /// the rigid-body modes of y first (unless settings.multigrid_rest_modes).
    void revalue_multigrid_hierarchy(const std::vector<double>& y) {
        if (!settings.multigrid_rest_modes) cpu::retentative_multigrid(*multigrid_, y.data());
        cpu::revalue_multigrid(*multigrid_, matrix_.view());
    }
    bool element_blocks_needed() const { return keeps_element_blocks(settings, layout.order); }
    /// Per-entry summation on one thread sums the blocks as the elements come (element_sum_,
    /// cpu/element_sum.hpp: equal bit for bit). The two-level coarse matrix needs the stored
    /// blocks, and threads would race on shared rows.
    bool sums_while_evaluating() const { return element_sum_ && !coarse_ && num_threads() == 1; }
    /// Inline summation of every material and order: each row computes its cells' rows.
    void assemble_inline(const std::vector<double>& y);
    /// beta / h of the Rayleigh stiffness damping (0 for static solves).
    double stiffness_damping_coefficient() const {
        return settings.integrator == Integrator::Static
                   ? 0.0
                   : settings.stiffness_damping / effective_dt();
    }
    bool all_finite(const std::vector<double>& v) const {
        for (double x : v)
            if (!std::isfinite(x)) return false;
        return true;
    }

    std::vector<RestElement<double>> rest_elements_;
    QuadratureTet<double> rule_;
    std::vector<double> blocks_, forces_, cell_energy_, cell_damping_energy_;
    double last_strain_energy_ = 0; ///< W of the last evaluate_elements (damping excluded)
    PerEntryMap map_;
    /// Per-entry summation's running sum (sums_while_evaluating), and whether it holds the last
    /// evaluation's Hessians (assemble_hessian then copies it instead of summing blocks_).
    std::optional<cpu::ElementSum> element_sum_;
    bool element_sum_fresh_ = false;
    BinBcsrMatrix<double> matrix_;
    SummationMethod summation_; ///< settings.summation resolved (summation_in_use)
    PcgWorkspace<double> pcg_workspace_;
    std::optional<CoarseSpace> coarse_; ///< the two-level preconditioner's P1 space (p >= 2)
    /// The multigrid hierarchy, built on the first assemble() and again when the pins change.
    std::optional<MultigridHierarchy> multigrid_;
    BinBcsrMatrix<double> coarse_matrix_;
    TwoLevelWorkspace two_level_ws_;
    std::vector<double> coarse_blocks_, node_diagonal_; ///< scratch of the coarse assembly
    std::vector<double> x_, v_, y_tilde_, x_start_, positions_flat_;
    /// The Newton loop's vectors by NewtonVector, and names for them.
    std::array<std::vector<double>, kNewtonVectors> newton_vectors_;
    std::vector<double>&y_ = newton_vectors_[int(NewtonVector::Iterate)],
    &trial_ = newton_vectors_[int(NewtonVector::Trial)],
    &g_ = newton_vectors_[int(NewtonVector::Gradient)],
    &g_trial_ = newton_vectors_[int(NewtonVector::TrialGradient)],
    &dx_ = newton_vectors_[int(NewtonVector::Direction)];
    mutable std::vector<double> node_energy_; ///< scratch of potential()
    std::vector<double> rhs_;                 ///< scratch of solve(): -g
    std::vector<double> first_dx_; ///< the last step's first Newton correction (PCG warm start)
    LameParameters<double> lame_{};
};

template <int P, class Material>
double CpuBackend::evaluate_elements_with(const Material& material, const std::vector<double>& y,
                                          int outputs) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const bool project = project_hessians();
    const double damping = stiffness_damping_coefficient();
    const bool sum_now = (outputs & kHessian) && sums_while_evaluating();
    if (outputs & kHessian) element_sum_fresh_ = sum_now;
    if (sum_now) element_sum_->clear();
    // Cells in order on this thread when their blocks are summed as they come, else in parallel.
    // (Compiled for AVX2 where the CPU has it: cpu/simd_loop.hpp.)
    const auto for_each = [&](std::int64_t count, auto&& body) {
        if (sum_now)
            cpu::simd_for(0, count, body);
        else
            cpu::parallel_simd_for(count, body);
    };
    const auto gather = [&](std::int64_t t, double(*x)[3], double(*delta)[3]) {
        for (int a = 0; a < m; ++a)
            for (int d = 0; d < 3; ++d) {
                const std::int64_t k = 3 * std::int64_t(cell_nodes[t * m + a]) + d;
                x[a][d] = y[k];
                delta[a][d] = damping > 0 ? y[k] - x_start_[k] : 0.0;
            }
    };
    // Where cell t's blocks go: blocks_, or `local` when summed as they come.
    const auto blocks_of = [&](std::int64_t t, double* local) {
        return sum_now ? local : blocks_.data() + t * m * m * 9;
    };
    const auto finish = [&](std::int64_t t, const double(*delta)[3], double energy,
                            double* blocks) {
        double damping_energy = 0;
        if (damping > 0)
            add_stiffness_damping<P>(
                lame_, damping, rest_elements_[t], rule_, delta, outputs, damping_energy,
                reinterpret_cast<double(*)[3]>(forces_.data() + t * m * 3), blocks);
        cell_energy_[t] = energy;
        cell_damping_energy_[t] = damping_energy;
        if (sum_now) element_sum_->add(t, blocks);
    };
    const std::int64_t cells = mesh.num_cells();
    if constexpr (std::is_same_v<Material, NeoHookean<double>>) {
        // Rules of up to this many points keep their SVDs on the stack (p <= 3 has <= 11).
        constexpr int kPoints = P == 1 ? 1 : 16;
        if ((outputs & kHessian) && rule_.num_points <= kPoints) {
            // The neo-Hookean tangent needs an SVD per quadrature point, a serial chain of
            // divisions and square roots: kSvdBatch elements' SVDs side by side overlap them
            // (equal bit for bit to one at a time), then each element as evaluate_element_damped.
            const std::int64_t groups = (cells + kSvdBatch - 1) / kSvdBatch;
            for_each(groups, [&](std::int64_t group) {
                const std::int64_t t0 = group * kSvdBatch;
                const int count = static_cast<int>(std::min<std::int64_t>(kSvdBatch, cells - t0));
                double x[kSvdBatch][m][3], delta[kSvdBatch][m][3];
                Svd3<double> svds[kSvdBatch][kPoints];
                for (int l = 0; l < count; ++l) gather(t0 + l, x[l], delta[l]);
                for (int q = 0; q < rule_.num_points; ++q) {
                    Mat3<double> F[kSvdBatch];
                    for (int l = 0; l < kSvdBatch; ++l)
                        F[l] =
                            l < count
                                ? element_point<P>(rest_elements_[t0 + l], rule_, q, x[l], false).F
                                : mat3_identity<double>();
                    Svd3<double> out[kSvdBatch];
                    svd3_rotation_variant_batch<kSvdBatch>(F, out);
                    for (int l = 0; l < count; ++l) svds[l][q] = out[l];
                }
                double local[m * m * 9];
                for (int l = 0; l < count; ++l) {
                    const std::int64_t t = t0 + l;
                    double energy = 0;
                    double* blocks = blocks_of(t, local);
                    evaluate_element<P>(material, rest_elements_[t], rule_, x[l], outputs, project,
                                        energy,
                                        reinterpret_cast<double(*)[3]>(forces_.data() + t * m * 3),
                                        blocks, false, svds[l]);
                    finish(t, delta[l], energy, blocks);
                }
            });
            return sum_cell_energies(damping);
        }
    }
    for_each(cells, [&](std::int64_t t) {
        double x[m][3], delta[m][3];
        gather(t, x, delta);
        double energy = 0;
        double local[m * m * 9];
        double* blocks = blocks_of(t, local);
        evaluate_element<P>(material, rest_elements_[t], rule_, x, outputs, project, energy,
                            reinterpret_cast<double(*)[3]>(forces_.data() + t * m * 3), blocks);
        finish(t, delta, energy, blocks);
    });
    return sum_cell_energies(damping);
}

double CpuBackend::sum_cell_energies(double damping) {
    // Deterministic sums (fixed order).
    double total = 0;
    for (double e : cell_energy_) total += e;
    last_strain_energy_ = total;
    if (damping > 0)
        for (double e : cell_damping_energy_) total += e;
    return total;
}

void CpuBackend::assemble_inline(const std::vector<double>& y) {
    const int m = nodes_per_cell(layout.order);
    const CellNodesView cells_view{cell_nodes.data(), m, mesh.num_cells()};
    const bool project = project_hessians();
    const double damping = stiffness_damping_coefficient();
    with_material(settings.material, lame_, [&](const auto& material) {
        with_order(layout.order, [&]<int P>() {
            constexpr int mp = lagrange_tet_num_nodes(P);
            const auto row = [&](Index t, int a, double(*blocks)[9]) -> const double* {
                double x[mp][3];
                for (int b = 0; b < mp; ++b)
                    for (int d = 0; d < 3; ++d)
                        x[b][d] = y[3 * std::int64_t(cell_nodes[std::int64_t(t) * mp + b]) + d];
                element_hessian_row<P>(material, rest_elements_[t], rule_, x, a, project, false,
                                       lame_, damping, blocks);
                return &blocks[0][0];
            };
            cpu::sum_cell_rows(node_cells_view(topology, layout), cells_view, row, matrix_.view());
        });
    });
}

double CpuBackend::evaluate_elements(const std::vector<double>& y, int outputs) {
    if (!element_blocks_needed()) outputs &= ~kHessian; // assemble_hessian computes them inline
    return with_material(settings.material, lame_, [&](const auto& material) {
        return with_order(layout.order,
                          [&]<int P>() { return evaluate_elements_with<P>(material, y, outputs); });
    });
}

double CpuBackend::potential(const std::vector<double>& y, double strain_energy,
                             std::vector<double>* gradient) const {
    const Index n = layout.num_nodes();
    const double c = inertia_coefficient();
    const double damping =
        settings.integrator == Integrator::Static ? 0.0 : settings.mass_damping / effective_dt();
    const double friction = ground_friction_coefficient();
    const int m = nodes_per_cell(layout.order);
    // Per-node terms, summed in a fixed order afterwards (deterministic); reused buffer because
    // the line search calls this several times per Newton iteration.
    std::vector<double>& node_energy = node_energy_;
    node_energy.assign(n, 0.0);
    parallel_for(0, n, [&](std::int64_t i) {
        double e = 0;
        for (int d = 0; d < 3; ++d) {
            const std::int64_t k = 3 * i + d;
            const double dy = c > 0 ? y[k] - y_tilde_[k] : 0.0;
            const double dv = y[k] - x_start_[k];
            e += 0.5 * mass[i] * (c * dy * dy + damping * dv * dv) -
                 mass[i] * settings.gravity[d] * dv; // gravity work from x_start (constant shift)
            if (gradient) (*gradient)[k] = mass[i] * (c * dy + damping * dv - settings.gravity[d]);
        }
        if (settings.ground_height) {
            const double pen = y[3 * i + 2] - *settings.ground_height;
            if (pen < 0) {
                e += 0.5 * settings.ground_stiffness * pen * pen;
                if (gradient) (*gradient)[3 * i + 2] += settings.ground_stiffness * pen;
            }
            // Friction of the nodes in contact at the step's start: tangential damping.
            if (friction > 0 && x_start_[3 * i + 2] < *settings.ground_height) {
                for (int d = 0; d < 2; ++d) {
                    const double dv = y[3 * i + d] - x_start_[3 * i + d];
                    e += 0.5 * friction * mass[i] * dv * dv;
                    if (gradient) (*gradient)[3 * i + d] += friction * mass[i] * dv;
                }
            }
        }
        node_energy[i] = e;
    });
    double total = strain_energy;
    for (double e : node_energy) total += e;
    if (gradient) {
        // Element forces gathered per node through the node->cells maps (deterministic).
        const NodeCellsView nc = node_cells_view(topology, layout);
        parallel_for(0, n, [&](std::int64_t i) {
            Index simplex = 0;
            const CsrView& csr = nc.csr_of(static_cast<Index>(i), simplex);
            for (Index e = csr.offsets[simplex]; e < csr.offsets[simplex + 1]; ++e) {
                const Index t = csr.indices[e];
                int a = 0;
                while (cell_nodes[std::int64_t(t) * m + a] != i) ++a;
                for (int d = 0; d < 3; ++d)
                    (*gradient)[3 * i + d] += forces_[(std::int64_t(t) * m + a) * 3 + d];
            }
        });
    }
    if (drag && !drag->region.empty()) {
        for (const DragNode& node : drag->region) {
            const double k = drag->stiffness * node.weight;
            for (int d = 0; d < 3; ++d) {
                const double diff = y[3 * node.node + d] - drag->target[d] - node.offset[d];
                total += 0.5 * k * diff * diff;
                if (gradient) (*gradient)[3 * node.node + d] += k * diff;
            }
        }
    } else if (drag) {
        double p[3] = {0, 0, 0};
        for (int k = 0; k < 3; ++k)
            for (int d = 0; d < 3; ++d) p[d] += drag->weights[k] * y[3 * drag->vertices[k] + d];
        for (int d = 0; d < 3; ++d) {
            const double diff = p[d] - drag->target[d];
            total += 0.5 * drag->stiffness * diff * diff;
            if (gradient)
                for (int k = 0; k < 3; ++k)
                    (*gradient)[3 * drag->vertices[k] + d] +=
                        drag->stiffness * drag->weights[k] * diff;
        }
    }
    if (gradient)
        for (Index i = 0; i < n; ++i)
            if (fixed[i]) (*gradient)[3 * i] = (*gradient)[3 * i + 1] = (*gradient)[3 * i + 2] = 0;
    return total;
}

void CpuBackend::assemble_hessian(const std::vector<double>& y) {
    const int m = nodes_per_cell(layout.order);
    const CellNodesView cells_view{cell_nodes.data(), m, mesh.num_cells()};
    switch (summation_) {
    case SummationMethod::Auto: // resolved in the constructor: never here
    case SummationMethod::PerEntry:
        if (element_sum_fresh_)
            element_sum_->copy_to(matrix_.view());
        else
            cpu::sum_per_entry(map_.view(), blocks_.data(), matrix_.view());
        break;
    case SummationMethod::PerSimplex:
        cpu::sum_per_simplex(node_cells_view(topology, layout), cells_view, blocks_.data(),
                             matrix_.view());
        break;
    case SummationMethod::Inline: {
        if (settings.material != Material::Linear || layout.order != 1) {
            assemble_inline(y);
            break;
        }
        cpu::sum_inline_linear_p1(node_cells_view(topology, layout), mesh.cells.data(),
                                  positions_flat_.data(), lame_, matrix_.view());
        // Inline recomputes K from the rest geometry (linear material, p = 1): the damping
        // Hessian (beta/h) K0 is then (beta/h) times that same matrix.
        const double damping = stiffness_damping_coefficient();
        if (damping > 0) {
            const std::int64_t values = 9 * std::int64_t(pattern.bin_offsets[pattern.num_bins()]);
            const std::int64_t diag = 9 * std::int64_t(layout.num_nodes());
            parallel_for(0, values, [&](std::int64_t i) { matrix_.values[i] *= 1.0 + damping; });
            parallel_for(0, diag, [&](std::int64_t i) { matrix_.diag[i] *= 1.0 + damping; });
        }
        break;
    }
    }
    const Index n = layout.num_nodes();
    const double c = inertia_coefficient();
    const double damping =
        settings.integrator == Integrator::Static ? 0.0 : settings.mass_damping / effective_dt();
    parallel_for(0, n, [&](std::int64_t i) {
        const double add = mass[i] * (c + damping);
        for (int k : {0, 4, 8}) matrix_.diag[k * std::int64_t(n) + i] += add;
    });
    if (preconditioner_in_use(settings, layout.order) == Preconditioner::Multigrid) {
        ensure_multigrid(true);
        if (multigrid_refresh_.revalue_at_assembly(settings.multigrid_every_iteration))
            revalue_multigrid_hierarchy(y);
    }
    if (coarse_) {
        // Galerkin coarse matrix of the element Hessians + the restricted mass terms (the drag
        // spring and ground penalty are left to the fine level).
        node_diagonal_.resize(static_cast<std::size_t>(n));
        parallel_for(0, n, [&](std::int64_t i) { node_diagonal_[i] = mass[i] * (c + damping); });
        cpu::assemble_coarse(*coarse_, blocks_.data(), mesh.num_cells(), node_diagonal_,
                             coarse_blocks_, coarse_matrix_);
    }
    if (drag && !drag->region.empty()) {
        for (const DragNode& node : drag->region)
            for (int k : {0, 4, 8})
                matrix_.diag[k * std::int64_t(n) + node.node] += drag->stiffness * node.weight;
    } else if (drag) {
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) {
                const Index row = drag->vertices[a], col = drag->vertices[b];
                const double w = drag->stiffness * drag->weights[a] * drag->weights[b];
                if (row == col) {
                    for (int k : {0, 4, 8}) matrix_.diag[k * std::int64_t(n) + row] += w;
                } else {
                    const Index slot = pattern.find_slot(row, col);
                    if (slot < 0) continue; // vertices of one face always share a cell
                    const Index bin = row / kBinRows;
                    const Index j = (slot - pattern.bin_offsets[bin]) / kBinRows;
                    for (int k : {0, 4, 8})
                        matrix_
                            .values[bin_bcsr_value_index(pattern.bin_offsets.data(), row, j, k)] +=
                            w;
                }
            }
    }
    if (settings.ground_height) {
        const double friction = ground_friction_coefficient();
        for (Index i = 0; i < n; ++i) {
            if (y[3 * i + 2] < *settings.ground_height)
                matrix_.diag[8 * std::int64_t(n) + i] += settings.ground_stiffness;
            if (friction > 0 && x_start_[3 * i + 2] < *settings.ground_height)
                for (int k : {0, 4}) matrix_.diag[k * std::int64_t(n) + i] += friction * mass[i];
        }
    }
}

void CpuBackend::begin_step() {
    prepare_step();
    multigrid_refresh_.new_step(settings.multigrid_lag);
    y_ = x_;
    if (settings.integrator != Integrator::Static)
        for (Index i = 0; i < layout.num_nodes(); ++i)
            if (!fixed[i])
                for (int d = 0; d < 3; ++d) y_[3 * i + d] = y_tilde_[3 * i + d];
    const std::size_t dofs = y_.size();
    g_.resize(dofs), g_trial_.resize(dofs), dx_.resize(dofs), trial_.resize(dofs);
}

void CpuBackend::assemble() {
    assemble_hessian(y_);
}

PcgResult CpuBackend::solve(bool warm) {
    const std::size_t dofs = y_.size();
    rhs_.resize(dofs);
    warm = warm && first_dx_.size() == dofs;
    for (std::size_t k = 0; k < dofs; ++k)
        rhs_[k] = -g_[k], dx_[k] = warm && !fixed[k / 3] ? first_dx_[k] : 0.0; // pins may change
    PcgSettings pcg = settings.pcg;
    pcg.warm_start = warm;
    if (multigrid_) {
        PcgResult r = cpu::pcg_multigrid(matrix_.view(), *multigrid_, rhs_.data(), dx_.data(), pcg,
                                         pcg_workspace_, fixed.data());
        if (multigrid_refresh_.retry_now(r)) { // a lagged hierarchy broke down: re-value, again
            revalue_multigrid_hierarchy(y_);
            multigrid_refresh_.revalued_now();
            std::fill(dx_.begin(), dx_.end(), 0.0);
            pcg.warm_start = false;
            r = cpu::pcg_multigrid(matrix_.view(), *multigrid_, rhs_.data(), dx_.data(), pcg,
                                   pcg_workspace_, fixed.data());
        }
        multigrid_refresh_.after_solve(r);
        return r;
    }
    if (!coarse_)
        return cpu::pcg(matrix_.view(), rhs_.data(), dx_.data(), pcg, pcg_workspace_, fixed.data());
    PcgSettings coarse_solve; // inexact coarse solves: the outer CG is flexible
    coarse_solve.relative_tolerance = kCoarseTolerance;
    coarse_solve.max_iterations = coarse_iterations(kCoarseIterationsCpu);
    return cpu::pcg_two_level(matrix_.view(), *coarse_, coarse_matrix_.view(), rhs_.data(),
                              dx_.data(), pcg, coarse_solve, two_level_ws_, fixed.data());
}

bool CpuBackend::update_state() {
    const std::size_t dofs = y_.size();
    bool finite = all_finite(y_);
    if (finite) {
        if (settings.integrator == Integrator::Midpoint) {
            for (std::size_t k = 0; k < dofs; ++k) {
                const double x_new = 2.0 * y_[k] - x_start_[k];
                v_[k] = 4.0 * (y_[k] - x_start_[k]) / settings.dt - v_[k];
                x_[k] = x_new;
            }
        } else if (settings.integrator == Integrator::BackwardEuler) {
            for (std::size_t k = 0; k < dofs; ++k) {
                v_[k] = (y_[k] - x_start_[k]) / settings.dt;
                x_[k] = y_[k];
            }
        } else {
            x_ = y_;
            std::fill(v_.begin(), v_.end(), 0.0);
        }
        finite = all_finite(x_) && all_finite(v_);
    }
    if (!finite) {
        x_ = x_start_;
        std::fill(v_.begin(), v_.end(), 0.0);
    }
    for (Index i = 0; i < layout.num_nodes(); ++i)
        if (fixed[i])
            for (int d = 0; d < 3; ++d) v_[3 * i + d] = 0.0;
    return finite;
}

std::vector<double> CpuBackend::von_mises_stress() const {
    const int m = nodes_per_cell(layout.order);
    std::vector<double> out(mesh.num_cells());
    const QuadratureTet<double> centroid = quadrature_for_degree<double>(1);
    auto run = [&](const auto& material) {
        parallel_for(
            0, mesh.num_cells(),
            [&](std::int64_t t) {
                double dN[20][3];
                with_order(layout.order, [&]<int P>() {
                    LagrangeTet<P, double>::grad(centroid.bary[0],
                                                 reinterpret_cast<double(*)[3]>(dN));
                });
                Mat3<double> F;
                const RestElement<double>& r = rest_elements_[t];
                for (int row = 0; row < 3; ++row)
                    for (int j = 0; j < 3; ++j) {
                        double s = 0;
                        for (int a = 0; a < m; ++a) {
                            const double g = r.inverse_jacobian[0][j] * dN[a][0] +
                                             r.inverse_jacobian[1][j] * dN[a][1] +
                                             r.inverse_jacobian[2][j] * dN[a][2];
                            s += x_[3 * cell_nodes[std::int64_t(t) * m + a] + row] * g;
                        }
                        F.m[row][j] = s;
                    }
                double psi;
                Mat3<double> P;
                material.evaluate(F, psi, P, nullptr, false);
                out[t] = von_mises(P, F);
            },
            kHeavyItems);
    };
    with_material(settings.material, lame_, run);
    return out;
}

} // namespace

std::unique_ptr<SimulationBackend> make_cpu_backend(TetMesh mesh,
                                                    const SimulationSettings& settings) {
    return std::make_unique<CpuBackend>(std::move(mesh), settings);
}

} // namespace edn
