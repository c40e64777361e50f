"""Shared helpers of the Python tests: small scenes built in Python and the `talus` binary."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def talus_bin():
    """The `talus` command-line binary (TALUS_BIN, else target/release/talus of this checkout)."""
    path = os.environ.get("TALUS_BIN") or str(REPO / os.environ.get("CARGO_TARGET_DIR", "target") / "release" / "talus")
    if not os.path.exists(path):
        pytest.fail(f"the talus binary is not at {path}: build it with `cargo build --release` or set TALUS_BIN")
    return path


def drop_scene(steps=600, fric=0.3):
    """Eight steel balls dropped onto a floor, some onto each other: contacts, walls, gravity."""
    particles = []
    for i in range(4):
        x = 0.012 * i
        particles.append({"position": [x, 0.0, 0.0051], "radius": 0.005, "velocity": [0.0, 0.0, -0.3], "material": "steel"})
        particles.append({"position": [x + 0.002, 0.001, 0.0151], "radius": 0.005, "velocity": [0.1, 0.0, -0.5], "material": "steel"})
    return {
        "gravity": [0, 0, -9.81],
        "time_step": 2e-6,
        "steps": steps,
        "output": {"every_steps": 50},
        "snapshot_every": 0,
        "materials": {"steel": {"density": 7800, "hz_shear": 8e8, "hz_poiss": 0.3, "fric": fric}},
        "contacts": {"default": {"model": "hertz_mindlin", "coefficientRestitution": 0.7}},
        "particles": particles,
        "walls": [{"type": "plane", "name": "floor", "point": [0, 0, 0], "normal": [0, 0, 1], "material": "steel"}],
    }


def free_scene(n=6, steps=100):
    """Balls far apart with no gravity and no walls: nothing touches, nothing pulls."""
    return {
        "gravity": [0, 0, 0],
        "time_step": 1e-5,
        "steps": steps,
        "output": {"every_steps": 10},
        "snapshot_every": 0,
        "materials": {"glass": {"density": 2500, "hz_shear": 1e9, "hz_poiss": 0.25, "fric": 0.5}},
        "particles": [{"position": [0.1 * i, 0.05 * (i % 2), 0.01 * i], "radius": 0.01, "material": "glass"} for i in range(n)],
    }
