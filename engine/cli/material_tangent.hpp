#pragma once
/// Energy, gradient and exact tangent of a whole mesh at given node displacements, on the CPU in
/// double (the reference that `export` writes and other codes compare with).

#include "fem/linear_elasticity.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/topology.hpp"
#include "sim/simulation.hpp"
#include "sparse/bin_bcsr_matrix.hpp"

#include <optional>
#include <string_view>
#include <vector>

namespace edn::cli {

/// Material models of the export command: the simulation's (sim/simulation.hpp).
using MaterialKind = Material;

/// W, dW/dx and d2W/dx2 of the mesh.
struct MaterialTangent {
    double energy = 0;               ///< total strain energy W
    std::vector<double> gradient;    ///< 3 #nodes: dW/dx
    BinBcsrMatrix<double> stiffness; ///< the exact (unprojected) tangent
};

/// Evaluates material `kind` with Lame parameters `lame` at x = rest + displacement.
MaterialTangent material_tangent(MaterialKind kind, const LameParameters<double>& lame,
                                 const TetMesh& mesh, const Topology& topology,
                                 const NodeLayout& layout, const BinBcsrPattern& pattern,
                                 const std::vector<Vec3>& rest,
                                 const std::vector<double>& displacement);

} // namespace edn::cli
