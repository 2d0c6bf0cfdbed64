"""Meshes: box meshes, loading every format, arrays, cuts and refinements, the tangent export."""

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import elastodyn


def test_box_mesh_counts_and_views(box):
    assert box.num_vertices == 3 * 3 * 7
    assert box.num_cells == 6 * 2 * 2 * 6
    assert box.vertices.shape == (63, 3) and box.cells.shape == (144, 4)
    assert box.volume == pytest.approx(0.4 * 0.4 * 1.2)
    assert box.components == 1
    # Views into the mesh, not copies: read-only, and the same memory every time.
    assert not box.vertices.flags.writeable
    with pytest.raises(ValueError):
        box.vertices[0, 0] = 1.0
    assert np.shares_memory(box.vertices, box.vertices)


def test_mesh_from_arrays_validates():
    vertices = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float)
    inverted = elastodyn.Mesh(vertices, np.array([[0, 2, 1, 3]]))
    assert inverted.volume == pytest.approx(1 / 6)  # re-oriented
    with pytest.raises(elastodyn.InputError, match="cell"):
        elastodyn.Mesh(np.array([[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0]], float),
                       np.array([[0, 1, 2, 3]]))
    with pytest.raises(ValueError, match="vertex 9"):
        elastodyn.Mesh(vertices, np.array([[0, 1, 2, 9]]))


def test_load_every_format(source_dir, tmp_path):
    good = source_dir / "tests" / "data" / "good"
    node = elastodyn.load_mesh(good / "cube.node")
    msh = elastodyn.load_mesh(str(good / "cube_v41.msh"))
    obj = elastodyn.load_mesh(good / "tet_cli_cube.obj", quality=0)
    for mesh in (node, msh, obj):
        assert mesh.volume == pytest.approx(1.0)
    # A .vtu written by a simulation reads back as its vertex mesh (here at p = 2).
    sim = elastodyn.Simulation(node, order=2)
    sim.write_vtu(tmp_path / "state.vtu")
    back = elastodyn.load_mesh(tmp_path / "state.vtu")
    assert back.num_vertices == node.num_vertices and back.num_cells == node.num_cells
    # .node/.ele written here read back unchanged.
    obj.write_node_ele(tmp_path / "cube.node")
    again = elastodyn.load_mesh(tmp_path / "cube.node")
    np.testing.assert_array_equal(again.cells, obj.cells)
    np.testing.assert_allclose(again.vertices, obj.vertices)


def test_tetrahedralize_surface_arrays():
    corners = np.array([[x, y, z] for z in (0, 1) for y in (0, 1) for x in (0, 1)], float)
    quads = [(0, 2, 3, 1), (4, 5, 7, 6), (0, 1, 5, 4), (2, 6, 7, 3), (0, 4, 6, 2), (1, 3, 7, 5)]
    triangles = np.array([t for a, b, c, d in quads for t in ((a, b, c), (a, c, d))])
    mesh = elastodyn.tetrahedralize(corners, triangles, quality=0)
    assert mesh.volume == pytest.approx(1.0)
    with pytest.raises(elastodyn.InputError, match="boundary edges|open"):
        elastodyn.tetrahedralize(corners, triangles[:-2], quality=0)


def test_bad_input_raises_with_the_engine_message(source_dir, tmp_path):
    bad = source_dir / "tests" / "data" / "bad"
    with pytest.raises(elastodyn.InputError) as error:
        elastodyn.load_mesh(bad / "open_surface.obj")
    assert "open_surface.obj" in str(error.value) and error.value.code == "open_surface"
    with pytest.raises(ValueError, match="nan.node"):
        elastodyn.load_mesh(bad / "nan.node")
    with pytest.raises(OSError, match="cannot open"):
        elastodyn.load_mesh(tmp_path / "missing.node")
    with pytest.raises(elastodyn.InputError, match="unknown mesh format"):
        elastodyn.load_mesh(tmp_path / "mesh.stl")
    with pytest.raises(elastodyn.UsageError, match="non-positive|positive|count"):
        elastodyn.box_mesh(0, 1, 1)


def test_mesh_cut_and_refine(box):
    cut = box.cut((0.2, 0.2, 0.6), (0, 0, 1))
    assert cut.num_vertices == box.num_vertices + 9  # the 3 x 3 vertices of the plane z = 0.6
    assert cut.num_cells == box.num_cells and cut.components == 2
    assert box.refine_uniform().num_cells == 8 * box.num_cells
    local = box.refine_sphere((0.2, 0.2, 0.0), 0.1, levels=1)
    assert box.num_cells < local.num_cells < 8 * box.num_cells


def test_vtu_is_valid_xml(box, tmp_path):
    box.write_vtu(tmp_path / "box.vtu")
    root = ET.parse(tmp_path / "box.vtu").getroot()
    piece = root.find("UnstructuredGrid/Piece")
    assert int(piece.get("NumberOfPoints")) == box.num_vertices
    assert int(piece.get("NumberOfCells")) == box.num_cells


def test_tangent_has_rigid_modes_in_its_null_space(box, tmp_path):
    t = elastodyn.tangent(box, order=2, material="corotational", E=1e5, nu=0.3)
    n = t["size"]
    assert n == 3 * len(t["nodes"])
    k = np.zeros((n, n))
    np.add.at(k, (t["rows"], t["cols"]), t["values"])
    np.testing.assert_allclose(k, k.T, atol=1e-9 * abs(k).max())
    for axis in range(3):
        translation = np.zeros((n // 3, 3))
        translation[:, axis] = 1
        assert abs(k @ translation.ravel()).max() < 1e-8 * abs(k).max()
    assert t["energy"] == pytest.approx(0.0, abs=1e-12)  # at rest
    path = tmp_path / "K.mtx"
    elastodyn.export_matrix_market(path, box, order=2, material="corotational")
    lines = path.read_text().splitlines()
    assert lines[0] == "%%MatrixMarket matrix coordinate real general"
    size = next(line for line in lines if not line.startswith("%"))
    assert size.split()[:2] == [str(n), str(n)] and int(size.split()[2]) == len(t["values"])
    with pytest.raises(elastodyn.UsageError, match="material"):
        elastodyn.tangent(box, material="rubber")


def test_series_and_surface_exports(box, tmp_path):
    sim = elastodyn.Simulation(box, dt=0.01, order=2)
    entries = []
    for frame in range(3):
        name = f"frame_{frame:05d}.vtu"
        sim.write_vtu(tmp_path / name, binary=True)
        entries.append((frame * 0.01, name))
        sim.step()
    elastodyn.write_pvd(tmp_path / "series.pvd", entries)
    files = [d.get("file") for d in ET.parse(tmp_path / "series.pvd").getroot().iter("DataSet")]
    assert files == [name for _, name in entries]
    last = elastodyn.read_vtu(tmp_path / "frame_00002.vtu")
    assert last["points"].shape == (sim.num_nodes, 3) and set(last["types"]) == {24}
    assert last["point_data"]["velocity"].shape == (sim.num_nodes, 3)
    assert last["cell_data"]["von_mises"].shape == (sim.num_cells,)
    assert np.all(last["point_data"]["displacement"][:, 2] < 0)

    faces = box.boundary_faces()
    assert faces.shape == (2 * 2 * (2 * 2 + 2 * 6 + 2 * 6), 3)  # 2 triangles per boundary quad
    box.write_surface_obj(tmp_path / "surface.obj", sim.positions[:sim.num_vertices])
    lines = (tmp_path / "surface.obj").read_text().splitlines()
    assert sum(line.startswith("f ") for line in lines) == len(faces)
    surface = elastodyn.load_mesh(tmp_path / "surface.obj", quality=0)
    assert surface.volume == pytest.approx(box.volume, rel=0.05)
