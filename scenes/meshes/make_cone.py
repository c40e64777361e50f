#!/usr/bin/env python3
"""Write cone.stl: a conical hopper for scenes/user_hopper.json (docs/scenes.md, "A hopper
from scratch"). Standard library only. Units: metres.

The cone's axis is z. The orifice (radius 10 mm) is at z = 0, the open top (radius 70 mm) at
z = 60 mm: the wall is 45 degrees from the vertical. Both ends are open.

Winding rule: every facet runs anticlockwise seen from the particles, so its normal
(right-hand rule) points towards them: here inwards (towards the axis) and up.
"""
import math
import os

R_ORIFICE = 0.010  # m, radius at the bottom (z = 0)
R_TOP = 0.070      # m, radius at the top
HEIGHT = 0.060     # m
SEGMENTS = 48      # facets around the axis


def ring(r, z, i):
    a = 2 * math.pi * i / SEGMENTS
    return (r * math.cos(a), r * math.sin(a), z)


def normal(a, b, c):
    u = [b[k] - a[k] for k in range(3)]
    v = [c[k] - a[k] for k in range(3)]
    n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
    length = math.sqrt(sum(x * x for x in n))
    return tuple(x / length for x in n)


triangles = []
for i in range(SEGMENTS):
    b0, b1 = ring(R_ORIFICE, 0.0, i), ring(R_ORIFICE, 0.0, i + 1)  # bottom edge
    t0, t1 = ring(R_TOP, HEIGHT, i), ring(R_TOP, HEIGHT, i + 1)    # top edge
    # anticlockwise seen from inside the cone: bottom, top, next top; bottom, next top, next bottom
    triangles.append((b0, t0, t1))
    triangles.append((b0, t1, b1))

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cone.stl")
with open(path, "w") as f:
    f.write("solid cone\n")
    for tri in triangles:
        f.write("  facet normal %.6f %.6f %.6f\n    outer loop\n" % normal(*tri))
        for v in tri:
            f.write("      vertex %.9f %.9f %.9f\n" % v)
        f.write("    endloop\n  endfacet\n")
    f.write("endsolid cone\n")
print("wrote %s: %d triangles" % (path, len(triangles)))
