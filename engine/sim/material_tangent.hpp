#pragma once
/// Energy, gradient and exact tangent of a whole mesh at given node displacements, on the CPU in
/// double: the reference that `export` writes and other codes compare with, and the matrix of
/// `bench solve` (the element blocks also give the two-level preconditioner's coarse matrix).

#include "fem/linear_elasticity.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sim/simulation.hpp"
#include "sparse/bin_bcsr_matrix.hpp"

#include <vector>

namespace edn {

/// W, dW/dx and d2W/dx2 of the mesh.
struct MaterialTangent {
    double energy = 0;               ///< total strain energy W
    std::vector<double> gradient;    ///< 3 #nodes: dW/dx
    BinBcsrMatrix<double> stiffness; ///< the exact (unprojected) tangent
    /// #cells x m x m x 9 element Hessians summed into `stiffness` (the layout of element blocks
    /// everywhere, see sparse/summation.hpp).
    std::vector<double> element_blocks;
};

/// Evaluates material `kind` with Lame parameters `lame` at x = rest + displacement.
/// @param[in] rest          #nodes node rest positions (node_positions of mesh/node_layout.hpp)
/// @param[in] displacement  3 #nodes (dof 3*node+axis)
MaterialTangent material_tangent(Material kind, const LameParameters<double>& lame,
                                 const TetMesh& mesh, const Topology& topology,
                                 const NodeLayout& layout, const BinBcsrPattern& pattern,
                                 const std::vector<Vec3>& rest,
                                 const std::vector<double>& displacement);

} // namespace edn
