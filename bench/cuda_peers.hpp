#pragma once
/// The GPU peers the benchmarks compare against, timed in the same run (a plain C++ header; the
/// CUDA code is in cuda_peers.cu, and no_cuda_peers.cpp throws edn::Error(Unsupported)):
/// a CUB COO -> BSR assembly (sort by key + reduce) and cuSPARSE BSR and CSR SpMV; plus device
/// helpers (memory, copy bandwidth, device vectors, event timing) for the drivers.

#include "core/types.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace edn::cuda {
class Assembly;
}

namespace edn::bench {

/// Device 0 as the benchmarks see it.
struct DeviceInfo {
    std::string name;
    std::size_t total_bytes = 0;
    std::size_t free_bytes = 0;
    int multiprocessors = 0;
};

/// Name and memory of device 0.
DeviceInfo device_info();

/// Device-to-device copy bandwidth in GB/s (bytes read + bytes written per second) of a
/// cudaMemcpy of `bytes`, median of `repeat` copies.
double copy_bandwidth_gbps(std::size_t bytes, int repeat);

/// Median milliseconds per call of `launch` (device work on the default stream), timed with CUDA
/// events around `iterations` back-to-back calls, `repeat` times, after one warm-up call.
double time_device_ms(const std::function<void()>& launch, int iterations, int repeat);

/// A float array in device memory (owning, move-only).
class DeviceFloats {
public:
    DeviceFloats() = default;
    /// Uploads `host`.
    explicit DeviceFloats(const std::vector<float>& host);
    ~DeviceFloats();
    DeviceFloats(DeviceFloats&& other) noexcept;
    DeviceFloats& operator=(DeviceFloats&& other) noexcept;
    DeviceFloats(const DeviceFloats&) = delete;
    DeviceFloats& operator=(const DeviceFloats&) = delete;
    /// Device pointer.
    float* data() const { return data_; }
    /// Number of floats.
    std::size_t size() const { return size_; }
    /// Copies back to the host.
    std::vector<float> download() const;

private:
    float* data_ = nullptr;
    std::size_t size_ = 0;
};

/// Copies `host` into the element block storage of `assembly` (cuda::Assembly::
/// device_element_blocks(), full layout), so its next sum() reads these blocks.
void upload_element_blocks(cuda::Assembly& assembly, const std::vector<float>& host);

/// Times of one COO -> BSR assembly on the device (milliseconds, CUDA events).
struct CooAssemblyTimes {
    double alloc = 0;   ///< temporaries sized by the element block count, and the sort buffer
    double keys = 0;    ///< one 64-bit key (row * num_rows + col) and an index per element block
    double sort = 0;    ///< cub::DeviceRadixSort::SortPairs over the key bits in use
    double reduce = 0;  ///< run-length encode, scan of run lengths, read-back of nnz, exact
                        ///< allocation of the BSR arrays, segmented sum of the 3x3 blocks
    double offsets = 0; ///< BSR row offsets (cusparseXcoo2csr)
    double free = 0;    ///< freeing the temporaries
    double total = 0;   ///< all of the above
};

/// Result of the COO -> BSR peer.
struct CooAssemblyResult {
    std::vector<CooAssemblyTimes> runs; ///< one per repetition
    double upload_ms = 0;               ///< element blocks + cell nodes to the device (once)
    std::size_t input_bytes = 0;        ///< element blocks + cell node table on the device
    std::size_t peak_temp_bytes = 0;    ///< highest temporaries + outputs held at once
    std::size_t output_bytes = 0;       ///< the final BSR (values, columns, row offsets)
    std::int64_t nnz_blocks = 0;        ///< stored 3x3 blocks (diagonal included)
    double value_abs_sum = 0;           ///< sum of |stored values| (checks against ours)
};

/// Block-level COO assembly: element blocks (row-major 3x3 of cells' m x m blocks, as in
/// sparse/summation.hpp, on the host) and the #cells x m node table are uploaded once; then,
/// `repeat` times: keys, radix sort by key, reduce-by-key of the 3x3 blocks, row offsets.
CooAssemblyResult cub_coo_assembly(const std::vector<float>& element_blocks,
                                   const std::vector<Index>& cell_nodes, Index num_cells, int m,
                                   Index num_rows, int repeat);

/// A 3x3-block BSR matrix on the host (blocks row-major, columns sorted, diagonal included).
struct HostBsr {
    Index num_rows = 0;             ///< block rows
    std::vector<Index> row_offsets; ///< num_rows + 1
    std::vector<Index> columns;     ///< nnz_blocks
    std::vector<float> values;      ///< 9 * nnz_blocks
};

/// cuSPARSE SpMV results.
struct CusparseSpmvResult {
    double bsr_ms = 0;           ///< cusparseSbsrmv, 3x3 row-major blocks
    double csr_ms = 0;           ///< cusparseSpMV, CSR, CUSPARSE_SPMV_CSR_ALG1
    double bsr_max_rel_diff = 0; ///< max |y_bsr - y_ref| / max |y_ref|
    double csr_max_rel_diff = 0; ///< max |y_csr - y_ref| / max |y_ref|
    std::size_t bsr_bytes = 0;   ///< device bytes of the BSR matrix
    std::size_t csr_bytes = 0;   ///< device bytes of the CSR matrix
};

/// Uploads `bsr` as BSR and (expanded) as scalar CSR, times y = A x with each (`iterations`
/// calls per timing, `repeat` timings, median), and compares both with `y_ref`.
CusparseSpmvResult cusparse_spmv(const HostBsr& bsr, const std::vector<float>& x,
                                 const std::vector<float>& y_ref, int iterations, int repeat);

} // namespace edn::bench
