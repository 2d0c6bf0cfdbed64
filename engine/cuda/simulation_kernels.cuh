#pragma once
// Kernels of the CUDA simulation backend (cuda/simulation_cuda.cu, its only includer): the
// element passes, the per-node terms of the incremental potential, the drag spring, the vector
// operations of the Newton loop, the state update and the von Mises colouring.

#include "cuda/block_reduce.cuh"
#include "cuda/cuda_check.cuh"
#include "sim/element_kernels.hpp"
#include "sim/simulation_backend.hpp"

namespace edn::cuda_simulation {

using cuda::DeviceBuffer;

constexpr int kBlock = 256;
constexpr unsigned int kReduceBlocks = 1024; // most blocks of device_sum and device_dot
inline unsigned int blocks_for(std::int64_t n) {
    return static_cast<unsigned int>((n + kBlock - 1) / kBlock);
}

/// Per-node (non-element) terms of the incremental potential.
struct NodeTerms {
    float inertia; ///< c of c/2 (y - y~)^T M (y - y~)
    float damping; ///< alpha / h of the mass damping term
    float gravity[3];
    int has_ground;
    float ground_height, ground_stiffness;
};

/// Rayleigh stiffness damping inputs of the element kernel (coefficient 0: none).
struct ElementDamping {
    const float* y_start = nullptr; ///< displacements at the start of the step (3 per node)
    LameParameters<float> lame{};   ///< the material's Lame parameters
    float coefficient = 0;          ///< beta / h
    float* energy = nullptr;        ///< per cell damping potential
};

template <int P, class Material>
__global__ void element_kernel(Material material, const RestElement<float>* rest,
                               QuadratureTet<float> rule, const Index* cell_nodes, Index num_cells,
                               const float* y, int outputs, bool project, float* energy,
                               float* forces, float* blocks, ElementDamping damping) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= num_cells) return;
    float x[m][3];
    for (int a = 0; a < m; ++a) {
        const Index node = cell_nodes[static_cast<std::int64_t>(t) * m + a];
        for (int d = 0; d < 3; ++d) x[a][d] = y[3 * node + d];
    }
    float e = 0;
    float dummy_gradient[1][3];
    float(*gradient)[3] =
        (outputs & kGradient)
            ? reinterpret_cast<float(*)[3]>(forces + static_cast<std::int64_t>(t) * m * 3)
            : dummy_gradient;
    float* hessian =
        (outputs & kHessian) ? blocks + static_cast<std::int64_t>(t) * m * m * 9 : nullptr;
    if (damping.coefficient > 0.f) {
        float delta[m][3];
        for (int a = 0; a < m; ++a) {
            const Index node = cell_nodes[static_cast<std::int64_t>(t) * m + a];
            for (int d = 0; d < 3; ++d) delta[a][d] = x[a][d] - damping.y_start[3 * node + d];
        }
        float ed = 0;
        evaluate_element_damped<P>(material, rest[t], rule, x, delta, damping.lame,
                                   damping.coefficient, outputs, project, e, ed, gradient, hessian,
                                   /*displacement_form=*/true);
        damping.energy[t] = ed;
    } else {
        evaluate_element<P>(material, rest[t], rule, x, outputs, project, e, gradient, hessian,
                            /*displacement_form=*/true);
    }
    energy[t] = e;
}

/// Hessian passes of higher-order elements (energy, gradient and Hessian; no stiffness damping),
/// m threads per element instead of one (blocks of kElements * m <= 128 threads): a thread per
/// element and quadrature point evaluates the material there (F, psi, P, the 9x9 tangent) into
/// shared memory, then thread a of the element sums its row of blocks K_ab over the points in
/// registers and writes it once. The one-thread kernel spilled (255 registers) and added each
/// point's 900 floats into global memory: 8.7 ms and 4.4 GB of DRAM traffic per pass at 127K p = 2
/// tets on the H100.
template <int P, int kMaxQ> struct CooperativeHessian {
    static constexpr int m = lagrange_tet_num_nodes(P);
    /// Elements per block: as many as 128 threads hold, within 48 KB of shared memory.
    static constexpr int kElements = (128 / m) * kMaxQ * (m * 3 + 91) * 4 <= 48 * 1024
                                         ? 128 / m
                                         : 48 * 1024 / (kMaxQ * (m * 3 + 91) * 4);
    static constexpr int kChunk = 10; ///< blocks K_ab summed in registers at a time
    struct Point {
        float g[m][3]; ///< rest shape gradients
        float D[9][9]; ///< w dP/dF
        float Pk[9];   ///< w P
        float energy;  ///< w psi
    };
};

template <int P, int kMaxQ, class Material>
__global__ void __launch_bounds__(128)
    element_hessian_cooperative_kernel(Material material, const RestElement<float>* rest,
                                       QuadratureTet<float> rule, const Index* cell_nodes,
                                       Index num_cells, const float* y, bool project, float* energy,
                                       float* forces, float* blocks) {
    using H = CooperativeHessian<P, kMaxQ>;
    constexpr int m = H::m;
    __shared__ typename H::Point points[H::kElements][kMaxQ];
    const int local = threadIdx.x / m, a = threadIdx.x % m;
    const Index t = static_cast<Index>(blockIdx.x) * H::kElements + local;
    const bool active = local < H::kElements && t < num_cells;
    const int nq = rule.num_points;
    if (active && a < nq) {
        // Point a of element t.
        typename H::Point& pt = points[local][a];
        const RestElement<float> r = rest[t];
        element_shape_gradients<P>(r, rule.bary[a], pt.g);
        float x[m][3];
        for (int k = 0; k < m; ++k) {
            const Index node = cell_nodes[static_cast<std::int64_t>(t) * m + k];
            for (int d = 0; d < 3; ++d) x[k][d] = y[3 * node + d];
        }
        const Mat3<float> F = element_deformation_gradient<m>(x, pt.g, /*displacement_form=*/true);
        const float w = rule.weight[a] * r.abs_det;
        float psi;
        Mat3<float> Pk;
        material.evaluate(F, psi, Pk, pt.D, project);
        for (int i = 0; i < 9; ++i)
            for (int j = 0; j < 9; ++j) pt.D[i][j] *= w;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) pt.Pk[3 * i + j] = w * Pk.m[i][j];
        pt.energy = w * psi;
    }
    __syncthreads();
    if (!active) return;
    if (a == 0) {
        float e = 0;
        for (int q = 0; q < nq; ++q) e += points[local][q].energy;
        energy[t] = e;
    }
    // Row a: the force on node a and the blocks K_ab, b = 0..m-1, kChunk blocks at a time.
    float f[3] = {0, 0, 0};
    for (int q = 0; q < nq; ++q) {
        const typename H::Point& pt = points[local][q];
        for (int rr = 0; rr < 3; ++rr)
            f[rr] += pt.Pk[3 * rr] * pt.g[a][0] + pt.Pk[3 * rr + 1] * pt.g[a][1] +
                     pt.Pk[3 * rr + 2] * pt.g[a][2];
    }
    float* fo = forces + (static_cast<std::int64_t>(t) * m + a) * 3;
    fo[0] = f[0], fo[1] = f[1], fo[2] = f[2];
    float* row = blocks + (static_cast<std::int64_t>(t) * m + a) * m * 9;
    constexpr int kChunk = H::kChunk < m ? H::kChunk : m;
    for (int b0 = 0; b0 < m; b0 += kChunk) {
        float acc[kChunk][9];
        for (int b = 0; b < kChunk; ++b)
            for (int k = 0; k < 9; ++k) acc[b][k] = 0;
        for (int q = 0; q < nq; ++q) {
            const typename H::Point& pt = points[local][q];
            const float ga0 = pt.g[a][0], ga1 = pt.g[a][1], ga2 = pt.g[a][2];
            // A[r][c][l] = sum_j D[3r+j][3c+l] g_a[j]
            float A[3][9];
            for (int rr = 0; rr < 3; ++rr)
                for (int cl = 0; cl < 9; ++cl)
                    A[rr][cl] = pt.D[3 * rr][cl] * ga0 + pt.D[3 * rr + 1][cl] * ga1 +
                                pt.D[3 * rr + 2][cl] * ga2;
            for (int b = 0; b < kChunk && b0 + b < m; ++b) {
                const float gb0 = pt.g[b0 + b][0], gb1 = pt.g[b0 + b][1], gb2 = pt.g[b0 + b][2];
                for (int rr = 0; rr < 3; ++rr)
                    for (int c = 0; c < 3; ++c)
                        acc[b][3 * rr + c] +=
                            A[rr][3 * c] * gb0 + A[rr][3 * c + 1] * gb1 + A[rr][3 * c + 2] * gb2;
            }
        }
        for (int b = 0; b < kChunk && b0 + b < m; ++b)
            for (int k = 0; k < 9; ++k) row[9 * (b0 + b) + k] = acc[b][k];
    }
}

/// Per node: inertia, damping, gravity and ground terms; energy per node and (optionally) the
/// full gradient with the element forces gathered through node->cells.
__global__ void node_kernel(NodeTerms terms, NodeCellsView nc, const Index* cell_nodes, int m,
                            const float* mass, const std::uint8_t* fixed, const float* rest_x,
                            const float* y, const float* y_tilde, const float* x_start,
                            const float* forces, Index n, bool with_gradient, float* node_energy,
                            float* gradient) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float e = 0, g[3];
    for (int d = 0; d < 3; ++d) {
        const std::int64_t k = 3 * static_cast<std::int64_t>(i) + d;
        const float dy = terms.inertia > 0 ? y[k] - y_tilde[k] : 0.f;
        const float dv = y[k] - x_start[k];
        // Gravity work measured from x_start: the potential differs from the CPU's by a constant,
        // and float keeps the digits that the line search compares.
        e += 0.5f * mass[i] * (terms.inertia * dy * dy + terms.damping * dv * dv) -
             mass[i] * terms.gravity[d] * dv;
        g[d] = mass[i] * (terms.inertia * dy + terms.damping * dv - terms.gravity[d]);
    }
    if (terms.has_ground) {
        const float pen = rest_x[3 * i + 2] + y[3 * i + 2] - terms.ground_height;
        if (pen < 0) {
            e += 0.5f * terms.ground_stiffness * pen * pen;
            g[2] += terms.ground_stiffness * pen;
        }
    }
    node_energy[i] = e;
    if (!with_gradient) return;
    Index simplex = 0;
    const CsrView& csr = nc.csr_of(i, simplex);
    for (Index k = csr.offsets[simplex]; k < csr.offsets[simplex + 1]; ++k) {
        const Index t = csr.indices[k];
        int a = 0;
        while (cell_nodes[static_cast<std::int64_t>(t) * m + a] != i) ++a;
        const float* f = forces + (static_cast<std::int64_t>(t) * m + a) * 3;
        g[0] += f[0], g[1] += f[1], g[2] += f[2];
    }
    const bool pinned = fixed[i] != 0;
    for (int d = 0; d < 3; ++d) gradient[3 * i + d] = pinned ? 0.f : g[d];
}

/// Drag spring: energy into slot 0 of `extra`, gradient added to its three vertices.
__global__ void drag_kernel(DragSpring drag_in, const float* rest_x, const float* y,
                            const std::uint8_t* fixed, bool with_gradient, float* extra,
                            float* gradient) {
    float p[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k)
        for (int d = 0; d < 3; ++d)
            p[d] += float(drag_in.weights[k]) *
                    (rest_x[3 * drag_in.vertices[k] + d] + y[3 * drag_in.vertices[k] + d]);
    float e = 0;
    for (int d = 0; d < 3; ++d) {
        const float diff = p[d] - float(drag_in.target[d]);
        e += 0.5f * float(drag_in.stiffness) * diff * diff;
        if (with_gradient)
            for (int k = 0; k < 3; ++k)
                if (!fixed[drag_in.vertices[k]])
                    gradient[3 * drag_in.vertices[k] + d] +=
                        float(drag_in.stiffness * drag_in.weights[k]) * diff;
    }
    extra[0] = e;
}

__global__ void add_diagonal_kernel(const float* mass, float scale, const float* rest_x,
                                    const float* y, NodeTerms terms, Index n, float* diag) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float add = mass[i] * scale;
    diag[i] += add, diag[4 * static_cast<std::int64_t>(n) + i] += add;
    diag[8 * static_cast<std::int64_t>(n) + i] += add;
    if (terms.has_ground && rest_x[3 * i + 2] + y[3 * i + 2] < terms.ground_height)
        diag[8 * static_cast<std::int64_t>(n) + i] += terms.ground_stiffness;
}

__global__ void add_drag_hessian_kernel(DragSpring drag_in, BinBcsrMatrixView<float> a) {
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

/// Sum of floats (kDot: of products a_k b_k, formed in double) in double, in a fixed order:
/// grid-stride per thread, block sums, and the last block to finish sums the block partials
/// (cuda/block_reduce.cuh) into *out.
template <bool kDot>
__global__ void reduce_kernel(const float* a, const float* b, std::int64_t n, double* partials,
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

__global__ void kinetic_kernel(const float* mass, const float* v, Index n, float* out) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float* vi = v + 3 * static_cast<std::int64_t>(i);
    out[i] = 0.5f * mass[i] * (vi[0] * vi[0] + vi[1] * vi[1] + vi[2] * vi[2]);
}

/// x = X + u (node positions from displacements), for device_positions().
__global__ void positions_kernel(const float* rest_x, const float* u, std::int64_t n, float* x) {
    const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < n) x[k] = rest_x[k] + u[k];
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

__global__ void axpy_kernel(const float* y, float alpha, const float* dx, std::int64_t n,
                            float* out) {
    const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < n) out[k] = y[k] + alpha * dx[k];
}

__global__ void negate_kernel(const float* a, std::int64_t n, float* out) {
    const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < n) out[k] = -a[k];
}

__global__ void fallback_direction_kernel(const float* g, const float* mass,
                                          const std::uint8_t* fixed, float scale, Index n,
                                          float* dx) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int d = 0; d < 3; ++d) dx[3 * i + d] = fixed[i] ? 0.f : -g[3 * i + d] / (mass[i] * scale);
}

__global__ void predictor_kernel(const float* x, const float* v, const std::uint8_t* fixed, float h,
                                 bool dynamic, Index n, float* y_tilde, float* y) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int d = 0; d < 3; ++d) {
        const std::int64_t k = 3 * static_cast<std::int64_t>(i) + d;
        y_tilde[k] = x[k] + (dynamic ? h * v[k] : 0.f);
        y[k] = (dynamic && !fixed[i]) ? y_tilde[k] : x[k];
    }
}

/// New state from the minimiser y; non-finite values are flagged in `bad`.
__global__ void update_state_kernel(const float* y, const float* x_start, const std::uint8_t* fixed,
                                    int integrator, float dt, Index n, float* x, float* v,
                                    int* bad) {
    const Index i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int d = 0; d < 3; ++d) {
        const std::int64_t k = 3 * static_cast<std::int64_t>(i) + d;
        float xn, vn;
        if (integrator == int(Integrator::Midpoint)) {
            xn = 2.f * y[k] - x_start[k];
            vn = 4.f * (y[k] - x_start[k]) / dt - v[k];
        } else if (integrator == int(Integrator::BackwardEuler)) {
            xn = y[k];
            vn = (y[k] - x_start[k]) / dt;
        } else {
            xn = y[k];
            vn = 0.f;
        }
        if (fixed[i]) vn = 0.f;
        if (!isfinite(xn) || !isfinite(vn)) atomicExch(bad, 1);
        x[k] = xn, v[k] = vn;
    }
}

template <int P, class Material>
__global__ void von_mises_kernel(Material material, const RestElement<float>* rest,
                                 QuadratureTet<float> centroid, const Index* cell_nodes,
                                 Index num_cells, const float* y, float* out) {
    constexpr int m = lagrange_tet_num_nodes(P);
    const Index t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= num_cells) return;
    float dN[m][3];
    LagrangeTet<P, float>::grad(centroid.bary[0], dN);
    Mat3<float> F;
    for (int r = 0; r < 3; ++r)
        for (int j = 0; j < 3; ++j) {
            float s = 0;
            for (int a = 0; a < m; ++a) {
                const float g = rest[t].inverse_jacobian[0][j] * dN[a][0] +
                                rest[t].inverse_jacobian[1][j] * dN[a][1] +
                                rest[t].inverse_jacobian[2][j] * dN[a][2];
                s += y[3 * cell_nodes[static_cast<std::int64_t>(t) * m + a] + r] * g;
            }
            F.m[r][j] = s + (r == j ? 1.f : 0.f); // y holds displacements
        }
    float psi;
    Mat3<float> Pk;
    material.evaluate(F, psi, Pk, nullptr, false);
    out[t] = von_mises(Pk, F);
}

} // namespace edn::cuda_simulation
