// The CUDA SpMV home (twin of cpu/spmv.cpp, sparse/spmv.hpp): every standalone product on the
// device. The PCG's products fused with its dot products and vector updates stay in
// pcg_spmv.cu, where the fusion is the point.
#include "cuda/assembly_impl.cuh"
#include "cuda/cuda_pcg.hpp"
#include "cuda/upper_spmv.cuh"
#include "sparse/spmv.hpp"

namespace edn::cuda {
namespace {

using detail::kWarp;
using detail::multiprocessors;

constexpr int kSpmvBlock = 256; // 8 warps

/// y = A x, one warp per bin (lane = row), static mapping: the matrix (columns and values, all
/// slots of the bin including padding) read evict-first, so x stays in L2.
__global__ void __launch_bounds__(kSpmvBlock)
    spmv_warp_kernel(const Index* bin_offsets, const Index* columns, const float* values,
                     const float* diag, Index rows, Index bins, const float* x, float* y) {
    const int lane = threadIdx.x & 31;
    const Index bin = static_cast<Index>(
        (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp);
    if (bin >= bins) return;
    const Index row = bin * kWarp + lane;
    const Index begin = bin_offsets[bin];
    const Index width = (bin_offsets[bin + 1] - begin) / kWarp;
    const std::int64_t plane = static_cast<std::int64_t>(width) * kWarp;
    const float* v = values + 9 * static_cast<std::int64_t>(begin) + lane;
    const Index* cols = columns + begin + lane;
    float a0 = 0, a1 = 0, a2 = 0;
    for (Index j = 0; j < width; ++j) {
        const std::int64_t col3 = 3 * static_cast<std::int64_t>(__ldcs(cols + j * kWarp));
        const float x0 = __ldg(x + col3), x1 = __ldg(x + col3 + 1), x2 = __ldg(x + col3 + 2);
        const float* e = v + j * kWarp;
        const auto m = [e, plane](int k) { return __ldcs(e + k * plane); };
        a0 += m(0) * x0 + m(1) * x1 + m(2) * x2;
        a1 += m(3) * x0 + m(4) * x1 + m(5) * x2;
        a2 += m(6) * x0 + m(7) * x1 + m(8) * x2;
    }
    if (row < rows) {
        const std::int64_t n = rows, r3 = 3 * static_cast<std::int64_t>(row);
        const float x0 = x[r3], x1 = x[r3 + 1], x2 = x[r3 + 2];
        const float* d = diag + row;
        a0 += d[0] * x0 + d[n] * x1 + d[2 * n] * x2;
        a1 += d[3 * n] * x0 + d[4 * n] * x1 + d[5 * n] * x2;
        a2 += d[6 * n] * x0 + d[7 * n] * x1 + d[8 * n] * x2;
        y[r3] = a0, y[r3 + 1] = a1, y[r3 + 2] = a2;
    }
}

/// y = K x: a thread block of K warps per bin (static grid stride: one launch, no counter);
/// warp w takes slots j = w, w + K, ... of its lane's row (lane = row) up to the row's count,
/// so padding is not read; warps 1..K-1 hand their sums to warp 0 through shared memory.
template <int K, bool kStream = false>
__global__ void __launch_bounds__(K * 32)
    spmv_bins_kernel(const Index* __restrict__ bin_offsets, const Index* __restrict__ columns,
                     const Index* __restrict__ row_counts, const float* __restrict__ values,
                     const float* __restrict__ diag, Index rows, Index bins,
                     const float* __restrict__ x, float* __restrict__ y) {
    __shared__ float part[K][3][kWarp];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (Index bin = blockIdx.x; bin < bins; bin += gridDim.x) {
        const Index row = bin * kWarp + lane;
        const Index begin = __ldg(bin_offsets + bin);
        const std::int64_t plane = __ldg(bin_offsets + bin + 1) - begin;
        const Index count = row < rows ? __ldg(row_counts + row) : 0;
        const float* v = values + 9 * static_cast<std::int64_t>(begin) + lane;
        const Index* cols = columns + begin + lane;
        float a0 = 0, a1 = 0, a2 = 0;
#pragma unroll 2
        for (Index j = w; j < count; j += K) {
            // kStream: evict-first loads of the matrix stream, so x stays cached in L2.
            const auto ld = [](const auto* p) {
                if constexpr (kStream)
                    return __ldcs(p);
                else
                    return __ldg(p);
            };
            const Index col = ld(cols + j * kWarp);
            const float* b = v + j * kWarp;
            const float b0 = ld(b), b1 = ld(b + plane), b2 = ld(b + 2 * plane),
                        b3 = ld(b + 3 * plane), b4 = ld(b + 4 * plane), b5 = ld(b + 5 * plane),
                        b6 = ld(b + 6 * plane), b7 = ld(b + 7 * plane), b8 = ld(b + 8 * plane);
            const float x0 = __ldg(x + 3 * col), x1 = __ldg(x + 3 * col + 1),
                        x2 = __ldg(x + 3 * col + 2);
            a0 += b0 * x0 + b1 * x1 + b2 * x2;
            a1 += b3 * x0 + b4 * x1 + b5 * x2;
            a2 += b6 * x0 + b7 * x1 + b8 * x2;
        }
        if (w == 0 && row < rows) {
            const float x0 = __ldg(x + 3 * row), x1 = __ldg(x + 3 * row + 1),
                        x2 = __ldg(x + 3 * row + 2);
            const float* d = diag + row;
            const std::int64_t n = rows;
            a0 += __ldg(d) * x0 + __ldg(d + n) * x1 + __ldg(d + 2 * n) * x2;
            a1 += __ldg(d + 3 * n) * x0 + __ldg(d + 4 * n) * x1 + __ldg(d + 5 * n) * x2;
            a2 += __ldg(d + 6 * n) * x0 + __ldg(d + 7 * n) * x1 + __ldg(d + 8 * n) * x2;
        }
        if (K > 1) {
            part[w][0][lane] = a0, part[w][1][lane] = a1, part[w][2][lane] = a2;
            __syncthreads();
            // The 96 outputs of the bin, summed over warps and written contiguously.
            for (int o = threadIdx.x; o < 3 * kWarp; o += K * kWarp) {
                const int l = o / 3, r = o % 3;
                float sum = 0;
#pragma unroll
                for (int k = 0; k < K; ++k) sum += part[k][r][l];
                if (bin * kWarp + l < rows) y[3 * static_cast<std::int64_t>(bin) * kWarp + o] = sum;
            }
            __syncthreads();
        } else if (row < rows) {
            y[3 * row] = a0, y[3 * row + 1] = a1, y[3 * row + 2] = a2;
        }
    }
}

template <int K, bool kStream>
void launch_spmv_bins(const BinBcsrMatrixView<float>& a, const float* x, float* y,
                      cudaStream_t stream) {
    // Resident blocks of this variant, looked up once.
    static const int grid = [] {
        int per_sm = 0;
        EDN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, spmv_bins_kernel<K, kStream>, K * kWarp, 0));
        return std::max(1, per_sm * multiprocessors());
    }();
    const BinBcsrPatternView& p = a.pattern;
    spmv_bins_kernel<K, kStream><<<std::min<Index>(p.num_bins, grid), K * kWarp, 0, stream>>>(
        p.bin_offsets, p.columns, p.row_counts, a.values, a.diag, p.num_rows, p.num_bins, x, y);
}

template <class V = float>
__global__ void upper_multiply_kernel(UpperBinBcsrView<float> up, const float* __restrict__ x,
                                      float4* y, const V* values = nullptr,
                                      const float* unscale = nullptr) {
    const Index row = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (row >= up.num_rows) return;
    const std::int64_t r3 = 3 * static_cast<std::int64_t>(row);
    const float xi[3] = {__ldg(x + r3), __ldg(x + r3 + 1), __ldg(x + r3 + 2)};
    const float u = unscale ? *unscale : 1.f;
    const float xs[3] = {u * xi[0], u * xi[1], u * xi[2]};
    float a[3] = {0, 0, 0}, d[3];
    upper_row<false>(up, row, xs, Gather3{x}, y, a, 0, 1, values);
    for (int i = 0; i < 3; ++i) a[i] *= u;
    diagonal_row(up.diag, up.num_rows, row, xi, d);
    atomic_add3(y, row, a[0] + d[0], a[1] + d[1], a[2] + d[2]);
}

/// The product with K warps per bin (block = bin): warp w takes the blocks w, w + K, ... of
/// each row, the row sums meet in shared memory (long rows: more loads in flight per bin).
/// With `values` (a half copy) the blocks are scaled by *unscale: x_i before the transposed
/// products, the row's sum after.
template <int K, class V = float>
__global__ void __launch_bounds__(K * 32)
    upper_multiply_split_kernel(UpperBinBcsrView<float> up, const float* __restrict__ x, float4* y,
                                const V* values = nullptr, const float* unscale = nullptr) {
    __shared__ float partial[K][3][kBinRows];
    const int lane = threadIdx.x % kBinRows, warp = threadIdx.x / kBinRows;
    const Index row = static_cast<Index>(blockIdx.x) * kBinRows + lane;
    const float u = unscale ? *unscale : 1.f;
    float a[3] = {0, 0, 0}, xi[3] = {0, 0, 0};
    if (row < up.num_rows) {
        const std::int64_t r3 = 3 * static_cast<std::int64_t>(row);
        xi[0] = __ldg(x + r3), xi[1] = __ldg(x + r3 + 1), xi[2] = __ldg(x + r3 + 2);
        const float xs[3] = {u * xi[0], u * xi[1], u * xi[2]};
        upper_row<false>(up, row, xs, Gather3{x}, y, a, warp, K, values);
    }
    for (int i = 0; i < 3; ++i) partial[warp][i][lane] = a[i];
    __syncthreads();
    if (warp != 0 || row >= up.num_rows) return;
    for (int w = 1; w < K; ++w)
        for (int i = 0; i < 3; ++i) a[i] += partial[w][i][lane];
    for (int i = 0; i < 3; ++i) a[i] *= u;
    float d[3];
    diagonal_row(up.diag, up.num_rows, row, xi, d);
    atomic_add3(y, row, a[0] + d[0], a[1] + d[1], a[2] + d[2]);
}

} // namespace

// ---- full matrix
// ---------------------------------------------------------------------------------

SpmvKernel choose_spmv_kernel(Index num_rows, Index num_slots) {
    // Warps per bin and load policy from the matrix's shape (H100 measurements, bench/README.md):
    // short rows (p = 1, ~14 blocks) are best with 2 warps per bin, long rows with 4; the matrix
    // stream read evict-first (so x stays in L2) pays off once the matrix is larger than what L2
    // keeps between calls; with the node slot order (little padding) that holds for p = 3 too.
    const double width = num_rows > 0 ? double(num_slots) / double(num_rows) : 0.0;
    const std::size_t bins = (static_cast<std::size_t>(num_rows) + kWarp - 1) / kWarp;
    const std::size_t bytes = 40 * static_cast<std::size_t>(num_slots) +
                              36 * static_cast<std::size_t>(num_rows) + 4 * (bins + 1);
    const bool large = bytes > (std::size_t(32) << 20);
    if (!large) return {4, false};
    return {width <= 20 ? 2 : 4, true};
}

void spmv(const BinBcsrMatrixView<float>& a, const float* x, float* y, SpmvKernel kernel,
          void* stream) {
    EDN_VERIFY(kernel.warps_per_bin == 1 || kernel.warps_per_bin == 2 ||
                   kernel.warps_per_bin == 4 || kernel.warps_per_bin == 8,
               ErrorCode::Usage,
               "cuda::spmv: warps_per_bin must be 1, 2, 4 or 8, got " << kernel.warps_per_bin);
    if (a.pattern.num_bins) {
        const auto s = static_cast<cudaStream_t>(stream);
        switch (kernel.warps_per_bin * 2 + (kernel.streaming ? 1 : 0)) {
        case 2:
            launch_spmv_bins<1, false>(a, x, y, s);
            break;
        case 3:
            launch_spmv_bins<1, true>(a, x, y, s);
            break;
        case 4:
            launch_spmv_bins<2, false>(a, x, y, s);
            break;
        case 5:
            launch_spmv_bins<2, true>(a, x, y, s);
            break;
        case 9:
            launch_spmv_bins<4, true>(a, x, y, s);
            break;
        case 16:
            launch_spmv_bins<8, false>(a, x, y, s);
            break;
        case 17:
            launch_spmv_bins<8, true>(a, x, y, s);
            break;
        default:
            launch_spmv_bins<4, false>(a, x, y, s);
            break;
        }
    }
    EDN_CUDA_CHECK_LAUNCH();
}

void spmv(const BinBcsrMatrixView<float>& a, const float* x, float* y, void* stream) {
    const Index bins = a.pattern.num_bins;
    if (bins == 0) return;
    const auto grid = static_cast<unsigned int>(std::max<std::int64_t>(
        1, (static_cast<std::int64_t>(bins) * kWarp + kSpmvBlock - 1) / kSpmvBlock));
    spmv_warp_kernel<<<grid, kSpmvBlock, 0, static_cast<cudaStream_t>(stream)>>>(
        a.pattern.bin_offsets, a.pattern.columns, a.values, a.diag, a.pattern.num_rows, bins, x, y);
    EDN_CUDA_CHECK_LAUNCH();
}

// ---- upper part
// ----------------------------------------------------------------------------------

namespace {
template <class V>
void launch_upper(const UpperBinBcsrView<float>& a, const V* values, const float* unscale,
                  const float* x, float* y4, int warps_per_bin, void* stream) {
    EDN_VERIFY(warps_per_bin == 1 || warps_per_bin == 8, ErrorCode::Usage,
               "cuda::spmv_upper: warps_per_bin must be 1 or 8, got " << warps_per_bin);
    if (a.num_rows == 0) return;
    const auto s = static_cast<cudaStream_t>(stream);
    EDN_CUDA_CHECK(cudaMemsetAsync(y4, 0, 4 * sizeof(float) * std::size_t(a.num_rows), s));
    float4* y = reinterpret_cast<float4*>(y4);
    if (warps_per_bin == 8)
        upper_multiply_split_kernel<8, V><<<a.num_bins, 256, 0, s>>>(a, x, y, values, unscale);
    else
        upper_multiply_kernel<V>
            <<<static_cast<unsigned int>(std::max<std::int64_t>(1, (a.num_rows + 255) / 256)), 256,
               0, s>>>(a, x, y, values, unscale);
    EDN_CUDA_CHECK_LAUNCH();
}
} // namespace

void spmv_upper(const UpperBinBcsrView<float>& a, const float* x, float* y4, int warps_per_bin,
                void* stream) {
    launch_upper<float>(a, nullptr, nullptr, x, y4, warps_per_bin, stream);
}

void spmv_upper_half(const UpperBinBcsrView<float>& a, const std::uint16_t* half_values,
                     const float* unscale, const float* x, float* y4, int warps_per_bin,
                     void* stream) {
    launch_upper(a, reinterpret_cast<const __half*>(half_values), unscale, x, y4, warps_per_bin,
                 stream);
}

// ---- Assembly's products
// -------------------------------------------------------------------------

void Assembly::spmv_device(const float* x, float* y) const {
    spmv_device(x, y, choose_spmv_kernel(num_rows(), impl_->num_slots));
}

void Assembly::spmv_device(const float* x, float* y, SpmvKernel kernel) const {
    cuda::spmv(device_matrix(), x, y, kernel);
}

std::vector<float> Assembly::spmv(const std::vector<float>& x) const {
    return spmv(x, choose_spmv_kernel(num_rows(), impl_->num_slots));
}

std::vector<float> Assembly::spmv(const std::vector<float>& x, SpmvKernel kernel) const {
    const std::size_t n = 3 * static_cast<std::size_t>(num_rows());
    EDN_VERIFY(x.size() == n, ErrorCode::Usage,
               "spmv: x has " << x.size() << " entries, expected " << n);
    DeviceBuffer<float> dx(n), dy(n);
    std::vector<float> y(n);
    if (n == 0) return y;
    EDN_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice));
    spmv_device(dx.data(), dy.data(), kernel);
    EDN_CUDA_CHECK(cudaMemcpy(y.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
    return y;
}

// ---- DeviceMatrix
// --------------------------------------------------------------------------------

struct DeviceMatrix::Impl {
    BinBcsrPatternView pattern;
    DeviceBuffer<Index> bin_offsets, columns, row_counts;
    DeviceBuffer<float> values, diag;
};

template <class T> static void upload(DeviceBuffer<T>& dst, const std::vector<T>& src) {
    dst.resize(src.size());
    if (!src.empty())
        EDN_CUDA_CHECK(cudaMemcpy(dst.data(), src.data(), dst.bytes(), cudaMemcpyHostToDevice));
}

DeviceMatrix::DeviceMatrix(const BinBcsrMatrix<float>& host) : impl_(std::make_unique<Impl>()) {
    EDN_VERIFY(host.pattern != nullptr, ErrorCode::Usage, "DeviceMatrix: matrix has no pattern");
    const BinBcsrPattern& p = *host.pattern;
    Impl& d = *impl_;
    upload(d.bin_offsets, p.bin_offsets);
    upload(d.columns, p.columns);
    upload(d.row_counts, p.row_counts);
    upload(d.values, host.values);
    upload(d.diag, host.diag);
    d.pattern = {p.num_rows,       p.num_bins(),        d.bin_offsets.data(),
                 d.columns.data(), d.row_counts.data(), new_pattern_generation()};
}

DeviceMatrix::~DeviceMatrix() = default;

BinBcsrMatrixView<float> DeviceMatrix::view() const {
    return {impl_->pattern, impl_->values.data(), impl_->diag.data()};
}

std::vector<float> DeviceMatrix::multiply(const std::vector<float>& x) const {
    const std::size_t n3 = 3 * static_cast<std::size_t>(impl_->pattern.num_rows);
    EDN_VERIFY(x.size() == n3, ErrorCode::Usage,
               "DeviceMatrix::multiply: x has " << x.size() << " entries, expected " << n3);
    std::vector<float> y(n3);
    if (n3 == 0) return y;
    DeviceBuffer<float> dx(n3), dy(n3);
    EDN_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice));
    spmv(view(), dx.data(), dy.data());
    EDN_CUDA_CHECK(cudaMemcpy(y.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost));
    return y;
}

} // namespace edn::cuda
