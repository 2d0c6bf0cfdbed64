// CUDA twin of cpu/summation.cpp (sparse/summation.hpp): linear-elastic element blocks and the
// three summations into a Bin-BCSR* matrix, as free functions over device views; and the
// Assembly methods that call them on the assembly's own buffers.
#include "core/dispatch.hpp"
#include "cuda/assembly_impl.cuh"
#include "cuda/per_entry_summation.cuh"
#include "fem/element_geometry.hpp"
#include "fem/reference_integrals.hpp"
#include "sparse/summation.hpp"

namespace edn::cuda {
namespace {

using detail::add_block;
using detail::find_slot;
using detail::for_each_row_cell;
using detail::grid_for;
using detail::kMaxNodes;
using detail::kWarp;
using detail::launch_sum_per_entry;
using detail::multiprocessors;
using detail::next_bin;
using detail::NodeCellsDevice;
using detail::persistent_grid;

// Reference integrals S_ab (m*m*9 floats, at most 20*20*9) for the element kernels.
__constant__ float c_reference_integrals[kMaxNodes * kMaxNodes * 9];

// ---- element blocks -----------------------------------------------------------------------------

__device__ __forceinline__ void load_inverse_jacobian(const int4 c, const float* x, float Ji[3][3],
                                                      float& abs_det) {
    const Index v[4] = {c.x, c.y, c.z, c.w};
    float X[4][3];
    for (int i = 0; i < 4; ++i)
        for (int d = 0; d < 3; ++d) X[i][d] = x[3 * v[i] + d];
    const TetGeometry<float> g = tet_geometry(X);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) Ji[i][j] = g.inverse_jacobian.m[i][j];
    abs_det = fabsf(g.det_jacobian);
}

/// One thread per element block (t, a, b).
__global__ void element_blocks_kernel(const int4* cells, const float* positions, Index num_cells,
                                      int m, LameParameters<float> lame, float* blocks) {
    const std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (s >= static_cast<std::int64_t>(num_cells) * m * m) return;
    const Index t = static_cast<Index>(s / (m * m));
    const int ab = static_cast<int>(s % (m * m));
    float Ji[3][3], abs_det;
    load_inverse_jacobian(cells[t], positions, Ji, abs_det);
    float S[3][3];
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) S[i][j] = c_reference_integrals[ab * 9 + 3 * i + j];
    float out[9];
    linear_elastic_block_from_integrals(S, Ji, abs_det, lame, out);
    for (int k = 0; k < 9; ++k) blocks[9 * s + k] = out[k];
}

// ---- summation ----------------------------------------------------------------------------------

/// Element blocks read from memory in the full layout ((t*m+a)*m+b)*9 + 3r+c.
struct StoredBlocks {
    const float* __restrict__ blocks;
    __device__ void prepare(float*, int) const {}
    __device__ __forceinline__ void add(Index s, float acc[9]) const {
        const float* b = blocks + 9 * static_cast<std::int64_t>(s);
#pragma unroll
        for (int k = 0; k < 9; ++k) acc[k] += __ldg(b + k);
    }
};

/// Element blocks in the upper layout (BlockLayout::Upper): a source names an upper block, or
/// (complemented) the block whose transpose the target takes.
struct UpperBlocks {
    const float* __restrict__ blocks;
    __device__ void prepare(float*, int) const {}
    __device__ __forceinline__ void add(Index s, float acc[9]) const {
        const bool transposed = s < 0;
        const float* b = blocks + 9 * static_cast<std::int64_t>(transposed ? ~s : s);
        float v[9];
#pragma unroll
        for (int k = 0; k < 9; ++k) v[k] = __ldg(b + k);
        if (transposed) {
#pragma unroll
            for (int r = 0; r < 3; ++r)
#pragma unroll
                for (int c = 0; c < 3; ++c) acc[3 * r + c] += v[3 * c + r];
        } else {
#pragma unroll
            for (int k = 0; k < 9; ++k) acc[k] += v[k];
        }
    }
};

/// Linear-elastic element blocks evaluated where they are summed: block (t, a, b) from the
/// cell's inverse Jacobian (recomputed from its 4 vertices, which stay in L2) and the constant
/// reference integral S_ab, staged in shared memory (lanes index different ab, which the
/// constant cache would serialise). No element block array exists in this path.
template <int M> struct LinearBlocks {
    const int4* __restrict__ cells;
    const float* __restrict__ positions;
    const float* __restrict__ integrals; // M*M*9 floats in global memory
    LameParameters<float> lame;
    const float* staged = nullptr; // shared copy of integrals

    __device__ void prepare(float* smem, int) {
        for (int i = threadIdx.x; i < M * M * 9; i += blockDim.x) smem[i] = integrals[i];
        staged = smem;
        __syncthreads();
    }
    __device__ __forceinline__ void add(Index s, float acc[9]) const {
        const Index t = s / (M * M);
        const int ab = s - t * (M * M);
        float Ji[3][3], abs_det;
        load_inverse_jacobian(__ldg(cells + t), positions, Ji, abs_det);
        float S[3][3];
#pragma unroll
        for (int i = 0; i < 3; ++i)
#pragma unroll
            for (int j = 0; j < 3; ++j) S[i][j] = staged[ab * 9 + 3 * i + j];
        float out[9];
        linear_elastic_block_from_integrals(S, Ji, abs_det, lame, out);
#pragma unroll
        for (int k = 0; k < 9; ++k) acc[k] += out[k];
    }
};

/// One lane per row: walk the incident cells, add the row's blocks in memory.
__global__ void sum_per_simplex_kernel(NodeCellsDevice nc, const Index* cell_nodes, int m,
                                       const float* blocks, const Index* bin_offsets,
                                       const Index* columns, const Index* row_counts, Index rows,
                                       Index bins, unsigned int* counter, float* values,
                                       float* diag) {
    for_each_row_cell(nc, counter, bins, rows, [&](Index row, Index t) {
        const Index* nodes = cell_nodes + static_cast<std::int64_t>(t) * m;
        int a = 0;
        while (nodes[a] != row) ++a;
        const float* rb = blocks + (static_cast<std::int64_t>(t) * m + a) * m * 9;
        for (int b = 0; b < m; ++b)
            add_block(bin_offsets, columns, row_counts, rows, row, nodes[b], rb + 9 * b, values,
                      diag);
    });
}

/// Per-simplex summation with each bin's sums in shared memory: a thread block per bin (static
/// grid stride) among the bins of min_width..max_width slots (the launch's class). Lane r of every
/// warp takes row r of the bin; the warps of the block split the row's incident cells (warp w:
/// incidences w, w + 8, ...). An incidence reads the cell's row segment, the blocks (a, 0..M-1),
/// which lie contiguous (36 M bytes, read as float2 pairs of blocks), and adds each block into the
/// bin's sums in shared memory at its slot, found by binary search in the row's columns (the
/// bin's columns are staged in shared memory). The lanes of a warp hold different rows, so their
/// shared atomics never meet and never share a bank. The block then writes the sums in storage
/// order (coalesced), every slot (padding gets zeros), so the matrix needs no reset. The sums
/// hold `chunk` slots per row: a wider bin is summed in passes over its slots j0 <= j < j0 +
/// chunk, each walking the incidences again. Shared memory: 4 (9 * 32 (chunk + 1) + max_width)
/// bytes. Why: the per-entry kernel gathers each 36-byte block on its own, and its DRAM reads were
/// 2.6 times the element blocks and the map (ncu, 1.15M bunny: 1.93 GB for 0.75 GB, 1.07 ms a
/// pass); here each cell row is one run (0.96 GB, 0.67 ms).
template <int M, int kBinThreads, int kMinBlocks>
__global__ void __launch_bounds__(kBinThreads, kMinBlocks)
    sum_per_simplex_bins_kernel(NodeCellsDevice nc, const Index* __restrict__ cell_nodes,
                                const float* __restrict__ blocks,
                                const Index* __restrict__ bin_offsets,
                                const Index* __restrict__ columns,
                                const Index* __restrict__ row_counts, Index rows, Index bins,
                                Index min_width, Index max_width, Index chunk,
                                float* __restrict__ values, float* __restrict__ diag) {
    static_assert(M % 2 == 0, "blocks are read in pairs");
    // p = 1: both pairs of a cell row unrolled, their loads issued together (ncu, 1.15M bunny:
    // 533 -> 510 us); longer rows keep one pair at a time within the register cap
    constexpr int kPairsUnrolled = M == 4 ? 2 : 1;
    extern __shared__ float sums[]; // 9 planes of 32 chunk slots, 9 of 32 diagonals, columns
    __shared__ Index incidences[kWarp], list_begin[kWarp];
    __shared__ const Index* list_of[kWarp];
    __shared__ Index most;
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
    constexpr int kWarps = kBinThreads / kWarp;
    const Index plane = kWarp * chunk;
    float* const diag_sums = sums + 9 * plane;
    Index* const cols = reinterpret_cast<Index*>(diag_sums + 9 * kWarp);
    for (Index bin = blockIdx.x; bin < bins; bin += gridDim.x) {
        const Index begin = __ldg(bin_offsets + bin);
        const Index slots = __ldg(bin_offsets + bin + 1) - begin; // 32 * the bin's width
        if (slots < min_width || slots > max_width) continue;     // the other launch's bin
        for (Index i = threadIdx.x; i < slots; i += kBinThreads)
            cols[i] = __ldg(columns + begin + i);
        if (warp == 0) {
            const Index row = bin * kWarp + lane;
            Index cb = 0, ce = 0;
            const Index* list = nullptr;
            if (row < rows) nc.range(row, cb, ce, list);
            incidences[lane] = ce - cb, list_begin[lane] = cb, list_of[lane] = list;
            Index n = ce - cb;
            for (int o = 16; o > 0; o >>= 1) n = max(n, __shfl_xor_sync(0xffffffffu, n, o));
            if (lane == 0) most = n;
        }
        const Index row = bin * kWarp + lane;
        const Index count = row < rows ? __ldg(row_counts + row) : 0;
        for (Index j0 = 0; j0 == 0 || kWarp * j0 < slots; j0 += chunk) {
            const Index width = min(plane, slots - kWarp * j0); // this pass's slots per plane
            for (Index i = threadIdx.x; i < 9 * (plane + kWarp); i += kBinThreads) sums[i] = 0.f;
            __syncthreads();
            const Index n = incidences[lane];
            for (Index e = warp; e < most; e += kWarps) {
                if (e >= n) continue;
                const Index t = __ldg(list_of[lane] + list_begin[lane] + e);
                Index node[M];
                int a = 0;
#pragma unroll
                for (int b = 0; b < M; ++b) {
                    node[b] = __ldg(cell_nodes + static_cast<std::int64_t>(t) * M + b);
                    if (node[b] == row) a = b;
                }
                // the segment starts 36 M (t M + a) bytes in: 8-byte aligned for even M
                const float2* seg = reinterpret_cast<const float2*>(
                    blocks + (static_cast<std::int64_t>(t) * M + a) * M * 9);
#pragma unroll kPairsUnrolled
                for (int b = 0; b < M; b += 2) {
                    float v[18];
#pragma unroll
                    for (int k = 0; k < 9; ++k) {
                        const float2 p = __ldg(seg + 9 * (b / 2) + k);
                        v[2 * k] = p.x, v[2 * k + 1] = p.y;
                    }
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const Index col = node[b + h];
                        float* dst;
                        Index stride;
                        if (col == row) {
                            if (j0 > 0) continue; // the first pass sums the diagonal
                            dst = diag_sums + lane, stride = kWarp;
                        } else {
                            Index lo = 0, hi = count;
                            while (lo < hi) {
                                const Index mid = (lo + hi) >> 1;
                                if (cols[mid * kWarp + lane] < col)
                                    lo = mid + 1;
                                else
                                    hi = mid;
                            }
                            if (lo < j0 || lo >= j0 + chunk) continue; // another pass's slot
                            dst = sums + (lo - j0) * kWarp + lane, stride = plane;
                        }
#pragma unroll
                        for (int k = 0; k < 9; ++k) atomicAdd(dst + k * stride, v[9 * h + k]);
                    }
                }
            }
            __syncthreads();
            // plane k of the bin holds its slots j * 32 + r; this pass's are one contiguous run
            float* const out = values + 9 * static_cast<std::int64_t>(begin) + kWarp * j0;
            if (width == plane) {
                for (Index i = threadIdx.x; i < 9 * plane; i += kBinThreads)
                    out[(i / plane) * slots + i % plane] = sums[i];
            } else {
                for (Index i = threadIdx.x; i < 9 * width; i += kBinThreads) {
                    const Index k = i / width, s = i - k * width;
                    out[k * slots + s] = sums[k * plane + s];
                }
            }
            if (j0 == 0)
                for (int i = threadIdx.x; i < 9 * kWarp; i += kBinThreads) {
                    const Index r = bin * kWarp + i % kWarp;
                    if (r < rows)
                        diag[static_cast<std::int64_t>(i / kWarp) * rows + r] = diag_sums[i];
                }
            __syncthreads(); // the sums are read before the next pass clears them
        }
    }
}

/// A second stream and its fork and join events, per host thread (the app steps on its own
/// thread): the wide bins' launch of launch_sum_per_simplex_bins runs beside the common one.
struct SideStream {
    cudaStream_t stream = nullptr;
    cudaEvent_t fork = nullptr, join = nullptr;
    SideStream() {
        EDN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        EDN_CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
        EDN_CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    }
    ~SideStream() { cudaEventDestroy(join), cudaEventDestroy(fork), cudaStreamDestroy(stream); }
};

/// The dynamic shared memory a bin block may use: 96 KB, or the device's per-block opt-in limit
/// less 1 KB where that is lower (per device, queried once).
std::size_t shared_budget() {
    thread_local int device = -1;
    thread_local std::size_t budget = 0;
    int current = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&current));
    if (current != device) {
        int optin = 0;
        EDN_CUDA_CHECK(
            cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, current));
        budget = std::min<std::size_t>(96 * 1024,
                                       static_cast<std::size_t>(std::max(optin, 2048)) - 1024);
        device = current;
    }
    return budget;
}

/// Blocks of `kernel` resident per multiprocessor with `threads` threads and `smem` bytes of
/// dynamic shared memory, its shared-memory attribute raised to `budget` on first use: both
/// remembered per (kernel, smem) (host calls of a few microseconds, once per Newton iteration
/// otherwise).
int resident_blocks(const void* kernel, int threads, std::size_t smem, std::size_t budget) {
    struct Entry {
        const void* kernel;
        int threads;
        std::size_t smem;
        int device, per_sm;
    };
    thread_local std::vector<Entry> known;
    int device = 0;
    EDN_CUDA_CHECK(cudaGetDevice(&device));
    for (const Entry& e : known)
        if (e.kernel == kernel && e.threads == threads && e.smem == smem && e.device == device)
            return e.per_sm;
    EDN_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(budget)));
    int per_sm = 0;
    EDN_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    if (known.size() > 64) known.clear();
    known.push_back({kernel, threads, smem, device, per_sm});
    return per_sm;
}

/// Launches sum_per_simplex_bins_kernel for two classes of bins: those of `widths.common` slots
/// or fewer (shared memory for that width), and the wider ones (shared memory for the widest) on
/// a second stream at the same time; each class in one pass where its shared memory fits the
/// budget (shared_budget), else in passes. 1.15M bunny (ncu, which runs kernels one at a time):
/// one launch sized for the widest bin kept the blocks to 43% of the resident warps (0.67 ms;
/// p = 2: 12%); one pass size for all bins (the common width) made the wide bins' passes reread
/// their cells (p = 2: 1.46 -> 1.89 ms); the two classes take 0.54 and 0.18 ms (1024 threads for
/// the wide class: 0.26).
/// False (nothing launched) for a cell with an odd node count, or when the widest bin's columns
/// alone exceed the budget (the row walk sums those).
bool launch_sum_per_simplex_bins(NodeCellsDevice nc, const CellNodesView& cell_nodes,
                                 const float* blocks, BinBcsrMatrixView<float> out,
                                 const BinWidths& widths) {
    const auto rows_of = [](Index slots) {
        return std::max<Index>(1, (slots + kWarp - 1) / kWarp);
    };
    const auto smem_for = [](Index chunk, Index width) {
        return sizeof(float) * (9 * kWarp * static_cast<std::size_t>(chunk + 1) + width);
    };
    // 96 KB, or less where the device's per-block opt-in limit is lower (sm_75: 64 KB)
    const std::size_t budget = shared_budget();
    const auto chunk_for = [&](Index width) { // one pass, unless over the budget
        Index chunk = rows_of(width);
        while (chunk > 1 && smem_for(chunk, width) > budget) chunk = (chunk + 1) / 2;
        return chunk;
    };
    if (smem_for(1, widths.widest) > budget) return false; // the widest bin's columns: row walk
    const Index common = std::min(std::max<Index>(widths.common, 0), widths.widest);
    const BinBcsrPatternView& p = out.pattern;
    // One class: `kernel` over the bins of lo..hi slots with `threads` threads, on `stream`.
    const auto run = [&](auto kernel, int threads, Index lo, Index hi, cudaStream_t stream) {
        const Index chunk = chunk_for(hi);
        const std::size_t smem = smem_for(chunk, hi);
        const int per_sm =
            resident_blocks(reinterpret_cast<const void*>(kernel), threads, smem, budget);
        const Index grid = std::min<Index>(p.num_bins, std::max(per_sm, 1) * multiprocessors());
        kernel<<<grid, threads, smem, stream>>>(nc, cell_nodes.nodes, blocks, p.bin_offsets,
                                                p.columns, p.row_counts, p.num_rows, p.num_bins, lo,
                                                hi, chunk, out.values, out.diag);
    };
    bool launched = false;
    const auto launch = [&]<int M>() {
        launched = true;
        if (widths.widest <= common) {
            run(sum_per_simplex_bins_kernel<M, 256, 5>, 256, 0, common, cudaStreamPerThread);
            return;
        }
        thread_local SideStream side;
        EDN_CUDA_CHECK(cudaEventRecord(side.fork, cudaStreamPerThread));
        EDN_CUDA_CHECK(cudaStreamWaitEvent(side.stream, side.fork));
        run(sum_per_simplex_bins_kernel<M, 256, 5>, 256, common + 1, widths.widest, side.stream);
        run(sum_per_simplex_bins_kernel<M, 256, 5>, 256, 0, common, cudaStreamPerThread);
        EDN_CUDA_CHECK(cudaEventRecord(side.join, side.stream));
        EDN_CUDA_CHECK(cudaStreamWaitEvent(cudaStreamPerThread, side.join));
    };
    switch (cell_nodes.per_cell) {
    case 4:
        launch.template operator()<4>();
        break;
    case 10:
        launch.template operator()<10>();
        break;
    case 20:
        launch.template operator()<20>();
        break;
    default:
        break;
    }
    return launched;
}

/// p = 1: like per-simplex, but the row's element blocks are computed in the kernel.
__global__ void sum_inline_p1_kernel(NodeCellsDevice nc, const int4* cells, const float* positions,
                                     LameParameters<float> lame, const Index* bin_offsets,
                                     const Index* columns, const Index* row_counts, Index rows,
                                     Index bins, unsigned int* counter, float* values,
                                     float* diag) {
    const int lane = threadIdx.x & 31;
    for (Index bin = next_bin(counter, lane); bin < bins; bin = next_bin(counter, lane)) {
        const Index row = bin * kWarp + lane;
        if (row >= rows) continue;
        for (Index e = nc.vertex_offsets[row]; e < nc.vertex_offsets[row + 1]; ++e) {
            const int4 c = cells[nc.vertex_cells[e]];
            const Index v[4] = {c.x, c.y, c.z, c.w};
            float Ji[3][3], abs_det;
            load_inverse_jacobian(c, positions, Ji, abs_det);
            int a = 0;
            while (v[a] != row) ++a;
            for (int b = 0; b < 4; ++b) {
                float S[3][3], out[9];
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j)
                        S[i][j] = c_reference_integrals[(a * 4 + b) * 9 + 3 * i + j];
                linear_elastic_block_from_integrals(S, Ji, abs_det, lame, out);
                add_block(bin_offsets, columns, row_counts, rows, row, v[b], out, values, diag);
            }
        }
    }
}

/// Zeroes the matrix (values of `num_slots` slots, diagonal) and the bin counter.
void zero_for_row_summation(BinBcsrMatrixView<float> out, Index num_slots,
                            unsigned int* bin_counter) {
    EDN_CUDA_CHECK(cudaMemsetAsync(bin_counter, 0, sizeof(unsigned int)));
    EDN_CUDA_CHECK(
        cudaMemsetAsync(out.values, 0, sizeof(float) * 9 * static_cast<std::size_t>(num_slots)));
    EDN_CUDA_CHECK(cudaMemsetAsync(
        out.diag, 0, sizeof(float) * 9 * static_cast<std::size_t>(out.pattern.num_rows)));
}

} // namespace

namespace detail {

void set_reference_integrals(int order, float* S) {
    with_order(order, [&]<int P>() {
        constexpr int n = lagrange_tet_num_nodes(P);
        reference_gradient_integrals<P>(reinterpret_cast<float(*)[n][3][3]>(S));
    });
    const int m = nodes_per_cell(order);
    EDN_CUDA_CHECK(cudaMemcpyToSymbol(c_reference_integrals, S, sizeof(float) * m * m * 9));
}

} // namespace detail

// ---- free functions over device views (sparse/summation.hpp) -----------------------------------

void linear_elastic_element_blocks(const Cell* cells, const float* positions, Index num_cells,
                                   int order, const LameParameters<float>& lame,
                                   float* element_blocks) {
    const int m = nodes_per_cell(order);
    const std::int64_t count = static_cast<std::int64_t>(num_cells) * m * m;
    if (count)
        element_blocks_kernel<<<grid_for(count, 256), 256>>>(
            reinterpret_cast<const int4*>(cells), positions, num_cells, m, lame, element_blocks);
    EDN_CUDA_CHECK_LAUNCH();
}

void sum_per_entry(const PerEntryMapView& map, const float* element_blocks,
                   BinBcsrMatrixView<float> out) {
    launch_sum_per_entry(map, StoredBlocks{element_blocks}, 0, out);
    EDN_CUDA_CHECK_LAUNCH();
}

void sum_per_entry_upper(const PerEntryMapView& map, const float* element_blocks,
                         BinBcsrMatrixView<float> out) {
    launch_sum_per_entry(map, UpperBlocks{element_blocks}, 0, out);
    EDN_CUDA_CHECK_LAUNCH();
}

void sum_per_entry_linear(const PerEntryMapView& map, const Cell* cells, const float* positions,
                          const float* reference_integrals, int order,
                          const LameParameters<float>& lame, BinBcsrMatrixView<float> out) {
    const auto* c = reinterpret_cast<const int4*>(cells);
    switch (nodes_per_cell(order)) {
    case 4:
        launch_sum_per_entry(map, LinearBlocks<4>{c, positions, reference_integrals, lame}, 4, out);
        break;
    case 10:
        launch_sum_per_entry(map, LinearBlocks<10>{c, positions, reference_integrals, lame}, 10,
                             out);
        break;
    default:
        launch_sum_per_entry(map, LinearBlocks<20>{c, positions, reference_integrals, lame}, 20,
                             out);
        break;
    }
    EDN_CUDA_CHECK_LAUNCH();
}

void sum_per_simplex(const NodeCellsView& node_cells, const CellNodesView& cell_nodes,
                     const float* element_blocks, BinBcsrMatrixView<float> out, Index num_slots,
                     unsigned int* bin_counter, const BinWidths& bin_widths) {
    const BinBcsrPatternView& p = out.pattern;
    if (p.num_bins == 0) return;
    if (bin_widths.widest > 0 &&
        launch_sum_per_simplex_bins(detail::node_cells_device(node_cells), cell_nodes,
                                    element_blocks, out, bin_widths)) {
        EDN_CUDA_CHECK_LAUNCH();
        return;
    }
    zero_for_row_summation(out, num_slots, bin_counter);
    sum_per_simplex_kernel<<<persistent_grid(p.num_bins, 128), 128>>>(
        detail::node_cells_device(node_cells), cell_nodes.nodes, cell_nodes.per_cell,
        element_blocks, p.bin_offsets, p.columns, p.row_counts, p.num_rows, p.num_bins, bin_counter,
        out.values, out.diag);
    EDN_CUDA_CHECK_LAUNCH();
}

void sum_inline_linear_p1(const NodeCellsView& node_cells, const Cell* cells,
                          const float* positions, const LameParameters<float>& lame,
                          BinBcsrMatrixView<float> out, Index num_slots,
                          unsigned int* bin_counter) {
    zero_for_row_summation(out, num_slots, bin_counter);
    const BinBcsrPatternView& p = out.pattern;
    if (p.num_bins)
        sum_inline_p1_kernel<<<persistent_grid(p.num_bins, 128), 128>>>(
            detail::node_cells_device(node_cells), reinterpret_cast<const int4*>(cells), positions,
            lame, p.bin_offsets, p.columns, p.row_counts, p.num_rows, p.num_bins, bin_counter,
            out.values, out.diag);
    EDN_CUDA_CHECK_LAUNCH();
}

// ---- Assembly: element blocks and summation on its own buffers ---------------------------------

void Assembly::Impl::materialize_linear_blocks() {
    set_block_layout(BlockLayout::Full);
    ensure_blocks_allocated();
    linear_elastic_element_blocks(reinterpret_cast<const Cell*>(topo.cells.data()),
                                  positions.data(), num_cells, layout.order, linear_lame,
                                  blocks.data());
    blocks_hold_linear = true;
}

void Assembly::compute_element_blocks(const LameParameters<float>& lame) {
    // Linear elasticity needs no stored blocks: the per-entry summation evaluates each block from
    // the cell geometry where it is summed (so the element array, 5.6x the matrix at p = 1, is
    // never allocated). Per-simplex summation materialises them on first use.
    Impl& d = *impl_;
    d.set_block_layout(BlockLayout::Full); // (the linear blocks read the full numbering)
    d.source = Impl::BlockSource::Linear;
    d.linear_lame = lame;
    d.blocks_hold_linear = false;
    d.times.element = 0;
}

unsigned int* Assembly::prepare_row_summation() {
    Impl& d = *impl_;
    zero_for_row_summation(device_matrix(), d.num_slots, d.counter.data());
    return d.counter.data();
}

void Assembly::sum(SummationMethod method, const LameParameters<float>& lame) {
    Impl& d = *impl_;
    const Cell* cells = reinterpret_cast<const Cell*>(d.topo.cells.data());
    detail::StageTimer timer;
    timer.start();
    switch (method) {
    case SummationMethod::PerEntry:
        EDN_VERIFY(d.map_sources.size() || d.num_cells == 0, ErrorCode::Usage,
                   "per-entry summation needs build_per_entry_map() first");
        if (d.source == Impl::BlockSource::Linear) {
            sum_per_entry_linear(d.map_view(), cells, d.positions.data(), d.integrals.data(),
                                 d.layout.order, d.linear_lame, device_matrix());
        } else {
            EDN_VERIFY(d.blocks.size() || d.num_cells == 0 || d.bins == 0, ErrorCode::Usage,
                       "per-entry summation needs element blocks (compute_element_blocks() "
                       "or device_element_blocks())");
            if (d.block_layout == BlockLayout::Upper)
                sum_per_entry_upper(d.map_view(), d.blocks.data(), device_matrix());
            else
                sum_per_entry(d.map_view(), d.blocks.data(), device_matrix());
        }
        break;
    case SummationMethod::PerSimplex:
        EDN_VERIFY(d.source == Impl::BlockSource::Linear || d.block_layout == BlockLayout::Full,
                   ErrorCode::Usage, "per-simplex summation reads element blocks in the full layout");
        if (d.source == Impl::BlockSource::Linear && !d.blocks_hold_linear)
            d.materialize_linear_blocks();
        // reproducible: the row walk's fixed order (the bin sums' shared atomics vary)
        sum_per_simplex(device_node_cells(), device_cell_nodes(), d.blocks.data(), device_matrix(),
                        d.num_slots, d.counter.data(),
                        d.reproducible_maps ? BinWidths{} : d.bin_widths());
        break;
    case SummationMethod::Auto:
        EDN_VERIFY(false, ErrorCode::Usage,
                   "Assembly::sum takes a resolved summation method (summation_in_use)");
    case SummationMethod::Inline:
        EDN_VERIFY(d.layout.order == 1, ErrorCode::Unsupported,
                   "Assembly::sum inline computes linear p = 1 blocks only (other materials and "
                   "orders: the simulation's inline kernel)");
        sum_inline_linear_p1(device_node_cells(), cells, d.positions.data(), lame, device_matrix(),
                             d.num_slots, d.counter.data());
        break;
    }
    EDN_CUDA_CHECK_LAUNCH();
    d.times.summation = timer.stop();
}

} // namespace edn::cuda
