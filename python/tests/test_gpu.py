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
