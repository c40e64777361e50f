"""A vibrated bed: the floor of a box of beads is moved up and down from a Python callback
(`Simulation.set_wall_velocity`), a sine of amplitude A and frequency f, and the bed's mean
height is recorded.

    python python/examples/shaker.py [--count 300] [--freq 50] [--amp 0.5e-3] [--png shaker.png]

Writes the heights to stdout and, with matplotlib installed, a PNG of the floor and the bed's
mean height against time. A few seconds on the CPU backend of a 2-core machine.
"""

import argparse
import math

import numpy as np

import talus


def scene(count):
    return {
        "gravity": [0, 0, -9.81],
        "time_step": "auto",
        "steps": 20000,
        "output": {"every_steps": 100},
        "snapshot_every": 0,
        "materials": {"glass": {"density": 2500, "youngsModulus": 1e7, "poissonsRatio": 0.25, "fric": 0.4}},
        "contacts": {"default": {"model": "hertz_mindlin", "coefficientRestitution": 0.6}},
        "generators": [{
            "type": "random_fill",
            "box": {"min": [0, 0, 0.001], "max": [0.02, 0.02, 0.04]},
            "count": count,
            "radius": {"distribution": "uniform", "min": 0.001, "max": 0.0012},
            "material": "glass",
            "seed": 3,
        }],
        "walls": [
            {"type": "plane", "name": "floor", "point": [0, 0, 0], "normal": [0, 0, 1], "material": "glass"},
            {"type": "plane", "name": "x0", "point": [0, 0, 0], "normal": [1, 0, 0], "material": "glass"},
            {"type": "plane", "name": "x1", "point": [0.02, 0, 0], "normal": [-1, 0, 0], "material": "glass"},
            {"type": "plane", "name": "y0", "point": [0, 0, 0], "normal": [0, 1, 0], "material": "glass"},
            {"type": "plane", "name": "y1", "point": [0, 0.02, 0], "normal": [0, -1, 0], "material": "glass"},
        ],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--freq", type=float, default=50.0, help="Hz")
    ap.add_argument("--amp", type=float, default=0.5e-3, help="m")
    ap.add_argument("--settle", type=float, default=0.2, help="s to settle before shaking")
    ap.add_argument("--shake", type=float, default=0.1, help="s of shaking")
    ap.add_argument("--backend", default="cpu", choices=["auto", "cpu", "gpu"])
    ap.add_argument("--png", default="shaker.png")
    args = ap.parse_args()

    sim = talus.Simulation(talus.Scene.from_dict(scene(args.count), name="shaker"), backend=args.backend)
    print(f"{sim.n_particles} beads, dt = {sim.dt:.3g} s", flush=True)
    sim.run(until=args.settle)
    omega = 2 * math.pi * args.freq
    t_start = sim.time
    trace = []

    def shake(s):
        # the floor follows z(t) = A sin(ω (t - t0)): its velocity A ω cos(ω (t - t0)), held
        # until the next call (a piecewise-constant approximation of the sine)
        v = args.amp * omega * math.cos(omega * (s.time - t_start))
        s.set_wall_velocity("floor", [0.0, 0.0, v])
        trace.append((s.time, args.amp * math.sin(omega * (s.time - t_start)), float(np.mean(s.positions[:, 2]))))

    # 40 velocity updates per period
    every = max(1, round(1 / (40 * args.freq * sim.dt)))
    shake(sim)
    sim.run(until=args.settle + args.shake, every=every, callback=shake)
    for t, zf, zb in trace[:: max(1, len(trace) // 20)]:
        print(f"t = {t:.4f} s: floor {zf * 1e3:+.3f} mm, bed mean height {zb * 1e3:.3f} mm")
    print(f"floor load now: {sim.wall_loads()['floor']['force'][2]:.4g} N (weight {sim.masses.sum() * 9.81:.4g} N)")

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG")
        return
    t, zf, zb = (np.array(c) for c in zip(*trace))
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(t, zf * 1e3, label="floor (prescribed)")
    ax.plot(t, (zb - zb[0]) * 1e3, label="bed mean height − start")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("mm")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.png, dpi=120)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
