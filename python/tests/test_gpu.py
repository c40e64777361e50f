"""The GPU path on whatever adapter there is (lavapipe on CI): a few particles, a few steps,
against the CPU reference. Like the Rust GPU tests, it fails (does not skip) without a Vulkan
driver (README, "Run the tests")."""

import numpy as np

import talus
from conftest import drop_scene


def test_gpu_runs_and_agrees_with_cpu():
    assert talus.gpu_available(), "no GPU adapter: install a Vulkan driver (mesa-vulkan-drivers libvulkan1)"
    scene = talus.Scene.from_dict(drop_scene(steps=300))
    gpu = talus.Simulation(scene, backend="gpu")
    cpu = talus.Simulation(scene, backend="cpu")
    assert gpu.backend == "gpu" and cpu.backend == "cpu"
    # a write goes to the device too
    v = np.array(cpu.velocities)
    v[:, 0] += 0.05
    for s in (gpu, cpu):
        s.set_velocities(v)
        s.run()
    assert gpu.step_count == cpu.step_count == 300
    # f32 against f64 over one trajectory with a few impacts (bounds of this test: 1e-6 m on
    # mm-scale positions, 1e-3 m/s on velocities up to 0.5 m/s)
    assert np.max(np.abs(gpu.positions - cpu.positions)) < 1e-6
    assert np.max(np.abs(gpu.velocities - cpu.velocities)) < 1e-3
    eg, ec = gpu.energies(), cpu.energies()
    for k in ("kinetic", "gravitational"):
        assert abs(eg[k] - ec[k]) <= 1e-4 * max(abs(ec[k]), 1e-9), k


def test_gpu_wall_velocity_and_shared_device():
    scene = talus.Scene.from_dict(drop_scene(steps=200))
    sims = {kind: talus.Simulation(scene, backend=kind) for kind in ("gpu", "cpu")}
    # a second GPU simulation in the process (one device, shared)
    other = talus.Simulation(scene, backend="gpu")
    for s in sims.values():
        s.step(50)
        s.set_wall_velocity("floor", [0.0, 0.0, 0.02])
        s.run()
    other.run()
    g, c = sims["gpu"], sims["cpu"]
    assert g.step_count == c.step_count == other.step_count == 200
    assert np.max(np.abs(g.positions - c.positions)) < 1e-6
    assert g.energies()["wall_work"] != 0 and abs(g.energies()["wall_work"] - c.energies()["wall_work"]) <= 1e-3 * abs(c.energies()["wall_work"])
    # the floor moved up under the first GPU simulation only
    assert np.min(g.positions[:, 2]) > np.min(other.positions[:, 2])
