// CUDA Bin-BCSR* assembly compared with the CPU reference on the same input (skipped without a
// device).
#include "core/device.hpp"
#include "core/error.hpp"
#include "cuda/cuda_assembly.hpp"
#include "cuda/cuda_pcg.hpp"
#include "cuda/cuda_two_level.hpp"
#include "sparse/spmv.hpp"
#include "support/assembly_fixture.hpp"
#include "support/backend.hpp"
#include "support/compare.hpp"
#include "support/stage_meshes.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <string>

namespace edn {
namespace {

using test::AssemblyFixture;
using test::max_abs;

class CudaAssemblyTest : public test::CudaOrderTest {};

TEST_P(CudaAssemblyTest, PatternMapsSummationAndSpmvEqualCpu) {
    const int order = GetParam();
    const auto lame_d = lame_from_young_poisson(1000.0, 0.3);
    const LameParameters<float> lame_f{static_cast<float>(lame_d.lambda),
                                       static_cast<float>(lame_d.mu)};
    for (const TetMesh& mesh : test::stage_meshes(order)) {
        AssemblyFixture f(mesh, order);
        cuda::Assembly gpu(f.mesh, f.topology, order);
        gpu.build_pattern();
        const BinBcsrPattern p = gpu.download_pattern();
        // Pattern: identical arrays (counts, bins, sorted columns, padding).
        ASSERT_EQ(p.num_rows, f.pattern.num_rows);
        EXPECT_EQ(p.row_counts, f.pattern.row_counts);
        EXPECT_EQ(p.bin_offsets, f.pattern.bin_offsets);
        EXPECT_EQ(p.columns, f.pattern.columns);

        // Per-entry map: same offsets, same source sets per target.
        gpu.build_per_entry_map();
        PerEntryMap gmap = gpu.download_per_entry_map();
        const PerEntryMap cmap = cpu::build_per_entry_map(f.pattern, f.cell_nodes_view());
        EXPECT_EQ(gmap.offsets, cmap.offsets);
        for (std::size_t t = 0; t + 1 < gmap.offsets.size(); ++t)
            std::sort(gmap.sources.begin() + gmap.offsets[t],
                      gmap.sources.begin() + gmap.offsets[t + 1]);
        EXPECT_EQ(gmap.sources, cmap.sources);
        // Reproducible maps: every target's sources come out sorted (as the CPU map's, which is
        // filled in source order), so the device map equals the host map as it is.
        gpu.set_reproducible_maps(true);
        gpu.build_per_entry_map();
        const PerEntryMap sorted = gpu.download_per_entry_map();
        EXPECT_EQ(sorted.offsets, cmap.offsets);
        EXPECT_EQ(sorted.sources, cmap.sources);
        gpu.set_reproducible_maps(false);
        gpu.build_per_entry_map();

        // Reference matrix in double.
        BinBcsrMatrix<double> ref(f.pattern);
        cpu::sum_per_entry(cmap.view(), f.element_blocks.data(), ref.view());
        const double scale = std::max(max_abs(ref.values), max_abs(ref.diag));

        gpu.compute_element_blocks(lame_f);
        std::vector<SummationMethod> methods = {SummationMethod::PerEntry,
                                                SummationMethod::PerSimplex};
        if (order == 1) methods.push_back(SummationMethod::Inline);
        const auto expect_reference = [&](const std::string& what) {
            const BinBcsrMatrix<float> k = gpu.download_matrix(p);
            double err = 0;
            for (std::size_t i = 0; i < k.values.size(); ++i)
                err = std::max(err, std::abs(k.values[i] - ref.values[i]));
            for (std::size_t i = 0; i < k.diag.size(); ++i)
                err = std::max(err, std::abs(k.diag[i] - ref.diag[i]));
            EXPECT_LT(err, 1e-5 * scale) << what << " order " << order;
        };
        for (SummationMethod method : methods) {
            // From a zeroed matrix (a slot left unwritten fails) and again over the sums (a
            // kernel that adds instead of writing fails).
            gpu.prepare_row_summation();
            for (int pass = 0; pass < 2; ++pass) {
                gpu.sum(method, lame_f);
                expect_reference(std::string(summation_method_name(method)) + " pass " +
                                 std::to_string(pass));
            }
        }
        // Per-simplex by Listing 1's row walk: the fallback for bins too wide for shared memory.
        unsigned int* counter = gpu.prepare_row_summation();
        cuda::sum_per_simplex(gpu.device_node_cells(), gpu.device_cell_nodes(),
                              gpu.device_element_blocks(), gpu.device_matrix(), p.num_slots(),
                              counter, /*bin_widths=*/{});
        expect_reference("per_simplex (row walk)");

        // SpMV on the last assembled matrix against the CPU product of the reference.
        const Index n = f.layout.num_nodes();
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> dist(-1, 1);
        std::vector<float> x(3 * n);
        for (float& v : x) v = dist(rng);
        const std::vector<float> y = gpu.spmv(x);
        std::vector<double> xd(x.begin(), x.end()), yd(3 * n);
        cpu::spmv(ref.view(), xd.data(), yd.data());
        const double yscale = max_abs(yd);
        double err = 0;
        for (Index i = 0; i < 3 * n; ++i) err = std::max(err, std::abs(y[i] - yd[i]));
        EXPECT_LT(err, 1e-5 * yscale * 10) << "spmv order " << order;
        // Every warps-per-bin and load-policy variant of the product gives the same result.
        for (int warps : {1, 2, 4, 8})
            for (bool streaming : {false, true}) {
                const std::vector<float> yk = gpu.spmv(x, cuda::SpmvKernel{warps, streaming});
                double e = 0;
                for (Index i = 0; i < 3 * n; ++i) e = std::max(e, std::abs(yk[i] - yd[i]));
                EXPECT_LT(e, 1e-5 * yscale * 10)
                    << "spmv order " << order << " warps " << warps << " streaming " << streaming;
            }

        // Exact allocation: the matrix holds exactly 9*(slots+rows) floats.
        EXPECT_EQ(gpu.matrix_bytes(), f.pattern.matrix_bytes(sizeof(float)));
    }
}

TEST_P(CudaAssemblyTest, GpuTopologyAndPatternEqualCpu) {
    const int order = GetParam();
    for (const TetMesh& mesh : test::stage_meshes(order)) {
        AssemblyFixture f(mesh, order);
        cuda::Assembly gpu(f.mesh, order); // topology built on the device
        const Topology t = gpu.download_topology();
        EXPECT_EQ(t.edges, f.topology.edges);
        EXPECT_EQ(t.faces, f.topology.faces);
        EXPECT_EQ(t.face_edges, f.topology.face_edges);
        EXPECT_EQ(t.cell_edges, f.topology.cell_edges);
        EXPECT_EQ(t.cell_faces, f.topology.cell_faces);
        EXPECT_EQ(t.vertex_cells.offsets, f.topology.vertex_cells.offsets);
        EXPECT_EQ(t.vertex_cells.indices, f.topology.vertex_cells.indices);
        EXPECT_EQ(t.edge_cells.offsets, f.topology.edge_cells.offsets);
        EXPECT_EQ(t.edge_cells.indices, f.topology.edge_cells.indices);
        EXPECT_EQ(t.face_cells.offsets, f.topology.face_cells.offsets);
        EXPECT_EQ(t.face_cells.indices, f.topology.face_cells.indices);
        // The node slot order: built on the device for the nodes the order has.
        if (order >= 2) {
            EXPECT_EQ(t.edge_at, f.topology.edge_at);
            EXPECT_EQ(t.edge_slot, f.topology.edge_slot);
        } else {
            EXPECT_TRUE(t.edge_at.empty());
        }
        if (order >= 3) {
            EXPECT_EQ(t.face_at, f.topology.face_at);
            EXPECT_EQ(t.face_slot, f.topology.face_slot);
        } else {
            EXPECT_TRUE(t.face_at.empty());
        }
        gpu.build_pattern();
        const BinBcsrPattern p = gpu.download_pattern();
        EXPECT_EQ(p.row_counts, f.pattern.row_counts);
        EXPECT_EQ(p.bin_offsets, f.pattern.bin_offsets);
        EXPECT_EQ(p.columns, f.pattern.columns);
        // Peak device memory stays within 1.1x of what the assembly keeps.
        gpu.build_per_entry_map();
        gpu.compute_element_blocks({1.f, 1.f});
        const double kept =
            gpu.matrix_bytes() + gpu.map_bytes() + gpu.mesh_bytes() + gpu.element_bytes();
        // CUB scratch is a fixed few KiB: allowed on top for these tiny meshes.
        EXPECT_LE(gpu.peak_bytes(), 1.1 * kept + 65536) << "order " << order;
    }
}

INSTANTIATE_TEST_SUITE_P(Orders, CudaAssemblyTest, ::testing::Values(1, 2, 3));

/// Runs `f` and expects edn::Error(ErrorCode::Unsupported).
template <class F> void expect_unsupported(F&& f, const char* what) {
    try {
        f();
        ADD_FAILURE() << what << " did not throw";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::Unsupported) << what;
    }
}

TEST(CudaWithoutCuda, EveryEntryPointThrowsUnsupported) {
    // A build without CUDA links the whole CUDA API (its members throw from their declarations,
    // cuda/cuda_only.hpp) and says clearly that CUDA is missing.
    if (built_with_cuda()) GTEST_SKIP() << "built with CUDA";
    AssemblyFixture f(test::make_single_tet(), 2);
    expect_unsupported([&] { cuda::Assembly a(f.mesh, f.topology, 1); }, "Assembly");
    expect_unsupported([&] { cuda::Assembly a(f.mesh, 1); }, "Assembly (device topology)");
    expect_unsupported([&] { cuda::Pcg p(4); }, "Pcg");
    expect_unsupported([&] { cuda::UpperMatrix u; }, "UpperMatrix");
    BinBcsrMatrix<float> k(f.pattern);
    expect_unsupported([&] { cuda::DeviceMatrix d(k); }, "DeviceMatrix");
    expect_unsupported([&] { cuda::CoarseLevel c(f.mesh, f.topology, f.layout); }, "CoarseLevel");
    expect_unsupported([&] { cuda::spmv(k.view(), nullptr, nullptr); }, "cuda::spmv");
    expect_unsupported([&] { cuda::device_synchronize(); }, "device_synchronize");
    // The stage functions, declared beside their CPU twins.
    expect_unsupported([&] { cuda::vertex_cell_counts(f.mesh.cells, 4); }, "vertex_cell_counts");
    expect_unsupported([&] { cuda::bin_bcsr_row_counts({}, f.layout, nullptr); },
                       "bin_bcsr_row_counts");
    expect_unsupported([&] { cuda::bin_bcsr_bin_offsets(nullptr, 0, nullptr); },
                       "bin_bcsr_bin_offsets");
    expect_unsupported(
        [&] { cuda::fill_bin_bcsr_columns({}, nullptr, f.layout, {}, nullptr, nullptr); },
        "fill_bin_bcsr_columns");
    expect_unsupported(
        [&] { cuda::build_per_entry_map({}, f.cell_nodes_view(), 0, nullptr, nullptr); },
        "build_per_entry_map");
}

} // namespace
} // namespace edn
