// CUDA backend of Simulation: the operations of the Newton loop (solver/newton.hpp) on device
// vectors. The element kernel, gradient gather, Hessian summation into the Bin-BCSR* pattern of
// cuda::Assembly, PCG (cuda::Pcg) and the line search's evaluations all run on the device; the
// host reads back only the scalars the Newton loop branches on (potential, slope, residual norm:
// a few per iteration).
//
// Mixed precision: the Newton level is double, the linear solve float. Double: the state (x, v),
// x_start, y~, the five Newton vectors, the masses and rest positions of the node terms, the
// element energies and forces (element_kernel evaluates the material in double from the double
// displacements), the node gradient, the drag and every sum and dot product. Float: the element
// Hessian blocks, the Bin-BCSR* matrix, the PCG with its right-hand side and solution (rhs_,
// pcg_dx_, the warm start first_dx_), and the rendering buffers (positions_, von_mises_). solve()
// rounds -g to float, widens the PCG's solution into the double Direction, and checks the true
// residual of the double system in double (see solve()).
#include "core/dispatch.hpp"
#include "cuda/cuda_assembly.hpp"
#include "cuda/cuda_check.cuh"
#include "cuda/cuda_multigrid.hpp"
#include "cuda/cuda_pcg.hpp"
#include "cuda/cuda_two_level.hpp"
#include "cuda/element_cooperative.cuh"
#include "cuda/inline_summation.cuh"
#include "cuda/matrix_free.cuh"
#include "sim/material_dispatch.hpp"
#include "sim/simulation_backend.hpp"
#include "solver/lanczos.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace edn {
namespace {

using namespace cuda_simulation;

class CudaBackend final : public SimulationBackend {
public:
    /// `assembly`: built on the device from `m` (topology there) with `topology` its download;
    /// null for meshes too large for the device topology (then the host builds it).
    CudaBackend(TetMesh m, const SimulationSettings& s, std::unique_ptr<cuda::Assembly> assembly,
                std::optional<Topology> prebuilt);
    // x_, y_, trial_, x_start_ and y_tilde_ hold displacements u = x - X (the element kernel's
    // F = I + grad u keeps the digits of small strains, and the Hessian's float copy of u those
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
            x_.data(), v_.data(), fixed_.data(), effective_dt(),
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
        upload(rhs_, v); // the float matrix times v rounded to float, as the PCG applies it
        if (matrix_free_in_use())
            matrix_free_->apply(rhs_.data(), pcg_dx_.data(), false, cudaStreamPerThread);
        else
            cuda::spmv(assembly_->device_matrix(), rhs_.data(), pcg_dx_.data());
        return download(pcg_dx_);
    }
    std::vector<std::vector<double>> multigrid_levels(const std::vector<double>& y) override {
        incremental_potential(y, nullptr);
        evaluate(trial_.data(), kEnergy | kGradient | kHessian, g_.data());
        restart_preconditioner();
        assemble(trial_.data());
        std::vector<std::vector<double>> levels;
        for (int l = 0; multigrid_ && l + 1 < multigrid_->num_levels(); ++l) {
            const std::vector<float> c = multigrid_->download_coarse(l);
            levels.emplace_back(c.begin(), c.end());
            levels.back().push_back(multigrid_->lambda_max(l));
        }
        return levels;
    }
    std::int64_t nnz_blocks() const override { return assembly_->nnz_blocks(); }
    std::size_t matrix_bytes() const override { return assembly_->matrix_bytes(); }
    SummationMethod summation() const override { return summation_; }
    std::size_t element_block_bytes() const override { // blocks, or p = 1 inline's frames
        return assembly_->element_bytes() + frame_records_.bytes() + tangent_scratch_.bytes();
    }
    std::size_t matrix_free_bytes() const override { // the values and the re-value's table
        if (!matrix_free_) return 0;
        return matrix_free_->bytes() + galerkin_scratch_.bytes() +
               (multigrid_ ? multigrid_->matrix_free_revalue_bytes() : 0);
    }
    void pins_changed() override {
        EDN_CUDA_CHECK(
            cudaMemcpy(fixed_.data(), fixed.data(), fixed.size(), cudaMemcpyHostToDevice));
    }
    /// Uploads the drag's region when it differs from the one on the device (moving the target
    /// changes only DragSpring::target, passed by value to the kernels).
    void drag_changed() override { region_.upload(drag ? drag->region : std::vector<DragNode>{}); }
    /// The hierarchy built and uploaded on the calling thread's stream (a preparation's: finished
    /// there before the commit hands the backend on).
    void prepare_solver() override {
        if (preconditioner_in_use(settings, layout.order) == Preconditioner::Multigrid &&
            (!multigrid_ || multigrid_fixed_ != fixed))
            build_multigrid(false);
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
        // A float warm start for the float PCG: only a guess.
        const std::int64_t dofs = static_cast<std::int64_t>(dx_.size());
        to_float_kernel<<<blocks_for(dofs), kBlock>>>(dx_.data(), 1.0, dofs, first_dx_.data());
        EDN_CUDA_CHECK_LAUNCH();
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
    /// The potential is evaluated and summed in double, as on the CPU (per-cell energies from
    /// double material evaluations, per-node terms, fixed-order tree sums): the same round-off
    /// (the float element sums needed 1e-7).
    double energy_rounding() const override { return kDoubleEnergyRounding; }

protected:
    void load_state(const std::vector<double>& x, const std::vector<double>& v) override {
        upload(x_, minus_rest(x));
        upload(v_, v);
        update_positions();
    }

private:
    DeviceBuffer<double>& vector(NewtonVector v) { return newton_vectors_[static_cast<int>(v)]; }
    /// A device vector (float or double) copied to the host in double.
    template <class T> static std::vector<double> download(const DeviceBuffer<T>& b) {
        std::vector<T> f(b.size());
        if (!f.empty())
            EDN_CUDA_CHECK(cudaMemcpy(f.data(), b.data(), b.bytes(), cudaMemcpyDeviceToHost));
        return {f.begin(), f.end()};
    }
    /// A host vector into a device vector (float: rounded).
    template <class T> static void upload(DeviceBuffer<T>& b, const std::vector<double>& v) {
        std::vector<T> f(v.begin(), v.end());
        if (!f.empty())
            EDN_CUDA_CHECK(cudaMemcpy(b.data(), f.data(), b.bytes(), cudaMemcpyHostToDevice));
    }
    /// Sum of `count` values on the device, in double.
    double device_sum(const double* values, std::int64_t count);
    /// The same sum queued into reduce_out_[slot] (slot < kSumSlots), not read back: evaluate()
    /// reads its sums in one copy (a read-back costs the H100 machine's host about 9 us after
    /// the kernel; the four sums of an evaluation waited four times).
    void queue_sum(const double* values, std::int64_t count, int slot);
    static constexpr int kSumSlots = 4;
    /// a.b on the device, in double.
    double device_dot(const double* a, const double* b, std::int64_t count);
    /// One float PCG solve of the matrix for rhs_ into pcg_dx_ (block Jacobi or two-level).
    PcgResult float_solve(const PcgSettings& pcg);
    /// residual_ = -Gradient - A Direction (free rows) in double; returns its norm.
    double true_residual();
    /// Element pass + node pass at y; returns the potential; fills `gradient` with kGradient.
    double evaluate(const double* y, int outputs, double* gradient);
    /// The potential's node terms (inertia, gravity, ground) and the drag spring at y: all of it
    /// but the element energies (no gradient).
    double node_potential(const double* y);
    /// The drag spring's energy at y queued into reduce_out_[slot], its gradient added to
    /// `gradient` when that is not null; returns the slots used (0 without a drag, else 1).
    int queue_drag_energy(const double* y, double* gradient, int slot);
    template <int P, class Material>
    void launch_elements(const Material& material, const double* y, int outputs);
    /// The element pass of the settings' material and order at y.
    void launch_elements(const double* y, int outputs);
    template <class F> void with_material(F&& f) const;
    NodeTerms node_terms() const;
    /// x - X on the host.
    std::vector<double> minus_rest(const std::vector<double>& x) const {
        std::vector<double> u(x.size());
        for (std::size_t k = 0; k < x.size(); ++k) u[k] = x[k] - rest[k];
        return u;
    }
    /// positions_ = X + u, in float.
    void update_positions() {
        const std::int64_t n = static_cast<std::int64_t>(x_.size());
        positions_kernel<<<blocks_for(n), kBlock>>>(rest_x_.data(), x_.data(), n,
                                                    positions_.data());
        EDN_CUDA_CHECK_LAUNCH();
    }
    /// Sums the element Hessians at y and adds the mass, ground and drag terms.
    void assemble(const double* y);
    /// The node terms' Hessian (mass, ground, friction, a drag region) at y added to `target`.
    void add_diagonal_terms(const double* y, float mass_scale,
                            cuda_simulation::DiagonalTarget target);
    /// p >= 2 with the multigrid: the CG's and the cycle's order-p products and the true residual
    /// without the matrix's blocks (cuda/matrix_free.cuh), where its values came with the last
    /// Hessian (the cooperative element kernels: no stiffness damping). EDN_MATRIX_FREE=0 turns
    /// it off.
    std::unique_ptr<cuda::MatrixFreeOperator> matrix_free_;
    bool tangents_valid_ = false;  ///< the last Hessian evaluation wrote matrix_free_'s values
    /// Where the p >= 2 pass writes the tangent values of a chunk of cells whose assembled
    /// blocks are formed from them (launch_cooperative_elements), allocated on first use.
    DeviceBuffer<float4> tangent_scratch_;
    /// Its chunks' MiB of values: EDN_TANGENT_CHUNK_MIB (read at construction), default 256.
    double tangent_chunk_mib_ = 256.0;
    TangentScratch tangent_scratch();
    /// The matrix-free re-value's scratch where no element blocks' buffer is there to lend
    /// (inline summation), allocated on first use; nullptr where it does not fit in memory (the
    /// re-value then sums the matrix inline).
    DeviceBuffer<float> galerkin_scratch_;
    std::size_t galerkin_scratch_failed_ = 0; ///< the size that did not fit
    float* galerkin_scratch();
    bool blocks_deferred_ = false; ///< ... and left its element blocks to assemble_matrix()
    bool matrix_at_y_ = false;     ///< the matrix is summed at the last assembly's y
    /// The matrix at y: the deferred element blocks, their sums, the node and drag terms.
    void assemble_matrix(const double* y);
    float mass_scale() const {
        return static_cast<float>(inertia_coefficient() + node_terms().damping);
    }
    bool matrix_free_in_use() const {
        return matrix_free_ && tangents_valid_ &&
               preconditioner_in_use(settings, layout.order) == Preconditioner::Multigrid;
    }

    std::unique_ptr<cuda::Assembly> assembly_;
    std::unique_ptr<cuda::Pcg> pcg_;
    std::unique_ptr<cuda::CoarseLevel> coarse_; ///< two-level preconditioner (p >= 2)
    /// Multigrid preconditioner: built on the first assemble() and when the pins change
    /// (multigrid_fixed_: the pins it was built for), on the device (on the host from the
    /// downloaded pattern where the device build does not apply or runs out of memory).
    std::unique_ptr<cuda::Multigrid> multigrid_;
    std::vector<std::uint8_t> multigrid_fixed_;
    bool time_next_revalue_ = false; ///< EDN_MULTIGRID_BUILD=times: report the next re-value
    /// Builds the hierarchy for the present pins (`in_step`: by an assembly) and uploads it.
    void build_multigrid(bool in_step);
    LameParameters<float> lame_{};    ///< of the float Hessian (the Inline summation's K)
    LameParameters<double> lame_d_{}; ///< of the double energies and forces
    QuadratureTet<double> rule_{};
    QuadratureTet<float> rule_f_{}; ///< rule_ rounded, for the float element Hessians
    DeviceBuffer<RestElement<double>> rest_elements_;
    DeviceBuffer<double> reference_gradients_; ///< p >= 2: reference_gradient_table of rule_
    DeviceBuffer<double> x_, v_, y_tilde_, x_start_;
    DeviceBuffer<double> residual_; ///< solve()'s true residual of the Newton system
    DeviceBuffer<float> rhs_;       ///< the float PCG's right-hand side
    DeviceBuffer<float> pcg_dx_;    ///< the float PCG's solution (or correction)
    /// The Newton loop's vectors by NewtonVector, and names for them.
    std::array<DeviceBuffer<double>, kNewtonVectors> newton_vectors_;
    DeviceBuffer<double>&y_ = newton_vectors_[int(NewtonVector::Iterate)],
    &trial_ = newton_vectors_[int(NewtonVector::Trial)],
    &g_ = newton_vectors_[int(NewtonVector::Gradient)],
    &g_trial_ = newton_vectors_[int(NewtonVector::TrialGradient)],
    &dx_ = newton_vectors_[int(NewtonVector::Direction)];
    DeviceBuffer<double> rest_x_;   ///< X (3 per node)
    DeviceBuffer<float> positions_; ///< X + u (3 per node), for rendering
    DeviceBuffer<float> first_dx_;  ///< the last step's first Newton correction (PCG warm start)
    DeviceBuffer<float> mass_;      ///< lumped masses for the float matrix's diagonal
    DeviceBuffer<double> mass_d_;   ///< the same in double for the node terms
    DeviceBuffer<double> cell_energy_, node_energy_, forces_;
    /// node -> force slots t * m + a of its incident cells (force_slots_kernel): vertex, edge and
    /// face nodes' index arrays (per incidence, one entry per node of the simplex), and their
    /// view over node->cells' offsets.
    DeviceBuffer<Index> force_slots_[3];
    NodeCellsView force_slots_view_{};
    DeviceDragRegion region_;             ///< the drag's region on the device
    DeviceBuffer<double> damping_energy_; ///< per cell Rayleigh stiffness damping potential
    DeviceBuffer<float> von_mises_;       ///< per cell, device_von_mises_stress()
    /// Per cell von Mises stress of the current state into `out` (#cells device floats).
    void compute_von_mises(float* out) const;
    /// beta / h (0 for static solves or beta = 0).
    double damping_coefficient() const;
    /// Inline summation (inline_summation.cuh) for every material and order.
    bool inline_rows() const { return summation_ == SummationMethod::Inline; }
    SummationMethod summation_ = SummationMethod::PerEntry; ///< settings.summation resolved
    bool upper_blocks_ = false; ///< per-entry sums of element blocks in the upper layout
    /// The layout the element passes write: upper where the kernel stages its blocks (p = 1, the
    /// cooperative p >= 2 kernels without stiffness damping), else full (the map follows).
    cuda::BlockLayout block_layout() const {
        bool staged = layout.order == 1;
        with_order(layout.order, [&]<int P>() {
            if constexpr (P >= 2)
                staged = damping_coefficient() == 0.0 && cooperative_elements<P>(rule_);
        });
        return upper_blocks_ && staged ? cuda::BlockLayout::Upper : cuda::BlockLayout::Full;
    }
    DeviceBuffer<float> frame_records_; ///< p = 1 inline summation's tangent frames (per cell)
    bool element_blocks_needed() const { return keeps_element_blocks(settings, layout.order); }
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
    lame_d_ = lame;
    rule_ = quadrature_for_degree<double>(element_quadrature_degree(layout.order));
    rule_f_ = quadrature_for_degree<float>(element_quadrature_degree(layout.order));
    with_order(layout.order, [&]<int P>() {
        if constexpr (P >= 2) {
            const std::vector<double> table = reference_gradient_table<P>(rule_);
            reference_gradients_.resize(static_cast<std::int64_t>(table.size()));
            upload(reference_gradients_, table);
        }
    });
    // Topology, counts, bins, allocation, columns and maps on the device; the host set-up of the
    // base class (masses, rest positions, components) used the device topology's download. The
    // GPU topology numbers edges and faces as the host does (tests/cuda).
    if (!assembly_) assembly_ = std::make_unique<cuda::Assembly>(mesh, topology, layout.order);
    assembly_->build_pattern();
    assembly_->set_reproducible_maps(settings.deterministic);
    {
        int device = 0, l2 = 0;
        EDN_CUDA_CHECK(cudaGetDevice(&device));
        EDN_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
        summation_ = summation_in_use(settings, layout.order, mesh.num_cells(), l2);
    }
    // Per-entry and p = 1 inline sum over the per-entry map (inline computes the blocks it sums).
    const bool maps = summation_ == SummationMethod::PerEntry ||
                      (summation_ == SummationMethod::Inline && layout.order == 1);
    if (const char* env = std::getenv("EDN_TANGENT_CHUNK_MIB"); env && std::atof(env) > 0.0)
        tangent_chunk_mib_ = std::atof(env);
    // Per-entry sums of stored blocks take them in the upper layout (the element passes write
    // 55-63% of the blocks), unless the two-level coarse level reads them in the full one or
    // EDN_ELEMENT_BLOCKS=full.
    {
        const char* env = std::getenv("EDN_ELEMENT_BLOCKS");
        upper_blocks_ = summation_ == SummationMethod::PerEntry && element_blocks_needed() &&
                        preconditioner_in_use(settings, layout.order) != Preconditioner::TwoLevel &&
                        !(env && std::string_view(env) == "full");
    }
    if (maps) {
        // (the map built in the layout of the passes: no recode at the first one)
        if (element_blocks_needed()) assembly_->device_element_blocks(block_layout());
        assembly_->build_per_entry_map();
    }
    {
        const cuda::AssemblyTimes& t = assembly_->times();
        pattern_ms =
            t.topology + t.count + t.bin_offsets + t.alloc + t.columns + (maps ? t.maps : 0.0);
    }
    EDN_ASSERT(assembly_->layout().num_nodes() == layout.num_nodes(),
               "device and host node layouts differ");
    cuda::PcgOptions pcg_options;
    pcg_options.upper_spmv = !settings.deterministic; // its atomics' order varies run to run
    pcg_ = std::make_unique<cuda::Pcg>(n, pcg_options);
    if (preconditioner_in_use(settings, layout.order) == Preconditioner::TwoLevel)
        coarse_ = std::make_unique<cuda::CoarseLevel>(mesh, topology, layout, assembly_.get());
    // The rest geometry in double, as the CPU backend computes it (the float Hessian rounds it).
    std::vector<RestElement<double>> rest_host(nt);
    for (Index t = 0; t < nt; ++t) {
        double X[4][3];
        for (int v = 0; v < 4; ++v)
            for (int d = 0; d < 3; ++d) X[v][d] = mesh.positions[mesh.cells[t][v]][d];
        const TetGeometry<double> g = tet_geometry(X);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                rest_host[t].inverse_jacobian[i][j] = g.inverse_jacobian.m[i][j];
        rest_host[t].abs_det = std::abs(g.det_jacobian);
    }
    rest_elements_.resize(nt);
    EDN_CUDA_CHECK(cudaMemcpy(rest_elements_.data(), rest_host.data(), rest_elements_.bytes(),
                              cudaMemcpyHostToDevice));
    const std::size_t dofs = 3 * static_cast<std::size_t>(n);
    for (auto* b : {&x_, &v_, &y_, &y_tilde_, &x_start_, &trial_, &g_, &g_trial_, &dx_, &residual_})
        b->resize(dofs);
    rhs_.resize(dofs);
    pcg_dx_.resize(dofs);
    mass_.resize(n);
    upload(mass_, mass);
    mass_d_.resize(n);
    upload(mass_d_, mass);
    cell_energy_.resize(nt);
    node_energy_.resize(n);
    forces_.resize(static_cast<std::size_t>(nt) * npc * 3);
    {
        const NodeCellsView nc = assembly_->device_node_cells();
        force_slots_view_ = nc;
        CsrView* views[3] = {&force_slots_view_.vertex_cells, &force_slots_view_.edge_cells,
                             &force_slots_view_.face_cells};
        const Index rows[3] = {layout.num_vertices,
                               layout.nodes_per_edge() > 0 ? layout.num_edges : 0,
                               layout.nodes_per_face() > 0 ? layout.num_faces : 0};
        const Index per[3] = {1, layout.nodes_per_edge(), layout.nodes_per_face()};
        for (int k = 0; k < 3; ++k) {
            if (rows[k] == 0) continue;
            Index incidences = 0; // the CSR's length: its last offset
            EDN_CUDA_CHECK(cudaMemcpy(&incidences, views[k]->offsets + rows[k], sizeof(Index),
                                      cudaMemcpyDeviceToHost));
            force_slots_[k].resize(static_cast<std::size_t>(incidences) * per[k]);
            views[k]->indices = force_slots_[k].data();
        }
        force_slots_kernel<<<blocks_for(n), kBlock>>>(nc, assembly_->device_cell_nodes().nodes, npc,
                                                      n, force_slots_view_);
        EDN_CUDA_CHECK_LAUNCH();
    }
    fixed_.resize(n);
    bad_.resize(1);
    reduce_out_.resize(kSumSlots);
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
    if (element_blocks_needed()) assembly_->device_element_blocks(block_layout()); // allocate once
    {
        const char* env = std::getenv("EDN_MATRIX_FREE");
        const bool wanted =
            layout.order >= 2 &&
            preconditioner_in_use(settings, layout.order) == Preconditioner::Multigrid &&
            !(env && std::string_view(env) == "0");
        // (EDN_MATRIX_FREE=atomic: the sums in float atomics; reproducible runs gather)
        const auto scatter = env && std::string_view(env) == "atomic" && !settings.deterministic
                                 ? cuda::MatrixFreeOperator::Scatter::Atomic
                                 : cuda::MatrixFreeOperator::Scatter::Gather;
        // The cycle's snapshot in half precision (EDN_MATRIX_FREE_SNAPSHOT=float: in float).
        const char* snap = std::getenv("EDN_MATRIX_FREE_SNAPSHOT");
        const bool half_snapshot = !(snap && std::string_view(snap) == "float");
        try {
            with_order(layout.order, [&]<int P>() {
                if constexpr (P >= 2)
                    if (wanted && cooperative_elements<P>(rule_))
                        matrix_free_ = std::make_unique<cuda::MatrixFreeOperator>(
                            P, rule_.num_points, reference_gradient_table<P>(rule_),
                            assembly_->device_cell_nodes().nodes, nt, n, force_slots_view_, scatter,
                            half_snapshot);
            });
        } catch (const Error& error) { // the assembled products remain
            if (error.code() != ErrorCode::OutOfMemory) throw;
            cudaGetLastError();
            matrix_free_.reset();
        }
    }
}

template <class F> void CudaBackend::with_material(F&& f) const {
    // The double material; the kernels make its float twin (float_material) for the Hessian.
    edn::with_material(settings.material, lame_d_, f);
}

void CudaBackend::launch_elements(const double* y, int outputs) {
    with_material([&](const auto& material) {
        with_order(layout.order, [&]<int P>() { launch_elements<P>(material, y, outputs); });
    });
}

template <int P, class Material>
void CudaBackend::launch_elements(const Material& material, const double* y, int outputs) {
    const Index nt = mesh.num_cells();
    const CellNodesView cn = assembly_->device_cell_nodes();
    // The matrix-free product's values come with the Hessian (cuda/matrix_free.cuh); its blocks
    // wait for an assembly that needs the matrix (assemble_matrix).
    float4* tangents = (outputs & kHessian) && matrix_free_ ? matrix_free_->tangents() : nullptr;
    if (outputs & kHessian) tangents_valid_ = blocks_deferred_ = false;
    if (!element_blocks_needed()) outputs &= ~kHessian; // assemble() computes them inline
    const cuda::BlockLayout blocks_layout = block_layout();
    const bool upper = blocks_layout == cuda::BlockLayout::Upper;
    float* blocks =
        (outputs & kHessian) ? assembly_->device_element_blocks(blocks_layout) : nullptr;
    // p >= 2 without stiffness damping: m threads per element (element_cooperative.cuh).
    if (damping_coefficient() == 0.0 &&
        launch_cooperative_elements<P>(material, rest_elements_.data(), rule_,
                                       reference_gradients_.data(), cn.nodes, nt, y, outputs,
                                       project_hessians(), tangents ? nullptr : blocks,
                                       cell_energy_.data(), forces_.data(), upper, tangents,
                                       blocks && !tangents ? tangent_scratch()
                                                           : TangentScratch{})) {
        tangents_valid_ = tangents != nullptr;
        blocks_deferred_ = tangents && blocks;
        return;
    }
    // 128 threads per block: the element kernels are register-heavy (p = 1: its stage's size).
    constexpr int kElementBlock = P == 1 ? kElementStage : 128;
    element_kernel<P>
        <<<static_cast<unsigned int>((nt + kElementBlock - 1) / kElementBlock), kElementBlock>>>(
            material, rest_elements_.data(), rule_, rule_f_, cn.nodes, nt, y, outputs,
            project_hessians(), cell_energy_.data(), forces_.data(), blocks, element_damping(),
            upper);
    EDN_CUDA_CHECK_LAUNCH();
}

TangentScratch CudaBackend::tangent_scratch() {
    if (layout.order < 2) return {};
    const Index nt = mesh.num_cells();
    const std::int64_t per_cell =
        std::int64_t{rule_.num_points} * cuda::MatrixFreeOperator::kPlanes; // float4 a cell
    // Chunks of about EDN_TANGENT_CHUNK_MIB (default 256) MiB of values: bounded memory at any
    // mesh size (187K p = 3: two chunks; one chunk of 64 MiB cost 0.5 ms a frame in the launches'
    // tails), halved where they do not fit.
    const double mib = tangent_chunk_mib_;
    std::int64_t cells = std::min<std::int64_t>(
        std::max<std::int64_t>(static_cast<std::int64_t>(mib * 1048576.0 / (16.0 * per_cell)),
                               1024),
        std::max<Index>(nt, 1));
    while (tangent_scratch_.size() < static_cast<std::size_t>(cells * per_cell)) {
        try {
            tangent_scratch_.resize(static_cast<std::size_t>(cells * per_cell));
        } catch (const Error& error) {
            if (error.code() != ErrorCode::OutOfMemory || cells <= 1024) throw;
            cudaGetLastError();
            tangent_scratch_ = DeviceBuffer<float4>();
            cells /= 2;
        }
    }
    return {tangent_scratch_.data(), static_cast<Index>(tangent_scratch_.size() / per_cell)};
}

float* CudaBackend::galerkin_scratch() {
    const std::size_t floats = matrix_free_->galerkin_scratch_floats();
    if (galerkin_scratch_.size() != floats && galerkin_scratch_failed_ != floats) {
        try {
            galerkin_scratch_.resize(floats);
        } catch (const Error& error) {
            if (error.code() != ErrorCode::OutOfMemory) throw;
            cudaGetLastError();
            galerkin_scratch_ = DeviceBuffer<float>();
            galerkin_scratch_failed_ = floats; // (not tried again at every re-value)
        }
    }
    return galerkin_scratch_.data();
}

double CudaBackend::damping_coefficient() const {
    return settings.integrator == Integrator::Static ? 0.0
                                                     : settings.stiffness_damping / effective_dt();
}

ElementDamping CudaBackend::element_damping() {
    ElementDamping d;
    d.coefficient = damping_coefficient();
    if (d.coefficient > 0.0) {
        if (damping_energy_.size() != static_cast<std::size_t>(mesh.num_cells()))
            damping_energy_.resize(mesh.num_cells());
        d.y_start = x_start_.data();
        d.lame = lame_d_;
        d.energy = damping_energy_.data();
    }
    return d;
}

NodeTerms CudaBackend::node_terms() const {
    NodeTerms t{};
    t.inertia = inertia_coefficient();
    t.damping =
        settings.integrator == Integrator::Static ? 0.0 : settings.mass_damping / effective_dt();
    for (int d = 0; d < 3; ++d) t.gravity[d] = settings.gravity[d];
    t.has_ground = settings.ground_height.has_value();
    t.ground_height = settings.ground_height ? *settings.ground_height : 0.0;
    t.ground_stiffness = settings.ground_stiffness;
    t.friction = ground_friction_coefficient();
    return t;
}

void CudaBackend::add_diagonal_terms(const double* y, float mass_scale,
                                     cuda_simulation::DiagonalTarget target) {
    const Index n = layout.num_nodes();
    add_diagonal_kernel<<<blocks_for(n), kBlock>>>(mass_.data(), mass_scale, rest_x_.data(), y,
                                                   x_start_.data(), node_terms(), n, target);
    if (drag && !drag->region.empty()) {
        const RegionDrag r = region_.view(*drag);
        add_drag_region_hessian_kernel<<<blocks_for(r.count), kBlock>>>(r, target);
    }
    EDN_CUDA_CHECK_LAUNCH();
}

void CudaBackend::assemble_matrix(const double* y) {
    const Index n = layout.num_nodes();
    if (blocks_deferred_) { // the element blocks the matrix-free evaluation left out, at y:
        // formed from the values its pass wrote there
        const cuda::BlockLayout blocks_layout = block_layout();
        float* blocks = assembly_->device_element_blocks(blocks_layout);
        with_order(layout.order, [&]<int P>() {
            if constexpr (P >= 2)
                launch_blocks_from_tangents<P>(matrix_free_->tangents(),
                                               reference_gradients_.data(), rule_.num_points,
                                               mesh.num_cells(), blocks,
                                               blocks_layout == cuda::BlockLayout::Upper);
        });
        blocks_deferred_ = false;
    }
    if (inline_rows()) {
        const InlineTargets in = inline_targets(*assembly_, mesh.num_cells(), frame_records_);
        with_material([&](const auto& material) {
            with_order(layout.order, [&]<int P>() {
                launch_inline_summation<P>(float_material(material), rest_elements_.data(), rule_f_,
                                           y, project_hessians(), lame_,
                                           static_cast<float>(damping_coefficient()), in);
            });
        });
    } else {
        assembly_->sum(summation_, lame_);
    }
    const BinBcsrMatrixView<float> a = assembly_->device_matrix();
    add_diagonal_terms(y, mass_scale(), diagonal_planes(a.diag, n));
    if (drag && drag->region.empty()) add_drag_hessian_kernel<<<1, 32>>>(point_drag(*drag), a);
    EDN_CUDA_CHECK_LAUNCH();
    // Galerkin coarse matrix of the element Hessians + the restricted mass terms (the drag
    // spring and ground penalty are left to the fine level), as the CPU backend does.
    if (coarse_) coarse_->assemble(assembly_->device_element_blocks(), mass_.data(), mass_scale());
    matrix_at_y_ = true;
}

void CudaBackend::assemble(const double* y) {
    const Index n = layout.num_nodes();
    const bool matrix_free = matrix_free_in_use();
    bool revalue = false;
    if (preconditioner_in_use(settings, layout.order) == Preconditioner::Multigrid) {
        if (!multigrid_ || multigrid_fixed_ != fixed) build_multigrid(true);
        // (a new fine operator is re-valued before a solve: the cycle reads its snapshot)
        cuda::MatrixFreeOperator* fine = matrix_free ? matrix_free_.get() : nullptr;
        if (multigrid_->fine_operator() != fine) {
            multigrid_->set_fine_operator(fine);
            multigrid_refresh_.invalidate();
        }
        revalue = multigrid_refresh_.revalue_at_assembly(settings.multigrid_every_iteration);
    }
    // With the matrix-free products the matrix is summed only for a re-value of the hierarchy
    // (its Galerkin products and snapshot diagonal), and not even then where the multigrid forms
    // the order-p level's A P and diagonal from the values (MatrixFreeOperator::galerkin, in the
    // element blocks' buffer, which the matrix-free evaluation leaves unwritten).
    bool matrix_free_revalue = false;
    if (matrix_free && revalue) { // (the scratch lent anew each time: the buffer may have moved)
        if (element_blocks_needed())
            matrix_free_->set_scratch(assembly_->device_element_blocks(block_layout()),
                                      assembly_->element_bytes() / sizeof(float));
        else { // inline summation: no element blocks to lend, a scratch of its own
            float* scratch = galerkin_scratch();
            matrix_free_->set_scratch(scratch, galerkin_scratch_.size());
        }
        matrix_free_revalue = multigrid_->revalues_matrix_free();
    }
    matrix_at_y_ = false;
    if (!matrix_free || (revalue && !matrix_free_revalue)) assemble_matrix(y);
    // The matrix-free product's share of the node terms (3 per node, the point drag's blocks).
    if (matrix_free) {
        float* t = matrix_free_->node_terms();
        EDN_CUDA_CHECK(cudaMemsetAsync(t, 0, 3 * sizeof(float) * static_cast<std::size_t>(n)));
        add_diagonal_terms(y, mass_scale(), {t, 1, 3});
        cuda::MatrixFreeDrag d;
        if (drag && drag->region.empty()) {
            const PointDrag p = point_drag(*drag);
            d.active = 1;
            for (int i = 0; i < 3; ++i) {
                d.vertices[i] = p.vertices[i];
                for (int j = 0; j < 3; ++j)
                    d.weights[i][j] = static_cast<float>(p.stiffness * p.weights[i] * p.weights[j]);
            }
        }
        matrix_free_->set_drag(d);
    }
    if (revalue) {
        // (EDN_MULTIGRID_BUILD=times: the first re-value after a build timed too)
        const bool timed = std::exchange(time_next_revalue_, false);
        std::chrono::steady_clock::time_point start;
        if (timed) {
            EDN_CUDA_CHECK(cudaDeviceSynchronize());
            start = std::chrono::steady_clock::now();
        }
        // the tentative prolongators follow the rigid-body modes of y (multigrid_modes)
        if (!settings.multigrid_rest_modes) multigrid_->retentative(rest_x_.data(), y);
        multigrid_->revalue(assembly_->device_matrix());
        ++solver_setup.revalues;
        if (matrix_free_revalue) {
            ++solver_setup.matrix_free_revalues;
            blocks_deferred_ = true; // (the scratch overwrote them)
        }
        if (timed) {
            EDN_CUDA_CHECK(cudaDeviceSynchronize());
            std::fprintf(
                stderr, "multigrid build: %-32s %8.3f ms\n", "first re-value",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
        }
    }
}

void CudaBackend::build_multigrid(bool in_step) {
    const auto start = std::chrono::steady_clock::now();
    MultigridSettings mg = simulation_multigrid_settings(layout.order);
    mg.coarsest_dofs = 64; // inverted on the host at every re-value: keep it tiny
    // With the matrix-free products the order-p level's products cost less against the levels
    // below: degree 1 there at p = 3 too (H200, 187K, 8 frames: median 53.85 -> 50.57 ms, mean
    // 63.74 -> 60.57, CG 23.8 -> 41.6 a frame; degree 3 67.53 ms; session 27).
    if (matrix_free_) mg.given_smoother_degree = 1;
    // EDN_MULTIGRID_GIVEN_DEGREE=N: Chebyshev degree N (1..8) on the order-p level (measurements)
    if (const char* g = std::getenv("EDN_MULTIGRID_GIVEN_DEGREE")) {
        const int degree = std::atoi(g);
        if (degree >= 1 && degree <= kMaxChebyshevDegree) mg.given_smoother_degree = degree;
    }
    multigrid_.reset(); // (its memory first)
    // Built on the device (the host's hierarchy, bit for bit; p >= 2 with the P1 transfer of the
    // order-p space first); EDN_MULTIGRID_BUILD=host builds it on the host.
    const char* env = std::getenv("EDN_MULTIGRID_BUILD");
    if (!(env && std::string_view(env) == "host")) {
        try {
            DeviceBuffer<Index> vertex;
            DeviceBuffer<double> weight;
            cuda::DeviceTransfer p1;
            if (layout.order > 1) { // (make_coarse_space's prolongation, on the device)
                const Index n = layout.num_nodes();
                std::vector<double> local;
                for (int a = 0; a < nodes_per_cell(layout.order); ++a)
                    for (double w : local_node_barycentric(layout.order, a)) local.push_back(w);
                vertex = DeviceBuffer<Index>(3 * std::size_t(n));
                weight = DeviceBuffer<double>(3 * std::size_t(n));
                cuda::make_p1_transfer(assembly_->device_cell_nodes(), n, local, vertex.data(),
                                       weight.data());
                p1 = {layout.num_vertices, vertex.data(), weight.data()};
            }
            multigrid_ =
                cuda::Multigrid::build(assembly_->device_matrix().pattern, fixed, fixed_.data(),
                                       rest_x_.data(), mg, layout.order > 1 ? &p1 : nullptr);
        } catch (const Error& error) { // the build's sorts need more than the hierarchy keeps
            if (error.code() != ErrorCode::OutOfMemory) throw;
            cudaGetLastError(); // (the failed allocation's error, not sticky: cleared)
            multigrid_.reset();
        }
    }
    if (!multigrid_) {
        const MultigridHierarchy h = cpu::build_mesh_multigrid(assembly_->download_pattern(), mesh,
                                                               topology, layout, fixed.data(), mg);
        multigrid_ = std::make_unique<cuda::Multigrid>(h);
    }
    multigrid_->set_upper_products(!settings.deterministic); // as the PCG's (PcgOptions)
    multigrid_fixed_ = fixed;
    multigrid_refresh_.invalidate();
    count_solver_setup(start, in_step);
    if (env && std::string_view(env) == "times") {
        EDN_CUDA_CHECK(cudaDeviceSynchronize());
        std::fprintf(
            stderr, "multigrid build: %-32s %8.3f ms\n", "in the backend (all)",
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());
        time_next_revalue_ = true;
    }
}

double CudaBackend::device_sum(const double* values, std::int64_t count) {
    queue_sum(values, count, 0);
    double out = 0;
    EDN_CUDA_CHECK(cudaMemcpy(&out, reduce_out_.data(), sizeof(double), cudaMemcpyDeviceToHost));
    return out;
}

double CudaBackend::device_dot(const double* a, const double* b, std::int64_t count) {
    if (count == 0) return 0.0;
    const unsigned int grid = std::min<unsigned int>(blocks_for(count), kReduceBlocks);
    reduce_kernel<true, double><<<grid, kBlock>>>(a, b, count, reduce_partials_.data(),
                                                  reduce_done_.data(), reduce_out_.data());
    EDN_CUDA_CHECK_LAUNCH();
    double out = 0;
    EDN_CUDA_CHECK(cudaMemcpy(&out, reduce_out_.data(), sizeof(double), cudaMemcpyDeviceToHost));
    return out;
}

void CudaBackend::queue_sum(const double* values, std::int64_t count, int slot) {
    if (count == 0) {
        EDN_CUDA_CHECK(cudaMemsetAsync(reduce_out_.data() + slot, 0, sizeof(double)));
        return;
    }
    const unsigned int grid = std::min<unsigned int>(blocks_for(count), kReduceBlocks);
    reduce_kernel<false, double><<<grid, kBlock>>>(values, nullptr, count, reduce_partials_.data(),
                                                   reduce_done_.data(), reduce_out_.data() + slot);
    EDN_CUDA_CHECK_LAUNCH();
}

double CudaBackend::evaluate(const double* y, int outputs, double* gradient) {
    launch_elements(y, outputs);
    const Index n = layout.num_nodes();
    const bool with_gradient = outputs & kGradient;
    node_kernel<<<blocks_for(n), kBlock>>>(node_terms(), force_slots_view_, mass_d_.data(),
                                           fixed_.data(), rest_x_.data(), y, y_tilde_.data(),
                                           x_start_.data(), forces_.data(), n, with_gradient,
                                           node_energy_.data(), gradient);
    EDN_CUDA_CHECK_LAUNCH();
    // Rayleigh stiffness damping: part of the potential, not of the strain energy.
    const bool damped = damping_coefficient() > 0.0;
    queue_sum(cell_energy_.data(), mesh.num_cells(), 0);
    queue_sum(node_energy_.data(), n, 1);
    if (damped) queue_sum(damping_energy_.data(), mesh.num_cells(), 2);
    const int drag_slot = damped ? 3 : 2;
    const int slots =
        drag_slot + queue_drag_energy(y, with_gradient ? gradient : nullptr, drag_slot);
    double sums[kSumSlots] = {0, 0, 0, 0};
    EDN_CUDA_CHECK(
        cudaMemcpy(sums, reduce_out_.data(), slots * sizeof(double), cudaMemcpyDeviceToHost));
    last_strain_energy_ = sums[0];
    double total = last_strain_energy_ + sums[1];
    if (damped) total += sums[2];
    return total + (slots > drag_slot ? sums[drag_slot] : 0.0);
}

int CudaBackend::queue_drag_energy(const double* y, double* gradient, int slot) {
    if (!drag) return 0;
    if (!drag->region.empty()) {
        const RegionDrag r = region_.view(*drag);
        drag_region_kernel<<<blocks_for(r.count), kBlock>>>(r, rest_x_.data(), y, fixed_.data(),
                                                            gradient != nullptr,
                                                            region_.energy.data(), gradient);
        EDN_CUDA_CHECK_LAUNCH();
        queue_sum(region_.energy.data(), r.count, slot);
        return 1;
    }
    drag_kernel<<<1, 1>>>(point_drag(*drag), rest_x_.data(), y, fixed_.data(), gradient != nullptr,
                          reduce_out_.data() + slot, gradient);
    EDN_CUDA_CHECK_LAUNCH();
    return 1;
}

double CudaBackend::node_potential(const double* y) {
    const Index n = layout.num_nodes();
    node_kernel<<<blocks_for(n), kBlock>>>(
        node_terms(), force_slots_view_, mass_d_.data(), fixed_.data(), rest_x_.data(), y,
        y_tilde_.data(), x_start_.data(), forces_.data(), n, false, node_energy_.data(), g_.data());
    EDN_CUDA_CHECK_LAUNCH();
    queue_sum(node_energy_.data(), n, 0);
    const int slots = 1 + queue_drag_energy(y, nullptr, 1);
    double sums[2] = {0, 0};
    EDN_CUDA_CHECK(
        cudaMemcpy(sums, reduce_out_.data(), slots * sizeof(double), cudaMemcpyDeviceToHost));
    return sums[0] + (slots > 1 ? sums[1] : 0.0);
}

void CudaBackend::begin_step() {
    multigrid_refresh_.new_step(settings.multigrid_lag);
    const Index n = layout.num_nodes();
    EDN_CUDA_CHECK(cudaMemcpy(x_start_.data(), x_.data(), x_.bytes(), cudaMemcpyDeviceToDevice));
    predictor_kernel<<<blocks_for(n), kBlock>>>(x_.data(), v_.data(), fixed_.data(), effective_dt(),
                                                settings.integrator != Integrator::Static, n,
                                                y_tilde_.data(), y_.data());
    EDN_CUDA_CHECK_LAUNCH();
}

PcgResult CudaBackend::float_solve(const PcgSettings& pcg) {
    const BinBcsrMatrixView<float> a = assembly_->device_matrix();
    if (multigrid_) {
        PcgResult r = multigrid_->solve(a, rhs_.data(), pcg_dx_.data(), pcg, fixed_.data());
        if (multigrid_refresh_.retry_now(r)) { // a lagged hierarchy broke down: re-value, again
            if (!matrix_at_y_) assemble_matrix(y_.data()); // (matrix-free: not summed yet)
            if (!settings.multigrid_rest_modes) multigrid_->retentative(rest_x_.data(), y_.data());
            multigrid_->revalue(a);
            // (a re-value from the values used the element blocks' buffer as its scratch)
            if (multigrid_->revalues_matrix_free()) blocks_deferred_ = true;
            multigrid_refresh_.revalued_now();
            EDN_CUDA_CHECK(cudaMemsetAsync(pcg_dx_.data(), 0, pcg_dx_.bytes()));
            PcgSettings cold = pcg;
            cold.warm_start = false;
            r = multigrid_->solve(a, rhs_.data(), pcg_dx_.data(), cold, fixed_.data());
        }
        return r;
    }
    if (!coarse_) return pcg_->solve(a, rhs_.data(), pcg_dx_.data(), pcg, fixed_.data());
    // Coarse PCG iterations enqueued per application: 6 (a 127K-tet p = 2 frame: 2 -> 31.5 ms,
    // 4 -> 23.9, 6 -> 23.6, 10 -> 26.8, 16 -> 29.9, 24 -> 31.8; iterations after the coarse
    // solve converged still cost their launches).
    return pcg_->solve_two_level(
        a, coarse_->view(kCoarseTolerance, coarse_iterations(kCoarseIterationsCuda)), rhs_.data(),
        pcg_dx_.data(), pcg, fixed_.data());
}

double CudaBackend::true_residual() {
    if (matrix_free_in_use()) {
        matrix_free_->residual(g_.data(), dx_.data(), fixed_.data(), residual_.data(),
                               cudaStreamPerThread);
        return std::sqrt(device_dot(residual_.data(), residual_.data(),
                                    static_cast<std::int64_t>(residual_.size())));
    }
    const BinBcsrMatrixView<float> a = assembly_->device_matrix();
    if (a.pattern.num_bins > 0)
        true_residual_kernel<<<a.pattern.num_bins, kTrueResidualWarps * 32>>>(
            a, g_.data(), dx_.data(), fixed_.data(), residual_.data());
    EDN_CUDA_CHECK_LAUNCH();
    return std::sqrt(device_dot(residual_.data(), residual_.data(),
                                static_cast<std::int64_t>(residual_.size())));
}

PcgResult CudaBackend::solve(bool warm) {
    const Index n = layout.num_nodes();
    const std::int64_t dofs = 3 * static_cast<std::int64_t>(n);
    // The float PCG solves for -g rounded to float (g is zero on pinned dofs).
    to_float_kernel<<<blocks_for(dofs), kBlock>>>(g_.data(), -1.0, dofs, rhs_.data());
    // Pins may have changed since the first correction was kept: pinned dofs start from 0.
    if (warm)
        masked_copy_kernel<<<blocks_for(n), kBlock>>>(first_dx_.data(), fixed_.data(), n,
                                                      pcg_dx_.data());
    else
        EDN_CUDA_CHECK(cudaMemsetAsync(pcg_dx_.data(), 0, pcg_dx_.bytes()));
    EDN_CUDA_CHECK_LAUNCH();
    PcgSettings pcg = settings.pcg;
    pcg.warm_start = warm;
    PcgResult result = float_solve(pcg);
    to_double_kernel<false><<<blocks_for(dofs), kBlock>>>(pcg_dx_.data(), dofs, dx_.data());
    EDN_CUDA_CHECK_LAUNCH();
    if (result.breakdown) return result;
    // The float recurrence's residual can drift below the true one (float round-off in r, A p):
    // the reported residual and `converged` are the true residual of the double system,
    // ||-g - A dx|| on free rows with A's float entries times the double dx summed in double
    // (one product per solve, none per CG iteration). When the float solve claimed convergence
    // that the true residual denies, a correction A e = r is solved in float (iterative
    // refinement: the correction's own round-off is relative to the smaller r), within what is
    // left of the iteration cap, at most kRefinements times.
    constexpr int kRefinements = 2;
    const double target = settings.pcg.relative_tolerance * result.reference_norm;
    double residual = true_residual();
    for (int k = 0; k < kRefinements && result.converged && residual > target &&
                    result.iterations < settings.pcg.max_iterations;
         ++k) {
        to_float_kernel<<<blocks_for(dofs), kBlock>>>(residual_.data(), 1.0, dofs, rhs_.data());
        EDN_CUDA_CHECK_LAUNCH();
        EDN_CUDA_CHECK(cudaMemsetAsync(pcg_dx_.data(), 0, pcg_dx_.bytes()));
        PcgSettings correction = settings.pcg;
        correction.warm_start = false;
        correction.max_iterations = settings.pcg.max_iterations - result.iterations;
        correction.relative_tolerance = target / residual; // of ||r||: ||r - A e|| <= target
        const PcgResult c = float_solve(correction);
        result.iterations += c.iterations;
        if (c.breakdown) break; // keep dx of the first solve (its residual is `residual`)
        to_double_kernel<true><<<blocks_for(dofs), kBlock>>>(pcg_dx_.data(), dofs, dx_.data());
        EDN_CUDA_CHECK_LAUNCH();
        residual = true_residual();
        result.converged = c.converged;
    }
    result.final_residual = residual;
    result.converged = residual <= target; // PcgResult's rule, on the true residual
    if (multigrid_) multigrid_refresh_.after_solve(result);
    return result;
}

void CudaBackend::set_trial(double alpha) {
    const std::int64_t dofs = static_cast<std::int64_t>(y_.size());
    axpy_kernel<<<blocks_for(dofs), kBlock>>>(y_.data(), alpha, dx_.data(), dofs, trial_.data());
    EDN_CUDA_CHECK_LAUNCH();
}

void CudaBackend::scaled_gradient_direction(double scale) {
    const Index n = layout.num_nodes();
    fallback_direction_kernel<<<blocks_for(n), kBlock>>>(g_.data(), mass_d_.data(), fixed_.data(),
                                                         scale, n, dx_.data());
    EDN_CUDA_CHECK_LAUNCH();
}

bool CudaBackend::update_state() {
    const Index n = layout.num_nodes();
    EDN_CUDA_CHECK(cudaMemset(bad_.data(), 0, sizeof(int)));
    update_state_kernel<<<blocks_for(n), kBlock>>>(y_.data(), x_start_.data(), fixed_.data(),
                                                   int(settings.integrator), settings.dt, n,
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
    kinetic_kernel<<<blocks_for(n), kBlock>>>(mass_d_.data(), v_.data(), n, node_energy_.data());
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
    const QuadratureTet<double> centroid = quadrature_for_degree<double>(1);
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
