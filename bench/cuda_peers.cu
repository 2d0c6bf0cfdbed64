// The GPU peers of the benchmarks: CUB COO -> BSR assembly and cuSPARSE BSR/CSR SpMV, plus
// device helpers. Written for the benchmark only (no engine code depends on it).
#include "core/error.hpp"
#include "cuda/cuda_assembly.hpp"
#include "cuda_peers.hpp"

#include <algorithm>
#include <cmath>
#include <cub/cub.cuh>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <utility>

namespace edn::bench {
namespace {

#define EDN_BENCH_CUDA(call)                                                                       \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess)                                                                   \
            EDN_THROW(err_ == cudaErrorMemoryAllocation ? ErrorCode::OutOfMemory                   \
                                                        : ErrorCode::Device,                       \
                      "bench: CUDA error " << cudaGetErrorName(err_) << " in " #call);             \
    } while (0)

#define EDN_BENCH_CUSPARSE(call)                                                                   \
    do {                                                                                           \
        cusparseStatus_t st_ = (call);                                                             \
        if (st_ != CUSPARSE_STATUS_SUCCESS)                                                        \
            EDN_THROW(ErrorCode::Device,                                                           \
                      "bench: cuSPARSE error " << cusparseGetErrorString(st_) << " in " #call);    \
    } while (0)

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Raw device allocation with a byte tally (the peer's memory is part of what it costs).
class Tally {
public:
    template <class T> T* alloc(std::size_t count) {
        void* p = nullptr;
        const std::size_t bytes = std::max<std::size_t>(count * sizeof(T), 1);
        EDN_BENCH_CUDA(cudaMalloc(&p, bytes));
        held_ += bytes;
        peak_ = std::max(peak_, held_);
        sizes_.push_back({p, bytes});
        return static_cast<T*>(p);
    }
    void free(void* p) {
        for (auto it = sizes_.begin(); it != sizes_.end(); ++it)
            if (it->first == p) {
                held_ -= it->second;
                sizes_.erase(it);
                cudaFree(p);
                return;
            }
    }
    ~Tally() {
        for (auto& s : sizes_) cudaFree(s.first);
    }
    std::size_t peak() const { return peak_; }

private:
    std::vector<std::pair<void*, std::size_t>> sizes_;
    std::size_t held_ = 0, peak_ = 0;
};

class Events {
public:
    Events() {
        EDN_BENCH_CUDA(cudaEventCreate(&a_));
        EDN_BENCH_CUDA(cudaEventCreate(&b_));
    }
    ~Events() {
        cudaEventDestroy(a_);
        cudaEventDestroy(b_);
    }
    void start() { EDN_BENCH_CUDA(cudaEventRecord(a_)); }
    double stop() {
        EDN_BENCH_CUDA(cudaEventRecord(b_));
        EDN_BENCH_CUDA(cudaEventSynchronize(b_));
        float ms = 0;
        EDN_BENCH_CUDA(cudaEventElapsedTime(&ms, a_, b_));
        return ms;
    }

private:
    cudaEvent_t a_{}, b_{};
};

unsigned grid(std::int64_t n, int block) {
    return static_cast<unsigned>((n + block - 1) / block);
}

__global__ void coo_keys_kernel(const Index* cell_nodes, std::int64_t count, int m,
                                unsigned long long rows, unsigned long long* keys, Index* index) {
    const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= count) return;
    const std::int64_t t = s / (m * m);
    const int ab = static_cast<int>(s % (m * m));
    const unsigned long long row = cell_nodes[t * m + ab / m], col = cell_nodes[t * m + ab % m];
    keys[s] = row * rows + col;
    index[s] = static_cast<Index>(s);
}

/// One thread per (unique block, entry k): sums entry k of the run's element blocks.
__global__ void coo_reduce_kernel(const unsigned long long* unique_keys, const Index* run_offsets,
                                  const Index* sorted_index, const float* blocks, Index runs,
                                  unsigned long long rows, float* values, Index* bsr_rows,
                                  Index* bsr_cols) {
    const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= 9LL * runs) return;
    const Index u = static_cast<Index>(i / 9);
    const int k = static_cast<int>(i % 9);
    float acc = 0;
    for (Index e = run_offsets[u]; e < run_offsets[u + 1]; ++e)
        acc += blocks[9LL * sorted_index[e] + k];
    values[i] = acc;
    if (k == 0) {
        bsr_rows[u] = static_cast<Index>(unique_keys[u] / rows);
        bsr_cols[u] = static_cast<Index>(unique_keys[u] % rows);
    }
}

double max_rel_diff(const std::vector<float>& y, const std::vector<float>& ref) {
    double scale = 0, diff = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
        scale = std::max(scale, std::abs(double(ref[i])));
        diff = std::max(diff, std::abs(double(y[i]) - double(ref[i])));
    }
    return scale > 0 ? diff / scale : diff;
}

int key_bits(unsigned long long max_key) {
    int bits = 1;
    while (bits < 64 && (max_key >> bits) != 0) ++bits;
    return bits;
}

} // namespace

DeviceInfo device_info() {
    DeviceInfo info;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();
        EDN_THROW(ErrorCode::Unsupported, "bench: no CUDA device");
    }
    cudaDeviceProp prop{};
    EDN_BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
    info.name = prop.name;
    info.multiprocessors = prop.multiProcessorCount;
    EDN_BENCH_CUDA(cudaMemGetInfo(&info.free_bytes, &info.total_bytes));
    return info;
}

double copy_bandwidth_gbps(std::size_t bytes, int repeat) {
    void *a = nullptr, *b = nullptr;
    EDN_BENCH_CUDA(cudaMalloc(&a, bytes));
    if (cudaMalloc(&b, bytes) != cudaSuccess) {
        cudaFree(a);
        EDN_THROW(ErrorCode::OutOfMemory, "bench: copy buffer of " << bytes << " bytes");
    }
    cudaMemset(a, 1, bytes);
    cudaMemset(b, 0, bytes);
    const double ms = time_device_ms(
        [&] { EDN_BENCH_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); }, 10,
        repeat);
    cudaFree(a);
    cudaFree(b);
    return 2.0 * double(bytes) / (ms * 1e-3) / 1e9;
}

double time_device_ms(const std::function<void()>& launch, int iterations, int repeat) {
    launch();
    EDN_BENCH_CUDA(cudaDeviceSynchronize());
    Events ev;
    std::vector<double> samples;
    for (int r = 0; r < std::max(repeat, 1); ++r) {
        ev.start();
        for (int i = 0; i < iterations; ++i) launch();
        samples.push_back(ev.stop() / iterations);
    }
    EDN_BENCH_CUDA(cudaGetLastError());
    return median_of(samples);
}

void upload_element_blocks(cuda::Assembly& assembly, const std::vector<float>& host) {
    float* device = assembly.device_element_blocks();
    if (!host.empty())
        EDN_BENCH_CUDA(
            cudaMemcpy(device, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
}

DeviceFloats::DeviceFloats(const std::vector<float>& host) : size_(host.size()) {
    EDN_BENCH_CUDA(cudaMalloc(reinterpret_cast<void**>(&data_),
                              std::max<std::size_t>(size_, 1) * sizeof(float)));
    if (size_)
        EDN_BENCH_CUDA(
            cudaMemcpy(data_, host.data(), size_ * sizeof(float), cudaMemcpyHostToDevice));
}
DeviceFloats::~DeviceFloats() {
    if (data_) cudaFree(data_);
}
DeviceFloats::DeviceFloats(DeviceFloats&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
DeviceFloats& DeviceFloats::operator=(DeviceFloats&& o) noexcept {
    if (this != &o) {
        if (data_) cudaFree(data_);
        data_ = std::exchange(o.data_, nullptr);
        size_ = std::exchange(o.size_, 0);
    }
    return *this;
}
std::vector<float> DeviceFloats::download() const {
    std::vector<float> host(size_);
    if (size_)
        EDN_BENCH_CUDA(
            cudaMemcpy(host.data(), data_, size_ * sizeof(float), cudaMemcpyDeviceToHost));
    return host;
}

CooAssemblyResult cub_coo_assembly(const std::vector<float>& element_blocks,
                                   const std::vector<Index>& cell_nodes, Index num_cells, int m,
                                   Index num_rows, int repeat) {
    CooAssemblyResult result;
    const std::int64_t count = static_cast<std::int64_t>(num_cells) * m * m;
    EDN_VERIFY(count < (1LL << 31), ErrorCode::OutOfMemory,
               "bench: COO peer: " << count << " element blocks exceed 32-bit indices");
    EDN_VERIFY(element_blocks.size() == static_cast<std::size_t>(9 * count), ErrorCode::Internal,
               "bench: COO peer: element block count mismatch");
    const unsigned long long rows = static_cast<unsigned long long>(num_rows);
    const int end_bit = key_bits(rows * rows - 1);
    cusparseHandle_t handle = nullptr;
    EDN_BENCH_CUSPARSE(cusparseCreate(&handle));
    Tally inputs;
    Events ev, stage;
    ev.start();
    float* d_blocks = inputs.alloc<float>(element_blocks.size());
    Index* d_nodes = inputs.alloc<Index>(cell_nodes.size());
    EDN_BENCH_CUDA(cudaMemcpy(d_blocks, element_blocks.data(),
                              element_blocks.size() * sizeof(float), cudaMemcpyHostToDevice));
    EDN_BENCH_CUDA(cudaMemcpy(d_nodes, cell_nodes.data(), cell_nodes.size() * sizeof(Index),
                              cudaMemcpyHostToDevice));
    result.upload_ms = ev.stop();
    result.input_bytes = inputs.peak();
    try {
        for (int r = 0; r < std::max(repeat, 1); ++r) {
            CooAssemblyTimes t;
            Tally tally;
            ev.start();
            stage.start();
            auto* keys_in = tally.alloc<unsigned long long>(count);
            auto* keys_out = tally.alloc<unsigned long long>(count);
            auto* index_in = tally.alloc<Index>(count);
            auto* index_out = tally.alloc<Index>(count);
            std::size_t sort_bytes = 0;
            EDN_BENCH_CUDA(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, keys_in, keys_out,
                                                           index_in, index_out, count, 0, end_bit));
            auto* sort_temp = tally.alloc<unsigned char>(sort_bytes);
            t.alloc = stage.stop();

            stage.start();
            coo_keys_kernel<<<grid(count, 256), 256>>>(d_nodes, count, m, rows, keys_in, index_in);
            EDN_BENCH_CUDA(cudaGetLastError());
            t.keys = stage.stop();

            stage.start();
            EDN_BENCH_CUDA(cub::DeviceRadixSort::SortPairs(sort_temp, sort_bytes, keys_in, keys_out,
                                                           index_in, index_out, count, 0, end_bit));
            t.sort = stage.stop();

            stage.start();
            tally.free(sort_temp);
            tally.free(index_in);
            // Unique keys reuse keys_in; run lengths then offsets go to a fresh array.
            auto* run_lengths = tally.alloc<Index>(count + 1);
            auto* num_runs = tally.alloc<Index>(1);
            std::size_t rle_bytes = 0;
            EDN_BENCH_CUDA(cub::DeviceRunLengthEncode::Encode(nullptr, rle_bytes, keys_out, keys_in,
                                                              run_lengths, num_runs, count));
            auto* rle_temp = tally.alloc<unsigned char>(rle_bytes);
            EDN_BENCH_CUDA(cub::DeviceRunLengthEncode::Encode(
                rle_temp, rle_bytes, keys_out, keys_in, run_lengths, num_runs, count));
            Index runs = 0;
            EDN_BENCH_CUDA(cudaMemcpy(&runs, num_runs, sizeof(Index), cudaMemcpyDeviceToHost));
            tally.free(rle_temp);
            EDN_BENCH_CUDA(cudaMemsetAsync(run_lengths + runs, 0, sizeof(Index)));
            std::size_t scan_bytes = 0;
            EDN_BENCH_CUDA(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, run_lengths,
                                                         run_lengths, runs + 1));
            auto* scan_temp = tally.alloc<unsigned char>(scan_bytes);
            EDN_BENCH_CUDA(cub::DeviceScan::ExclusiveSum(scan_temp, scan_bytes, run_lengths,
                                                         run_lengths, runs + 1));
            tally.free(scan_temp);
            // Exact output allocation, now that nnz is known.
            float* values = tally.alloc<float>(9 * static_cast<std::size_t>(runs));
            Index* bsr_rows = tally.alloc<Index>(runs);
            Index* bsr_cols = tally.alloc<Index>(runs);
            Index* row_offsets = tally.alloc<Index>(static_cast<std::size_t>(num_rows) + 1);
            coo_reduce_kernel<<<grid(9LL * runs, 256), 256>>>(
                keys_in, run_lengths, index_out, d_blocks, runs, rows, values, bsr_rows, bsr_cols);
            EDN_BENCH_CUDA(cudaGetLastError());
            t.reduce = stage.stop();

            stage.start();
            EDN_BENCH_CUSPARSE(cusparseXcoo2csr(handle, bsr_rows, runs, num_rows, row_offsets,
                                                CUSPARSE_INDEX_BASE_ZERO));
            t.offsets = stage.stop();

            if (r + 1 == std::max(repeat, 1)) {
                std::vector<float> host(9 * static_cast<std::size_t>(runs));
                EDN_BENCH_CUDA(cudaMemcpy(host.data(), values, host.size() * sizeof(float),
                                          cudaMemcpyDeviceToHost));
                double sum = 0;
                for (float v : host) sum += std::abs(double(v));
                result.value_abs_sum = sum;
                result.nnz_blocks = runs;
                result.output_bytes = host.size() * sizeof(float) + runs * sizeof(Index) +
                                      (static_cast<std::size_t>(num_rows) + 1) * sizeof(Index);
                stage.start(); // the check above is not part of the peer's time
            } else {
                stage.start();
            }
            for (void* p : {static_cast<void*>(keys_in), static_cast<void*>(keys_out),
                            static_cast<void*>(index_out), static_cast<void*>(run_lengths),
                            static_cast<void*>(num_runs), static_cast<void*>(bsr_rows)})
                tally.free(p);
            t.free = stage.stop();
            t.total = t.alloc + t.keys + t.sort + t.reduce + t.offsets + t.free;
            result.peak_temp_bytes = std::max(result.peak_temp_bytes, tally.peak());
            result.runs.push_back(t);
            // values, bsr_cols and row_offsets (the result) are freed with `tally`.
        }
    } catch (...) {
        cusparseDestroy(handle);
        throw;
    }
    cusparseDestroy(handle);
    return result;
}

CusparseSpmvResult cusparse_spmv(const HostBsr& bsr, const std::vector<float>& x,
                                 const std::vector<float>& y_ref, int iterations, int repeat) {
    CusparseSpmvResult result;
    const Index mb = bsr.num_rows;
    const Index nnzb = static_cast<Index>(bsr.columns.size());
    const std::int64_t n = 3LL * mb;
    // Scalar CSR expansion of the BSR (columns stay sorted inside each scalar row).
    std::vector<Index> csr_offsets(n + 1, 0), csr_cols(9LL * nnzb);
    std::vector<float> csr_vals(9LL * nnzb);
    {
        std::int64_t at = 0;
        for (Index br = 0; br < mb; ++br)
            for (int r = 0; r < 3; ++r) {
                for (Index e = bsr.row_offsets[br]; e < bsr.row_offsets[br + 1]; ++e)
                    for (int c = 0; c < 3; ++c) {
                        csr_cols[at] = 3 * bsr.columns[e] + c;
                        csr_vals[at] = bsr.values[9LL * e + 3 * r + c];
                        ++at;
                    }
                csr_offsets[3LL * br + r + 1] = static_cast<Index>(at);
            }
    }
    Tally tally;
    auto upload = [&](const auto& host) {
        using T = typename std::decay_t<decltype(host)>::value_type;
        T* p = tally.alloc<T>(host.size());
        if (!host.empty())
            EDN_BENCH_CUDA(
                cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
        return p;
    };
    Index* d_bsr_off = upload(bsr.row_offsets);
    Index* d_bsr_col = upload(bsr.columns);
    float* d_bsr_val = upload(bsr.values);
    result.bsr_bytes = (bsr.row_offsets.size() + bsr.columns.size()) * sizeof(Index) +
                       bsr.values.size() * sizeof(float);
    Index* d_csr_off = upload(csr_offsets);
    Index* d_csr_col = upload(csr_cols);
    float* d_csr_val = upload(csr_vals);
    result.csr_bytes =
        (csr_offsets.size() + csr_cols.size()) * sizeof(Index) + csr_vals.size() * sizeof(float);
    float* d_x = upload(x);
    float* d_y = tally.alloc<float>(n);

    cusparseHandle_t handle = nullptr;
    EDN_BENCH_CUSPARSE(cusparseCreate(&handle));
    cusparseMatDescr_t descr = nullptr;
    cusparseSpMatDescr_t csr = nullptr;
    cusparseDnVecDescr_t vx = nullptr, vy = nullptr;
    const float one = 1.0f, zero = 0.0f;
    try {
        EDN_BENCH_CUSPARSE(cusparseCreateMatDescr(&descr));
        EDN_BENCH_CUSPARSE(cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_GENERAL));
        EDN_BENCH_CUSPARSE(cusparseSetMatIndexBase(descr, CUSPARSE_INDEX_BASE_ZERO));
        auto bsrmv = [&] {
            EDN_BENCH_CUSPARSE(cusparseSbsrmv(
                handle, CUSPARSE_DIRECTION_ROW, CUSPARSE_OPERATION_NON_TRANSPOSE, mb, mb, nnzb,
                &one, descr, d_bsr_val, d_bsr_off, d_bsr_col, 3, d_x, &zero, d_y));
        };
        result.bsr_ms = time_device_ms(bsrmv, iterations, repeat);
        std::vector<float> y(n);
        EDN_BENCH_CUDA(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
        result.bsr_max_rel_diff = max_rel_diff(y, y_ref);

        EDN_BENCH_CUSPARSE(cusparseCreateCsr(&csr, n, n, 9LL * nnzb, d_csr_off, d_csr_col,
                                             d_csr_val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                             CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
        EDN_BENCH_CUSPARSE(cusparseCreateDnVec(&vx, n, d_x, CUDA_R_32F));
        EDN_BENCH_CUSPARSE(cusparseCreateDnVec(&vy, n, d_y, CUDA_R_32F));
        std::size_t buffer_bytes = 0;
        EDN_BENCH_CUSPARSE(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                                   csr, vx, &zero, vy, CUDA_R_32F,
                                                   CUSPARSE_SPMV_CSR_ALG1, &buffer_bytes));
        void* buffer = tally.alloc<unsigned char>(buffer_bytes);
        EDN_BENCH_CUSPARSE(cusparseSpMV_preprocess(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one,
                                                   csr, vx, &zero, vy, CUDA_R_32F,
                                                   CUSPARSE_SPMV_CSR_ALG1, buffer));
        auto csrmv = [&] {
            EDN_BENCH_CUSPARSE(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, csr, vx,
                                            &zero, vy, CUDA_R_32F, CUSPARSE_SPMV_CSR_ALG1, buffer));
        };
        result.csr_ms = time_device_ms(csrmv, iterations, repeat);
        EDN_BENCH_CUDA(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
        result.csr_max_rel_diff = max_rel_diff(y, y_ref);
    } catch (...) {
        if (vx) cusparseDestroyDnVec(vx);
        if (vy) cusparseDestroyDnVec(vy);
        if (csr) cusparseDestroySpMat(csr);
        if (descr) cusparseDestroyMatDescr(descr);
        cusparseDestroy(handle);
        throw;
    }
    cusparseDestroyDnVec(vx);
    cusparseDestroyDnVec(vy);
    cusparseDestroySpMat(csr);
    cusparseDestroyMatDescr(descr);
    cusparseDestroy(handle);
    return result;
}

} // namespace edn::bench
