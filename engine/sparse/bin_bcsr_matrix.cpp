#include "sparse/bin_bcsr_matrix.hpp"

#include "core/atomic_file.hpp"

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <limits>

namespace edn {

template <class T> T BinBcsrMatrix<T>::entry(Index row, Index col, int r, int c) const {
    const int k = 3 * r + c;
    if (row == col) return diag[static_cast<std::size_t>(k) * pattern->num_rows + row];
    const Index slot = pattern->find_slot(row, col);
    if (slot < 0) return T(0);
    const Index bin = row / kBinRows;
    const Index j = (slot - pattern->bin_offsets[bin]) / kBinRows;
    return values[bin_bcsr_value_index(pattern->bin_offsets.data(), row, j, k)];
}

template <class T> std::vector<CooEntry<T>> to_coo(const BinBcsrMatrix<T>& matrix) {
    const BinBcsrPattern& p = *matrix.pattern;
    std::vector<CooEntry<T>> coo;
    coo.reserve(9 * static_cast<std::size_t>(p.nnz_blocks()));
    for (Index row = 0; row < p.num_rows; ++row) {
        const Index bin = row / kBinRows, lane = row % kBinRows;
        for (int r = 0; r < 3; ++r) {
            // Columns in ascending node order with the diagonal block merged in.
            bool diag_done = false;
            auto emit_diag = [&] {
                for (int c = 0; c < 3; ++c)
                    coo.push_back({3 * std::int64_t(row) + r, 3 * std::int64_t(row) + c,
                                   matrix.diag[(3 * r + c) * std::size_t(p.num_rows) + row]});
                diag_done = true;
            };
            for (Index j = 0; j < p.row_counts[row]; ++j) {
                const Index col = p.columns[p.bin_offsets[bin] + j * kBinRows + lane];
                if (!diag_done && col > row) emit_diag();
                for (int c = 0; c < 3; ++c)
                    coo.push_back({3 * std::int64_t(row) + r, 3 * std::int64_t(col) + c,
                                   matrix.values[bin_bcsr_value_index(p.bin_offsets.data(), row, j,
                                                                      3 * r + c)]});
            }
            if (!diag_done) emit_diag();
        }
    }
    return coo;
}

template <class T>
void write_matrix_market(const std::filesystem::path& path, const BinBcsrMatrix<T>& matrix) {
    const auto coo = to_coo(matrix);
    const std::int64_t n = 3 * std::int64_t(matrix.pattern->num_rows);
    write_file_atomically(path, [&](std::ostream& out) {
        out << "%%MatrixMarket matrix coordinate real general\n"
            << "% elastodyn: dof index 3*node+axis (1-based here)\n"
            << n << ' ' << n << ' ' << coo.size() << '\n';
        out << std::setprecision(std::numeric_limits<T>::max_digits10);
        for (const auto& e : coo) out << e.row + 1 << ' ' << e.col + 1 << ' ' << e.value << '\n';
    });
}

template struct BinBcsrMatrix<float>;
template struct BinBcsrMatrix<double>;
template std::vector<CooEntry<float>> to_coo(const BinBcsrMatrix<float>&);
template std::vector<CooEntry<double>> to_coo(const BinBcsrMatrix<double>&);
template void write_matrix_market(const std::filesystem::path&, const BinBcsrMatrix<float>&);
template void write_matrix_market(const std::filesystem::path&, const BinBcsrMatrix<double>&);

} // namespace edn
