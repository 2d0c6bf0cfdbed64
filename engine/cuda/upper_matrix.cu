// UpperMatrix (cuda/cuda_pcg.hpp): the upper part of a device Bin-BCSR* matrix, its pattern built
// on the device (counts and bin widths, CUB scan, exact allocation, columns) and its values
// gathered from the full matrix; twin of sparse/upper_part.cpp. Its product: cuda::spmv_upper
// (spmv.cu).
#include "cuda/cuda_check.cuh"
#include "cuda/cuda_pcg.hpp"
#include "sparse/spmv.hpp"

#include <algorithm>
#include <cub/device/device_scan.cuh>

namespace edn::cuda {
namespace {

constexpr int kBlock = 256;

unsigned int blocks_for(std::int64_t n) {
    return static_cast<unsigned int>(std::max<std::int64_t>(1, (n + kBlock - 1) / kBlock));
}

/// Per row: the position of its first upper block (columns > row) and their count; per bin
/// (lane 0): 32 * the largest count. Threads cover whole bins (no early exit before the warp max).
__global__ void upper_counts_kernel(BinBcsrPatternView full, Index* counts, Index* first,
                                    Index* widths) {
    const Index row = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
    const Index bin = row / kBinRows;
    Index count = 0;
    if (row < full.num_rows) {
        const Index n = full.row_counts[row];
        Index j = 0;
        while (j < n && full.columns[full.slot(row, j)] < row) ++j;
        first[row] = j;
        counts[row] = count = n - j;
    }
    Index width = count; // warp max (shuffles: every architecture the build targets)
    for (int o = 16; o > 0; o >>= 1) width = max(width, __shfl_xor_sync(0xffffffffu, width, o));
    if (row % kBinRows == 0 && bin <= full.num_bins)
        widths[bin] = bin < full.num_bins ? kBinRows * width : 0;
}

__global__ void upper_columns_kernel(BinBcsrPatternView full, const Index* bin_offsets,
                                     const Index* counts, const Index* first, Index* columns) {
    const Index t = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
    const Index bin = t / kBinRows;
    if (bin >= full.num_bins) return;
    const Index begin = bin_offsets[bin];
    const Index width = (bin_offsets[bin + 1] - begin) / kBinRows;
    const Index lane = t % kBinRows;
    const Index row = t;
    const Index count = row < full.num_rows ? counts[row] : 0;
    for (Index j = 0; j < width; ++j)
        columns[begin + j * kBinRows + lane] = j < count
                                                   ? full.columns[full.slot(row, first[row] + j)]
                                                   : std::min(row, full.num_rows - 1);
}

// One thread per (value plane k, row): consecutive threads take consecutive rows of a plane, so
// the lanes of a bin read and write coalesced, and the 9 planes give 9x the loads in flight of a
// thread per row (187K-tet bunny, H100: 68 us per gather with a thread per row).
__global__ void upper_values_kernel(BinBcsrMatrixView<float> full, UpperBinBcsrView<float> up) {
    const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= 9 * static_cast<std::int64_t>(up.num_rows)) return;
    const int k = static_cast<int>(t / up.num_rows);
    const Index row = static_cast<Index>(t - static_cast<std::int64_t>(k) * up.num_rows);
    const Index bin = row / kBinRows;
    const int lane = row % kBinRows;
    const Index ub = up.bin_offsets[bin];
    const std::int64_t uplane = up.bin_offsets[bin + 1] - ub;
    const Index fb = full.pattern.bin_offsets[bin];
    const std::int64_t fplane = full.pattern.bin_offsets[bin + 1] - fb;
    float* dst = up.values + 9 * static_cast<std::int64_t>(ub) + lane + k * uplane;
    const float* src = full.values + 9 * static_cast<std::int64_t>(fb) + lane + k * fplane +
                       static_cast<std::int64_t>(up.first[row]) * kBinRows;
    const Index count = up.counts[row];
    for (Index j = 0; j < count; ++j) dst[j * kBinRows] = __ldcs(src + j * kBinRows);
}

template <class T> std::vector<T> download(const DeviceBuffer<T>& b, std::size_t count) {
    std::vector<T> h(count);
    if (count)
        EDN_CUDA_CHECK(cudaMemcpy(h.data(), b.data(), count * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

} // namespace

struct UpperMatrix::Impl {
    cudaStream_t stream = nullptr;
    Index rows = 0, bins = 0, slots = 0;
    std::uint64_t generation = 0; // of the full pattern the upper pattern was built from
    const Index* full_offsets = nullptr;
    const float* diag = nullptr;
    DeviceBuffer<Index> bin_offsets, columns, counts, first;
    DeviceBuffer<float> values;
    DeviceBuffer<unsigned char> scan_temp;
};

UpperMatrix::UpperMatrix(void* stream) : impl_(std::make_unique<Impl>()) {
    impl_->stream = static_cast<cudaStream_t>(stream);
}

UpperMatrix::~UpperMatrix() = default;

void UpperMatrix::update(const BinBcsrMatrixView<float>& full) {
    Impl& d = *impl_;
    const BinBcsrPatternView& p = full.pattern;
    const Index rows = p.num_rows;
    const cudaStream_t s = d.stream;
    d.diag = full.diag;
    const bool same = p.generation != 0 && p.generation == d.generation &&
                      p.bin_offsets == d.full_offsets && rows == d.rows;
    if (!same) {
        d.rows = rows;
        d.bins = p.num_bins;
        d.generation = 0;
        d.full_offsets = p.bin_offsets;
        d.counts.resize(rows);
        d.first.resize(rows);
        d.bin_offsets.resize(static_cast<std::size_t>(d.bins) + 1);
        // The allocations above are ordered on the default stream; work on `s` follows them.
        if (s) EDN_CUDA_CHECK(cudaStreamSynchronize(nullptr));
        const std::int64_t threads = static_cast<std::int64_t>(d.bins + 1) * kBinRows;
        upper_counts_kernel<<<blocks_for(threads), kBlock, 0, s>>>(
            p, d.counts.data(), d.first.data(), d.bin_offsets.data());
        EDN_CUDA_CHECK_LAUNCH();
        std::size_t temp = 0;
        EDN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp, d.bin_offsets.data(),
                                                     d.bin_offsets.data(), d.bins + 1, s));
        if (d.scan_temp.size() < temp) {
            d.scan_temp.resize(temp);
            if (s) EDN_CUDA_CHECK(cudaStreamSynchronize(nullptr));
        }
        EDN_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d.scan_temp.data(), temp, d.bin_offsets.data(),
                                                     d.bin_offsets.data(), d.bins + 1, s));
        Index slots = 0;
        EDN_CUDA_CHECK(cudaMemcpyAsync(&slots, d.bin_offsets.data() + d.bins, sizeof slots,
                                       cudaMemcpyDeviceToHost, s));
        EDN_CUDA_CHECK(cudaStreamSynchronize(s));
        d.slots = slots;
        d.columns.resize(slots);
        d.values.resize(9 * static_cast<std::size_t>(slots));
        if (slots) EDN_CUDA_CHECK(cudaMemset(d.values.data(), 0, d.values.bytes())); // padding
        if (s) EDN_CUDA_CHECK(cudaStreamSynchronize(nullptr));
        upper_columns_kernel<<<blocks_for(static_cast<std::int64_t>(d.bins) * kBinRows), kBlock, 0,
                               s>>>(p, d.bin_offsets.data(), d.counts.data(), d.first.data(),
                                    d.columns.data());
        EDN_CUDA_CHECK_LAUNCH();
        d.generation = p.generation;
    }
    if (rows > 0) {
        upper_values_kernel<<<blocks_for(9 * static_cast<std::int64_t>(rows)), kBlock, 0, s>>>(
            full, view());
        EDN_CUDA_CHECK_LAUNCH();
    }
}

UpperBinBcsrView<float> UpperMatrix::view() const {
    const Impl& d = *impl_;
    return {d.rows,          d.bins,         d.bin_offsets.data(), d.columns.data(),
            d.counts.data(), d.first.data(), d.values.data(),      d.diag};
}

void UpperMatrix::multiply_device(const float* x, float* y4, int warps_per_bin) const {
    const Impl& d = *impl_;
    EDN_VERIFY(warps_per_bin == 0 || warps_per_bin == 1 || warps_per_bin == 8, ErrorCode::Usage,
               "UpperMatrix: warps_per_bin must be 0, 1 or 8, got " << warps_per_bin);
    if (d.rows == 0) return;
    spmv_upper(view(), x, y4, warps_per_bin == 0 ? chosen_warps_per_bin() : warps_per_bin,
               d.stream);
}

int UpperMatrix::chosen_warps_per_bin() const {
    const Impl& d = *impl_;
    // Warps per bin, measured on the H100 (us, 1 / 8 warps): p = 1 403K 11.2 / 10.2, 720K
    // 16.4 / 18.6, 1.1M 25.6 / 27.0; p = 2 127K 82.3 / 58.0, 403K 180 / 192, 720K 332 / 340,
    // 1.1M 536 / 522; p = 3 127K 363 / 331, 403K 1052 / 1059. Eight warps where the bins are
    // few or their rows long, one where many short rows fill the GPU. (Long rows had one warp
    // above 2^24 slots until session 20: in the multigrid cycle's half products of the 187K
    // bunny at p = 3, which has more, one thread per row left the loads latency bound (DRAM at
    // 38% and L2 at 66% of peak, 584 us); eight warps took its frames 108.6 -> 96.6 ms, H100.)
    const double width = d.rows ? double(d.slots) / double(d.rows) : 0.0;
    return width > 10.0 || d.rows <= 100'000 ? 8 : 1;
}

std::vector<float> UpperMatrix::multiply(const std::vector<float>& x, int warps_per_bin) const {
    const Impl& d = *impl_;
    const std::size_t n = static_cast<std::size_t>(d.rows);
    EDN_VERIFY(x.size() == 3 * n, ErrorCode::Usage,
               "UpperMatrix::multiply: x has " << x.size() << " entries, expected " << 3 * n);
    std::vector<float> y(3 * n);
    if (n == 0) return y;
    DeviceBuffer<float> dx(3 * n), dy(4 * n);
    EDN_CUDA_CHECK(cudaMemcpy(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice));
    multiply_device(dx.data(), dy.data(), warps_per_bin);
    EDN_CUDA_CHECK(cudaStreamSynchronize(d.stream));
    const std::vector<float> y4 = download(dy, 4 * n);
    for (std::size_t i = 0; i < n; ++i)
        for (int k = 0; k < 3; ++k) y[3 * i + k] = y4[4 * i + k];
    return y;
}

UpperPattern UpperMatrix::download_pattern() const {
    const Impl& d = *impl_;
    EDN_CUDA_CHECK(cudaStreamSynchronize(d.stream));
    UpperPattern up;
    up.num_rows = d.rows;
    up.bin_offsets = download(d.bin_offsets, d.bin_offsets.size());
    up.columns = download(d.columns, d.columns.size());
    up.counts = download(d.counts, d.counts.size());
    up.first = download(d.first, d.first.size());
    return up;
}

std::vector<float> UpperMatrix::download_values() const {
    EDN_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
    return download(impl_->values, impl_->values.size());
}

std::size_t UpperMatrix::bytes() const {
    const Impl& d = *impl_;
    return d.bin_offsets.bytes() + d.columns.bytes() + d.counts.bytes() + d.first.bytes() +
           d.values.bytes();
}

Index UpperMatrix::num_slots() const {
    return impl_->slots;
}

} // namespace edn::cuda
