// CUDA twin of the multigrid re-value and cycle (cuda/cuda_multigrid.hpp) against the CPU
// reference (solver/multigrid.hpp) on the same hierarchy: lambda_max, prolongator and coarse
// operator values, and the V-cycle's output, at p = 1 (smoothed aggregation) and p = 2 (p-multigrid
// first). Skipped without a device.
#include "cuda/cuda_multigrid.hpp"
#include "cuda/cuda_pcg.hpp"
#include "mesh/node_layout.hpp"
#include "sim/simulation.hpp"
#include "solver/multigrid.hpp"
#include "solver/two_level.hpp"
#include "sparse/bin_bcsr_pattern.hpp"
#include "support/backend.hpp"
#include "support/compare.hpp"
#include "support/device_arrays.hpp"
#if defined(EDN_WITH_CUDA) && EDN_WITH_CUDA
#include "cuda/multigrid_nullspace.cuh"
#endif
#include "support/linear_system.hpp"
#include "support/random.hpp"

#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <utility>

namespace edn {
namespace {

class CudaMultigrid : public test::CudaOrderTest {};

double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b, double& scale) {
    double err = 0;
    scale = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        err = std::max(err, std::abs(double(a[i]) - b[i]));
        scale = std::max(scale, std::abs(b[i]));
    }
    return err;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b, double& scale) {
    return max_abs_diff(a, std::vector<double>(b.begin(), b.end()), scale);
}

// A random right-hand side (from `seed`), zero on the pinned rows, in float.
std::vector<float> pinned_rhs(const test::LinearSystem& s, const std::vector<std::uint8_t>& fixed,
                              unsigned seed) {
    std::vector<double> bd = test::random_vector(s.dofs(), seed);
    for (Index i = 0; i < s.rows(); ++i)
        if (fixed[i]) bd[3 * i] = bd[3 * i + 1] = bd[3 * i + 2] = 0;
    return {bd.begin(), bd.end()};
}

// The CPU hierarchy of s pinned at `fixed`: smoothed aggregation (p = 1) or p-multigrid first,
// several levels even on small meshes.
MultigridHierarchy make_hierarchy(const test::LinearSystem& s, int order,
                                  const std::vector<std::uint8_t>& fixed) {
    MultigridSettings settings;
    settings.coarsest_dofs = 60;
    if (order == 1) {
        std::vector<double> positions;
        for (const Vec3& x : s.f->mesh.positions)
            for (int a = 0; a < 3; ++a) positions.push_back(x[a]);
        return cpu::build_multigrid(s.f->pattern, positions.data(), fixed.data(), settings);
    }
    const CoarseSpace space = make_coarse_space(s.f->mesh, s.f->topology, s.f->layout);
    const GivenTransfer t = p1_transfer(space, s.f->mesh, fixed.data());
    return cpu::build_multigrid(s.f->pattern, nullptr, fixed.data(), settings, &t);
}

// Every kernel width (lanes per transfer and Galerkin sum, warps per bin of the coarse products,
// negative: the kernel whose lanes form whole rows; 0 = chosen per level) gives the CPU's values
// and cycle.
TEST_P(CudaMultigrid, RevalueAndCycleEqualCpu) {
    const int order = GetParam();
    struct Case {
        int k, lanes, warps;
    };
    // k = 11: long coarse sums; k = 7 with every forced width
    const Case cases[] = {{4, 0, 0},  {7, 0, 0},   {11, 0, 0},   {7, 1, 1},
                          {7, 8, 4},  {7, 32, 16}, {7, 256, 32}, {7, 8, 8},
                          {7, 1, -1}, {7, 8, -2},  {7, 32, -8},  {7, 8, -32}};
    for (const Case& cs : cases) {
        SCOPED_TRACE("k " + std::to_string(cs.k) + " lanes " + std::to_string(cs.lanes) +
                     " warps " + std::to_string(cs.warps));
        const int k = cs.k;
        test::LinearSystem s(test::make_random_perturbed_box(k, k, 2 * k, 0.5, 0.5, 1.0, 0.1, 3),
                             order, 1e-3);
        const std::vector<std::uint8_t> fixed = s.bottom_nodes();
        MultigridHierarchy h = make_hierarchy(s, order, fixed);
        ASSERT_GE(h.num_levels(), 3);
        cuda::Multigrid gpu(h, cs.lanes, cs.warps);
        cpu::revalue_multigrid(h, s.a.view());
        const cuda::DeviceMatrix a(s.af);
        gpu.revalue(a.view());
        ASSERT_EQ(gpu.num_levels(), h.num_levels());
        for (std::size_t l = 0; l < h.levels.size(); ++l) {
            EXPECT_NEAR(gpu.lambda_max(int(l)), h.levels[l].lambda_max,
                        1e-3 * h.levels[l].lambda_max)
                << "level " << l;
            double scale = 0;
            const double p_err = max_abs_diff(gpu.download_prolongator(int(l)),
                                              h.levels[l].prolongator.values, scale);
            EXPECT_LT(p_err, 1e-4 * scale) << "level " << l;
            std::vector<double> c = h.coarse[l].values;
            c.insert(c.end(), h.coarse[l].diag.begin(), h.coarse[l].diag.end());
            const double c_err = max_abs_diff(gpu.download_coarse(int(l)), c, scale);
            EXPECT_LT(c_err, 1e-4 * scale) << "level " << l;
        }
        // the cycle on a random residual (zero on pinned nodes)
        std::vector<double> r = test::random_vector(s.dofs(), 17);
        for (Index i = 0; i < s.rows(); ++i)
            if (fixed[i]) r[3 * i] = r[3 * i + 1] = r[3 * i + 2] = 0;
        std::vector<double> z(r.size());
        cpu::apply_multigrid(h, s.a.view(), r.data(), z.data());
        const std::vector<float> zf = gpu.apply(a.view(), std::vector<float>(r.begin(), r.end()));
        EXPECT_LT(test::relative_error(zf, z), 2e-3) << "k " << k;
        for (Index i = 0; i < s.rows(); ++i)
            if (fixed[i]) {
                EXPECT_EQ(zf[3 * i], 0.0f);
            }
    }
}

// The tentative prolongators recomputed on the device at deformed positions (rest + a rotation
// and jitter, as displacements) equal the CPU's (cpu::retentative_multigrid) to float rounding,
// on every level, and so do the re-valued prolongators and coarse operators.
TEST_P(CudaMultigrid, TentativeAtCurrentPositionsEqualsCpu) {
#if defined(EDN_WITH_CUDA) && EDN_WITH_CUDA
    const int order = GetParam();
    test::LinearSystem s(test::make_random_perturbed_box(7, 7, 14, 0.5, 0.5, 1.0, 0.1, 3), order,
                         1e-3);
    const std::vector<std::uint8_t> fixed = s.bottom_nodes();
    MultigridHierarchy h = make_hierarchy(s, order, fixed);
    ASSERT_GE(h.num_levels(), 3);
    cuda::Multigrid gpu(h);
    // positions of every fine node (the vertices first); displacements rotate them by 0.9 rad
    // about z and jitter them
    const Index n = s.rows();
    std::vector<double> rest(3 * static_cast<std::size_t>(n), 0.0), displacement(rest.size());
    for (std::size_t v = 0; v < s.f->mesh.positions.size(); ++v)
        for (int a = 0; a < 3; ++a) rest[3 * v + a] = s.f->mesh.positions[v][a];
    const std::vector<double> noise = test::random_vector(rest.size(), 29, -0.02, 0.02);
    const double c = std::cos(0.9), sn = std::sin(0.9);
    std::vector<double> current(rest.size());
    for (Index i = 0; i < n; ++i) {
        const double* x = rest.data() + 3 * i;
        current[3 * i] = c * x[0] - sn * x[1] + noise[3 * i];
        current[3 * i + 1] = sn * x[0] + c * x[1] + noise[3 * i + 1];
        current[3 * i + 2] = x[2] + 0.1 + noise[3 * i + 2];
        for (int a = 0; a < 3; ++a) displacement[3 * i + a] = current[3 * i + a] - x[a];
    }
    const cuda::DeviceBuffer<double> rest_d = test::to_device(rest);
    const cuda::DeviceBuffer<double> displacement_d = test::to_device(displacement);
    const std::vector<float> before = gpu.download_tentative(int(h.levels.size()) - 1);
    cpu::retentative_multigrid(h, current.data());
    gpu.retentative(rest_d.data(), displacement_d.data());
    for (std::size_t l = order > 1 ? 1 : 0; l < h.levels.size(); ++l) {
        double scale = 0;
        const double err =
            max_abs_diff(gpu.download_tentative(int(l)), h.levels[l].tentative, scale);
        EXPECT_LT(err, 1e-5 * scale) << "level " << l;
    }
    // the last level changed (the modes reached every level)
    double scale = 0;
    EXPECT_GT(max_abs_diff(before, h.levels.back().tentative, scale), 1e-3 * scale);
    cpu::revalue_multigrid(h, s.a.view());
    const cuda::DeviceMatrix a(s.af);
    gpu.revalue(a.view());
    for (std::size_t l = 0; l < h.levels.size(); ++l) {
        const double p_err =
            max_abs_diff(gpu.download_prolongator(int(l)), h.levels[l].prolongator.values, scale);
        EXPECT_LT(p_err, 1e-4 * scale) << "level " << l;
        std::vector<double> cv = h.coarse[l].values;
        cv.insert(cv.end(), h.coarse[l].diag.begin(), h.coarse[l].diag.end());
        const double c_err = max_abs_diff(gpu.download_coarse(int(l)), cv, scale);
        EXPECT_LT(c_err, 1e-4 * scale) << "level " << l;
    }
#endif
}

// Aggregates too large for the default 48 KB of shared memory (1,350 and 600 rows of 6 modes:
// the opt-in limit, several warps per aggregate) and tiny ones (one warp): the device's T and
// the coarse level's T built on its R equal cpu::retentative_multigrid's to float rounding.
TEST(CudaMultigridNullspace, LargeAndSmallAggregatesEqualCpu) {
#if defined(EDN_WITH_CUDA) && EDN_WITH_CUDA
    if (!test::has_cuda_device()) GTEST_SKIP() << "no CUDA device";
    MultigridHierarchy h;
    h.settings.modes = 6;
    const Index n = 700;
    MultigridLevel fine; // aggregates 0 (450 nodes), 1 (200 nodes), then 2..11 of 5 nodes each
    fine.num_nodes = n;
    fine.block = 3;
    fine.coarse_nodes = 12;
    for (Index i = 0; i < n; ++i)
        fine.aggregate.push_back(i < 450 ? 0 : i < 650 ? 1 : 2 + (i - 650) / 5);
    MultigridLevel coarse; // one aggregate of the 12 coarse nodes
    coarse.num_nodes = 12;
    coarse.block = 6;
    coarse.coarse_nodes = 1;
    coarse.aggregate.assign(12, 0);
    h.levels = {fine, coarse};
    const std::vector<double> rest = test::random_vector(3 * std::size_t(n), 41, -1.0, 1.0);
    const std::vector<double> moved = test::random_vector(rest.size(), 43, -0.1, 0.1);
    std::vector<double> current(rest.size());
    for (std::size_t k = 0; k < rest.size(); ++k) current[k] = rest[k] + moved[k];
    cpu::retentative_multigrid(h, current.data());
    cuda::MultigridNullspace nullspace(h);
    const cuda::DeviceBuffer<double> rest_d = test::to_device(rest),
                                     moved_d = test::to_device(moved);
    std::vector<cuda::DeviceBuffer<float>> t;
    std::vector<float*> out;
    for (const MultigridLevel& level : h.levels) {
        t.emplace_back(level.tentative.size());
        out.push_back(t.back().data());
    }
    nullspace.recompute(rest_d.data(), moved_d.data(), out, nullptr);
    for (std::size_t l = 0; l < h.levels.size(); ++l) {
        std::vector<float> got(h.levels[l].tentative.size());
        EDN_CUDA_CHECK(cudaMemcpy(got.data(), t[l].data(), got.size() * sizeof(float),
                                  cudaMemcpyDeviceToHost));
        double scale = 0;
        const double err = max_abs_diff(got, h.levels[l].tentative, scale);
        EXPECT_LT(err, 1e-5 * scale) << "level " << l;
        EXPECT_GT(scale, 0.1) << "level " << l;
    }
#else
    GTEST_SKIP() << "no CUDA";
#endif
}

#if defined(EDN_WITH_CUDA) && EDN_WITH_CUDA
// a == b, or the first difference (sizes, index, values) in the failure message.
void expect_same(const std::vector<Index>& a, const std::vector<Index>& b, const char* name) {
    std::size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    if (i == a.size() && i == b.size()) return;
    ADD_FAILURE() << name << ": sizes " << a.size() << " and " << b.size()
                  << ", first difference at " << i << ": "
                  << (i < a.size() ? std::to_string(a[i]) : "-") << " against "
                  << (i < b.size() ? std::to_string(b[i]) : "-");
}
#endif

// The hierarchy built on the device (cuda::Multigrid::build: its small levels on the host, or
// with EDN_MULTIGRID_SMALL_LEVELS=device every level but their aggregation on the device) has
// cpu::build_multigrid's aggregates, patterns and maps (the default, greedy aggregation) bit for
// bit on every level; its tentative prolongators (from the rest positions, on the device) and
// its re-valued operators and cycle equal the CPU's to float rounding; pinned and unpinned, on
// boxes whose coarse levels have long and short rows. At p = 2 and 3 (instance p2) level 0 is
// p-multigrid's given P1 transfer (its P values too) and the aggregation starts below it. With
// every node pinned there is no level to build: null (the caller builds on the host).
TEST_P(CudaMultigrid, DeviceBuildEqualsCpu) {
#if defined(EDN_WITH_CUDA) && EDN_WITH_CUDA
    const std::vector<int> orders = GetParam() == 1 ? std::vector<int>{1} : std::vector<int>{2, 3};
    for (const int order : orders)
        for (const int k : order == 3 ? std::vector<int>{3, 5} : std::vector<int>{4, 7, 11})
            for (const bool pinned : {true, false}) {
                SCOPED_TRACE("p " + std::to_string(order) + " k " + std::to_string(k) +
                             (pinned ? " pinned" : " free"));
                test::LinearSystem s(
                    test::make_random_perturbed_box(k, k + 1, 2 * k, 0.5, 0.5, 1.0, 0.1, 3 + k),
                    order, 1e-3);
                const std::vector<std::uint8_t> fixed =
                    pinned ? s.bottom_nodes() : std::vector<std::uint8_t>(s.rows(), 0);
                MultigridSettings settings;
                settings.coarsest_dofs = 60;
                std::vector<double> positions;
                for (const Vec3& x : s.f->mesh.positions)
                    for (int a = 0; a < 3; ++a) positions.push_back(x[a]);
                MultigridHierarchy h = make_hierarchy(s, order, fixed);
                ASSERT_GE(h.num_levels(), 3);
                const cuda::DeviceMatrix a(s.af);
                const cuda::DeviceBuffer<std::uint8_t> fixed_d = test::to_device(fixed);
                const cuda::DeviceBuffer<double> rest_d = test::to_device(positions);
                const CoarseSpace space =
                    order > 1 ? make_coarse_space(s.f->mesh, s.f->topology, s.f->layout, false)
                              : CoarseSpace{};
                const cuda::DeviceBuffer<Index> vertex_d = test::to_device(space.pro_vertex);
                const cuda::DeviceBuffer<double> weight_d = test::to_device(space.pro_weight);
                const cuda::DeviceTransfer p1{space.num_vertices, vertex_d.data(), weight_d.data()};
                // The small levels built on the host (the default) and on the device; k = 7:
                // the aggregation's rounds as separate kernels too (the path of devices without
                // cooperative launches), the same hierarchy
                for (const int variant :
                     k == 7 ? std::vector<int>{0, 1, 2} : std::vector<int>{0, 1}) {
                    if (variant == 1) setenv("EDN_MULTIGRID_SMALL_LEVELS", "device", 1);
                    if (variant == 2) setenv("EDN_MULTIGRID_ROUNDS", "kernels", 1);
                    std::unique_ptr<cuda::Multigrid> gpu =
                        cuda::Multigrid::build(a.view().pattern, fixed, fixed_d.data(),
                                               rest_d.data(), settings, order > 1 ? &p1 : nullptr);
                    unsetenv("EDN_MULTIGRID_SMALL_LEVELS");
                    unsetenv("EDN_MULTIGRID_ROUNDS");
                    SCOPED_TRACE(variant == 0   ? "small levels on the host"
                                 : variant == 1 ? "small levels on the device"
                                                : "rounds as kernels");
                    ASSERT_TRUE(gpu);
                    if (order > 1) { // the given P's values
                        double scale = 0;
                        const double p_err = max_abs_diff(gpu->download_prolongator(0),
                                                          h.levels[0].prolongator.values, scale);
                        EXPECT_LE(p_err, 1e-7 * scale); // (float weights)
                        EXPECT_EQ(h.levels[0].prolongator.values.size(),
                                  gpu->download_prolongator(0).size());
                    }
                    ASSERT_EQ(gpu->num_levels(), h.num_levels());
                    for (std::size_t l = 0; l < h.levels.size(); ++l) {
                        SCOPED_TRACE("level " + std::to_string(l));
                        const MultigridLevel& c = h.levels[l];
                        const cuda::SymbolicLevel d = gpu->download_symbolic(int(l));
                        expect_same(d.aggregate, c.aggregate, "d.aggregate");
                        expect_same(d.p_offsets, c.prolongator.offsets, "d.p_offsets");
                        expect_same(d.p_columns, c.prolongator.columns, "d.p_columns");
                        // the smoothing map, inverted: per P block its entries, ascending
                        std::vector<Index> smooth_offsets(c.prolongator.columns.size() + 1, 0),
                            smooth_entries;
                        for (Index t : c.smooth_target)
                            if (t >= 0) ++smooth_offsets[t + 1];
                        for (std::size_t t = 1; t < smooth_offsets.size(); ++t)
                            smooth_offsets[t] += smooth_offsets[t - 1];
                        smooth_entries.resize(smooth_offsets.back());
                        std::vector<Index> next(smooth_offsets.begin(), smooth_offsets.end() - 1);
                        for (std::size_t e = 0; e < c.smooth_target.size(); ++e)
                            if (c.smooth_target[e] >= 0)
                                smooth_entries[next[c.smooth_target[e]]++] = Index(e);
                        expect_same(d.smooth_offsets, smooth_offsets, "d.smooth_offsets");
                        expect_same(d.smooth_entries, smooth_entries, "d.smooth_entries");
                        expect_same(d.pair_offsets, c.product_offsets, "d.pair_offsets");
                        expect_same(d.pair_entry, c.product_entry, "d.pair_entry");
                        expect_same(d.pair_p, c.product_p, "d.pair_p");
                        expect_same(d.r_offsets, c.restriction_offsets, "d.r_offsets");
                        expect_same(d.r_blocks, c.restriction_blocks, "d.r_blocks");
                        expect_same(d.r_rows, c.restriction_rows, "d.r_rows");
                        expect_same(d.g_offsets, c.galerkin_offsets, "d.g_offsets");
                        expect_same(d.g_p, c.galerkin_p, "d.g_p");
                        expect_same(d.g_ap, c.galerkin_ap, "d.g_ap");
                        expect_same(d.g_mirror, c.galerkin_mirror, "d.g_mirror");
                        const Index c_slots = h.coarse[l].pattern.num_slots();
                        std::vector<Index> g_entries;
                        for (Index e = 0; e + 1 < Index(c.galerkin_offsets.size()); ++e)
                            if (e >= c_slots || c.galerkin_offsets[e + 1] > c.galerkin_offsets[e])
                                g_entries.push_back(e);
                        expect_same(d.g_entries, g_entries, "d.g_entries");
                        const BinBcsrPattern& cp = h.coarse[l].pattern;
                        expect_same(d.coarse.bin_offsets, cp.bin_offsets, "coarse bin offsets");
                        expect_same(d.coarse.row_counts, cp.row_counts, "coarse row counts");
                        expect_same(d.coarse.columns, cp.columns, "coarse columns");
                        double scale = 0;
                        const double t_err =
                            max_abs_diff(gpu->download_tentative(int(l)), c.tentative, scale);
                        EXPECT_LE(t_err, 1e-5 * scale); // (0 = 0 for a given level: no T)
                    }
                    cpu::revalue_multigrid(h, s.a.view());
                    gpu->revalue(a.view());
                    for (std::size_t l = 0; l < h.levels.size(); ++l) {
                        double scale = 0;
                        std::vector<double> cv = h.coarse[l].values;
                        cv.insert(cv.end(), h.coarse[l].diag.begin(), h.coarse[l].diag.end());
                        const double err = max_abs_diff(gpu->download_coarse(int(l)), cv, scale);
                        EXPECT_LT(err, 1e-4 * scale)
                            << "level " << l; // (scale: set by max_abs_diff)
                    }
                    std::vector<double> r = test::random_vector(s.dofs(), 17);
                    for (Index i = 0; i < s.rows(); ++i)
                        if (fixed[i]) r[3 * i] = r[3 * i + 1] = r[3 * i + 2] = 0;
                    std::vector<double> z(r.size());
                    cpu::apply_multigrid(h, s.a.view(), r.data(), z.data());
                    const std::vector<float> zf =
                        gpu->apply(a.view(), std::vector<float>(r.begin(), r.end()));
                    EXPECT_LT(test::relative_error(zf, z), 2e-3);
                }
            }
    test::LinearSystem s(test::make_random_perturbed_box(4, 4, 4, 0.5, 0.5, 1.0, 0.1, 3), 1, 1e-3);
    const std::vector<std::uint8_t> all(s.rows(), 1);
    const cuda::DeviceMatrix a(s.af);
    const cuda::DeviceBuffer<std::uint8_t> all_d = test::to_device(all);
    std::vector<double> positions(3 * static_cast<std::size_t>(s.rows()), 0.0);
    const cuda::DeviceBuffer<double> rest_d = test::to_device(positions);
    EXPECT_FALSE(cuda::Multigrid::build(a.view().pattern, all, all_d.data(), rest_d.data(), {}));
#endif
}

// The P1 transfer made on the device from the cell node table (cuda::make_p1_transfer) is
// make_coarse_space's bit for bit: per node the same (vertex, weight) entries (the first cell's:
// the last bits of a weight differ from cell to cell at p = 3), ascending by vertex (the host
// lists them in that cell's order), at p = 2 and 3.
TEST_P(CudaMultigrid, P1TransferOnTheDeviceEqualsTheHosts) {
#if defined(EDN_WITH_CUDA) && EDN_WITH_CUDA
    if (GetParam() == 1) GTEST_SKIP() << "p = 1 has no P1 transfer";
    for (const int order : {2, 3}) {
        SCOPED_TRACE("p " + std::to_string(order));
        test::LinearSystem s(test::make_random_perturbed_box(3, 4, 5, 0.5, 0.5, 1.0, 0.1, 7), order,
                             1e-3);
        const NodeLayout& layout = s.f->layout;
        const CoarseSpace space = make_coarse_space(s.f->mesh, s.f->topology, layout, false);
        const int m = nodes_per_cell(order);
        std::vector<double> local;
        for (int a = 0; a < m; ++a)
            for (double w : local_node_barycentric(order, a)) local.push_back(w);
        const cuda::DeviceBuffer<Index> cells_d =
            test::to_device(cell_node_table(s.f->topology, s.f->mesh.cells, layout));
        const Index n = layout.num_nodes();
        cuda::DeviceBuffer<Index> vertex_d(3 * std::size_t(n));
        cuda::DeviceBuffer<double> weight_d(3 * std::size_t(n));
        cuda::make_p1_transfer({cells_d.data(), m, s.f->mesh.num_cells()}, n, local,
                               vertex_d.data(), weight_d.data());
        const std::vector<Index> vertex = test::to_host(vertex_d);
        const std::vector<double> weight = test::to_host(weight_d);
        Index mismatches = 0;
        for (Index i = 0; i < n; ++i) {
            std::vector<std::pair<Index, double>> host, device;
            for (int k = 0; k < 3; ++k) {
                if (space.pro_vertex[3 * i + k] >= 0)
                    host.emplace_back(space.pro_vertex[3 * i + k], space.pro_weight[3 * i + k]);
                if (vertex[3 * i + k] >= 0)
                    device.emplace_back(vertex[3 * i + k], weight[3 * i + k]);
            }
            std::sort(host.begin(), host.end());
            mismatches += host != device; // (the device's: sorted already)
        }
        EXPECT_EQ(mismatches, 0);
    }
#endif
}

// The re-value and the CG iterations replayed as CUDA graphs give bit for bit what launching
// the same kernels one by one gives (the second round replays the re-value graph).
TEST_P(CudaMultigrid, GraphsReplayTheDirectLaunches) {
    const int order = GetParam();
    test::LinearSystem s(test::make_random_perturbed_box(7, 7, 14, 0.5, 0.5, 1.0, 0.1, 5), order,
                         1e-3);
    const std::vector<std::uint8_t> fixed = s.bottom_nodes();
    const MultigridHierarchy h = make_hierarchy(s, order, fixed);
    cuda::Multigrid replayed(h), direct(h);
    direct.set_graphs(false);
    const cuda::DeviceMatrix a(s.af);
    const std::vector<float> b = pinned_rhs(s, fixed, 23);
    PcgSettings settings;
    settings.relative_tolerance = 1e-6;
    settings.max_iterations = 200;
    for (int round = 0; round < 2; ++round) {
        replayed.revalue(a.view());
        direct.revalue(a.view());
        std::vector<float> x1(b.size(), 0.f), x2(b.size(), 0.f);
        const PcgResult r1 = replayed.solve(a.view(), b, x1, settings);
        const PcgResult r2 = direct.solve(a.view(), b, x2, settings);
        EXPECT_TRUE(r1.converged) << "round " << round;
        EXPECT_GE(r1.iterations, 3);
        EXPECT_EQ(r1.iterations, r2.iterations) << "round " << round;
        EXPECT_EQ(r1.final_residual, r2.final_residual) << "round " << round;
        EXPECT_TRUE(x1 == x2) << "round " << round;
    }
}

// The cycles of two hierarchies for b agree to float rounding (1e-4 of the largest value);
// returns their largest difference.
double expect_same_cycle(cuda::Multigrid& m1, cuda::Multigrid& m2, const cuda::DeviceMatrix& a,
                         const std::vector<float>& b) {
    const std::vector<float> z1 = m1.apply(a.view(), b), z2 = m2.apply(a.view(), b);
    double scale = 0;
    const double err = max_abs_diff(z2, z1, scale);
    EXPECT_GT(scale, 0.0);
    EXPECT_LT(err, 1e-4 * scale);
    return err;
}

// The upper-part tests' system: a box of order p with enough rows (2^14) for the upper part.
struct UpperPartSystem {
    static int cells(int order) { return order == 1 ? 26 : 14; }
    int order;
    test::LinearSystem s;
    std::vector<std::uint8_t> fixed = s.bottom_nodes();
    MultigridHierarchy h = make_hierarchy(s, order, fixed);
    explicit UpperPartSystem(int p)
        : order(p),
          s(test::make_random_perturbed_box(cells(p), cells(p), cells(p), 1.0, 1.0, 1.0, 0.1, 9), p,
            1e-3) {
        EXPECT_GE(s.rows(), Index{1} << 14);
    }
};

// The fine products from the snapshot's upper part (set_upper_products: float atomics, used
// from 2^14 rows where the matrix exceeds the L2 cache, here whatever its size) give the full
// products' cycle and solve to float rounding, at every order.
TEST_P(CudaMultigrid, UpperPartProductsSolveAsTheFullProducts) {
    const UpperPartSystem u(GetParam());
    const test::LinearSystem& s = u.s;
    cuda::Multigrid full(u.h), upper(u.h);
    upper.set_upper_products(true, /*any_size=*/true); // an L2-resident matrix
    const cuda::DeviceMatrix a(s.af);
    full.revalue(a.view());
    upper.revalue(a.view());
    const std::vector<float> b = pinned_rhs(s, u.fixed, 31);
    EXPECT_GT(expect_same_cycle(full, upper, a, b), 0.0) << "the upper part's product was not used";
    PcgSettings settings;
    settings.relative_tolerance = 1e-6;
    settings.max_iterations = 200;
    std::vector<float> x1(b.size(), 0.f), x2(b.size(), 0.f);
    const PcgResult r1 = full.solve(a.view(), b, x1, settings);
    const PcgResult r2 = upper.solve(a.view(), b, x2, settings);
    EXPECT_TRUE(r1.converged);
    EXPECT_TRUE(r2.converged);
    EXPECT_LE(std::abs(r1.iterations - r2.iterations), 1);
}

// The half-copy tests' reference: a hierarchy of float products re-valued for `a`, its cycle of
// b and the iterations of its solve to 1e-6.
struct FloatReference {
    std::vector<float> z;
    int iterations = 0;
};
PcgSettings tight_solve() {
    PcgSettings settings;
    settings.relative_tolerance = 1e-6;
    settings.max_iterations = 200;
    return settings;
}
FloatReference float_reference(cuda::Multigrid& single, const cuda::DeviceMatrix& a,
                               const std::vector<float>& b) {
    single.set_half_products(false);
    single.revalue(a.view());
    FloatReference ref{single.apply(a.view(), b)};
    std::vector<float> x(b.size(), 0.f);
    const PcgResult r = single.solve(a.view(), b, x, tight_solve());
    EXPECT_TRUE(r.converged);
    ref.iterations = r.iterations;
    return ref;
}
// m with every value times `factor`.
BinBcsrMatrix<float> times(BinBcsrMatrix<float> m, double factor) {
    for (float& v : m.values) v = float(v * factor);
    for (float& v : m.diag) v = float(v * factor);
    return m;
}
// `half`, set to read half copies and re-valued here for `scaled` = factor A: its cycle of b,
// unscaled (the cycle of factor A is z / factor), is within half rounding of the reference's
// (1e-2) but not equal to it (the copies were read), and its solve converges within 2 iterations
// of the reference's.
void expect_half_cycle(cuda::Multigrid& half, const cuda::DeviceMatrix& scaled, double factor,
                       const std::vector<float>& b, const FloatReference& ref) {
    half.revalue(scaled.view());
    std::vector<float> zh = half.apply(scaled.view(), b);
    for (float& v : zh) v = float(v * factor);
    double scale = 0;
    const double err = max_abs_diff(zh, ref.z, scale);
    EXPECT_GT(err, 1e-6 * scale) << "the half copies were not used";
    EXPECT_LT(err, 1e-2 * scale);
    std::vector<float> xh(b.size(), 0.f);
    const PcgResult rh = half.solve(scaled.view(), b, xh, tight_solve());
    EXPECT_TRUE(rh.converged);
    EXPECT_LE(std::abs(rh.iterations - ref.iterations), 2);
}

// The fine products from the upper part's half copy (set_half_products with upper products,
// whatever the size) stay within half rounding of the float upper part's cycle, also for a
// matrix scaled beyond half's range, and the solves converge in about the same iterations.
TEST_P(CudaMultigrid, HalfUpperPartCyclesAsTheFloatUpperPart) {
    const UpperPartSystem u(GetParam());
    const std::vector<float> b = pinned_rhs(u.s, u.fixed, 37);
    cuda::Multigrid single(u.h);
    single.set_upper_products(true, /*any_size=*/true);
    const FloatReference ref = float_reference(single, cuda::DeviceMatrix(u.s.af), b);
    for (const double factor : {1.0, 1e8}) {
        SCOPED_TRACE("matrix times " + std::to_string(factor));
        cuda::Multigrid half(u.h);
        half.set_upper_products(true, /*any_size=*/true);
        half.set_half_products(true, /*any_size=*/true);
        expect_half_cycle(half, cuda::DeviceMatrix(times(u.s.af, factor)), factor, b, ref);
    }
}

// A re-value's own products (Lanczos' lambda_max) take the new matrix, not the last re-value's
// upper part, whether its kernels are replayed from the graph or launched directly: re-valued
// for A, then for 2 A (lambda_max(D^-1 A) is the same, so a stale product would halve it), the
// two give the same cycle to float rounding (the upper part's atomics).
TEST_P(CudaMultigrid, UpperPartRevalueSeesTheNewMatrixWithAndWithoutGraphs) {
    const UpperPartSystem u(GetParam());
    const test::LinearSystem& s = u.s;
    cuda::Multigrid replayed(u.h), direct(u.h);
    for (cuda::Multigrid* m : {&replayed, &direct}) m->set_upper_products(true, /*any_size=*/true);
    direct.set_graphs(false);
    auto doubled = s.af;
    for (float& v : doubled.values) v *= 2;
    for (float& v : doubled.diag) v *= 2;
    const cuda::DeviceMatrix a(s.af), a2(doubled);
    for (const cuda::DeviceMatrix* m : {&a, &a2}) {
        replayed.revalue(m->view());
        direct.revalue(m->view());
    }
    expect_same_cycle(replayed, direct, a2, pinned_rhs(s, u.fixed, 41));
}

// The cycle's coarse products from half-precision copies (set_half_products, here whatever the
// operators' sizes) stay within half rounding of the float products' cycle, for matrices scaled
// far beyond half's range (1e8: values near 1e12) and below it (1e-8); the solves converge in
// about the same iterations. Switched off again, the cycle is the float one exactly.
TEST_P(CudaMultigrid, HalfCoarseProductsCycleAsTheFloatProducts) {
    const int order = GetParam();
    test::LinearSystem s(test::make_random_perturbed_box(7, 7, 14, 0.5, 0.5, 1.0, 0.1, 3), order,
                         1e-3);
    const std::vector<std::uint8_t> fixed = s.bottom_nodes();
    const MultigridHierarchy h = make_hierarchy(s, order, fixed);
    ASSERT_GE(h.num_levels(), 3);
    const std::vector<float> b = pinned_rhs(s, fixed, 23);
    cuda::Multigrid single(h);
    const FloatReference ref = float_reference(single, cuda::DeviceMatrix(s.af), b);
    for (const double factor : {1.0, 1e8, 1e-8}) {
        SCOPED_TRACE("matrix times " + std::to_string(factor));
        const cuda::DeviceMatrix scaled(times(s.af, factor));
        cuda::Multigrid half(h);
        half.set_half_products(true, /*any_size=*/true);
        expect_half_cycle(half, scaled, factor, b, ref);
        half.set_half_products(false);
        half.revalue(scaled.view());
        std::vector<float> zf = half.apply(scaled.view(), b);
        for (float& v : zf) v = float(v * factor);
        double scale = 0;
        const double err = max_abs_diff(zf, ref.z, scale); // sets scale: not inside EXPECT_LT
        EXPECT_LT(err, 1e-4 * scale);
    }
}

// The device-side stopping decisions (the solve graph's while node, or the direct launches'
// read-backs): the iteration cap stops unconverged after exactly that many iterations, a zero
// right-hand side converges before any, and a converged solution as warm start needs none.
TEST_P(CudaMultigrid, SolveStopsAtTheCapAndAtTheStart) {
    const int order = GetParam();
    test::LinearSystem s(test::make_random_perturbed_box(6, 6, 12, 0.5, 0.5, 1.0, 0.1, 7), order,
                         1e-3);
    const std::vector<std::uint8_t> fixed = s.bottom_nodes();
    const MultigridHierarchy h = make_hierarchy(s, order, fixed);
    for (const bool graphs : {true, false}) {
        cuda::Multigrid mg(h);
        mg.set_graphs(graphs);
        const cuda::DeviceMatrix a(s.af);
        mg.revalue(a.view());
        const std::vector<float> b = pinned_rhs(s, fixed, 31);
        PcgSettings capped;
        capped.relative_tolerance = 1e-10;
        capped.max_iterations = 2;
        std::vector<float> x(b.size(), 0.f);
        const PcgResult r = mg.solve(a.view(), b, x, capped);
        EXPECT_EQ(r.iterations, 2) << "graphs " << graphs;
        EXPECT_FALSE(r.converged);
        EXPECT_FALSE(r.breakdown);
        EXPECT_LT(r.final_residual, r.initial_residual);

        PcgSettings settings;
        settings.relative_tolerance = 1e-5;
        settings.max_iterations = 100;
        // x = 1 on free rows only: a cold start keeps pinned values (their products would
        // make a nonzero right-hand side for the free rows).
        std::vector<float> zero(b.size(), 0.f), x0(b.size(), 0.f);
        for (Index i = 0; i < s.rows(); ++i)
            if (!fixed[i]) x0[3 * i] = x0[3 * i + 1] = x0[3 * i + 2] = 1.f;
        const PcgResult z = mg.solve(a.view(), zero, x0, settings);
        EXPECT_TRUE(z.converged) << "graphs " << graphs;
        EXPECT_EQ(z.iterations, 0);
        for (Index i = 0; i < s.rows(); ++i) {
            if (!fixed[i]) {
                EXPECT_EQ(x0[3 * i], 0.f); // a cold start: free rows zeroed
            }
        }

        std::vector<float> xs(b.size(), 0.f);
        const PcgResult solved = mg.solve(a.view(), b, xs, settings);
        ASSERT_TRUE(solved.converged);
        settings.warm_start = true;
        const PcgResult again = mg.solve(a.view(), b, xs, settings);
        EXPECT_TRUE(again.converged) << "graphs " << graphs;
        EXPECT_LE(again.iterations, 1);
    }
}

// The CUDA backend with the multigrid preconditioner follows the CPU backend's trajectory (the
// same Newton steps; float matrices and cycle) with few CG iterations, at p = 1 and p = 2.
TEST_P(CudaMultigrid, SimulationMatchesCpuMultigrid) {
    const TetMesh mesh = test::make_box_mesh(3, 3, 9, 0.3, 0.3, 1.0);
    SimulationSettings s;
    s.order = GetParam();
    s.material = Material::NeoHookean;
    s.max_newton_iterations = 3;
    s.cg_forcing = false; // tight solves on both backends
    s.preconditioner = Preconditioner::Multigrid;
    s.pcg.relative_tolerance = 1e-5;
    s.pcg.max_iterations = 500;
    Simulation cpu(mesh, s);
    s.backend = Backend::Cuda;
    Simulation gpu(mesh, s);
    const std::vector<double> rest = cpu.positions();
    for (Index i = 0; i < cpu.num_nodes(); ++i)
        if (rest[3 * i + 2] < 1e-9) cpu.set_pinned(i, true), gpu.set_pinned(i, true);
    int cg_gpu = 0, newton_gpu = 0;
    for (int frame = 0; frame < 20; ++frame) {
        cpu.step();
        const StepResult r = gpu.step();
        cg_gpu += r.cg_iterations;
        newton_gpu += r.newton_iterations;
        EXPECT_EQ(r.pcg_breakdowns, 0);
        EXPECT_EQ(r.pcg_unconverged, 0);
        EXPECT_FALSE(r.recovered);
    }
    const std::vector<double> a = cpu.positions(), b = gpu.positions();
    const double diff = test::max_abs_diff(a, b);
    const double motion = test::max_abs_diff(a, rest);
    EXPECT_GT(motion, 1e-3);
    EXPECT_LT(diff, 1e-3 * motion);
    EXPECT_LT(cg_gpu, 25 * newton_gpu);
}

INSTANTIATE_TEST_SUITE_P(Orders, CudaMultigrid, ::testing::Values(1, 2),
                         [](const auto& info) { return "p" + std::to_string(info.param); });

} // namespace
} // namespace edn
