#pragma once
/// Per-entry summation as the elements come (CPU, one thread): each element's Hessian blocks are
/// added to their targets right after the element is evaluated, instead of being stored (4.5 MB
/// at 3.9K p = 1 cells) and gathered back by the per-entry map. Elements are added in cell
/// order, which is each target's source order in the per-entry map (sources ascending), so the
/// sums equal cpu::sum_per_entry's bit for bit.

#include "sparse/bin_bcsr_matrix.hpp"
#include "sparse/bin_bcsr_pattern.hpp"
#include "sparse/summation.hpp"

#include <cstdint>
#include <vector>

namespace edn::cpu {

/// The running sum of element blocks over a fixed pattern; each block's 9 entries together (an
/// added block is one or two cache lines, not one line in each of the matrix's 9 planes).
class ElementSum {
public:
    /// The targets of every element block of `cells` in `pattern`.
    ElementSum(const BinBcsrPattern& pattern, const CellNodesView& cells);

    /// Zeroes the sum (the start of an evaluation).
    void clear();
    /// Adds cell t's blocks (per_cell x per_cell blocks of 9, row-major 3x3, as element kernels
    /// write them).
    void add(std::int64_t t, const double* blocks) {
        const Index* targets = targets_.data() + t * blocks_per_cell_;
        for (int e = 0; e < blocks_per_cell_; ++e) {
            const Index target = targets[e];
            double* sum = target < 0 ? diag_.data() + 9 * std::int64_t(-1 - target)
                                     : values_.data() + 9 * std::int64_t(target);
            for (int k = 0; k < 9; ++k) sum[k] += blocks[9 * e + k];
        }
    }
    /// Writes the sum into `out`'s layout (values and diagonal overwritten).
    void copy_to(BinBcsrMatrixView<double> out) const;

private:
    const BinBcsrPattern* pattern_;
    int blocks_per_cell_;
    /// Per (cell, a, b): the block's slot, or -1 - row for a diagonal block.
    std::vector<Index> targets_;
    std::vector<double> values_; ///< 9 per slot
    std::vector<double> diag_;   ///< 9 per row
};

} // namespace edn::cpu
