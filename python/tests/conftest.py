"""Shared fixtures of the Python tests. ctest runs them with PYTHONPATH set to the module's
folder (build/python), ELASTODYN_CLI naming elastodyn-cli and ELASTODYN_SOURCE_DIR the checkout;
by hand: PYTHONPATH=build/python python3 -m pytest python/tests."""

import os
import pathlib
import shutil

import pytest

import elastodyn

SOURCE_DIR = pathlib.Path(os.environ.get("ELASTODYN_SOURCE_DIR",
                                         pathlib.Path(__file__).resolve().parents[2]))


@pytest.fixture
def source_dir():
    return SOURCE_DIR


@pytest.fixture
def cli():
    """Path of elastodyn-cli (the test is skipped when it cannot be found)."""
    path = os.environ.get("ELASTODYN_CLI") or shutil.which("elastodyn-cli")
    if not path:
        candidate = SOURCE_DIR / "build" / "elastodyn-cli"
        path = str(candidate) if candidate.exists() else None
    if not path:
        pytest.skip("elastodyn-cli not found (set ELASTODYN_CLI)")
    return path


@pytest.fixture
def box():
    """A 0.4 x 0.4 x 1.2 beam of 2 x 2 x 6 hexahedra (144 tets)."""
    return elastodyn.box_mesh(2, 2, 6, (0, 0, 0), (0.4, 0.4, 1.2))
