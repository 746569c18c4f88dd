"""Hypothesis strategies of random kernels (stencils, LBM-like populations) and the test profile they run under,
shared by the property tests of the counters and the stages."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# WARPSPEED_PROPERTY_EXAMPLES=2000 explores more (and randomly); the default run is fixed and small.
EXAMPLES = int(os.environ.get("WARPSPEED_PROPERTY_EXAMPLES", "0"))
PROFILE = settings(max_examples=EXAMPLES or 40, deadline=None, derandomize=not EXAMPLES, print_blob=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])



@st.composite
def stencil_kernels(draw, max_domain=(64, 32, 16), dims=None, aligned=False, x_padding=(0, 5)):
    """A random affine stencil kernel as the TOML dict of docs/kernel-format.md.

    ``aligned``: every row of every field starts on a 128 B line (row pitch and offset multiples of 128 B).
    ``x_padding``: (least, most) elements a row holds beyond the domain and the halo.
    """
    dims = dims or draw(st.sampled_from([2, 3]))
    nx = draw(st.integers(1, max_domain[0]))
    ny = draw(st.integers(1, max_domain[1]))
    nz = draw(st.integers(1, max_domain[2])) if dims == 3 else 1
    r = draw(st.integers(0, 2))
    rz = r if dims == 3 else 0
    offsets = st.tuples(st.integers(-r, r), st.integers(-r, r), st.integers(-rz, rz))
    fields = []
    for j in range(draw(st.integers(1, 3))):
        eb = draw(st.sampled_from([4, 8]))
        transposed = draw(st.sampled_from([False] * 5 + [True]))  # field x indexed by tidy and y by tidx
        sx = 1 if transposed else draw(st.sampled_from([1, 1, 1, 2]))  # x stride (2: every other element)
        ext = (ny, nx) if transposed else (sx * (nx + 2 * r) - 2 * r, ny)
        shape = [ext[0] + 2 * r + draw(st.integers(*x_padding)), ext[1] + 2 * r + draw(st.integers(0, 2)),
                 nz + 2 * rz + draw(st.integers(0, 1))]
        per_line = 128 // eb
        if aligned:
            shape[0] = -(-shape[0] // per_line) * per_line
        linear = draw(st.booleans())

        def access(o, shape=shape, sx=sx, linear=linear, transposed=transposed):
            ix, iy, iz = f"{sx}*tidx + {sx * (r + o[0])}", f"tidy + {r + o[1]}", f"tidz + {rz + o[2]}"
            if transposed:
                ix, iy = iy, ix
            if linear:
                return f"{ix} + {shape[0]}*({iy}) + {shape[0] * shape[1]}*({iz})"
            return [ix, iy, iz]

        loads = draw(st.lists(offsets, max_size=5, unique=True))
        stores = draw(st.lists(offsets, max_size=1 if loads else 2, unique=True))
        fields.append({"name": f"f{j}", "element_bytes": eb, "shape": shape,
                       "offset": draw(st.sampled_from([0, per_line, 3 * per_line] if aligned else
                                                      [0, 0, 1, 2, 3, 5, 7, 12, 16, 31])),
                       "loads": [access(o) for o in loads], "stores": [access(o) for o in stores]})
        centre = access((0, 0, 0))
    if not any(f["loads"] or f["stores"] for f in fields):
        fields[-1]["loads"] = [centre]
    return {"name": "random", "precision": "fp64", "flops_per_lup": 1, "domain": [nx, ny, nz],
            "field": fields, "registers": draw(st.sampled_from([32, 32, 64, 128]))}


@st.composite
def population_kernels(draw, aos=False, populations=(4, 9), x_padding=(0, 3)):
    """LBM-like kernels: 4-D fields (x, y, z, q) with a ghost layer, population q read at cell - c_q and
    written at the cell (or in place). Random velocity subsets and plane paddings make neighbouring
    q-planes share granules or not, so the access groups of isl_volumes split and merge.

    ``x_padding``: (least, most) elements a row holds beyond the domain and its ghost layers (wide padding
    keeps a block's rows apart, as in a large domain).

    ``aos``: array of structures (q, x, y, z), q fastest, with ``populations`` (least, most) velocities:
    rows of one cell whose byte phases mostly cycle with x, y and z together (counted by enumeration,
    ``enumerated_volumes``), sometimes with one index or none (counted by ISL)."""
    domain = (draw(st.integers(2, 24)), draw(st.integers(1, 8)), draw(st.integers(1, 6)))
    vel = st.tuples(st.integers(-1, 1), st.integers(-1, 1), st.integers(-1, 1))
    n_vel = draw(st.integers(*populations)) if aos else None
    velocities = draw(st.lists(vel, min_size=n_vel or 1, max_size=n_vel or 6, unique=True))
    eb = draw(st.sampled_from([4, 8, 8, 8] if aos else [4, 8]))
    shape = [domain[0] + 2 + draw(st.integers(*x_padding)), domain[1] + 2, domain[2] + 2 + draw(st.integers(0, 1)),
             len(velocities)]
    loads = [[f"tidx+{1 - cx}", f"tidy+{1 - cy}", f"tidz+{1 - cz}", str(q)]
             for q, (cx, cy, cz) in enumerate(velocities)]
    stores = [["tidx+1", "tidy+1", "tidz+1", str(q)] for q in range(len(velocities))]
    if aos:
        shape = shape[3:] + shape[:3]
        loads, stores = ([a[3:] + a[:3] for a in accs] for accs in (loads, stores))
    offset = draw(st.integers(0, 7))
    src = {"name": "src", "element_bytes": eb, "shape": shape, "offset": offset, "loads": loads, "stores": []}
    dst = {"name": "dst", "element_bytes": eb, "shape": shape, "offset": draw(st.integers(0, 7)), "loads": [],
           "stores": stores}
    fields = [dict(src, stores=stores)] if draw(st.booleans()) else [src, dst]  # in place or two arrays
    return {"name": "populations", "precision": "fp64" if eb == 8 else "fp32", "flops_per_lup": 10,
            "domain": list(domain), "field": fields, "registers": draw(st.sampled_from([32, 64]))}


@st.composite
def box_kernels(draw, max_domain=(40, 16, 8)):
    """Box-like stencils: every neighbour of a (2r+1)^d box, diagonals included (a 27-point box for r = 1,
    d = 3), or a random part of it that keeps at least one corner, read from one or two fields (4 or 8 B,
    odd row pitches and alignments, tuple or linear indices) and written to another at the centre."""
    dims = draw(st.sampled_from([2, 3]))
    nx, ny = draw(st.integers(1, max_domain[0])), draw(st.integers(1, max_domain[1]))
    nz = draw(st.integers(1, max_domain[2])) if dims == 3 else 1
    r = draw(st.integers(1, 2))
    rz = r if dims == 3 else 0
    box = [(x, y, z) for z in range(-rz, rz + 1) for y in range(-r, r + 1) for x in range(-r, r + 1)]
    corners = [o for o in box if abs(o[0]) == r and abs(o[1]) == r and abs(o[2]) == rz]
    if draw(st.booleans()):
        offsets = box
    else:
        offsets = sorted({draw(st.sampled_from(corners)), *draw(st.lists(st.sampled_from(box), max_size=8))})
    fields = []
    for j in range(draw(st.integers(1, 2)) + 1):
        eb = draw(st.sampled_from([4, 8]))
        shape = [nx + 2 * r + draw(st.integers(0, 5)), ny + 2 * r + draw(st.integers(0, 2)),
                 nz + 2 * rz + draw(st.integers(0, 1))]
        linear = draw(st.booleans())

        def access(o, shape=shape, linear=linear):
            ix, iy, iz = f"tidx + {r + o[0]}", f"tidy + {r + o[1]}", f"tidz + {rz + o[2]}"
            if linear:
                return f"{ix} + {shape[0]}*({iy}) + {shape[0] * shape[1]}*({iz})"
            return [ix, iy, iz]

        store = j == 0
        fields.append({"name": f"f{j}", "element_bytes": eb, "shape": shape,
                       "offset": draw(st.sampled_from([0, 0, 1, 3, 5, 16, 31])),
                       "loads": [] if store else [access(o) for o in offsets],
                       "stores": [access((0, 0, 0))] if store else []})
    return {"name": "box", "precision": "fp64", "flops_per_lup": len(offsets), "domain": [nx, ny, nz],
            "field": fields, "registers": draw(st.sampled_from([32, 64]))}
