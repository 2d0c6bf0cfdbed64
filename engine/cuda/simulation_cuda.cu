// CUDA backend of Simulation (float): the operations of the Newton loop (solver/newton.hpp) on
// device vectors. The element kernel, gradient gather, Hessian summation into the Bin-BCSR*
// pattern of cuda::Assembly, PCG (cuda::Pcg) and the line search's evaluations all run on the
// device; the host reads back only the scalars the Newton loop branches on (potential, slope,
// residual norm: a few per iteration).
#include "core/dispatch.hpp"
#include "cuda/cuda_assembly.hpp"
#include "cuda/cuda_check.cuh"
#include "cuda/cuda_multigrid.hpp"
#include "cuda/cuda_pcg.hpp"
#include "cuda/cuda_two_level.hpp"
#include "cuda/simulation_kernels.cuh"
#include "sim/material_dispatch.hpp"
#include "sim/simulation_backend.hpp"

#include <chrono>
#include <cmath>

namespace edn {
namespace {

using namespace cuda_simulation;

class CudaBackend final : public SimulationBackend {
public:
    /// `assembly`: built on the device from `m` (topology there) with `topology` its download;
    /// null for meshes too large for the device topology (then the host builds it).
    CudaBackend(TetMesh m, const SimulationSettings& s, std::unique_ptr<cuda::Assembly> assembly,
                std::optional<Topology> prebuilt);
    // x_, y_, trial_, x_start_ and y_tilde_ hold displacements u = x - X (float keeps the digits
    // of small motions of large bodies); positions are X + u.
    std::vector<double> positions() const override {
        std::vector<double> u = download(x_);
        for (std::size_t k = 0; k < u.size(); ++k) u[k] += rest[k];
        return u;
    }
    std::vector<double> velocities() const override { return download(v_); }
    const float* device_positions() const override { return positions_.data(); }
    std::vector<double> von_mises_stress() const override;
    const float* device_von_mises_stress() override;
    double incremental_potential(const std::vector<double>& y,
                                 std::vector<double>* gradient) override {
        const Index n = layout.num_nodes();
        EDN_CUDA_CHECK(
            cudaMemcpy(x_start_.data(), x_.data(), x_.bytes(), cudaMemcpyDeviceToDevice));
        predictor_kernel<<<blocks_for(n), kBlock>>>(
            x_.data(), v_.data(), fixed_.data(), static_cast<float>(effective_dt()),
            settings.integrator != Integrator::Static, n, y_tilde_.data(), y_.data());
        EDN_CUDA_CHECK_LAUNCH();
        upload(trial_, minus_rest(y));
        const double e =
            evaluate(trial_.data(), gradient ? (kEnergy | kGradient) : kEnergy, g_.data());
        if (gradient) *gradient = download(g_);
        return e;
    }
    std::vector<double> hessian_product(const std::vector<double>& y,
                                        const std::vector<double>& v) override {
        incremental_potential(y, nullptr); // sets y~, x_start and trial_ = y
        evaluate(trial_.data(), kEnergy | kGradient | kHessian, g_.data());
        assemble(trial_.data());
        upload(rhs_, v);
        cuda::spmv(assembly_->device_matrix(), rhs_.data(), dx_.data());
        return download(dx_);
    }
    std::int64_t nnz_blocks() const override { return assembly_->nnz_blocks(); }
    std::size_t matrix_bytes() const override { return assembly_->matrix_bytes(); }
    void pins_changed() override {
        EDN_CUDA_CHECK(
            cudaMemcpy(fixed_.data(), fixed.data(), fixed.size(), cudaMemcpyHostToDevice));
    }

    // Newton operations (solver/newton.hpp).
    void begin_step() override;
    double evaluate(NewtonVector at, int outputs, NewtonVector gradient) override {
        return evaluate(vector(at).data(), outputs, vector(gradient).data());
    }
    double last_strain_energy() const override { return last_strain_energy_; }
    double start_potential(double strain_at_start) override {
        return strain_at_start + node_potential(x_start_.data());
    }
    void restart_at_start() override {
        EDN_CUDA_CHECK(
            cudaMemcpy(y_.data(), x_start_.data(), y_.bytes(), cudaMemcpyDeviceToDevice));
    }
    void assemble() override {
        assemble(y_.data());
        cuda::device_synchronize(); // the caller times the assembly
    }
    PcgResult solve(bool warm) override;
    void keep_first_direction() override {
        EDN_CUDA_CHECK(
            cudaMemcpyAsync(first_dx_.data(), dx_.data(), dx_.bytes(), cudaMemcpyDeviceToDevice));
    }
    double dot(NewtonVector a, NewtonVector b) override {
        return device_dot(vector(a).data(), vector(b).data(),
                          static_cast<std::int64_t>(vector(a).size()));
    }
    void set_trial(double alpha) override;
    void scaled_gradient_direction(double scale) override;
    void accept_trial(bool with_gradient) override {
        std::swap(y_, trial_);
        if (with_gradient) std::swap(g_, g_trial_);
    }
    bool update_state() override;
    double state_strain_energy() override;
    double state_kinetic_energy() override;
    /// Energies are float element sums (added in double): their round-off, relative.
    double energy_rounding() const override { return 1e-7; }

protected:
    void load_state(const std::vector<double>& x, const std::vector<double>& v) override {
        upload(x_, minus_rest(x));
        upload(v_, v);
        update_positions();
    }

private:
    DeviceBuffer<float>& vector(NewtonVector v) { return newton_vectors_[static_cast<int>(v)]; }
    static std::vector<double> download(const DeviceBuffer<float>& b) {
        std::vector<float> f(b.size());
        if (!f.empty())
            EDN_CUDA_CHECK(cudaMemcpy(f.data(), b.data(), b.bytes(), cudaMemcpyDeviceToHost));
        return {f.begin(), f.end()};
    }
    static void upload(DeviceBuffer<float>& b, const std::vector<double>& v) {
        std::vector<float> f(v.begin(), v.end());
        if (!f.empty())
            EDN_CUDA_CHECK(cudaMemcpy(b.data(), f.data(), b.bytes(), cudaMemcpyHostToDevice));
    }
    /// Sum of `count` floats on the device (in double on the host after the copy).
    double device_sum(const float* values, std::int64_t count);
    double device_dot(const float* a, const float* b, std::int64_t count);
    /// Element pass + node pass at y; returns the potential; fills `gradient` with kGradient.
    double evaluate(const float* y, int outputs, float* gradient);
    /// The potential's node terms (inertia, gravity, ground) and the drag spring at y: all of it
    /// but the element energies (no gradient).
    double node_potential(const float* y);
    /// The drag spring's energy at y (0 without one), its gradient added to `gradient` when that
    /// is not null.
    double drag_energy(const float* y, float* gradient);
    template <int P, class Material>
    void launch_elements(const Material& material, const float* y, int outputs);
    /// The element pass of the settings' material and order at y.
    void launch_elements(const float* y, int outputs);
    template <class F> void with_material(F&& f) const;
    NodeTerms node_terms() const;
    /// x - X on the host.
    std::vector<double> minus_rest(const std::vector<double>& x) const {
        std::vector<double> u(x.size());
        for (std::size_t k = 0; k < x.size(); ++k) u[k] = x[k] - rest[k];
        return u;
    }
    /// positions_ = X + u.
    void update_positions() {
        const std::int64_t n = static_cast<std::int64_t>(x_.size());
        positions_kernel<<<blocks_for(n), kBlock>>>(rest_x_.data(), x_.data(), n,
                                                    positions_.data());
        EDN_CUDA_CHECK_LAUNCH();
    }
    /// Sums the element Hessians at y and adds the mass, ground and drag terms.
    void assemble(const float* y);

    std::unique_ptr<cuda::Assembly> assembly_;
    std::unique_ptr<cuda::Pcg> pcg_;
    std::unique_ptr<cuda::CoarseLevel> coarse_; ///< two-level preconditioner (p >= 2)
    /// Multigrid preconditioner: built on the host from the downloaded pattern on the first
    /// assemble() and when the pins change (multigrid_fixed_: the pins it was built for).
    std::unique_ptr<cuda::Multigrid> multigrid_;
    std::vector<std::uint8_t> multigrid_fixed_;
    void build_multigrid();
    LameParameters<float> lame_{};
    QuadratureTet<float> rule_{};
    DeviceBuffer<RestElement<float>> rest_elements_;
    DeviceBuffer<float> x_, v_, y_tilde_, x_start_, rhs_, scratch_;
    /// The Newton loop's vectors by NewtonVector, and names for them.
    std::array<DeviceBuffer<float>, kNewtonVectors> newton_vectors_;
    DeviceBuffer<float>&y_ = newton_vectors_[int(NewtonVector::Iterate)],
    &trial_ = newton_vectors_[int(NewtonVector::Trial)],
    &g_ = newton_vectors_[int(NewtonVector::Gradient)],
    &g_trial_ = newton_vectors_[int(NewtonVector::TrialGradient)],
    &dx_ = newton_vectors_[int(NewtonVector::Direction)];
    DeviceBuffer<float> rest_x_, positions_; ///< X and X + u (3 per node)
    DeviceBuffer<float> first_dx_; ///< the last step's first Newton correction (PCG warm start)
    DeviceBuffer<float> mass_, cell_energy_, node_energy_, forces_, extra_;
    DeviceBuffer<float> damping_energy_; ///< per cell Rayleigh stiffness damping potential
    DeviceBuffer<float> von_mises_;      ///< per cell, device_von_mises_stress()
    /// Per cell von Mises stress of the current state into `out` (#cells device floats).
    void compute_von_mises(float* out) const;
    /// beta / h (0 for static solves or beta = 0).
    float damping_coefficient() const;
    ElementDamping element_damping();
    DeviceBuffer<std::uint8_t> fixed_;
    DeviceBuffer<double> reduce_out_;
    DeviceBuffer<double> reduce_partials_;   // kReduceBlocks block totals of device_sum/dot
    DeviceBuffer<unsigned int> reduce_done_; // finished blocks (reset by the last one)
    double last_strain_energy_ = 0;          ///< W of the last evaluate()
    DeviceBuffer<int> bad_;
};

CudaBackend::CudaBackend(TetMesh m, const SimulationSettings& s,
                         std::unique_ptr<cuda::Assembly> assembly, std::optional<Topology> prebuilt)
    : SimulationBackend(std::move(m), s, /*host_pattern=*/false, std::move(prebuilt)),
      assembly_(std::move(assembly)) {
    const Index n = layout.num_nodes();
    const Index nt = mesh.num_cells();
    const int npc = nodes_per_cell(layout.order);
    const auto lame = lame_from_young_poisson(settings.young, settings.poisson);
    lame_ = {static_cast<float>(lame.lambda), static_cast<float>(lame.mu)};
    rule_ = quadrature_for_degree<float>(element_quadrature_degree(layout.order));
    // Topology, counts, bins, allocation, columns and maps on the device; the host set-up of the
    // base class (masses, rest positions, components) used the device topology's download. The
    // GPU topology numbers edges and faces as the host does (tests/cuda).
    if (!assembly_) assembly_ = std::make_unique<cuda::Assembly>(mesh, topology, layout.order);
    assembly_->build_pattern();
    assembly_->set_reproducible_maps(settings.deterministic);
    if (settings.summation == SummationMethod::PerEntry) assembly_->build_per_entry_map();
    {
        const cuda::AssemblyTimes& t = assembly_->times();
        pattern_ms = t.topology + t.count + t.bin_offsets + t.alloc + t.columns +
                     (settings.summation == SummationMethod::PerEntry ? t.maps : 0.0);
    }
    EDN_ASSERT(assembly_->layout().num_nodes() == layout.num_nodes(),
               "device and host node layouts differ");
    cuda::PcgOptions pcg_options;
    pcg_options.upper_spmv = !settings.deterministic; // its atomics' order varies run to run
    pcg_ = std::make_unique<cuda::Pcg>(n, pcg_options);
    if (settings.preconditioner == Preconditioner::TwoLevel && layout.order >= 2)
        coarse_ = std::make_unique<cuda::CoarseLevel>(mesh, topology, layout, assembly_.get());
    std::vector<RestElement<float>> rest_host(nt);
    for (Index t = 0; t < nt; ++t) {
        double X[4][3];
        for (int v = 0; v < 4; ++v)
            for (int d = 0; d < 3; ++d) X[v][d] = mesh.positions[mesh.cells[t][v]][d];
        const TetGeometry<double> g = tet_geometry(X);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                rest_host[t].inverse_jacobian[i][j] =
                    static_cast<float>(g.inverse_jacobian.m[i][j]);
        rest_host[t].abs_det = static_cast<float>(std::abs(g.det_jacobian));
    }
    rest_elements_.resize(nt);
    EDN_CUDA_CHECK(cudaMemcpy(rest_elements_.data(), rest_host.data(), rest_elements_.bytes(),
                              cudaMemcpyHostToDevice));
    const std::size_t dofs = 3 * static_cast<std::size_t>(n);
    for (auto* b :
         {&x_, &v_, &y_, &y_tilde_, &x_start_, &trial_, &g_, &g_trial_, &dx_, &rhs_, &scratch_})
        b->resize(dofs);
    mass_.resize(n);
    std::vector<float> mass_f(mass.begin(), mass.end());
    EDN_CUDA_CHECK(cudaMemcpy(mass_.data(), mass_f.data(), mass_.bytes(), cudaMemcpyHostToDevice));
    cell_energy_.resize(nt);
    node_energy_.resize(n);
    forces_.resize(static_cast<std::size_t>(nt) * npc * 3);
    extra_.resize(1);
    fixed_.resize(n);
    bad_.resize(1);
    reduce_out_.resize(1);
    reduce_partials_.resize(kReduceBlocks);
    reduce_done_.resize(1);
    EDN_CUDA_CHECK(cudaMemset(reduce_done_.data(), 0, reduce_done_.bytes()));
    pins_changed();
    rest_x_.resize(dofs);
    positions_.resize(dofs);
    first_dx_.resize(dofs);
    upload(rest_x_, rest);
    EDN_CUDA_CHECK(cudaMemset(x_.data(), 0, x_.bytes())); // at rest: u = 0
    update_positions();
    EDN_CUDA_CHECK(cudaMemset(v_.data(), 0, v_.bytes()));
    assembly_->device_element_blocks(); // allocate once
}

template <class F> void CudaBackend::with_material(F&& f) const {
    edn::with_material(settings.material, lame_, f);
}

void CudaBackend::launch_elements(const float* y, int outputs) {
    with_material([&](const auto& material) {
        with_order(layout.order, [&]<int P>() { launch_elements<P>(material, y, outputs); });
    });
}

template <int P, class Material>
void CudaBackend::launch_elements(const Material& material, const float* y, int outputs) {
    const Index nt = mesh.num_cells();
    const CellNodesView cn = assembly_->device_cell_nodes();
    float* blocks = (outputs & kHessian) ? assembly_->device_element_blocks() : nullptr;
    if constexpr (P >= 2) {
        // Hessian passes of p >= 2 elements: m threads per element (see the kernel). The rules:
        // 4 points at p = 2 (degree 2), 14 at p = 3 (degree 4: the positive degree-5 rule).
        constexpr int kMaxQ = P == 2 ? 4 : 14;
        if (outputs == (kEnergy | kGradient | kHessian) && damping_coefficient() == 0.f &&
            rule_.num_points <= kMaxQ) {
            using H = CooperativeHessian<P, kMaxQ>;
            element_hessian_cooperative_kernel<P, kMaxQ>
                <<<static_cast<unsigned int>((nt + H::kElements - 1) / H::kElements),
                   H::kElements * H::m>>>(material, rest_elements_.data(), rule_, cn.nodes, nt, y,
                                          settings.project_hessian, cell_energy_.data(),
                                          forces_.data(), blocks);
            EDN_CUDA_CHECK_LAUNCH();
            return;
        }
    }
    // 128 threads per block: the element kernels are register-heavy.
    constexpr int kElementBlock = 128;
    element_kernel<P>
        <<<static_cast<unsigned int>((nt + kElementBlock - 1) / kElementBlock), kElementBlock>>>(
            material, rest_elements_.data(), rule_, cn.nodes, nt, y, outputs,
            settings.project_hessian, cell_energy_.data(), forces_.data(), blocks,
            element_damping());
    EDN_CUDA_CHECK_LAUNCH();
}

float CudaBackend::damping_coefficient() const {
    return settings.integrator == Integrator::Static
               ? 0.f
               : static_cast<float>(settings.stiffness_damping / effective_dt());
}

ElementDamping CudaBackend::element_damping() {
    ElementDamping d;
    d.coefficient = damping_coefficient();
    if (d.coefficient > 0.f) {
        if (damping_energy_.size() != static_cast<std::size_t>(mesh.num_cells()))
            damping_energy_.resize(mesh.num_cells());
        d.y_start = x_start_.data();
        d.lame = lame_;
        d.energy = damping_energy_.data();
    }
    return d;
}

NodeTerms CudaBackend::node_terms() const {
    NodeTerms t{};
    t.inertia = static_cast<float>(inertia_coefficient());
    t.damping = settings.integrator == Integrator::Static
                    ? 0.f
                    : static_cast<float>(settings.mass_damping / effective_dt());
    for (int d = 0; d < 3; ++d) t.gravity[d] = static_cast<float>(settings.gravity[d]);
    t.has_ground = settings.ground_height.has_value();
    t.ground_height = settings.ground_height ? static_cast<float>(*settings.ground_height) : 0.f;
    t.ground_stiffness = static_cast<float>(settings.ground_stiffness);
    return t;
}

void CudaBackend::assemble(const float* y) {
    const Index n = layout.num_nodes();
    // Inline (linear p = 1) evaluates K itself: K is linear in (lambda, mu), so the stiffness
    // damping's (beta / h) K0 = (beta / h) K is a scaling of the Lame parameters.
    const float scale =
        settings.summation == SummationMethod::Inline ? 1.f + damping_coefficient() : 1.f;
    assembly_->sum(settings.summation, {lame_.lambda * scale, lame_.mu * scale});
    const BinBcsrMatrixView<float> a = assembly_->device_matrix();
    const float mass_scale = static_cast<float>(inertia_coefficient() + node_terms().damping);
    add_diagonal_kernel<<<blocks_for(n), kBlock>>>(mass_.data(), mass_scale, rest_x_.data(), y,
                                                   node_terms(), n, a.diag);
    if (drag) add_drag_hessian_kernel<<<1, 32>>>(*drag, a);
    EDN_CUDA_CHECK_LAUNCH();
    // Galerkin coarse matrix of the element Hessians + the restricted mass terms (the drag
    // spring and ground penalty are left to the fine level), as the CPU backend does.
    if (coarse_) coarse_->assemble(assembly_->device_element_blocks(), mass_.data(), mass_scale);
    if (settings.preconditioner == Preconditioner::Multigrid) {
        if (!multigrid_ || multigrid_fixed_ != fixed) build_multigrid();
        multigrid_->revalue(a);
    }
}

void CudaBackend::build_multigrid() {
    MultigridSettings mg;
    mg.coarsest_dofs = 64; // inverted on the host at every re-value: keep it tiny
    const BinBcsrPattern host_pattern = assembly_->download_pattern();
    MultigridHierarchy h;
    if (layout.order == 1) {
        std::vector<double> positions(3 * mesh.positions.size());
        for (std::size_t i = 0; i < mesh.positions.size(); ++i)
            for (int d = 0; d < 3; ++d) positions[3 * i + d] = mesh.positions[i][d];
        h = cpu::build_multigrid(host_pattern, positions.data(), fixed.data(), mg);
    } else {
        const CoarseSpace space = make_coarse_space(mesh, topology, layout, false);
        const GivenTransfer p1 = p1_transfer(space, mesh, fixed.data());
        h = cpu::build_multigrid(host_pattern, nullptr, fixed.data(), mg, &p1);
    }
    multigrid_ = std::make_unique<cuda::Multigrid>(h);
    multigrid_fixed_ = fixed;
}

double CudaBackend::device_sum(const float* values, std::int64_t count) {
    if (count == 0) return 0.0;
    const unsigned int grid = std::min<unsigned int>(blocks_for(count), kReduceBlocks);
    reduce_kernel<false><<<grid, kBlock>>>(values, nullptr, count, reduce_partials_.data(),
                                           reduce_done_.data(), reduce_out_.data());
    EDN_CUDA_CHECK_LAUNCH();
    double out = 0;
    EDN_CUDA_CHECK(cudaMemcpy(&out, reduce_out_.data(), sizeof(double), cudaMemcpyDeviceToHost));
    return out;
}

double CudaBackend::device_dot(const float* a, const float* b, std::int64_t count) {
    if (count == 0) return 0.0;
    const unsigned int grid = std::min<unsigned int>(blocks_for(count), kReduceBlocks);
    reduce_kernel<true><<<grid, kBlock>>>(a, b, count, reduce_partials_.data(), reduce_done_.data(),
                                          reduce_out_.data());
    EDN_CUDA_CHECK_LAUNCH();
    double out = 0;
    EDN_CUDA_CHECK(cudaMemcpy(&out, reduce_out_.data(), sizeof(double), cudaMemcpyDeviceToHost));
    return out;
}

double CudaBackend::evaluate(const float* y, int outputs, float* gradient) {
    launch_elements(y, outputs);
    const Index n = layout.num_nodes();
    const bool with_gradient = outputs & kGradient;
    node_kernel<<<blocks_for(n), kBlock>>>(
        node_terms(), assembly_->device_node_cells(), assembly_->device_cell_nodes().nodes,
        nodes_per_cell(layout.order), mass_.data(), fixed_.data(), rest_x_.data(), y,
        y_tilde_.data(), x_start_.data(), forces_.data(), n, with_gradient, node_energy_.data(),
        gradient);
    EDN_CUDA_CHECK_LAUNCH();
    last_strain_energy_ = device_sum(cell_energy_.data(), mesh.num_cells());
    double total = last_strain_energy_ + device_sum(node_energy_.data(), n);
    // Rayleigh stiffness damping: part of the potential, not of the strain energy.
    if (damping_coefficient() > 0.f) total += device_sum(damping_energy_.data(), mesh.num_cells());
    return total + drag_energy(y, with_gradient ? gradient : nullptr);
}

double CudaBackend::drag_energy(const float* y, float* gradient) {
    if (!drag) return 0.0;
    drag_kernel<<<1, 1>>>(*drag, rest_x_.data(), y, fixed_.data(), gradient != nullptr,
                          extra_.data(), gradient);
    EDN_CUDA_CHECK_LAUNCH();
    float e = 0;
    EDN_CUDA_CHECK(cudaMemcpy(&e, extra_.data(), sizeof(float), cudaMemcpyDeviceToHost));
    return e;
}

double CudaBackend::node_potential(const float* y) {
    const Index n = layout.num_nodes();
    node_kernel<<<blocks_for(n), kBlock>>>(
        node_terms(), assembly_->device_node_cells(), assembly_->device_cell_nodes().nodes,
        nodes_per_cell(layout.order), mass_.data(), fixed_.data(), rest_x_.data(), y,
        y_tilde_.data(), x_start_.data(), forces_.data(), n, false, node_energy_.data(), g_.data());
    EDN_CUDA_CHECK_LAUNCH();
    return device_sum(node_energy_.data(), n) + drag_energy(y, nullptr);
}

void CudaBackend::begin_step() {
    const Index n = layout.num_nodes();
    EDN_CUDA_CHECK(cudaMemcpy(x_start_.data(), x_.data(), x_.bytes(), cudaMemcpyDeviceToDevice));
    predictor_kernel<<<blocks_for(n), kBlock>>>(
        x_.data(), v_.data(), fixed_.data(), static_cast<float>(effective_dt()),
        settings.integrator != Integrator::Static, n, y_tilde_.data(), y_.data());
    EDN_CUDA_CHECK_LAUNCH();
}

PcgResult CudaBackend::solve(bool warm) {
    const Index n = layout.num_nodes();
    const std::int64_t dofs = 3 * static_cast<std::int64_t>(n);
    negate_kernel<<<blocks_for(dofs), kBlock>>>(g_.data(), dofs, rhs_.data());
    // Pins may have changed since the first correction was kept: pinned dofs start from 0.
    if (warm)
        masked_copy_kernel<<<blocks_for(n), kBlock>>>(first_dx_.data(), fixed_.data(), n,
                                                      dx_.data());
    else
        EDN_CUDA_CHECK(cudaMemsetAsync(dx_.data(), 0, dx_.bytes()));
    EDN_CUDA_CHECK_LAUNCH();
    PcgSettings pcg = settings.pcg;
    pcg.warm_start = warm;
    const BinBcsrMatrixView<float> a = assembly_->device_matrix();
    if (multigrid_) return multigrid_->solve(a, rhs_.data(), dx_.data(), pcg, fixed_.data());
    if (!coarse_) return pcg_->solve(a, rhs_.data(), dx_.data(), pcg, fixed_.data());
    // Coarse PCG iterations enqueued per application: 6 (a 127K-tet p = 2 frame: 2 -> 31.5 ms,
    // 4 -> 23.9, 6 -> 23.6, 10 -> 26.8, 16 -> 29.9, 24 -> 31.8; iterations after the coarse
    // solve converged still cost their launches).
    return pcg_->solve_two_level(
        a, coarse_->view(kCoarseTolerance, coarse_iterations(kCoarseIterationsCuda)), rhs_.data(),
        dx_.data(), pcg, fixed_.data());
}

void CudaBackend::set_trial(double alpha) {
    const std::int64_t dofs = static_cast<std::int64_t>(y_.size());
    axpy_kernel<<<blocks_for(dofs), kBlock>>>(y_.data(), static_cast<float>(alpha), dx_.data(),
                                              dofs, trial_.data());
    EDN_CUDA_CHECK_LAUNCH();
}

void CudaBackend::scaled_gradient_direction(double scale) {
    const Index n = layout.num_nodes();
    fallback_direction_kernel<<<blocks_for(n), kBlock>>>(g_.data(), mass_.data(), fixed_.data(),
                                                         static_cast<float>(scale), n, dx_.data());
    EDN_CUDA_CHECK_LAUNCH();
}

bool CudaBackend::update_state() {
    const Index n = layout.num_nodes();
    EDN_CUDA_CHECK(cudaMemset(bad_.data(), 0, sizeof(int)));
    update_state_kernel<<<blocks_for(n), kBlock>>>(y_.data(), x_start_.data(), fixed_.data(),
                                                   int(settings.integrator), float(settings.dt), n,
                                                   x_.data(), v_.data(), bad_.data());
    EDN_CUDA_CHECK_LAUNCH();
    int bad = 0;
    EDN_CUDA_CHECK(cudaMemcpy(&bad, bad_.data(), sizeof(int), cudaMemcpyDeviceToHost));
    if (bad) {
        EDN_CUDA_CHECK(
            cudaMemcpy(x_.data(), x_start_.data(), x_.bytes(), cudaMemcpyDeviceToDevice));
        EDN_CUDA_CHECK(cudaMemset(v_.data(), 0, v_.bytes()));
    }
    update_positions();
    return !bad;
}

double CudaBackend::state_strain_energy() {
    launch_elements(x_.data(), kEnergy);
    return device_sum(cell_energy_.data(), mesh.num_cells());
}

double CudaBackend::state_kinetic_energy() {
    const Index n = layout.num_nodes();
    kinetic_kernel<<<blocks_for(n), kBlock>>>(mass_.data(), v_.data(), n, node_energy_.data());
    EDN_CUDA_CHECK_LAUNCH();
    return device_sum(node_energy_.data(), n);
}

std::vector<double> CudaBackend::von_mises_stress() const {
    DeviceBuffer<float> out(mesh.num_cells());
    compute_von_mises(out.data());
    return download(out);
}

const float* CudaBackend::device_von_mises_stress() {
    if (von_mises_.size() != static_cast<std::size_t>(mesh.num_cells()))
        von_mises_.resize(mesh.num_cells());
    compute_von_mises(von_mises_.data());
    return von_mises_.data();
}

void CudaBackend::compute_von_mises(float* out) const {
    const Index nt = mesh.num_cells();
    if (nt == 0) return;
    const QuadratureTet<float> centroid = quadrature_for_degree<float>(1);
    const Index* nodes = assembly_->device_cell_nodes().nodes;
    with_material([&](const auto& material) {
        with_order(layout.order, [&]<int P>() {
            von_mises_kernel<P><<<blocks_for(nt), kBlock>>>(material, rest_elements_.data(),
                                                            centroid, nodes, nt, x_.data(), out);
        });
    });
    EDN_CUDA_CHECK_LAUNCH();
}

} // namespace

std::unique_ptr<SimulationBackend> make_cuda_backend(TetMesh mesh,
                                                     const SimulationSettings& settings) {
    // A topology change rebuilds everything: the topology comes from the device (sort/unique
    // there, one download) instead of being built again on the host, which took ~80 ms of the
    // ~100 ms rebuild at 127K tets.
    SimulationBackend::check(mesh, settings);
    std::unique_ptr<cuda::Assembly> assembly;
    std::optional<Topology> topology;
    if (mesh.num_vertices() < (1 << 21)) {
        assembly = std::make_unique<cuda::Assembly>(mesh, settings.order);
        topology = assembly->download_topology();
    }
    return std::make_unique<CudaBackend>(std::move(mesh), settings, std::move(assembly),
                                         std::move(topology));
}

} // namespace edn
