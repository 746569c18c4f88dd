"""The line-by-line counter (line_volumes): exact footprints of array-of-structures fields against every cell's
listed address (the enumeration's points, a brute-force twin) and ISL where it is cheap, on random AoS
fields and cell sets, LBM layouts and hand counts."""

from __future__ import annotations

import numpy as np
import pytest
from footprint_checks import FRACTIONS, assert_same_footprints, launch_with_ranges
from hypothesis import assume, given
from hypothesis import strategies as st
from kernel_strategies import PROFILE, population_kernels

import warpspeed
from warpspeed.errors import InputError
from warpspeed.model.cells import CellSet, cell_set
from warpspeed.model.counters import choose_counter, footprint_counter
from warpspeed.model.dram import wave_sectors, wave_traffic
from warpspeed.model.enumerated_volumes import EnumeratedFootprints
from warpspeed.model.footprint import StoreSectors
from warpspeed.model.isl_volumes import Footprints
from warpspeed.model.launch import make_launch
from warpspeed.model.line_volumes import FieldLines, LineFootprints, applies

H100 = warpspeed.device("H100-SXM5-80GB")
BLOCKS = st.sampled_from([(32, 2, 1), (8, 4, 2), (4, 4, 4), (64, 1, 1), (1, 8, 4), (3, 5, 2)])

NO_STORES = StoreSectors(0, 0)  # no block completes a stored sector: every stored one partial


def _aos_spec(q, shifts, stores, eb=8, halo=1, pad=(0, 0, 0), offset=0, domain=(12, 5, 4)):
    """One field in an array of structures, (q, x, y, z): component j read at the cell + ``shifts[j]`` and the
    ``stores`` (shift, component) pairs written."""
    shape = [q] + [n + 2 * halo + p for n, p in zip(domain, pad, strict=True)]

    def access(j, s):
        return [str(j)] + [f"{t} + {halo + d}" for t, d in zip(("tidx", "tidy", "tidz"), s, strict=True)]

    return {"name": "aos", "precision": "fp64" if eb == 8 else "fp32", "flops_per_lup": 1, "domain": list(domain),
            "field": [{"name": "f", "element_bytes": eb, "shape": shape, "offset": offset,
                       "loads": [access(j, s) for j, s in enumerate(shifts)],
                       "stores": [access(j, s) for s, j in stores]}]}


@st.composite
def aos_kernels(draw):
    """Random array-of-structures fields: 2-27 components of 4 or 8 B, each read at a random neighbour within
    the halo (1 or 2), written at the cell (a whole cell), at a neighbour (push) or not at all, with paddings and
    offsets that move where lines and rows start in a granule."""
    q, halo = draw(st.integers(2, 27)), draw(st.integers(1, 2))
    shift = st.tuples(*(st.integers(-halo, halo),) * 3)
    shifts = draw(st.lists(shift, min_size=q, max_size=q))
    kind = draw(st.sampled_from(["cell", "push", "none"]))
    stores = [((0, 0, 0), j) for j in range(q)] if kind == "cell" else \
        [(tuple(-c for c in s), j) for j, s in enumerate(shifts)] if kind == "push" else []
    domain = (draw(st.integers(1, 20)), draw(st.integers(1, 7)), draw(st.integers(1, 5)))
    pad = (draw(st.integers(0, 3)), draw(st.integers(0, 1)), 0)
    return _aos_spec(q, shifts, stores, eb=draw(st.sampled_from([4, 8])), halo=halo, pad=pad,
                     offset=draw(st.integers(0, 9)), domain=domain)


def _boxes_in(domain, data, count):
    boxes = []
    for _ in range(count):
        lo = tuple(data.draw(st.integers(0, n - 1)) for n in domain)
        hi = tuple(data.draw(st.integers(a, n - 1)) for a, n in zip(lo, domain, strict=True))
        boxes.append((lo, hi))
    return CellSet(tuple(boxes))


def _same_as_points(kernel, granularity, sets, exact=True):
    """The counter's footprints of the cell sets (loads, stores, both), their sizes per field, and the
    intersections, differences and meets of each pair, against the listed points (``exact=False``: a granule
    two rows share once per row)."""
    mine = LineFootprints(kernel, granularity, exact=exact)
    points = EnumeratedFootprints(kernel, granularity, exact=exact, slices=False)
    fps = []
    for cells in sets:
        for loads, stores in ((True, False), (False, True), (True, True)):
            a, b = mine.footprint(cells, loads=loads, stores=stores), points.footprint(cells, loads=loads,
                                                                                        stores=stores)
            assert mine.count_by_field(a) == points.count_by_field(b), (loads, stores)
            assert mine.sizes_by_field(cells, loads=loads, stores=stores) == points.count_by_field(b)
            assert mine.footprint_size(cells, loads=loads, stores=stores) == b.size()
        fps.append((mine.footprint(cells), points.footprint(cells)))
    for (ma, pa), (mb, pb) in zip(fps, fps[1:] + fps[:1], strict=True):
        assert mine.count_by_field(ma.intersect(mb)) == points.count_by_field(pa.intersect(pb))
        assert mine.count_by_field(ma.subtract(mb)) == points.count_by_field(pa.subtract(pb))
    for cells, (mb, pb) in zip(sets, fps[1:] + fps[:1], strict=True):
        met = mine.meet(cells, mb)
        assert mine.count_by_field(met) == points.count_by_field(points.footprint(cells).intersect(pb))
        # the meet merges only the lines of the other footprint: the same lines and bits as the whole intersection
        whole = mine.footprint(cells).intersect(mb)
        assert all(np.array_equal(a, b) for a, b in zip(met.lines + met.bits, whole.lines + whole.bits, strict=True))


@PROFILE
@given(spec=aos_kernels(), granularity=st.sampled_from([32, 128]), exact=st.booleans(), sets=st.integers(1, 3),
       boxes=st.integers(1, 4), data=st.data())
def test_random_aos_fields_and_cell_sets_count_what_the_points_count(spec, granularity, exact, sets, boxes, data):
    """Random boxes (overlapping, anywhere in the domain, one cell to all of it): footprints, sizes per field,
    intersections, differences and meets equal those of every cell's listed address, exact and per row."""
    kernel = warpspeed.kernel_from_dict(spec)
    assume(applies(kernel, granularity, exact))  # lines shorter than a granule are not counted line by line
    _same_as_points(kernel, granularity, [_boxes_in(kernel.domain, data, boxes) for _ in range(sets)], exact)


@PROFILE
@given(spec=population_kernels(aos=True, populations=(2, 19)), block=BLOCKS, ranges=FRACTIONS,
       granularity=st.sampled_from([32, 128]), exact=st.booleans())
def test_lbm_like_aos_kernels_count_what_the_points_count(spec, block, ranges, granularity, exact):
    """The wave-like cell sets of a launch (block-id ranges: up to five boxes) on LBM-like AoS fields (pull
    reads, stores at the cell, in place or two arrays): the same counts as the listed points."""
    kernel, launch, id_ranges = launch_with_ranges(spec, block, ranges)
    assume(applies(kernel, granularity, exact))
    assert_same_footprints(LineFootprints(kernel, granularity, exact=exact),
                           EnumeratedFootprints(kernel, granularity, exact=exact, slices=False), launch, id_ranges)


@PROFILE
@given(spec=population_kernels(aos=True, populations=(2, 9)), block=BLOCKS)
def test_the_wave_sectors_are_the_enumerated_ones(spec, block):
    """The DRAM stage's sector counts and wave traffic with this counter are the enumeration's."""
    kernel, launch, _ = launch_with_ranges(spec, block, ((0, 1000), (0, 1000)))
    assume(applies(kernel, 32) and applies(kernel, 128, exact=False))
    lines, enumerated = LineFootprints(kernel, 32), EnumeratedFootprints(kernel, 32)
    assert wave_sectors(kernel, launch, lines) == wave_sectors(kernel, launch, enumerated)
    assert wave_traffic(kernel, H100, launch, lines, LineFootprints(kernel, 128, exact=False), NO_STORES, 1000) == \
        wave_traffic(kernel, H100, launch, enumerated, EnumeratedFootprints(kernel, 128, exact=False), NO_STORES, 1000)


D3Q19 = [(0, 0, 0), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1), (1, 1, 0), (-1, 1, 0),
         (1, -1, 0), (-1, -1, 0), (1, 0, 1), (-1, 0, 1), (1, 0, -1), (-1, 0, -1), (0, 1, 1), (0, -1, 1), (0, 1, -1),
         (0, -1, -1)]
D3Q27 = [(x, y, z) for z in (-1, 0, 1) for y in (-1, 0, 1) for x in (-1, 0, 1)]
PATTERNS = {  # (loads, stores) as (shift, component) of an LBM field's streaming step
    "pull": lambda c: ([(tuple(-v for v in s), j) for j, s in enumerate(c)], [((0, 0, 0), j) for j in range(len(c))]),
    "push": lambda c: ([((0, 0, 0), j) for j in range(len(c))], [(s, j) for j, s in enumerate(c)]),
    "aa-even": lambda c: ([((0, 0, 0), j) for j in range(len(c))],
                          [((0, 0, 0), len(c) - 1 - j) for j in range(len(c))]),
    "aa-odd": lambda c: ([(tuple(-v for v in s), len(c) - 1 - j) for j, s in enumerate(c)],
                         [(s, j) for j, s in enumerate(c)]),
}


@pytest.mark.parametrize("velocities", [D3Q19[:2], D3Q19[:9], D3Q19, D3Q27], ids=["q2", "q9", "q19", "q27"])
@pytest.mark.parametrize("pattern", sorted(PATTERNS))
@pytest.mark.parametrize(("eb", "granularity", "offset", "exact"),
                         [(8, 32, 0, True), (4, 32, 3, True), (8, 128, 5, True), (4, 128, 0, True), (8, 128, 5, False),
                          (4, 32, 1, False)])
def test_lbm_streaming_patterns_halos_and_offsets(velocities, pattern, eb, granularity, offset, exact):
    """Pull, push and AA (both steps) on fields of 2 to 27 components with a halo of one or two cells: the wave
    of blocks 8x4x2 and three hand-placed cell sets (a row, a plane's corner, two overlapping boxes)."""
    loads, stores = PATTERNS[pattern](velocities)
    for halo in (1, 2):
        spec = _aos_spec(len(velocities), [(0, 0, 0)] * len(velocities), [], eb=eb, halo=halo, offset=offset,
                         domain=(18, 6, 5))
        access = _accessor(halo)
        spec["field"][0]["loads"] = [access(j, s) for s, j in loads]
        spec["field"][0]["stores"] = [access(j, s) for s, j in stores]
        kernel = warpspeed.kernel_from_dict(spec)
        sets = [CellSet((((0, 2, 1), (17, 2, 1)),)), CellSet((((10, 0, 0), (17, 5, 0)),)),
                CellSet((((0, 0, 0), (9, 3, 2)), ((5, 2, 1), (17, 5, 4))))]
        _same_as_points(kernel, granularity, sets, exact)
        launch = make_launch(kernel, H100, (8, 4, 2))
        _same_as_points(kernel, granularity, [cell_set(launch, 0, 5), cell_set(launch, 3, 11)], exact)


def _accessor(halo):
    return lambda j, s: [str(j)] + [f"{t} + {halo + d}" for t, d in zip(("tidx", "tidy", "tidz"), s, strict=True)]


def test_a_granule_two_lines_share_counts_once_by_hand():
    """Three 8 B components, five cells a line (120 B): line 1 starts 24 B into the 32 B sector 3 that line 0
    ends in. Both lines read whole: 240 B, sectors 0-7, eight, not nine; line 1 alone: sectors 3-7; their
    intersection: sector 3 only."""
    spec = _aos_spec(3, [(0, 0, 0)] * 3, [], halo=0, domain=(5, 2, 1))
    kernel = warpspeed.kernel_from_dict(spec)
    c = LineFootprints(kernel, 32)
    both, line0, line1 = (c.footprint(CellSet((((0, y0, 0), (4, y1, 0)),))) for y0, y1 in ((0, 1), (0, 0), (1, 1)))
    assert (both.size(), line0.size(), line1.size()) == (8, 4, 5)
    assert line0.intersect(line1).size() == 1 and both.subtract(line1).size() == 3
    assert line1.subtract(line0).size() == 4 and c.empty().size() == 0 and both.intersect(c.empty()).size() == 0


def test_a_small_aos_kernel_counts_what_isl_counts():
    """ISL's exact counts where they are cheap (a small domain)."""
    spec = _aos_spec(5, D3Q19[:5], [((0, 0, 0), j) for j in range(5)], domain=(6, 3, 2), offset=1)
    kernel = warpspeed.kernel_from_dict(spec)
    launch = make_launch(kernel, H100, (4, 2, 1))
    for granularity in (32, 128):
        mine, isl = LineFootprints(kernel, granularity), Footprints(kernel, granularity)
        for lo, hi in ((0, 3), (2, 7), (0, 9)):
            cells = cell_set(launch, lo, hi)
            for loads, stores in ((True, False), (False, True), (True, True)):
                assert mine.count_by_field(mine.footprint(cells, loads=loads, stores=stores)) == \
                    isl.count_by_field(isl.footprint(cells, loads=loads, stores=stores))


def test_auto_counts_arrays_of_structures_line_by_line_and_only_them():
    """Counts of AoS fields go line by line, exact and per row; structure-of-arrays fields stay with the ranges;
    a kernel the lines do not count is refused by name."""
    aos = warpspeed.kernel_from_dict(_aos_spec(9, D3Q19[:9], [((0, 0, 0), j) for j in range(9)]))
    assert choose_counter("auto", aos, 32) == "lines"
    assert choose_counter("auto", aos, 128) == "ranges"  # 72 B per x step: a row's cells in one range of lines
    assert choose_counter("auto", aos, 32, exact=False) == "lines"
    assert isinstance(footprint_counter(aos, 32), LineFootprints)
    star = warpspeed.find_kernel("star3d-r4")
    assert choose_counter("auto", star, 32) == "ranges"
    quasi = warpspeed.kernel_from_dict({
        "name": "half", "precision": "fp64", "flops_per_lup": 1, "domain": [64, 64, 64],
        "field": [{"name": "c", "element_bytes": 8, "shape": [40, 66, 66],
                   "loads": [["tidx // 2 + 4", "tidy + 1", "tidz + 1"]], "stores": []}]})
    assert not applies(quasi, 32) and choose_counter("auto", quasi, 32) == "isl"
    with pytest.raises(InputError, match="the 'lines' footprint counter does not count kernel 'half'"):
        footprint_counter(quasi, 32, name="lines")



def test_lbmpy_zyxf_kernels_are_counted_line_by_line():
    """lbmpy's D3Q19 in zyxf, every streaming pattern and time step: the wave sectors and line counts of a few
    blocks are the enumeration's (at 64^3), and auto takes this counter for them."""
    pytest.importorskip("warpspeed_pystencils")
    names = ["d3q19-srt:streaming=pull,layout=zyxf", "d3q19-srt:streaming=push,layout=zyxf"] + [
        f"d3q19-srt:streaming={s},timestep={t},layout=zyxf" for s in ("aa", "esotwist") for t in ("even", "odd")]
    for name in names:
        k = warpspeed.find_kernel(name).with_domain((64, 64, 64))
        assert choose_counter("auto", k, 32) == "lines"
        assert choose_counter("auto", k, 128, exact=False) == "lines"
        lines, enumerated = LineFootprints(k, 32), EnumeratedFootprints(k, 32)
        line_counts, enumerated_lines = LineFootprints(k, 128, exact=False), EnumeratedFootprints(k, 128, exact=False)
        for block in ((64, 2, 1), (8, 8, 4), (1, 8, 32)):
            launch = make_launch(k, H100, block)
            assert wave_sectors(k, launch, lines) == wave_sectors(k, launch, enumerated), (name, block)
            assert wave_traffic(k, H100, launch, lines, line_counts, NO_STORES, 1000) == \
                wave_traffic(k, H100, launch, enumerated, enumerated_lines, NO_STORES, 1000), (name, block)
    assert np.all([not applies(warpspeed.find_kernel(n.replace("zyxf", "fzyx")), 32) or
                   choose_counter("auto", warpspeed.find_kernel(n.replace("zyxf", "fzyx")), 32) == "ranges"
                   for n in names])


def test_counts_do_not_depend_on_what_is_kept(monkeypatch):
    """With every kept bitmap, overlay and box forgotten before each footprint (and the boxes' lines after each
    box), the counts are the listed points' still."""
    import warpspeed.model.line_volumes as lv

    monkeypatch.setattr(lv, "KEPT_BITMAPS", 1)
    monkeypatch.setattr(lv, "KEPT_BOX_LINES", 1)
    monkeypatch.setattr(lv, "KEPT_ACCESS_BITMAP_BYTES", 1)
    loads, stores = PATTERNS["aa-odd"](D3Q19)
    spec = _aos_spec(19, [(0, 0, 0)] * 19, [], eb=8, offset=3, domain=(18, 6, 5))
    spec["field"][0]["loads"] = [_accessor(1)(j, s) for s, j in loads]
    spec["field"][0]["stores"] = [_accessor(1)(j, s) for s, j in stores]
    kernel = warpspeed.kernel_from_dict(spec)
    launch = make_launch(kernel, H100, (4, 2, 2))
    _same_as_points(kernel, 32, [cell_set(launch, a, b) for a, b in ((0, 7), (5, 20), (0, 40), (5, 20))])


def test_an_isl_set_that_is_no_box_counts_cell_by_cell():
    """A caller's ISL set with a piece that is not a box (a triangle of cells) is counted from its cells."""
    import islpy as isl

    spec = _aos_spec(5, D3Q19[:5], [((0, 0, 0), j) for j in range(5)], domain=(8, 6, 3), offset=2)
    kernel = warpspeed.kernel_from_dict(spec)
    cells = isl.Set("{ [x, y, z] : 0 <= y <= x <= 5 and z = 1 or 0 <= x <= 7 and 4 <= y <= 5 and 0 <= z <= 2 }")
    for granularity, exact in ((32, True), (128, False)):
        mine = LineFootprints(kernel, granularity, exact=exact)
        points = EnumeratedFootprints(kernel, granularity, exact=exact, slices=False)
        for loads, stores in ((True, False), (True, True)):
            assert mine.sizes_by_field(cells, loads=loads, stores=stores) == \
                points.count_by_field(points.footprint(cells, loads=loads, stores=stores))


@PROFILE
@given(step=st.integers(1, 40), rows=st.sampled_from([0, 1, 2, 3]), per=st.sampled_from([1, 2, 4, 8, 16, 32]),
       cells=st.integers(1, 300), data=st.data())
def test_an_elements_bit_in_closed_form_is_the_listed_lines(step, rows, per, cells, data):
    """``bits_at`` (an element's bit without listing the line) and ``bits_along`` (a box's elements, repeated
    per period) against ``bit_of``'s listing of every element of the line (its granule, or per row its piece of
    a row and a granule), at any line start in a granule, rows one or several x steps long."""
    line = step * cells
    assume(line >= per)
    lines = FieldLines(step, line, (), 0, per, (0,), ((),), step * rows)
    phase = data.draw(st.integers(0, per - 1))
    listed = lines.bit_of(phase)
    assert np.array_equal(lines.bits_at(phase, np.arange(line)), listed)
    first = np.array(data.draw(st.lists(st.integers(0, step - 1), min_size=1, max_size=4)), dtype=np.int64)
    x0 = data.draw(st.integers(0, cells - 1))
    width = data.draw(st.integers(1, cells - x0))
    at = first[:, None] + step * (x0 + np.arange(width))[None, :]
    assert np.array_equal(lines.bits_along(phase, first + step * x0, width), listed[at])


@st.composite
def wide_aos_kernels(draw):
    """Array-of-structures fields hundreds to thousands of cells wide in x and a few cells in y and z."""
    q, halo = draw(st.integers(2, 19)), draw(st.integers(1, 2))
    shift = st.tuples(*(st.integers(-halo, halo),) * 3)
    shifts = draw(st.lists(shift, min_size=q, max_size=q))
    stores = [((0, 0, 0), j) for j in range(q)] if draw(st.booleans()) else []
    domain = (draw(st.sampled_from([257, 640, 1030, 2048])), draw(st.integers(1, 4)), draw(st.integers(1, 3)))
    return _aos_spec(q, shifts, stores, eb=draw(st.sampled_from([4, 8])), halo=halo,
                     pad=(draw(st.integers(0, 3)), 0, 0), offset=draw(st.integers(0, 9)), domain=domain)


def _thin_boxes(domain, data, count):
    """Boxes one to a few cells wide anywhere in x (blocks one cell wide), or whole planes of the domain."""
    boxes = []
    for _ in range(count):
        if data.draw(st.booleans()):
            x0 = data.draw(st.integers(0, domain[0] - 1))
            x1 = min(domain[0] - 1, x0 + data.draw(st.integers(0, 2)))
        else:
            x0, x1 = 0, domain[0] - 1
        y0, z0 = data.draw(st.integers(0, domain[1] - 1)), data.draw(st.integers(0, domain[2] - 1))
        boxes.append(((x0, y0, z0), (x1, data.draw(st.integers(y0, domain[1] - 1)),
                                     data.draw(st.integers(z0, domain[2] - 1)))))
    return CellSet(tuple(boxes))


@PROFILE
@given(spec=wide_aos_kernels(), granularity=st.sampled_from([32, 128]), exact=st.booleans(),
       boxes=st.integers(1, 6), data=st.data())
def test_wide_domains_and_thin_boxes_count_what_the_points_count(spec, granularity, exact, boxes, data):
    """Domains up to 2048 cells wide with boxes one cell wide, whole planes and overlaps of both (lines of one
    and of several bitmaps): footprints, sizes per field, intersections, differences and meets equal those of
    every cell's listed address."""
    kernel = warpspeed.kernel_from_dict(spec)
    assume(applies(kernel, granularity, exact))
    _same_as_points(kernel, granularity, [_thin_boxes(kernel.domain, data, boxes) for _ in range(2)], exact)


@pytest.mark.parametrize(("granularity", "exact"), [(32, True), (128, False), (128, True)])
def test_a_wide_plane_is_counted_without_a_bitmap_per_line(granularity, exact, monkeypatch):
    """A whole plane of a domain 4000 cells wide (D3Q19 pull, 8 B, 150 lines of 76 000 elements) and a wave of
    blocks one cell wide: the sizes are those of the listed footprint and of the enumeration, counted by the
    distinct sets of bitmaps, not by OR-ing one bitmap per line."""
    import warpspeed.model.line_volumes as lv

    loads, stores = PATTERNS["pull"](D3Q19)
    spec = _aos_spec(19, [(0, 0, 0)] * 19, [], eb=8, offset=3, domain=(4000, 6, 5))
    spec["field"][0]["loads"] = [_accessor(1)(j, s) for s, j in loads]
    spec["field"][0]["stores"] = [_accessor(1)(j, s) for s, j in stores]
    kernel = warpspeed.kernel_from_dict(spec)
    sets = [CellSet((((0, 0, 0), (3999, 5, 1)),)), CellSet(tuple(((x, 0, 0), (x, 5, 4)) for x in range(100, 140))),
            CellSet((((0, 0, 2), (3999, 5, 2)), ((7, 1, 0), (7, 4, 4)), ((3999, 0, 0), (3999, 5, 4))))]
    mine, enumerated = LineFootprints(kernel, granularity, exact=exact), EnumeratedFootprints(kernel, granularity,
                                                                                                exact=exact)
    listed = [[mine.footprint(c, loads=ld, stores=st_).sizes() for ld, st_ in ((True, False), (True, True))]
              for c in sets]

    def refuse(*args, **kwargs):
        raise AssertionError("a size listed a bitmap per line")

    monkeypatch.setattr(lv, "_field_lines_of", refuse)
    for cells, sizes in zip(sets, listed, strict=True):
        for (ld, st_), size in zip(((True, False), (True, True)), sizes, strict=True):
            assert mine.sizes_by_field(cells, loads=ld, stores=st_) == size
            assert mine.footprint_size(cells, loads=ld, stores=st_) == \
                enumerated.footprint_size(cells, loads=ld, stores=st_) == sum(size)
