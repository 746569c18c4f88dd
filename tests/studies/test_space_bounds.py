"""Block-shape enumeration: the same shapes as the cartesian product it replaced, at a cost bounded by the
thread counts asked for, never by the device's per-dimension maxima."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpspeed.errors import InputError
from warpspeed.studies.space import block_shapes


def product_shapes(threads, max_dims, x=None, y=None, z=None, warp_multiple=False):
    """The enumeration as it was: every power of two (or given extent) up to each maximum, all combinations."""
    axes = []
    for extents, m in zip((x, y, z), max_dims, strict=True):
        vals = [1 << i for i in range(m.bit_length()) if 1 << i <= m] if extents is None else sorted(set(extents))
        axes.append([v for v in vals if v <= m])
    return sorted({s for s in itertools.product(*axes)
                   if s[0] * s[1] * s[2] in set(threads) and (not warp_multiple or s[0] * s[1] * s[2] % 32 == 0)})


@settings(max_examples=200, deadline=None)
@given(threads=st.lists(st.integers(0, 12).map(lambda e: 1 << e), min_size=1, max_size=4),
       max_dims=st.tuples(*[st.integers(1, 4096)] * 3), warp_multiple=st.booleans(),
       x=st.none() | st.lists(st.integers(1, 300), min_size=1, max_size=6))
def test_the_shapes_are_the_products(threads, max_dims, warp_multiple, x):
    assert block_shapes(threads, max_dims=max_dims, x=x, warp_multiple=warp_multiple) == product_shapes(
        threads, max_dims, x=x, warp_multiple=warp_multiple)


def test_huge_device_maxima_cost_no_more_than_the_thread_counts():
    """max_block_dims=1e120 (an override) enumerated 400^3 combinations; now the extents stop at 1024."""
    shapes = block_shapes((1024,), max_dims=(10**120,) * 3)
    assert len(shapes) == 66 and max(max(s) for s in shapes) == 1024  # C(12, 2) ways to split 2^10 in three
    assert len(block_shapes((1 << 200,), max_dims=(10**4000,) * 3)) == 201 * 202 // 2


def test_an_odd_thread_count_points_to_explicit_blocks_not_a_command_flag():
    with pytest.raises(InputError, match=r"given explicitly \(blocks=\[\(X, Y, Z\)\]\) or estimated alone") as err:
        block_shapes((100,))
    assert "--" not in str(err.value)  # the model's messages name no command-line flag
