"""Shared checks of the footprint counters (test_enumerated_volumes, test_range_volumes): a random kernel's
launch with block-id ranges, one counter's footprints, counts and set operations against a reference's,
and a whole estimate against the reference path's."""

from __future__ import annotations

from hypothesis import assume
from hypothesis import strategies as st

import warpspeed
from warpspeed.model.cells import cell_set
from warpspeed.model.launch import LaunchError, make_launch

H100 = warpspeed.device("H100-SXM5-80GB")
# block-id ranges as thousandths of the grid: integers, since a library loaded by an earlier test may switch
# the process to flush subnormal floats to zero, which hypothesis's float strategies refuse
PERMILLE = st.integers(0, 1000)
FRACTIONS = st.tuples(st.tuples(PERMILLE, PERMILLE), st.tuples(PERMILLE, PERMILLE))


def launch_with_ranges(spec, block, fractions):
    """The kernel, its launch on the H100 and the block-id ranges (thousandths of the grid, sorted)."""
    kernel = warpspeed.kernel_from_dict(spec)
    try:
        launch = make_launch(kernel, H100, block)
    except LaunchError:
        assume(False)
    n = launch.grid[0] * launch.grid[1] * launch.grid[2]
    return kernel, launch, [sorted((u * n // 1000, v * n // 1000)) for u, v in fractions]


def assert_same_footprints(counter, reference, launch, id_ranges):
    """``counter`` counts what ``reference`` counts: each range's footprints per field (loads, stores, both)
    and sizes, and the intersection and difference of the two ranges' load footprints. Returns the two load
    footprints of each (for further checks)."""
    sets = []
    for lo, hi in id_ranges:
        cells = cell_set(launch, lo, hi)
        for loads, stores in ((True, False), (False, True), (True, True)):
            c, r = counter.footprint(cells, loads=loads, stores=stores), reference.footprint(cells, loads=loads,
                                                                                              stores=stores)
            assert counter.count_by_field(c) == reference.count_by_field(r), (lo, hi, loads, stores)
            assert counter.footprint_size(cells, loads=loads, stores=stores) == r.size()
        sets.append((c, r))
    (ca, ra), (cb, rb) = sets
    assert counter.count_by_field(ca.intersect(cb)) == reference.count_by_field(ra.intersect(rb))
    assert counter.count_by_field(ca.subtract(cb)) == reference.count_by_field(ra.subtract(rb))
    for (lo, hi), c, r in ((id_ranges[0], cb, rb), (id_ranges[1], ca, ra)):  # one range's loads met by the other's
        cells = cell_set(launch, lo, hi)
        assert counter.count_by_field(counter.meet(cells, c)) == \
            reference.count_by_field(reference.footprint(cells).intersect(r))
    return sets


def assert_estimate_is_the_reference(spec, block, folding, device):
    """The default path's estimate of a random kernel (skipped where the block cannot launch) equals, to the last
    byte of its JSON, the reference path's: every lane listed, the wave counted by ISL (``counter="isl"``)."""
    k = warpspeed.kernel_from_dict(spec)
    try:
        fast = warpspeed.estimate(k, device, block, folding)
    except LaunchError:
        assume(False)
    assert fast.to_dict() == warpspeed.estimate(k, device, block, folding, counter="isl").to_dict()
