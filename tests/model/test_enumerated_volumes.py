"""Enumerated footprints (warpspeed/enumerated_volumes.py) against their ISL twins and by hand.

The estimator counts array-of-structures kernels by enumeration where ISL is slow (``counts_are_dear``);
the brute-force tests (test_bruteforce, test_properties) check those estimates end to end. Here the
enumeration itself: the same sets as the exact ISL footprints, on random kernels and cell sets where ISL
is fast, and the helpers on cases with known answers.
"""

from __future__ import annotations

import islpy as isl
import numpy as np
import pytest
from footprint_checks import FRACTIONS, assert_same_footprints, launch_with_ranges
from hypothesis import given
from hypothesis import strategies as st
from kernel_strategies import PROFILE, box_kernels, population_kernels, stencil_kernels

import warpspeed
from warpspeed.model.cells import CellSet, cell_set
from warpspeed.model.enumerated_volumes import EnumeratedFootprints, cell_points, distinct
from warpspeed.model.field_encoding import FIELD_SHIFT
from warpspeed.model.isl_volumes import Footprints, counts_are_dear
from warpspeed.model.launch import make_launch

H100 = warpspeed.device("H100-SXM5-80GB")


@given(st.lists(st.integers(0, 2**45), max_size=200), st.integers(0, 3))
def test_distinct_is_sorted_unique_by_bitmap_and_by_sort(values, spread):
    arr = np.array(values, dtype=np.int64) // (10 ** (3 * spread) if spread else 1)  # narrow: the bitmap
    assert np.array_equal(distinct(arr), np.unique(arr))


def test_cell_points_of_boxes_and_of_a_piece_that_is_not_a_box():
    boxes = isl.Set("{ [x, y, z] : (0 <= x < 3 and 1 <= y < 3 and z = 4) or (5 <= x < 7 and y = 0 and 0 <= z < 2) }")
    pts = set(zip(*(a.tolist() for a in cell_points(boxes)), strict=True))
    assert pts == {(x, y, 4) for x in range(3) for y in (1, 2)} | {(x, 0, z) for x in (5, 6) for z in (0, 1)}
    tri = isl.Set("{ [x, y, z] : 0 <= x < 4 and 0 <= y <= x and z = 1 }")  # a triangle: point by point
    assert sorted(zip(*(a.tolist() for a in cell_points(tri)), strict=True)) == sorted(
        (x, y, 1) for x in range(4) for y in range(x + 1))
    assert all(a.size == 0 for a in cell_points(isl.Set("{ [x, y, z] : 1 = 0 }")))


def _aos(shape_x, nq, eb=8):
    vel = [(0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1), (1, 1, 0), (-1, -1, 0)]
    loads = [[str(q), f"tidx+{1 - cx}", f"tidy+{1 - cy}", f"tidz+{1 - cz}"] for q, (cx, cy, cz) in
             enumerate(vel[:nq])]
    return warpspeed.kernel_from_dict({
        "name": "aos", "precision": "fp64", "flops_per_lup": 1, "domain": [shape_x - 2, 6, 4],
        "field": [{"name": "f", "element_bytes": eb, "shape": [nq, shape_x, 8, 6], "loads": loads,
                   "stores": [[str(q), "tidx+1", "tidy+1", "tidz+1"] for q in range(nq)]}]})


def test_which_kernels_are_enumerated():
    # rows of one cell, 72 B: the 32 B phase cycles with x (mod 4) and y (x extent 10: 720 B, mod 2)
    assert counts_are_dear(_aos(10, 9), 32)
    # rows shorter than a line are counted by linear addresses; their phase moves with x (72 B steps) and y
    assert counts_are_dear(_aos(10, 9), 128)
    assert not counts_are_dear(warpspeed.find_kernel("copy"), 128)  # linear, contiguous along x
    assert not counts_are_dear(_aos(12, 8), 32)  # 64 B rows: every row starts on a sector
    assert not counts_are_dear(_aos(8, 9), 32)  # x extent 8: the phase depends on x only (one mod)
    assert not counts_are_dear(warpspeed.find_kernel("star3d-r4"), 32)
    assert not counts_are_dear(warpspeed.find_kernel("star3d-r4"), 128)
    lbm = pytest.importorskip("warpspeed_pystencils") and warpspeed.find_kernel("d3q19-srt")
    assert not counts_are_dear(lbm, 32) and not counts_are_dear(lbm, 128)  # fzyx: rows along x
    zyxf = warpspeed.find_kernel("d3q19-srt:layout=zyxf")
    assert counts_are_dear(zyxf, 32) and counts_are_dear(zyxf, 128)


def _compare_with_isl(spec, block, ranges, granularity, exact=True):
    kernel, launch, id_ranges = launch_with_ranges(spec, block, ranges)
    (ea, _), _ = assert_same_footprints(EnumeratedFootprints(kernel, granularity, exact=exact),
                                        Footprints(kernel, granularity, exact=exact), launch, id_ranges)
    assert np.all(np.diff(ea.keys) > 0) and np.all(ea.keys >> FIELD_SHIFT < len(kernel.fields))


RANGES = FRACTIONS
BLOCKS = st.sampled_from([(32, 2, 1), (8, 4, 2), (4, 4, 4), (64, 1, 1), (1, 8, 4)])


@PROFILE
@given(spec=stencil_kernels(max_domain=(40, 16, 8)), block=BLOCKS, ranges=RANGES,
       granularity=st.sampled_from([32, 128]), exact=st.booleans())
def test_enumerated_footprints_equal_the_isl_ones_for_stencils(spec, block, ranges, granularity, exact):
    """Exact, and with ``exact=False`` (a granule two rows share counts once per row) alike."""
    _compare_with_isl(spec, block, ranges, granularity, exact)


@PROFILE
@given(spec=st.one_of(population_kernels(), population_kernels(aos=True)), block=BLOCKS, ranges=RANGES,
       granularity=st.sampled_from([32, 128]), exact=st.booleans())
def test_enumerated_footprints_equal_the_isl_ones_for_populations(spec, block, ranges, granularity, exact):
    _compare_with_isl(spec, block, ranges, granularity, exact)


def test_a_footprint_isl_cannot_coalesce_is_counted_uncoalesced():
    """The loads and stores of this fp32 population field make isl_set_coalesce fail (an ISL error); the
    footprint is then counted as it is: the same 50 sectors as the enumeration."""
    spec = {"name": "populations", "precision": "fp32", "flops_per_lup": 10, "domain": [11, 5, 2],
            "field": [{"name": "src", "element_bytes": 4, "shape": [15, 7, 4, 2], "offset": 2,
                       "loads": [["tidx+1", "tidy+1", "tidz+1", "0"], ["tidx+1", "tidy+0", "tidz+0", "1"]],
                       "stores": [["tidx+1", "tidy+1", "tidz+1", "0"], ["tidx+1", "tidy+1", "tidz+1", "1"]]}]}
    kernel = warpspeed.kernel_from_dict(spec)
    cells = cell_set(make_launch(kernel, H100, (32, 2, 1)), 0, 6)
    raw = Footprints(kernel, 32).footprint(cells, loads=True, stores=True, coalesce=False)
    with pytest.raises(isl.Error, match="coalesce"):
        [p.coalesce() for p in raw.parts]
    fp = Footprints(kernel, 32).footprint(cells, loads=True, stores=True)
    assert fp.size() == EnumeratedFootprints(kernel, 32).footprint(cells, loads=True, stores=True).size() == 50


def _compare_slices_with_points(spec, block, ranges, granularity, exact):
    kernel, launch, id_ranges = launch_with_ranges(spec, block, ranges)
    by_slices = EnumeratedFootprints(kernel, granularity, exact=exact)
    by_points = EnumeratedFootprints(kernel, granularity, exact=exact, slices=False)
    for lo, hi in id_ranges:
        cells = cell_set(launch, lo, hi)
        for loads, stores in ((True, False), (False, True), (True, True)):
            a = by_slices.footprint(cells, loads=loads, stores=stores)
            b = by_points.footprint(cells, loads=loads, stores=stores)
            assert np.array_equal(a.keys, b.keys), (loads, stores)
            assert by_slices.footprint_size(cells, loads=loads, stores=stores) == b.size()
            # counted chunk by chunk without the keys (a granule two chunks share once)
            assert by_slices.sizes_by_field(cells, loads=loads, stores=stores) == by_points.count_by_field(b)
    if len(id_ranges) == 2:  # the loads of one range met by the other's footprint, chunks that cannot meet it left out
        (la, ha), (lb, hb) = id_ranges
        for mine, theirs in (((la, ha), (lb, hb)), ((lb, hb), (la, ha))):
            other = by_points.footprint(cell_set(launch, *theirs), loads=True, stores=True)
            met = by_slices.meet(cell_set(launch, *mine), other)
            assert np.array_equal(met.keys, by_points.footprint(cell_set(launch, *mine)).intersect(other).keys)


@PROFILE
@given(spec=st.one_of(population_kernels(), population_kernels(aos=True), stencil_kernels(max_domain=(40, 16, 8))),
       block=BLOCKS, ranges=RANGES, granularity=st.sampled_from([32, 128]), chunk=st.sampled_from([5, 64, 1 << 25]),
       exact=st.booleans(), small_rows=st.sampled_from([0, 64, 1 << 30]))
def test_slice_bitmaps_list_the_same_granules_as_points(spec, block, ranges, granularity, chunk, exact, small_rows):
    """Every granule by marking slices (in chunks of ``chunk`` elements along the slowest moving dimension,
    at least one index of it per chunk) equals every granule of every cell's address; the granules two
    rows share are found the same way with all boundaries at once (``small_rows`` large) or class by class."""
    import warpspeed.model.enumerated_volumes as ev

    old = ev.CHUNK_ELEMENTS, ev.SMALL_CHUNK_ROWS
    ev.CHUNK_ELEMENTS, ev.SMALL_CHUNK_ROWS = chunk, small_rows
    try:
        _compare_slices_with_points(spec, block, ranges, granularity, exact)
    finally:
        ev.CHUNK_ELEMENTS, ev.SMALL_CHUNK_ROWS = old


def test_lbm_fields_are_marked_by_slices_in_both_layouts():
    pytest.importorskip("warpspeed_pystencils")
    for name in ("d3q19-srt", "d3q19-srt:layout=zyxf"):
        fp = EnumeratedFootprints(warpspeed.find_kernel(name), 32)
        assert all(s is not None for s in fp._slices), name
    assert EnumeratedFootprints(_aos(10, 9), 32)._slices[0] is not None


def _aos_field_kernel(q: int, nx: int, loads: list[list[str]]):
    return warpspeed.kernel_from_dict({
        "name": "aos", "precision": "fp64", "flops_per_lup": 1, "domain": [nx, 2, 2],
        "field": [{"name": "f", "element_bytes": 8, "shape": [q, nx + 2, 4, 4], "loads": loads, "stores": []}]})


def test_rows_of_one_cell_are_counted_in_closed_form_with_a_known_count():
    """19 doubles per cell (152 B), every population read: a row starts 24 B further into a 128 B line per
    cell, so 14 of every 16 rows span two lines and 2 (starting 112 and 120 B in) span three: 34 lines per 16
    cells, counted once per row (exact=False)."""
    import warpspeed.model.cell_rows as cr

    kernel = _aos_field_kernel(19, 64, [[str(q), "tidx", "tidy", "tidz"] for q in range(19)])
    counter = EnumeratedFootprints(kernel, 128, exact=False)
    cells = cell_set(make_launch(kernel, H100, (64, 1, 1)), 0, 1)  # x 0..63 of row (y, z) = (0, 0)
    import warpspeed.model.enumerated_volumes as ev

    calls = []
    real = cr.row_granule_count, ev.CLOSED_FORM_OVERLAY_SHARE
    cr.row_granule_count = lambda *a: calls.append(1) or real[0](*a)
    ev.CLOSED_FORM_OVERLAY_SHARE = float("inf")  # so few cells would be marked in the bitmap
    try:
        assert counter.footprint_size(cells) == 4 * 34
    finally:
        cr.row_granule_count, ev.CLOSED_FORM_OVERLAY_SHARE = real
    assert calls == [1]
    assert EnumeratedFootprints(kernel, 128, exact=False, closed_form=False).footprint_size(cells) == 4 * 34


@PROFILE
@given(spec=st.one_of(population_kernels(aos=True), population_kernels(aos=True, populations=(15, 27))),
       block=BLOCKS, ranges=RANGES, granularity=st.sampled_from([32, 128]))
def test_closed_form_rows_count_what_the_bitmap_counts(spec, block, ranges, granularity):
    """The per-row counts of array-of-structures fields in closed form (cell_rows) equal the bitmap's and the
    points' (exact=False), for loads, stores and both, over wave-like ranges of blocks (rows of 15-27
    populations: 60-216 B, a line long or not)."""
    import warpspeed.model.enumerated_volumes as ev

    kernel, launch, id_ranges = launch_with_ranges(spec, block, ranges)
    closed = EnumeratedFootprints(kernel, granularity, exact=False)
    bitmap = EnumeratedFootprints(kernel, granularity, exact=False, closed_form=False)
    points = EnumeratedFootprints(kernel, granularity, exact=False, slices=False)
    saved, ev.CLOSED_FORM_OVERLAY_SHARE = ev.CLOSED_FORM_OVERLAY_SHARE, float("inf")  # wherever it applies
    try:
        for lo, hi in id_ranges:
            cells = cell_set(launch, lo, hi)
            for loads, stores in ((True, False), (False, True), (True, True)):
                n = closed.footprint_size(cells, loads=loads, stores=stores)
                assert n == bitmap.footprint_size(cells, loads=loads, stores=stores)
                assert n == points.footprint(cells, loads=loads, stores=stores).size()
    finally:
        ev.CLOSED_FORM_OVERLAY_SHARE = saved


@given(st.lists(st.integers(0, 2**41), max_size=300), st.lists(st.integers(0, 2**41), max_size=300),
       st.sampled_from([1, 2**30, 2**36]), st.integers(0, 2**41))
def test_address_set_operations_are_numpys_set_operations(a, b, narrow, shift):
    """Intersection and difference equal numpy's sort-based ones (and stay sorted), by binary search for keys
    far apart and by bitmap for keys close together (``narrow`` divides them into a short span, and ``shift``
    moves one operand's span against the other's)."""
    from warpspeed.model.enumerated_volumes import AddressSet

    ka = np.unique(np.array(a, dtype=np.int64) // narrow)
    kb = np.unique(np.array(b, dtype=np.int64) // narrow + (shift // narrow) % 64)
    sa, sb = AddressSet(ka), AddressSet(kb)
    assert np.array_equal(sa.intersect(sb).keys, np.intersect1d(ka, kb))
    assert np.array_equal(sa.subtract(sb).keys, np.setdiff1d(ka, kb))
    assert np.array_equal(sb.subtract(sa).keys, np.setdiff1d(kb, ka))


def test_slabs_of_two_constant_indices_come_in_address_order():
    """Accesses with two constant indices above the moving one (here c[x, 1, 2] and c[x, 2, 1]) mark two slabs;
    their keys must come in address order (the slowest index decides), or the footprint is not the sorted set
    its intersection and difference assume: c[x, 2, 1] lies before c[x, 1, 2]."""
    spec = {"name": "c", "precision": "fp64", "flops_per_lup": 1, "domain": [64, 1, 1],
            "field": [{"name": "c", "element_bytes": 8, "shape": [64, 4, 4], "offset": 0, "stores": [],
                       "loads": [["tidx", "1", "2"], ["tidx", "2", "1"]]}]}
    kernel = warpspeed.kernel_from_dict(spec)
    cells = CellSet((((0, 0, 0), (63, 0, 0)),))
    fp = EnumeratedFootprints(kernel, 32).footprint(cells)
    ref = EnumeratedFootprints(kernel, 32, slices=False).footprint(cells)
    assert np.array_equal(fp.keys, ref.keys) and np.all(np.diff(fp.keys) > 0)
    assert fp.intersect(fp).size() == 32 and fp.subtract(fp).size() == 0


@given(lo=st.integers(0, 6), count=st.integers(1, 8), start=st.integers(0, 60), stride=st.integers(1, 9),
       per=st.sampled_from([1, 2, 4, 8, 16]), near=st.lists(st.integers(0, 40), max_size=8))
def test_near_indices_keep_every_index_that_shares_a_granule(lo, count, start, stride, per, near):
    """The indices a bitmap chunk keeps for ``meet``: the first to the last whose elements (``stride`` each,
    index ``lo`` from element ``start``) share a granule with ``near``, counted element by element."""
    from warpspeed.model.enumerated_volumes import _near_indices

    wanted = set(near)
    sharing = [k for k in range(lo, lo + count)
               if any((start + (k - lo) * stride + e) // per in wanted for e in range(stride))]
    kept = _near_indices(np.array(sorted(wanted), dtype=np.int64), lo, lo + count - 1, start, stride, per)
    assert kept == ((sharing[0], sharing[-1]) if sharing else None)
    assert _near_indices(None, lo, lo + count - 1, start, stride, per) == (lo, lo + count - 1)


@PROFILE
@given(spec=box_kernels(), block=BLOCKS, ranges=RANGES, granularity=st.sampled_from([32, 128]),
       exact=st.booleans())
def test_enumerated_footprints_equal_the_isl_ones_for_box_stencils(spec, block, ranges, granularity, exact):
    """Diagonal neighbours (27-point boxes and parts of them with a corner), exact and per row alike."""
    _compare_with_isl(spec, block, ranges, granularity, exact)


@PROFILE
@given(spec=st.one_of(population_kernels(aos=True), stencil_kernels(max_domain=(40, 16, 8))), block=BLOCKS,
       ranges=RANGES, granularity=st.sampled_from([32, 128]), chunk=st.sampled_from([5, 64, 1 << 25]),
       keep=st.integers(1, 7), data=st.data())
def test_a_meet_by_lookup_is_the_listed_granules_among_the_others(spec, block, ranges, granularity, chunk, keep,
                                                                  data):
    """``granules_meeting`` (each chunk's granules looked up among ``near``) equals every granule listed by the
    slices that is in ``near``, a granule two chunks share once, for any subset ``near`` of the granules
    around them (every ``keep``-th from a random start, listed granules and others alike)."""
    import warpspeed.model.enumerated_volumes as ev

    old = ev.CHUNK_ELEMENTS
    ev.CHUNK_ELEMENTS = chunk
    try:
        for f, loads, boxes, listed, near in _listed_loads_and_near(spec, block, ranges, granularity, keep, data):
            met = ev.granules_meeting(f, loads, boxes, granularity, near)
            assert np.array_equal(met, listed[np.isin(listed, near)])
    finally:
        ev.CHUNK_ELEMENTS = old


def _listed_loads_and_near(spec, block, ranges, granularity, keep, data):
    """For each field with slices and loads and each id range: the field, its load slices, the range's boxes,
    the granules the slices list and a subset ``near`` of the granules around them (every ``keep``-th from a
    random start, listed granules and others alike)."""
    import warpspeed.model.enumerated_volumes as ev
    from warpspeed.model.field_encoding import field_slice_accesses

    kernel, launch, id_ranges = launch_with_ranges(spec, block, ranges)
    for f in kernel.fields:
        slices = field_slice_accesses(f, kernel.domain)
        if slices is None or not slices[0]:
            continue
        for lo, hi in id_ranges:
            boxes = cell_set(launch, lo, hi).boxes
            listed = ev.granules_by_slices(f, slices[0], boxes, granularity)
            if listed is None:
                continue
            span = np.arange(max(0, int(listed[0]) - 3), int(listed[-1]) + 4) if listed.size else np.arange(4)
            yield f, slices[0], boxes, listed, span[data.draw(st.integers(0, keep - 1))::keep]


@PROFILE
@given(spec=st.one_of(population_kernels(aos=True), population_kernels(), stencil_kernels(max_domain=(40, 16, 8))),
       block=BLOCKS, ranges=RANGES, granularity=st.sampled_from([32, 128]), run_elements=st.sampled_from([0, 16]))
def test_runs_of_whole_rows_count_what_the_bitmap_counts(spec, block, ranges, granularity, run_elements):
    """Stores (and loads) counted from their runs of consecutive elements (a store of every population of a
    cell: one run per row of cells) equal the bitmap's count and the points' granules, whatever runs are
    taken (``run_elements`` 0: every range counted by runs); the runs are taken for the array-of-structures
    stores of every population (checked where a field stores them all)."""
    import warpspeed.model.enumerated_volumes as ev
    from warpspeed.model.field_encoding import field_slice_accesses

    kernel, launch, id_ranges = launch_with_ranges(spec, block, ranges)
    saved, ev.RUN_ELEMENTS_AT_LEAST = ev.RUN_ELEMENTS_AT_LEAST, run_elements
    try:
        for f in kernel.fields:
            slices = field_slice_accesses(f, kernel.domain)
            if slices is None:
                continue
            for accesses in (slices[0], slices[1]):
                if not accesses:
                    continue
                for lo, hi in id_ranges:
                    boxes = cell_set(launch, lo, hi).boxes
                    listed = ev.granules_by_slices(f, accesses, boxes, granularity)
                    if listed is None:
                        continue
                    assert ev.granule_count_by_slices(f, accesses, boxes, granularity) == listed.size
                    found = ev._slice_ranges(f, accesses, boxes, granularity)
                    runs = ev._run_granule_count(f, found[1], granularity // f.element_bytes)
                    assert runs is None or runs == listed.size
                    if run_elements == 0:
                        assert runs is not None
    finally:
        ev.RUN_ELEMENTS_AT_LEAST = saved


def test_a_chunk_pattern_seen_before_is_not_marked_again():
    """The planes of a wave repeat a pattern of rows: the second count of the same cells marks no chunk, and
    a wave one plane further (the same rows, planes whose granules start alike) neither; the granules are
    the first ones, a plane further."""
    import warpspeed.model.enumerated_volumes as ev
    from warpspeed.model.field_encoding import field_slice_accesses

    vel = [(0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1), (1, 1, 0), (-1, -1, 0)]
    kernel = warpspeed.kernel_from_dict({
        "name": "aos", "precision": "fp64", "flops_per_lup": 1, "domain": [32, 38, 6],
        "field": [{"name": "f", "element_bytes": 8, "shape": [9, 34, 40, 8], "stores": [],
                   "loads": [[str(q), f"tidx+{1 - cx}", f"tidy+{1 - cy}", f"tidz+{1 - cz}"]
                             for q, (cx, cy, cz) in enumerate(vel)]}]})
    f = kernel.fields[0]
    loads = field_slice_accesses(f, kernel.domain)[0]
    marked = []
    real = ev._marked_chunk
    ev._marked_chunk = lambda *a: marked.append(1) or real(*a)
    try:
        ev._kept_patterns.clear()
        first = ev.granules_by_slices(f, loads, [((0, 0, 0), (31, 5, 3))], 32)  # rows 0..7 of planes 0..5
        assert len(marked) == 5  # planes 2 and 3 hold every load: one pattern
        assert np.array_equal(ev.granules_by_slices(f, loads, [((0, 0, 0), (31, 5, 3))], 32), first)
        moved = ev.granules_by_slices(f, loads, [((0, 0, 1), (31, 5, 4))], 32)
        assert len(marked) == 5  # planes 1..6: the patterns of planes 0..5
        plane = 9 * 34 * 40 * 8 // 32  # granules per plane (a whole number of them)
        assert np.array_equal(moved, first + plane)
    finally:
        ev._marked_chunk = real


@PROFILE
@given(spec=population_kernels(aos=True), block=BLOCKS, ranges=RANGES, granularity=st.sampled_from([32, 128]),
       keep=st.integers(1, 5), field=st.integers(1, 3), data=st.data())
def test_a_meet_reads_a_fields_keys_in_place(spec, block, ranges, granularity, keep, field, data):
    """``granules_meeting`` of a field's part of a footprint, its keys ``field << FIELD_SHIFT | granule`` read
    as they are (``tag``), gives the keys of the meet of the bare granules: no copy of the part untagged."""
    import warpspeed.model.enumerated_volumes as ev

    tag = field << FIELD_SHIFT
    for f, loads, boxes, _, near in _listed_loads_and_near(spec, block, ranges, granularity, keep, data):
        bare = ev.granules_meeting(f, loads, boxes, granularity, near)
        assert np.array_equal(ev.granules_meeting(f, loads, boxes, granularity, near | tag, tag), bare | tag)


def test_a_count_of_lines_works_out_its_pairs_and_row_accesses_once():
    """The closed form sizes, checks and counts the same (access, box) pairs: their spans are worked out once
    (kept, read only), and a counter turns a field's accesses into row accesses once for every count."""
    import warpspeed.model.cell_rows as cr

    kernel = _aos_field_kernel(19, 64, [[str(q), "tidx", "tidy", "tidz"] for q in range(19)])
    counter = EnumeratedFootprints(kernel, 128, exact=False)
    launch = make_launch(kernel, H100, (16, 1, 1))
    made, real = [], cr.row_accesses
    cr._kept_pair_spans.cache_clear()
    import warpspeed.model.enumerated_volumes as ev

    ev.row_accesses = lambda *a: made.append(1) or real(*a)
    try:
        counts = [counter.footprint_size(cell_set(launch, 0, n)) for n in (1, 2, 4)]
    finally:
        ev.row_accesses = real
    assert counts == [EnumeratedFootprints(kernel, 128, exact=False, closed_form=False).footprint_size(
        cell_set(launch, 0, n)) for n in (1, 2, 4)]
    assert made == [1]
    info = cr._kept_pair_spans.cache_info()
    assert info.misses <= 2 * 3 and info.hits >= 3  # per count: the group's pairs and all pairs, each once
    spans = cr._pair_spans(counter._row_accesses[(0, True, False)], cell_set(launch, 0, 1).boxes)
    assert not spans.flags.writeable
