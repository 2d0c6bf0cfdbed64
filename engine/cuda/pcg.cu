// CUDA twin of the block-Jacobi PCG (cpu/pcg.cpp) and of the two-level PCG (cpu/two_level.cpp):
// the loop on the host, which enqueues the kernels of pcg_spmv.cu (products fused with the dot
// products) and pcg_kernels.cu (vector updates) in chunks, replayed as CUDA graphs, with the
// scalars computed on the device by the last block of each reducing kernel (fixed-order sums).
#include "cuda/pcg_device.cuh"

#include <cmath>

namespace edn::cuda {

using namespace pcg_detail;

namespace {

/// Pinned host memory (cudaMallocHost), for async read-backs.
template <class T> struct PinnedHost {
    T* data = nullptr;
    explicit PinnedHost(std::size_t count) {
        EDN_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data), count * sizeof(T)));
    }
    ~PinnedHost() {
        if (data) cudaFreeHost(data);
    }
    PinnedHost(const PinnedHost&) = delete;
    PinnedHost& operator=(const PinnedHost&) = delete;
};

template <class T> void upload(DeviceBuffer<T>& dst, const std::vector<T>& src) {
    dst.resize(src.size());
    if (!src.empty())
        EDN_CUDA_CHECK(cudaMemcpy(dst.data(), src.data(), dst.bytes(), cudaMemcpyHostToDevice));
}

SpmvArgs matrix_args(const BinBcsrMatrixView<float>& m) {
    SpmvArgs a{};
    a.bin_offsets = m.pattern.bin_offsets;
    a.columns = m.pattern.columns;
    a.values = m.values;
    a.diag = m.diag;
    a.rows = m.pattern.num_rows;
    a.bins = m.pattern.num_bins;
    a.row_counts = m.pattern.row_counts;
    return a;
}

PcgResult to_result(const PcgState& state) {
    PcgResult result;
    result.iterations = state.iterations;
    result.initial_residual = std::sqrt(state.rr0);
    result.final_residual = std::sqrt(state.rr);
    result.reference_norm = std::sqrt(state.ref2);
    result.converged = state.status == kConverged;
    result.breakdown = state.status == kBreakdown;
    return result;
}

} // namespace

struct Pcg::Impl {
    Index rows = 0;
    PcgOptions options;
    cudaStream_t stream = nullptr;
    DeviceBuffer<float> r, z, p[2], q, inverse_diag;
    std::unique_ptr<UpperMatrix> upper; // options.upper_spmv: the matrix's upper part
    DeviceBuffer<float> q4;             // and q = A p from it (4 floats per row)
    bool upper_out_of_memory = false;   // its allocation failed once: full matrix only
    // Two-level: coarse residual, solution, z, direction, A p and inverse diagonal; inner state.
    DeviceBuffer<float> rc, xc, zc, pc, qc, inverse_diag_c;
    DeviceBuffer<PcgState> inner_state;
    Index coarse_rows = -1;
    DeviceBuffer<double> partials;
    DeviceBuffer<unsigned int> counters; // [0] unused, [1] finished blocks
    DeviceBuffer<PcgState> state;
    PinnedHost<PcgState> host_state{3}; // [0] initial values, [1], [2] read-back slots
    cudaEvent_t checked[2]{};
    bool pdl_supported = false; // programmatic dependent launch needs compute capability 9.0
    int upper_resident_blocks[2] = {0, 0}; // of spmv_upper_kernel<true, 1 | kOneWave...>

    /// The captured chunk graph and what it was captured for (pointers, sizes, options).
    struct GraphKey {
        SpmvArgs args{};
        UpperBinBcsrView<float> upper{};
        float* x = nullptr;
        PcgOptions options{};
        int count = 0;
        // Two-level: the coarse matrix and prolongation the graph was captured with.
        const float* coarse_values = nullptr;
        const float* coarse_diag = nullptr;
        const Index* coarse_pro = nullptr;
        Index coarse_rows = 0;
        int coarse_iterations = 0;
        double coarse_tol = 0;
        bool operator==(const GraphKey& o) const {
            const SpmvArgs& a = args;
            const SpmvArgs& b = o.args;
            return coarse_values == o.coarse_values && coarse_diag == o.coarse_diag &&
                   coarse_pro == o.coarse_pro && coarse_rows == o.coarse_rows &&
                   coarse_iterations == o.coarse_iterations && coarse_tol == o.coarse_tol &&
                   a.bin_offsets == b.bin_offsets && a.columns == b.columns &&
                   a.values == b.values && a.diag == b.diag && a.rows == b.rows &&
                   a.bins == b.bins && a.fixed == b.fixed && a.fused == b.fused &&
                   a.split == b.split && a.row_counts == b.row_counts && x == o.x &&
                   upper.bin_offsets == o.upper.bin_offsets && upper.columns == o.upper.columns &&
                   upper.counts == o.upper.counts && upper.values == o.upper.values &&
                   upper.diag == o.upper.diag && upper.num_rows == o.upper.num_rows &&
                   options == o.options && count == o.count;
        }
    };
    cudaStream_t capture_stream = nullptr; // graphs cannot be captured on the legacy stream
    // Mean row length of the last matrix (warps_per_bin = 0), read back once per matrix.
    const Index* width_of = nullptr;
    std::uint64_t width_generation = 0;
    double mean_width = 0;
    Index slots = 0;
    cudaGraphExec_t chunk_graph = nullptr;
    GraphKey graph_key{};
    bool graph_failed = false; // capture not supported here: launch kernels one by one

    explicit Impl(Index num_rows) : rows(num_rows) {}
    ~Impl() {
        for (cudaEvent_t& e : checked)
            if (e) cudaEventDestroy(e);
        if (chunk_graph) cudaGraphExecDestroy(chunk_graph);
        if (capture_stream) cudaStreamDestroy(capture_stream);
    }
};

/// One solve, in named steps: start (state, inverse diagonal, ||b||, x, the residual product),
/// the product's arguments (warps per bin, upper part), the coarse level's, then the iterations
/// in chunks (graph replay or kernel by kernel) with the status read back one chunk behind.
class Pcg::Solve {
public:
    Solve(Pcg::Impl& d, const BinBcsrMatrixView<float>& a, const CoarseLevelView* coarse,
          const float* b, float* x, const PcgSettings& settings, const std::uint8_t* fixed)
        : d_(d), a_(a), coarse_(coarse), b_(b), x_(x), settings_(settings), fixed_(fixed),
          stream_(d.stream), rows_(d.rows), done_(d.counters.data() + 1),
          row_blocks_(grid_for(d.rows, kUpdateBlock)), n3_(3 * static_cast<std::int64_t>(d.rows)),
          pdl_ok_(d.options.tuning.programmatic_launch && d.pdl_supported) {}

    PcgResult run() {
        start();
        product_args();
        residual();
        choose_upper();
        prepare_coarse();
        if (coarse_) enqueue_coarse(true, stream_, false); // z_0, rz_0 and p_0 = z_0
        prepare_prefetch();
        return iterate();
    }

private:
    /// The state's initial values, the inverse diagonal, ||P b||^2 and the start x.
    void start() {
        PcgState& init = d_.host_state.data[0];
        init = PcgState{};
        init.tol2 = settings_.relative_tolerance * settings_.relative_tolerance;
        init.max_iterations = settings_.max_iterations;
        init.status = kRunning;
        EDN_CUDA_CHECK(cudaMemcpyAsync(d_.state.data(), &init, sizeof(PcgState),
                                       cudaMemcpyHostToDevice, stream_));
        launch_invert_diagonal(a_.diag, rows_, d_.inverse_diag.data(), stream_);
        launch_start(b_, x_, fixed_, rows_, settings_.warm_start, d_.partials.data(), done_,
                     d_.state.data(), stream_);
    }

    /// The product's arguments, with the warps per bin of q = A p from the mean row length.
    void product_args() {
        const PcgTuning& t = d_.options.tuning;
        args_ = matrix_args(a_);
        args_.done = done_;
        args_.partials = d_.partials.data();
        args_.state = d_.state.data();
        args_.inverse_diag = d_.inverse_diag.data();
        args_.fixed = fixed_;
        args_.fused = t.fused_direction && !coarse_;
        if (d_.width_of != a_.pattern.bin_offsets || a_.pattern.generation == 0 ||
            a_.pattern.generation != d_.width_generation) {
            Index slots = 0;
            EDN_CUDA_CHECK(cudaMemcpy(&slots, a_.pattern.bin_offsets + a_.pattern.num_bins,
                                      sizeof slots, cudaMemcpyDeviceToHost));
            d_.mean_width = double(slots) / double(rows_);
            d_.slots = slots;
            d_.width_of = a_.pattern.bin_offsets;
            d_.width_generation = a_.pattern.generation;
        }
        // Warps per bin of q = A p: two for the short rows (p = 1) of a small matrix (latency
        // bound: 127K tets, PCG 3.45 -> 3.31 ms per frame; at 1M tets the one-warp kernel is as
        // fast), one otherwise (four warps measured slower for the long rows of p = 2: 127K-tet
        // frame PCG 47.6 -> 55.0 ms).
        args_.split = 1;
        if (a_.pattern.row_counts != nullptr) {
            if (t.warps_per_bin > 0)
                args_.split = t.warps_per_bin;
            else if (d_.mean_width <= 20.0 && d_.slots <= (1 << 20))
                args_.split = 2;
        }
    }

    /// r_0 = P (b - A x_0), z_0, p_0, r.z and r.r.
    void residual() {
        SpmvArgs res = args_;
        res.x = x_;
        res.b = b_;
        res.r = d_.r.data();
        res.z_out = d_.z.data();
        res.p_out = d_.p[0].data();
        launch_residual_spmv(res, stream_);
    }

    /// q = A p from the upper part: the block-Jacobi loop of large enough systems with short
    /// rows; gathers its values (and pattern, when new), or falls back to the full matrix for
    /// good when it does not fit.
    void choose_upper() {
        const PcgTuning& t = d_.options.tuning;
        use_upper_ = d_.options.upper_spmv && !d_.upper_out_of_memory && !coarse_ &&
                     settings_.max_iterations > 0 && rows_ >= t.upper_min_rows &&
                     d_.mean_width <= t.upper_max_width;
        if (use_upper_) {
            try {
                d_.upper->update(a_);
                if (d_.q4.size() != 4 * static_cast<std::size_t>(rows_)) {
                    d_.q4.resize(4 * static_cast<std::size_t>(rows_));
                    if (stream_) EDN_CUDA_CHECK(cudaStreamSynchronize(nullptr));
                }
            } catch (const Error& e) {
                // No room for the upper part (half the matrix again): this solver keeps the full
                // matrix's product from now on.
                if (e.code() != ErrorCode::OutOfMemory) throw;
                EDN_CUDA_CHECK(cudaStreamSynchronize(stream_));
                d_.upper = std::make_unique<UpperMatrix>(stream_);
                d_.q4 = DeviceBuffer<float>();
                d_.upper_out_of_memory = true;
                use_upper_ = false;
            }
        }
        if (use_upper_) {
            EDN_CUDA_CHECK(cudaMemsetAsync(d_.q4.data(), 0, d_.q4.bytes(), stream_));
            args_.upper = d_.upper->view();
            args_.q4 = reinterpret_cast<float4*>(d_.q4.data());
        }
        // The upper loop's one-wave kernel variants where the unconstrained ones need two waves
        // and the constrained ones need one (998K tets: 47.5-50.1 -> 42.3-47.5 us per iteration).
        if (use_upper_ && d_.upper_resident_blocks[0] == 0)
            upper_spmv_resident_blocks(d_.upper_resident_blocks);
        const int upper_blocks = static_cast<int>(grid_for(rows_, kSpmvBlock));
        one_wave_ =
            use_upper_ && (t.force_one_wave || (upper_blocks > d_.upper_resident_blocks[0] &&
                                                upper_blocks <= d_.upper_resident_blocks[1]));
    }

    /// Two-level: coarse scratch, coarse block Jacobi, the argument blocks of its kernels.
    void prepare_coarse() {
        if (!coarse_) return;
        nc_ = coarse_->matrix.pattern.num_rows;
        coarse_blocks_ = grid_for(nc_, kUpdateBlock);
        if (d_.coarse_rows != nc_) {
            const std::size_t n3c = 3 * static_cast<std::size_t>(nc_);
            for (DeviceBuffer<float>* v : {&d_.rc, &d_.xc, &d_.zc, &d_.pc, &d_.qc}) v->resize(n3c);
            d_.inverse_diag_c.resize(3 * n3c);
            d_.inner_state.resize(1);
            d_.coarse_rows = nc_;
        }
        launch_invert_diagonal(coarse_->matrix.diag, nc_, d_.inverse_diag_c.data(), stream_);
        ca_ = {nc_,
               coarse_->restriction_offsets,
               coarse_->restriction_indices,
               coarse_->restriction_weight,
               coarse_->pro_vertex,
               coarse_->pro_weight,
               fixed_,
               d_.rc.data(),
               d_.xc.data(),
               d_.zc.data(),
               d_.pc.data(),
               d_.inverse_diag_c.data(),
               coarse_->inner_tolerance * coarse_->inner_tolerance,
               coarse_->inner_iterations};
        cargs_ = matrix_args(coarse_->matrix);
        cargs_.done = done_;
        cargs_.partials = d_.partials.data();
        cargs_.state = d_.inner_state.data();
        cargs_.inverse_diag = d_.inverse_diag_c.data();
        cargs_.fixed = fixed_; // vertex v is node v
        cargs_.x = d_.pc.data();
        cargs_.y = d_.qc.data();
        // A P1 matrix (short rows): two warps per bin when small, as for fine P1 systems.
        cargs_.split = nc_ <= (1 << 15) ? 2 : 1;
    }

    /// One coarse correction: z (block Jacobi, on the device already) += P Ac^-1 P^T r.
    void enqueue_coarse(bool initial, cudaStream_t s, bool pdl) {
        launch_restrict(ca_, coarse_blocks_, s, pdl, d_.r.data(), d_.partials.data(), done_,
                        d_.state.data(), d_.inner_state.data());
        const std::int64_t n3c = 3 * static_cast<std::int64_t>(nc_);
        for (int k = 0; k < coarse_->inner_iterations; ++k) {
            launch_direction_spmv(cargs_, pdl_ok_, s);
            launch_update(false, coarse_blocks_, s, pdl_ok_, d_.xc.data(), d_.rc.data(),
                          d_.zc.data(), d_.pc.data(), d_.qc.data(), d_.inverse_diag_c.data(),
                          fixed_, nc_, d_.partials.data(), done_, d_.inner_state.data(),
                          MatrixPrefetch{}, nullptr);
            launch_direction(d_.pc.data(), d_.zc.data(), n3c, d_.inner_state.data(), pdl_ok_, s);
        }
        launch_prolong(ca_, row_blocks_, s, pdl_ok_, d_.r.data(), d_.z.data(), d_.q.data(), rows_,
                       initial, d_.partials.data(), done_, d_.state.data());
        launch_direction(d_.p[0].data(), d_.z.data(), n3_, d_.state.data(), pdl_ok_, s);
    }

    /// Standard loop: L2 prefetch of the matrix head by the update kernel.
    void prepare_prefetch() {
        const std::size_t bytes = d_.options.tuning.prefetch_bytes;
        if (bytes > 0 && d_.pdl_supported && !coarse_)
            prefetch_ = {use_upper_ ? args_.upper.values : args_.values,
                         use_upper_ ? args_.upper.columns : args_.columns,
                         use_upper_ ? args_.upper.bin_offsets : args_.bin_offsets,
                         args_.bins,
                         static_cast<std::uint32_t>(((bytes + row_blocks_ - 1) / row_blocks_ + 15) &
                                                    ~std::size_t{15}),
                         row_blocks_};
    }

    /// Enqueues `count` two-level iterations on `s`.
    void enqueue_two_level(int count, cudaStream_t s) {
        for (int i = 0; i < count; ++i) {
            SpmvArgs dir = args_;
            dir.x = d_.p[0].data();
            dir.y = d_.q.data();
            launch_direction_spmv(dir, pdl_ok_ && i > 0, s);
            launch_update_two_level(row_blocks_, s, pdl_ok_, x_, d_.r.data(), d_.z.data(),
                                    d_.p[0].data(), d_.q.data(), d_.inverse_diag.data(), fixed_,
                                    rows_, d_.partials.data(), done_, d_.state.data());
            enqueue_coarse(false, s, pdl_ok_);
        }
    }

    /// Enqueues `count` block-Jacobi iterations on `s`.
    void enqueue_block_jacobi(int count, cudaStream_t s) {
        for (int i = 0; i < count; ++i) {
            SpmvArgs dir = args_;
            dir.x = d_.p[current_].data();
            dir.z = d_.z.data();
            dir.y = d_.q.data();
            float* p_new = d_.p[current_].data();
            if (args_.fused) {
                p_new = d_.p[1 - current_].data();
                dir.p_out = p_new;
                current_ = 1 - current_;
            }
            const bool pdl_i = pdl_ok_ && i > 0;
            if (use_upper_)
                launch_upper_spmv(dir, one_wave_, pdl_i, s);
            else
                launch_direction_spmv(dir, pdl_i, s);
            launch_update(one_wave_, row_blocks_, s, pdl_ok_, x_, d_.r.data(), d_.z.data(), p_new,
                          d_.q.data(), d_.inverse_diag.data(), fixed_, rows_, d_.partials.data(),
                          done_, d_.state.data(), prefetch_, use_upper_ ? args_.q4 : nullptr);
            if (!args_.fused)
                launch_direction(d_.p[current_].data(), d_.z.data(), n3_, d_.state.data(), pdl_ok_,
                                 s);
        }
    }

    /// Enqueues `count` iterations on `s` (the first kernel follows a status read-back copy or a
    /// graph boundary: no PDL there).
    void enqueue_chunk(int count, cudaStream_t s) {
        if (coarse_)
            enqueue_two_level(count, s);
        else
            enqueue_block_jacobi(count, s);
    }

    /// Captures one chunk on the private capture stream into d.chunk_graph (replacing the old
    /// one); false, remembered, when this device or driver cannot capture or instantiate it.
    bool recapture(const Impl::GraphKey& key) {
        if (d_.chunk_graph) {
            EDN_CUDA_CHECK(cudaGraphExecDestroy(d_.chunk_graph));
            d_.chunk_graph = nullptr;
        }
        if (!d_.capture_stream)
            EDN_CUDA_CHECK(cudaStreamCreateWithFlags(&d_.capture_stream, cudaStreamNonBlocking));
        EDN_CUDA_CHECK(cudaStreamBeginCapture(d_.capture_stream, cudaStreamCaptureModeThreadLocal));
        const int saved = current_;
        enqueue_chunk(d_.options.tuning.check_interval, d_.capture_stream);
        current_ = saved;
        cudaGraph_t graph = nullptr;
        EDN_CUDA_CHECK(cudaStreamEndCapture(d_.capture_stream, &graph));
        const cudaError_t status = cudaGraphInstantiate(&d_.chunk_graph, graph, 0);
        cudaGraphDestroy(graph);
        if (status != cudaSuccess) {
            cudaGetLastError(); // clear it: fall back to plain launches
            d_.chunk_graph = nullptr;
            d_.graph_failed = true;
            return false;
        }
        d_.graph_key = key;
        return true;
    }

    /// Whether chunks replay the captured graph (recaptured when its key changed). A chunk then
    /// always runs check_interval iterations (those after convergence or the cap return at
    /// once); with the fused direction an even count keeps p in one buffer.
    bool use_graph() {
        const int interval = d_.options.tuning.check_interval;
        bool use =
            d_.options.tuning.graph && !d_.graph_failed && (!args_.fused || interval % 2 == 0);
        if (!use) return false;
        Impl::GraphKey key{args_, args_.upper, x_, d_.options, interval};
        if (coarse_) {
            key.coarse_values = coarse_->matrix.values;
            key.coarse_diag = coarse_->matrix.diag;
            key.coarse_pro = coarse_->pro_vertex;
            key.coarse_rows = nc_;
            key.coarse_iterations = coarse_->inner_iterations;
            key.coarse_tol = coarse_->inner_tolerance;
        }
        if (!d_.chunk_graph || !(key == d_.graph_key)) use = recapture(key);
        return use;
    }

    /// Chunks of iterations until the status read back (one chunk behind: the GPU already has
    /// the next chunk queued) is no longer running or max_iterations are enqueued.
    PcgResult iterate() {
        const int interval = d_.options.tuning.check_interval;
        const bool graph = use_graph();
        int enqueued = 0, chunk = 0;
        bool pending = false;
        while (enqueued < settings_.max_iterations) {
            const int count =
                graph ? interval : std::min(interval, settings_.max_iterations - enqueued);
            if (graph)
                EDN_CUDA_CHECK(cudaGraphLaunch(d_.chunk_graph, stream_));
            else
                enqueue_chunk(count, stream_);
            enqueued += count;
            const int slot = chunk & 1;
            EDN_CUDA_CHECK(cudaMemcpyAsync(&d_.host_state.data[1 + slot], d_.state.data(),
                                           sizeof(PcgState), cudaMemcpyDeviceToHost, stream_));
            EDN_CUDA_CHECK(cudaEventRecord(d_.checked[slot], stream_));
            if (pending) {
                const int prev = 1 - slot;
                EDN_CUDA_CHECK(cudaEventSynchronize(d_.checked[prev]));
                if (d_.host_state.data[1 + prev].status != kRunning) break;
            }
            pending = true;
            ++chunk;
        }
        PcgState& final_state = d_.host_state.data[1];
        EDN_CUDA_CHECK(cudaMemcpyAsync(&final_state, d_.state.data(), sizeof(PcgState),
                                       cudaMemcpyDeviceToHost, stream_));
        EDN_CUDA_CHECK(cudaStreamSynchronize(stream_));
        return to_result(final_state);
    }

    Pcg::Impl& d_;
    const BinBcsrMatrixView<float>& a_;
    const CoarseLevelView* coarse_;
    const float* b_;
    float* x_;
    const PcgSettings& settings_;
    const std::uint8_t* fixed_;
    cudaStream_t stream_;
    Index rows_;
    unsigned int* done_;
    unsigned int row_blocks_;
    std::int64_t n3_;
    bool pdl_ok_;
    SpmvArgs args_{};
    bool use_upper_ = false, one_wave_ = false;
    // two-level
    CoarseArgs ca_{};
    SpmvArgs cargs_{};
    Index nc_ = 0;
    unsigned int coarse_blocks_ = 0;
    MatrixPrefetch prefetch_{};
    int current_ = 0; // p buffer holding the latest direction
};

Pcg::Pcg(Index num_rows, PcgOptions options, void* stream)
    : impl_(std::make_unique<Impl>(num_rows)) {
    EDN_VERIFY(num_rows >= 0, ErrorCode::Usage, "Pcg: negative row count " << num_rows);
    Impl& d = *impl_;
    set_options(options);
    d.stream = static_cast<cudaStream_t>(stream);
    d.upper = std::make_unique<UpperMatrix>(stream);
    const std::size_t n3 = 3 * static_cast<std::size_t>(num_rows);
    d.r.resize(n3);
    d.z.resize(n3);
    d.p[0].resize(n3);
    d.p[1].resize(n3);
    d.q.resize(n3);
    d.inverse_diag.resize(3 * n3);
    const Index bins = (num_rows + kWarp - 1) / kWarp;
    const std::int64_t blocks = grid_for(num_rows, kUpdateBlock);
    d.partials.resize(2 * static_cast<std::size_t>(std::max<std::int64_t>(bins, blocks)));
    d.counters.resize(2);
    EDN_CUDA_CHECK(cudaMemset(d.counters.data(), 0, d.counters.bytes()));
    d.state.resize(1);
    int device = 0, major = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&device));
    EDN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    d.pdl_supported = major >= 9;
    for (cudaEvent_t& e : d.checked)
        EDN_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
}

Pcg::~Pcg() = default;

Index Pcg::num_rows() const {
    return impl_->rows;
}
const PcgOptions& Pcg::options() const {
    return impl_->options;
}
void Pcg::set_options(const PcgOptions& options) {
    const PcgTuning& t = options.tuning;
    EDN_VERIFY(t.warps_per_bin == 0 || t.warps_per_bin == 1 || t.warps_per_bin == 2 ||
                   t.warps_per_bin == 4,
               ErrorCode::Usage,
               "Pcg: warps_per_bin must be 0, 1, 2 or 4, got " << t.warps_per_bin);
    EDN_VERIFY(t.check_interval >= 1, ErrorCode::Usage,
               "Pcg: check_interval must be >= 1, got " << t.check_interval);
    impl_->options = options;
}

PcgResult Pcg::solve(const BinBcsrMatrixView<float>& a, const float* b, float* x,
                     const PcgSettings& settings, const std::uint8_t* fixed) {
    return solve_impl(a, nullptr, b, x, settings, fixed);
}

PcgResult Pcg::solve_two_level(const BinBcsrMatrixView<float>& a, const CoarseLevelView& coarse,
                               const float* b, float* x, const PcgSettings& settings,
                               const std::uint8_t* fixed) {
    EDN_VERIFY(coarse.inner_iterations >= 1 && coarse.inner_tolerance > 0 &&
                   coarse.matrix.pattern.num_rows > 0,
               ErrorCode::Usage, "Pcg::solve_two_level: bad coarse level");
    return solve_impl(a, &coarse, b, x, settings, fixed);
}

PcgResult Pcg::solve_impl(const BinBcsrMatrixView<float>& a, const CoarseLevelView* coarse,
                          const float* b, float* x, const PcgSettings& settings,
                          const std::uint8_t* fixed) {
    Impl& d = *impl_;
    EDN_VERIFY(a.pattern.num_rows == d.rows, ErrorCode::Usage,
               "Pcg::solve: matrix has " << a.pattern.num_rows << " rows, solver sized for "
                                         << d.rows);
    EDN_VERIFY(settings.max_iterations >= 0, ErrorCode::Usage,
               "Pcg::solve: negative max_iterations " << settings.max_iterations);
    if (d.rows == 0) {
        PcgResult result;
        result.converged = true;
        return result;
    }
    return Solve(d, a, coarse, b, x, settings, fixed).run();
}

PcgResult Pcg::solve_host(const BinBcsrMatrixView<float>& a, const std::vector<float>& b,
                          std::vector<float>& x, const PcgSettings& settings,
                          const std::vector<std::uint8_t>& fixed) {
    return solve_host_impl(a, nullptr, b, x, settings, fixed);
}

PcgResult Pcg::solve_two_level_host(const BinBcsrMatrixView<float>& a,
                                    const CoarseLevelView& coarse, const std::vector<float>& b,
                                    std::vector<float>& x, const PcgSettings& settings,
                                    const std::vector<std::uint8_t>& fixed) {
    return solve_host_impl(a, &coarse, b, x, settings, fixed);
}

PcgResult Pcg::solve_host_impl(const BinBcsrMatrixView<float>& a, const CoarseLevelView* coarse,
                               const std::vector<float>& b, std::vector<float>& x,
                               const PcgSettings& settings,
                               const std::vector<std::uint8_t>& fixed) {
    const std::size_t n3 = 3 * static_cast<std::size_t>(impl_->rows);
    EDN_VERIFY(b.size() == n3 && x.size() == n3, ErrorCode::Usage,
               "Pcg::solve_host: b has " << b.size() << " and x " << x.size()
                                         << " entries, expected " << n3);
    EDN_VERIFY(
        fixed.empty() || fixed.size() == static_cast<std::size_t>(impl_->rows), ErrorCode::Usage,
        "Pcg::solve_host: fixed has " << fixed.size() << " entries, expected 0 or " << impl_->rows);
    DeviceBuffer<float> db, dx;
    DeviceBuffer<std::uint8_t> dfixed;
    upload(db, b);
    upload(dx, x);
    upload(dfixed, fixed);
    const PcgResult result = solve_impl(a, coarse, db.data(), dx.data(), settings,
                                        fixed.empty() ? nullptr : dfixed.data());
    if (n3) EDN_CUDA_CHECK(cudaMemcpy(x.data(), dx.data(), dx.bytes(), cudaMemcpyDeviceToHost));
    return result;
}

void device_synchronize() {
    EDN_CUDA_CHECK(cudaDeviceSynchronize());
}

} // namespace edn::cuda
