"""The module reproduces `elastodyn-cli simulate`: the same mesh and settings give the same
per-frame energies and Newton counts (run.json) and the same final state (--vtu)."""

import json
import subprocess
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import elastodyn


def vtu_arrays(path):
    """Points and point arrays of an ASCII .vtu, read with Python's XML parser."""
    piece = ET.parse(path).getroot().find("UnstructuredGrid/Piece")
    points = np.array(piece.find("Points/DataArray").text.split(), float).reshape(-1, 3)
    fields = {a.get("Name"): np.array(a.text.split(), float) for a in piece.find("PointData")}
    return points, fields


@pytest.mark.parametrize("order", [1, 2])
def test_same_run_as_the_cli(cli, box, tmp_path, order):
    box.write_node_ele(tmp_path / "beam.node")
    frames = 8
    options = {"preset": "silicone", "dt": "0.01", "gravity": "9.81,0,0", "order": str(order)}
    command = [cli, "simulate", str(tmp_path / "beam.node"), "--frames", str(frames),
               "--pin-below", "0.01", "--out", str(tmp_path / "run.json"),
               "--vtu", str(tmp_path / "cli.vtu")]
    for name, value in options.items():
        command += ["--" + name, value]
    subprocess.run(command, check=True, capture_output=True)
    run = json.loads((tmp_path / "run.json").read_text())

    mesh = elastodyn.load_mesh(tmp_path / "beam.node")
    sim = elastodyn.Simulation(mesh, preset="silicone", dt=0.01, gravity=[9.81, 0, 0], order=order)
    assert sim.pin_below(0.01) == run["settings"]["pinned_nodes"]
    results = sim.step(frames)
    assert len(results) == len(run["frames"]) == frames
    for ours, theirs in zip(results, run["frames"]):
        assert ours.newton_iterations == theirs["newton_iterations"]
        assert ours.cg_iterations == theirs["cg_iterations"]
        for key in ("potential", "strain_energy", "kinetic_energy", "final_residual"):
            assert getattr(ours, key) == pytest.approx(theirs[key], rel=1e-9, abs=1e-12), key
    assert sim.num_nodes == run["nodes"]

    points, fields = vtu_arrays(tmp_path / "cli.vtu")
    np.testing.assert_allclose(sim.positions, points, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.velocities.ravel(), fields["velocity"], rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(sim.pinned, fields["pinned"] == 1)
    # The module's own writer is the CLI's: the same file.
    sim.write_vtu(tmp_path / "py.vtu")
    assert (tmp_path / "py.vtu").read_bytes() == (tmp_path / "cli.vtu").read_bytes()


def test_same_cut_as_the_cli(cli, box, tmp_path):
    box.write_node_ele(tmp_path / "beam.node")
    subprocess.run([cli, "simulate", str(tmp_path / "beam.node"), "--frames", "6", "--dt", "0.01",
                    "--pin-below", "0.01", "--cut-plane", "0.2 0.2 0.6 0 0 1", "--cut-frame", "3",
                    "--out", str(tmp_path / "run.json")], check=True, capture_output=True)
    run = json.loads((tmp_path / "run.json").read_text())
    sim = elastodyn.Simulation(elastodyn.load_mesh(tmp_path / "beam.node"), dt=0.01)
    sim.set_undo_depth(0)
    sim.pin_below(0.01)
    sim.step(3)
    change = sim.cut((0.2, 0.2, 0.6), (0, 0, 1))
    results = sim.step(3)
    assert change.duplicated_vertices == run["cuts"][0]["duplicated_vertices"]
    assert sim.num_vertices == run["vertices"]
    for ours, theirs in zip(results, run["frames"][3:]):
        assert ours.kinetic_energy == pytest.approx(theirs["kinetic_energy"], rel=1e-9)
