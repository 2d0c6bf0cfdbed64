"""python/examples/energy_curve.py: reproduces a CLI run and writes its energy curve."""

import csv
import os
import subprocess
import sys
import xml.etree.ElementTree as ET


def test_energy_curve_matches_the_cli(cli, source_dir, tmp_path):
    script = source_dir / "python" / "examples" / "energy_curve.py"
    out = subprocess.run(
        [sys.executable, str(script), "--frames", "6", "--pin-below", "0.01", "--preset", "gel",
         "--dt", "0.01", "--gravity", "9.81,0,0", "--out-dir", str(tmp_path), "--cli", cli],
        check=True, capture_output=True, text=True, env=dict(os.environ))
    assert "same run" in out.stdout
    with open(tmp_path / "energy.csv") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["frame"]) for r in rows] == list(range(6))
    assert float(rows[-1]["kinetic_energy"]) > 0
    if (tmp_path / "energy.svg").exists():
        assert ET.parse(tmp_path / "energy.svg").getroot().tag.endswith("svg")
    else:
        assert (tmp_path / "energy.png").stat().st_size > 0
