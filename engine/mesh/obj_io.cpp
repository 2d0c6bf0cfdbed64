#include "mesh/obj_io.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/vec3_ops.hpp"
#include "mesh/shell_nesting.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <limits>
#include <numeric>
#include <sstream>
#include <string_view>
#include <tiny_obj_loader.h>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace edn {

namespace {

/// Whole file as bytes; Io when it cannot be opened or read (missing, directory, permissions).
std::string read_all(const std::filesystem::path& path) {
    verify_regular_file(path);
    std::ifstream in(path, std::ios::binary);
    EDN_VERIFY(in.good(), ErrorCode::Io, path.string() << ": cannot open for reading");
    std::ostringstream buffer;
    buffer << in.rdbuf();
    EDN_VERIFY(!in.bad(), ErrorCode::Io, path.string() << ": read failed");
    return std::move(buffer).str();
}

/// tinyobjloader reads past NULs and control bytes in unpredictable ways, so a file that is not
/// text is rejected before it ever sees it.
void verify_text(const std::string& text, const std::filesystem::path& path) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        const bool control = byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r' &&
                             byte != '\v' && byte != '\f';
        EDN_VERIFY(!control && byte != 0x7f, ErrorCode::Parse,
                   path.string() << ": not a text OBJ file (binary byte 0x" << std::hex
                                 << static_cast<int>(byte) << std::dec << " at offset " << i
                                 << ")");
    }
}

/// Splits `text` into lines (\n, \r\n or \r) and calls visit(line_number, line).
template <class Visit> void for_each_line(const std::string& text, Visit&& visit) {
    std::size_t start = 0;
    int line_number = 1;
    while (start < text.size()) {
        std::size_t end = text.find_first_of("\r\n", start);
        if (end == std::string::npos) end = text.size();
        visit(line_number, std::string_view(text).substr(start, end - start));
        if (end < text.size() && text[end] == '\r' && end + 1 < text.size() &&
            text[end + 1] == '\n')
            ++end;
        start = end + 1;
        ++line_number;
    }
}

/// Whitespace-separated tokens of a line, stopping at a '#' comment.
std::vector<std::string_view> tokens_of(std::string_view line) {
    std::vector<std::string_view> tokens;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
        if (i >= line.size() || line[i] == '#') break;
        std::size_t j = i;
        while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
        tokens.push_back(line.substr(i, j - i));
        i = j;
    }
    return tokens;
}

bool parse_double(std::string_view token, double& value) {
    const std::string copy(token);
    char* end = nullptr;
    errno = 0;
    value = std::strtod(copy.c_str(), &end);
    return end == copy.c_str() + copy.size() && !copy.empty();
}

bool parse_long(std::string_view token, long long& value) {
    const std::string copy(token);
    char* end = nullptr;
    errno = 0;
    value = std::strtoll(copy.c_str(), &end, 10);
    return end == copy.c_str() + copy.size() && !copy.empty() && errno != ERANGE;
}

/// What the pre-scan learns: our own double-precision vertex coordinates (tinyobjloader may be
/// built with float) and the number of faces.
struct ObjScan {
    std::vector<Vec3> positions;
    std::size_t faces = 0;
    // Every face's vertices (0-based, relative indices resolved): face f is
    // face_vertices[face_offsets[f], face_offsets[f + 1]), read from line face_lines[f].
    std::vector<Index> face_vertices;
    std::vector<std::size_t> face_offsets{0};
    std::vector<int> face_lines;
};

/// Checks every `v` and `f` line ourselves so that bad indices and non-finite values get a clear
/// message with a line number instead of being skipped or crashing inside tinyobjloader.
ObjScan prescan(const std::string& text, const std::filesystem::path& path) {
    const std::string name = path.string();
    long long total_vertices = 0;
    for_each_line(text, [&](int, std::string_view line) {
        const auto tokens = tokens_of(line);
        if (!tokens.empty() && tokens[0] == "v") ++total_vertices;
    });

    ObjScan scan;
    scan.positions.reserve(static_cast<std::size_t>(total_vertices));
    for_each_line(text, [&](int line_number, std::string_view line) {
        const auto tokens = tokens_of(line);
        if (tokens.empty()) return;
        if (tokens[0] == "v") {
            const std::size_t vertex = scan.positions.size() + 1;
            EDN_VERIFY(tokens.size() >= 4, ErrorCode::Parse,
                       name << ":" << line_number << ": vertex " << vertex
                            << " has fewer than 3 coordinates");
            Vec3 p{};
            for (int k = 0; k < 3; ++k) {
                EDN_VERIFY(parse_double(tokens[1 + k], p[k]), ErrorCode::Parse,
                           name << ":" << line_number << ": vertex " << vertex
                                << ": not a number: '" << tokens[1 + k] << "'");
                EDN_VERIFY(std::isfinite(p[k]), ErrorCode::NonFinite,
                           name << ":" << line_number << ": vertex " << vertex
                                << " has a non-finite coordinate");
                EDN_VERIFY(std::abs(p[k]) <= kMaxCoordinate, ErrorCode::NonFinite,
                           name << ":" << line_number << ": vertex " << vertex << " has coordinate "
                                << tokens[1 + k] << ", out of range (|x| <= " << kMaxCoordinate
                                << ": volumes would overflow)");
            }
            scan.positions.push_back(p);
        } else if (tokens[0] == "f") {
            const std::size_t face = ++scan.faces;
            EDN_VERIFY(tokens.size() >= 4, ErrorCode::Parse,
                       name << ":" << line_number << ": face " << face
                            << " has fewer than 3 vertices");
            const auto preceding = static_cast<long long>(scan.positions.size());
            for (std::size_t k = 1; k < tokens.size(); ++k) {
                const std::string_view index_text = tokens[k].substr(0, tokens[k].find('/'));
                long long index = 0;
                EDN_VERIFY(parse_long(index_text, index), ErrorCode::Parse,
                           name << ":" << line_number << ": face " << face
                                << ": not a vertex index: '" << tokens[k] << "'");
                EDN_VERIFY(index != 0, ErrorCode::IndexOutOfRange,
                           name << ":" << line_number << ": face " << face
                                << " references vertex 0 (OBJ indices start at 1)");
                EDN_VERIFY(index <= total_vertices, ErrorCode::IndexOutOfRange,
                           name << ":" << line_number << ": face " << face << " references vertex "
                                << index << " of " << total_vertices);
                // Negative indices are relative to the vertices defined so far.
                EDN_VERIFY(index > 0 || -index <= preceding, ErrorCode::IndexOutOfRange,
                           name << ":" << line_number << ": face " << face << " references vertex "
                                << index << " but only " << preceding << " vertices precede it");
                scan.face_vertices.push_back(
                    static_cast<Index>(index > 0 ? index - 1 : preceding + index));
            }
            scan.face_offsets.push_back(scan.face_vertices.size());
            scan.face_lines.push_back(line_number);
        }
    });
    return scan;
}

/// Splits polygon `poly` (vertex indices in order) into poly.size() - 2 triangles of its winding by
/// ear clipping in the plane of its Newell normal, so non-convex faces (an L, a gear) come out
/// right wherever they lie. False when no ear is left (a self-intersecting or degenerate polygon).
bool triangulate_polygon(const std::vector<Vec3>& positions, const Index* poly, std::size_t n,
                         std::vector<Tri>& out) {
    if (n == 3) {
        out.push_back({poly[0], poly[1], poly[2]});
        return true;
    }
    Vec3 normal{};
    for (std::size_t i = 0; i < n; ++i) {
        const Vec3& a = positions[poly[i]];
        const Vec3& b = positions[poly[(i + 1) % n]];
        normal[0] += (a[1] - b[1]) * (a[2] + b[2]);
        normal[1] += (a[2] - b[2]) * (a[0] + b[0]);
        normal[2] += (a[0] - b[0]) * (a[1] + b[1]);
    }
    // Drop the normal's dominant axis: the signed area in the plane of the other two, (u, v) in
    // cyclic order, is normal[axis] / 2; mirroring v when it is negative makes the polygon CCW.
    int axis = 0;
    for (int k = 1; k < 3; ++k)
        if (std::abs(normal[k]) > std::abs(normal[axis])) axis = k;
    const int u = (axis + 1) % 3, v = (axis + 2) % 3;
    const double mirror = normal[axis] < 0 ? -1.0 : 1.0;
    std::vector<std::array<double, 2>> p(n);
    for (std::size_t i = 0; i < n; ++i)
        p[i] = {positions[poly[i]][u], mirror * positions[poly[i]][v]};
    const auto cross = [&](std::size_t a, std::size_t b, std::size_t c) {
        return (p[b][0] - p[a][0]) * (p[c][1] - p[a][1]) -
               (p[b][1] - p[a][1]) * (p[c][0] - p[a][0]);
    };
    std::vector<std::size_t> left(n);
    std::iota(left.begin(), left.end(), std::size_t{0});
    std::size_t start = 0;
    while (left.size() > 3) {
        const std::size_t m = left.size();
        bool clipped = false;
        for (std::size_t step = 0; step < m && !clipped; ++step) {
            const std::size_t at = (start + step) % m;
            const std::size_t a = left[(at + m - 1) % m], b = left[at], c = left[(at + 1) % m];
            if (!(cross(a, b, c) > 0)) continue; // reflex or straight: not an ear
            bool empty = true;
            for (std::size_t q : left) {
                if (q == a || q == b || q == c) continue;
                if (cross(a, b, q) >= 0 && cross(b, c, q) >= 0 && cross(c, a, q) >= 0) {
                    empty = false; // a vertex inside or on the candidate ear
                    break;
                }
            }
            if (!empty) continue;
            out.push_back({poly[a], poly[b], poly[c]});
            left.erase(left.begin() + static_cast<std::ptrdiff_t>(at));
            start = at % left.size();
            clipped = true;
        }
        if (!clipped) return false;
    }
    out.push_back({poly[left[0]], poly[left[1]], poly[left[2]]});
    return true;
}

struct CellKey {
    std::int64_t x, y, z;
    bool operator==(const CellKey&) const = default;
};

struct CellKeyHash {
    std::size_t operator()(const CellKey& key) const {
        std::uint64_t h = static_cast<std::uint64_t>(key.x) * 0x9E3779B97F4A7C15ULL;
        h ^= static_cast<std::uint64_t>(key.y) * 0xC2B2AE3D27D4EB4FULL + (h << 6) + (h >> 2);
        h ^= static_cast<std::uint64_t>(key.z) * 0x165667B19E3779F9ULL + (h << 6) + (h >> 2);
        return static_cast<std::size_t>(h);
    }
};

/// Welds vertices closer than 1e-9 x bounding-box diagonal (of the referenced vertices) with a
/// uniform hash grid whose cell is the tolerance, so only 27 neighbouring cells are searched;
/// drops unreferenced vertices. The first vertex of a cluster (in file order) represents it.
/// `first_of`, when given, receives per welded vertex the first input vertex welded into it.
SurfaceMesh weld(const std::vector<Vec3>& positions, const std::vector<Tri>& triangles,
                 std::vector<Index>* first_of = nullptr) {
    const auto n = static_cast<Index>(positions.size());
    std::vector<char> referenced(positions.size(), 0);
    for (const Tri& t : triangles)
        for (Index v : t) referenced[v] = 1;

    Vec3 lo{std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
            std::numeric_limits<double>::max()};
    Vec3 hi{-lo[0], -lo[1], -lo[2]};
    for (Index v = 0; v < n; ++v) {
        if (!referenced[v]) continue;
        for (int k = 0; k < 3; ++k) {
            lo[k] = std::min(lo[k], positions[v][k]);
            hi[k] = std::max(hi[k], positions[v][k]);
        }
    }
    const double diagonal =
        std::sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                  (hi[2] - lo[2]) * (hi[2] - lo[2]));
    const double tolerance = 1e-9 * diagonal;
    const double cell = tolerance > 0.0 ? tolerance : 1.0;

    SurfaceMesh out;
    std::vector<Index> new_index(positions.size(), -1);
    std::unordered_map<CellKey, std::vector<Index>, CellKeyHash> grid;
    for (Index v = 0; v < n; ++v) {
        if (!referenced[v]) continue;
        const Vec3& p = positions[v];
        // Coordinates relative to the box corner keep the cell indices below ~1e9.
        const CellKey key{static_cast<std::int64_t>(std::floor((p[0] - lo[0]) / cell)),
                          static_cast<std::int64_t>(std::floor((p[1] - lo[1]) / cell)),
                          static_cast<std::int64_t>(std::floor((p[2] - lo[2]) / cell))};
        Index found = -1;
        for (int dx = -1; dx <= 1 && found < 0; ++dx)
            for (int dy = -1; dy <= 1 && found < 0; ++dy)
                for (int dz = -1; dz <= 1 && found < 0; ++dz) {
                    auto it = grid.find({key.x + dx, key.y + dy, key.z + dz});
                    if (it == grid.end()) continue;
                    for (Index rep : it->second) {
                        const Vec3& q = out.positions[rep];
                        const double d2 = (p[0] - q[0]) * (p[0] - q[0]) +
                                          (p[1] - q[1]) * (p[1] - q[1]) +
                                          (p[2] - q[2]) * (p[2] - q[2]);
                        if (d2 <= tolerance * tolerance) {
                            found = rep;
                            break;
                        }
                    }
                }
        if (found < 0) {
            found = static_cast<Index>(out.positions.size());
            out.positions.push_back(p);
            if (first_of) first_of->push_back(v);
            grid[key].push_back(found);
        }
        new_index[v] = found;
    }
    out.triangles.reserve(triangles.size());
    for (const Tri& t : triangles)
        out.triangles.push_back({new_index[t[0]], new_index[t[1]], new_index[t[2]]});
    return out;
}

using vec3::cross;
using vec3::dot;
using vec3::sub;

struct DisjointSets {
    std::vector<Index> parent;
    explicit DisjointSets(std::size_t n) : parent(n) {
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

/// One use of an undirected edge by a triangle: which triangle, which local edge (from corner
/// k to corner k+1), and the edge's endpoints sorted.
struct EdgeUse {
    Index lo, hi;
    Index triangle;
    int local;
    bool operator<(const EdgeUse& other) const {
        return std::tie(lo, hi, triangle, local) <
               std::tie(other.lo, other.hi, other.triangle, other.local);
    }
};

int corner_of(const Tri& tri, Index vertex) {
    for (int k = 0; k < 3; ++k)
        if (tri[k] == vertex) return k;
    return -1;
}

} // namespace

SurfaceMesh read_obj_surface(const std::filesystem::path& path, SurfaceOrigin* origin) {
    const std::string name = path.string();
    const std::string text = read_all(path);
    verify_text(text, path);
    ObjScan scan = prescan(text, path);
    EDN_VERIFY(scan.faces > 0, ErrorCode::EmptyMesh,
               name << ": no faces (" << scan.positions.size() << " vertices)");

    tinyobj::ObjReaderConfig config;
    config.triangulate = true;
    config.vertex_color = false;
    tinyobj::ObjReader reader;
    // From a string: `mtllib` lines are ignored, so a missing material file is no error.
    if (!reader.ParseFromString(text, "", config)) {
        std::string error = reader.Error();
        std::replace(error.begin(), error.end(), '\n', ' ');
        EDN_THROW(ErrorCode::Parse, name << ": " << (error.empty() ? "unreadable OBJ" : error));
    }
    const auto& attrib = reader.GetAttrib();
    EDN_VERIFY(attrib.vertices.size() == 3 * scan.positions.size(), ErrorCode::Parse,
               name << ": OBJ reader found " << attrib.vertices.size() / 3 << " vertices, expected "
                    << scan.positions.size());

    // Faces from our own scan (indices checked there), triangulated by ear clipping: the reader's
    // triangulation tests convexity in a way that depends on where a polygon lies and drops what
    // it cannot clip, so non-convex n-gons came out wrong or open.
    std::vector<Tri> triangles;
    triangles.reserve(scan.face_vertices.size());
    for (std::size_t f = 0; f + 1 < scan.face_offsets.size(); ++f) {
        const std::size_t begin = scan.face_offsets[f], count = scan.face_offsets[f + 1] - begin;
        EDN_VERIFY(triangulate_polygon(scan.positions, scan.face_vertices.data() + begin, count,
                                       triangles),
                   ErrorCode::DegenerateElement,
                   name << ":" << scan.face_lines[f] << ": face " << f + 1 << " (" << count
                        << " vertices) cannot be triangulated: self-intersecting or degenerate "
                           "polygon");
        if (origin) {
            origin->file_face.resize(triangles.size(), static_cast<Index>(f));
            origin->file_line.resize(triangles.size(), scan.face_lines[f]);
        }
    }
    EDN_VERIFY(!triangles.empty(), ErrorCode::EmptyMesh, name << ": no faces after triangulation");
    if (!origin) return weld(scan.positions, triangles);
    origin->file_vertex.clear();
    return weld(scan.positions, triangles, &origin->file_vertex);
}

void check_and_orient_surface(SurfaceMesh& surface, const std::string& source,
                              const SurfaceOrigin* origin) {
    const auto num_vertices = static_cast<Index>(surface.positions.size());
    const auto num_triangles = static_cast<Index>(surface.triangles.size());
    EDN_VERIFY(num_triangles > 0, ErrorCode::EmptyMesh, source << ": no faces");
    // Users see one numbering, 1-based: the OBJ file's when known, else the surface's own.
    if (origin)
        EDN_ASSERT(origin->file_vertex.size() == surface.positions.size() &&
                       origin->file_face.size() == surface.triangles.size() &&
                       origin->file_line.size() == surface.triangles.size(),
                   "SurfaceOrigin does not describe this surface");
    auto vertex_number = [&](Index v) -> long long {
        return origin ? static_cast<long long>(origin->file_vertex[v]) + 1 : v + 1LL;
    };
    // "source:line: face F" (the OBJ face the triangle is part of) or "source: triangle T".
    auto face_where = [&](Index t) {
        std::ostringstream where;
        if (origin)
            where << source << ":" << origin->file_line[t] << ": face " << origin->file_face[t] + 1;
        else
            where << source << ": triangle " << t + 1;
        return where.str();
    };
    auto face_number = [&](Index t) -> long long {
        return origin ? static_cast<long long>(origin->file_face[t]) + 1 : t + 1LL;
    };
    const char* face_word = origin ? "faces" : "triangles";
    for (Index t = 0; t < num_triangles; ++t)
        for (Index v : surface.triangles[t])
            EDN_VERIFY(v >= 0 && v < num_vertices, ErrorCode::IndexOutOfRange,
                       source << ": triangle " << t + 1 << " references vertex " << v + 1LL
                              << " of " << num_vertices << " (1-based)");
    for (Index v = 0; v < num_vertices; ++v) {
        const Vec3& p = surface.positions[v];
        EDN_VERIFY(std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]),
                   ErrorCode::NonFinite,
                   source << ": vertex " << vertex_number(v) << " has a non-finite coordinate");
    }

    // Degenerate triangles, with the area tolerance relative to the bounding box.
    Vec3 lo = surface.positions[surface.triangles[0][0]];
    Vec3 hi = lo;
    for (const Tri& tri : surface.triangles)
        for (Index v : tri)
            for (int k = 0; k < 3; ++k) {
                lo[k] = std::min(lo[k], surface.positions[v][k]);
                hi[k] = std::max(hi[k], surface.positions[v][k]);
            }
    const Vec3 extent = sub(hi, lo);
    const double diagonal2 = dot(extent, extent);
    for (Index t = 0; t < num_triangles; ++t) {
        const Tri& tri = surface.triangles[t];
        for (int k = 0; k < 3; ++k)
            EDN_VERIFY(tri[k] != tri[(k + 1) % 3], ErrorCode::DegenerateElement,
                       face_where(t)
                           << " is degenerate (repeated vertex " << vertex_number(tri[k]) << ")");
        const Vec3 normal = cross(sub(surface.positions[tri[1]], surface.positions[tri[0]]),
                                  sub(surface.positions[tri[2]], surface.positions[tri[0]]));
        const double area = 0.5 * std::sqrt(dot(normal, normal));
        EDN_VERIFY(area > 1e-14 * diagonal2, ErrorCode::DegenerateElement,
                   face_where(t) << " is degenerate (zero area)");
    }

    // Edge uses sorted by undirected edge: groups of 1 are boundary, >2 non-manifold.
    std::vector<EdgeUse> uses;
    uses.reserve(3 * surface.triangles.size());
    for (Index t = 0; t < num_triangles; ++t)
        for (int k = 0; k < 3; ++k) {
            const Index a = surface.triangles[t][k];
            const Index b = surface.triangles[t][(k + 1) % 3];
            uses.push_back({std::min(a, b), std::max(a, b), t, k});
        }
    std::sort(uses.begin(), uses.end());
    // neighbour[3t+k]: the triangle across local edge k of t.
    std::vector<Index> neighbour(uses.size(), -1);
    std::size_t boundary_edges = 0;
    for (std::size_t i = 0; i < uses.size();) {
        std::size_t j = i;
        while (j < uses.size() && uses[j].lo == uses[i].lo && uses[j].hi == uses[i].hi) ++j;
        EDN_VERIFY(j - i <= 2, ErrorCode::NonManifold,
                   source << ": non-manifold edge at vertices "
                          << std::min(vertex_number(uses[i].lo), vertex_number(uses[i].hi)) << "-"
                          << std::max(vertex_number(uses[i].lo), vertex_number(uses[i].hi)) << " ("
                          << j - i << " triangles)");
        if (j - i == 1) {
            ++boundary_edges;
        } else {
            neighbour[3 * uses[i].triangle + uses[i].local] = uses[i + 1].triangle;
            neighbour[3 * uses[i + 1].triangle + uses[i + 1].local] = uses[i].triangle;
        }
        i = j;
    }
    EDN_VERIFY(boundary_edges == 0, ErrorCode::OpenSurface,
               source << ": open surface: " << boundary_edges << " boundary edges");

    // Non-manifold vertices: corners at the same vertex joined across shared edges form the
    // fans around it; a manifold vertex of a closed surface has exactly one fan.
    {
        DisjointSets fans(3 * surface.triangles.size());
        for (Index t = 0; t < num_triangles; ++t)
            for (int k = 0; k < 3; ++k) {
                const Index other = neighbour[3 * t + k];
                const Tri& tri = surface.triangles[t];
                for (int end = 0; end < 2; ++end) {
                    const int corner = (k + end) % 3;
                    const int other_corner = corner_of(surface.triangles[other], tri[corner]);
                    EDN_ASSERT(other_corner >= 0, "neighbour does not share the edge");
                    fans.unite(3 * t + corner, 3 * other + other_corner);
                }
            }
        std::vector<std::pair<Index, Index>> vertex_fan;
        vertex_fan.reserve(3 * surface.triangles.size());
        for (Index t = 0; t < num_triangles; ++t)
            for (int k = 0; k < 3; ++k)
                vertex_fan.push_back({surface.triangles[t][k], fans.find(3 * t + k)});
        std::sort(vertex_fan.begin(), vertex_fan.end());
        vertex_fan.erase(std::unique(vertex_fan.begin(), vertex_fan.end()), vertex_fan.end());
        for (std::size_t i = 1; i < vertex_fan.size(); ++i)
            EDN_VERIFY(vertex_fan[i].first != vertex_fan[i - 1].first, ErrorCode::NonManifold,
                       source << ": non-manifold vertex " << vertex_number(vertex_fan[i].first));
    }

    // Consistent orientation by breadth-first search over each component: a neighbour that
    // walks the shared edge in the same direction must be flipped relative to its parent.
    std::vector<signed char> flip(surface.triangles.size(), -1);
    std::vector<Index> queue;
    for (Index seed = 0; seed < num_triangles; ++seed) {
        if (flip[seed] >= 0) continue;
        flip[seed] = 0;
        queue.assign(1, seed);
        for (std::size_t head = 0; head < queue.size(); ++head) {
            const Index t = queue[head];
            const Tri& tri = surface.triangles[t];
            for (int k = 0; k < 3; ++k) {
                const Index other = neighbour[3 * t + k];
                const Tri& other_tri = surface.triangles[other];
                const int a = corner_of(other_tri, tri[k]);
                const bool same_direction = other_tri[(a + 1) % 3] == tri[(k + 1) % 3];
                const signed char wanted = static_cast<signed char>(flip[t] ^ same_direction);
                if (flip[other] < 0) {
                    flip[other] = wanted;
                    queue.push_back(other);
                } else {
                    EDN_VERIFY(flip[other] == wanted, ErrorCode::InconsistentOrientation,
                               source << ": non-orientable surface (" << face_word << " "
                                      << face_number(t) << " and " << face_number(other)
                                      << " cannot agree on orientation)");
                }
            }
        }
    }
    for (Index t = 0; t < num_triangles; ++t)
        if (flip[t]) std::swap(surface.triangles[t][1], surface.triangles[t][2]);

    // Outward, i.e. away from the material: a shell bounding a solid body (even nesting depth)
    // encloses a positive volume, a shell bounding a cavity (odd depth) a negative one, its
    // normals pointing into the cavity. The signed enclosed volume is then the material's.
    const ShellNesting nesting = find_shell_nesting(surface);
    std::vector<double> volume(static_cast<std::size_t>(nesting.num_shells()), 0.0);
    std::vector<Vec3> anchor(static_cast<std::size_t>(nesting.num_shells()));
    std::vector<char> has_anchor(static_cast<std::size_t>(nesting.num_shells()), 0);
    for (Index t = 0; t < num_triangles; ++t) {
        const Index s = nesting.shell_of_triangle[t];
        const Tri& tri = surface.triangles[t];
        if (!has_anchor[s]) {
            // A point on the shell keeps the sum well conditioned far from the origin.
            anchor[s] = surface.positions[tri[0]];
            has_anchor[s] = 1;
        }
        const Vec3 a = sub(surface.positions[tri[0]], anchor[s]);
        const Vec3 b = sub(surface.positions[tri[1]], anchor[s]);
        const Vec3 d = sub(surface.positions[tri[2]], anchor[s]);
        volume[s] += dot(a, cross(b, d)) / 6.0;
    }
    for (Index t = 0; t < num_triangles; ++t) {
        const Index s = nesting.shell_of_triangle[t];
        if ((volume[s] < 0.0) != nesting.is_cavity(s))
            std::swap(surface.triangles[t][1], surface.triangles[t][2]);
    }
}

void write_obj_surface(const std::filesystem::path& path, const SurfaceMesh& surface) {
    write_file_atomically(path, [&](std::ostream& out) {
        out << "# elastodyn surface: " << surface.positions.size() << " vertices, "
            << surface.triangles.size() << " triangles\n";
        out << std::setprecision(std::numeric_limits<double>::max_digits10);
        for (const Vec3& p : surface.positions)
            out << "v " << p[0] << ' ' << p[1] << ' ' << p[2] << '\n';
        for (const Tri& t : surface.triangles)
            out << "f " << t[0] + 1 << ' ' << t[1] + 1 << ' ' << t[2] + 1 << '\n';
    });
}

} // namespace edn
