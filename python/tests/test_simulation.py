"""Simulations: stepping, the NumPy state arrays, pins, settings, topology changes, errors."""

import threading

import numpy as np
import pytest

import elastodyn


def test_positions_fall_under_gravity(box):
    sim = elastodyn.Simulation(box, dt=0.01)
    assert sim.num_nodes == box.num_vertices and sim.positions.shape == (box.num_vertices, 3)
    np.testing.assert_array_equal(sim.positions, sim.rest_positions)
    result = sim.step()
    assert result.converged and result.stop == "converged"
    # a small sag: the exact Hessian works, nothing projected or truncated
    assert result.projection_fallbacks == 0 and result.truncated_solves == 0
    assert not result.projected
    assert result.newton_iterations >= 1 and result.cg_iterations >= 1
    assert result.kinetic_energy > 0 and len(result.residuals) >= 2
    # Free fall of an unpinned body: every node moves down by about g dt^2 (backward Euler).
    dz = sim.positions[:, 2] - sim.rest_positions[:, 2]
    np.testing.assert_allclose(dz, -9.81 * 0.01**2, rtol=1e-4)  # Newton tolerance 1e-3
    assert sim.frame == 1
    results = sim.step(3)
    assert len(results) == 3 and sim.frame == 4
    assert [r.kinetic_energy for r in results] == sorted(r.kinetic_energy for r in results)


def test_pinned_nodes_stay(box):
    sim = elastodyn.Simulation(box, dt=0.01, gravity=[9.81, 0, 0])
    count = sim.pin_below(0.01)
    assert count == 9 and sim.pinned.sum() == 9
    np.testing.assert_array_equal(sim.pinned, sim.rest_positions[:, 2] < 0.01)
    sim.step(5)
    pins = sim.pinned
    np.testing.assert_array_equal(sim.positions[pins], sim.rest_positions[pins])
    assert np.abs(sim.positions[~pins] - sim.rest_positions[~pins]).max() > 1e-4
    # Pins by a plane (the top face, pinned from above), and pins written as an array.
    sim2 = elastodyn.Simulation(box, dt=0.01)
    assert sim2.pin_plane((0, 0, 1.19), (0, 0, -1)) == 9
    top = sim2.rest_positions[:, 2] > 1.19
    np.testing.assert_array_equal(sim2.pinned, top)
    sim3 = elastodyn.Simulation(box, dt=0.01)
    sim3.pinned[top] = True  # written in place: taken at the next step
    sim3.step(3)
    np.testing.assert_array_equal(sim3.positions[top], sim3.rest_positions[top])
    np.testing.assert_allclose(sim3.positions, sim2.step(3) and sim2.positions)


def test_views_see_updates(box):
    sim = elastodyn.Simulation(box, dt=0.01)
    x, v = sim.positions, sim.velocities
    before = x.copy()
    sim.step()
    assert x is sim.positions and v is sim.velocities  # the same arrays, updated in place
    assert not np.array_equal(x, before)
    assert np.all(v[:, 2] < 0)
    assert not sim.rest_positions.flags.writeable


def test_writes_to_velocities_take_effect(box):
    sim = elastodyn.Simulation(box, dt=0.01, gravity=[0, 0, 0])
    sim.velocities[:] = (1.0, 0.0, 0.0)  # in place
    sim.step()
    np.testing.assert_allclose(sim.positions - sim.rest_positions, [[0.01, 0, 0]] * box.num_vertices,
                               atol=1e-10)
    sim.velocities = np.zeros((box.num_vertices, 3))  # assigned
    sim.step()
    np.testing.assert_allclose(sim.positions - sim.rest_positions, [[0.01, 0, 0]] * box.num_vertices,
                               atol=1e-10)
    shifted = sim.rest_positions + (0, 0, 5)
    sim.positions = shifted
    np.testing.assert_array_equal(sim.positions, shifted)
    sim.step()
    np.testing.assert_allclose(sim.positions, shifted, atol=1e-10)


def test_cut_increases_vertex_count(box):
    sim = elastodyn.Simulation(box, dt=0.01)
    sim.pin_below(0.01)
    sim.step(2)
    old = sim.positions
    change = sim.cut((0.2, 0.2, 0.6), (0, 0, 1))
    assert change.kind == "cut" and change.duplicated_vertices > 0 and change.frame == 2
    assert sim.num_vertices > box.num_vertices and sim.components == 2
    assert sim.positions.shape == (sim.num_nodes, 3) and sim.positions is not old
    assert sim.pinned.shape == (sim.num_nodes,) and sim.pinned.sum() == 9
    upper = sim.rest_positions[:, 2] > 0.7
    z0 = sim.positions[upper, 2].copy()
    sim.step(10)
    assert np.all(sim.positions[upper, 2] < z0)  # the cut-off part falls
    assert len(sim.topology_changes) == 1
    sim.undo()
    assert sim.num_vertices == box.num_vertices


def test_refine_and_order_change(box):
    sim = elastodyn.Simulation(box, dt=0.01)
    sim.refine_uniform()
    assert sim.num_cells == 8 * box.num_cells
    sim.change_settings(order=2)
    assert sim.settings.order == 2 and sim.num_nodes > sim.num_vertices
    assert sim.cell_nodes.shape == (sim.num_cells, 10)
    assert sim.step().converged
    assert sim.lumped_mass.sum() == pytest.approx(1000 * box.volume)
    assert sim.von_mises_stress().shape == (sim.num_cells,)


def test_settings_use_the_cli_parser():
    s = elastodyn.Settings(preset="silicone", E=2e5, order=2, newton_tol=1e-4, cg_forcing=False,
                           gravity=[0, -9.81, 0], ground=-0.5, static=True)
    assert (s.E, s.nu, s.rho) == (2e5, 0.48, 1070)  # E wins over the preset
    assert s.order == 2 and s.newton_tol == 1e-4 and not s.cg_forcing
    assert s.gravity == (0, -9.81, 0) and s.ground == -0.5 and s.integrator == "static"
    assert elastodyn.Settings(gravity=3).gravity == (0, 0, -3)
    s.material = "corotational"
    assert s.material == "corotational"
    assert s.with_options(dt=0.5).dt == 0.5 and s.dt == pytest.approx(1 / 60)
    assert set(elastodyn.presets()) >= {"silicone", "gel", "foam"}
    assert any(name == "newton-tol" for name, _, _ in elastodyn.settings_options())
    assert elastodyn.Settings().projection == "on_demand"
    assert elastodyn.Settings(projection="always").projection == "always"
    assert elastodyn.Settings(exact_hessian=True).projection == "never"


def test_bad_settings_raise_with_a_clear_message(box):
    with pytest.raises(elastodyn.UsageError, match="--nu.*out of range"):
        elastodyn.Settings(nu=0.7)
    with pytest.raises(ValueError, match="unknown setting 'youngs'"):
        elastodyn.Simulation(box, youngs=1e5)
    with pytest.raises(ValueError, match="unknown preset|preset"):
        elastodyn.Settings(preset="granite")
    with pytest.raises(ValueError, match="backward_euler"):
        elastodyn.Settings().integrator = "leapfrog"
    settings = elastodyn.Settings()
    settings.dt = -1.0
    with pytest.raises(elastodyn.UsageError):
        elastodyn.Simulation(box, settings)
    sim = elastodyn.Simulation(box)
    with pytest.raises(ValueError, match=r"positions: expected \(63, 3\)"):
        sim.positions = np.zeros((5, 3))
    with pytest.raises(ValueError, match="pin height"):
        sim.pin_below(float("nan"))
    if not elastodyn.built_with_cuda():
        with pytest.raises(elastodyn.EngineError) as error:
            elastodyn.Simulation(box, backend="cuda")
        assert error.value.code == "unsupported"


def test_step_releases_the_gil(box):
    sims = [elastodyn.Simulation(box, dt=0.01) for _ in range(2)]
    threads = [threading.Thread(target=s.step, args=(5,)) for s in sims]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(sims[0].positions, sims[1].positions)
    assert sims[0].frame == sims[1].frame == 5


def test_busy_simulation_refuses_other_threads():
    sim = elastodyn.Simulation(elastodyn.box_mesh(6, 6, 18, (0, 0, 0), (0.4, 0.4, 1.2)), dt=0.01)
    started = threading.Event()
    errors = []

    def run():
        started.set()
        sim.step(40)

    worker = threading.Thread(target=run)
    worker.start()
    started.wait()
    while worker.is_alive():
        try:
            sim.velocities[0, 0] = 0.0
        except elastodyn.UsageError as error:
            errors.append(str(error))
            break
    worker.join()
    assert sim.frame == 40
    # While the worker is inside step (GIL released) this thread runs and must be refused.
    assert errors and "busy" in errors[0]


def test_rest_positions_can_be_rewritten(box):
    sim = elastodyn.Simulation(box, dt=0.01, gravity=[0, 0, 0], order=2)
    sim.pin_below(0.01)
    pins = sim.pinned.copy()
    grown = box.vertices * 1.1
    sim.set_rest_positions(grown)
    np.testing.assert_allclose(sim.rest_positions[:box.num_vertices], grown)
    np.testing.assert_array_equal(sim.pinned, pins)
    np.testing.assert_array_equal(sim.positions[:box.num_vertices], box.vertices)
    assert sim.step().strain_energy > 0  # the old shape is now a compressed state
    flipped = box.vertices * np.array([1, 1, -1])
    with pytest.raises(elastodyn.UsageError, match="inverted"):
        sim.set_rest_positions(flipped)


def test_convergence_summary_is_simulates(box):
    sim = elastodyn.Simulation(box, dt=0.01)
    summary = elastodyn.convergence_summary(sim.step(4), sim.settings.newton_tol)
    assert summary["frames"] == 4 and summary["frames_converged"] == 4
    assert summary["line"].startswith("4/4 frames met the tolerance")


def test_drag_pulls_a_vertex_toward_its_target(box):
    sim = elastodyn.Simulation(box, dt=0.01, gravity=[0, 0, 0])
    sim.pin_below(0.01)
    top = int(np.argmax(sim.rest_positions[:, 2]))
    target = sim.rest_positions[top] + (0.1, 0, 0)
    sim.set_drag((top, top, top), (1, 0, 0), target, stiffness=1e3)
    sim.step(10)
    assert sim.positions[top, 0] > sim.rest_positions[top, 0] + 0.01
    sim.clear_drag()
    with pytest.raises(elastodyn.UsageError, match="drag vertex"):
        sim.set_drag((10**6, 0, 0), (1, 0, 0), target)
    assert elastodyn.__version__.count(".") == 2


def test_pins_written_at_order_two_hold_every_node(box):
    sim = elastodyn.Simulation(box, dt=0.01, order=2, gravity=[9.81, 0, 0])
    mask = sim.rest_positions[:, 2] < 0.21  # vertex, edge and face nodes of the bottom slab
    sim.pinned = mask
    sim.step(3)
    np.testing.assert_array_equal(sim.pinned, mask)
    np.testing.assert_array_equal(sim.positions[mask], sim.rest_positions[mask])
    assert np.abs(sim.positions[~mask] - sim.rest_positions[~mask]).max() > 1e-5
    sim.pinned[:] = False  # freed in place: the whole body falls sideways
    sim.step()
    assert np.all(sim.positions[mask, 0] > sim.rest_positions[mask, 0])


@pytest.mark.skipif(not elastodyn.cuda_available(), reason="no usable CUDA device")
def test_cuda_backend_follows_the_cpu(box):
    runs = {}
    for backend in ("cpu", "cuda"):
        sim = elastodyn.Simulation(box, dt=0.01, gravity=[9.81, 0, 0], backend=backend)
        sim.pin_below(0.01)
        sim.step(5)
        sim.velocities[:] *= 0.5  # a write reaches the device too
        sim.step(5)
        assert sim.settings.backend == backend
        runs[backend] = sim.positions - sim.rest_positions
    scale = np.abs(runs["cpu"]).max()
    # Float matrix and PCG on the GPU: agreement to the solver tolerances, not bits.
    np.testing.assert_allclose(runs["cuda"], runs["cpu"], atol=1e-3 * scale)
