// Meshes in Python: elastodyn.Mesh (a TetMesh), loading and meshing (the CLI's load_tet_mesh and
// TetGen path), box meshes, cuts and refinements of a mesh, and the tangent export of
// `elastodyn-cli export`.
#include "bindings.hpp"
#include "core/error.hpp"
#include "fem/linear_elasticity.hpp"
#include "mesh/box_mesh.hpp"
#include "mesh/cut.hpp"
#include "mesh/mesh_loader.hpp"
#include "mesh/node_layout.hpp"
#include "mesh/obj_io.hpp"
#include "mesh/refine.hpp"
#include "mesh/tetgen_io.hpp"
#include "mesh/tetrahedralize.hpp"
#include "mesh/topology.hpp"
#include "mesh/vtu_io.hpp"
#include "sim/material_tangent.hpp"
#include "sim/names.hpp"
#include "sim/simulation.hpp"
#include "sparse/bin_bcsr_pattern.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

namespace edn::python {
namespace {

/// TetGen options from the keyword arguments of load_mesh / tetrahedralize.
TetrahedralizeOptions meshing_options(double quality, double max_volume,
                                      long long max_steiner_points, double time_limit,
                                      bool verbose) {
    TetrahedralizeOptions options;
    options.quality = quality;
    options.max_volume = max_volume;
    options.max_steiner_points = max_steiner_points;
    options.time_limit_s = time_limit;
    options.verbose = verbose;
    return options;
}

/// The tetrahedra of a .vtu written by write_vtu (simulate --vtu, --series, Simulation.write_vtu):
/// each cell's first four nodes are its vertices (VTK lists them first for linear, quadratic and
/// Lagrange tets), so the vertex mesh is read back at any order; the edge and face nodes,
/// referenced by no cell then, are dropped by the validation. The points are the file's (for a
/// state file: the deformed positions).
TetMesh read_vtu_tet_mesh(const std::filesystem::path& path) {
    const VtuData data = read_vtu(path);
    TetMesh mesh;
    mesh.positions = data.points;
    mesh.cells.reserve(data.types.size());
    std::int64_t begin = 0;
    for (std::size_t c = 0; c < data.types.size(); ++c) {
        const int type = data.types[c];
        EDN_VERIFY(type == vtk_tet_cell_type(1) || type == vtk_tet_cell_type(2) ||
                       type == vtk_tet_cell_type(3),
                   ErrorCode::Parse,
                   path.string() << ": cell " << c + 1 << " has VTK type " << type
                                 << ", expected a tetrahedron (10, 24 or 71)");
        const std::int64_t end = data.offsets[c];
        EDN_VERIFY(end - begin >= 4 && end <= std::int64_t(data.connectivity.size()),
                   ErrorCode::Parse, path.string() << ": cell " << c + 1 << " has too few nodes");
        Cell cell{};
        for (int k = 0; k < 4; ++k) {
            const std::int64_t node = data.connectivity[begin + k];
            EDN_VERIFY(node >= 0 && node < std::int64_t(mesh.positions.size()),
                       ErrorCode::IndexOutOfRange,
                       path.string() << ": cell " << c + 1 << " names point " << node << " of "
                                     << mesh.positions.size());
            cell[k] = static_cast<Index>(node);
        }
        mesh.cells.push_back(cell);
        begin = end;
    }
    validate_tet_mesh(mesh, path.string());
    return mesh;
}

/// Whether `path` ends in .vtu (any case).
bool is_vtu(const std::filesystem::path& path) {
    std::string extension = path.extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return extension == ".vtu";
}

/// A (rows, cols) read-only view of `data` kept alive by `owner`.
template <class T>
py::array read_only_view(const T* data, py::ssize_t rows, py::ssize_t cols, py::handle owner) {
    py::array view(py::dtype::of<T>(), {rows, cols},
                   {cols * py::ssize_t(sizeof(T)), py::ssize_t(sizeof(T))}, data, owner);
    make_read_only(view);
    return view;
}

/// The exact tangent of `elastodyn-cli export` with the pattern its matrix points into.
struct Tangent {
    std::unique_ptr<BinBcsrPattern> pattern; ///< stiffness.pattern points here (stable address)
    MaterialTangent tangent;
    std::vector<Vec3> rest; ///< node rest positions
};

/// The tangent of `elastodyn-cli export`, with its checks.
Tangent tangent_of(const TetMesh& mesh, int order, const std::string& material_name, double young,
                   double poisson, const py::object& displacement) {
    EDN_VERIFY(order >= 1 && order <= kMaxOrder, ErrorCode::Usage,
               "order must be 1.." << kMaxOrder << ", got " << order);
    const std::optional<Material> material = parse_material(material_name);
    EDN_VERIFY(material, ErrorCode::Usage,
               "unknown material '" << material_name << "' (expected " << names_list<Material>(", ")
                                    << ")");
    EDN_VERIFY(std::isfinite(young) && young > 0, ErrorCode::Usage,
               "E must be positive and finite, got " << young);
    EDN_VERIFY(poisson > -1 && poisson < 0.5, ErrorCode::Usage,
               "nu must be in (-1, 0.5), got " << poisson);
    const Topology topology = build_topology(mesh);
    const NodeLayout layout = make_node_layout(topology, order);
    Tangent out;
    out.rest = node_positions(mesh, topology, layout);
    std::vector<double> u(3 * static_cast<std::size_t>(layout.num_nodes()), 0.0);
    if (!displacement.is_none())
        u = flat3_from(
            displacement.cast<py::array_t<double, py::array::c_style | py::array::forcecast>>(),
            layout.num_nodes(), "displacement");
    out.pattern =
        std::make_unique<BinBcsrPattern>(build_bin_bcsr_pattern(topology, mesh.cells, layout));
    out.tangent = material_tangent(*material, lame_from_young_poisson(young, poisson), mesh,
                                   topology, layout, *out.pattern, out.rest, u);
    return out;
}

} // namespace

void bind_mesh(py::module_& m) {
    py::class_<TetMesh>(m, "Mesh",
                        "A linear tetrahedral mesh: vertices (#V, 3) and cells (#T, 4). Simulation "
                        "builds its nodes (order p) from it.")
        .def(py::init(
                 [](const py::array_t<double, py::array::c_style | py::array::forcecast>& vertices,
                    const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>&
                        cells) {
                     TetMesh mesh;
                     const std::vector<double> flat = flat3_from(vertices, -1, "vertices");
                     mesh.positions.resize(flat.size() / 3);
                     for (std::size_t i = 0; i < mesh.positions.size(); ++i)
                         mesh.positions[i] = {flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]};
                     EDN_VERIFY(cells.size() % 4 == 0, ErrorCode::Usage,
                                "cells: expected (n, 4) vertex indices");
                     mesh.cells.resize(cells.size() / 4);
                     for (py::ssize_t k = 0; k < cells.size(); ++k) {
                         const std::int64_t v = cells.data()[k];
                         EDN_VERIFY(v >= 0 && v < std::int64_t(mesh.positions.size()),
                                    ErrorCode::IndexOutOfRange,
                                    "cells: cell " << k / 4 << " names vertex " << v << " of "
                                                   << mesh.positions.size() << " (0-based)");
                         mesh.cells[k / 4][k % 4] = static_cast<Index>(v);
                     }
                     validate_tet_mesh(mesh, "Mesh(vertices, cells)");
                     return mesh;
                 }),
             py::arg("vertices"), py::arg("cells"),
             "From arrays (0-based cells), validated like a .node/.ele file: inverted cells are "
             "re-oriented and unreferenced vertices dropped (which renumbers the later ones); "
             "degenerate, duplicate or overlapping cells raise InputError.")
        .def_property_readonly(
            "vertices",
            [](const py::object& self) {
                const TetMesh& mesh = self.cast<const TetMesh&>();
                return read_only_view(mesh.positions.empty() ? nullptr : mesh.positions[0].data(),
                                      mesh.num_vertices(), 3, self);
            },
            "(#V, 3) rest positions: a read-only view without a copy (alive while used).")
        .def_property_readonly(
            "cells",
            [](const py::object& self) {
                const TetMesh& mesh = self.cast<const TetMesh&>();
                return read_only_view(mesh.cells.empty() ? nullptr : mesh.cells[0].data(),
                                      mesh.num_cells(), 4, self);
            },
            "(#T, 4) int32 vertex indices, positively oriented: a read-only view.")
        .def_property_readonly("num_vertices", &TetMesh::num_vertices)
        .def_property_readonly("num_cells", &TetMesh::num_cells)
        .def_property_readonly("volume", &total_volume, "Sum of the cells' volumes.")
        .def_property_readonly("components", &count_components,
                               "Connected components (cells sharing a vertex are connected).")
        .def(
            "cut",
            [](const TetMesh& mesh, const py::object& point, const py::object& normal,
               double radius) {
                CutPlane plane{vec3_from(point, "point"), vec3_from(normal, "normal"), radius};
                return cut_mesh(mesh, plane).mesh;
            },
            py::arg("point"), py::arg("normal"),
            py::arg("radius") = std::numeric_limits<double>::infinity(),
            "A copy cut along the plane (mesh/cut.hpp: faces separated, vertices duplicated; "
            "faces within `radius` of `point`), classified on the rest positions.")
        .def(
            "refine_uniform", [](const TetMesh& mesh) { return refine_uniform(mesh).mesh; },
            "A copy with every cell split in 8 (red refinement).")
        .def(
            "refine_sphere",
            [](const TetMesh& mesh, const py::object& center, double radius, int levels) {
                return refine_sphere(mesh, vec3_from(center, "center"), radius, levels).mesh;
            },
            py::arg("center"), py::arg("radius"), py::arg("levels") = 3,
            "A copy whose cells touching the sphere are bisected `levels` rounds (conforming).")
        .def(
            "write_vtu",
            [](const TetMesh& mesh, const std::filesystem::path& path) { write_vtu(path, mesh); },
            py::arg("path"), "Writes linear tets (ASCII .vtu), atomically.")
        .def(
            "write_node_ele",
            [](const TetMesh& mesh, const std::filesystem::path& path) {
                write_node_ele(path, mesh);
            },
            py::arg("path"),
            "Writes PATH (.node) and the .ele beside it, as `elastodyn-cli tetrahedralize` does.")
        .def(
            "boundary_faces",
            [](const TetMesh& mesh) {
                const Topology topology = build_topology(mesh);
                const std::vector<Tri>& faces = topology.boundary_faces;
                py::array_t<Index> out({py::ssize_t(faces.size()), py::ssize_t{3}});
                for (std::size_t f = 0; f < faces.size(); ++f)
                    std::copy(faces[f].begin(), faces[f].end(), out.mutable_data() + 3 * f);
                return out;
            },
            "(#B, 3) int32 boundary triangles, oriented outward (a copy).")
        .def(
            "write_surface_obj",
            [](const TetMesh& mesh, const std::filesystem::path& path,
               const py::object& positions) {
                SurfaceMesh surface;
                surface.positions = mesh.positions;
                if (!positions.is_none()) {
                    const std::vector<double> flat = flat3_from(
                        positions
                            .cast<py::array_t<double, py::array::c_style | py::array::forcecast>>(),
                        mesh.num_vertices(), "positions");
                    for (std::size_t v = 0; v < surface.positions.size(); ++v)
                        surface.positions[v] = {flat[3 * v], flat[3 * v + 1], flat[3 * v + 2]};
                }
                surface.triangles = build_topology(mesh).boundary_faces;
                write_obj_surface(path, surface);
            },
            py::arg("path"), py::arg("positions") = py::none(),
            "Writes the boundary surface as OBJ (atomically) at the rest positions or at "
            "`positions` (#V, 3; e.g. sim.positions[:sim.num_vertices], vertex nodes come first).")
        .def("__repr__", [](const TetMesh& mesh) {
            return "<elastodyn.Mesh " + std::to_string(mesh.num_vertices()) + " vertices, " +
                   std::to_string(mesh.num_cells()) + " cells>";
        });

    m.def(
        "load_mesh",
        [](const std::filesystem::path& path, double quality, double max_volume,
           long long max_steiner_points, double time_limit, bool verbose) {
            if (is_vtu(path)) return read_vtu_tet_mesh(path);
            const TetrahedralizeOptions options =
                meshing_options(quality, max_volume, max_steiner_points, time_limit, verbose);
            py::gil_scoped_release release; // TetGen may run for minutes
            return load_tet_mesh(path, options);
        },
        py::arg("path"), py::arg("quality") = 1.4, py::arg("max_volume") = 0.0,
        py::arg("max_steiner_points") = 500000, py::arg("time_limit") = 600.0,
        py::arg("verbose") = false,
        "Loads a mesh as the CLI does: an OBJ surface (checked, then meshed by TetGen with these "
        "options, like `elastodyn-cli tetrahedralize`), a .node/.ele pair, a Gmsh .msh, or a .vtu "
        "written by elastodyn (its tets' vertices, at the file's points). Raises InputError, "
        "FileError or EngineError with the engine's message.");
    m.def(
        "read_vtu",
        [](const std::filesystem::path& path) {
            const VtuData data = read_vtu(path);
            std::vector<double> points;
            points.reserve(3 * data.points.size());
            for (const Vec3& x : data.points) points.insert(points.end(), x.begin(), x.end());
            const auto fields = [](const std::vector<VtuField>& list) {
                py::dict out;
                for (const VtuField& f : list) {
                    py::array_t<double> values(py::ssize_t(f.values.size()), f.values.data());
                    out[py::str(f.name)] =
                        f.components == 1 ? py::object(values)
                                          : py::object(values.attr("reshape")(-1, f.components));
                }
                return out;
            };
            py::dict out;
            out["points"] = rows3_copy(points);
            out["connectivity"] = py::array_t<std::int64_t>(py::ssize_t(data.connectivity.size()),
                                                            data.connectivity.data());
            out["offsets"] =
                py::array_t<std::int64_t>(py::ssize_t(data.offsets.size()), data.offsets.data());
            out["types"] =
                py::array_t<std::uint8_t>(py::ssize_t(data.types.size()), data.types.data());
            out["point_data"] = fields(data.point_fields);
            out["cell_data"] = fields(data.cell_fields);
            return out;
        },
        py::arg("path"),
        "Reads a .vtu elastodyn wrote (either encoding) with the engine's reader: points, "
        "connectivity, offsets, types (VTK's order) and the point_data / cell_data arrays.");
    m.def(
        "write_pvd",
        [](const std::filesystem::path& path,
           const std::vector<std::pair<double, std::string>>& entries) {
            std::vector<PvdEntry> list;
            for (const auto& [time, file] : entries) list.push_back({time, file});
            write_pvd(path, list);
        },
        py::arg("path"), py::arg("entries"),
        "Writes a ParaView collection (.pvd) of (time, file relative to the .pvd) entries, as "
        "simulate --series does, atomically: with Simulation.write_vtu(..., binary=True) per "
        "frame, a time series.");
    m.def(
        "tetrahedralize",
        [](const py::array_t<double, py::array::c_style | py::array::forcecast>& vertices,
           const py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>& triangles,
           double quality, double max_volume, long long max_steiner_points, double time_limit,
           bool verbose) {
            SurfaceMesh surface;
            const std::vector<double> flat = flat3_from(vertices, -1, "vertices");
            surface.positions.resize(flat.size() / 3);
            for (std::size_t i = 0; i < surface.positions.size(); ++i)
                surface.positions[i] = {flat[3 * i], flat[3 * i + 1], flat[3 * i + 2]};
            EDN_VERIFY(triangles.size() % 3 == 0, ErrorCode::Usage,
                       "triangles: expected (n, 3) vertex indices");
            surface.triangles.resize(triangles.size() / 3);
            for (py::ssize_t k = 0; k < triangles.size(); ++k) {
                const std::int64_t v = triangles.data()[k];
                EDN_VERIFY(v >= 0 && v < std::int64_t(surface.positions.size()),
                           ErrorCode::IndexOutOfRange,
                           "triangles: triangle " << k / 3 << " names vertex " << v << " of "
                                                  << surface.positions.size() << " (0-based)");
                surface.triangles[k / 3][k % 3] = static_cast<Index>(v);
            }
            const TetrahedralizeOptions options =
                meshing_options(quality, max_volume, max_steiner_points, time_limit, verbose);
            py::gil_scoped_release release;
            check_and_orient_surface(surface, "surface");
            return tetrahedralize(surface, options, "surface");
        },
        py::arg("vertices"), py::arg("triangles"), py::arg("quality") = 1.4,
        py::arg("max_volume") = 0.0, py::arg("max_steiner_points") = 500000,
        py::arg("time_limit") = 600.0, py::arg("verbose") = false,
        "Meshes a closed triangle surface (arrays, 0-based) with TetGen after the OBJ checks.");
    m.def(
        "box_mesh",
        [](int nx, int ny, int nz, const py::object& lower, const py::object& upper) {
            return make_box_tet_mesh(nx, ny, nz, vec3_from(lower, "lower"),
                                     vec3_from(upper, "upper"));
        },
        py::arg("nx"), py::arg("ny"), py::arg("nz"),
        py::arg("lower") = std::vector<double>{0, 0, 0},
        py::arg("upper") = std::vector<double>{1, 1, 1},
        "The box [lower, upper] of nx*ny*nz hexahedra, 6 tets each (mesh/box_mesh.hpp).");
    m.def(
        "tangent",
        [](const TetMesh& mesh, int order, const std::string& material, double young,
           double poisson, const py::object& displacement) {
            const Tangent result = tangent_of(mesh, order, material, young, poisson, displacement);
            const MaterialTangent& t = result.tangent;
            const std::vector<Vec3>& rest = result.rest;
            const std::int64_t nnz_blocks = result.pattern->nnz_blocks();
            const std::vector<CooEntry<double>> coo = to_coo(t.stiffness);
            py::array_t<std::int64_t> rows(static_cast<py::ssize_t>(coo.size())),
                cols(static_cast<py::ssize_t>(coo.size()));
            py::array_t<double> values(static_cast<py::ssize_t>(coo.size()));
            for (std::size_t k = 0; k < coo.size(); ++k) {
                rows.mutable_data()[k] = coo[k].row;
                cols.mutable_data()[k] = coo[k].col;
                values.mutable_data()[k] = coo[k].value;
            }
            std::vector<double> nodes;
            nodes.reserve(3 * rest.size());
            for (const Vec3& x : rest) nodes.insert(nodes.end(), x.begin(), x.end());
            py::dict out;
            out["energy"] = t.energy;
            out["gradient"] = rows3_copy(t.gradient);
            out["nodes"] = rows3_copy(nodes);
            out["rows"] = rows;
            out["cols"] = cols;
            out["values"] = values;
            out["size"] = 3 * static_cast<std::int64_t>(rest.size());
            out["nnz_blocks"] = nnz_blocks;
            return out;
        },
        py::arg("mesh"), py::arg("order") = 1, py::arg("material") = "linear", py::arg("E") = 1e5,
        py::arg("nu") = 0.3, py::arg("displacement") = py::none(),
        "What `elastodyn-cli export` computes, as arrays: energy W, gradient dW/dx (#nodes, 3), "
        "node rest positions (#nodes, 3) and the exact tangent K as COO (rows, cols, values; dof "
        "3*node+axis, 0-based; e.g. scipy.sparse.coo_matrix((values, (rows, cols)))) at rest "
        "positions + displacement.");
    m.def(
        "export_matrix_market",
        [](const std::filesystem::path& path, const TetMesh& mesh, int order,
           const std::string& material, double young, double poisson,
           const py::object& displacement) {
            const Tangent result = tangent_of(mesh, order, material, young, poisson, displacement);
            write_matrix_market(path, result.tangent.stiffness);
        },
        py::arg("path"), py::arg("mesh"), py::arg("order") = 1, py::arg("material") = "linear",
        py::arg("E") = 1e5, py::arg("nu") = 0.3, py::arg("displacement") = py::none(),
        "Writes K as `elastodyn-cli export --matrix` does (MatrixMarket coordinate real "
        "general), atomically.");
}

} // namespace edn::python
