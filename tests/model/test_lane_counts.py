"""The block counts of lanes from one sort (lane_counts) are the counts of a sort each."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from warpspeed.model.footprint import count_distinct, count_runs, lane_counts


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.integers(1, 70), st.sampled_from([4, 8, 16]), st.sampled_from([32, 64]),
       st.integers(0, 2**32), st.integers(1, 400))
def test_lane_counts_from_one_sort_equal_a_sort_each(blocks, lanes, element_bytes, sector_bytes, seed, spread):
    """Distinct sectors, lines (4 sectors) and addresses, and the runs, of random active lanes (some blocks with
    none active) equal count_distinct's and count_runs'."""
    rng = np.random.default_rng(seed)
    addresses = rng.integers(0, spread, size=(blocks, lanes)) * element_bytes
    active = rng.random((blocks, lanes)) < rng.random()
    line_bytes = 4 * sector_bytes
    sectors, lines, distinct, runs = lane_counts(addresses, active, element_bytes, sector_bytes, line_bytes)
    assert np.array_equal(sectors, count_distinct(addresses // sector_bytes, active))
    assert np.array_equal(lines, count_distinct(addresses // line_bytes, active))
    assert np.array_equal(distinct, count_distinct(addresses, active))
    assert np.array_equal(runs, count_runs(addresses, active, element_bytes, sector_bytes))
