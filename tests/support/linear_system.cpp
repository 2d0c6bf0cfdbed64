#include "support/linear_system.hpp"

#include <algorithm>

namespace edn::test {

BinBcsrMatrix<double> shifted_stiffness(const AssemblyFixture& f, double shift_fraction,
                                        DiagonalMean mean, double* shift) {
    BinBcsrMatrix<double> a(f.pattern);
    const PerEntryMap map = cpu::build_per_entry_map(f.pattern, f.cell_nodes_view());
    cpu::sum_per_entry(map.view(), f.element_blocks.data(), a.view());
    const std::size_t n = static_cast<std::size_t>(f.pattern.num_rows);
    double average = 0;
    for (std::size_t row = 0; row < n; ++row)
        average += mean == DiagonalMean::AllAxes
                       ? (a.diag[row] + a.diag[4 * n + row] + a.diag[8 * n + row]) / (3.0 * n)
                       : a.diag[row] / double(n);
    const double c = shift_fraction * average;
    for (std::size_t row = 0; row < n; ++row)
        for (int d = 0; d < 3; ++d) a.diag[4 * d * n + row] += c;
    if (shift) *shift = c;
    return a;
}

BinBcsrMatrix<float> to_float(const BinBcsrMatrix<double>& a) {
    BinBcsrMatrix<float> af(*a.pattern);
    std::copy(a.values.begin(), a.values.end(), af.values.begin());
    std::copy(a.diag.begin(), a.diag.end(), af.diag.begin());
    return af;
}

LinearSystem::LinearSystem(const TetMesh& mesh, int order, double shift_fraction, DiagonalMean mean)
    : f(std::make_unique<AssemblyFixture>(mesh, order)),
      a(shifted_stiffness(*f, shift_fraction, mean, &shift)), af(to_float(a)) {}

void LinearSystem::negate() {
    for (double& v : a.values) v = -v;
    for (double& v : a.diag) v = -v;
    af = to_float(a);
}

std::vector<std::uint8_t> LinearSystem::bottom_nodes() const {
    const std::vector<Vec3> nodes = node_positions(f->mesh, f->topology, f->layout);
    std::vector<std::uint8_t> fixed(nodes.size(), 0);
    for (std::size_t i = 0; i < nodes.size(); ++i) fixed[i] = nodes[i][2] < 1e-9 ? 1 : 0;
    return fixed;
}

} // namespace edn::test
