// Compiled into edn_tetgen with TETLIBRARY, so TetGen reports errors by `throw int` instead of
// calling exit(). Everything TetGen-specific stays in this file.

#include "mesh/tetgen_bridge.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <new>
#include <tetgen.h>
#include <vector>

namespace edn {
namespace {

/// Sorted vertex triple: the identity of a triangle regardless of orientation.
std::array<Index, 3> sorted_triple(Index a, Index b, Index c) {
    std::array<Index, 3> t{a, b, c};
    std::sort(t.begin(), t.end());
    return t;
}

/// Fills `in` with one single-polygon facet per triangle and the hole points. With `markers` the
/// facet markers are triangle index + 1 (0 means "no marker" to TetGen), which -d copies onto the
/// facets it reports; the meshing pass gives none: facets of distinct markers keep every shared
/// edge as a segment TetGen must recover and refine, and on fans of thin triangles (the poles of
/// a UV sphere) that refinement runs for many minutes instead of seconds.
void fill_input(const SurfaceMesh& surface, const std::vector<Vec3>& holes, bool markers,
                tetgenio& in) {
    in.firstnumber = 0;
    in.numberofpoints = static_cast<int>(surface.positions.size());
    in.pointlist = new REAL[3 * surface.positions.size()];
    for (std::size_t i = 0; i < surface.positions.size(); ++i)
        for (int k = 0; k < 3; ++k) in.pointlist[3 * i + k] = surface.positions[i][k];

    const std::size_t num_triangles = surface.triangles.size();
    in.numberoffacets = static_cast<int>(num_triangles);
    in.facetlist = new tetgenio::facet[num_triangles];
    if (markers) in.facetmarkerlist = new int[num_triangles];
    for (std::size_t i = 0; i < num_triangles; ++i) {
        tetgenio::facet& facet = in.facetlist[i];
        facet.numberofpolygons = 1;
        facet.polygonlist = new tetgenio::polygon[1];
        facet.numberofholes = 0;
        facet.holelist = nullptr;
        facet.polygonlist[0].numberofvertices = 3;
        facet.polygonlist[0].vertexlist = new int[3];
        for (int k = 0; k < 3; ++k) facet.polygonlist[0].vertexlist[k] = surface.triangles[i][k];
        if (markers) in.facetmarkerlist[i] = static_cast<int>(i) + 1;
    }
    // tetgenio's destructor frees holelist with delete[].
    in.numberofholes = static_cast<int>(holes.size());
    if (!holes.empty()) {
        in.holelist = new REAL[3 * holes.size()];
        for (std::size_t i = 0; i < holes.size(); ++i)
            for (int k = 0; k < 3; ++k) in.holelist[3 * i + k] = holes[i][k];
    }
}

/// Maps the facets TetGen -d reports back to input triangles: by vertex triple (output points are
/// matched to input points by exact coordinates), falling back on the facet marker.
std::vector<Index> intersecting_input_triangles(const SurfaceMesh& surface, const tetgenio& out) {
    std::map<Vec3, Index> input_point;
    for (std::size_t i = 0; i < surface.positions.size(); ++i)
        input_point.emplace(surface.positions[i], static_cast<Index>(i));
    std::vector<Index> point_map(static_cast<std::size_t>(std::max(out.numberofpoints, 0)), -1);
    for (int i = 0; i < out.numberofpoints; ++i) {
        Vec3 p{out.pointlist[3 * i], out.pointlist[3 * i + 1], out.pointlist[3 * i + 2]};
        auto it = input_point.find(p);
        if (it != input_point.end()) point_map[i] = it->second;
    }
    std::multimap<std::array<Index, 3>, Index> triangle_of;
    for (std::size_t i = 0; i < surface.triangles.size(); ++i) {
        const Tri& t = surface.triangles[i];
        triangle_of.emplace(sorted_triple(t[0], t[1], t[2]), static_cast<Index>(i));
    }

    std::vector<Index> result;
    const int first = out.firstnumber;
    const auto num_triangles = static_cast<Index>(surface.triangles.size());
    for (int f = 0; f < out.numberoftrifaces; ++f) {
        std::array<Index, 3> v{};
        bool mapped = true;
        for (int k = 0; k < 3; ++k) {
            const int p = out.trifacelist[3 * f + k] - first;
            mapped = mapped && p >= 0 && p < out.numberofpoints && point_map[p] >= 0;
            v[k] = mapped ? point_map[p] : -1;
        }
        bool found = false;
        if (mapped) {
            auto [lo, hi] = triangle_of.equal_range(sorted_triple(v[0], v[1], v[2]));
            for (auto it = lo; it != hi; ++it) {
                result.push_back(it->second);
                found = true;
            }
        }
        if (!found && out.trifacemarkerlist != nullptr) {
            const int marker = out.trifacemarkerlist[f];
            if (marker >= 1 && marker <= num_triangles) result.push_back(marker - 1);
        }
    }
    std::sort(result.begin(), result.end());
    result.erase(std::unique(result.begin(), result.end()), result.end());
    return result;
}

/// Copies TetGen's tetrahedra (first four corners; higher-order corners ignored).
void copy_tets(const tetgenio& out, TetMesh& mesh) {
    mesh.positions.resize(static_cast<std::size_t>(std::max(out.numberofpoints, 0)));
    for (int i = 0; i < out.numberofpoints; ++i)
        mesh.positions[i] = {out.pointlist[3 * i], out.pointlist[3 * i + 1],
                             out.pointlist[3 * i + 2]};
    const int corners = out.numberofcorners > 0 ? out.numberofcorners : 4;
    mesh.cells.resize(static_cast<std::size_t>(std::max(out.numberoftetrahedra, 0)));
    for (int t = 0; t < out.numberoftetrahedra; ++t)
        for (int k = 0; k < 4; ++k)
            mesh.cells[t][k] =
                out.tetrahedronlist[static_cast<std::size_t>(t) * corners + k] - out.firstnumber;
}

/// Largest |volume| of TetGen's output tets (its own numbering and corner layout).
double max_tet_volume(const tetgenio& out) {
    const int corners = out.numberofcorners > 0 ? out.numberofcorners : 4;
    double largest = 0;
    for (int t = 0; t < out.numberoftetrahedra; ++t) {
        const REAL* p[4];
        for (int k = 0; k < 4; ++k)
            p[k] =
                &out.pointlist[3 * (out.tetrahedronlist[static_cast<std::size_t>(t) * corners + k] -
                                    out.firstnumber)];
        double u[3], v[3], w[3];
        for (int k = 0; k < 3; ++k) {
            u[k] = p[1][k] - p[0][k];
            v[k] = p[2][k] - p[0][k];
            w[k] = p[3][k] - p[0][k];
        }
        const double det = u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
                           u[2] * (v[0] * w[1] - v[1] * w[0]);
        largest = std::max(largest, std::abs(det) / 6.0);
    }
    return largest;
}

} // namespace

std::string tetgen_switches(const TetgenRequest& request) {
    // p: mesh a piecewise linear complex; z: number from zero.
    std::string switches = "pz";
    char buffer[64];
    if (request.detect_intersections) {
        switches += "d";
    } else {
        if (request.quality > 0) {
            // TetGen's -q parser takes digits and '.', no exponent: fixed notation.
            std::snprintf(buffer, sizeof buffer, "q%.9f", request.quality);
            switches += buffer;
        }
        if (request.max_volume > 0) {
            // -a accepts an exponent, which keeps tiny bounds exact.
            std::snprintf(buffer, sizeof buffer, "a%.17g", request.max_volume);
            switches += buffer;
        }
        // T: coplanarity tolerance (relative) for merging adjacent facets: TetGen's 1e-8 merges
        // facets that are merely nearly flat (a 512 x 16 UV sphere lost 6e-5 of its volume) and
        // its insertion asserts on some merged fans (256 x 128 UV sphere); 1e-12 still merges the
        // exactly planar quads of modelling tools, whose diagonals would otherwise be refined.
        switches += "T1e-12";
        if (request.max_steiner_points > 0) {
            // TetGen stops refining (with a mesh, not an error) once it has added this many
            // points; the caller compares the point count to tell that the bound was hit.
            std::snprintf(buffer, sizeof buffer, "S%lld",
                          std::min<long long>(request.max_steiner_points, INT_MAX));
            switches += buffer;
        }
    }
    if (!request.verbose) switches += "Q";
    return switches;
}

TetgenResult run_tetgen(const SurfaceMesh& surface, const TetgenRequest& request) {
    TetgenResult result;
    try {
        tetgenio in;
        tetgenio out;
        fill_input(surface, request.holes, request.detect_intersections, in);
        std::string switches = tetgen_switches(request);
        std::vector<char> mutable_switches(switches.begin(), switches.end());
        mutable_switches.push_back('\0');
        tetrahedralize(mutable_switches.data(), &in, &out);
        if (request.detect_intersections) {
            result.intersecting_triangles = intersecting_input_triangles(surface, out);
        } else if (request.max_volume > 0 && max_tet_volume(out) > request.max_volume) {
            // TetGen 1.5 leaves a few tets slightly above -a (seen: 1.1x on a cube); one
            // refinement pass (-r, same bounds) on its own output usually removes them.
            std::string refine = "r" + switches.substr(1);
            std::vector<char> mutable_refine(refine.begin(), refine.end());
            mutable_refine.push_back('\0');
            tetgenio refined;
            tetrahedralize(mutable_refine.data(), &out, &refined);
            copy_tets(refined, result.mesh);
        } else {
            copy_tets(out, result.mesh);
        }
    } catch (int code) {
        result.termination_code = code != 0 ? code : 2;
        result.mesh = {};
        result.intersecting_triangles.clear();
    } catch (const std::bad_alloc&) {
        result.termination_code = 1;
        result.mesh = {};
        result.intersecting_triangles.clear();
    }
    return result;
}

const char* tetgen_termination_reason(int termination_code) {
    switch (termination_code) {
    case 0:
        return "success";
    case 1:
        return "out of memory";
    case 2:
        return "internal error";
    case 3:
        return "a self-intersection was detected";
    case 4:
        return "a very small input feature size was detected";
    case 5:
        return "two very close input facets were detected";
    case 10:
        return "an input error was detected";
    default:
        return "unknown error";
    }
}

} // namespace edn
