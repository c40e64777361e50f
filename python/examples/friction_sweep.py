"""Angle of repose against sliding friction: the same pour (scenes/cohesive_heap.json without
its adhesion: a column of glass beads slumps when its gate opens) run at five friction values
on the CPU, the slope of the heap measured by the scene's `repose_angle` measurement.

    python python/examples/friction_sweep.py [--count 600] [--backend cpu] [--png friction_sweep.png]

Writes the table to stdout and, with matplotlib installed, the plot as a PNG. 12–22 s per
point at the default 600 beads on the CPU backend of a 2-core machine (measured).
"""

import argparse
import pathlib
import time

import talus

HERE = pathlib.Path(__file__).resolve().parent
SCENE = HERE.parent.parent / "scenes" / "cohesive_heap.json"
FRICTIONS = [0.1, 0.3, 0.5, 0.7, 0.9]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=600, help="beads in the column (the shipped scene has 1200)")
    ap.add_argument("--backend", default="cpu", choices=["auto", "cpu", "gpu"])
    ap.add_argument("--png", default="friction_sweep.png")
    args = ap.parse_args()

    base = talus.Scene.from_json(SCENE).with_overrides({
        # dry beads: no adhesion (None takes a key out, as `--set key=null`)
        "contacts.default.adhesion": None,
        "contacts.default.surface_energy": None,
        "generators.0.count": args.count,
        # a shorter column for fewer beads
        "generators.0.box.max": [0.04, 0.115 * args.count / 1200, 0.015],
    })
    rows = []
    for fric in FRICTIONS:
        scene = base.with_overrides({"materials.glass.fric": fric})
        sim = talus.Simulation(scene, backend=args.backend)
        t0 = time.time()
        sim.run()
        angle = next(m for m in sim.measurements() if m["name"] == "heap_angle")
        rows.append((fric, angle["value"], angle["details"].get("std")))
        print(f"fric {fric:.1f}: angle of repose {angle['value']:.2f} deg ({sim.step_count} steps, {sim.n_particles} beads, {time.time() - t0:.0f} s on {sim.backend})", flush=True)

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG")
        return
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot([r[0] for r in rows], [r[1] for r in rows], "o-")
    ax.set_xlabel("sliding friction coefficient")
    ax.set_ylabel("angle of repose (deg)")
    ax.set_title(f"Collapse heap, {args.count} glass beads")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
