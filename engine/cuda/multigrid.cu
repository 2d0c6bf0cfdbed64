// CUDA twin of the multigrid re-value and V-cycle (cuda/cuda_multigrid.hpp; the CPU reference is
// cpu/multigrid.cpp, the same maps and the same arithmetic in double). One thread per row (or
// per coarse row) in the binned layout: lanes of a bin read consecutive slots.
#include "cuda/block_reduce.cuh"
#include "cuda/cuda_check.cuh"
#include "cuda/cuda_multigrid.hpp"
#include "solver/lanczos.hpp"
#include "sparse/spmv.hpp"

#include <algorithm>
#include <cmath>

namespace edn::cuda {
namespace {

constexpr int kThreads = 256;
inline int grid_for(std::int64_t n) {
    return static_cast<int>((n + kThreads - 1) / kThreads);
}

template <class T> DeviceBuffer<T> upload(const std::vector<T>& v) {
    DeviceBuffer<T> d(v.size());
    if (!v.empty())
        EDN_CUDA_CHECK(
            cudaMemcpy(d.data(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
DeviceBuffer<float> upload_float(const std::vector<double>& v) {
    std::vector<float> f(v.begin(), v.end());
    return upload(f);
}
// The row of every entry of a CSR (offsets: #rows + 1).
std::vector<Index> rows_of(const std::vector<Index>& offsets) {
    std::vector<Index> rows(offsets.empty() ? 0 : static_cast<std::size_t>(offsets.back()));
    for (std::size_t r = 0; r + 1 < offsets.size(); ++r)
        std::fill(rows.begin() + offsets[r], rows.begin() + offsets[r + 1], static_cast<Index>(r));
    return rows;
}
// target[e] in [0, n) or -1 -> for each t the e with target[e] = t, increasing (a counting sort).
void invert_map(const std::vector<Index>& target, Index n, std::vector<Index>& offsets,
                std::vector<Index>& entries) {
    offsets.assign(static_cast<std::size_t>(n) + 1, 0);
    for (Index t : target)
        if (t >= 0) ++offsets[static_cast<std::size_t>(t) + 1];
    for (Index t = 0; t < n; ++t) offsets[t + 1] += offsets[t];
    entries.resize(static_cast<std::size_t>(offsets[n]));
    std::vector<Index> next(offsets.begin(), offsets.end() - 1);
    for (std::size_t e = 0; e < target.size(); ++e)
        if (target[e] >= 0) entries[next[target[e]]++] = static_cast<Index>(e);
}

// A square operator of one level on the device (the fine matrix: block 3 and the pin mask).
struct DeviceOp {
    int block;
    BinBcsrPatternView p;
    const float* values;
    const float* diag;
    const std::uint8_t* fixed;

    __device__ Index slots() const { return p.bin_offsets[p.num_bins]; }
    __device__ bool is_free(Index row) const { return fixed == nullptr || fixed[row] == 0; }
    template <int B> __device__ void load(Index row, Index e, float* out) const {
        if (e >= slots()) {
            for (int k = 0; k < B * B; ++k)
                out[k] = diag[static_cast<std::int64_t>(k) * p.num_rows + row];
            return;
        }
        const Index bin = row / kBinRows;
        const std::int64_t begin = p.bin_offsets[bin], stride = p.bin_offsets[bin + 1] - begin;
        const float* v = values + B * B * begin + (e - begin);
        for (int k = 0; k < B * B; ++k) out[k] = v[k * stride];
    }
};

// Lanes per row (or per coarse entry) of the small levels' kernels: G consecutive lanes share one
// output and split its sum (G a power of two <= 32, picked per level from the mean length of the
// sums, lanes_for); the group's first lane writes. Every lane of a warp reaches the shuffles.
template <int G> __device__ float group_sum(float v) {
    for (int o = G / 2; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o, G);
    return v;
}
template <int G> struct Lane {
    std::int64_t item; // the row / entry / coarse node of the group
    int lane;
    __device__ Lane()
        : item((std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / G),
          lane(static_cast<int>(threadIdx.x % G)) {}
};
inline int lanes_for(double mean_length) {
    return mean_length >= 48 ? 32 : mean_length >= 12 ? 8 : 1;
}
template <class F> void with_lanes(int g, F&& f) {
    if (g == 32)
        f.template operator()<32>();
    else if (g == 8)
        f.template operator()<8>();
    else
        f.template operator()<1>();
}
inline int grid_for_groups(std::int64_t n, int g) {
    return grid_for(n * g);
}

template <int B, int G> __global__ void k_spmv(DeviceOp op, const float* x, float* y) {
    const Lane<G> t;
    const bool valid = t.item < op.p.num_rows;
    const Index row = valid ? static_cast<Index>(t.item) : 0;
    float acc[B] = {};
    if (valid) {
        const Index count = op.p.row_counts[row];
        float blk[B * B];
        for (Index k = t.lane; k <= count; k += G) { // k = 0: the diagonal block
            const Index s = k == 0 ? op.slots() + row : op.p.slot(row, k - 1);
            const Index col = k == 0 ? row : op.p.columns[s];
            op.load<B>(row, s, blk);
            for (int r = 0; r < B; ++r)
                for (int c = 0; c < B; ++c) acc[r] += blk[r * B + c] * x[B * col + c];
        }
    }
    for (int r = 0; r < B; ++r) acc[r] = group_sum<G>(acc[r]);
    if (valid && t.lane == 0)
        for (int r = 0; r < B; ++r) y[B * row + r] = acc[r];
}

// The inverse of a symmetric positive semidefinite block (inert dofs: zero rows and columns), as
// cpu/multigrid.cpp's semidefinite_inverse, in double arithmetic.
template <int B> __device__ void semidefinite_inverse(const float* a, float* inv) {
    double l[B * B] = {};
    bool inert[B] = {};
    double scale = 0;
    for (int i = 0; i < B; ++i) scale = fmax(scale, fabs(double(a[i * B + i])));
    for (int j = 0; j < B; ++j) {
        double d = a[j * B + j];
        for (int k = 0; k < j; ++k) d -= l[j * B + k] * l[j * B + k];
        if (!(d > 1e-6 * scale) || !isfinite(d)) { // float input: a looser relative threshold
            inert[j] = true;
            continue;
        }
        l[j * B + j] = sqrt(d);
        for (int i = j + 1; i < B; ++i) {
            double s = a[i * B + j];
            for (int k = 0; k < j; ++k) s -= l[i * B + k] * l[j * B + k];
            l[i * B + j] = s / l[j * B + j];
        }
    }
    for (int c = 0; c < B; ++c) {
        double y[B] = {};
        for (int i = 0; i < B; ++i) {
            if (inert[i]) continue;
            double s = (i == c) ? 1.0 : 0.0;
            for (int k = 0; k < i; ++k) s -= l[i * B + k] * y[k];
            y[i] = s / l[i * B + i];
        }
        for (int i = B - 1; i >= 0; --i) {
            if (inert[i]) {
                y[i] = 0;
                continue;
            }
            double s = y[i];
            for (int k = i + 1; k < B; ++k) s -= l[k * B + i] * y[k];
            y[i] = s / l[i * B + i];
        }
        for (int i = 0; i < B; ++i) inv[i * B + c] = inert[c] ? 0.0f : float(y[i]);
    }
}

template <int B> __global__ void k_inverse_diag(DeviceOp op, float* inv) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= op.p.num_rows) return;
    float* out = inv + static_cast<std::int64_t>(row) * B * B;
    if (!op.is_free(row)) {
        for (int k = 0; k < B * B; ++k) out[k] = 0;
        return;
    }
    float d[B * B];
    op.load<B>(row, op.slots() + row, d);
    semidefinite_inverse<B>(d, out);
}

template <int B> __device__ void apply_inv(const float* inv, Index row, const float* r, float* z) {
    const float* m = inv + static_cast<std::int64_t>(row) * B * B;
    for (int i = 0; i < B; ++i) {
        float s = 0;
        for (int k = 0; k < B; ++k) s += m[i * B + k] * r[B * row + k];
        z[i] = s;
    }
}

// Per-block partial sums of a.b in double (summed on the host in block order: deterministic).
__global__ void k_dot(const float* a, const float* b, std::int64_t n, double* partials) {
    __shared__ double s[kThreads];
    double t = 0;
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x)
        t += double(a[i]) * double(b[i]);
    s[threadIdx.x] = t;
    __syncthreads();
    for (int o = kThreads / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) s[threadIdx.x] += s[threadIdx.x + o];
        __syncthreads();
    }
    if (threadIdx.x == 0) partials[blockIdx.x] = s[0];
}

// Per-block partial sums of a.b and a.c in double (partials[block], partials[1024 + block]).
__global__ void k_dot2(const float* a, const float* b, const float* c, std::int64_t n,
                       double* partials) {
    __shared__ double s[2][kThreads];
    double t = 0, u = 0;
    for (std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        t += double(a[i]) * double(b[i]);
        u += double(a[i]) * double(c[i]);
    }
    s[0][threadIdx.x] = t;
    s[1][threadIdx.x] = u;
    __syncthreads();
    for (int o = kThreads / 2; o > 0; o >>= 1) {
        if (threadIdx.x < o) {
            s[0][threadIdx.x] += s[0][threadIdx.x + o];
            s[1][threadIdx.x] += s[1][threadIdx.x + o];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = s[0][0];
        partials[1024 + blockIdx.x] = s[1][0];
    }
}

// d = c[0] d + c[1] D^-1 r (rows; c on the device: the Chebyshev coefficients of the level).
template <int B>
__global__ void k_precondition(Index n, const float* inv, const float* r, float* d,
                               const float* c) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    const float c1 = c[0], c2 = c[1];
    float z[B];
    apply_inv<B>(inv, row, r, z);
    for (int k = 0; k < B; ++k) d[B * row + k] = (c1 == 0 ? 0.f : c1 * d[B * row + k]) + c2 * z[k];
}

// Lanczos on the device (no read-backs): scalars of one level's estimate, in double.
enum LanczosSlot { kRz = 0, kRz0, kPq, kRzNew, kStop, kSteps, kLambda, kAlphas = 8,
                   kBetas = kAlphas + kMaxLanczosSteps, kLanczosSlots = kBetas + kMaxLanczosSteps };

// out = the sum of partials[0 .. blocks) in a fixed order (one warp).
__global__ void k_sum_partials(const double* partials, int blocks, double* out) {
    double t = 0;
    for (int k = threadIdx.x; k < blocks; k += 32) t += partials[k];
    t = warp_sum(t);
    if (threadIdx.x == 0) *out = t;
}
__global__ void k_lanczos_init(double* s) {
    s[kRz0] = s[kRz];
    s[kStop] = s[kRz] > 0 ? 0 : 1;
    s[kSteps] = 0;
}
__global__ void k_lanczos_alpha(double* s) {
    if (s[kStop] != 0) return;
    const double pq = s[kPq];
    if (!(pq > 0) || !isfinite(pq)) {
        s[kStop] = 1;
        return;
    }
    s[kAlphas + int(s[kSteps])] = s[kRz] / pq;
}
__global__ void k_lanczos_beta(double* s) {
    if (s[kStop] != 0) return;
    const int m = int(s[kSteps]);
    const double rz_new = s[kRzNew];
    s[kBetas + m] = rz_new / s[kRz];
    s[kSteps] = m + 1;
    if (!(rz_new > 1e-12 * s[kRz0])) // float: the Krylov space is exhausted sooner
        s[kStop] = 1;
    else
        s[kRz] = rz_new;
}
// r -= alpha q (this step's alpha)
__global__ void k_lanczos_r(std::int64_t n, const double* s, const float* q, float* r) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n || s[kStop] != 0) return;
    r[i] -= float(s[kAlphas + int(s[kSteps])]) * q[i];
}
// p = z + beta p (the beta just recorded)
__global__ void k_lanczos_p(std::int64_t n, const double* s, const float* z, float* p) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n || s[kStop] != 0) return;
    p[i] = z[i] + float(s[kBetas + int(s[kSteps]) - 1]) * p[i];
}
// lambda_max from the recorded steps; coef = [w = damping / lambda_max, Chebyshev coefficients].
__global__ void k_lanczos_finish(double* s, double damping, double ratio, int degree,
                                 float* coef) {
    const double lambda = lanczos_lambda_max(s + kAlphas, s + kBetas, int(s[kSteps]));
    s[kLambda] = lambda;
    coef[0] = lambda > 0 ? float(damping / lambda) : 0.f;
    double c[2 * kMaxChebyshevDegree];
    chebyshev_coefficients(lambda, ratio, degree, c);
    for (int k = 0; k < 2 * degree; ++k) coef[1 + k] = float(c[k]);
}

// y = a x + b y
__global__ void k_axpby(std::int64_t n, float a, const float* x, float b, float* y) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b * y[i];
}

// P(i, J) = [J = aggregate(i)] T_i - w D_i^-1 sum_j A_ij T_j over the operator entries (i, j)
// that smooth into block (i, J): one thread per P block, its entries listed by smooth_offsets /
// smooth_entries (smooth_target inverted at upload).
template <int B, int K>
__global__ void k_smooth_prolongator(DeviceOp op, const float* inv, const Index* aggregate,
                                     const float* tentative, Index p_blocks, const Index* p_rows,
                                     const Index* p_columns, const Index* smooth_offsets,
                                     const Index* smooth_entries, const float* omega_at,
                                     float* p_values) {
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= p_blocks) return;
    const float omega = *omega_at;
    const Index i = p_rows[t];
    float at[B * K] = {};
    if (omega != 0)
        for (Index k = smooth_offsets[t]; k < smooth_offsets[t + 1]; ++k) {
            const Index e = smooth_entries[k];
            const Index col = e >= op.slots() ? i : op.p.columns[e];
            float a[B * B];
            op.load<B>(i, e, a);
            const float* tc = tentative + std::int64_t(col) * B * K;
            for (int r = 0; r < B; ++r)
                for (int m = 0; m < B; ++m)
                    for (int c = 0; c < K; ++c) at[r * K + c] += a[r * B + m] * tc[m * K + c];
        }
    const bool own = p_columns[t] == aggregate[i];
    const float* m = inv + std::int64_t(i) * B * B;
    const float* ti = tentative + std::int64_t(i) * B * K;
    float* out = p_values + std::int64_t(t) * B * K;
    for (int r = 0; r < B; ++r)
        for (int c = 0; c < K; ++c) {
            float s = 0;
            for (int k = 0; k < B; ++k) s += m[r * B + k] * at[k * K + c];
            out[r * K + c] = (own ? ti[r * K + c] : 0.f) - omega * s;
        }
}

// One thread per A P block q (row ap_rows[q]): the sum over its (operator entry, P block) pairs.
template <int B, int K>
__global__ void k_product(DeviceOp op, Index ap_blocks, const Index* ap_rows,
                          const Index* pair_offsets, const Index* pair_entry, const Index* pair_p,
                          const float* p_values, float* ap_values) {
    const Index q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= ap_blocks) return;
    const Index i = ap_rows[q];
    float acc[B * K] = {};
    for (Index k = pair_offsets[q]; k < pair_offsets[q + 1]; ++k) {
        float a[B * B];
        op.load<B>(i, pair_entry[k], a);
        const float* pv = p_values + std::int64_t(pair_p[k]) * B * K;
        for (int r = 0; r < B; ++r)
            for (int m = 0; m < B; ++m)
                for (int c = 0; c < K; ++c) acc[r * K + c] += a[r * B + m] * pv[m * K + c];
    }
    for (int k = 0; k < B * K; ++k) ap_values[std::int64_t(q) * B * K + k] = acc[k];
}

// G lanes per coarse entry (slot, or #slots + row), splitting its (P block, A P block) pairs;
// the bin of a slot by binary search over the (few) bin offsets; padding slots are left at 0.
template <int B, int K, int G>
__global__ void k_galerkin(BinBcsrPatternView cp, const Index* g_offsets, const Index* g_p,
                           const Index* g_ap, const float* p_values, const float* ap_values,
                           float* values, float* diag) {
    const Lane<G> t;
    const Index slots = cp.bin_offsets[cp.num_bins];
    const bool valid = t.item < std::int64_t(slots) + cp.num_rows;
    const Index e = valid ? static_cast<Index>(t.item) : 0;
    float acc[K * K] = {};
    if (valid)
        for (Index k = g_offsets[e] + t.lane; k < g_offsets[e + 1]; k += G) {
            const float* pv = p_values + std::int64_t(g_p[k]) * B * K;
            const float* av = ap_values + std::int64_t(g_ap[k]) * B * K;
            for (int m = 0; m < B; ++m)
                for (int r = 0; r < K; ++r)
                    for (int c = 0; c < K; ++c) acc[r * K + c] += pv[m * K + r] * av[m * K + c];
        }
    for (int k = 0; k < K * K; ++k) acc[k] = group_sum<G>(acc[k]);
    if (!valid || t.lane != 0) return;
    if (g_offsets[e] == g_offsets[e + 1] && e < slots) return; // padding (or an empty block)
    if (e >= slots) {
        const Index row = e - slots;
        for (int k = 0; k < K * K; ++k) diag[std::int64_t(k) * cp.num_rows + row] = acc[k];
        return;
    }
    Index lo = 0, hi = cp.num_bins; // the bin holding slot e: bin_offsets[lo] <= e < [lo + 1]
    while (hi - lo > 1) {
        const Index mid = (lo + hi) / 2;
        if (cp.bin_offsets[mid] <= e)
            lo = mid;
        else
            hi = mid;
    }
    const std::int64_t begin = cp.bin_offsets[lo], stride = cp.bin_offsets[lo + 1] - begin;
    for (int k = 0; k < K * K; ++k) values[K * K * begin + k * stride + (e - begin)] = acc[k];
}

// bc = P^T r: G lanes per coarse node, splitting its P blocks.
template <int B, int K, int G>
__global__ void k_restrict(Index nc, const Index* offsets, const Index* blocks, const Index* rows,
                           const float* p_values, const float* r, float* bc) {
    const Lane<G> t;
    const bool valid = t.item < nc;
    const Index I = valid ? static_cast<Index>(t.item) : 0;
    float s[K] = {};
    if (valid)
        for (Index k = offsets[I] + t.lane; k < offsets[I + 1]; k += G) {
            const float* pv = p_values + std::int64_t(blocks[k]) * B * K;
            const float* ri = r + std::int64_t(B) * rows[k];
            for (int m = 0; m < B; ++m)
                for (int c = 0; c < K; ++c) s[c] += pv[m * K + c] * ri[m];
        }
    for (int c = 0; c < K; ++c) s[c] = group_sum<G>(s[c]);
    if (valid && t.lane == 0)
        for (int c = 0; c < K; ++c) bc[K * I + c] = s[c];
}

template <int B, int K>
__global__ void k_prolong(Index n, const Index* offsets, const Index* columns,
                          const float* p_values, const float* xc, float* x) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (Index k = offsets[i]; k < offsets[i + 1]; ++k) {
        const float* pv = p_values + std::int64_t(k) * B * K;
        const float* xj = xc + std::int64_t(K) * columns[k];
        for (int m = 0; m < B; ++m) {
            float s = 0;
            for (int c = 0; c < K; ++c) s += pv[m * K + c] * xj[c];
            x[B * i + m] += s;
        }
    }
}

// x = M b with a dense n x n row-major M: one warp per row.
__global__ void k_dense(std::int64_t n, const float* m, const float* b, float* x) {
    const std::int64_t row = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x % 32;
    if (row >= n) return;
    float s = 0;
    for (std::int64_t k = lane; k < n; k += 32) s += m[row * n + k] * b[k];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (lane == 0) x[row] = s;
}

// r = P (b - r) on rows (r holds A x on entry); x = 0 on free rows first when `cold`.
__global__ void k_residual(Index n, const std::uint8_t* fixed, const float* b, float* r) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const bool free = fixed == nullptr || fixed[i] == 0;
    for (int k = 0; k < 3; ++k) r[3 * i + k] = free ? b[3 * i + k] - r[3 * i + k] : 0.f;
}

// b masked to the free rows, into out.
__global__ void k_mask(Index n, const std::uint8_t* fixed, const float* b, float* out) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const bool free = fixed == nullptr || fixed[i] == 0;
    for (int k = 0; k < 3; ++k) out[3 * i + k] = free ? b[3 * i + k] : 0.f;
}

// x = 0 on free rows (a cold start keeps the pinned values).
__global__ void k_zero_free(Index n, const std::uint8_t* fixed, float* x) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && (fixed == nullptr || fixed[i] == 0)) x[3 * i] = x[3 * i + 1] = x[3 * i + 2] = 0;
}

// x += alpha p; r = P (r - alpha q)
__global__ void k_update(Index n, const std::uint8_t* fixed, float alpha, const float* p,
                         const float* q, float* x, float* r) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const bool free = fixed == nullptr || fixed[i] == 0;
    for (int k = 0; k < 3; ++k) {
        x[3 * i + k] += alpha * p[3 * i + k];
        r[3 * i + k] = free ? r[3 * i + k] - alpha * q[3 * i + k] : 0.f;
    }
}

// Flexible CG's scalars on the device (one read-back per iteration, Multigrid::solve).
enum CgSlot { cRz = 0, cPq, cAlpha, cRr, cRzNew, cZq, cBeta, cBreak, kCgSlots };
__global__ void k_sum_partials2(const double* partials, int blocks, double* s) {
    double t = 0, u = 0;
    for (int k = threadIdx.x; k < blocks; k += 32) t += partials[k], u += partials[1024 + k];
    t = warp_sum(t);
    u = warp_sum(u);
    if (threadIdx.x == 0) s[cRzNew] = t, s[cZq] = u;
}
__global__ void k_cg_alpha(double* s) {
    const double pq = s[cPq], alpha = s[cRz] / pq;
    if (!(pq > 0) || !isfinite(alpha))
        s[cBreak] = 1;
    else
        s[cAlpha] = alpha;
}
// x += alpha p; r = P (r - alpha q), unless alpha broke down
__global__ void k_cg_update(Index n, const std::uint8_t* fixed, const double* s, const float* p,
                            const float* q, float* x, float* r) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n || s[cBreak] != 0) return;
    const float alpha = float(s[cAlpha]);
    const bool free = fixed == nullptr || fixed[i] == 0;
    for (int k = 0; k < 3; ++k) {
        x[3 * i + k] += alpha * p[3 * i + k];
        r[3 * i + k] = free ? r[3 * i + k] - alpha * q[3 * i + k] : 0.f;
    }
}
// flexible (Polak-Ribiere) beta = z_new.(r_new - r_old) / rz = -alpha z_new.q / rz
__global__ void k_cg_beta(double* s) {
    if (s[cBreak] != 0) return;
    const double rz_new = s[cRzNew];
    if (!(rz_new > 0) || !isfinite(rz_new)) {
        s[cBreak] = 2;
        return;
    }
    s[cBeta] = -s[cAlpha] * s[cZq] / s[cRz];
    s[cRz] = rz_new;
}
// p = z + beta p
__global__ void k_cg_direction(std::int64_t n, const double* s, const float* z, float* p) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= n || s[cBreak] != 0) return;
    p[i] = z[i] + float(s[cBeta]) * p[i];
}

__global__ void k_zero_pinned(Index n, const std::uint8_t* fixed, float* z) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && fixed[i]) z[3 * i] = z[3 * i + 1] = z[3 * i + 2] = 0;
}

template <class F> void with_blocks(int b, int k, F&& f) {
    if (b == 3 && k == 3)
        f.template operator()<3, 3>();
    else if (b == 3 && k == 6)
        f.template operator()<3, 6>();
    else if (b == 6 && k == 6)
        f.template operator()<6, 6>();
    else
        EDN_VERIFY(false, ErrorCode::Internal, "multigrid: blocks " << b << " -> " << k);
}

} // namespace

struct Multigrid::Impl {
    struct Level {
        int block = 3, coarse_block = 6;
        Index n = 0, nc = 0;
        bool fixed_prolongator = false;
        double damping = 0;
        DeviceBuffer<Index> aggregate, p_offsets, p_rows, p_columns, smooth_offsets,
            smooth_entries, ap_rows, pair_offsets, pair_entry, pair_p, g_offsets, g_p, g_ap,
            r_offsets, r_blocks, r_rows;
        Index p_blocks = 0, ap_blocks = 0;
        int spmv_lanes = 1, galerkin_lanes = 1, restrict_lanes = 1; // lanes_for each sum
        SpmvKernel spmv_kernel; // 3 x 3 blocks: choose_spmv_kernel of this level's operator
        DeviceBuffer<float> tentative, p_values, ap_values, inverse_diag;
        DeviceBuffer<float> lanczos_start; ///< the CPU twin's start vector (free rows)
        DeviceBuffer<double> scalars;      ///< LanczosSlot
        DeviceBuffer<float> coef;          ///< [w, Chebyshev coefficients] (k_lanczos_finish)
        // the coarse operator (level l + 1)
        DeviceBuffer<Index> c_bin_offsets, c_columns, c_row_counts;
        Index c_bins = 0;
        DeviceBuffer<float> c_values, c_diag;
        BinBcsrPatternView coarse_pattern() const {
            return {nc, c_bins, c_bin_offsets.data(), c_columns.data(), c_row_counts.data()};
        }
    };
    MultigridSettings settings;
    std::vector<Level> levels;
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
    std::vector<DeviceBuffer<float>> b, x, r, d, q; // per level
    DeviceBuffer<double> partials;
    std::vector<double> host_partials;
    DeviceBuffer<float> cg; // r, z, p, q of solve()
    DeviceBuffer<double> cg_scalars{kCgSlots};

    DeviceOp op(const BinBcsrMatrixView<float>& a, int l) const {
        if (l == 0) return {3, a.pattern, a.values, a.diag, fixed.data()};
        const Level& c = levels[l - 1];
        return {c.coarse_block, c.coarse_pattern(), c.c_values.data(), c.c_diag.data(), nullptr};
    }
    double dot(const float* u, const float* v, std::int64_t n) {
        const int blocks = static_cast<int>(std::min<std::int64_t>(grid_for(n), 1024));
        k_dot<<<blocks, kThreads>>>(u, v, n, partials.data());
        host_partials.resize(blocks);
        EDN_CUDA_CHECK(cudaMemcpy(host_partials.data(), partials.data(), blocks * sizeof(double),
                                  cudaMemcpyDeviceToHost));
        double s = 0;
        for (double p : host_partials) s += p;
        return s;
    }
    /// v = A_l u for the operator o of level l: 3 x 3 blocks through cuda::spmv with the measured
    /// kernel for its size (cuda/spmv.cu), larger blocks with spmv_lanes lanes per row.
    template <int B> void spmv(const DeviceOp& o, const float* u, float* v, int l) {
        if constexpr (B == 3) {
            const BinBcsrMatrixView<float> m{o.p, const_cast<float*>(o.values),
                                             const_cast<float*>(o.diag)};
            const bool known = l < static_cast<int>(levels.size()); // else: no levels (tiny)
            cuda::spmv(m, u, v, known ? levels[l].spmv_kernel : SpmvKernel{});
        } else {
            with_lanes(levels[l].spmv_lanes, [&]<int G>() {
                k_spmv<B, G><<<grid_for_groups(o.p.num_rows, G), kThreads>>>(o, u, v);
            });
        }
    }
    /// The device dot product u.v into the device scalar *out (no read-back).
    void dot_to(const float* u, const float* v, std::int64_t n, double* out) {
        const int blocks = static_cast<int>(std::min<std::int64_t>(grid_for(n), 1024));
        k_dot<<<blocks, kThreads>>>(u, v, n, partials.data());
        k_sum_partials<<<1, 32>>>(partials.data(), blocks, out);
    }
    template <int B> void lanczos(const DeviceOp& o, Level& level, int l);
    template <int B, int K> void revalue_level(const DeviceOp& o, int l);
    template <int B>
    void chebyshev(const DeviceOp& o, const Level& level, int l, const float* bv, float* xv,
                   bool zero_start);
    void cycle(const BinBcsrMatrixView<float>& a, int l, const float* bv, float* xv);
};

// lambda_max(D^-1 A) of level l by `power_iterations` steps of block-Jacobi PCG from the CPU
// twin's start vector (cpu/multigrid.cpp), scalars on the device: w and the Chebyshev
// coefficients land in level.coef without a read-back.
template <int B> void Multigrid::Impl::lanczos(const DeviceOp& o, Level& level, int l) {
    const Index n = o.p.num_rows;
    const std::int64_t dofs = std::int64_t(B) * n;
    float *rv = r[l].data(), *zv = d[l].data(), *pv = x[l].data(), *qv = q[l].data();
    double* sc = level.scalars.data();
    EDN_CUDA_CHECK(cudaMemcpyAsync(rv, level.lanczos_start.data(), dofs * sizeof(float),
                                   cudaMemcpyDeviceToDevice));
    k_precondition<B><<<grid_for(n), kThreads>>>(n, level.inverse_diag.data(), rv, zv,
                                                 unit_coef.data());
    EDN_CUDA_CHECK(cudaMemcpyAsync(pv, zv, dofs * sizeof(float), cudaMemcpyDeviceToDevice));
    dot_to(rv, zv, dofs, sc + kRz);
    k_lanczos_init<<<1, 1>>>(sc);
    for (int it = 0; it < settings.power_iterations; ++it) {
        spmv<B>(o, pv, qv, l);
        dot_to(pv, qv, dofs, sc + kPq);
        k_lanczos_alpha<<<1, 1>>>(sc);
        k_lanczos_r<<<grid_for(dofs), kThreads>>>(dofs, sc, qv, rv);
        k_precondition<B><<<grid_for(n), kThreads>>>(n, level.inverse_diag.data(), rv, zv,
                                                     unit_coef.data());
        dot_to(rv, zv, dofs, sc + kRzNew);
        k_lanczos_beta<<<1, 1>>>(sc);
        k_lanczos_p<<<grid_for(dofs), kThreads>>>(dofs, sc, zv, pv);
    }
    k_lanczos_finish<<<1, 1>>>(sc, level.damping, settings.smoother_ratio,
                               settings.smoother_degree, level.coef.data());
}

template <int B, int K> void Multigrid::Impl::revalue_level(const DeviceOp& o, int l) {
    Level& level = levels[l];
    const Index n = o.p.num_rows;
    k_inverse_diag<B><<<grid_for(n), kThreads>>>(o, level.inverse_diag.data());
    lanczos<B>(o, level, l);
    const float* omega = level.coef.data();
    if (!level.fixed_prolongator)
        k_smooth_prolongator<B, K><<<grid_for(level.p_blocks), kThreads>>>(
            o, level.inverse_diag.data(), level.aggregate.data(), level.tentative.data(),
            level.p_blocks, level.p_rows.data(), level.p_columns.data(),
            level.smooth_offsets.data(), level.smooth_entries.data(), omega,
            level.p_values.data());
    k_product<B, K><<<grid_for(level.ap_blocks), kThreads>>>(
        o, level.ap_blocks, level.ap_rows.data(), level.pair_offsets.data(),
        level.pair_entry.data(), level.pair_p.data(), level.p_values.data(),
        level.ap_values.data());
    const std::int64_t entries = std::int64_t(level.g_offsets.size()) - 1;
    with_lanes(level.galerkin_lanes, [&]<int G>() {
        k_galerkin<B, K, G><<<grid_for_groups(entries, G), kThreads>>>(
            level.coarse_pattern(), level.g_offsets.data(), level.g_p.data(), level.g_ap.data(),
            level.p_values.data(), level.ap_values.data(), level.c_values.data(),
            level.c_diag.data());
    });
    EDN_CUDA_CHECK(cudaGetLastError());
}

template <int B>
void Multigrid::Impl::chebyshev(const DeviceOp& o, const Level& level, int l, const float* bv,
                                float* xv, bool zero_start) {
    const Index n = o.p.num_rows;
    const std::int64_t dofs = std::int64_t(B) * n;
    const float* c = level.coef.data() + 1; // solver/lanczos.hpp, chebyshev_coefficients
    float *rv = r[l].data(), *dv = d[l].data(), *qv = q[l].data();
    if (zero_start) {
        EDN_CUDA_CHECK(cudaMemcpyAsync(rv, bv, dofs * sizeof(float), cudaMemcpyDeviceToDevice));
    } else {
        spmv<B>(o, xv, rv, l);
        k_axpby<<<grid_for(dofs), kThreads>>>(dofs, 1.f, bv, -1.f, rv);
    }
    k_precondition<B><<<grid_for(n), kThreads>>>(n, level.inverse_diag.data(), rv, dv, c);
    for (int k = 1;; ++k) {
        k_axpby<<<grid_for(dofs), kThreads>>>(dofs, 1.f, dv, 1.f, xv);
        if (k == settings.smoother_degree) break;
        spmv<B>(o, dv, qv, l);
        k_axpby<<<grid_for(dofs), kThreads>>>(dofs, -1.f, qv, 1.f, rv);
        k_precondition<B><<<grid_for(n), kThreads>>>(n, level.inverse_diag.data(), rv, dv,
                                                     c + 2 * k);
    }
}

void Multigrid::Impl::cycle(const BinBcsrMatrixView<float>& a, int l, const float* bv, float* xv) {
    if (l == static_cast<int>(levels.size())) {
        const std::int64_t n = std::int64_t(coarsest_rows) * coarsest_block;
        k_dense<<<static_cast<int>((n * 32 + kThreads - 1) / kThreads), kThreads>>>(
            n, coarsest_inverse.data(), bv, xv);
        return;
    }
    const DeviceOp o = op(a, l);
    const Level& level = levels[l];
    with_blocks(level.block, level.coarse_block, [&]<int B, int K>() {
        const Index n = o.p.num_rows;
        const std::int64_t dofs = std::int64_t(B) * n;
        EDN_CUDA_CHECK(cudaMemsetAsync(xv, 0, dofs * sizeof(float)));
        chebyshev<B>(o, level, l, bv, xv, true);
        float* rv = r[l].data();
        spmv<B>(o, xv, rv, l);
        k_axpby<<<grid_for(dofs), kThreads>>>(dofs, 1.f, bv, -1.f, rv);
        float* bc = b[l + 1].data();
        float* xc = x[l + 1].data();
        with_lanes(level.restrict_lanes, [&]<int G>() {
            k_restrict<B, K, G><<<grid_for_groups(level.nc, G), kThreads>>>(
                level.nc, level.r_offsets.data(), level.r_blocks.data(), level.r_rows.data(),
                level.p_values.data(), rv, bc);
        });
        cycle(a, l + 1, bc, xc);
        k_prolong<B, K><<<grid_for(n), kThreads>>>(
            n, level.p_offsets.data(), level.p_columns.data(), level.p_values.data(), xc, xv);
        chebyshev<B>(o, level, l, bv, xv, false);
    });
}

Multigrid::Multigrid(const MultigridHierarchy& h) : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.settings = h.settings;
    m.host_fixed = h.fixed;
    m.fixed = upload(h.fixed);
    m.fine_rows = static_cast<Index>(h.fixed.size());
    m.levels.resize(h.levels.size());
    const int levels = h.num_levels();
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
        d.aggregate = upload(s.aggregate);
        d.tentative = upload_float(s.tentative);
        d.p_offsets = upload(s.prolongator.offsets);
        d.p_columns = upload(s.prolongator.columns);
        d.p_values = upload_float(s.prolongator.values); // a given P keeps these values
        d.p_blocks = static_cast<Index>(s.prolongator.columns.size());
        d.p_rows = upload(rows_of(s.prolongator.offsets));
        {
            std::vector<Index> offsets, entries;
            invert_map(s.smooth_target, d.p_blocks, offsets, entries);
            d.smooth_offsets = upload(offsets);
            d.smooth_entries = upload(entries);
        }
        d.ap_blocks = static_cast<Index>(s.product.columns.size());
        d.ap_rows = upload(rows_of(s.product.offsets));
        d.pair_offsets = upload(s.product_offsets);
        d.pair_entry = upload(s.product_entry);
        d.pair_p = upload(s.product_p);
        d.ap_values = DeviceBuffer<float>(s.product.values.size());
        d.g_offsets = upload(s.galerkin_offsets);
        d.g_p = upload(s.galerkin_p);
        d.g_ap = upload(s.galerkin_ap);
        d.r_offsets = upload(s.restriction_offsets);
        d.r_blocks = upload(s.restriction_blocks);
        d.r_rows = upload(s.restriction_rows);
        d.inverse_diag =
            DeviceBuffer<float>(static_cast<std::size_t>(s.num_nodes) * s.block * s.block);
        d.c_bin_offsets = upload(c.pattern.bin_offsets);
        d.c_columns = upload(c.pattern.columns);
        d.c_row_counts = upload(c.pattern.row_counts);
        d.c_bins = c.pattern.num_bins();
        d.c_values = DeviceBuffer<float>(c.values.size());
        d.c_diag = DeviceBuffer<float>(c.diag.size());
        // lanes per sum from the mean sum length (operator rows: their blocks, the diagonal too)
        auto mean = [](std::size_t total, std::size_t count) {
            return count == 0 ? 0.0 : double(total) / double(count);
        };
        if (l > 0) {
            const BinBcsrPattern& own = h.coarse[l - 1].pattern;
            std::size_t blocks = own.num_rows;
            for (Index r : own.row_counts) blocks += static_cast<std::size_t>(r);
            d.spmv_lanes = lanes_for(mean(blocks, own.num_rows));
            d.spmv_kernel = choose_spmv_kernel(own.num_rows, own.num_slots());
        }
        d.galerkin_lanes = lanes_for(
            mean(s.galerkin_p.size(), std::max<std::size_t>(s.galerkin_offsets.size(), 1) - 1));
        d.restrict_lanes = lanes_for(mean(s.restriction_blocks.size(), s.coarse_nodes));
        EDN_CUDA_CHECK(cudaMemset(d.c_values.data(), 0, c.values.size() * sizeof(float)));
    }
    m.coarsest_block = h.coarse.empty() ? 3 : h.coarse.back().block;
    m.coarsest_rows = h.coarse.empty() ? m.fine_rows : h.coarse.back().pattern.num_rows;
    for (auto* v : {&m.b, &m.x, &m.r, &m.d, &m.q}) v->resize(levels);
    for (int l = 0; l < levels; ++l) {
        const std::size_t dofs = h.b[l].size();
        for (auto* v : {&m.b, &m.x, &m.r, &m.d, &m.q}) (*v)[l] = DeviceBuffer<float>(dofs);
    }
    for (std::size_t l = 0; l < m.levels.size(); ++l) {
        Impl::Level& d = m.levels[l];
        const std::size_t dofs = h.b[l].size();
        std::vector<float> start(dofs);
        for (std::size_t i = 0; i < dofs; ++i) {
            const bool free = l > 0 || h.fixed[i / 3] == 0;
            start[i] = free ? static_cast<float>(cpu::lanczos_start(std::int64_t(i))) : 0.0f;
        }
        d.lanczos_start = upload(start);
        d.scalars = DeviceBuffer<double>(kLanczosSlots);
        EDN_CUDA_CHECK(cudaMemset(d.scalars.data(), 0, d.scalars.bytes()));
        d.coef = DeviceBuffer<float>(1 + 2 * static_cast<std::size_t>(h.settings.smoother_degree));
        EDN_CUDA_CHECK(cudaMemset(d.coef.data(), 0, d.coef.bytes()));
    }
    m.unit_coef = upload(std::vector<float>{0.f, 1.f});
    m.partials = DeviceBuffer<double>(2048);
}

Multigrid::~Multigrid() = default;

int Multigrid::num_levels() const {
    return static_cast<int>(impl_->levels.size()) + 1;
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
        m.levels[0].spmv_kernel = choose_spmv_kernel(a.pattern.num_rows, fine_slots);
        m.fine_kernel_chosen = true;
    }
    for (std::size_t l = 0; l < m.levels.size(); ++l) {
        const DeviceOp o = m.op(a, static_cast<int>(l));
        with_blocks(m.levels[l].block, m.levels[l].coarse_block,
                    [&]<int B, int K>() { m.revalue_level<B, K>(o, static_cast<int>(l)); });
    }
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
    if (m.coarsest_inverse.size() != invf.size()) m.coarsest_inverse = DeviceBuffer<float>(invf.size());
    EDN_CUDA_CHECK(cudaMemcpyAsync(m.coarsest_inverse.data(), invf.data(),
                                   invf.size() * sizeof(float), cudaMemcpyHostToDevice));
    EDN_CUDA_CHECK(cudaStreamSynchronize(0)); // invf is pageable and leaves scope
}

void Multigrid::apply(const BinBcsrMatrixView<float>& a, const float* r, float* z) {
    Impl& m = *impl_;
    m.cycle(a, 0, r, z);
    k_zero_pinned<<<grid_for(m.fine_rows), kThreads>>>(m.fine_rows, m.fixed.data(), z);
    EDN_CUDA_CHECK(cudaGetLastError());
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
    float *r = m.cg.data(), *z = r + dofs, *p = z + dofs, *q = p + dofs;
    const int grid = grid_for(n);
    k_mask<<<grid, kThreads>>>(n, fixed, b, r);
    const double bb = m.dot(r, r, dofs);
    if (!settings.warm_start || bb == 0) k_zero_free<<<grid, kThreads>>>(n, fixed, x);
    m.spmv<3>(m.op(a, 0), x, r, 0);
    k_residual<<<grid, kThreads>>>(n, fixed, b, r);
    const double rr = m.dot(r, r, dofs);
    const double tol2 = settings.relative_tolerance * settings.relative_tolerance;
    const double ref2 = bb > 0 ? bb : rr;
    result.initial_residual = result.final_residual = std::sqrt(rr);
    result.reference_norm = std::sqrt(ref2);
    if (rr <= tol2 * ref2) {
        result.converged = true;
        return result;
    }
    apply(a, r, z);
    const double rz = m.dot(r, z, dofs);
    EDN_CUDA_CHECK(cudaMemcpyAsync(p, z, dofs * sizeof(float), cudaMemcpyDeviceToDevice));
    if (!(rz > 0) || !std::isfinite(rz)) {
        result.breakdown = true;
        return result;
    }
    // Every iteration is enqueued whole (the next direction included) and then read back once:
    // the scalars live on the device; a converged last iteration costs one unused preconditioner
    // application.
    double* sc = m.cg_scalars.data();
    const double start[kCgSlots] = {rz, 0, 0, 0, 0, 0, 0, 0};
    EDN_CUDA_CHECK(cudaMemcpy(sc, start, sizeof(start), cudaMemcpyHostToDevice));
    double host[kCgSlots];
    while (result.iterations < settings.max_iterations) {
        m.spmv<3>(m.op(a, 0), p, q, 0);
        m.dot_to(p, q, dofs, sc + cPq);
        k_cg_alpha<<<1, 1>>>(sc);
        k_cg_update<<<grid, kThreads>>>(n, fixed, sc, p, q, x, r);
        m.dot_to(r, r, dofs, sc + cRr);
        apply(a, r, z);
        const int blocks = static_cast<int>(std::min<std::int64_t>(grid_for(dofs), 1024));
        k_dot2<<<blocks, kThreads>>>(z, r, q, dofs, m.partials.data());
        k_sum_partials2<<<1, 32>>>(m.partials.data(), blocks, sc);
        k_cg_beta<<<1, 1>>>(sc);
        k_cg_direction<<<grid_for(dofs), kThreads>>>(dofs, sc, z, p);
        EDN_CUDA_CHECK(cudaMemcpy(host, sc, sizeof(host), cudaMemcpyDeviceToHost));
        if (host[cBreak] == 1) { // p.q <= 0: x and r were left as they were
            result.breakdown = true;
            break;
        }
        ++result.iterations;
        result.final_residual = std::sqrt(host[cRr]);
        if (host[cRr] <= tol2 * ref2) {
            result.converged = true;
            break;
        }
        if (host[cBreak] == 2) {
            result.breakdown = true;
            break;
        }
    }
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

std::vector<float> Multigrid::download_coarse(int l) const {
    const Impl::Level& c = impl_->levels.at(l);
    std::vector<float> out(c.c_values.size() + c.c_diag.size());
    EDN_CUDA_CHECK(
        cudaMemcpy(out.data(), c.c_values.data(), c.c_values.bytes(), cudaMemcpyDeviceToHost));
    EDN_CUDA_CHECK(cudaMemcpy(out.data() + c.c_values.size(), c.c_diag.data(), c.c_diag.bytes(),
                              cudaMemcpyDeviceToHost));
    return out;
}

std::vector<float> Multigrid::download_prolongator(int l) const {
    const Impl::Level& c = impl_->levels.at(l);
    std::vector<float> out(c.p_values.size());
    EDN_CUDA_CHECK(
        cudaMemcpy(out.data(), c.p_values.data(), c.p_values.bytes(), cudaMemcpyDeviceToHost));
    return out;
}

double Multigrid::lambda_max(int l) const {
    double lambda = 0;
    EDN_CUDA_CHECK(cudaMemcpy(&lambda, impl_->levels.at(l).scalars.data() + kLambda,
                              sizeof(double), cudaMemcpyDeviceToHost));
    return lambda;
}

} // namespace edn::cuda
