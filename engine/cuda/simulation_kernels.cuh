#pragma once
// Kernels of the CUDA simulation backend (cuda/simulation_cuda.cu, its only includer): the
// element passes, the per-node terms of the incremental potential, the drag spring, the vector
// operations of the Newton loop, the state update and the von Mises colouring.

#include "cuda/block_reduce.cuh"
#include "cuda/cuda_check.cuh"
#include "sim/element_kernels.hpp"
#include "sim/simulation_backend.hpp"
#include "sparse/upper_blocks.hpp"

namespace edn::cuda_simulation {

using cuda::DeviceBuffer;

constexpr int kBlock = 256;
constexpr unsigned int kReduceBlocks = 1024; // most blocks of device_sum and device_dot
inline unsigned int blocks_for(std::int64_t n) {
    return static_cast<unsigned int>((n + kBlock - 1) / kBlock);
}

/// Per-node (non-element) terms of the incremental potential (double: the Newton level).
struct NodeTerms {
    double inertia; ///< c of c/2 (y - y~)^T M (y - y~)
    double damping; ///< alpha / h of the mass damping term
    double gravity[3];
    int has_ground;
    double ground_height, ground_stiffness;
    double friction; ///< ground friction / h (0: none) of the nodes in contact at the step's start
};

/// The point drag spring (DragSpring without its region) as a kernel argument.
struct PointDrag {
    Index vertices[3];
    double weights[3];
    double target[3];
    double stiffness;
};

/// `drag`'s point spring as a kernel argument.
inline PointDrag point_drag(const DragSpring& drag) {
    PointDrag p{};
    for (int k = 0; k < 3; ++k) {
        p.vertices[k] = drag.vertices[k];
        p.weights[k] = drag.weights[k];
        p.target[k] = drag.target[k];
    }
    p.stiffness = drag.stiffness;
    return p;
}

/// A region drag in device memory (DragSpring::region as arrays) with the target and stiffness.
struct RegionDrag {
    const Index* nodes = nullptr;    ///< #R vertex nodes, each once
    const double* weights = nullptr; ///< #R shares of the stiffness
    const double* offsets = nullptr; ///< 3 #R targets minus the drag target
    Index count = 0;
    double target[3] = {0, 0, 0};
    double stiffness = 0;
};

/// A drag's region in device memory, uploaded when it changes (moving the target changes only
/// DragSpring::target, which view() passes by value to the kernels).
struct DeviceDragRegion {
    std::vector<DragNode> host; ///< what the buffers hold
    DeviceBuffer<Index> nodes;
    DeviceBuffer<double> weights;
    DeviceBuffer<double> offsets; ///< 3 per node
    DeviceBuffer<double> energy;  ///< per node drag energy (drag_region_kernel's output)

    /// Uploads `region` unless it is the one already there.
    void upload(const std::vector<DragNode>& region) {
        if (region == host) return;
        host = region;
        const std::size_t count = region.size();
        std::vector<Index> n(count);
        std::vector<double> w(count), o(3 * count);
        for (std::size_t j = 0; j < count; ++j) {
            n[j] = region[j].node;
            w[j] = region[j].weight;
            for (int d = 0; d < 3; ++d) o[3 * j + d] = region[j].offset[d];
        }
        nodes.resize(count);
        weights.resize(count);
        offsets.resize(3 * count);
        energy.resize(count);
        if (count == 0) return;
        EDN_CUDA_CHECK(cudaMemcpy(nodes.data(), n.data(), nodes.bytes(), cudaMemcpyHostToDevice));
        EDN_CUDA_CHECK(
            cudaMemcpy(weights.data(), w.data(), weights.bytes(), cudaMemcpyHostToDevice));
        EDN_CUDA_CHECK(
            cudaMemcpy(offsets.data(), o.data(), offsets.bytes(), cudaMemcpyHostToDevice));
    }
    /// The kernels' view with `drag`'s target and stiffness.
    RegionDrag view(const DragSpring& drag) const {
        RegionDrag r;
        r.nodes = nodes.data();
        r.weights = weights.data();
        r.offsets = offsets.data();
        r.count = static_cast<Index>(host.size());
        for (int d = 0; d < 3; ++d) r.target[d] = drag.target[d];
        r.stiffness = drag.stiffness;
        return r;
    }
};

/// Rayleigh stiffness damping inputs of the element kernel (coefficient 0: none).
struct ElementDamping {
    const double* y_start = nullptr; ///< displacements at the start of the step (3 per node)
    LameParameters<double> lame{};   ///< the material's Lame parameters
    double coefficient = 0;          ///< beta / h
    double* energy = nullptr;        ///< per cell damping potential
};

/// The float twin of a double material (its parameters rounded): the element Hessian's.
__host__ __device__ inline LinearMaterial<float> float_material(const LinearMaterial<double>& m) {
    return LinearMaterial<float>{{float(m.lame.lambda), float(m.lame.mu)}};
}
/// The float twin of a double material (its parameters rounded): the element Hessian's.
__host__ __device__ inline Corotational<float> float_material(const Corotational<double>& m) {
    Corotational<float> f{{float(m.lame.lambda), float(m.lame.mu)}};
    f.tangent = m.tangent;
    return f;
}
/// The float twin of a double material (its parameters rounded): the element Hessian's.
__host__ __device__ inline NeoHookean<float> float_material(const NeoHookean<double>& m) {
    NeoHookean<float> f{{float(m.lame.lambda), float(m.lame.mu)}};
    f.extension_jacobian = float(m.extension_jacobian);
    return f;
}

/// A rest element rounded to float (the element Hessian's geometry).
__host__ __device__ inline RestElement<float> float_rest(const RestElement<double>& r) {
    RestElement<float> f;
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) f.inverse_jacobian[i][j] = float(r.inverse_jacobian[i][j]);
    f.abs_det = float(r.abs_det);
    return f;
}

/// element_kernel's work for element t: `hessian_stage` (not null) receives the float Hessian
/// blocks instead of their place in `blocks`.
template <int P, class Material>
__device__ inline void element_thread(const Material& material, const RestElement<double>* rest,
                                      const QuadratureTet<double>& rule,
                                      const QuadratureTet<float>& rule_f, const Index* cell_nodes,
                                      Index t, const double* y, int outputs, bool project,
                                      double* energy, double* forces, float* hessian_stage,
                                      float* blocks, const ElementDamping& damping) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const std::int64_t base = static_cast<std::int64_t>(t) * m;
    double x[m][3];
    for (int a = 0; a < m; ++a) {
        const Index node = cell_nodes[base + a];
        for (int d = 0; d < 3; ++d) x[a][d] = y[3 * static_cast<std::int64_t>(node) + d];
    }
    const RestElement<double> r = rest[t];
    const int value_outputs = outputs & (kEnergy | kGradient);
    double e = 0;
    double dummy_gradient[1][3];
    double* const no_hessian = nullptr; // the float pass below writes the blocks
    double(*gradient)[3] =
        (outputs & kGradient) ? reinterpret_cast<double(*)[3]>(forces + base * 3) : dummy_gradient;
    if (damping.coefficient > 0) {
        double delta[m][3];
        for (int a = 0; a < m; ++a) {
            const Index node = cell_nodes[base + a];
            for (int d = 0; d < 3; ++d)
                delta[a][d] = x[a][d] - damping.y_start[3 * static_cast<std::int64_t>(node) + d];
        }
        double ed = 0;
        evaluate_element_damped<P>(material, r, rule, x, delta, damping.lame, damping.coefficient,
                                   value_outputs, project, e, ed, gradient, no_hessian,
                                   /*displacement_form=*/true);
        damping.energy[t] = ed;
    } else {
        evaluate_element<P>(material, r, rule, x, value_outputs, project, e, gradient, no_hessian,
                            /*displacement_form=*/true);
    }
    energy[t] = e;
    if ((outputs & kHessian) == 0) return;
    // The float Hessian: only its blocks are kept (the float energy is not).
    float xf[m][3];
    for (int a = 0; a < m; ++a)
        for (int d = 0; d < 3; ++d) xf[a][d] = static_cast<float>(x[a][d]);
    const RestElement<float> rf = float_rest(r);
    const auto material_f = float_material(material);
    float* hessian = hessian_stage != nullptr ? hessian_stage : blocks + base * m * 9;
    float ef = 0, edf = 0;
    float unused_gradient[1][3];
    if (damping.coefficient > 0) {
        const float delta_f[m][3] = {}; // the damping Hessian is constant: no delta needed
        const LameParameters<float> lame_f{float(damping.lame.lambda), float(damping.lame.mu)};
        evaluate_element_damped<P>(material_f, rf, rule_f, xf, delta_f, lame_f,
                                   static_cast<float>(damping.coefficient), kHessian, project, ef,
                                   edf, unused_gradient, hessian, /*displacement_form=*/true);
    } else {
        evaluate_element<P>(material_f, rf, rule_f, xf, kHessian, project, ef, unused_gradient,
                            hessian, /*displacement_form=*/true);
    }
}

/// One thread per element, mixed precision: the energy and the gradient (the element forces) in
/// double from the double displacements y, the rest geometry and the rule in double, so the
/// Newton residual and the line search's energies carry double digits; then, with kHessian, the
/// element Hessian blocks in float (the float material, geometry and rule: the matrix and the PCG
/// stay float) from the displacements rounded to float. Energies and forces are written per
/// cell (`energy`, `forces`: m x 3 per cell), blocks m x m x 9 per cell.
///
/// At p = 1 a thread's 144 Hessian floats go to shared memory first and the block then writes
/// its elements' blocks (one contiguous range) with coalesced stores: written straight from each
/// thread, every store instruction of a warp touched 32 sectors 576 bytes apart (ncu, 187K tets:
/// 2.9e7 store sectors for 0.9e6 requests, 82% of the memory pipes busy for 108 MB of output).
/// Launch it with kElementStage threads per block at p = 1. With `upper` (p = 1 only: the staged
/// path) only the upper blocks (a <= b) go out, in the upper layout (sparse/upper_blocks.hpp).
inline constexpr int kElementStage = 64;

template <int P, class Material>
__global__ void element_kernel(Material material, const RestElement<double>* rest,
                               QuadratureTet<double> rule, QuadratureTet<float> rule_f,
                               const Index* cell_nodes, Index num_cells, const double* y,
                               int outputs, bool project, double* energy, double* forces,
                               float* blocks, ElementDamping damping, bool upper = false) {
    constexpr int m = lagrange_tet_num_nodes(P);
    // The stage of the p = 1 blocks: a row per thread, padded to 145 floats (no bank conflicts).
    constexpr int kRow = m * m * 9 + 1;
    constexpr bool kStaged = P == 1;
    __shared__ float stage[kStaged ? kElementStage * kRow : 1];
    // (No table of the upper layout's places in shared memory: its 360 bytes cost a resident
    // block per SM, 6 -> 5, and 2% of a 1.15M frame.)
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    const bool staged = kStaged && (outputs & kHessian) != 0;
    if (t < num_cells)
        element_thread<P>(material, rest, rule, rule_f, cell_nodes, t, y, outputs, project, energy,
                          forces, staged ? stage + threadIdx.x * kRow : nullptr, blocks, damping);
    if (!staged) return;
    __syncthreads();
    // The block's elements own one contiguous range of blocks: copy it out as float4.
    const Index first = static_cast<Index>(blockIdx.x) * blockDim.x;
    const Index count = num_cells - first < static_cast<Index>(blockDim.x)
                            ? num_cells - first
                            : static_cast<Index>(blockDim.x);
    if (upper) { // 10 of the 16 blocks, 90 floats per element: one range, float4 stores
        constexpr int kFloats = upper_block_count(m) * 9;
        static_assert(kElementStage * kFloats % 4 == 0, "whole float4 of full thread blocks");
        float* out = blocks + static_cast<std::int64_t>(first) * kFloats; // (16-byte aligned)
        const auto at = [&](int i) {
            const int e = i / kFloats, k = i - e * kFloats, u = k / 9;
            int a = 0, b = 0;
            upper_block_pair(m, u, a, b);
            return stage[e * kRow + (a * m + b) * 9 + (k - 9 * u)];
        };
        const int total = count * kFloats, quads = total / 4;
        float4* out4 = reinterpret_cast<float4*>(out);
        for (int i = threadIdx.x; i < quads; i += blockDim.x)
            out4[i] = make_float4(at(4 * i), at(4 * i + 1), at(4 * i + 2), at(4 * i + 3));
        for (int i = 4 * quads + threadIdx.x; i < total; i += blockDim.x) out[i] = at(i);
        return;
    }
    constexpr int kQuads = m * m * 9 / 4; // 144 floats = 36 float4 per element
    float4* out = reinterpret_cast<float4*>(blocks + static_cast<std::int64_t>(first) * m * m * 9);
    for (int i = threadIdx.x; i < count * kQuads; i += blockDim.x) {
        const int e = i / kQuads, k = 4 * (i - e * kQuads);
        const float* row = stage + e * kRow + k;
        out[i] = make_float4(row[0], row[1], row[2], row[3]);
    }
}

/// The element-force slots t * m + a of every node's incident cells (node i is cell t's local
/// node a), in node->cells order, into `slots` (node->cells' offsets; its index arrays hold
/// `per` entries per incidence, node_in_simplex): what node_kernel gathers, found once per
/// pattern instead of searching each cell's nodes in every element pass.
__global__ void force_slots_kernel(NodeCellsView nc, const Index* cell_nodes, int m, Index n,
                                   NodeCellsView slots) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Index simplex = 0;
    const CsrView& csr = nc.csr_of(i, simplex);
    const CsrView& out = slots.csr_of(i, simplex);
    int j = 0, per = 1;
    node_in_simplex(nc.layout, i, j, per);
    for (Index k = csr.offsets[simplex]; k < csr.offsets[simplex + 1]; ++k) {
        const Index t = csr.indices[k];
        int a = 0;
        while (cell_nodes[static_cast<std::int64_t>(t) * m + a] != i) ++a;
        const_cast<Index*>(out.indices)[static_cast<std::int64_t>(k) * per + j] = t * m + a;
    }
}

/// Per node, in double: inertia, damping, gravity and ground terms; energy per node and
/// (optionally) the full gradient with the element forces gathered through the node's force
/// slots (force_slots_kernel; a fixed order: deterministic).
__global__ void node_kernel(NodeTerms terms, NodeCellsView force_slots, const double* mass,
                            const std::uint8_t* fixed, const double* rest_x, const double* y,
                            const double* y_tilde, const double* x_start, const double* forces,
                            Index n, bool with_gradient, double* node_energy, double* gradient) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double e = 0, g[3];
    for (int d = 0; d < 3; ++d) {
        const std::int64_t k = 3 * static_cast<std::int64_t>(i) + d;
        const double dy = terms.inertia > 0 ? y[k] - y_tilde[k] : 0.0;
        const double dv = y[k] - x_start[k];
        // Gravity work measured from x_start, as the CPU backend does (a constant shift).
        e += 0.5 * mass[i] * (terms.inertia * dy * dy + terms.damping * dv * dv) -
             mass[i] * terms.gravity[d] * dv;
        g[d] = mass[i] * (terms.inertia * dy + terms.damping * dv - terms.gravity[d]);
    }
    if (terms.has_ground) {
        const std::int64_t z = 3 * static_cast<std::int64_t>(i) + 2;
        const double pen = rest_x[z] + y[z] - terms.ground_height;
        if (pen < 0) {
            e += 0.5 * terms.ground_stiffness * pen * pen;
            g[2] += terms.ground_stiffness * pen;
        }
        // Friction of the nodes in contact at the step's start (as the CPU backend).
        if (terms.friction > 0 && rest_x[z] + x_start[z] < terms.ground_height) {
            for (int d = 0; d < 2; ++d) {
                const std::int64_t k = 3 * static_cast<std::int64_t>(i) + d;
                const double dv = y[k] - x_start[k];
                e += 0.5 * terms.friction * mass[i] * dv * dv;
                g[d] += terms.friction * mass[i] * dv;
            }
        }
    }
    node_energy[i] = e;
    if (!with_gradient) return;
    force_slots.for_each_incidence(i, [&](Index slot) {
        const double* f = forces + 3 * static_cast<std::int64_t>(slot);
        g[0] += f[0], g[1] += f[1], g[2] += f[2];
    });
    const bool pinned = fixed[i] != 0;
    for (int d = 0; d < 3; ++d)
        gradient[3 * static_cast<std::int64_t>(i) + d] = pinned ? 0.0 : g[d];
}

/// Drag spring (double): energy into slot 0 of `extra`, gradient added to its three vertices.
__global__ void drag_kernel(PointDrag drag_in, const double* rest_x, const double* y,
                            const std::uint8_t* fixed, bool with_gradient, double* extra,
                            double* gradient) {
    double p[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k)
        for (int d = 0; d < 3; ++d)
            p[d] += drag_in.weights[k] *
                    (rest_x[3 * static_cast<std::int64_t>(drag_in.vertices[k]) + d] +
                     y[3 * static_cast<std::int64_t>(drag_in.vertices[k]) + d]);
    double e = 0;
    for (int d = 0; d < 3; ++d) {
        const double diff = p[d] - drag_in.target[d];
        e += 0.5 * drag_in.stiffness * diff * diff;
        if (with_gradient)
            for (int k = 0; k < 3; ++k)
                if (!fixed[drag_in.vertices[k]])
                    gradient[3 * static_cast<std::int64_t>(drag_in.vertices[k]) + d] +=
                        drag_in.stiffness * drag_in.weights[k] * diff;
    }
    extra[0] = e;
}

/// Region drag (double): per region node j, its energy k w_j / 2 |x_j - t_j|^2 into energy[j]
/// and its gradient added to the node (each node once: no atomics).
__global__ void drag_region_kernel(RegionDrag drag, const double* rest_x, const double* y,
                                   const std::uint8_t* fixed, bool with_gradient, double* energy,
                                   double* gradient) {
    const Index j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= drag.count) return;
    const Index node = drag.nodes[j];
    const double k = drag.stiffness * drag.weights[j];
    double e = 0;
    for (int d = 0; d < 3; ++d) {
        const std::int64_t at = 3 * static_cast<std::int64_t>(node) + d;
        const double diff = rest_x[at] + y[at] - drag.target[d] -
                            drag.offsets[3 * static_cast<std::int64_t>(j) + d];
        e += 0.5 * k * diff * diff;
        if (with_gradient && !fixed[node]) gradient[at] += k * diff;
    }
    energy[j] = e;
}

/// The region drag's Hessian k w_j I added to its nodes' diagonal blocks.
/// Where the diagonal terms go: dof d of node i at [d * component + i * node] (the float matrix's
/// diagonal planes 0, 4, 8: {4 n, 1}; 3 per node: {1, 3}).
struct DiagonalTarget {
    float* values;
    std::int64_t component;
    std::int64_t node;
    EDN_HOST_DEVICE float& operator()(Index i, int d) const {
        return values[d * component + i * node];
    }
};
/// The matrix's diagonal planes as a DiagonalTarget.
inline DiagonalTarget diagonal_planes(float* diag, Index n) {
    return {diag, 4 * static_cast<std::int64_t>(n), 1};
}

__global__ void add_drag_region_hessian_kernel(RegionDrag drag, DiagonalTarget diag) {
    const Index j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= drag.count) return;
    const float w = static_cast<float>(drag.stiffness * drag.weights[j]);
    for (int d = 0; d < 3; ++d) diag(drag.nodes[j], d) += w;
}

/// The node terms' Hessian (mass, ground, ground friction) added to the diagonal.
__global__ void add_diagonal_kernel(const float* mass, float scale, const double* rest_x,
                                    const double* y, const double* x_start, NodeTerms terms,
                                    Index n, DiagonalTarget diag) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float add = mass[i] * scale;
    diag(i, 0) += add, diag(i, 1) += add, diag(i, 2) += add;
    if (!terms.has_ground) return;
    const std::int64_t z = 3 * static_cast<std::int64_t>(i) + 2;
    if (rest_x[z] + y[z] < terms.ground_height)
        diag(i, 2) += static_cast<float>(terms.ground_stiffness);
    if (terms.friction > 0 && rest_x[z] + x_start[z] < terms.ground_height) {
        const float f = static_cast<float>(terms.friction) * mass[i];
        diag(i, 0) += f, diag(i, 1) += f;
    }
}

__global__ void add_drag_hessian_kernel(PointDrag drag_in, BinBcsrMatrixView<float> a) {
    const int ab = threadIdx.x;
    if (ab >= 9) return;
    const int ia = ab / 3, ib = ab % 3;
    const Index row = drag_in.vertices[ia], col = drag_in.vertices[ib];
    const float w = float(drag_in.stiffness * drag_in.weights[ia] * drag_in.weights[ib]);
    const Index n = a.pattern.num_rows;
    if (row == col) {
        for (int k : {0, 4, 8}) atomicAdd(&a.diag[static_cast<std::int64_t>(k) * n + row], w);
        return;
    }
    const BinBcsrPatternView& p = a.pattern;
    const Index begin = p.bin_offsets[row / kBinRows], lane = row % kBinRows;
    for (Index j = 0; j < p.row_counts[row]; ++j)
        if (p.columns[begin + j * kBinRows + lane] == col) {
            for (int k : {0, 4, 8})
                atomicAdd(&a.values[bin_bcsr_value_index(p.bin_offsets, row, j, k)], w);
            return;
        }
}

/// Sum of T values (kDot: of products a_k b_k, formed in double) in double, in a fixed order:
/// grid-stride per thread, block sums, and the last block to finish sums the block partials
/// (cuda/block_reduce.cuh) into *out.
template <bool kDot, class T>
__global__ void reduce_kernel(const T* a, const T* b, std::int64_t n, double* partials,
                              unsigned int* done, double* out) {
    double v = 0;
    for (std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
         k += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
        v += kDot ? double(a[k]) * double(b[k]) : double(a[k]);
    const double t = cuda::block_sum<kBlock>(v);
    if (threadIdx.x == 0) partials[blockIdx.x] = t;
    if (!cuda::last_block_done(done, threadIdx.x == 0)) return;
    double sum[1];
    cuda::block_sum_partials<1, kBlock>(partials, static_cast<Index>(gridDim.x), sum);
    if (threadIdx.x == 0) *out = sum[0];
}

__global__ void kinetic_kernel(const double* mass, const double* v, Index n, double* out) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const double* vi = v + 3 * static_cast<std::int64_t>(i);
    out[i] = 0.5 * mass[i] * (vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2]);
}

/// x = X + u (node positions from displacements) rounded to float, for device_positions().
__global__ void positions_kernel(const double* rest_x, const double* u, std::int64_t n, float* x) {
    const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < n) x[k] = static_cast<float>(rest_x[k] + u[k]);
}

/// out = in on free nodes, 0 on pinned ones.
__global__ void masked_copy_kernel(const float* in, const std::uint8_t* fixed, Index n,
                                   float* out) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int d = 0; d < 3; ++d)
        out[3 * static_cast<std::int64_t>(i) + d] =
            fixed[i] ? 0.f : in[3 * static_cast<std::int64_t>(i) + d];
}

__global__ void axpy_kernel(const double* y, double alpha, const double* dx, std::int64_t n,
                            double* out) {
    const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < n) out[k] = y[k] + alpha * dx[k];
}

/// out = float(factor * in): the float PCG's right-hand side from a double vector.
__global__ void to_float_kernel(const double* in, double factor, std::int64_t n, float* out) {
    const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < n) out[k] = static_cast<float>(factor * in[k]);
}

/// out = in (kAdd: out += in), widened to double: the float PCG's solution into the Direction.
template <bool kAdd>
__global__ void to_double_kernel(const float* in, std::int64_t n, double* out) {
    const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= n) return;
    if (kAdd)
        out[k] += static_cast<double>(in[k]);
    else
        out[k] = static_cast<double>(in[k]);
}

/// r = b - A x on free rows, 0 on pinned ones, accumulated in double: the float matrix's entries
/// times the double x, with b = -gradient. A thread block of kTrueResidualWarps warps per bin
/// (lane = row; warp w takes the row's slots w, w + K, ..., up to its count, so padding is not
/// read), the warps' sums meeting in shared memory. Once per Newton solve, not per CG iteration.
/// (A thread per row, each walking its whole row, took 172 us at 187K p = 2 on the H100, more
/// than the float product's 135 us.)
inline constexpr int kTrueResidualWarps = 4;
__global__ void __launch_bounds__(kTrueResidualWarps * 32)
    true_residual_kernel(BinBcsrMatrixView<float> a, const double* __restrict__ gradient,
                         const double* __restrict__ x, const std::uint8_t* __restrict__ fixed,
                         double* __restrict__ r) {
    constexpr int K = kTrueResidualWarps;
    __shared__ double part[K][3][kBinRows];
    const BinBcsrPatternView& p = a.pattern;
    const int lane = threadIdx.x % kBinRows, w = threadIdx.x / kBinRows;
    const Index bin = blockIdx.x, row = bin * kBinRows + lane;
    const bool live = row < p.num_rows && !fixed[row];
    // Slot (row, j) and value plane k of the bin layout (sparse/bin_bcsr_view.hpp).
    const Index begin = p.bin_offsets[bin], width = p.width(bin);
    const std::int64_t plane = static_cast<std::int64_t>(width) * kBinRows;
    const float* values = a.values + 9 * static_cast<std::int64_t>(begin) + lane;
    // Padding slots (column = row, value 0) add nothing: without counts the whole width.
    const Index count = !live ? 0 : p.row_counts ? p.row_counts[row] : width;
    double s[3] = {0, 0, 0};
    for (Index j = w; j < count; j += K) {
        const std::int64_t slot = static_cast<std::int64_t>(j) * kBinRows;
        const std::int64_t col3 = 3 * static_cast<std::int64_t>(p.columns[begin + slot + lane]);
        const double x0 = x[col3], x1 = x[col3 + 1], x2 = x[col3 + 2];
        for (int rr = 0; rr < 3; ++rr)
            s[rr] += static_cast<double>(values[(3 * rr) * plane + slot]) * x0 +
                     static_cast<double>(values[(3 * rr + 1) * plane + slot]) * x1 +
                     static_cast<double>(values[(3 * rr + 2) * plane + slot]) * x2;
    }
    for (int rr = 0; rr < 3; ++rr) part[w][rr][lane] = s[rr];
    __syncthreads();
    if (w != 0 || row >= p.num_rows) return;
    const std::int64_t n = p.num_rows, k3 = 3 * static_cast<std::int64_t>(row);
    if (!live) {
        r[k3] = r[k3 + 1] = r[k3 + 2] = 0.0;
        return;
    }
    for (int rr = 0; rr < 3; ++rr) {
        double t = -gradient[k3 + rr];
        for (int c = 0; c < 3; ++c)
            t -= static_cast<double>(a.diag[(3 * rr + c) * n + row]) * x[k3 + c];
        for (int k = 0; k < K; ++k) t -= part[k][rr][lane];
        r[k3 + rr] = t;
    }
}

__global__ void fallback_direction_kernel(const double* g, const double* mass,
                                          const std::uint8_t* fixed, double scale, Index n,
                                          double* dx) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int d = 0; d < 3; ++d) {
        const std::int64_t k = 3 * static_cast<std::int64_t>(i) + d;
        dx[k] = fixed[i] ? 0.0 : -g[k] / (mass[i] * scale);
    }
}

__global__ void predictor_kernel(const double* x, const double* v, const std::uint8_t* fixed,
                                 double h, bool dynamic, Index n, double* y_tilde, double* y) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int d = 0; d < 3; ++d) {
        const std::int64_t k = 3 * static_cast<std::int64_t>(i) + d;
        y_tilde[k] = x[k] + (dynamic ? h * v[k] : 0.0);
        y[k] = (dynamic && !fixed[i]) ? y_tilde[k] : x[k];
    }
}

/// New state from the minimiser y; non-finite values are flagged in `bad`.
__global__ void update_state_kernel(const double* y, const double* x_start,
                                    const std::uint8_t* fixed, int integrator, double dt, Index n,
                                    double* x, double* v, int* bad) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int d = 0; d < 3; ++d) {
        const std::int64_t k = 3 * static_cast<std::int64_t>(i) + d;
        double xn, vn;
        if (integrator == int(Integrator::Midpoint)) {
            xn = 2.0 * y[k] - x_start[k];
            vn = 4.0 * (y[k] - x_start[k]) / dt - v[k];
        } else if (integrator == int(Integrator::BackwardEuler)) {
            xn = y[k];
            vn = (y[k] - x_start[k]) / dt;
        } else {
            xn = y[k];
            vn = 0.0;
        }
        if (fixed[i]) vn = 0.0;
        if (!isfinite(xn) || !isfinite(vn)) atomicExch(bad, 1);
        x[k] = xn, v[k] = vn;
    }
}

/// Per cell von Mises stress at the centroid (double, from the double state), rounded to float.
template <int P, class Material>
__global__ void von_mises_kernel(Material material, const RestElement<double>* rest,
                                 QuadratureTet<double> centroid, const Index* cell_nodes,
                                 Index num_cells, const double* y, float* out) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= num_cells) return;
    double g[m][3], x[m][3];
    element_shape_gradients<P>(rest[t], centroid.bary[0], g);
    for (int a = 0; a < m; ++a)
        for (int d = 0; d < 3; ++d)
            x[a][d] =
                y[3 * static_cast<std::int64_t>(cell_nodes[static_cast<std::int64_t>(t) * m + a]) +
                  d];
    const Mat3<double> F = element_deformation_gradient<m>(x, g, /*displacement_form=*/true);
    double psi;
    Mat3<double> Pk;
    material.evaluate(F, psi, Pk, nullptr, false);
    out[t] = static_cast<float>(von_mises(Pk, F));
}

} // namespace edn::cuda_simulation
