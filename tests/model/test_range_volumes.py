"""Granule-range footprints (warpspeed/range_volumes.py) against the enumeration, the points and by hand.

The DRAM stage counts every kernel whose accesses move by at most a granule per x step with ranges (one
per row of cells and access); the enumeration (itself checked against ISL in test_enumerated_volumes) and
its point-by-point listing are the references here, on random stencils, populations and affine accesses
with any slope, and the set operations are checked against Python sets.
"""

from __future__ import annotations

import numpy as np
import pytest
from footprint_checks import FRACTIONS, assert_same_footprints, launch_with_ranges
from hypothesis import assume, given
from hypothesis import strategies as st
from kernel_strategies import PROFILE, box_kernels, population_kernels, stencil_kernels

import warpspeed
from warpspeed.errors import InputError
from warpspeed.model.cells import CellSet, as_cell_set, cell_set
from warpspeed.model.counters import footprint_counter
from warpspeed.model.enumerated_volumes import EnumeratedFootprints
from warpspeed.model.field_encoding import FIELD_SHIFT
from warpspeed.model.range_volumes import ELEMENTS, GranuleRanges, RangeFootprints, _union, applies, full_granules

BLOCKS = st.sampled_from([(32, 2, 1), (8, 4, 2), (4, 4, 4), (64, 1, 1), (1, 8, 4), (2, 1, 16)])


def _as_set(r: GranuleRanges) -> set[int]:
    return {k for a, b in zip(r.starts.tolist(), r.stops.tolist(), strict=True) for k in range(a, b)}


def _ranges(pairs) -> GranuleRanges:
    a = np.array([p[0] for p in pairs], dtype=np.int64)
    return _union(a, a + np.array([p[1] for p in pairs], dtype=np.int64))


PAIRS = st.lists(st.tuples(st.integers(0, 60), st.integers(1, 8)), max_size=12)


@given(PAIRS, PAIRS)
def test_set_operations_of_ranges_are_those_of_sets(a, b):
    ra, rb = _ranges(a), _ranges(b)
    sa, sb = ({k for s, n in p for k in range(s, s + n)} for p in (a, b))
    assert _as_set(ra) == sa and ra.size() == len(sa)
    assert _as_set(ra.intersect(rb)) == sa & sb and _as_set(ra.subtract(rb)) == sa - sb
    for r in (ra, ra.intersect(rb), ra.subtract(rb)):  # sorted, disjoint, never adjacent
        assert np.all(r.starts < r.stops) and np.all(r.starts[1:] > r.stops[:-1])


@PROFILE
@given(spec=st.one_of(stencil_kernels(max_domain=(40, 16, 8)), population_kernels()), block=BLOCKS,
       fractions=FRACTIONS, granularity=st.sampled_from([32, 128]), exact=st.booleans())
def test_ranges_count_what_the_enumeration_counts(spec, block, fractions, granularity, exact):
    """Stencils (strided, transposed, linear, padded, offset) and LBM populations: exact counts, and with
    ``exact=False`` (a granule two rows share counts once per row), as the enumeration gives them."""
    kernel, launch, id_ranges = launch_with_ranges(spec, block, fractions)
    assume(applies(kernel, granularity, exact))
    assert_same_footprints(RangeFootprints(kernel, granularity, exact=exact),
                           EnumeratedFootprints(kernel, granularity, exact=exact), launch, id_ranges)


@st.composite
def affine_kernels(draw):
    """1-D fields read through affine indices of any small slope: negative, zero (an access that does not
    move with y, or with x at all), steps of several elements, and rows that overlap."""
    domain = (draw(st.integers(1, 20)), draw(st.integers(1, 6)), draw(st.integers(1, 5)))
    fields = []
    for j in range(draw(st.integers(1, 2))):
        eb = draw(st.sampled_from([1, 2, 4, 8]))
        accesses = []
        for _ in range(draw(st.integers(1, 4))):
            cx = draw(st.integers(-3, 3))
            cy = draw(st.sampled_from([0, 1, -1, 3, domain[0], domain[0] + 5, -(domain[0] + 2)]))
            cz = draw(st.sampled_from([0, 1, domain[0] * domain[1], 7 * domain[0] * domain[1] + 3, -60]))
            c = draw(st.integers(0, 40))
            corners = [cx * x + cy * y + cz * z for x in (0, domain[0] - 1) for y in (0, domain[1] - 1)
                       for z in (0, domain[2] - 1)]
            accesses.append((cx, cy, cz, c - min(corners)))
        size = max(cx * x + cy * y + cz * z + c for cx, cy, cz, c in accesses for x in (0, domain[0] - 1)
                   for y in (0, domain[1] - 1) for z in (0, domain[2] - 1)) + 1 + draw(st.integers(0, 9))
        text = [f"{cx}*tidx + {cy}*tidy + {cz}*tidz + {c}" for cx, cy, cz, c in accesses]
        split = draw(st.integers(0, len(text)))
        fields.append({"name": f"f{j}", "element_bytes": eb, "shape": [size], "offset": draw(st.integers(0, 5)),
                       "loads": text[:split] or text[:1], "stores": text[split:]})
    return {"name": "affine", "precision": "fp64", "flops_per_lup": 1, "domain": list(domain), "field": fields}


@PROFILE
@given(spec=affine_kernels(), block=BLOCKS, fractions=FRACTIONS, granularity=st.sampled_from([8, 32, 128]))
def test_ranges_count_every_cells_address_for_any_slope(spec, block, fractions, granularity):
    """Against the addresses of every cell, listed one by one (no slices, no ranges)."""
    kernel, launch, id_ranges = launch_with_ranges(spec, block, fractions)
    assume(applies(kernel, granularity))
    points = EnumeratedFootprints(kernel, granularity, slices=False)
    assert_same_footprints(RangeFootprints(kernel, granularity), points, launch, id_ranges)


def _copy(offset: int) -> warpspeed.Kernel:
    return warpspeed.kernel_from_dict({
        "name": "row", "precision": "fp64", "flops_per_lup": 0, "domain": [64, 4, 1],
        "field": [{"name": "a", "element_bytes": 8, "shape": [64, 4], "offset": offset,
                   "loads": [["tidx", "tidy"]], "stores": []}]})


def test_known_counts_of_a_row():
    one_row = CellSet((((0, 0, 0), (63, 0, 0)),))
    assert RangeFootprints(_copy(0), 32).footprint_size(one_row) == 16  # 512 B from a sector boundary
    assert RangeFootprints(_copy(1), 32).footprint_size(one_row) == 17  # 8 B late: one more sector
    two_rows = CellSet((((0, 0, 0), (63, 1, 0)),))
    assert RangeFootprints(_copy(1), 32).footprint_size(two_rows) == 33  # the rows share a sector
    per_row = RangeFootprints(_copy(1), 32, exact=False)
    assert per_row.footprint_size(two_rows) == 34  # ... counted once per row
    fp = RangeFootprints(_copy(0), 32).footprint(CellSet((((0, 0, 0), (7, 0, 0)), ((32, 0, 0), (35, 0, 0)))))
    assert (fp.starts.tolist(), fp.stops.tolist()) == ([0, 8], [2, 9])  # two runs of sectors


def test_which_kernels_the_ranges_count_and_a_clear_error_for_the_others():
    assert applies(warpspeed.find_kernel("star3d-r4"), 32) and applies(warpspeed.find_kernel("copy"), 128, False)
    assert applies(warpspeed.find_kernel("star3d-r4"), 4096)  # TLB pages
    aos = pytest.importorskip("warpspeed_pystencils") and warpspeed.find_kernel("d3q19-srt:layout=zyxf")
    assert not applies(aos, 32)  # a cell's 19 doubles: 152 B per x step
    assert applies(warpspeed.find_kernel("d3q19-srt"), 32) and applies(warpspeed.find_kernel("d3q19-srt"), 128, False)
    with pytest.raises(InputError, match=r"'ranges' footprint counter does not count kernel .*use auto, isl or"):
        footprint_counter(aos, 32, name="ranges")
    with pytest.raises(ValueError, match="granule ranges do not count"):
        RangeFootprints(aos, 32)


def test_cell_sets_from_isl_sets_and_back():
    import islpy as isl

    s = isl.Set("{ [x, y, z] : (0 <= x < 3 and 1 <= y < 3 and z = 4) or (0 <= x < 4 and 0 <= y <= x and z = 1) }")
    c = as_cell_set(s)
    assert c.isl.is_equal(s)
    kernel = _copy(0)
    assert RangeFootprints(kernel, 8).footprint_size(c) == EnumeratedFootprints(kernel, 8).footprint_size(s) == 13
    assert c.below_y(1).isl.is_equal(s.intersect(isl.Set("{ [x, y, z] : y < 1 }")))


@PROFILE
@given(spec=st.one_of(stencil_kernels(max_domain=(40, 16, 8)), population_kernels(), affine_kernels()), block=BLOCKS,
       fractions=FRACTIONS)
def test_box_counts_are_each_boxs_own_footprint(spec, block, fractions):
    """Many boxes at once (the blocks of a wave): per box and field, the elements, the sectors and their runs,
    the lines (from the merged element ranges) and the completely written sectors of its own footprint."""
    kernel, launch, ((a, b), _) = launch_with_ranges(spec, block, fractions)
    assume(applies(kernel, ELEMENTS) and b > a)
    from warpspeed.model.footprint import block_boxes

    coords = launch.wave_block_coords(a, min(b, a + 40))
    boxes = block_boxes(launch, coords)
    elements = RangeFootprints(kernel, ELEMENTS)
    per = [max(1, 32 // f.element_bytes) for f in kernel.fields]
    for loads, stores in ((True, False), (False, True)):
        c = elements.box_counts(boxes, loads=loads, stores=stores, per=per, coarser=(32, 128))
        for j, (lo, hi) in enumerate(boxes.tolist()):
            cells = CellSet(((tuple(lo), tuple(hi)),))
            fp = elements.footprint(cells, loads=loads, stores=stores)
            assert tuple(c.granules[j]) == elements.count_by_field(fp)
            assert tuple(c.full[j]) == tuple(full_granules(fp, i, per[i]) for i in range(len(kernel.fields)))
            for g in (32, 128):
                ref = EnumeratedFootprints(kernel, g, slices=False).footprint(cells, loads=loads, stores=stores)
                by_field = [ref.keys[(ref.keys >> FIELD_SHIFT) == i] for i in range(len(kernel.fields))]
                assert tuple(c.coarser[g][0][j]) == tuple(k.size for k in by_field)
                assert tuple(c.coarser[g][1][j]) == tuple(int((np.diff(k) > 1).sum() + (k.size > 0)) for k in by_field)


def test_rows_counted_once_per_row_in_closed_form_with_a_known_count():
    """Rows of 66 doubles (528 B) start 16 B further into a 128 B line each: of every 8 rows one starts on a
    line and its 64 read doubles (512 B) span 4 lines, the other 7 span 5: 39 lines per 8 rows (exact=False
    counts a line two rows share once per row). The closed form (cell_rows) counts it, not the listed ranges."""
    import warpspeed.model.cell_rows as cr
    import warpspeed.model.range_volumes as rv

    kernel = warpspeed.kernel_from_dict({
        "name": "rows", "precision": "fp64", "flops_per_lup": 1, "domain": [64, 16, 1],
        "field": [{"name": "a", "element_bytes": 8, "shape": [66, 16, 2, 3], "loads": [["tidx", "tidy", "tidz", "1"]],
                   "stores": []}]})  # population 1 of three, as an LBM field in fzyx
    cells = CellSet(boxes=(((0, 0, 0), (63, 15, 0)),))
    counter = RangeFootprints(kernel, 128, exact=False)
    calls = []
    real = cr.row_granule_count, rv.CLOSED_FORM_MIN_RANGES, rv.CLOSED_FORM_OVERLAY_SHARE
    cr.row_granule_count = lambda *a: calls.append(1) or real[0](*a)
    rv.CLOSED_FORM_MIN_RANGES, rv.CLOSED_FORM_OVERLAY_SHARE = 0, float("inf")  # so few rows would be listed
    try:
        assert counter.footprint_size(cells) == 2 * 39
    finally:
        cr.row_granule_count, rv.CLOSED_FORM_MIN_RANGES, rv.CLOSED_FORM_OVERLAY_SHARE = real
    assert calls == [1] and counter.footprint(cells).size() == 2 * 39  # the listed ranges agree


@PROFILE
@given(spec=st.one_of(stencil_kernels(max_domain=(40, 16, 8)), population_kernels()), block=BLOCKS,
       fractions=FRACTIONS, granularity=st.sampled_from([32, 128]))
def test_per_row_counts_in_closed_form_are_the_listed_ones(spec, block, fractions, granularity):
    """With the closed form taken wherever it applies (no cost threshold), the per-row counts (exact=False)
    equal those of the listed ranges, for loads, stores and both."""
    import warpspeed.model.range_volumes as rv

    kernel, launch, id_ranges = launch_with_ranges(spec, block, fractions)
    assume(applies(kernel, granularity, exact=False))
    counter = RangeFootprints(kernel, granularity, exact=False)
    names = ("CLOSED_FORM_MIN_RANGES", "CLOSED_FORM_OVERLAY_SHARE", "STENCIL_MIN_RANGES", "STENCIL_OVERLAY_SHARE")
    saved = [getattr(rv, n) for n in names]
    for n, v in zip(names, (0, float("inf"), 0, float("inf")), strict=True):
        setattr(rv, n, v)
    try:
        for lo, hi in id_ranges:
            cells = cell_set(launch, lo, hi)
            for loads, stores in ((True, False), (False, True), (True, True)):
                assert counter.footprint_size(cells, loads=loads, stores=stores) == \
                    counter.footprint(cells, loads=loads, stores=stores).size()
    finally:
        for n, v in zip(names, saved, strict=True):
            setattr(rv, n, v)


@given(st.integers(1, 140), st.integers(1, 60), st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_distinct_rows_are_numpys_unique_rows(width, n, kinds, seed):
    """The closed form's distinct sets of pairs (rows packed into 64-bit words) are numpy's unique rows, and
    each row maps to its own, for rows up to and beyond one word."""
    from warpspeed.model.cell_rows import _distinct_rows

    rng = np.random.default_rng(seed)
    patterns = rng.random((kinds, width)) < 0.5
    rows = patterns[rng.integers(0, kinds, n)]
    sets, which = _distinct_rows(rows)
    assert np.array_equal(sets[which], rows)
    assert len(sets) == len(np.unique(rows, axis=0))


D3Q19 = [(0, 0, 0), (0, 1, 0), (0, -1, 0), (-1, 0, 0), (1, 0, 0), (0, 0, 1), (0, 0, -1), (-1, 1, 0), (1, 1, 0),
         (-1, -1, 0), (1, -1, 0), (0, 1, 1), (0, -1, 1), (-1, 0, 1), (1, 0, 1), (0, 1, -1), (0, -1, -1),
         (-1, 0, -1), (1, 0, -1)]


@pytest.mark.parametrize("granularity", [32, 128])
def test_populations_count_in_closed_form_as_one_plane_moved(granularity):
    """An LBM field's populations (one access per q-plane) never share a row: the closed form counts one
    plane's overlay and moves it to the others (their rows' residues and x shifts), so its work is one plane's
    plus one unit per plane, and its count is the sum of the planes counted one by one, and the listed one."""
    from warpspeed.model.cell_rows import overlay_size, row_accesses, row_granule_count

    shape = [37, 19, 11, 19]  # rows of 37 doubles: every start phase in a 128 B line, with padding
    spec = {"name": "pull", "precision": "fp64", "flops_per_lup": 1, "domain": [33, 16, 8],
            "field": [{"name": "src", "element_bytes": 8, "shape": shape, "offset": 3, "stores": [],
                       "loads": [[f"tidx+{1 - cx}", f"tidy+{1 - cy}", f"tidz+{1 - cz}", str(q)]
                                 for q, (cx, cy, cz) in enumerate(D3Q19)]}]}
    kernel = warpspeed.kernel_from_dict(spec)
    fld = kernel.fields[0]
    slices = [tuple((axis, int(c)) for axis, c in enumerate((1 - cx, 1 - cy, 1 - cz))) + ((-1, q),)
              for q, (cx, cy, cz) in enumerate(D3Q19)]
    accesses = row_accesses(fld, slices)
    boxes = (((0, 0, 0), (32, 7, 3)), ((0, 8, 0), (12, 8, 3)), ((5, 9, 4), (20, 15, 7)))
    assert overlay_size(accesses, boxes) == overlay_size(accesses[:1], boxes) + len(D3Q19) - 1
    total = row_granule_count(fld, accesses, boxes, granularity)
    assert total == sum(row_granule_count(fld, [a], boxes, granularity) for a in accesses)
    cells = CellSet(boxes=boxes)
    assert total == RangeFootprints(kernel, granularity, exact=False).footprint(cells).size()


@PROFILE
@given(spec=st.one_of(population_kernels(x_padding=(0, 80)), stencil_kernels(max_domain=(40, 16, 8),
                                                                             x_padding=(0, 80))),
       block=BLOCKS, fractions=FRACTIONS)
def test_box_counts_of_rows_kept_apart_are_each_boxs_own_footprint(spec, block, fractions):
    """A field whose populations are one access per q-plane and whose rows stay two granules apart is counted
    in closed form (cell_rows.separated_row_counts; a stencil's rows are listed); either way, per box and
    field: the elements, their runs, the sectors and lines and their runs of the box's own footprint, and the
    sectors it covers completely."""
    kernel, launch, ((a, b), _) = launch_with_ranges(spec, block, fractions)
    assume(applies(kernel, ELEMENTS) and b > a)
    from warpspeed.model.footprint import block_boxes

    boxes = block_boxes(launch, launch.wave_block_coords(a, min(b, a + 40)))
    elements = RangeFootprints(kernel, ELEMENTS)
    per = [max(1, 32 // f.element_bytes) for f in kernel.fields]
    for loads, stores in ((True, False), (False, True)):
        c = elements.box_counts(boxes, loads=loads, stores=stores, coarser=(32, 128))
        whole = elements.box_counts(boxes, loads=loads, stores=stores, per=per).full
        for j, (lo, hi) in enumerate(boxes.tolist()):
            cells = CellSet(((tuple(lo), tuple(hi)),))
            fp = elements.footprint(cells, loads=loads, stores=stores)
            assert tuple(whole[j]) == tuple(full_granules(fp, i, per[i]) for i in range(len(kernel.fields)))
            for g, (granules, runs) in ((ELEMENTS, (c.granules, c.runs)), *c.coarser.items()):
                ref = EnumeratedFootprints(kernel, g or 8, slices=False) if g else None
                keys = ref.footprint(cells, loads=loads, stores=stores).keys if ref else None
                if keys is None:  # elements: from the listed ranges, one key per element
                    fp = elements.footprint(cells, loads=loads, stores=stores)
                    keys = np.concatenate([np.arange(s, t) for s, t in zip(fp.starts, fp.stops, strict=True)]
                                          or [np.empty(0, dtype=np.int64)])
                by_field = [keys[(keys >> FIELD_SHIFT) == i] for i in range(len(kernel.fields))]
                assert tuple(granules[j]) == tuple(k.size for k in by_field)
                assert tuple(runs[j]) == tuple(int((np.diff(k) > 1).sum() + (k.size > 0)) for k in by_field)


def test_rows_kept_apart_are_counted_in_closed_form_with_a_known_count():
    """D3Q19 pulled from rows of 300 doubles (a row starts 12 doubles further into a 128 B line than the one
    before), blocks of 16 x 4 x 2 cells at x multiple of 16: population q reads 16 doubles from element
    1 - cx on, which span one 128 B line where they start on one, else two. They start on one only for the 5
    velocities with cx = 1 and rows R = 0 mod 4 (12 R = 0 mod 16; R = y' mod 4 as 20 rows make a plane
    layer): one of a box's 4 y values, both z. So a box has 2 x 19 x 8 - 5 x 2 = 294 lines, every row its
    own run; the closed form applies (rows 282 doubles apart) and gives the listed counts."""
    from warpspeed.model.cell_rows import row_accesses, separated_row_counts

    shape = [300, 20, 12, 19]
    spec = {"name": "pull", "precision": "fp64", "flops_per_lup": 1, "domain": [64, 16, 8],
            "field": [{"name": "src", "element_bytes": 8, "shape": shape, "offset": 0, "stores": [],
                       "loads": [[f"tidx+{1 - cx}", f"tidy+{1 - cy}", f"tidz+{1 - cz}", str(q)]
                                 for q, (cx, cy, cz) in enumerate(D3Q19)]}]}
    kernel = warpspeed.kernel_from_dict(spec)
    elements = RangeFootprints(kernel, ELEMENTS)
    origins = np.array([[16 * i, 4 * j, 2 * m] for i in range(4) for j in range(4) for m in range(4)])
    boxes = np.stack([origins, origins + [15, 3, 1]], axis=1)
    slices = [tuple((axis, int(c)) for axis, c in enumerate((1 - cx, 1 - cy, 1 - cz))) + ((-1, q),)
              for q, (cx, cy, cz) in enumerate(D3Q19)]
    fast = separated_row_counts(kernel.fields[0], row_accesses(kernel.fields[0], slices), origins, (16, 4, 2),
                                (32, 128))
    assert fast is not None
    c = elements.box_counts(boxes, coarser=(32, 128))
    assert (c.granules[:, 0] == 19 * 8 * 16).all() and (c.runs[:, 0] == 19 * 8).all()
    for j, (lo, hi) in enumerate(boxes.tolist()):
        cells = CellSet(((tuple(lo), tuple(hi)),))
        for g in (32, 128):
            ref = EnumeratedFootprints(kernel, g, slices=False).footprint(cells).keys
            assert c.coarser[g][0][j, 0] == fast[g][j] == ref.size
            assert c.coarser[g][1][j, 0] == 19 * 8  # every row a run of its own
    assert (fast[128] == 2 * 19 * 8 - 5 * 2).all()
    # rows start on a sector (300 doubles are 75 sectors): the 5 velocities with cx = 1 read 16 doubles from one,
    # 4 whole sectors; the other 14 start a double or two in, 3 whole sectors; 8 rows per population and box
    whole = separated_row_counts(kernel.fields[0], row_accesses(kernel.fields[0], slices), origins, (16, 4, 2),
                                 (32,), whole=True)
    assert (whole[32] == 8 * (5 * 4 + 14 * 3)).all()
    c = elements.box_counts(boxes, per=[4])
    assert (c.full[:, 0] == whole[32]).all()


def test_boxes_of_one_extent_listed_together_keep_stretches_that_cross_rows_apart(monkeypatch):
    """A field counted per row (``exact=False``) whose merged stretches would cross its rows lists them
    unmerged; with several boxes of one extent listed at once (one set of stretches for all) that fallback
    covers the whole batch: the footprint is the union of the boxes' footprints taken one at a time, and its
    size is the listing of every cell's address."""
    from warpspeed.model import range_volumes

    k = warpspeed.kernel_from_dict({
        "name": "skew", "precision": "fp64", "flops_per_lup": 1, "domain": [2, 7, 4],
        "field": [{"name": "a", "element_bytes": 8, "shape": [8, 8, 4, 2],
                   "loads": [["tidx", "tidy", "tidz", "0"], ["tidx + 6", "tidy", "tidz", "0"],
                             ["tidx + 5", "tidy", "tidz", "1"], ["tidx", "tidy + 1", "tidz", "0"]],
                   "stores": [["tidx", "tidy", "tidz", "1"]]}]})
    batched = []
    unmerged = range_volumes.RangeFootprints._stretches

    def counting(self, i, loads, stores, origins, extent, merge):
        batched.append(not merge and len(origins) > 1)
        return unmerged(self, i, loads, stores, origins, extent, merge)

    monkeypatch.setattr(range_volumes.RangeFootprints, "_stretches", counting)
    rng = np.random.default_rng(2)
    for granularity in (32, 128):
        rf = RangeFootprints(k, granularity, exact=False)
        for _ in range(100):
            boxes = []
            for _ in range(int(rng.integers(2, 8))):
                e = (int(rng.integers(1, 3)), int(rng.integers(1, 3)), 1)
                lo = (int(rng.integers(0, 3 - e[0])), int(rng.integers(0, 8 - e[1])), int(rng.integers(0, 4)))
                boxes.append((lo, tuple(lo[d] + e[d] - 1 for d in range(3))))
            cells = CellSet(tuple(boxes))
            together = rf.footprint(cells, loads=True, stores=True)
            alone = [rf.footprint(CellSet((b,)), loads=True, stores=True) for b in boxes]
            one_by_one = _union(np.concatenate([f.starts for f in alone]), np.concatenate([f.stops for f in alone]))
            assert _as_set(together) == _as_set(one_by_one)
            listed = EnumeratedFootprints(k, granularity, exact=False, slices=False)  # every cell's address
            assert together.size() == listed.footprint(cells, loads=True, stores=True).size()
    assert any(batched)  # the fallback ran on a batch of several boxes (the field counted per row at 128 B)


@PROFILE
@given(spec=box_kernels(), block=BLOCKS, fractions=FRACTIONS, granularity=st.sampled_from([32, 128]),
       exact=st.booleans())
def test_ranges_count_box_stencils_with_diagonal_neighbours_as_the_enumeration(spec, block, fractions, granularity,
                                                                              exact):
    """27-point boxes and parts of them with a corner: the rows a diagonal neighbour adds (y and z moved
    together) are counted as the enumeration counts them."""
    kernel, launch, id_ranges = launch_with_ranges(spec, block, fractions)
    assume(applies(kernel, granularity, exact))
    assert_same_footprints(RangeFootprints(kernel, granularity, exact=exact),
                           EnumeratedFootprints(kernel, granularity, exact=exact), launch, id_ranges)


@given(st.integers(1, 40), st.integers(1, 12), st.sampled_from([4, 8]), st.sampled_from([32, 128]),
       st.integers(1, 20), st.integers(0, 2**32 - 1))
def test_granules_of_sets_by_the_touch_matrix_and_by_reach_are_the_brute_force_count(sets, intervals, eb, g,
                                                                                    starts, seed):
    """The closed form's distinct granules of each set of element intervals at each row start: by the matrix of
    the granules each interval touches (where it is small) and by the intervals' reach, both equal the granules
    of every held element's bytes listed one by one; starts anywhere (negative, far past a granule)."""
    from warpspeed.model.cell_rows import _granules_by_reach, _granules_of, _touching

    rng = np.random.default_rng(seed)
    lo = rng.integers(0, 40, intervals)
    hi = lo + rng.integers(0, 6, intervals) * rng.integers(0, 2, intervals)  # single elements and stretches
    held = rng.random((sets, intervals)) < rng.random()
    start = rng.integers(-3 * g, 3 * g, starts)
    brute = np.array([[len({(s + e * eb + b) // g for i in np.flatnonzero(row) for e in range(lo[i], hi[i] + 1)
                             for b in range(eb)}) for s in start.tolist()] for row in held])
    touching = _touching(held, lo, hi, start, eb, g)
    assert touching is not None
    assert np.array_equal(touching, brute)
    assert np.array_equal(_granules_by_reach(held, lo, hi, start, eb, g), brute)
    assert np.array_equal(_granules_of(held, lo, hi, start, eb, g), brute)


@given(st.integers(1, 30), st.integers(1, 30), st.integers(1, 32), st.sampled_from([10, 1000, 2**28]),
       st.integers(0, 2**32 - 1))
def test_cyclic_convolutions_are_the_sums_by_hand(n, m, p, high, seed):
    """The closed form's cyclic convolutions of row histograms (a floating-point product where every sum stays
    below 2^53, else an integer one) are the sums written out: out[i, j, k] = Σ_s a[i, s] b[j, (k - s) mod p]."""
    from warpspeed.model.cell_rows import _cyclic

    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, high, (n, p)), rng.integers(0, high, (m, p))
    by_hand = np.zeros((n, m, p), dtype=np.int64)
    for s in range(p):
        by_hand += a[:, None, None, s] * np.roll(b, s, axis=1)[None, :, :]
    assert np.array_equal(_cyclic(a, b, p), by_hand)
