#include "mesh/tet_mesh.hpp"

#include "core/error.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <tuple>
#include <utility>

namespace edn {

namespace {

Vec3 sub(const Vec3& a, const Vec3& b) {
    return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}

double norm(const Vec3& a) {
    return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

/// Union-find with path halving; enough for component counting of a few million vertices.
struct DisjointSets {
    std::vector<Index> parent;
    explicit DisjointSets(Index n) : parent(static_cast<std::size_t>(n)) {
        std::iota(parent.begin(), parent.end(), Index{0});
    }
    Index find(Index x) {
        while (parent[x] != x) {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        return x;
    }
    void unite(Index a, Index b) {
        a = find(a);
        b = find(b);
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
};

/// Mean of the six edge lengths of a cell: the length scale its volume is compared with.
double mean_edge_length(const TetMesh& mesh, const Cell& cell) {
    double sum = 0.0;
    for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j)
            sum += norm(sub(mesh.positions[cell[j]], mesh.positions[cell[i]]));
    return sum / 6.0;
}

} // namespace

double signed_volume(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
    const Vec3 u = sub(b, a);
    const Vec3 v = sub(c, a);
    const Vec3 w = sub(d, a);
    const double det = (u[1] * v[2] - u[2] * v[1]) * w[0] + (u[2] * v[0] - u[0] * v[2]) * w[1] +
                       (u[0] * v[1] - u[1] * v[0]) * w[2];
    return det / 6.0;
}

double total_volume(const TetMesh& mesh) {
    double volume = 0;
    for (const Cell& c : mesh.cells)
        volume += signed_volume(mesh.positions[c[0]], mesh.positions[c[1]], mesh.positions[c[2]],
                                mesh.positions[c[3]]);
    return volume;
}

Index count_components(const TetMesh& mesh) {
    const Index num_vertices = mesh.num_vertices();
    DisjointSets sets(num_vertices);
    std::vector<char> referenced(static_cast<std::size_t>(num_vertices), 0);
    for (const Cell& cell : mesh.cells) {
        for (Index v : cell) {
            EDN_ASSERT(v >= 0 && v < num_vertices, "cell vertex " << v << " out of range");
            referenced[v] = 1;
        }
        for (int k = 1; k < 4; ++k) sets.unite(cell[0], cell[k]);
    }
    Index components = 0;
    for (Index v = 0; v < num_vertices; ++v)
        if (referenced[v] && sets.find(v) == v) ++components;
    return components;
}

TetMeshValidation validate_tet_mesh(TetMesh& mesh, const std::string& source) {
    // Messages number vertices and cells from 1 in the order the file lists them (one numbering
    // for every input message, as OBJ's); a .node file may count from 0 and a .msh file uses
    // tags, hence the note.
    constexpr const char* numbered = " (1-based, in file order)";
    TetMeshValidation result;
    const Index num_vertices = mesh.num_vertices();
    const Index num_cells = mesh.num_cells();
    EDN_VERIFY(num_cells > 0, ErrorCode::EmptyMesh, source << ": no tetrahedra");

    for (Index c = 0; c < num_cells; ++c) {
        const Cell& cell = mesh.cells[c];
        for (Index v : cell)
            EDN_VERIFY(v >= 0 && v < num_vertices, ErrorCode::IndexOutOfRange,
                       source << ": cell " << c + 1 << numbered << " references vertex " << v + 1LL
                              << " of " << num_vertices);
        for (int i = 0; i < 4; ++i)
            for (int j = i + 1; j < 4; ++j)
                EDN_VERIFY(cell[i] != cell[j], ErrorCode::DegenerateElement,
                           source << ": cell " << c + 1 << numbered << " repeats vertex "
                                  << cell[i] + 1LL);
    }
    for (Index v = 0; v < num_vertices; ++v) {
        const Vec3& p = mesh.positions[v];
        EDN_VERIFY(std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]),
                   ErrorCode::NonFinite,
                   source << ": vertex " << v + 1 << numbered << " has a non-finite coordinate");
        for (double x : p)
            EDN_VERIFY(std::abs(x) <= kMaxCoordinate, ErrorCode::NonFinite,
                       source << ": vertex " << v + 1 << numbered << " has coordinate " << x
                              << ", out of range (|x| <= " << kMaxCoordinate
                              << ": volumes would overflow)");
    }

    // Duplicates: sort the cells by their sorted vertex sets, so any vertex order matches.
    {
        std::vector<std::pair<Cell, Index>> keyed(static_cast<std::size_t>(num_cells));
        for (Index c = 0; c < num_cells; ++c) {
            Cell key = mesh.cells[c];
            std::sort(key.begin(), key.end());
            keyed[c] = {key, c};
        }
        std::sort(keyed.begin(), keyed.end());
        Index duplicates = 0;
        Index first = num_cells;
        for (std::size_t i = 1; i < keyed.size(); ++i) {
            if (keyed[i].first == keyed[i - 1].first) {
                ++duplicates;
                first = std::min(first, keyed[i].second); // the later copy of the pair
            }
        }
        EDN_VERIFY(duplicates == 0, ErrorCode::DuplicateElement,
                   source << ": " << duplicates << " duplicate cells, first is cell " << first + 1
                          << numbered);
    }

    // Zero volume is judged against the cell's own size (|6V| vs mean edge length cubed), so
    // graded meshes with tiny but well-shaped cells pass while flat slivers do not. A regular
    // tetrahedron has |6V| = L^3/sqrt(2).
    {
        constexpr double relative_tolerance = 1e-10;
        Index zero = 0;
        Index first = -1;
        for (Index c = 0; c < num_cells; ++c) {
            Cell& cell = mesh.cells[c];
            const double volume = signed_volume(mesh.positions[cell[0]], mesh.positions[cell[1]],
                                                mesh.positions[cell[2]], mesh.positions[cell[3]]);
            const double length = mean_edge_length(mesh, cell);
            if (std::abs(6.0 * volume) <= relative_tolerance * length * length * length) {
                if (zero++ == 0) first = c;
                continue;
            }
            if (volume < 0.0) {
                std::swap(cell[2], cell[3]);
                ++result.reoriented_cells;
            }
        }
        EDN_VERIFY(zero == 0, ErrorCode::DegenerateElement,
                   source << ": " << zero << " zero-volume cells, first is cell " << first + 1
                          << numbered);
    }

    // Faces: at most two cells per face, and two cells that share a face lie on opposite sides
    // of it (otherwise they overlap: a fold, or a cell inside another). Vertex ids are checked
    // for range above; volumes are non-zero, so the sides are well defined.
    {
        struct FaceUse {
            std::array<Index, 3> face; ///< sorted vertex ids
            Index cell;
            Index opposite; ///< the cell's fourth vertex
            bool operator<(const FaceUse& other) const {
                return std::tie(face, cell) < std::tie(other.face, other.cell);
            }
        };
        std::vector<FaceUse> uses;
        uses.reserve(4 * static_cast<std::size_t>(num_cells));
        for (Index c = 0; c < num_cells; ++c)
            for (int skip = 0; skip < 4; ++skip) {
                std::array<Index, 3> face{};
                int n = 0;
                for (int k = 0; k < 4; ++k)
                    if (k != skip) face[n++] = mesh.cells[c][k];
                std::sort(face.begin(), face.end());
                uses.push_back({face, c, mesh.cells[c][skip]});
            }
        std::sort(uses.begin(), uses.end());
        for (std::size_t i = 0; i < uses.size();) {
            std::size_t j = i + 1;
            while (j < uses.size() && uses[j].face == uses[i].face) ++j;
            const auto& [a, b, c] = uses[i].face;
            EDN_VERIFY(j - i <= 2, ErrorCode::NonManifold,
                       source << ": face (" << a + 1 << "," << b + 1 << "," << c + 1
                              << ") is shared by " << j - i << " cells (" << uses[i].cell + 1
                              << ", " << uses[i + 1].cell + 1 << ", " << uses[i + 2].cell + 1
                              << (j - i > 3 ? ", ..." : "") << ")" << numbered);
            if (j - i == 2) {
                const Vec3 &pa = mesh.positions[a], &pb = mesh.positions[b],
                           &pc = mesh.positions[c];
                const double side0 = signed_volume(pa, pb, pc, mesh.positions[uses[i].opposite]);
                const double side1 =
                    signed_volume(pa, pb, pc, mesh.positions[uses[i + 1].opposite]);
                EDN_VERIFY((side0 > 0) != (side1 > 0), ErrorCode::DegenerateElement,
                           source << ": cells " << uses[i].cell + 1 << " and "
                                  << uses[i + 1].cell + 1
                                  << " overlap (both lie on the same side of their shared face ("
                                  << a + 1 << "," << b + 1 << "," << c + 1 << "))" << numbered);
            }
            i = j;
        }
    }

    // Drop unreferenced vertices, keeping the order of the others.
    {
        std::vector<Index> new_index(static_cast<std::size_t>(num_vertices), -1);
        for (const Cell& cell : mesh.cells)
            for (Index v : cell) new_index[v] = 0;
        Index next = 0;
        std::vector<Vec3> kept;
        kept.reserve(mesh.positions.size());
        for (Index v = 0; v < num_vertices; ++v) {
            if (new_index[v] < 0) continue;
            new_index[v] = next++;
            kept.push_back(mesh.positions[v]);
        }
        result.dropped_vertices = num_vertices - next;
        if (result.dropped_vertices > 0) {
            for (Cell& cell : mesh.cells)
                for (Index& v : cell) v = new_index[v];
            mesh.positions = std::move(kept);
        }
    }

    result.components = count_components(mesh);
    return result;
}

} // namespace edn
