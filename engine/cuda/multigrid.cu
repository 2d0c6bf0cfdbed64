// CUDA twin of the multigrid re-value and V-cycle (cuda/cuda_multigrid.hpp; the CPU reference is
// cpu/multigrid.cpp, the same maps and the same arithmetic in double). One thread per row (or
// per coarse row) in the binned layout: lanes of a bin read consecutive slots.
#include "cuda/cuda_check.cuh"
#include "cuda/cuda_multigrid.hpp"
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

template <int B> __global__ void k_spmv(DeviceOp op, const float* x, float* y) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= op.p.num_rows) return;
    float acc[B] = {};
    float blk[B * B];
    op.load<B>(row, op.slots() + row, blk);
    for (int r = 0; r < B; ++r)
        for (int c = 0; c < B; ++c) acc[r] += blk[r * B + c] * x[B * row + c];
    for (Index j = 0; j < op.p.row_counts[row]; ++j) {
        const Index s = op.p.slot(row, j);
        const Index col = op.p.columns[s];
        op.load<B>(row, s, blk);
        for (int r = 0; r < B; ++r)
            for (int c = 0; c < B; ++c) acc[r] += blk[r * B + c] * x[B * col + c];
    }
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

// z = D^-1 r (rows), optionally scaled; d = c1 d + c2 z.
template <int B>
__global__ void k_precondition(Index n, const float* inv, const float* r, float* d, float c1,
                               float c2) {
    const Index row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n) return;
    float z[B];
    apply_inv<B>(inv, row, r, z);
    for (int k = 0; k < B; ++k) d[B * row + k] = c1 * d[B * row + k] + c2 * z[k];
}

// y = a x + b y
__global__ void k_axpby(std::int64_t n, float a, const float* x, float b, float* y) {
    const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b * y[i];
}

template <int B, int K>
__global__ void k_smooth_prolongator(DeviceOp op, const float* inv, const Index* aggregate,
                                     const float* tentative, const Index* p_offsets,
                                     const Index* p_columns, const Index* smooth_target,
                                     float omega, float* p_values) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= op.p.num_rows) return;
    const Index begin = p_offsets[i], end = p_offsets[i + 1];
    if (begin == end) return;
    for (std::int64_t k = std::int64_t(begin) * B * K; k < std::int64_t(end) * B * K; ++k)
        p_values[k] = 0;
    Index own = begin;
    while (own < end && p_columns[own] != aggregate[i]) ++own;
    for (int k = 0; k < B * K; ++k)
        p_values[std::int64_t(own) * B * K + k] = tentative[std::int64_t(i) * B * K + k];
    if (omega == 0) return;
    const float* m = inv + std::int64_t(i) * B * B;
    auto smooth = [&](Index e, Index col) {
        const Index t = smooth_target[e];
        if (t < 0) return;
        float a[B * B];
        op.load<B>(i, e, a);
        const float* tc = tentative + std::int64_t(col) * B * K;
        float at[B * K];
        for (int r = 0; r < B; ++r)
            for (int c = 0; c < K; ++c) {
                float s = 0;
                for (int k = 0; k < B; ++k) s += a[r * B + k] * tc[k * K + c];
                at[r * K + c] = s;
            }
        float* out = p_values + std::int64_t(t) * B * K;
        for (int r = 0; r < B; ++r)
            for (int c = 0; c < K; ++c) {
                float s = 0;
                for (int k = 0; k < B; ++k) s += m[r * B + k] * at[k * K + c];
                out[r * K + c] -= omega * s;
            }
    };
    smooth(op.slots() + i, i);
    for (Index j = 0; j < op.p.row_counts[i]; ++j) {
        const Index s = op.p.slot(i, j);
        smooth(s, op.p.columns[s]);
    }
}

template <int B, int K>
__global__ void k_product(DeviceOp op, const Index* ap_offsets, const Index* pair_offsets,
                          const Index* pair_entry, const Index* pair_p, const float* p_values,
                          float* ap_values) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= op.p.num_rows) return;
    for (Index q = ap_offsets[i]; q < ap_offsets[i + 1]; ++q) {
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
}

// One thread per coarse entry (slot, or #slots + row): the bin of a slot by binary search over
// the (few) bin offsets; padding slots are left at 0.
template <int B, int K>
__global__ void k_galerkin(BinBcsrPatternView cp, const Index* g_offsets, const Index* g_p,
                           const Index* g_ap, const float* p_values, const float* ap_values,
                           float* values, float* diag) {
    const Index slots = cp.bin_offsets[cp.num_bins];
    const Index e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= slots + cp.num_rows) return;
    if (g_offsets[e] == g_offsets[e + 1] && e < slots) return; // padding (or an empty block)
    float acc[K * K] = {};
    for (Index k = g_offsets[e]; k < g_offsets[e + 1]; ++k) {
        const float* pv = p_values + std::int64_t(g_p[k]) * B * K;
        const float* av = ap_values + std::int64_t(g_ap[k]) * B * K;
        for (int m = 0; m < B; ++m)
            for (int r = 0; r < K; ++r)
                for (int c = 0; c < K; ++c) acc[r * K + c] += pv[m * K + r] * av[m * K + c];
    }
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

template <int B, int K>
__global__ void k_restrict(Index nc, const Index* offsets, const Index* blocks, const Index* rows,
                           const float* p_values, const float* r, float* bc) {
    const Index I = blockIdx.x * blockDim.x + threadIdx.x;
    if (I >= nc) return;
    float s[K] = {};
    for (Index t = offsets[I]; t < offsets[I + 1]; ++t) {
        const float* pv = p_values + std::int64_t(blocks[t]) * B * K;
        const float* ri = r + std::int64_t(B) * rows[t];
        for (int m = 0; m < B; ++m)
            for (int c = 0; c < K; ++c) s[c] += pv[m * K + c] * ri[m];
    }
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
        DeviceBuffer<Index> aggregate, p_offsets, p_columns, smooth_target, ap_offsets,
            pair_offsets, pair_entry, pair_p, g_offsets, g_p, g_ap, r_offsets, r_blocks, r_rows;
        DeviceBuffer<float> tentative, p_values, ap_values, inverse_diag;
        double lambda_max = 0;
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
    std::vector<DeviceBuffer<float>> b, x, r, d, q; // per level
    DeviceBuffer<double> partials;
    std::vector<double> host_partials;
    DeviceBuffer<float> cg; // r, z, p, q of solve()

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
    template <int B> void spmv(const DeviceOp& o, const float* u, float* v) {
        if constexpr (B == 3) {
            const BinBcsrMatrixView<float> m{o.p, const_cast<float*>(o.values),
                                             const_cast<float*>(o.diag)};
            cuda::spmv(m, u, v);
        } else {
            k_spmv<B><<<grid_for(o.p.num_rows), kThreads>>>(o, u, v);
        }
    }
    template <int B> double lanczos(const DeviceOp& o, const Level& level, int l);
    template <int B, int K> void revalue_level(const DeviceOp& o, int l);
    template <int B>
    void chebyshev(const DeviceOp& o, const Level& level, int l, const float* bv, float* xv,
                   bool zero_start);
    void cycle(const BinBcsrMatrixView<float>& a, int l, const float* bv, float* xv);
};

template <int B> double Multigrid::Impl::lanczos(const DeviceOp& o, const Level& level, int l) {
    const Index n = o.p.num_rows;
    const std::int64_t dofs = std::int64_t(B) * n;
    // start: r = the CPU twin's pseudo-random vector on free rows, z = D^-1 r, p = z
    std::vector<float> start(static_cast<std::size_t>(dofs));
    for (std::int64_t i = 0; i < dofs; ++i) {
        const bool free = l > 0 || host_fixed[i / 3] == 0;
        start[i] = free ? static_cast<float>(cpu::lanczos_start(i)) : 0.0f;
    }
    float *rv = r[l].data(), *zv = d[l].data(), *pv = x[l].data(), *qv = q[l].data();
    EDN_CUDA_CHECK(cudaMemcpy(rv, start.data(), dofs * sizeof(float), cudaMemcpyHostToDevice));
    EDN_CUDA_CHECK(cudaMemset(zv, 0, dofs * sizeof(float)));
    k_precondition<B><<<grid_for(n), kThreads>>>(n, level.inverse_diag.data(), rv, zv, 0.f, 1.f);
    EDN_CUDA_CHECK(cudaMemcpy(pv, zv, dofs * sizeof(float), cudaMemcpyDeviceToDevice));
    double rz = dot(rv, zv, dofs);
    const double rz0 = rz;
    std::vector<double> alphas, betas;
    for (int it = 0; it < settings.power_iterations && rz > 0; ++it) {
        spmv<B>(o, pv, qv);
        const double pq = dot(pv, qv, dofs);
        if (!(pq > 0) || !std::isfinite(pq)) break;
        const double alpha = rz / pq;
        k_axpby<<<grid_for(dofs), kThreads>>>(dofs, float(-alpha), qv, 1.f, rv);
        k_precondition<B>
            <<<grid_for(n), kThreads>>>(n, level.inverse_diag.data(), rv, zv, 0.f, 1.f);
        const double rz_new = dot(rv, zv, dofs);
        const double beta = rz_new / rz;
        alphas.push_back(alpha);
        betas.push_back(beta);
        if (!(rz_new > 1e-12 * rz0)) break; // float: the Krylov space is exhausted sooner
        rz = rz_new;
        k_axpby<<<grid_for(dofs), kThreads>>>(dofs, 1.f, zv, float(beta), pv);
    }
    return cpu::lanczos_lambda_max(alphas, betas);
}

template <int B, int K> void Multigrid::Impl::revalue_level(const DeviceOp& o, int l) {
    Level& level = levels[l];
    const Index n = o.p.num_rows;
    k_inverse_diag<B><<<grid_for(n), kThreads>>>(o, level.inverse_diag.data());
    level.lambda_max = lanczos<B>(o, level, l);
    const float omega = level.lambda_max > 0 ? float(level.damping / level.lambda_max) : 0.f;
    if (!level.fixed_prolongator)
        k_smooth_prolongator<B, K><<<grid_for(n), kThreads>>>(
            o, level.inverse_diag.data(), level.aggregate.data(), level.tentative.data(),
            level.p_offsets.data(), level.p_columns.data(), level.smooth_target.data(), omega,
            level.p_values.data());
    k_product<B, K><<<grid_for(n), kThreads>>>(
        o, level.ap_offsets.data(), level.pair_offsets.data(), level.pair_entry.data(),
        level.pair_p.data(), level.p_values.data(), level.ap_values.data());
    k_galerkin<B, K><<<grid_for(std::int64_t(level.g_offsets.size()) - 1), kThreads>>>(
        level.coarse_pattern(), level.g_offsets.data(), level.g_p.data(), level.g_ap.data(),
        level.p_values.data(), level.ap_values.data(), level.c_values.data(), level.c_diag.data());
    EDN_CUDA_CHECK(cudaGetLastError());
}

template <int B>
void Multigrid::Impl::chebyshev(const DeviceOp& o, const Level& level, int l, const float* bv,
                                float* xv, bool zero_start) {
    const Index n = o.p.num_rows;
    const std::int64_t dofs = std::int64_t(B) * n;
    const double hi = 1.1 * level.lambda_max, lo = hi / settings.smoother_ratio;
    if (!(hi > 0)) return;
    const double theta = 0.5 * (hi + lo), delta = 0.5 * (hi - lo), sigma = theta / delta;
    double rho = 1.0 / sigma;
    float *rv = r[l].data(), *dv = d[l].data(), *qv = q[l].data();
    if (zero_start) {
        EDN_CUDA_CHECK(cudaMemcpyAsync(rv, bv, dofs * sizeof(float), cudaMemcpyDeviceToDevice));
    } else {
        spmv<B>(o, xv, rv);
        k_axpby<<<grid_for(dofs), kThreads>>>(dofs, 1.f, bv, -1.f, rv);
    }
    k_precondition<B>
        <<<grid_for(n), kThreads>>>(n, level.inverse_diag.data(), rv, dv, 0.f, float(1.0 / theta));
    for (int k = 1;; ++k) {
        k_axpby<<<grid_for(dofs), kThreads>>>(dofs, 1.f, dv, 1.f, xv);
        if (k == settings.smoother_degree) break;
        const double rho_new = 1.0 / (2.0 * sigma - rho);
        spmv<B>(o, dv, qv);
        k_axpby<<<grid_for(dofs), kThreads>>>(dofs, -1.f, qv, 1.f, rv);
        k_precondition<B><<<grid_for(n), kThreads>>>(n, level.inverse_diag.data(), rv, dv,
                                                     float(rho_new * rho),
                                                     float(2.0 * rho_new / delta));
        rho = rho_new;
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
        spmv<B>(o, xv, rv);
        k_axpby<<<grid_for(dofs), kThreads>>>(dofs, 1.f, bv, -1.f, rv);
        float* bc = b[l + 1].data();
        float* xc = x[l + 1].data();
        k_restrict<B, K><<<grid_for(level.nc), kThreads>>>(
            level.nc, level.r_offsets.data(), level.r_blocks.data(), level.r_rows.data(),
            level.p_values.data(), rv, bc);
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
        d.smooth_target = upload(s.smooth_target);
        d.ap_offsets = upload(s.product.offsets);
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
        EDN_CUDA_CHECK(cudaMemset(d.c_values.data(), 0, c.values.size() * sizeof(float)));
    }
    m.coarsest_block = h.coarse.empty() ? 3 : h.coarse.back().block;
    m.coarsest_rows = h.coarse.empty() ? m.fine_rows : h.coarse.back().pattern.num_rows;
    for (auto* v : {&m.b, &m.x, &m.r, &m.d, &m.q}) v->resize(levels);
    for (int l = 0; l < levels; ++l) {
        const std::size_t dofs = h.b[l].size();
        for (auto* v : {&m.b, &m.x, &m.r, &m.d, &m.q}) (*v)[l] = DeviceBuffer<float>(dofs);
    }
    m.partials = DeviceBuffer<double>(1024);
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
    for (std::size_t l = 0; l < m.levels.size(); ++l) {
        const DeviceOp o = m.op(a, static_cast<int>(l));
        with_blocks(m.levels[l].block, m.levels[l].coarse_block,
                    [&]<int B, int K>() { m.revalue_level<B, K>(o, static_cast<int>(l)); });
    }
    // the coarsest operator, inverted on the host in double
    const int l = static_cast<int>(m.levels.size());
    const DeviceOp o = m.op(a, l);
    const int bb = o.block * o.block;
    const Index rows = o.p.num_rows;
    BinBcsrPattern pattern;
    pattern.num_rows = rows;
    pattern.bin_offsets.resize(o.p.num_bins + 1);
    pattern.row_counts.resize(rows);
    EDN_CUDA_CHECK(cudaMemcpy(pattern.bin_offsets.data(), o.p.bin_offsets,
                              pattern.bin_offsets.size() * sizeof(Index), cudaMemcpyDeviceToHost));
    EDN_CUDA_CHECK(cudaMemcpy(pattern.row_counts.data(), o.p.row_counts, rows * sizeof(Index),
                              cudaMemcpyDeviceToHost));
    pattern.columns.resize(pattern.num_slots());
    EDN_CUDA_CHECK(cudaMemcpy(pattern.columns.data(), o.p.columns,
                              pattern.columns.size() * sizeof(Index), cudaMemcpyDeviceToHost));
    std::vector<float> vf(static_cast<std::size_t>(bb) * pattern.num_slots()),
        df(static_cast<std::size_t>(bb) * rows);
    EDN_CUDA_CHECK(
        cudaMemcpy(vf.data(), o.values, vf.size() * sizeof(float), cudaMemcpyDeviceToHost));
    EDN_CUDA_CHECK(
        cudaMemcpy(df.data(), o.diag, df.size() * sizeof(float), cudaMemcpyDeviceToHost));
    const std::vector<double> vd(vf.begin(), vf.end()), dd(df.begin(), df.end());
    const std::vector<double> inv = cpu::dense_semidefinite_inverse(
        o.block, pattern.view(), vd.data(), dd.data(), l == 0 ? m.host_fixed.data() : nullptr);
    m.coarsest_inverse = upload_float(inv);
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
    m.spmv<3>(m.op(a, 0), x, r);
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
    double rz = m.dot(r, z, dofs);
    EDN_CUDA_CHECK(cudaMemcpyAsync(p, z, dofs * sizeof(float), cudaMemcpyDeviceToDevice));
    if (!(rz > 0) || !std::isfinite(rz)) {
        result.breakdown = true;
        return result;
    }
    while (result.iterations < settings.max_iterations) {
        m.spmv<3>(m.op(a, 0), p, q);
        const double pq = m.dot(p, q, dofs);
        const double alpha = rz / pq;
        if (!(pq > 0) || !std::isfinite(alpha)) {
            result.breakdown = true;
            break;
        }
        k_update<<<grid, kThreads>>>(n, fixed, float(alpha), p, q, x, r);
        const double rr_new = m.dot(r, r, dofs);
        ++result.iterations;
        result.final_residual = std::sqrt(rr_new);
        if (rr_new <= tol2 * ref2) {
            result.converged = true;
            break;
        }
        apply(a, r, z);
        // flexible (Polak-Ribiere) beta = z_new.(r_new - r_old) / rz = -alpha z_new.q / rz on the
        // free rows (q is not masked; z is zero on pinned rows)
        const double rz_new = m.dot(r, z, dofs);
        const double zq = m.dot(z, q, dofs);
        if (!(rz_new > 0) || !std::isfinite(rz_new)) {
            result.breakdown = true;
            break;
        }
        const double beta = -alpha * zq / rz;
        rz = rz_new;
        k_axpby<<<grid_for(dofs), kThreads>>>(dofs, 1.f, z, float(beta), p);
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
    return impl_->levels.at(l).lambda_max;
}

} // namespace edn::cuda
