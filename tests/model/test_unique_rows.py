"""unique_rows is numpy's unique of rows: the same first occurrences, order and inverse, with or without hash
collisions."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpspeed.model import unique_rows as module
from warpspeed.model.unique_rows import unique_rows


def _numpy(rows):
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


@settings(max_examples=60, deadline=None)
@given(width=st.integers(1, 40), n=st.integers(1, 300), kinds=st.integers(1, 12), seed=st.integers(0, 2**31))
def test_the_distinct_rows_are_numpys(width, n, kinds, seed):
    rng = np.random.default_rng(seed)
    patterns = rng.integers(-(2**40), 2**40, size=(kinds, width))
    rows = patterns[rng.integers(0, kinds, n)]
    first, inverse = unique_rows(rows)
    expect_first, expect_inverse = _numpy(rows)
    assert np.array_equal(first, expect_first) and np.array_equal(inverse, expect_inverse)


def test_rows_that_share_a_hash_are_still_told_apart(monkeypatch):
    """With every multiplier 1 the hash is the row sum: permuted rows collide, and the exact grouping decides."""
    monkeypatch.setattr(module, "_MULTIPLIERS", np.ones(64, dtype=np.int64))
    rows = np.array([[1, 2, 3], [3, 2, 1], [1, 2, 3], [2, 2, 2], [0, 0, 6]], dtype=np.int64)
    first, inverse = unique_rows(rows)
    assert np.array_equal(first, [4, 0, 3, 1]) and np.array_equal(inverse, [1, 3, 1, 2, 0])  # numpy's answer


@pytest.mark.parametrize("shape", [(1, 5), (7, 1), (0, 3)])
def test_edge_shapes(shape):
    rows = np.arange(np.prod(shape), dtype=np.int64).reshape(shape) % 3
    first, inverse = unique_rows(rows)
    expect = _numpy(rows)
    assert np.array_equal(first, expect[0]) and np.array_equal(inverse, expect[1])
