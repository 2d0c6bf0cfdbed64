// CUDA twin of the multigrid re-value and V-cycle (cuda/cuda_multigrid.hpp; the CPU reference is
// cpu/multigrid.cpp, the same maps and the same arithmetic in double): the hierarchy's device
// state, the launch sequences and the flexible CG. Kernels: cuda/multigrid_kernels.cuh.
#include "cuda/assembly_impl.cuh"
#include "cuda/cuda_pcg.hpp"
#include "cuda/matrix_free.cuh"
#include "cuda/multigrid_build.cuh"
#include "cuda/multigrid_kernels.cuh"
#include "cuda/multigrid_nullspace.cuh"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace edn::cuda {

struct Multigrid::Impl {
    struct Level {
        int block = 3, coarse_block = 6;
        Index n = 0, nc = 0;
        bool fixed_prolongator = false;
        double damping = 0;
        DeviceBuffer<Index> aggregate, p_offsets, p_rows, p_columns, smooth_offsets, smooth_entries,
            pair_offsets, pair_entry, pair_p, g_offsets, g_p, g_ap, g_entries, g_mirror, r_offsets,
            r_blocks, r_rows;
        Index p_blocks = 0, ap_blocks = 0;
        bool spmv_rows = false; // k_spmv_bins (else k_spmv_bins_components): coarse levels
        int spmv_warps = 1;     // bin_warps_for
        int galerkin_lanes = 1, restrict_lanes = 1, prolong_lanes = 1; // lanes_for each sum
        int smooth_lanes = 1, product_lanes = 1;
        /// A P's pattern where P is given (CSR over the level's rows; ap_values its blocks): the
        /// post-smoother's residual r - (A P) x_c instead of a product with A (ap_lanes a row).
        DeviceBuffer<Index> ap_offsets, ap_columns;
        int ap_lanes = 1;
        /// A P's half copy for the cycle (set_half_products, where A P does not fit the L2
        /// cache) and its scale slots (k_max_abs: its largest entry)
        DeviceBuffer<__half> ap_half;
        DeviceBuffer<float> ap_scale;
        SpmvKernel spmv_kernel; // 3 x 3 blocks: choose_spmv_kernel of this level's operator
        DeviceBuffer<float> tentative, p_values, ap_values, inverse_diag;
        /// A given P's weights when its blocks are all w I (p-multigrid), for the cycle's
        /// transfers (IsotropicWeights: 4 bytes a block, not 48; 187K p = 3, H200: the
        /// prolongation 44.5 us, the restriction 63 us a cycle before); empty otherwise.
        DeviceBuffer<float> p_weights;
        /// The operator's blocks, contiguous (k_gather_blocks): #slots + #rows entries; for the
        /// fine level allocated at the first re-value (its pattern lives on the device).
        DeviceBuffer<float> blocks;
        Index entries = 0;
        DeviceBuffer<float> lanczos_start; ///< the CPU twin's start vector (free rows)
        DeviceBuffer<double> scalars;      ///< LanczosSlot
        DeviceBuffer<float> coef;          ///< [w, Chebyshev coefficients] (k_lanczos_finish)
        // the coarse operator (level l + 1)
        DeviceBuffer<Index> c_bin_offsets, c_columns, c_row_counts;
        Index c_bins = 0;
        DeviceBuffer<float> c_values, c_diag;
        // its half-precision copy (set_half_products) and scale slots (HalfOperator), and the
        // warps per bin of k_spmv_bins, which reads it
        DeviceBuffer<__half> c_half;
        DeviceBuffer<float> c_scale;
        int half_warps = 1;
        /// The half copy behind the operator values `v`, if any.
        HalfOperator half_of(const float* v) const {
            if (c_half.size() == 0 || v != c_values.data()) return {nullptr, nullptr};
            return {c_half.data(), c_scale.data()};
        }
        BinBcsrPatternView coarse_pattern() const {
            return {nc, c_bins, c_bin_offsets.data(), c_columns.data(), c_row_counts.data()};
        }
    };
    MultigridSettings settings;
    std::vector<Level> levels;
    std::unique_ptr<MultigridNullspace> nullspace; // retentative()
    DeviceBuffer<std::uint8_t> fixed;
    std::vector<std::uint8_t> host_fixed;
    Index fine_rows = 0;
    int coarsest_block = 3;
    Index coarsest_rows = 0;
    DeviceBuffer<float> coarsest_inverse;
    BinBcsrPattern coarsest_pattern; // downloaded at the first re-value
    std::vector<float> coarsest_values, coarsest_diag;
    DeviceBuffer<float> unit_coef; // {0, 1}: d = D^-1 r
    bool fine_kernel_chosen = false;
    // Per level the cycle's right-hand side, solution, residual, Chebyshev direction and its
    // product, carved from one allocation (`vectors`).
    struct Vector {
        float* p = nullptr;
        float* data() const { return p; }
    };
    std::vector<Vector> b, x, r, d, q;
    DeviceBuffer<float> vectors;
    DeviceBuffer<double> partials;      // 2 x 1024 per-block partial sums of the dot products
    DeviceBuffer<double> dot_result{1}; // dot()'s device scalar
    DeviceBuffer<unsigned int> lanczos_done{1}; // last_block_done's counter (zero between launches)
    DeviceBuffer<float> cg;                     // r, z, p, q of solve()
    // The fine matrix's values and diagonal planes at the last re-value: the cycle smooths with
    // them (MultigridHierarchy::fine_values: a lagged hierarchy stays one SPD preconditioner).
    // With an upper part (fine_upper) the cycle's products read that instead, so the values are
    // not kept (empty): 110 MB less at 1.15M tets, 274 MB at 187K p = 2.
    DeviceBuffer<float> fine_values, fine_diag;
    Index fine_slots = 0; // of the fine pattern (known at the first re-value)
    std::size_t fine_bytes() const {
        return 9 * sizeof(float) * static_cast<std::size_t>(fine_slots);
    }
    // Its upper part (set_upper_products), refreshed at every re-value, and the product's
    // output (4 floats per row).
    bool upper_products = false, upper_any_size = false;
    /// The fine level's products without its blocks (set_fine_operator; its snapshot is taken
    /// at every re-value): then neither the upper part nor the values are kept.
    MatrixFreeOperator* fine_op = nullptr;
    /// The CG's own product A u (the fine matrix `a`, or the operator's present values).
    void fine_product(const BinBcsrMatrixView<float>& a, const float* u, float* v) {
        if (fine_op)
            fine_op->apply(u, v, false, s);
        else
            spmv<3>(op(a, 0), u, v, 0);
    }
    /// The fine operator's pointers for a graph's key.
    void add_fine_op_key(std::vector<std::uintptr_t>& key) const {
        key.push_back(reinterpret_cast<std::uintptr_t>(fine_op));
        if (fine_op)
            for (std::uintptr_t p : fine_op->key()) key.push_back(p);
    }
    bool upper_out_of_memory = false; // its allocation failed once: full products from then on
    bool half_products = true, half_any_size = false, half_out_of_memory = false;
    /// revalues_matrix_free()'s switch (EDN_MATRIX_FREE_REVALUE=0: off)
    bool matrix_free_revalue = [] {
        const char* e = std::getenv("EDN_MATRIX_FREE_REVALUE");
        return !(e && std::string_view(e) == "0");
    }();
    bool revalues_matrix_free() const {
        return matrix_free_revalue && fine_op && fine_op->can_galerkin() && !levels.empty() &&
               levels[0].ap_offsets.size() > 0;
    }
    /// The order-p level's transfer per cell for MatrixFreeOperator::galerkin (of fine op
    /// `transfer_of`; P is fixed for the hierarchy's life).
    DeviceBuffer<float> transfer_weights;
    DeviceBuffer<Index> transfer_columns, transfer_rows;
    const MatrixFreeOperator* transfer_of = nullptr;
    GalerkinTargets galerkin_targets() {
        Level& l0 = levels[0];
        GalerkinTargets t;
        t.p_offsets = l0.p_offsets.data();
        t.p_columns = l0.p_columns.data();
        t.p_values = l0.p_values.data();
        t.ap_offsets = l0.ap_offsets.data();
        t.ap_columns = l0.ap_columns.data();
        t.ap_values = l0.ap_values.data();
        t.diag = fine_diag.data();
        t.cell_weights = transfer_weights.data();
        t.cell_columns = transfer_columns.data();
        t.ap_rows = transfer_rows.data();
        return t;
    }
    /// EDN_MULTIGRID_AP=float: the cycle's A P products in float (measurements)
    const bool ap_float = [] {
        const char* e = std::getenv("EDN_MULTIGRID_AP");
        return e && std::string_view(e) == "float";
    }();
    long long l2_bytes = -1; // the device's L2 cache (queried at the first re-value)
    std::unique_ptr<UpperMatrix> fine_upper;
    DeviceBuffer<float> fine_y4;
    // the upper part's half copy (set_half_products) and its scale slots (HalfScaleSlot)
    DeviceBuffer<__half> fine_half;
    DeviceBuffer<float> fine_half_scale;
    DeviceBuffer<double> cg_scalars{kCgSlots};
    double* host_scalars = nullptr; // pinned: solve()'s inputs up, its outcome down
    // Launches go to `s`: the default stream, or the capture stream while a re-value or a CG
    // iteration is captured as a CUDA graph (replayed while the pointers it was captured with,
    // its key, stay the same; a re-value changes only the values behind them).
    cudaStream_t s = nullptr;
    cudaStream_t capture_stream = nullptr;
    struct Graph {
        std::vector<std::uintptr_t> key;
        cudaGraphExec_t exec = nullptr;
    };
    Graph revalue_graph;
    Graph solve_graph;          // a whole solve: start, then the iterations under a while node
    bool graphs = true;         // set_graphs
    bool graphs_failed = false; // capture or instantiation refused once: launch directly

    ~Impl() {
        for (Graph* g : {&revalue_graph, &solve_graph})
            if (g->exec) cudaGraphExecDestroy(g->exec);
        if (host_scalars) cudaFreeHost(host_scalars);
        if (capture_stream) cudaStreamDestroy(capture_stream);
    }
    /// Runs `enqueue` (launches on `s` only, no waits) as the graph g: captured again when `key`
    /// differs from g's, then launched on the default stream.
    template <class F> void run(Graph& g, const std::vector<std::uintptr_t>& key, F&& enqueue) {
        if (!graphs || graphs_failed) {
            enqueue();
            return;
        }
        if (!g.exec || g.key != key) {
            if (g.exec) EDN_CUDA_CHECK(cudaGraphExecDestroy(g.exec));
            g.exec = nullptr;
            if (!capture_stream)
                EDN_CUDA_CHECK(cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking));
            EDN_CUDA_CHECK(
                cudaStreamBeginCapture(capture_stream, cudaStreamCaptureModeThreadLocal));
            s = capture_stream;
            cudaGraph_t graph = nullptr;
            try {
                enqueue();
            } catch (...) {
                s = nullptr;
                cudaStreamEndCapture(capture_stream, &graph);
                if (graph) cudaGraphDestroy(graph);
                cudaGetLastError();
                throw;
            }
            s = nullptr;
            EDN_CUDA_CHECK(cudaStreamEndCapture(capture_stream, &graph));
            const cudaError_t status = cudaGraphInstantiate(&g.exec, graph, 0);
            cudaGraphDestroy(graph);
            if (status != cudaSuccess) {
                cudaGetLastError(); // clear it: launch directly from now on
                g.exec = nullptr;
                graphs_failed = true;
                enqueue();
                return;
            }
            g.key = key;
        }
        EDN_CUDA_CHECK(cudaGraphLaunch(g.exec, nullptr));
    }
    /// The pointers and sizes a graph over the fine matrix `a` depends on.
    static std::vector<std::uintptr_t> key_of(const BinBcsrMatrixView<float>& a,
                                              std::initializer_list<const void*> more) {
        std::vector<std::uintptr_t> k = {std::uintptr_t(a.pattern.num_rows),
                                         std::uintptr_t(a.pattern.num_bins),
                                         reinterpret_cast<std::uintptr_t>(a.pattern.bin_offsets),
                                         reinterpret_cast<std::uintptr_t>(a.pattern.columns),
                                         reinterpret_cast<std::uintptr_t>(a.pattern.row_counts),
                                         reinterpret_cast<std::uintptr_t>(a.values),
                                         reinterpret_cast<std::uintptr_t>(a.diag)};
        for (const void* p : more) k.push_back(reinterpret_cast<std::uintptr_t>(p));
        return k;
    }

    DeviceOp op(const BinBcsrMatrixView<float>& a, int l) const {
        if (l == 0) return {3, a.pattern, a.values, a.diag, fixed.data()};
        const Level& c = levels[l - 1];
        return {c.coarse_block, c.coarse_pattern(), c.c_values.data(), c.c_diag.data(), nullptr};
    }
    /// u.v read back (one wait).
    double dot(const float* u, const float* v, std::int64_t n) {
        dot_to(u, v, n, dot_result.data());
        double s = 0;
        EDN_CUDA_CHECK(cudaMemcpy(&s, dot_result.data(), sizeof(double), cudaMemcpyDeviceToHost));
        return s;
    }
    /// A_l u for the operator o of level l, in v: 3 x 3 blocks through cuda::spmv with the
    /// measured kernel for its size (cuda/spmv.cu), larger blocks with spmv_warps warps per bin.
    template <int B> void spmv(const DeviceOp& o, const float* u, float* v, int l) {
        if constexpr (B == 3) {
            const BinBcsrMatrixView<float> m{o.p, const_cast<float*>(o.values),
                                             const_cast<float*>(o.diag)};
            const bool known = l < static_cast<int>(levels.size()); // else: no levels (tiny)
            cuda::spmv(m, u, v, known ? levels[l].spmv_kernel : SpmvKernel{}, s);
        } else {
            if (o.p.num_bins == 0) return;
            const HalfOperator half = levels[l - 1].half_of(o.values); // (l > 0: B > 3)
            if (half.values) {
                with_bin_warps(levels[l - 1].half_warps, [&]<int W>() {
                    k_spmv_bins<B, W><<<o.p.num_bins, 32 * W, 0, s>>>(o, half, u, v);
                });
                return;
            }
            with_bin_warps(levels[l].spmv_warps, [&]<int W>() {
                if (levels[l].spmv_rows)
                    k_spmv_bins<B, W>
                        <<<o.p.num_bins, 32 * W, 0, s>>>(o, HalfOperator{nullptr, nullptr}, u, v);
                else
                    k_spmv_bins_components<B, W>
                        <<<dim3(static_cast<unsigned>(o.p.num_bins), B), 32 * W, 0, s>>>(o, u, v);
            });
        }
    }
    /// The cycle's A_l u: in v, or, for the fine snapshot with an upper part, in fine_y4 (the
    /// returned view says which).
    template <int B> RowVector product(const DeviceOp& o, const float* u, float* v, int l) {
        if (l == 0 && fine_op) { // the snapshot's values, without the matrix's blocks
            fine_op->apply(u, v, true, s);
            return {v, 3};
        }
        if (l == 0 && fine_upper) { // (level 0 here is always the snapshot)
            const int warps = fine_upper->chosen_warps_per_bin();
            if (fine_half.size() > 0)
                spmv_upper_half(fine_upper->view(),
                                reinterpret_cast<const std::uint16_t*>(fine_half.data()),
                                fine_half_scale.data() + kHalfUnscale, u, fine_y4.data(), warps, s);
            else
                spmv_upper(fine_upper->view(), u, fine_y4.data(), warps, s);
            return {fine_y4.data(), 4};
        }
        spmv<B>(o, u, v, l);
        return {v, B};
    }
    /// The device dot product u.v into the device scalar *out (no read-back).
    void dot_to(const float* u, const float* v, std::int64_t n, double* out) {
        const int blocks = static_cast<int>(std::min<std::int64_t>(grid_for(n), 1024));
        k_dots<1><<<blocks, kThreads, 0, s>>>(u, v, nullptr, n, partials.data());
        k_sum_partials<1><<<1, 32, 0, s>>>(partials.data(), blocks, out);
    }
    /// Allocates or frees each coarse operator's half copy as set_half_products asks (before
    /// a re-value's capture: its pointers are part of the graphs' keys).
    void update_half_copies() {
        // a copy of `values` in `half` (and its scale slots) when `want`, else none; false when
        // there is no room (then float products from now on)
        const auto keep = [&](bool want, const DeviceBuffer<float>& values,
                              DeviceBuffer<__half>& half, DeviceBuffer<float>& scale) {
            if (!want) {
                half = DeviceBuffer<__half>();
                scale = DeviceBuffer<float>();
            } else if (half.size() != values.size()) {
                try {
                    half = DeviceBuffer<__half>(values.size());
                    scale = DeviceBuffer<float>(2);
                } catch (const Error& e) {
                    if (e.code() != ErrorCode::OutOfMemory) throw;
                    return false;
                }
            }
            return true;
        };
        const auto larger_than_l2 = [&](const DeviceBuffer<float>& v) {
            return half_any_size || v.bytes() > static_cast<std::size_t>(l2_bytes);
        };
        for (Level& level : levels) {
            const bool on = half_products && !half_out_of_memory;
            if (!keep(on && !ap_float && level.ap_offsets.size() > 0 &&
                          larger_than_l2(level.ap_values),
                      level.ap_values, level.ap_half, level.ap_scale) ||
                !keep(on && level.coarse_block > 3 && larger_than_l2(level.c_values),
                      level.c_values, level.c_half, level.c_scale)) {
                half_out_of_memory = true;
                update_half_copies(); // (frees them all)
                return;
            }
        }
    }
    /// `key` with the half copies' pointers (the graphs launch k_to_half and read them).
    std::vector<std::uintptr_t> half_key(std::vector<std::uintptr_t> key) const {
        for (const Level& level : levels) {
            key.push_back(reinterpret_cast<std::uintptr_t>(level.c_half.data()));
            key.push_back(reinterpret_cast<std::uintptr_t>(level.ap_half.data()));
        }
        key.push_back(reinterpret_cast<std::uintptr_t>(fine_half.data()));
        return key;
    }
    /// The fine upper part's half copy, made from its values and the diagonal planes `diag`
    /// (after each update; launched directly, outside the re-value's graph, as the update is),
    /// or freed when not wanted.
    void update_fine_half(const float* diag) {
        if (!half_products || half_out_of_memory ||
            (!half_any_size && fine_bytes() <= static_cast<std::size_t>(l2_bytes))) {
            fine_half = DeviceBuffer<__half>();
            return;
        }
        const std::int64_t n = 9 * static_cast<std::int64_t>(fine_upper->num_slots());
        if (fine_half.size() != static_cast<std::size_t>(n)) {
            try {
                fine_half = DeviceBuffer<__half>(n);
                fine_half_scale = DeviceBuffer<float>(2);
            } catch (const Error& e) { // no room: float products from now on
                if (e.code() != ErrorCode::OutOfMemory) throw;
                half_out_of_memory = true;
                fine_half = DeviceBuffer<__half>();
                return;
            }
            if (s) EDN_CUDA_CHECK(cudaStreamSynchronize(nullptr)); // allocations: default stream
        }
        to_half<3>(diag, fine_rows, fixed.data(), fine_upper->view().values, n,
                   fine_half_scale.data(), fine_half.data());
    }
    /// The half copy `out` of the n floats `values` of an operator with block size B, `rows`
    /// diagonal blocks `diag` (rows with `fixed` set skipped; nullptr: none), scaled by the
    /// power of two that `scale` receives (k_max_diag, k_to_half).
    template <int B>
    void to_half(const float* diag, Index rows, const std::uint8_t* fixed_rows, const float* values,
                 std::int64_t n, float* scale, __half* out) {
        EDN_CUDA_CHECK(cudaMemsetAsync(scale, 0, 2 * sizeof(float), s));
        k_max_diag<B><<<grid_for(rows), kThreads, 0, s>>>(diag, rows, fixed_rows, scale);
        k_to_half<<<grid_for((n + 3) / 4), kThreads, 0, s>>>(values, n, scale, out);
        EDN_CUDA_CHECK(cudaGetLastError());
    }
    /// Multigrid::Multigrid: uploads h's symbolic levels (or moves them from `built` where
    /// given: built on the device; h then holds their sizes, aggregates and coarse patterns).
    /// `lap` (optional) marks the end of each phase (Multigrid::build's report).
    void init(const MultigridHierarchy& h, int forced_lanes, int forced_warps,
              std::vector<DeviceLevelBuild>* built, const std::uint8_t* fixed_device = nullptr,
              const std::function<void(const char*)>& lap = nullptr);
    /// Dofs of level l's operator.
    static std::size_t level_dofs(const MultigridHierarchy& h, int l) {
        return l == 0 ? 3 * h.fixed.size()
                      : static_cast<std::size_t>(h.coarse[l - 1].pattern.num_rows) *
                            h.coarse[l - 1].block;
    }
    template <int B> void lanczos(const DeviceOp& o, Level& level, int l);
    template <int B, int K> void revalue_level(const DeviceOp& o, int l, bool given_ap = false);
    template <int B>
    void chebyshev(const DeviceOp& o, const Level& level, int l, const float* bv, float* xv,
                   bool zero_start, const RowVector* given_ax = nullptr);
    void cycle(const BinBcsrMatrixView<float>& a, int l, const float* bv, float* xv);
    // solve(): its start and one iteration (launches on s), and the whole solve as one graph
    void enqueue_start(const BinBcsrMatrixView<float>& a, const float* bv, float* xv,
                       const std::uint8_t* fixed_rows, cudaGraphConditionalHandle loop, bool set);
    void enqueue_iteration_head(const BinBcsrMatrixView<float>& a, float* xv,
                                const std::uint8_t* fixed_rows, cudaGraphConditionalHandle loop,
                                cudaGraphConditionalHandle more, bool set);
    void enqueue_iteration_tail(const BinBcsrMatrixView<float>& a, cudaGraphConditionalHandle loop,
                                bool set);
    bool capture_solve(const std::vector<std::uintptr_t>& key, const BinBcsrMatrixView<float>& a,
                       const float* bv, float* xv, const std::uint8_t* fixed_rows);
    bool solve_graph_failed = false; // no conditional graph nodes here: direct launches
};

// lambda_max(D^-1 A) of level l by lanczos_steps() steps of block-Jacobi PCG from the CPU
// twin's start vector (cpu/multigrid.cpp), scalars on the device: w and the Chebyshev
// coefficients land in level.coef without a read-back.
template <int B> void Multigrid::Impl::lanczos(const DeviceOp& o, Level& level, int l) {
    const Index n = o.p.num_rows;
    const std::int64_t dofs = std::int64_t(B) * n;
    float *rv = r[l].data(), *zv = d[l].data(), *pv = x[l].data(), *qv = q[l].data();
    double* sc = level.scalars.data();
    EDN_CUDA_CHECK(cudaMemcpyAsync(rv, level.lanczos_start.data(), dofs * sizeof(float),
                                   cudaMemcpyDeviceToDevice, s));
    k_precondition<B>
        <<<grid_for(n), kThreads, 0, s>>>(n, level.inverse_diag.data(), rv, zv, unit_coef.data());
    EDN_CUDA_CHECK(cudaMemcpyAsync(pv, zv, dofs * sizeof(float), cudaMemcpyDeviceToDevice, s));
    dot_to(rv, zv, dofs, sc + kRz);
    k_lanczos_init<<<1, 1, 0, s>>>(sc);
    const int row_blocks = static_cast<int>(std::min<std::int64_t>(grid_for(n), 1024));
    const int steps = lanczos_steps(settings, l, levels[0].fixed_prolongator);
    for (int it = 0; it < steps; ++it) {
        const RowVector qr = product<B>(o, pv, qv, l); // the cycle's own products
        k_lanczos_pq<B>
            <<<row_blocks, kThreads, 0, s>>>(n, pv, qr, partials.data(), lanczos_done.data(), sc);
        k_lanczos_rz<B><<<row_blocks, kThreads, 0, s>>>(n, sc, level.inverse_diag.data(), qr, rv,
                                                        zv, partials.data(), lanczos_done.data());
        k_lanczos_p<<<grid_for(dofs), kThreads, 0, s>>>(dofs, sc, zv, pv);
    }
    k_lanczos_finish<<<1, 32, 0, s>>>(sc, level.damping, settings.smoother_ratio,
                                      smoother_degree(settings, level.fixed_prolongator),
                                      level.coef.data());
}

// given_ap: A P and the diagonal are formed already (the order-p level's matrix-free re-value).
template <int B, int K>
void Multigrid::Impl::revalue_level(const DeviceOp& o, int l, bool given_ap) {
    Level& level = levels[l];
    const Index n = o.p.num_rows;
    k_inverse_diag<B><<<grid_for(n), kThreads, 0, s>>>(o, level.inverse_diag.data());
    lanczos<B>(o, level, l);
    const float* omega = level.coef.data();
    if (!given_ap)
        k_gather_blocks<B>
            <<<grid_for(level.entries), kThreads, 0, s>>>(o, level.entries, level.blocks.data());
    if (!level.fixed_prolongator)
        with_lanes(level.smooth_lanes, [&]<int G>() {
            k_smooth_prolongator<B, K, G><<<grid_for_groups(level.p_blocks, G), kThreads, 0, s>>>(
                o, level.blocks.data(), level.inverse_diag.data(), level.aggregate.data(),
                level.tentative.data(), level.p_blocks, level.p_rows.data(), level.p_columns.data(),
                level.smooth_offsets.data(), level.smooth_entries.data(), omega,
                level.p_values.data());
        });
    if (!given_ap)
        with_lanes(level.product_lanes, [&]<int G>() {
            k_product<B, K, G><<<grid_for_groups(level.ap_blocks, G), kThreads, 0, s>>>(
                level.blocks.data(), level.ap_blocks, level.pair_offsets.data(),
                level.pair_entry.data(), level.pair_p.data(), level.p_values.data(),
                level.ap_values.data());
        });
    if (level.ap_half.size() > 0) { // the cycle's half copy of A P, scaled by its largest entry
        const std::int64_t count = static_cast<std::int64_t>(level.ap_values.size());
        float* scale = level.ap_scale.data();
        EDN_CUDA_CHECK(cudaMemsetAsync(scale, 0, 2 * sizeof(float), s));
        k_max_abs<<<std::min<std::int64_t>(grid_for(count), 1024), kThreads, 0, s>>>(
            level.ap_values.data(), count, scale);
        k_to_half<<<grid_for((count + 3) / 4), kThreads, 0, s>>>(level.ap_values.data(), count,
                                                                 scale, level.ap_half.data());
    }
    const Index entries = static_cast<Index>(level.g_entries.size());
    with_lanes(level.galerkin_lanes, [&]<int G>() {
        k_galerkin<B, K, G><<<grid_for_groups(entries, G), kThreads, 0, s>>>(
            level.coarse_pattern(), entries, level.g_entries.data(), level.g_offsets.data(),
            level.g_p.data(), level.g_ap.data(),
            level.g_mirror.size() == 0 ? nullptr : level.g_mirror.data(), level.p_values.data(),
            level.ap_values.data(), level.c_values.data(), level.c_diag.data());
    });
    if (level.c_half.size() > 0) // the coarse operator's half copy for the cycle
        to_half<K>(level.c_diag.data(), level.nc, nullptr, level.c_values.data(),
                   static_cast<std::int64_t>(level.c_values.size()), level.c_scale.data(),
                   level.c_half.data());
    EDN_CUDA_CHECK(cudaGetLastError());
}

// The Chebyshev smoother (solver/lanczos.hpp, chebyshev_coefficients; the CPU twin's order of
// operations): the first kernel starts r, d and x, each later step is one product and one fused
// kernel (r -= A d, d = c1 d + c2 D^-1 r, x += d).
template <int B>
void Multigrid::Impl::chebyshev(const DeviceOp& o, const Level& level, int l, const float* bv,
                                float* xv, bool zero_start, const RowVector* given_ax) {
    const Index n = o.p.num_rows;
    const float* c = level.coef.data() + 1;
    const float* inv = level.inverse_diag.data();
    float *rv = r[l].data(), *dv = d[l].data(), *qv = q[l].data();
    const RowVector ax = zero_start ? RowVector{rv, B}
                         : given_ax ? *given_ax
                                    : product<B>(o, xv, rv, l);
    k_chebyshev_first<B>
        <<<grid_for(n), kThreads, 0, s>>>(n, inv, bv, ax, rv, dv, xv, c, zero_start);
    const int degree = smoother_degree(settings, level.fixed_prolongator);
    for (int k = 1; k < degree; ++k) {
        const RowVector q = product<B>(o, dv, qv, l);
        k_chebyshev_step<B><<<grid_for(n), kThreads, 0, s>>>(n, inv, q, rv, dv, xv, c + 2 * k);
    }
}

void Multigrid::Impl::cycle(const BinBcsrMatrixView<float>& a, int l, const float* bv, float* xv) {
    if (l == static_cast<int>(levels.size())) {
        const std::int64_t n = std::int64_t(coarsest_rows) * coarsest_block;
        k_dense<<<static_cast<int>((n * 32 + kThreads - 1) / kThreads), kThreads, 0, s>>>(
            n, coarsest_inverse.data(), bv, xv);
        return;
    }
    const DeviceOp o =
        l == 0 ? DeviceOp{3, a.pattern, fine_values.data(), fine_diag.data(), fixed.data()}
               : op(a, l);
    const Level& level = levels[l];
    with_blocks(level.block, level.coarse_block, [&]<int B, int K>() {
        const Index n = o.p.num_rows;
        chebyshev<B>(o, level, l, bv, xv, true);
        const RowVector ax = product<B>(o, xv, r[l].data(), l);
        float* bc = b[l + 1].data();
        float* xc = x[l + 1].data();
        const auto transfer = [&](auto values) {
            with_lanes(level.restrict_lanes, [&]<int G>() { // b_c = P^T (b - A x)
                k_restrict<B, K, G><<<grid_for_groups(level.nc, G), kThreads, 0, s>>>(
                    level.nc, level.r_offsets.data(), level.r_blocks.data(), level.r_rows.data(),
                    values, bv, ax, bc);
            });
            cycle(a, l + 1, bc, xc);
            with_lanes(level.prolong_lanes, [&]<int G>() {
                k_prolong<B, K, G><<<grid_for_groups(n, G), kThreads, 0, s>>>(
                    n, level.p_offsets.data(), level.p_columns.data(), values, xc, xv, B);
            });
        };
        if constexpr (B == K) {
            if (level.p_weights.size() > 0)
                transfer(IsotropicWeights{level.p_weights.data()});
            else
                transfer(level.p_values.data());
        } else {
            transfer(level.p_values.data());
        }
        if (level.ap_offsets.size() > 0) { // a given P: A (x + P x_c) = A x + (A P) x_c
            with_lanes(level.ap_lanes, [&]<int G>() {
                if (level.ap_half.size() > 0)
                    k_prolong<B, K, G><<<grid_for_groups(n, G), kThreads, 0, s>>>(
                        n, level.ap_offsets.data(), level.ap_columns.data(),
                        HalfOperator{level.ap_half.data(), level.ap_scale.data()}, xc,
                        const_cast<float*>(ax.v), ax.stride);
                else
                    k_prolong<B, K, G><<<grid_for_groups(n, G), kThreads, 0, s>>>(
                        n, level.ap_offsets.data(), level.ap_columns.data(), level.ap_values.data(),
                        xc, const_cast<float*>(ax.v), ax.stride);
            });
            chebyshev<B>(o, level, l, bv, xv, false, &ax);
        } else {
            chebyshev<B>(o, level, l, bv, xv, false);
        }
    });
}

namespace {

// Device zeros of `count` values.
template <class T> DeviceBuffer<T> zeros(std::size_t count) {
    DeviceBuffer<T> d(count);
    if (count) EDN_CUDA_CHECK(cudaMemsetAsync(d.data(), 0, d.bytes()));
    return d;
}

// The sizes the kernels' widths are chosen by (Multigrid::Multigrid).
struct LevelSizes {
    std::int64_t galerkin_pairs, galerkin_entries, restriction_blocks, smooth_entries, p_blocks,
        product_pairs, ap_blocks, nodes, coarse_nodes;
};

} // namespace

void Multigrid::Impl::init(const MultigridHierarchy& h, int forced_lanes, int forced_warps,
                           std::vector<DeviceLevelBuild>* built, const std::uint8_t* fixed_device,
                           const std::function<void(const char*)>& lap) {
    Impl& m = *this;
    m.settings = h.settings;
    m.host_fixed = h.fixed;
    if (fixed_device) { // (a device copy: no wait for a pageable upload)
        m.fixed = DeviceBuffer<std::uint8_t>(h.fixed.size());
        if (!h.fixed.empty())
            EDN_CUDA_CHECK(cudaMemcpyAsync(m.fixed.data(), fixed_device, m.fixed.bytes(),
                                           cudaMemcpyDeviceToDevice));
    } else {
        m.fixed = upload(h.fixed);
    }
    m.fine_rows = static_cast<Index>(h.fixed.size());
    m.levels.resize(h.levels.size());
    const int levels = h.num_levels();
    UploadBatch batch; // (the levels taken from the host)
    for (std::size_t l = 0; l < h.levels.size(); ++l) {
        const MultigridLevel& s = h.levels[l];
        const BlockMatrix& c = h.coarse[l];
        Impl::Level& d = m.levels[l];
        d.block = s.block;
        d.coarse_block = c.block;
        d.n = s.num_nodes;
        d.nc = s.coarse_nodes;
        d.fixed_prolongator = s.fixed_prolongator;
        d.damping = h.settings.prolongator_damping;
        const std::size_t t_values = static_cast<std::size_t>(s.num_nodes) * s.block * c.block;
        d.tentative = !s.tentative.empty()
                          ? batch.add(std::vector<float>(s.tentative.begin(), s.tentative.end()))
                      : s.fixed_prolongator ? DeviceBuffer<float>()
                                            : zeros<float>(t_values); // (made by retentative)
        LevelSizes z;
        if (built && l < built->size()) { // built on the device: moved in
            DeviceLevelBuild& b = (*built)[l];
            d.aggregate = std::move(b.aggregate);
            d.p_offsets = std::move(b.p_offsets);
            d.p_columns = std::move(b.p_columns);
            d.p_blocks = b.p_blocks;
            d.p_values =
                b.p_values.size() > 0 // a given P's; a smoothed P is re-valued
                    ? std::move(b.p_values)
                    : zeros<float>(std::size_t(b.p_blocks) * padded_block(s.block * c.block));
            d.p_rows = std::move(b.p_rows);
            d.smooth_offsets = std::move(b.smooth_offsets);
            d.smooth_entries = std::move(b.smooth_entries);
            d.ap_blocks = b.ap_blocks;
            d.pair_offsets = std::move(b.pair_offsets);
            d.pair_entry = std::move(b.pair_entry);
            d.pair_p = std::move(b.pair_p);
            d.g_offsets = std::move(b.g_offsets);
            d.g_p = std::move(b.g_p);
            d.g_ap = std::move(b.g_ap);
            d.g_mirror = std::move(b.g_mirror);
            d.g_entries = std::move(b.g_entries);
            d.r_offsets = std::move(b.r_offsets);
            d.r_blocks = std::move(b.r_blocks);
            d.r_rows = std::move(b.r_rows);
            d.c_bin_offsets = std::move(b.c_bin_offsets);
            d.c_columns = std::move(b.c_columns);
            d.c_row_counts = std::move(b.c_row_counts);
            d.ap_offsets = std::move(b.ap_offsets);
            d.ap_columns = std::move(b.ap_columns);
            z = {b.galerkin_pairs, b.galerkin_entries, b.p_blocks, b.entries, b.p_blocks,
                 b.product_pairs,  b.ap_blocks,        b.n,        b.nc};
        } else {
            d.aggregate = batch.add(s.aggregate);
            d.p_offsets = batch.add(s.prolongator.offsets);
            d.p_columns = batch.add(s.prolongator.columns);
            d.p_values = batch.add(
                padded_floats(s.prolongator.values, s.block * c.block)); // a given P keeps these
            d.p_blocks = static_cast<Index>(s.prolongator.columns.size());
            d.p_rows = batch.add(rows_of(s.prolongator.offsets));
            {
                std::vector<Index> offsets, entries;
                invert_map(s.smooth_target, d.p_blocks, offsets, entries);
                d.smooth_offsets = batch.add(offsets);
                d.smooth_entries = batch.add(entries);
            }
            d.ap_blocks = static_cast<Index>(s.product.columns.size());
            if (s.fixed_prolongator) {
                d.ap_offsets = batch.add(s.product.offsets);
                d.ap_columns = batch.add(s.product.columns);
            }
            d.pair_offsets = batch.add(s.product_offsets);
            d.pair_entry = batch.add(s.product_entry);
            d.pair_p = batch.add(s.product_p);
            d.g_offsets = batch.add(s.galerkin_offsets);
            d.g_p = batch.add(s.galerkin_p);
            d.g_ap = batch.add(s.galerkin_ap);
            d.g_mirror = batch.add(s.galerkin_mirror);
            // the entries k_galerkin sums: slots with pairs (padding and mirrored lower slots
            // have none) and every diagonal block
            std::vector<Index> g_entries;
            const Index c_slots = c.pattern.num_slots();
            for (Index e = 0; e + 1 < static_cast<Index>(s.galerkin_offsets.size()); ++e)
                if (e >= c_slots || s.galerkin_offsets[e + 1] > s.galerkin_offsets[e])
                    g_entries.push_back(e);
            d.g_entries = batch.add(g_entries);
            d.r_offsets = batch.add(s.restriction_offsets);
            d.r_blocks = batch.add(s.restriction_blocks);
            d.r_rows = batch.add(s.restriction_rows);
            d.c_bin_offsets = batch.add(c.pattern.bin_offsets);
            d.c_columns = batch.add(c.pattern.columns);
            d.c_row_counts = batch.add(c.pattern.row_counts);
            z = {std::int64_t(s.galerkin_p.size()),
                 std::int64_t(g_entries.size()),
                 std::int64_t(s.restriction_blocks.size()),
                 std::int64_t(s.smooth_target.size()),
                 d.p_blocks,
                 std::int64_t(s.product_p.size()),
                 d.ap_blocks,
                 s.num_nodes,
                 s.coarse_nodes};
        }
        d.ap_values = DeviceBuffer<float>(static_cast<std::size_t>(d.ap_blocks) *
                                          padded_block(s.block * c.block));
        d.inverse_diag =
            DeviceBuffer<float>(static_cast<std::size_t>(s.num_nodes) * s.block * s.block);
        d.c_bins = c.pattern.num_bins();
        const std::size_t bb = static_cast<std::size_t>(c.block) * c.block;
        d.c_values = DeviceBuffer<float>(bb * c.pattern.num_slots()); // (host values: unused)
        d.c_diag = DeviceBuffer<float>(bb * c.pattern.num_rows);
        // lanes per sum from the mean sum length (operator rows: their blocks, the diagonal too)
        auto mean = [](std::int64_t total, std::int64_t count) {
            return count == 0 ? 0.0 : double(total) / double(count);
        };
        if (l > 0) {
            const BinBcsrPattern& own = h.coarse[l - 1].pattern;
            d.entries = own.num_slots() + own.num_rows;
            d.blocks = DeviceBuffer<float>(static_cast<std::size_t>(d.entries) *
                                           padded_block(s.block * s.block));
            std::size_t blocks = own.num_rows;
            for (Index r : own.row_counts) blocks += static_cast<std::size_t>(r);
            d.spmv_rows = forced_warps == 0 ? own.num_bins() >= 2 * detail::multiprocessors()
                                            : forced_warps < 0;
            d.spmv_warps =
                bin_warps_for(mean(blocks, own.num_rows), d.spmv_rows, std::abs(forced_warps));
            m.levels[l - 1].half_warps =
                bin_warps_for(mean(blocks, own.num_rows), true, std::abs(forced_warps));
            d.spmv_kernel = choose_spmv_kernel(own.num_rows, own.num_slots());
        }
        d.galerkin_lanes =
            lanes_for(mean(z.galerkin_pairs, z.galerkin_entries), z.galerkin_entries, forced_lanes);
        d.restrict_lanes =
            lanes_for(mean(z.restriction_blocks, z.coarse_nodes), z.coarse_nodes, forced_lanes);
        d.smooth_lanes = lanes_for(mean(z.smooth_entries, z.p_blocks), z.p_blocks, forced_lanes);
        d.product_lanes = lanes_for(mean(z.product_pairs, z.ap_blocks), z.ap_blocks, forced_lanes);
        d.prolong_lanes = lanes_for(mean(z.p_blocks, z.nodes), z.nodes, forced_lanes);
        d.ap_lanes = lanes_for(mean(z.ap_blocks, z.nodes), z.nodes, forced_lanes);
        EDN_CUDA_CHECK(cudaMemsetAsync(d.c_values.data(), 0, d.c_values.bytes()));
    }
    batch.flush();
    for (Impl::Level& d : m.levels) // a given P of w I blocks: its weights for the cycle
        if (d.fixed_prolongator && d.block == 3 && d.coarse_block == 3 && d.p_blocks > 0) {
            d.p_weights = DeviceBuffer<float>(static_cast<std::size_t>(d.p_blocks));
            DeviceBuffer<int> mixed = zeros<int>(1);
            k_isotropic_weights<<<grid_for(d.p_blocks), kThreads>>>(d.p_values.data(), d.p_blocks,
                                                                   d.p_weights.data(),
                                                                   mixed.data());
            int any = 0;
            EDN_CUDA_CHECK(cudaMemcpy(&any, mixed.data(), sizeof any, cudaMemcpyDeviceToHost));
            if (any) d.p_weights = DeviceBuffer<float>();
        }
    if (lap) lap("upload: levels");
    m.coarsest_block = h.coarse.empty() ? 3 : h.coarse.back().block;
    m.coarsest_rows = h.coarse.empty() ? m.fine_rows : h.coarse.back().pattern.num_rows;
    {
        const auto padded = [](std::size_t dofs) { return (dofs + 63) & ~std::size_t(63); };
        std::size_t total = 0;
        for (int l = 0; l < levels; ++l) total += 5 * padded(level_dofs(h, l));
        m.vectors = DeviceBuffer<float>(total);
        float* at = m.vectors.data();
        for (auto* v : {&m.b, &m.x, &m.r, &m.d, &m.q}) v->resize(levels);
        for (int l = 0; l < levels; ++l)
            for (auto* v : {&m.b, &m.x, &m.r, &m.d, &m.q}) {
                (*v)[l].p = at;
                at += padded(level_dofs(h, l));
            }
    }
    for (std::size_t l = 0; l < m.levels.size(); ++l) {
        Impl::Level& d = m.levels[l];
        const std::size_t dofs = level_dofs(h, l);
        d.lanczos_start = DeviceBuffer<float>(dofs); // (cpu::lanczos_start's, in float)
        if (dofs)
            k_lanczos_start<<<grid_for(std::int64_t(dofs)), kThreads>>>(
                std::int64_t(dofs), l == 0 ? m.fixed.data() : nullptr, d.lanczos_start.data());
        EDN_CUDA_CHECK(cudaGetLastError());
        d.scalars = zeros<double>(kLanczosSlots);
        d.coef = zeros<float>(1 + 2 * static_cast<std::size_t>(max_smoother_degree(h.settings)));
    }
    if (lap) lap("upload: vectors, Lanczos starts");
    if (built && !built->empty()) { // member lists made on the device
        std::vector<MultigridNullspace::Level> lists;
        const std::size_t first = h.levels[0].fixed_prolongator ? 1 : 0; // (aggregated levels)
        DeviceBuffer<Index> active;
        Index members = 0;
        for (std::size_t l = first; l < h.levels.size(); ++l) {
            if (l >= built->size()) { // (a small level built on the host)
                std::vector<Index> host_active;
                lists.push_back(MultigridNullspace::host_level(
                    h.levels[l], l == first ? &host_active : nullptr));
                if (l == first) {
                    members = static_cast<Index>(host_active.size());
                    active = upload(host_active);
                }
                continue;
            }
            DeviceLevelBuild& b = (*built)[l];
            MultigridNullspace::Level d;
            d.coarse_nodes = b.nc;
            d.members = b.members;
            d.block = h.levels[l].block;
            d.max_rows = b.max_members * d.block;
            d.offsets = std::move(b.member_offsets);
            d.nodes = std::move(b.member_nodes);
            lists.push_back(std::move(d));
        }
        if (first < built->size()) {
            active = std::move((*built)[first].active);
            members = (*built)[first].members;
        }
        m.nullspace = std::make_unique<MultigridNullspace>(h.settings.modes, std::move(lists),
                                                           std::move(active), members, first);
    } else {
        m.nullspace = std::make_unique<MultigridNullspace>(h);
    }
    if (lap) lap("upload: member lists");
    // EDN_CUDA_GRAPHS=0: direct launches (for profilers, which see no kernel of a conditional node)
    if (const char* env = std::getenv("EDN_CUDA_GRAPHS"); env && std::string_view(env) == "0")
        m.graphs = false;
    m.unit_coef = upload(std::vector<float>{0.f, 1.f});
    EDN_CUDA_CHECK(cudaMemset(m.lanczos_done.data(), 0, m.lanczos_done.bytes()));
    m.partials = DeviceBuffer<double>(2048);
}

Multigrid::Multigrid(const MultigridHierarchy& h, int forced_lanes, int forced_warps)
    : impl_(std::make_unique<Impl>()) {
    impl_->init(h, forced_lanes, forced_warps, nullptr);
}

Multigrid::Multigrid(const MultigridHierarchy& h, std::vector<DeviceLevelBuild>& built,
                     const std::uint8_t* fixed_device, const std::function<void(const char*)>& lap)
    : impl_(std::make_unique<Impl>()) {
    impl_->init(h, 0, 0, &built, fixed_device, lap);
}

std::unique_ptr<Multigrid> Multigrid::build(const BinBcsrPatternView& pattern,
                                            const std::vector<std::uint8_t>& fixed,
                                            const std::uint8_t* fixed_device, const double* rest,
                                            const MultigridSettings& settings,
                                            const DeviceTransfer* first) {
    const auto start = std::chrono::steady_clock::now();
    const Index n = pattern.num_rows;
    EDN_VERIFY(static_cast<Index>(fixed.size()) == n, ErrorCode::Usage,
               "multigrid: " << fixed.size() << " pins for " << n << " rows");
    if (settings.prolongator_damping <= 0) return nullptr;
    // The levels as build_multigrid's loop makes them; the host keeps the sizes, aggregates and
    // coarse patterns (MultigridNullspace, the kernels' widths), not the maps.
    MultigridHierarchy h;
    h.settings = settings;
    h.settings.aggregation = Aggregation::Greedy;
    h.fixed = fixed;
    std::vector<DeviceLevelBuild> built;
    std::vector<std::pair<std::string, double>> phases;
    Index free_nodes = static_cast<Index>(std::count(fixed.begin(), fixed.end(), 0));
    Index level_dofs = 3 * free_nodes;
    BinBcsrPatternView op = pattern;
    Index slots = 0; // of op
    EDN_CUDA_CHECK(cudaMemcpy(&slots, pattern.bin_offsets + pattern.num_bins, sizeof(Index),
                              cudaMemcpyDeviceToHost));
    const std::uint8_t* pins = fixed_device;
    int block = 3;
    // Adds the level in b (its coarse operator's block: coarse_block) and makes its coarse
    // operator the next level's.
    auto add_level = [&](DeviceLevelBuild& b, int coarse_block, bool given) {
        for (const auto& [phase, ms] : b.phases)
            phases.emplace_back("level " + std::to_string(built.size()) + " " + phase +
                                    (phase == "aggregation"
                                         ? " (" + std::to_string(b.rounds) + " rounds)"
                                         : std::string()),
                                ms);
        MultigridLevel level;
        level.num_nodes = b.n;
        level.block = block;
        level.coarse_nodes = b.nc;
        level.fixed_prolongator = given;
        BlockMatrix coarse;
        coarse.block = coarse_block;
        coarse.pattern = std::move(b.coarse);
        h.levels.push_back(std::move(level));
        h.coarse.push_back(std::move(coarse));
        built.push_back(std::move(b));
        op = {built.back().nc, (built.back().nc + kBinRows - 1) / kBinRows,
              built.back().c_bin_offsets.data(), built.back().c_columns.data(),
              built.back().c_row_counts.data()};
        slots = h.coarse.back().pattern.bin_offsets.back();
    };
    if (first) { // p-multigrid: the given transfer, then the aggregation on its coarse nodes
        if (free_nodes == 0) return nullptr; // (as at p = 1: nothing to build)
        EDN_VERIFY(first->coarse_nodes <= n, ErrorCode::Usage,
                   "multigrid: " << first->coarse_nodes << " coarse nodes for " << n << " rows");
        DeviceLevelBuild b;
        if (build_given_level(op, slots, fixed_device, first->coarse_nodes, first->vertex,
                              first->weight, b) != LevelBuild::Built)
            return nullptr;
        add_level(b, 3, true);
        // (pins: the coarse nodes' are their fine nodes', the first ones)
        free_nodes = static_cast<Index>(
            std::count(fixed.begin(), fixed.begin() + first->coarse_nodes, std::uint8_t(0)));
        level_dofs = 3 * free_nodes;
    }
    // EDN_MULTIGRID_SMALL_LEVELS=device: small levels built on the device too, but for their
    // aggregation (the tests run both)
    const char* small_env = std::getenv("EDN_MULTIGRID_SMALL_LEVELS");
    const bool small_on_host = !(small_env && std::string_view(small_env) == "device");
    while (static_cast<int>(h.levels.size()) + 1 < settings.max_levels &&
           level_dofs > settings.coarsest_dofs) {
        DeviceLevelBuild b;
        const BinBcsrPattern* host = // (a small coarse level: its columns came down too)
            !h.coarse.empty() && !h.coarse.back().pattern.columns.empty() ? &h.coarse.back().pattern
                                                                          : nullptr;
        if (host && small_on_host) {
            // This level and those below on the host (cpu::build_aggregated_level, the same
            // hierarchy), uploaded with the levels: on the device each of their passes is a
            // launch or a read-back (the 38 nodes of the 187K bunny's level 2 took 0.6 ms, H100).
            const auto host_start = std::chrono::steady_clock::now();
            std::vector<std::uint8_t> active(static_cast<std::size_t>(host->num_rows), 1);
            if (pins)
                for (Index i = 0; i < host->num_rows; ++i) active[i] = fixed[i] ? 0 : 1;
            while (static_cast<int>(h.levels.size()) + 1 < settings.max_levels &&
                   level_dofs > settings.coarsest_dofs) {
                MultigridLevel level;
                BlockMatrix coarse;
                if (!cpu::build_aggregated_level(h.coarse.back().pattern.view(), active, block,
                                                 level_dofs, h.settings, level, coarse))
                    break;
                h.levels.push_back(std::move(level));
                h.coarse.push_back(std::move(coarse));
                block = settings.modes;
                active.assign(static_cast<std::size_t>(h.coarse.back().pattern.num_rows), 1);
                level_dofs = h.coarse.back().pattern.num_rows * settings.modes;
            }
            phases.emplace_back("small levels on the host",
                                std::chrono::duration<double, std::milli>(
                                    std::chrono::steady_clock::now() - host_start)
                                    .count());
            break;
        }
        const LevelBuild result =
            build_level(op, slots, pins, free_nodes, level_dofs, settings.modes, b, host,
                        pins ? fixed.data() : nullptr);
        if (result == LevelBuild::Host) return nullptr;
        if (result == LevelBuild::Stop) break;
        add_level(b, settings.modes, false);
        pins = nullptr;
        block = settings.modes;
        free_nodes = built.back().nc;
        level_dofs = free_nodes * settings.modes;
    }
    if (built.empty()) return nullptr; // no level: the host's (trivial) hierarchy
    h.coarsest_dofs = h.coarse.back().pattern.num_rows * h.coarse.back().block;
    auto last = std::chrono::steady_clock::now();
    const auto lap = [&](const char* phase) {
        const auto now = std::chrono::steady_clock::now();
        phases.emplace_back(phase, std::chrono::duration<double, std::milli>(now - last).count());
        last = now;
    };
    // EDN_MULTIGRID_BUILD=times: the phases on stderr (for profiling the build; the upload's
    // phases wait for the device only then)
    const char* times_env = std::getenv("EDN_MULTIGRID_BUILD");
    const bool times = times_env && std::string_view(times_env) == "times";
    std::unique_ptr<Multigrid> m(new Multigrid(h, built, fixed_device, [&](const char* phase) {
        if (times) EDN_CUDA_CHECK(cudaStreamSynchronize(0));
        lap(phase);
    }));
    m->retentative(rest, nullptr);            // the build's T: the rigid-body modes at rest
    EDN_CUDA_CHECK(cudaStreamSynchronize(0)); // (the build ends when the device's part does)
    lap("tentative prolongators");
    if (times) {
        for (const auto& [phase, ms] : phases)
            std::fprintf(stderr, "multigrid build: %-32s %8.3f ms\n", phase.c_str(), ms);
        std::fprintf(stderr, "multigrid build: %-32s %8.3f ms\n", "total",
                     std::chrono::duration<double, std::milli>(last - start).count());
    }
    return m;
}

Multigrid::~Multigrid() = default;

void Multigrid::set_graphs(bool on) {
    impl_->graphs = on;
}

void Multigrid::set_fine_operator(MatrixFreeOperator* op) {
    impl_->fine_op = op;
}

MatrixFreeOperator* Multigrid::fine_operator() const {
    return impl_->fine_op;
}

bool Multigrid::revalues_matrix_free() const {
    return impl_->revalues_matrix_free();
}

std::size_t Multigrid::matrix_free_revalue_bytes() const {
    const Impl& m = *impl_;
    return m.transfer_weights.bytes() + m.transfer_columns.bytes() + m.transfer_rows.bytes();
}

void Multigrid::set_matrix_free_revalue(bool on) {
    impl_->matrix_free_revalue = on;
}

void Multigrid::set_upper_products(bool on, bool any_size) {
    impl_->upper_products = on;
    impl_->upper_any_size = any_size;
    if (!on) impl_->fine_upper.reset();
}

void Multigrid::set_half_products(bool on, bool any_size) {
    impl_->half_products = on;
    impl_->half_any_size = any_size;
    if (!on) impl_->fine_half = DeviceBuffer<__half>();
}

int Multigrid::num_levels() const {
    return static_cast<int>(impl_->levels.size()) + 1;
}

void Multigrid::retentative(const double* rest, const double* displacement) {
    std::vector<float*> tentative;
    for (Impl::Level& level : impl_->levels) tentative.push_back(level.tentative.data());
    impl_->nullspace->recompute(rest, displacement, tentative, impl_->s);
}

void Multigrid::revalue(const BinBcsrMatrixView<float>& a) {
    Impl& m = *impl_;
    EDN_VERIFY(a.pattern.num_rows == m.fine_rows, ErrorCode::Usage,
               "multigrid: the matrix has " << a.pattern.num_rows << " rows, the hierarchy "
                                            << m.fine_rows);
    if (!m.fine_kernel_chosen && !m.levels.empty()) {
        Index fine_slots = 0; // the fine pattern lives on the device: its slot count, once
        EDN_CUDA_CHECK(cudaMemcpy(&fine_slots, a.pattern.bin_offsets + a.pattern.num_bins,
                                  sizeof(Index), cudaMemcpyDeviceToHost));
        m.fine_slots = fine_slots;
        m.levels[0].spmv_kernel = choose_spmv_kernel(a.pattern.num_rows, fine_slots);
        m.fine_kernel_chosen = true;
        m.fine_diag = DeviceBuffer<float>(9 * static_cast<std::size_t>(a.pattern.num_rows));
        m.levels[0].entries = fine_slots + a.pattern.num_rows;
    }
    const bool given_ap = m.revalues_matrix_free();
    if (given_ap &&
        (m.transfer_of != m.fine_op || m.transfer_weights.size() != m.fine_op->transfer_floats())) {
        m.transfer_weights = DeviceBuffer<float>(m.fine_op->transfer_floats());
        m.transfer_columns = DeviceBuffer<Index>(4 * std::size_t(m.fine_op->num_cells()));
        m.transfer_rows = DeviceBuffer<Index>(std::size_t(m.levels[0].ap_blocks));
        m.fine_op->galerkin_transfer(m.galerkin_targets(), m.s);
        m.transfer_of = m.fine_op;
    }
    if (!given_ap && !m.levels.empty() && m.levels[0].blocks.size() == 0) // (k_gather_blocks')
        m.levels[0].blocks =
            DeviceBuffer<float>(static_cast<std::size_t>(padded_block(9)) * m.levels[0].entries);
    if (m.l2_bytes < 0) {
        int device = 0, l2 = 0;
        EDN_CUDA_CHECK(cudaGetDevice(&device));
        EDN_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
        m.l2_bytes = l2;
    }
    // The snapshot's upper part for the cycle's fine products and the fine level's Lanczos,
    // where the fine matrix is larger than the L2 cache: gathered from `a` before the graph (its
    // first update builds the pattern, with waits), its diagonal the snapshot's (copied in the
    // graph). H100, bunny: 1.15M tets p = 1 (130 MB) PCG 12.41 -> 11.51 ms per frame; 187K p = 2
    // (274 MB) 15.63 -> 13.51 ms (unlike the block-Jacobi PCG's loop, where p = 2 keeps the full
    // product); 187K p = 1 (23.5 MB, L2-resident, where the full product is fast already and
    // the atomics cost more) 2.93 -> 3.15 ms, so not there. No room for it: full products.
    const PcgTuning tuning;
    const Index fine = a.pattern.num_rows;
    if (m.fine_op && m.fine_upper) {
        m.fine_upper.reset();
        m.fine_y4 = DeviceBuffer<float>();
        m.fine_half = DeviceBuffer<__half>();
    }
    if (!m.fine_op && m.upper_products && !m.upper_out_of_memory && !m.levels.empty() &&
        fine >= tuning.upper_min_rows &&
        (m.upper_any_size || m.fine_bytes() > static_cast<std::size_t>(m.l2_bytes))) {
        try {
            if (!m.fine_upper) {
                m.fine_upper = std::make_unique<UpperMatrix>(m.s);
                m.fine_y4 = DeviceBuffer<float>(4 * static_cast<std::size_t>(fine));
            }
            m.fine_upper->update({a.pattern, a.values, m.fine_diag.data()});
            m.update_fine_half(a.diag);
        } catch (const Error& e) {
            if (e.code() != ErrorCode::OutOfMemory) throw;
            EDN_CUDA_CHECK(cudaStreamSynchronize(m.s));
            m.fine_upper.reset();
            m.fine_y4 = DeviceBuffer<float>();
            m.fine_half = DeviceBuffer<__half>();
            m.upper_out_of_memory = true;
        }
    }
    if (m.fine_upper || m.fine_op || m.levels.empty())
        m.fine_values = DeviceBuffer<float>();
    else if (m.fine_values.bytes() != m.fine_bytes())
        m.fine_values = DeviceBuffer<float>(9 * static_cast<std::size_t>(m.fine_slots));
    m.update_half_copies();
    std::vector<std::uintptr_t> key = m.half_key(Impl::key_of(a, {m.fine_values.data()}));
    key.push_back(
        reinterpret_cast<std::uintptr_t>(m.fine_upper ? m.fine_upper->view().values : nullptr));
    m.add_fine_op_key(key);
    key.push_back(given_ap);
    key.push_back(reinterpret_cast<std::uintptr_t>(m.transfer_weights.data()));
    key.push_back(reinterpret_cast<std::uintptr_t>(m.transfer_columns.data()));
    key.push_back(reinterpret_cast<std::uintptr_t>(m.transfer_rows.data()));
    m.run(m.revalue_graph, key, [&] {
        if (m.fine_op) m.fine_op->take_snapshot(m.s);
        if (!m.levels.empty()) {
            if (m.fine_values.size() > 0)
                EDN_CUDA_CHECK(cudaMemcpyAsync(m.fine_values.data(), a.values,
                                               m.fine_values.bytes(), cudaMemcpyDeviceToDevice,
                                               m.s));
            if (given_ap) { // A P and the diagonal from the fine operator's values
                m.fine_op->galerkin(m.galerkin_targets(), m.levels[0].ap_blocks, m.s);
            } else {
                EDN_CUDA_CHECK(cudaMemcpyAsync(m.fine_diag.data(), a.diag, m.fine_diag.bytes(),
                                               cudaMemcpyDeviceToDevice, m.s));
            }
        }
        for (std::size_t l = 0; l < m.levels.size(); ++l) {
            // the fine level as the snapshot (now equal to a; its values are a's when not kept):
            // its products are the cycle's
            const float* values = m.fine_values.size() > 0 ? m.fine_values.data() : a.values;
            const DeviceOp o =
                l == 0 ? DeviceOp{3, a.pattern, values, m.fine_diag.data(), m.fixed.data()}
                       : m.op(a, static_cast<int>(l));
            with_blocks(m.levels[l].block, m.levels[l].coarse_block, [&]<int B, int K>() {
                m.revalue_level<B, K>(o, static_cast<int>(l), given_ap && l == 0);
            });
        }
    });
    // the coarsest operator (<= coarsest_dofs), inverted on the host in double: one wait
    const int l = static_cast<int>(m.levels.size());
    const DeviceOp o = m.op(a, l);
    const int bb = o.block * o.block;
    const Index rows = o.p.num_rows;
    BinBcsrPattern& pattern = m.coarsest_pattern;
    if (pattern.num_rows != rows || pattern.bin_offsets.empty()) {
        pattern.num_rows = rows;
        pattern.bin_offsets.resize(o.p.num_bins + 1);
        pattern.row_counts.resize(rows);
        EDN_CUDA_CHECK(cudaMemcpy(pattern.bin_offsets.data(), o.p.bin_offsets,
                                  pattern.bin_offsets.size() * sizeof(Index),
                                  cudaMemcpyDeviceToHost));
        EDN_CUDA_CHECK(cudaMemcpy(pattern.row_counts.data(), o.p.row_counts, rows * sizeof(Index),
                                  cudaMemcpyDeviceToHost));
        pattern.columns.resize(pattern.num_slots());
        EDN_CUDA_CHECK(cudaMemcpy(pattern.columns.data(), o.p.columns,
                                  pattern.columns.size() * sizeof(Index), cudaMemcpyDeviceToHost));
    }
    std::vector<float>& vf = m.coarsest_values;
    std::vector<float>& df = m.coarsest_diag;
    vf.resize(static_cast<std::size_t>(bb) * pattern.num_slots());
    df.resize(static_cast<std::size_t>(bb) * rows);
    EDN_CUDA_CHECK(
        cudaMemcpy(vf.data(), o.values, vf.size() * sizeof(float), cudaMemcpyDeviceToHost));
    EDN_CUDA_CHECK(
        cudaMemcpy(df.data(), o.diag, df.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const std::vector<double> vd(vf.begin(), vf.end()), dd(df.begin(), df.end());
    const std::vector<double> inv = cpu::dense_semidefinite_inverse(
        o.block, pattern.view(), vd.data(), dd.data(), l == 0 ? m.host_fixed.data() : nullptr);
    const std::vector<float> invf(inv.begin(), inv.end());
    if (m.coarsest_inverse.size() != invf.size())
        m.coarsest_inverse = DeviceBuffer<float>(invf.size());
    EDN_CUDA_CHECK(cudaMemcpyAsync(m.coarsest_inverse.data(), invf.data(),
                                   invf.size() * sizeof(float), cudaMemcpyHostToDevice));
    EDN_CUDA_CHECK(cudaStreamSynchronize(0)); // invf is pageable and leaves scope
}

void Multigrid::apply(const BinBcsrMatrixView<float>& a, const float* r, float* z) {
    Impl& m = *impl_;
    m.cycle(a, 0, r, z);
    k_zero_pinned<<<grid_for(m.fine_rows), kThreads, 0, m.s>>>(m.fine_rows, m.fixed.data(), z);
    EDN_CUDA_CHECK(cudaGetLastError());
}

// Flexible CG, every decision on the device (multigrid_kernels.cuh, CgSlot): the start (r_0,
// z_0, p_0, the reference norm, whether to iterate) and the iterations. With graphs, the whole
// solve is one graph whose iterations run under a conditional while node that k_cg_check
// clears: no read-back until the end (the host used to wait for every iteration's scalars,
// leaving the GPU idle for each round trip). An iteration is a head (the product, alpha, the
// update, r.r and the convergence test) and, under a conditional if node that the head sets
// only while the solve goes on, its tail (the V-cycle, beta, the direction): the converged last
// iteration applies no V-cycle (one per solve, about a fifth of a frame's V-cycles at 187K).
void Multigrid::Impl::enqueue_start(const BinBcsrMatrixView<float>& a, const float* bv, float* xv,
                                    const std::uint8_t* fixed_rows, cudaGraphConditionalHandle loop,
                                    bool set) {
    const Index n = fine_rows;
    const std::int64_t dofs = 3 * std::int64_t(n);
    float *rv = cg.data(), *zv = rv + dofs, *pv = zv + dofs;
    double* sc = cg_scalars.data();
    const int grid = grid_for(n);
    k_mask<<<grid, kThreads, 0, s>>>(n, fixed_rows, bv, rv);
    dot_to(rv, rv, dofs, sc + cBb);
    k_zero_free_cold<<<grid, kThreads, 0, s>>>(n, fixed_rows, sc, xv);
    fine_product(a, xv, rv);
    k_residual<<<grid, kThreads, 0, s>>>(n, fixed_rows, bv, rv);
    dot_to(rv, rv, dofs, sc + cRr);
    cycle(a, 0, rv, zv);
    k_zero_pinned<<<grid, kThreads, 0, s>>>(n, fixed.data(), zv);
    dot_to(rv, zv, dofs, sc + cRz);
    EDN_CUDA_CHECK(cudaMemcpyAsync(pv, zv, dofs * sizeof(float), cudaMemcpyDeviceToDevice, s));
    k_cg_start<<<1, 1, 0, s>>>(sc, loop, set);
}

// 8 launches besides the V-cycle: the product, its dot, alpha, the update (with r.r's partials)
// and their sum with the convergence test; then z's dots (pinned rows zeroed), beta with the
// rest of the check, the direction.
void Multigrid::Impl::enqueue_iteration_head(const BinBcsrMatrixView<float>& a, float* xv,
                                             const std::uint8_t* fixed_rows,
                                             cudaGraphConditionalHandle loop,
                                             cudaGraphConditionalHandle more, bool set) {
    const Index n = fine_rows;
    const std::int64_t dofs = 3 * std::int64_t(n);
    float *rv = cg.data(), *zv = rv + dofs, *pv = zv + dofs, *qv = pv + dofs;
    double* sc = cg_scalars.data();
    const int blocks = static_cast<int>(std::min<std::int64_t>(grid_for(n), 1024));
    fine_product(a, pv, qv);
    k_dots<1><<<blocks, kThreads, 0, s>>>(pv, qv, nullptr, dofs, partials.data());
    k_cg_alpha<<<1, 32, 0, s>>>(partials.data(), blocks, sc);
    k_cg_update<<<blocks, kThreads, 0, s>>>(n, fixed_rows, sc, pv, qv, xv, rv, partials.data());
    k_cg_residual<<<1, 32, 0, s>>>(partials.data(), blocks, sc, loop, more, set);
}

void Multigrid::Impl::enqueue_iteration_tail(const BinBcsrMatrixView<float>& a,
                                             cudaGraphConditionalHandle loop, bool set) {
    const Index n = fine_rows;
    const std::int64_t dofs = 3 * std::int64_t(n);
    float *rv = cg.data(), *zv = rv + dofs, *pv = zv + dofs, *qv = pv + dofs;
    double* sc = cg_scalars.data();
    const int grid = grid_for(n);
    const int blocks = static_cast<int>(std::min<std::int64_t>(grid, 1024));
    cycle(a, 0, rv, zv);
    k_cg_dots<<<blocks, kThreads, 0, s>>>(n, fixed.data(), zv, rv, qv, partials.data());
    k_cg_beta<<<1, 32, 0, s>>>(partials.data(), blocks, sc, loop, set);
    k_cg_direction<<<grid_for(dofs), kThreads, 0, s>>>(dofs, sc, zv, pv);
}

bool Multigrid::Impl::capture_solve(const std::vector<std::uintptr_t>& key,
                                    const BinBcsrMatrixView<float>& a, const float* bv, float* xv,
                                    const std::uint8_t* fixed_rows) {
    Graph& g = solve_graph;
    if (g.exec) EDN_CUDA_CHECK(cudaGraphExecDestroy(g.exec));
    g.exec = nullptr;
    if (!capture_stream)
        EDN_CUDA_CHECK(cudaStreamCreateWithFlags(&capture_stream, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    EDN_CUDA_CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphConditionalHandle loop{};
    cudaGraphExec_t exec = nullptr;
    bool captured = false;
    try {
        EDN_CUDA_CHECK(cudaGraphConditionalHandleCreate(&loop, graph, 0, 0));
        // The start, then the while node after it (added to the graph being captured)...
        EDN_CUDA_CHECK(cudaStreamBeginCaptureToGraph(capture_stream, graph, nullptr, nullptr, 0,
                                                     cudaStreamCaptureModeThreadLocal));
        s = capture_stream;
        enqueue_start(a, bv, xv, fixed_rows, loop, true);
        // A conditional node of graph `in` after what was captured so far, ending the capture
        // there; returns its body.
        auto add_conditional = [&](cudaGraph_t in, cudaGraphConditionalHandle handle,
                                   cudaGraphConditionalNodeType type) {
            cudaStreamCaptureStatus status{};
            const cudaGraphNode_t* deps = nullptr;
            const cudaGraphEdgeData* edges = nullptr;
            std::size_t count = 0;
            EDN_CUDA_CHECK(cudaStreamGetCaptureInfo(capture_stream, &status, nullptr, nullptr,
                                                    &deps, &edges, &count));
            cudaGraphNodeParams params{};
            params.type = cudaGraphNodeTypeConditional;
            params.conditional.handle = handle;
            params.conditional.type = type;
            params.conditional.size = 1;
            cudaGraphNode_t node = nullptr;
            EDN_CUDA_CHECK(cudaGraphAddNode(&node, in, deps, edges, count, &params));
            EDN_CUDA_CHECK(cudaStreamUpdateCaptureDependencies(capture_stream, &node, nullptr, 1,
                                                               cudaStreamSetCaptureDependencies));
            EDN_CUDA_CHECK(cudaStreamEndCapture(capture_stream, &in));
            return params.conditional.phGraph_out[0];
        };
        cudaGraph_t body = add_conditional(graph, loop, cudaGraphCondTypeWhile);
        // ...whose body is one iteration: its head, then its tail under an if node.
        cudaGraphConditionalHandle more{};
        EDN_CUDA_CHECK(cudaGraphConditionalHandleCreate(&more, body, 0, 0));
        EDN_CUDA_CHECK(cudaStreamBeginCaptureToGraph(capture_stream, body, nullptr, nullptr, 0,
                                                     cudaStreamCaptureModeThreadLocal));
        enqueue_iteration_head(a, xv, fixed_rows, loop, more, true);
        cudaGraph_t tail = add_conditional(body, more, cudaGraphCondTypeIf);
        EDN_CUDA_CHECK(cudaStreamBeginCaptureToGraph(capture_stream, tail, nullptr, nullptr, 0,
                                                     cudaStreamCaptureModeThreadLocal));
        enqueue_iteration_tail(a, loop, true);
        EDN_CUDA_CHECK(cudaStreamEndCapture(capture_stream, &tail));
        s = nullptr;
        captured = cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    } catch (const Error&) {
        s = nullptr;
        cudaStreamCaptureStatus status{};
        if (cudaStreamIsCapturing(capture_stream, &status) == cudaSuccess &&
            status != cudaStreamCaptureStatusNone) {
            cudaGraph_t partial = nullptr;
            cudaStreamEndCapture(capture_stream, &partial);
            if (partial && partial != graph) cudaGraphDestroy(partial);
        }
        captured = false;
    }
    cudaGraphDestroy(graph);
    if (!captured) { // no conditional nodes here (driver, device): launch directly from now on
        cudaGetLastError();
        solve_graph_failed = true;
        return false;
    }
    g.exec = exec;
    g.key = key;
    return true;
}

PcgResult Multigrid::solve(const BinBcsrMatrixView<float>& a, const float* b, float* x,
                           const PcgSettings& settings, const std::uint8_t* fixed) {
    Impl& m = *impl_;
    const Index n = m.fine_rows;
    const std::int64_t dofs = 3 * std::int64_t(n);
    PcgResult result;
    if (n == 0) {
        result.converged = true;
        return result;
    }
    if (m.cg.size() != 4 * static_cast<std::size_t>(dofs))
        m.cg = DeviceBuffer<float>(4 * static_cast<std::size_t>(dofs));
    if (!m.host_scalars)
        EDN_CUDA_CHECK(
            cudaMallocHost(reinterpret_cast<void**>(&m.host_scalars), kCgSlots * sizeof(double)));
    double* host = m.host_scalars;
    std::fill(host, host + kCgSlots, 0.0);
    host[cTol2] = settings.relative_tolerance * settings.relative_tolerance;
    host[cMaxIterations] = settings.max_iterations;
    host[cWarm] = settings.warm_start ? 1 : 0;
    double* sc = m.cg_scalars.data();
    EDN_CUDA_CHECK(
        cudaMemcpyAsync(sc, host, kCgSlots * sizeof(double), cudaMemcpyHostToDevice, nullptr));
    // (the upper part's values: the cycle's fine products change with set_upper_products)
    std::vector<std::uintptr_t> key = m.half_key(
        Impl::key_of(a, {b, x, fixed, m.cg.data(), m.coarsest_inverse.data(), m.fine_values.data(),
                         m.fine_upper ? m.fine_upper->view().values : nullptr}));
    m.add_fine_op_key(key);
    const bool graph =
        m.graphs && !m.graphs_failed && !m.solve_graph_failed &&
        ((m.solve_graph.exec && m.solve_graph.key == key) || m.capture_solve(key, a, b, x, fixed));
    auto read_back = [&] {
        EDN_CUDA_CHECK(
            cudaMemcpyAsync(host, sc, kCgSlots * sizeof(double), cudaMemcpyDeviceToHost, nullptr));
        EDN_CUDA_CHECK(cudaStreamSynchronize(nullptr));
    };
    if (graph) {
        EDN_CUDA_CHECK(cudaGraphLaunch(m.solve_graph.exec, nullptr));
        read_back();
    } else { // the same kernels launched directly, the status read after each part
        m.enqueue_start(a, b, x, fixed, {}, false);
        read_back();
        while (static_cast<int>(host[cStatus]) == kCgRunning) {
            m.enqueue_iteration_head(a, x, fixed, {}, {}, false);
            read_back();
            if (static_cast<int>(host[cStatus]) != kCgRunning) break;
            m.enqueue_iteration_tail(a, {}, false);
            read_back();
        }
    }
    result.iterations = static_cast<int>(host[cIterations]);
    result.initial_residual = std::sqrt(host[cRr0]);
    result.final_residual = std::sqrt(host[cRr]);
    result.reference_norm = std::sqrt(host[cRef2]);
    const int status = static_cast<int>(host[cStatus]);
    result.converged = status == kCgConverged;
    result.breakdown = status == kCgBreakdown;
    EDN_CUDA_CHECK(cudaGetLastError());
    return result;
}

std::vector<float> Multigrid::apply(const BinBcsrMatrixView<float>& a,
                                    const std::vector<float>& r) {
    DeviceBuffer<float> rd = upload(r), zd(r.size());
    apply(a, rd.data(), zd.data());
    std::vector<float> z(r.size());
    EDN_CUDA_CHECK(cudaMemcpy(z.data(), zd.data(), zd.bytes(), cudaMemcpyDeviceToHost));
    return z;
}

PcgResult Multigrid::solve(const BinBcsrMatrixView<float>& a, const std::vector<float>& b,
                           std::vector<float>& x, const PcgSettings& settings) {
    EDN_VERIFY(b.size() == x.size() && b.size() == 3 * impl_->host_fixed.size(), ErrorCode::Usage,
               "multigrid: solve with " << b.size() << " and " << x.size() << " values, "
                                        << 3 * impl_->host_fixed.size() << " dofs");
    const DeviceBuffer<float> bd = upload(b);
    DeviceBuffer<float> xd = upload(x);
    const PcgResult result = solve(a, bd.data(), xd.data(), settings, impl_->fixed.data());
    EDN_CUDA_CHECK(cudaMemcpy(x.data(), xd.data(), xd.bytes(), cudaMemcpyDeviceToHost));
    return result;
}

std::vector<float> Multigrid::download_coarse(int l) const {
    const Impl::Level& c = impl_->levels.at(l);
    std::vector<float> out(c.c_values.size() + c.c_diag.size());
    EDN_CUDA_CHECK(
        cudaMemcpy(out.data(), c.c_values.data(), c.c_values.bytes(), cudaMemcpyDeviceToHost));
    EDN_CUDA_CHECK(cudaMemcpy(out.data() + c.c_values.size(), c.c_diag.data(), c.c_diag.bytes(),
                              cudaMemcpyDeviceToHost));
    return out;
}

std::vector<float> Multigrid::download_tentative(int l) const {
    const Impl::Level& c = impl_->levels.at(l);
    std::vector<float> out(c.tentative.size());
    EDN_CUDA_CHECK(
        cudaMemcpy(out.data(), c.tentative.data(), c.tentative.bytes(), cudaMemcpyDeviceToHost));
    return out;
}

std::vector<float> Multigrid::download_prolongator(int l) const {
    const Impl::Level& c = impl_->levels.at(l);
    const int bk = c.block * c.coarse_block, pk = padded_block(bk);
    std::vector<float> padded(c.p_values.size());
    EDN_CUDA_CHECK(
        cudaMemcpy(padded.data(), c.p_values.data(), c.p_values.bytes(), cudaMemcpyDeviceToHost));
    std::vector<float> out(padded.size() / pk * bk);
    for (std::size_t t = 0; t < padded.size() / pk; ++t)
        std::copy_n(padded.begin() + t * pk, bk, out.begin() + t * bk);
    return out;
}

SymbolicLevel Multigrid::download_symbolic(int l) const {
    const Impl::Level& d = impl_->levels.at(static_cast<std::size_t>(l));
    auto get = [](const DeviceBuffer<Index>& b) {
        std::vector<Index> v(b.size());
        if (!v.empty())
            EDN_CUDA_CHECK(cudaMemcpy(v.data(), b.data(), b.bytes(), cudaMemcpyDeviceToHost));
        return v;
    };
    SymbolicLevel s;
    s.aggregate = get(d.aggregate);
    s.p_offsets = get(d.p_offsets);
    s.p_columns = get(d.p_columns);
    s.smooth_offsets = get(d.smooth_offsets);
    s.smooth_entries = get(d.smooth_entries);
    s.pair_offsets = get(d.pair_offsets);
    s.pair_entry = get(d.pair_entry);
    s.pair_p = get(d.pair_p);
    s.g_offsets = get(d.g_offsets);
    s.g_p = get(d.g_p);
    s.g_ap = get(d.g_ap);
    s.g_mirror = get(d.g_mirror);
    s.g_entries = get(d.g_entries);
    s.r_offsets = get(d.r_offsets);
    s.r_blocks = get(d.r_blocks);
    s.r_rows = get(d.r_rows);
    s.coarse.num_rows = d.nc;
    s.coarse.bin_offsets = get(d.c_bin_offsets);
    s.coarse.columns = get(d.c_columns);
    s.coarse.row_counts = get(d.c_row_counts);
    return s;
}

double Multigrid::lambda_max(int l) const {
    double lambda = 0;
    EDN_CUDA_CHECK(cudaMemcpy(&lambda, impl_->levels.at(l).scalars.data() + kLambda, sizeof(double),
                              cudaMemcpyDeviceToHost));
    return lambda;
}

} // namespace edn::cuda
