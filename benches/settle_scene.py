#!/usr/bin/env python3
"""The peers' settle box (../shared/peers/README.md, section 4) as a Talus scene.

    python3 benches/settle_scene.py OUT.json NX NY NZ STEPS [DATA]

1 mm spheres on a 2.2 mm lattice (jitter 5 % of a radius, seeded) in a box of NX a x NY a x
(NZ + 6) a open at +z, E = 1e7 Pa, nu = 0.3, e = 0.5, mu = 0.5, Hertz-Mindlin, dt = 5e-6 s,
skin 0.2 mm; with DATA, the particles are read from that LAMMPS data file (a settled packing)
instead of the lattice. Also writes OUT_untracked.json, the same scene with energy tracking off
(forces only, as the peers, which book no dissipation). Used by benches/peers.sh (CPU, against
LIGGGHTS and LAMMPS) and benches/gpu_peers.sh (GPU, against DEME).
"""
import json
import sys

out, nx, ny, nz, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
data = sys.argv[6] if len(sys.argv) > 6 else ""
r, a = 1e-3, 2.2e-3
scene = {
    "description": f"peers settle box {nx}x{ny}x{nz}" + (" from a settled packing" if data else " from the lattice"),
    "gravity": [0, 0, -9.81], "time_step": 5e-6, "steps": steps,
    "output": {"every_steps": steps}, "snapshot_every": 0, "skin": 2e-4,
    "materials": {"grain": {"density": 2500, "youngsModulus": 1e7, "poissonsRatio": 0.3, "fric": 0.5}},
    "contacts": {"default": {"model": "hertz_mindlin", "coefficientRestitution": 0.5}},
    "walls": [{"type": "box", "name": "bin", "min": [0, 0, 0], "max": [nx * a, ny * a, (nz + 6) * a], "material": "grain", "open": ["+z"]}],
}
if data:
    scene["initial_state"] = {"file": data, "format": "lammps_data", "material": "grain"}
else:
    scene["generators"] = [{"type": "lattice", "origin": [a / 2] * 3, "count": [nx, ny, nz], "spacing": a, "jitter": 0.05 * r,
                            "radius": r, "material": "grain", "seed": 15485863}]
json.dump(scene, open(out, "w"), indent=1)
scene["energy_tracking"] = False
json.dump(scene, open(out.replace(".json", "_untracked.json"), "w"), indent=1)
