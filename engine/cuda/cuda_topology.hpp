#pragma once
/// CUDA twins of the topology kernels in mesh/topology.hpp (same results, device execution).
/// In a build without CUDA every function throws edn::Error(ErrorCode::Unsupported).

#include "core/types.hpp"

#include <span>
#include <vector>

namespace edn::cuda {

/// #V counts: how many cells reference each vertex (the row lengths of vertexCells).
std::vector<Index> vertex_cell_counts(std::span<const Cell> cells, Index num_vertices);

} // namespace edn::cuda
