#!/usr/bin/env python3
"""Energy curve of a run: the Python twin of `elastodyn-cli simulate`.

Runs a simulation with simulate's settings options (the same names: --preset, --order, --dt,
--gravity, --newton-tol, ...; `elastodyn-cli simulate --help` lists them), writes the kinetic and
strain energy of every frame to energy.csv and plots them: energy.png with matplotlib when it is
installed, else energy.svg (written here, no plotting library needed). With --cli PATH it also
runs `PATH simulate` with the same arguments and checks that both runs report the same energies.

    PYTHONPATH=build/python python3 python/examples/energy_curve.py --frames 120 \\
        --pin-below 0.01 --gravity 9.81,0,0 --preset silicone --cli build/elastodyn-cli

Without a MESH it simulates a 0.4 x 0.4 x 1.2 box beam (written as beam.node into --out-dir, so
the CLI reads the same mesh).
"""

import argparse
import csv
import json
import pathlib
import subprocess
import sys

import elastodyn


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mesh", nargs="?", help="OBJ, .node/.ele, .msh or .vtu (default: a box)")
    parser.add_argument("--frames", type=int, default=60, help="steps (default 60)")
    parser.add_argument("--pin-below", type=float, help="pin the nodes whose rest z is below Z")
    parser.add_argument("--quality", type=float, default=1.4, help="TetGen radius-edge bound")
    parser.add_argument("--max-volume", type=float, default=0.0, help="TetGen max tet volume")
    parser.add_argument("--out-dir", default=".", help="where energy.csv and the plot go")
    parser.add_argument("--cli", help="elastodyn-cli to run the same simulation with and compare")
    # simulate's settings options, from the engine's own table.
    settings = parser.add_argument_group("simulate's settings options")
    for name, value_name, help_text in elastodyn.settings_options():
        if value_name:
            settings.add_argument("--" + name, metavar=value_name, help=help_text)
        else:
            settings.add_argument("--" + name, action="store_true", help=help_text)
    return parser.parse_args(argv)


def settings_arguments(args):
    """The settings options given, as {name: text} (flags: "")."""
    given = {}
    for name, value_name, _ in elastodyn.settings_options():
        value = getattr(args, name.replace("-", "_"))
        if value_name and value is not None:
            given[name] = value
        elif not value_name and value:
            given[name] = ""
    return given


def run_python(mesh_path, args, given):
    """The run through the module; returns one dict per frame."""
    mesh = elastodyn.load_mesh(mesh_path, quality=args.quality, max_volume=args.max_volume)
    # Text as on the command line ("9.81,0,0"): the engine's option parser reads it either way.
    keywords = {name.replace("-", "_"): True if text == "" else text for name, text in given.items()}
    sim = elastodyn.Simulation(mesh, **keywords)
    if args.pin_below is not None:
        sim.pin_below(args.pin_below)
    dt = sim.settings.dt
    frames = []
    for frame, result in enumerate(sim.step(args.frames)):
        frames.append({"frame": frame, "time": (frame + 1) * dt,
                       "kinetic_energy": result.kinetic_energy,
                       "strain_energy": result.strain_energy,
                       "newton_iterations": result.newton_iterations,
                       "cg_iterations": result.cg_iterations,
                       "converged": result.converged})
    return frames


def run_cli(cli, mesh_path, args, given, out_dir):
    """The same run through `elastodyn-cli simulate`; returns run.json's frames."""
    run_json = out_dir / "run.json"
    command = [cli, "simulate", str(mesh_path), "--frames", str(args.frames),
               "--quality", str(args.quality), "--max-volume", str(args.max_volume),
               "--out", str(run_json)]
    if args.pin_below is not None:
        command += ["--pin-below", repr(args.pin_below)]
    for name, text in given.items():
        command += ["--" + name] + ([text] if text != "" else [])
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return json.loads(run_json.read_text())["frames"]


def write_csv(path, frames):
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["frame", "time", "kinetic_energy", "strain_energy", "total",
                         "newton_iterations", "cg_iterations", "converged"])
        for f in frames:
            writer.writerow([f["frame"], f["time"], repr(f["kinetic_energy"]),
                             repr(f["strain_energy"]),
                             repr(f["kinetic_energy"] + f["strain_energy"]),
                             f["newton_iterations"], f["cg_iterations"], int(f["converged"])])


def curves(frames):
    times = [f["time"] for f in frames]
    kinetic = [f["kinetic_energy"] for f in frames]
    strain = [f["strain_energy"] for f in frames]
    total = [k + s for k, s in zip(kinetic, strain)]
    return times, {"kinetic": kinetic, "strain": strain, "kinetic + strain": total}


def plot_matplotlib(path, frames):
    import matplotlib

    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    times, series = curves(frames)
    figure, axes = plt.subplots(figsize=(7, 4))
    for label, values in series.items():
        axes.plot(times, values, label=label)
    axes.set_xlabel("time [s]")
    axes.set_ylabel("energy [J]")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def plot_svg(path, frames):
    """A line chart as plain SVG (axes, ticks at the ends, one polyline per curve, a legend)."""
    times, series = curves(frames)
    width, height, margin = 640, 360, 60
    t0, t1 = min(times), max(times)
    e_max = max(max(v) for v in series.values())
    e_min = min(0.0, min(min(v) for v in series.values()))
    t_span = (t1 - t0) or 1.0
    e_span = (e_max - e_min) or 1.0

    def xy(t, e):
        x = margin + (t - t0) / t_span * (width - 2 * margin)
        y = height - margin - (e - e_min) / e_span * (height - 2 * margin)
        return f"{x:.1f},{y:.1f}"

    colours = ["#1f77b4", "#d62728", "#2ca02c"]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<path d="M{margin},{margin} V{height - margin} H{width - margin}" '
             'stroke="black" fill="none"/>',
             f'<text x="{width / 2}" y="{height - 15}" text-anchor="middle">time [s]</text>',
             f'<text x="15" y="{height / 2}" transform="rotate(-90 15 {height / 2})" '
             'text-anchor="middle">energy [J]</text>',
             f'<text x="{margin}" y="{height - margin + 18}" text-anchor="middle">{t0:.3g}</text>',
             f'<text x="{width - margin}" y="{height - margin + 18}" '
             f'text-anchor="middle">{t1:.3g}</text>',
             f'<text x="{margin - 5}" y="{margin + 4}" text-anchor="end">{e_max:.3g}</text>',
             f'<text x="{margin - 5}" y="{height - margin + 4}" text-anchor="end">{e_min:.3g}</text>']
    for i, (label, values) in enumerate(series.items()):
        points = " ".join(xy(t, e) for t, e in zip(times, values))
        parts.append(f'<polyline points="{points}" stroke="{colours[i]}" fill="none" '
                     'stroke-width="1.5"/>')
        parts.append(f'<text x="{width - margin - 120}" y="{margin + 18 * i}" '
                     f'fill="{colours[i]}">{label}</text>')
    parts.append("</svg>")
    pathlib.Path(path).write_text("\n".join(parts) + "\n")


def main(argv=None):
    args = parse_arguments(argv)
    out_dir = pathlib.Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    given = settings_arguments(args)
    mesh_path = args.mesh
    if mesh_path is None:
        mesh_path = out_dir / "beam.node"
        elastodyn.box_mesh(4, 4, 12, (0, 0, 0), (0.4, 0.4, 1.2)).write_node_ele(mesh_path)

    frames = run_python(mesh_path, args, given)
    write_csv(out_dir / "energy.csv", frames)
    print(f"energy_curve: {len(frames)} frames, "
          f"{sum(f['converged'] for f in frames)} converged -> {out_dir / 'energy.csv'}")
    try:
        plot_matplotlib(out_dir / "energy.png", frames)
        print(f"energy_curve: plot -> {out_dir / 'energy.png'}")
    except ImportError:
        plot_svg(out_dir / "energy.svg", frames)
        print(f"energy_curve: matplotlib not installed, plot -> {out_dir / 'energy.svg'}")

    if args.cli:
        theirs = run_cli(args.cli, mesh_path, args, given, out_dir)
        worst = 0.0
        for ours, cli_frame in zip(frames, theirs):
            for key in ("kinetic_energy", "strain_energy"):
                scale = max(abs(cli_frame[key]), 1e-300)
                worst = max(worst, abs(ours[key] - cli_frame[key]) / scale)
        same = len(theirs) == len(frames) and worst <= 1e-9
        print(f"energy_curve: elastodyn-cli simulate gave {len(theirs)} frames, largest relative "
              f"energy difference {worst:.3g}: {'same run' if same else 'DIFFERENT'}")
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
