"""warpspeed.model.estimate against the brute-force twin (tests/bruteforce.py) on a table of small cases,
plus analytic cases whose numbers follow from the semantics by hand.

The twin enumerates every thread of the representative wave (and every valid cell of the blocks it
needs); the estimator uses block classes and ISL sets. Every quantity of the volume model must agree
exactly. SM counts are reduced so that waves are a few blocks from the middle of the grid.
"""

from __future__ import annotations

import pytest
from bruteforce import brute_force, compare, from_estimate, group_cycles, known_deviations, mismatches, miss_share_of

import warpspeed

A100 = warpspeed.device("A100-SXM4-40GB")


def dev(sm_count):
    return A100.with_overrides(sm_count=sm_count)


def fld(name, shape, loads=(), stores=(), eb=8, offset=0):
    return {"name": name, "element_bytes": eb, "shape": list(shape), "offset": offset,
            "loads": [list(a) if not isinstance(a, str) else a for a in loads],
            "stores": [list(a) if not isinstance(a, str) else a for a in stores]}


def kern(domain, *fields, name="case", registers=None):
    spec = {"name": name, "precision": "fp64", "flops_per_lup": 1, "domain": list(domain), "field": list(fields)}
    if registers is not None:
        spec["registers"] = registers
    return warpspeed.kernel_from_dict(spec)


def shifted(o, r, dims):
    """Index tuple of the neighbour at offset o of a field padded by r on each side (x fastest)."""
    names = ("tidx", "tidy", "tidz")[:dims]
    return tuple(f"{v}+{r + d}" if r + d else v for v, d in zip(names, o, strict=False))


def star(r, dims):
    pts = [(0,) * dims]
    for d in range(dims):
        for k in list(range(-r, 0)) + list(range(1, r + 1)):
            pts.append(tuple(k if i == d else 0 for i in range(dims)))
    return [shifted(o, r, dims) for o in pts]


def box(r, dims):
    import itertools
    return [shifted(o, r, dims) for o in itertools.product(range(-r, r + 1), repeat=dims)]


# D3Q7 and two corners: population 1 reads the last row of its q-plane, population 2 the first row of its own
VELOCITIES = [(0, 0, 0), (-1, -1, -1), (1, 1, 1), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1),
              (0, 0, -1)]


def populations(domain, pad_z=0, eb=8, offset=0, registers=None, aos=False, velocities=VELOCITIES):
    """LBM-like pull streaming: population q of src read from the neighbour -c_q, written to dst at the
    cell (fields of shape (x, y, z, q) with a ghost layer, q slowest). Every population touches its own
    rows; whether the q-planes share granules depends on the plane's size (``pad_z``).

    ``aos``: array of structures, shape (q, x, y, z) with q fastest: a cell's populations are adjacent,
    every row is one cell and the rows' byte phases cycle with x, y and z (counted by enumeration)."""
    shape = [n + 2 for n in domain] + [len(velocities)]
    shape[2] += pad_z
    loads = [(f"tidx+{1 - cx}", f"tidy+{1 - cy}", f"tidz+{1 - cz}", str(q))
             for q, (cx, cy, cz) in enumerate(velocities)]
    stores = [("tidx+1", "tidy+1", "tidz+1", str(q)) for q in range(len(velocities))]
    if aos:
        shape = shape[3:] + shape[:3]
        loads, stores = ([a[3:] + a[:3] for a in accs] for accs in (loads, stores))
    return kern(domain, fld("src", shape, loads=loads, eb=eb, offset=offset),
                fld("dst", shape, stores=stores, eb=eb, offset=offset), name="populations", registers=registers)


def stencil(domain, r, dims, loads, *, eb=8, offset=0, pad=(0, 0, 0), dst_offset=0, name="stencil",
            registers=None):
    """src (padded by r, plus extra padding ``pad``) read through ``loads``, dst written at the centre."""
    shape = [n + 2 * r + p for n, p in zip(domain[:dims], pad, strict=False)]
    return kern(domain, fld("src", shape, loads=loads, eb=eb, offset=offset),
                fld("dst", shape, stores=[shifted((0,) * dims, r, dims)], eb=eb, offset=dst_offset), name=name,
                registers=registers)


# (id, kernel factory, block, folding, sm_count)
CASES = [
    # 2D stars: odd row pitches, offsets, 4 B and 8 B, 2D blocks
    ("star2d-r1", lambda: stencil((61, 29, 1), 1, 2, star(1, 2), pad=(3, 0), registers=255), (32, 4, 1),
     (1, 1, 1), 2),
    ("star2d-r2-fp32-off3", lambda: stencil((60, 30, 1), 2, 2, star(2, 2), eb=4, offset=3, pad=(1, 0),
                                                    registers=128), (16, 8, 1), (1, 1, 1), 1),
    ("star2d-r1-fold2x", lambda: stencil((61, 29, 1), 1, 2, star(1, 2), offset=5, pad=(3, 0), registers=255),
     (16, 4, 1), (2, 1, 1), 2),
    ("star2d-r1-fold2y", lambda: stencil((50, 40, 1), 1, 2, star(1, 2), eb=4, pad=(2, 0), registers=255),
     (32, 2, 1), (1, 2, 1), 2),
    ("star2d-r1-fold2x2y", lambda: stencil((50, 40, 1), 1, 2, star(1, 2), pad=(1, 0), registers=255), (8, 8, 1),
     (2, 2, 1), 1),
    # 3D stars: wave in the middle of the grid, Ly and Lz non-empty
    ("star3d-r1", lambda: stencil((30, 14, 12), 1, 3, star(1, 3), offset=1, pad=(1, 0, 0), registers=128),
     (8, 4, 2), (1, 1, 1), 3),
    ("star3d-r1-fold2z", lambda: stencil((30, 14, 12), 1, 3, star(1, 3), pad=(3, 0, 0)), (16, 4, 2),
     (1, 1, 2), 1),
    ("star3d-r1-fold2y", lambda: stencil((32, 16, 10), 1, 3, star(1, 3), eb=4, offset=3, registers=128),
     (8, 4, 2), (1, 2, 1), 2),
    ("star3d-r2", lambda: stencil((24, 16, 12), 2, 3, star(2, 3), offset=5, pad=(3, 0, 0)), (8, 2, 2),
     (1, 1, 1), 1),
    ("star3d-r2-3dblock", lambda: stencil((40, 20, 16), 2, 3, star(2, 3), eb=4), (16, 4, 4), (1, 1, 1), 2),
    ("box3d-r1", lambda: stencil((20, 12, 10), 1, 3, box(1, 3), pad=(3, 1, 0)), (4, 4, 4), (1, 1, 1), 1),
    ("box3d-r1-fold2x", lambda: stencil((20, 12, 10), 1, 3, box(1, 3), eb=4, offset=1, registers=255),
     (8, 4, 2), (2, 1, 1), 2),
    # partial blocks at every edge, 1D and odd blocks
    ("star3d-r1-edges", lambda: stencil((37, 19, 7), 1, 3, star(1, 3), offset=3), (16, 8, 2), (1, 1, 1), 1),
    ("star3d-r1-1dblock", lambda: stencil((45, 9, 6), 1, 3, star(1, 3), pad=(3, 0, 0)), (128, 1, 1),
     (1, 1, 1), 1),
    ("star3d-r1-oddblock", lambda: stencil((40, 13, 9), 1, 3, star(1, 3), eb=4, offset=5), (24, 3, 2),
     (1, 1, 1), 1),
    # copy with linear accesses (and the same as tuples, misaligned)
    ("copy-linear", lambda: kern((64, 32, 4), fld("src", (64, 32, 4), loads=["tidx + 64*tidy + 2048*tidz"]),
                                 fld("dst", (64, 32, 4), stores=["tidx + 64*tidy + 2048*tidz"])),
     (32, 4, 1), (1, 1, 1), 1),
    ("copy-tuple-misaligned", lambda: kern((61, 20, 5), fld("src", (64, 20, 5), loads=[("tidx", "tidy", "tidz")],
                                                            offset=1, eb=4),
                                           fld("dst", (63, 20, 5), stores=[("tidx+1", "tidy", "tidz")],
                                               offset=7, eb=4)),
     (32, 2, 2), (1, 1, 1), 1),
    # transposed, strided and quasi-affine accesses
    ("transpose", lambda: kern((32, 32, 4), fld("src", (32, 32, 4), loads=[("tidy", "tidx", "tidz")]),
                               fld("dst", (32, 32, 4), stores=[("tidx", "tidy", "tidz")]), registers=128),
     (16, 8, 1), (1, 1, 1), 1),
    ("strided-x2", lambda: kern((30, 16, 4), fld("src", (61, 16, 4), loads=[("2*tidx", "tidy", "tidz"),
                                                                            ("2*tidx+1", "tidy", "tidz")],
                                                 eb=4, offset=1),
                                fld("dst", (30, 16, 4), stores=[("tidx", "tidy", "tidz")]), registers=255),
     (32, 4, 1), (1, 1, 1), 2),
    ("strided-x16", lambda: kern((16, 16, 2), fld("src", (256, 16, 2), loads=[("16*tidx", "tidy", "tidz")]),
                                 registers=255), (16, 2, 1), (1, 1, 1), 1),
    ("quasi-affine", lambda: kern((40, 12, 6), fld("src", (40, 12, 6),
                                                   loads=[("tidx//2", "tidy", "tidz"),
                                                          ("tidx % 5 + 8", "tidy", "tidz"),
                                                          ("tidx", "(tidy+1)//2", "tidz")]),
                                  fld("dst", (40, 12, 6), stores=["tidx + 40*tidy + 480*tidz"])),
     (16, 4, 2), (1, 1, 1), 1),
    ("quasi-affine-fold", lambda: kern((40, 12, 6), fld("src", (21, 12, 6), loads=[("tidx//2", "tidy", "tidz")],
                                                        eb=4, offset=3),
                                       fld("dst", (40, 12, 6), stores=[("tidx", "tidy", "tidz")]),
                                       registers=255), (8, 4, 2), (2, 1, 1), 2),
    # multiple fields with different element sizes and alignments; a 16 B field (8-lane L1 groups)
    ("three-fields", lambda: kern((33, 17, 9), fld("u", (36, 19, 11), loads=star(1, 3), eb=8, offset=5),
                                  fld("v", (35, 17, 9), loads=[("tidx", "tidy", "tidz"), ("tidx+2", "tidy", "tidz")],
                                      eb=4, offset=3),
                                  fld("w", (36, 19, 11), stores=[("tidx+1", "tidy+1", "tidz+1")], eb=8, offset=1)),
     (16, 2, 4), (1, 1, 1), 1),
    ("fp128-field", lambda: kern((24, 10, 6), fld("a", (26, 10, 6), loads=[("tidx", "tidy", "tidz"),
                                                                           ("tidx+2", "tidy", "tidz")], eb=16),
                                 fld("b", (24, 10, 6), stores=[("tidx", "tidy", "tidz")], eb=16, offset=1),
                                 registers=255), (16, 2, 2), (1, 1, 1), 2),
    # the whole grid is smaller than the wave
    ("grid-smaller-than-wave", lambda: stencil((20, 10, 3), 1, 3, star(1, 3), offset=1), (8, 4, 1),
     (1, 1, 1), 4),
    # tiny fields: rows shorter than a sector / line, the field's last granule not aligned
    ("tiny-rows", lambda: stencil((5, 3, 4), 1, 3, star(1, 3), eb=4, offset=1), (2, 2, 2), (1, 1, 1), 1),
    ("field-end", lambda: kern((54, 2, 1), fld("a", (54, 2, 1), loads=["tidx + 54*tidy + 108*tidz"],
                                               eb=4, offset=3)), (1, 1, 1), (1, 1, 1), 1),
    # the wave starts in the first block row of a plane: blocks [s - gx, s) are partly in the last row
    # of the previous plane and not part of Ly
    ("ly-crosses-plane", lambda: stencil((24, 12, 8), 1, 3, star(1, 3)), (4, 4, 2), (1, 1, 1), 1),
    ("ly-crosses-plane-aligned", lambda: stencil((14, 6, 6), 1, 3, star(1, 3), registers=255), (4, 2, 2),
     (1, 1, 1), 1),  # rows of 16 x 8 B: allocation lines are exact here
    ("ly-empty", lambda: stencil((64, 32, 16), 1, 3, star(1, 3), pad=(3, 0, 0)), (32, 2, 2), (1, 2, 1), 2),
    # population fields: rows of 11 x 8 B (unaligned). q-planes of 11x7x8 cells are sector aligned (every
    # population is an access group of its own); of 11x7x7 cells plane 1 shares a sector with plane 2, and
    # populations 1 and 2 touch it (one group); fp32 with an offset shifts every row
    ("populations-separate", lambda: populations((9, 5, 6), pad_z=0, registers=128), (8, 2, 2), (1, 1, 1), 2),
    ("populations-shared-planes", lambda: populations((9, 5, 5), pad_z=0, registers=128), (4, 2, 2),
     (1, 1, 1), 3),
    ("populations-fp32-fold", lambda: populations((9, 5, 6), eb=4, offset=3, registers=128), (4, 2, 2),
     (1, 2, 1), 2),
    # array of structures (counted by enumeration): rows of 9 x 8 B (one cell each) whose 32 B phases cycle
    # with x mod 4 and y mod 2; 9 x 4 B with an offset, folded; and phases mod 4 in x, y and z
    ("populations-aos", lambda: populations((8, 6, 6), registers=128, aos=True), (8, 2, 2), (1, 1, 1), 2),
    ("populations-aos-fp32-fold", lambda: populations((10, 6, 4), eb=4, offset=3, registers=128, aos=True),
     (4, 2, 2), (1, 2, 1), 2),
    ("populations-aos-many-phases", lambda: populations((9, 5, 6), registers=128, aos=True), (8, 2, 2),
     (1, 1, 1), 2),
]


@pytest.fixture(scope="module")
def results():
    """Brute force and estimate of every case, computed once (both tests of a case use them)."""
    cache = {}

    def get(case_id):
        if case_id not in cache:
            _, make, block, folding, sm = next(c for c in CASES if c[0] == case_id)
            k, d = make(), dev(sm)
            cache[case_id] = (brute_force(k, d, block, folding),
                              from_estimate(warpspeed.estimate(k, d, block, folding)))
        return cache[case_id]

    return get


@pytest.mark.parametrize("case_id", [c[0] for c in CASES])
def test_estimate_matches_brute_force(results, case_id):
    bf, est = results(case_id)
    bad = compare(bf, est)
    assert not bad, f"{case_id}: (brute force, estimate) differ: {bad}"


def test_table_covers_layers_and_edges(results):
    """The table exercises what it claims: waves in the middle with non-empty Ly and Lz, whole grids."""
    bf = {c[0]: results(c[0])[0] for c in CASES}
    middle = [i for i, b in bf.items() if 0 < b["wave_start"] and b["layer_y_blocks"] and b["layer_z_blocks"]]
    assert len(middle) >= 15 and "star3d-r1" in middle, middle
    whole = bf["grid-smaller-than-wave"]
    assert whole["wave_start"] == 0 and whole["wave_blocks"] == whole["grid"][0] * whole["grid"][1] * whole["grid"][2]
    assert bf["ly-crosses-plane"]["layer_y_blocks"] > 0
    assert bf["ly-crosses-plane"]["layer_y_first"] != bf["ly-crosses-plane"]["layer_y_range_start"]
    assert bf["ly-crosses-plane-aligned"]["layer_y_first"] != bf["ly-crosses-plane-aligned"]["layer_y_range_start"]
    assert bf["ly-empty"]["layer_y_blocks"] == 0 and bf["ly-empty"]["layer_y_range_start"] is not None


def test_access_groups_split_only_provably_disjoint_accesses():
    """Footprints count per access group; a group is a set of accesses whose addresses may meet. Every
    population is its own group, unless the q-planes share a granule that two populations touch."""
    from warpspeed.model.isl_volumes import Footprints, connected_groups

    assert connected_groups([0, 1, 3, 4, 6, 2], lambda a, b: abs(a - b) == 1) == [[0, 1, 2, 3, 5], [4]]
    q = len(VELOCITIES)
    assert len(Footprints(populations((9, 5, 6)), 32).groups) == 2 * q  # planes of 11x7x8 x 8 B: aligned
    shared = Footprints(populations((9, 5, 5)), 32)  # planes of 11x7x7 x 8 B: plane 2 starts at 16 B
    assert len(shared.groups) == 2 * q - 1 and shared.groups[1].field == 0 and shared.groups[1].loads is not None
    # rows of 88 B are shorter than a 128 B line: linear addresses, and the same merge through shared lines
    assert len(Footprints(populations((9, 5, 5)), 128, exact=False).groups) == 2 * q - 1
    # a stencil's accesses all overlap: one group per field
    k = stencil((24, 16, 12), 2, 3, star(2, 3), offset=5)
    assert [g.field for g in Footprints(k, 32).groups] == [0, 1]


# ---- exact allocation volumes: the spec counts distinct 128 B lines ------------------------------

ALLOC = ("layer_y_alloc_bytes", "layer_z_alloc_bytes")


def test_allocation_lines_shared_by_two_rows_count_once_per_row(results):
    """Allocation volumes (they only feed the hit-rate curves) are counted per row: a 128 B line that two
    rows share counts twice. The bound: never below the distinct lines, at most one extra line per row."""
    bf, est = results("star3d-r1")
    assert mismatches(bf, est, ALLOC)  # unaligned rows: the approximation is visible here
    for key, (lo, hi) in known_deviations(bf).items():
        assert lo <= est[key] <= hi


def test_layer_y_allocation_starts_at_first_ly_block(results):
    """Regression: the y-layer allocation was counted from max(0, s - gx), not from Ly's first block."""
    bf, est = results("ly-crosses-plane-aligned")
    assert bf["layer_y_first"] != bf["layer_y_range_start"]
    assert not mismatches(bf, est)


def test_layer_y_allocation_is_zero_for_empty_ly(results):
    """Regression: an empty Ly (all of [s - gx, s) in the last block row of a plane) had an allocation."""
    bf, est = results("ly-empty")
    assert est["layer_y_alloc_bytes"] == bf["layer_y_alloc_bytes"] == 0


# ---- analytic cases ---------------------------------------------------------------------------------


def single_load(index, shape, eb=8, domain=(64, 32, 1)):
    return kern(domain, fld("a", shape, loads=[index], eb=eb))


def cycles_both(k, block):
    """L1 cycles per warp-lup from the estimator and from the twin."""
    return (warpspeed.estimate(k, dev(1), block).l1_cycles_per_warp_lup,
            brute_force(k, dev(1), block)["l1_cycles_per_warp_lup"])


@pytest.mark.parametrize("block", [(16, 8, 1), (32, 4, 1), (64, 2, 1), (256, 1, 1)])
def test_contiguous_8B_loads_take_2_cycles_per_warp(block):
    assert cycles_both(single_load(("tidx", "tidy"), (64, 32)), block) == (2.0, 2.0)


def test_stride2_8B_loads_take_4_cycles_per_warp():
    assert cycles_both(single_load(("2*tidx", "tidy"), (128, 32)), (32, 4, 1)) == (4.0, 4.0)


def test_stride16_8B_loads_take_32_cycles_per_warp():
    """16 lanes 128 B apart: two runs of 8 words (1024 B pairing distance), all in bank 0: 16 per group."""
    assert cycles_both(single_load(("16*tidx", "tidy"), (1024, 32)), (32, 4, 1)) == (32.0, 32.0)


def test_contiguous_4B_loads_take_1_cycle_per_warp():
    assert cycles_both(single_load(("tidx", "tidy"), (64, 32), eb=4), (32, 4, 1)) == (1.0, 1.0)


def test_cycles_add_up_over_instructions():
    """A 2D star r1 on 8 B with block x = 32: 5 loads + 1 store; the x-shifted ones still hit 16 distinct
    banks per half warp, so every instruction costs 2 cycles per warp."""
    k = stencil((64, 32, 1), 1, 2, star(1, 2))
    assert cycles_both(k, (32, 4, 1)) == (12.0, 12.0)


def test_twin_group_cycles_by_hand():
    """The twin's wavefront rule on hand-made groups (8 B bank words, 16 banks, 1024 B pairing)."""
    assert group_cycles([8 * w for w in range(16)], 8, 16, 1024) == 1
    assert group_cycles([8 * w for w in range(0, 32, 2)], 8, 16, 1024) == 2
    assert group_cycles([128 * i for i in range(16)], 8, 16, 1024) == 16  # two runs of 8 conflicts
    assert group_cycles([0, 4, 8, 12], 8, 16, 1024) == 1  # 4 B lanes sharing words
    assert group_cycles([0, 1016, 1024], 8, 16, 1024) == 2  # 1024 B from the run's first word: new run
    assert group_cycles([], 8, 16, 1024) == 0


@pytest.mark.parametrize("block", [(32, 1, 1), (32, 4, 1), (32, 8, 2), (32, 2, 4)])
def test_copy_moves_8B_per_lup_each_way(block):
    k = warpspeed.kernel_from_dict({"name": "copy", "precision": "fp64", "flops_per_lup": 0,
                                    "domain": [128, 32, 8], "field": [
                                        fld("src", (128, 32, 8), loads=[("tidx", "tidy", "tidz")]),
                                        fld("dst", (128, 32, 8), stores=[("tidx", "tidy", "tidz")])]})
    e = warpspeed.estimate(k, dev(2), block)
    v = e.volumes_B_per_lup
    for key in ("l1_load", "l2_load_compulsory", "l2_store", "dram_load_compulsory", "dram_store"):
        assert v[key] == 8.0, key
    assert e.partial_stores.potential_B_per_lup == 0.0


# wave64 devices with 64 B (CDNA2) and 128 B (CDNA3) L1/L2 transfer units and half-rate 8 B L1 accesses
AMD_CASES = ["star3d-r1", "star3d-r1-fold2y", "star3d-r1-edges", "copy-tuple-misaligned", "three-fields",
             "quasi-affine", "ly-empty"]


@pytest.mark.parametrize("device_id", ["MI210", "MI300X"])
@pytest.mark.parametrize("case_id", AMD_CASES)
def test_wave64_devices_match_brute_force(case_id, device_id):
    _, make, block, folding, sm = next(c for c in CASES if c[0] == case_id)
    k, d = make(), warpspeed.device(device_id).with_overrides(sm_count=sm)
    bf, est = brute_force(k, d, block, folding), from_estimate(warpspeed.estimate(k, d, block, folding))
    bad = compare(bf, est)
    assert not bad, f"{case_id} on {device_id}: (brute force, estimate) differ: {bad}"


def test_wave64_l1_cycles_by_hand():
    """Contiguous 8 B loads of a wave64 at 32 B/cycle: 4 lanes per cycle, 16 cycles per wave;
    4 B loads at 64 B/cycle: 16 lanes per cycle, 4 cycles per wave."""
    mi210 = warpspeed.device("MI210")
    for eb, per_wave in ((8, 16), (4, 4)):
        k = kern((256, 4, 1), fld("a", (256, 4, 1), loads=[("tidx", "tidy", "tidz")], eb=eb))
        e = warpspeed.estimate(k, mi210, (64, 4, 1))
        # cycles per warp-lup are per warp of the device's lanes (docs/outputs.md): one wave64 of 64 lups
        assert e.l1_cycles_per_warp_lup == pytest.approx(per_wave)


# Hopper's L1 line rule (bank cost without a distance limit + 1/k per further line, a constant per warp)
HOPPER_CASES = ["star3d-r1", "star3d-r1-fold2y", "star3d-r2", "box3d-r1-fold2x", "star3d-r1-edges",
                "copy-tuple-misaligned", "transpose", "strided-x2", "quasi-affine", "three-fields"]


@pytest.mark.parametrize("case_id", HOPPER_CASES)
def test_hopper_line_rule_matches_brute_force(case_id):
    _, make, block, folding, sm = next(c for c in CASES if c[0] == case_id)
    k, d = make(), warpspeed.device("H100-SXM5-80GB").with_overrides(sm_count=sm)
    assert d.l1_load_lines_per_wavefront == 3 and d.l1_store_lines_per_wavefront == 2
    e = warpspeed.estimate(k, d, block, folding)
    bf, est = brute_force(k, d, block, folding, miss_share=miss_share_of(e)), from_estimate(e)
    bad = compare(bf, est)
    assert not bad, f"{case_id} on H100: (brute force, estimate) differ: {bad}"


def test_hopper_line_rule_by_hand():
    """One warp of 8 B loads: aligned 256 B = 2 wavefronts, misaligned (3 lines) = 2 + 1/3; 32 rows in 2 banks
    = 8 + 8 bank conflicts + 16 further lines / 3; the store of the same warp 2; plus 4 per warp."""
    h = warpspeed.device("H100-SXM5-80GB").with_overrides(sm_count=1)
    pitch = 648  # 5184 B rows: 648 words = 8 mod 16, lanes alternate two banks
    for loads, expected in (([("tidx", "tidy", "tidz")], 2), ([("tidx+1", "tidy", "tidz")], 2 + 1 / 3)):
        k = kern((32, 1, 1), fld("a", (64, 1, 1), loads=loads), fld("b", (32, 1, 1), stores=[("tidx", "tidy", "tidz")]))
        e = warpspeed.estimate(k, h, (32, 1, 1), model="roofline")
        assert e.l1_cycles_per_warp_lup == pytest.approx(expected + 2 + 4)
    k = kern((1, 32, 1), fld("a", (pitch, 32, 1), loads=[("tidx", "tidy", "tidz")]),
             fld("b", (1, 32, 1), stores=[("tidx", "tidy", "tidz")]))
    e = warpspeed.estimate(k, h, (1, 32, 1), model="roofline")
    # the store: 32 consecutive 8 B words of a 1-wide field (256 B): 2 wavefronts
    assert e.l1_cycles_per_warp_lup == pytest.approx(16 + 16 / 3 + 2 + 4)
