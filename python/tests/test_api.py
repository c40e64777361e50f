"""The issue-36 tests of the `talus` module (docs/python.md)."""

import json
import math
import subprocess

import numpy as np
import pytest

import talus
from conftest import drop_scene, free_scene, talus_bin


def test_energy_csv_byte_identical_to_talus_run(tmp_path):
    scene = talus.Scene.from_dict(drop_scene(), name="drop")
    sim = talus.Simulation(scene, backend="cpu", out=tmp_path / "py")
    summary = sim.run()
    assert summary["steps"] == 600 and sim.step_count == 600
    scene_file = tmp_path / "drop.json"
    scene_file.write_text(scene.to_json())
    subprocess.run([talus_bin(), "run", str(scene_file), "--backend", "cpu", "--no-progress", "--out", str(tmp_path / "cli")], check=True, capture_output=True)
    for name in ["energy.csv", "walls.csv"]:
        ours, theirs = (tmp_path / "py" / name).read_bytes(), (tmp_path / "cli" / name).read_bytes()
        assert ours == theirs, name
    rows = (tmp_path / "py" / "energy.csv").read_text().splitlines()
    assert len(rows) == 1 + 600 // 50 + 1
    # the balls did touch: the comparison covers contacts
    assert float(rows[-1].split(",")[rows[0].split(",").index("dashpot")]) > 0
    for name in ["summary.json", "checkpoint.talus", "energy.png", "render.png"]:
        assert (tmp_path / "py" / name).is_file(), name


def test_state_arrays_and_free_flight():
    sim = talus.Simulation(talus.Scene.from_dict(free_scene()), backend="cpu")
    n = sim.n_particles
    assert n == 6
    for name in ["positions", "velocities", "angular_velocities", "forces"]:
        a = getattr(sim, name)
        assert a.shape == (n, 3) and a.dtype == np.float64, name
        assert not a.flags.writeable, name
    for name in ["radii", "masses"]:
        a = getattr(sim, name)
        assert a.shape == (n,) and a.dtype == np.float64, name
    assert sim.ids.dtype == np.int64 and list(sim.ids) == list(range(n))
    assert np.allclose(sim.masses, 2500 * 4 / 3 * math.pi * 0.01**3, rtol=1e-15)
    z0 = sim.positions[:, 2].copy()
    v0, k = 0.37, 25
    sim.set_velocities(np.tile([0.0, 0.0, v0], (n, 1)))
    sim.step(k)
    assert sim.step_count == k
    z = sim.positions[:, 2]
    # drift x += v·Δt each step, v exactly v0 (no force, no gravity): the f64 sum of k
    # increments, bit for bit, which is v0·k·Δt up to rounding
    expected = z0.copy()
    for _ in range(k):
        expected = expected + v0 * sim.dt
    assert np.array_equal(z, expected)
    assert np.allclose(z - z0, v0 * k * sim.dt, rtol=1e-12, atol=0)
    assert np.array_equal(sim.velocities, np.tile([0.0, 0.0, v0], (n, 1)))
    # x and y did not move
    assert np.array_equal(sim.positions[:, :2], np.array(free_scene()["particles"][0]["position"][:2]) * 0 + np.array([p["position"][:2] for p in free_scene()["particles"]]))


def test_set_with_ids_and_step_split_is_step_whole():
    a = talus.Simulation(talus.Scene.from_dict(drop_scene()), backend="cpu")
    b = talus.Simulation(talus.Scene.from_dict(drop_scene()), backend="cpu")
    a.set_velocities([[0.0, 0.0, -0.5]], ids=[3])
    b.set_velocities([[0.0, 0.0, -0.5]], ids=np.array([3]))
    assert a.velocities[3, 2] == -0.5 and a.velocities[3, 0] == 0.0 and a.velocities[2, 2] == -0.3
    a.step(123)
    a.step(77)
    b.step(200)
    assert np.array_equal(a.positions, b.positions)
    assert a.energies() == b.energies()


def test_wrong_shape_raises_value_error_naming_the_shape():
    sim = talus.Simulation(talus.Scene.from_dict(free_scene()), backend="cpu")
    with pytest.raises(ValueError, match=r"\(6, 3\)"):
        sim.set_velocities(np.zeros((5, 3)))
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        sim.set_positions(np.zeros(6), ids=[0, 1])
    with pytest.raises(ValueError, match="id 9"):
        sim.set_angular_velocities(np.zeros((1, 3)), ids=[9])


def test_bad_key_raises_scene_error_with_key():
    d = free_scene()
    d["gravty"] = [0, 0, -9.81]
    with pytest.raises(talus.SceneError) as e:
        talus.Scene.from_dict(d)
    assert e.value.key == "gravty" and "gravty" in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, talus.TalusError)
    scene = talus.Scene.from_dict(free_scene())
    with pytest.raises(talus.SceneError) as e:
        scene.with_overrides({"materials.glas.fric": 0.3})
    assert e.value.key == "materials.glas.fric" and "materials.glas.fric" in str(e.value)
    with pytest.raises(talus.SceneError) as e:
        scene.with_overrides({"materials.glass.fric": -1})
    assert e.value.key == "materials.glass.fric" and "materials.glass.fric" in str(e.value)


def test_overrides_and_dicts_round_trip():
    scene = talus.Scene.from_dict(drop_scene()).with_overrides({"materials.steel.fric": 0.1, "steps": 100})
    d = scene.to_dict()
    assert d["materials"]["steel"]["fric"] == 0.1 and d["steps"] == 100
    assert scene.overrides == {"materials.steel.fric": 0.1, "steps": 100}
    assert json.loads(scene.to_json()) == d
    again = talus.Scene.from_json(scene.to_json())
    assert again.to_dict() == d


def test_checkpoint_resumes_in_cli_and_python(tmp_path):
    sim = talus.Simulation(talus.Scene.from_dict(drop_scene(steps=400), name="drop", base_dir=tmp_path), backend="cpu")
    sim.step(200)
    sim.save_checkpoint(tmp_path / "c.talus")
    subprocess.run([talus_bin(), "resume", str(tmp_path / "c.talus"), "--backend", "cpu", "--no-progress", "--out", str(tmp_path / "cli")], check=True, capture_output=True)
    other = talus.Simulation.from_checkpoint(tmp_path / "c.talus", backend="cpu", out=tmp_path / "py")
    assert other.step_count == 200 and other.end_step == 400
    other.run()
    for name in ["energy.csv", "walls.csv"]:
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    # and the same as never stopping
    sim.run()
    assert np.array_equal(sim.positions, other.positions)
    assert sim.energies() == other.energies()


def test_callback_count_and_exception_stops():
    sim = talus.Simulation(talus.Scene.from_dict(drop_scene(steps=600)), backend="cpu")
    seen = []
    sim.run(steps=300, every=60, callback=lambda s: seen.append(s.step_count))
    assert seen == [60, 120, 180, 240, 300]

    class Stop(Exception):
        pass

    def boom(s):
        if s.step_count >= 400:
            raise Stop("from the callback")

    with pytest.raises(Stop):
        sim.run(every=50, callback=boom)
    assert sim.step_count == 400
    # returning False ends the run early, without an error
    sim.run(every=50, callback=lambda s: False)
    assert sim.step_count == 450
    steps = list(sim.iter_run(steps=100, every=25))
    assert steps == [475, 500, 525, 550]


def test_sweep_three_points_and_repeat_bit_identical():
    base = talus.Scene.from_dict(drop_scene(steps=400))

    def point(fric):
        sim = talus.Simulation(base.with_overrides({"materials.steel.fric": fric}), backend="cpu")
        sim.run()
        e = sim.energies()
        return e["slip"], sim.positions

    results = [point(f) for f in (0.05, 0.3, 0.8)]
    slips = [r[0] for r in results]
    assert all(math.isfinite(s) for s in slips)
    assert len(set(slips)) == 3
    again = point(0.3)
    assert again[0] == results[1][0] and np.array_equal(again[1], results[1][1])


def test_results_walls_contacts_measurements(tmp_path):
    sim = talus.Simulation(talus.Scene.from_dict(drop_scene(steps=400)), backend="cpu")
    seen = {"fz": 0.0, "pairs": 0, "walls": 0}

    def look(s):
        loads = s.wall_loads()
        assert set(loads) == {"floor"} and loads["floor"]["force"].shape == (3,)
        seen["fz"] = min(seen["fz"], loads["floor"]["force"][2])
        c = s.contacts()
        assert c["pairs"].shape == (len(c["overlaps"]), 2) and c["shear_forces"].shape == (len(c["overlaps"]), 3)
        assert np.all(c["overlaps"] > -1e-12)
        seen["pairs"] = max(seen["pairs"], len(c["pairs"]))
        seen["walls"] = max(seen["walls"], len(c["wall_particles"]))
        assert set(c["walls"]) <= {"floor"} and len(c["walls"]) == len(c["wall_particles"])

    sim.run(every=10, callback=look)
    # the balls hit the floor (pushing it down) and each other
    assert seen["fz"] < -sim.masses.sum() * 9.81
    assert seen["pairs"] >= 1 and seen["walls"] >= 4
    assert sim.measurements() == []
    e = sim.energies()
    assert {"kinetic", "gravitational", "strain", "slip", "dashpot", "total"} <= set(e)
    assert e["dashpot"] > 0
    sim.write_snapshot(tmp_path / "s.vtu")
    assert (tmp_path / "s.vtu").read_text().startswith("<?xml")


def test_machine_and_version():
    assert talus.__version__ == "0.1.0"
    info = talus.info()
    assert info["auto_backend"] in ("cpu", "gpu") and info["cpu_threads"] >= 1
    assert isinstance(talus.gpu_available(), bool)
    with pytest.raises(ValueError):
        talus.Simulation(talus.Scene.from_dict(free_scene()), backend="tpu")


def test_ctrl_c_stops_between_batches_with_a_checkpoint(tmp_path):
    import os
    import signal
    import threading

    sim = talus.Simulation(talus.Scene.from_dict(free_scene(steps=50_000_000)), backend="cpu", out=tmp_path)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sim.run()
    timer.join()
    stopped = sim.step_count
    assert 0 < stopped < 50_000_000 and stopped % 10 == 0
    # the checkpoint of the step it stopped at, as `talus run` writes on Ctrl-C
    again = talus.Simulation.from_checkpoint(tmp_path / "checkpoint.talus", backend="cpu")
    assert again.step_count == stopped
    assert np.array_equal(again.positions, sim.positions)


def test_wall_velocity_from_python_is_the_scene_motion():
    import copy

    k0, v = 100, 0.05
    base = drop_scene(steps=300)
    dt = base["time_step"]
    moved = copy.deepcopy(base)
    # what set_wall_velocity makes of it: the velocity ramps to v over the step after k0
    moved["walls"][0]["motion"] = {"velocity": [[k0 * dt, [0, 0, 0]], [k0 * dt + dt, [0, 0, v]]]}
    a = talus.Simulation(talus.Scene.from_dict(moved), backend="cpu")
    a.run()
    b = talus.Simulation(talus.Scene.from_dict(base), backend="cpu")
    b.step(k0)
    b.set_wall_velocity("floor", [0.0, 0.0, v])
    b.run()
    assert b.step_count == a.step_count == 300
    assert np.array_equal(a.positions, b.positions)
    assert a.energies() == b.energies()
    assert b.energies()["wall_work"] != 0
    with pytest.raises(ValueError, match="no wall `flor`"):
        b.set_wall_velocity("flor", [0.0, 0.0, 0.0])


def test_until_iter_run_and_split_runs_write_one_run(tmp_path):
    sim = talus.Simulation(talus.Scene.from_dict(free_scene(steps=100)), backend="cpu", out=tmp_path / "split")
    sim.set_velocities(np.tile([0.0, 0.1, 0.0], (sim.n_particles, 1)))
    sim.run(until=5e-4)
    assert sim.step_count == 50 and abs(sim.time - 5e-4) < 1e-15
    it = sim.iter_run()
    assert len(it) == 5 and it.total_steps == 50 and it.summary is None
    assert list(it) == [60, 70, 80, 90, 100]
    assert it.summary["steps"] == 100 and sim.summary()["steps"] == 100
    whole = talus.Simulation(talus.Scene.from_dict(free_scene(steps=100)), backend="cpu", out=tmp_path / "whole")
    whole.set_velocities(np.tile([0.0, 0.1, 0.0], (whole.n_particles, 1)))
    whole.run()
    text = (tmp_path / "whole" / "energy.csv").read_text()
    assert (tmp_path / "split" / "energy.csv").read_text() == text
    assert len(text.splitlines()) == 1 + 11
