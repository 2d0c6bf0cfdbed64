// The device twin of cpu::retentative_multigrid: tentative prolongators at the current positions
// (cuda/multigrid_nullspace.cuh). The CPU reference is cpu/multigrid_nullspace.cpp: the same
// modes, the same modified Gram-Schmidt and drop rule, in double; sums run in another order, so
// T agrees to rounding (float storage), not bit for bit.
#include "cuda/block_reduce.cuh"
#include "cuda/multigrid_nullspace.cuh"

#include <algorithm>
#include <cmath>

namespace edn::cuda {
namespace {

constexpr int kNullThreads = 256;
constexpr int kWarpsPerBlock = kNullThreads / 32;
/// Dynamic shared memory a kernel may use without opting in.
constexpr std::size_t kDefaultShared = 48 * 1024;

constexpr int kCentroidBlocks = 128;

// The centroid of the active nodes' positions in two launches with a fixed summation order
// (reproducible): per-block partial sums over a grid-stride slice, then one block sums the
// partials (one block alone took 87 us at 39K nodes: too few loads in flight).
__global__ void k_centroid_partials(const double* rest, const double* displacement,
                                    const Index* active, Index count, double* partials) {
    __shared__ double s[3][kNullThreads];
    double acc[3] = {0, 0, 0};
    for (Index k = blockIdx.x * kNullThreads + threadIdx.x; k < count;
         k += kCentroidBlocks * kNullThreads) {
        const std::int64_t i = active[k];
        for (int a = 0; a < 3; ++a)
            acc[a] += rest[3 * i + a] + (displacement ? displacement[3 * i + a] : 0.0);
    }
    for (int a = 0; a < 3; ++a) s[a][threadIdx.x] = acc[a];
    __syncthreads();
    for (int half = kNullThreads / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half)
            for (int a = 0; a < 3; ++a) s[a][threadIdx.x] += s[a][threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int a = 0; a < 3; ++a) partials[3 * blockIdx.x + a] = s[a][0];
}

__global__ void k_centroid_finish(const double* partials, Index count, double* center) {
    double sum[3];
    block_sum_partials<3, kCentroidBlocks>(partials, kCentroidBlocks, sum);
    if (threadIdx.x == 0)
        for (int a = 0; a < 3; ++a) center[a] = count > 0 ? sum[a] / count : 0.0;
}

__device__ inline double warp_total(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v; // every lane holds the sum
}

// Row `comp` (< 3), column c of the rigid-body modes of a node at x about `center` (as
// edn::rigid_body_modes).
__device__ inline double rigid_mode(const double x[3], const double* center, int comp, int c) {
    if (c < 3) return comp == c ? 1.0 : 0.0;
    const double d[3] = {x[0] - center[0], x[1] - center[1], x[2] - center[2]};
    // column 3 + a: e_a x d
    switch (c - 3) {
    case 0:
        return comp == 1 ? -d[2] : comp == 2 ? d[1] : 0.0;
    case 1:
        return comp == 0 ? d[2] : comp == 2 ? -d[0] : 0.0;
    default:
        return comp == 0 ? -d[1] : comp == 1 ? d[0] : 0.0;
    }
}

// One warp per aggregate: the near-null rows of its members (the rigid modes at the positions
// when `rest` is given, else the previous level's R blocks), orthonormalised column by column;
// each lane owns rows lane, lane + 32, ... of the aggregate's block of `q`.
// kShared: a block of W warps per aggregate with its columns in (dynamic) shared memory instead
// of the global scratch `q`: the Gram-Schmidt's ~K^2 dependent passes over the rows then wait on
// shared loads, not L2 (coarse levels: ~40 aggregates of ~300 rows took 112 us). W > 1 for
// levels of large aggregates (the block's threads own rows tid, tid + 32 W, ...; each sum is
// the warps' totals added in warp order): one warp per aggregate walked the rows of the largest
// aggregate, some 1,000, 48 times (119 us for the 38 aggregates of the 187K bunny's level 1,
// H100, in every re-value).
template <int B, int K, bool kShared, int W>
__global__ void k_tentative(Index coarse_nodes, const Index* offsets, const Index* nodes,
                            const double* rest, const double* displacement, const double* center,
                            const double* near_null, double* q, float* tentative, double* r_out) {
    static_assert(W == 1 || kShared, "several warps per aggregate need the shared columns");
    extern __shared__ double shared_columns[];
    __shared__ double warp_sums[W];
    constexpr int T = 32 * W; // threads of one aggregate
    const Index agg = kShared ? static_cast<Index>(blockIdx.x)
                              : (static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int tid = kShared ? static_cast<int>(threadIdx.x) : static_cast<int>(threadIdx.x & 31);
    if (agg >= coarse_nodes) return; // whole warps (blocks, when shared) leave together
    // the sum of v over the aggregate's threads, in every thread
    auto total = [&](double v) {
        v = warp_total(v);
        if constexpr (W == 1) {
            return v;
        } else {
            __syncthreads(); // (the last sum's readers are done)
            if ((tid & 31) == 0) warp_sums[tid / 32] = v;
            __syncthreads();
            double sum = 0;
            for (int w = 0; w < W; ++w) sum += warp_sums[w];
            return sum;
        }
    };
    const Index first = offsets[agg];
    const Index rows = (offsets[agg + 1] - first) * B;
    double* qa = kShared ? shared_columns : q + static_cast<std::int64_t>(first) * B * K;
    for (Index row = tid; row < rows; row += T) {
        const std::int64_t node = nodes[first + row / B];
        const int comp = row % B;
        if (rest) {
            double x[3];
            for (int a = 0; a < 3; ++a)
                x[a] = rest[3 * node + a] + (displacement ? displacement[3 * node + a] : 0.0);
            for (int c = 0; c < K; ++c) qa[row * K + c] = rigid_mode(x, center, comp, c);
        } else {
            for (int c = 0; c < K; ++c) qa[row * K + c] = near_null[(node * B + comp) * K + c];
        }
    }
    double* r = r_out + static_cast<std::int64_t>(agg) * K * K;
    if (tid == 0)
        for (int k = 0; k < K * K; ++k) r[k] = 0;
    for (int c = 0; c < K; ++c) {
        double t = 0;
        for (Index row = tid; row < rows; row += T) t += qa[row * K + c] * qa[row * K + c];
        const double norm0 = total(t);
        for (int c2 = 0; c2 < c; ++c2) {
            t = 0;
            for (Index row = tid; row < rows; row += T) t += qa[row * K + c2] * qa[row * K + c];
            const double dot = total(t);
            if (tid == 0) r[c2 * K + c] = dot;
            for (Index row = tid; row < rows; row += T) qa[row * K + c] -= dot * qa[row * K + c2];
        }
        t = 0;
        for (Index row = tid; row < rows; row += T) t += qa[row * K + c] * qa[row * K + c];
        double norm = total(t);
        if (!(norm > 1e-20 * norm0) || norm0 == 0) { // dependent: drop the column
            for (Index row = tid; row < rows; row += T) qa[row * K + c] = 0;
            continue; // r[c][c] stays 0
        }
        norm = sqrt(norm);
        if (tid == 0) r[c * K + c] = norm;
        for (Index row = tid; row < rows; row += T) qa[row * K + c] /= norm;
    }
    for (Index row = tid; row < rows; row += T) {
        const std::int64_t node = nodes[first + row / B];
        const int comp = row % B;
        for (int c = 0; c < K; ++c)
            tentative[(node * B + comp) * K + c] = static_cast<float>(qa[row * K + c]);
    }
}

/// Warps per aggregate of a level of `aggregates` whose largest has `max_rows` rows (k_tentative):
/// 8 for a few large ones (the 187K bunny's levels 1 and 2: 38 and 2 aggregates, 124 -> 33 and
/// 26 -> 14 us, H100), one where there are enough aggregates to fill the device (its level 0,
/// 2,202 of up to ~150 rows: 30 us with one warp, 57 with 8).
inline int tentative_warps(Index aggregates, Index max_rows) {
    return aggregates <= 512 && max_rows > 128 ? 8 : 1;
}

template <class T> DeviceBuffer<T> to_device(const std::vector<T>& v) {
    DeviceBuffer<T> d(v.size());
    if (!v.empty())
        EDN_CUDA_CHECK(
            cudaMemcpy(d.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}

// The dynamic shared memory k_tentative may use past the default 48 KB: the device's opt-in
// limit less the kernels' largest static sums (0 without an opt-in above the default), set on
// the kernels once per process (each build asked the driver again, 12 calls).
std::size_t opt_in_shared() {
    static const std::size_t limit = [] {
        int device = 0, optin = 0;
        EDN_CUDA_CHECK(cudaGetDevice(&device));
        EDN_CUDA_CHECK(
            cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        if (static_cast<std::size_t>(optin) <= kDefaultShared) return std::size_t(0);
        const void* kernels[] = {reinterpret_cast<const void*>(k_tentative<3, 3, true, 1>),
                                 reinterpret_cast<const void*>(k_tentative<3, 6, true, 1>),
                                 reinterpret_cast<const void*>(k_tentative<6, 6, true, 1>),
                                 reinterpret_cast<const void*>(k_tentative<3, 3, true, 8>),
                                 reinterpret_cast<const void*>(k_tentative<3, 6, true, 8>),
                                 reinterpret_cast<const void*>(k_tentative<6, 6, true, 8>)};
        std::size_t static_bytes = 0;
        for (const void* kernel : kernels) {
            cudaFuncAttributes attributes{};
            EDN_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
            static_bytes = std::max(static_bytes, attributes.sharedSizeBytes);
        }
        const std::size_t dynamic = static_cast<std::size_t>(optin) - static_bytes;
        for (const void* kernel : kernels)
            EDN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(dynamic)));
        return dynamic;
    }();
    return limit;
}

} // namespace

MultigridNullspace::Level MultigridNullspace::host_level(const MultigridLevel& s,
                                                         std::vector<Index>* active) {
    Level d;
    d.coarse_nodes = s.coarse_nodes;
    d.block = s.block;
    std::vector<Index> offsets(static_cast<std::size_t>(s.coarse_nodes) + 1, 0), nodes;
    for (Index i = 0; i < s.num_nodes; ++i)
        if (s.aggregate[i] >= 0) ++offsets[s.aggregate[i] + 1];
    for (Index a = 0; a < s.coarse_nodes; ++a) offsets[a + 1] += offsets[a];
    nodes.resize(static_cast<std::size_t>(offsets.back()));
    std::vector<Index> fill(offsets.begin(), offsets.end() - 1);
    for (Index i = 0; i < s.num_nodes; ++i)
        if (s.aggregate[i] >= 0) nodes[fill[s.aggregate[i]]++] = i;
    d.members = offsets.back();
    for (Index a = 0; a < s.coarse_nodes; ++a)
        d.max_rows = std::max<Index>(d.max_rows, (offsets[a + 1] - offsets[a]) * s.block);
    if (active) { // the aggregated nodes in index order
        active->clear();
        active->reserve(nodes.size());
        for (Index i = 0; i < s.num_nodes; ++i)
            if (s.aggregate[i] >= 0) active->push_back(i);
    }
    d.offsets = to_device(offsets);
    d.nodes = to_device(nodes);
    return d;
}

MultigridNullspace::MultigridNullspace(const MultigridHierarchy& h) : modes_(h.settings.modes) {
    first_ = !h.levels.empty() && h.levels[0].fixed_prolongator ? 1 : 0;
    for (std::size_t l = first_; l < h.levels.size(); ++l) {
        std::vector<Index> active;
        levels_.push_back(host_level(h.levels[l], l == first_ ? &active : nullptr));
        if (l == first_) {
            active_count_ = static_cast<Index>(active.size());
            active_ = to_device(active);
        }
    }
    allocate();
}

MultigridNullspace::MultigridNullspace(int modes, std::vector<Level> levels,
                                       DeviceBuffer<Index> active, Index active_count,
                                       std::size_t first)
    : modes_(modes), first_(first), levels_(std::move(levels)), active_(std::move(active)),
      active_count_(active_count) {
    allocate();
}

void MultigridNullspace::allocate() {
    std::size_t scratch = 0, coarse = 0;
    for (const Level& d : levels_) {
        scratch = std::max(scratch, static_cast<std::size_t>(d.members) * d.block * modes_);
        coarse = std::max(coarse, static_cast<std::size_t>(d.coarse_nodes) * modes_ * modes_);
    }
    // Columns of up to the device's opt-in shared memory per block (H100: 227 KB, 4,800 rows of
    // 6 modes) stay in shared memory; the global scratch serves larger aggregates (a coarse
    // aggregate of ~200 nodes took 185 us there).
    std::size_t widest = 0;
    for (const Level& d : levels_)
        widest = std::max(widest, static_cast<std::size_t>(d.max_rows) * modes_ * sizeof(double));
    shared_limit_ =
        widest > kDefaultShared ? std::max(kDefaultShared, opt_in_shared()) : kDefaultShared;
    scratch_ = DeviceBuffer<double>(scratch);
    for (DeviceBuffer<double>& b : near_null_) b = DeviceBuffer<double>(coarse);
}

void MultigridNullspace::recompute(const double* rest, const double* displacement,
                                   const std::vector<float*>& tentative, cudaStream_t stream) {
    if (levels_.empty()) return;
    EDN_VERIFY(rest != nullptr && tentative.size() == first_ + levels_.size(), ErrorCode::Usage,
               "multigrid: no positions or levels for the modes");
    k_centroid_partials<<<kCentroidBlocks, kNullThreads, 0, stream>>>(
        rest, displacement, active_.data(), active_count_, partials_.data());
    k_centroid_finish<<<1, kCentroidBlocks, 0, stream>>>(partials_.data(), active_count_,
                                                         center_.data());
    for (std::size_t j = 0; j < levels_.size(); ++j) {
        const Level& d = levels_[j];
        if (d.coarse_nodes == 0) continue;
        const double* in = j == 0 ? nullptr : near_null_[(j - 1) % 2].data();
        double* out = near_null_[j % 2].data();
        const std::size_t shared = static_cast<std::size_t>(d.max_rows) * modes_ * sizeof(double);
        auto launch = [&]<int B, int K>() {
            auto shared_launch = [&]<int W>() {
                k_tentative<B, K, true, W>
                    <<<static_cast<unsigned>(d.coarse_nodes), 32 * W, shared, stream>>>(
                        d.coarse_nodes, d.offsets.data(), d.nodes.data(), j == 0 ? rest : nullptr,
                        displacement, center_.data(), in, scratch_.data(), tentative[first_ + j],
                        out);
            };
            if (shared <= shared_limit_ && tentative_warps(d.coarse_nodes, d.max_rows) > 1)
                shared_launch.template operator()<8>();
            else if (shared <= shared_limit_)
                shared_launch.template operator()<1>();
            else
                k_tentative<B, K, false, 1>
                    <<<static_cast<unsigned>((d.coarse_nodes + kWarpsPerBlock - 1) /
                                             kWarpsPerBlock),
                       kNullThreads, 0, stream>>>(d.coarse_nodes, d.offsets.data(), d.nodes.data(),
                                                  j == 0 ? rest : nullptr, displacement,
                                                  center_.data(), in, scratch_.data(),
                                                  tentative[first_ + j], out);
        };
        if (d.block == 3 && modes_ == 3)
            launch.template operator()<3, 3>();
        else if (d.block == 3 && modes_ == 6)
            launch.template operator()<3, 6>();
        else if (d.block == 6 && modes_ == 6)
            launch.template operator()<6, 6>();
        else
            EDN_VERIFY(false, ErrorCode::Internal,
                       "multigrid: block " << d.block << " with " << modes_ << " modes");
    }
    EDN_CUDA_CHECK(cudaGetLastError());
}

} // namespace edn::cuda
