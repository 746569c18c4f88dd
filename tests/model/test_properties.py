"""Property-based comparison of warpspeed.estimate with the brute-force twin (tests/bruteforce.py).

Random affine stencils (1-3 fields, offsets within a range r, 4 or 8 B elements, odd alignments and
row pitches, tuple or linear accesses, occasional x strides and transposed fields), random blocks,
foldings, domains, register counts and small SM counts (so that the wave is a middle part of the grid and
the layer sets are non-empty). Every quantity of the volume model must match exactly, except the known,
reported deviations of ``bruteforce.known_deviations``, which are held to their documented bound.
"""

from __future__ import annotations

from bruteforce import brute_force, compare, from_estimate, known_deviations, miss_share_of
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from kernel_strategies import EXAMPLES, PROFILE, box_kernels, population_kernels, stencil_kernels

import warpspeed
from warpspeed.model.launch import LaunchError, make_launch

A100 = warpspeed.device("A100-SXM4-40GB")
H100 = warpspeed.device("H100-SXM5-80GB")  # the L1 line rule (A100: the pairing rule)

@st.composite
def configurations(draw):
    bx = draw(st.sampled_from([1, 2, 3, 4, 8, 16, 24, 32, 33, 64, 128]))
    by = draw(st.sampled_from([1, 2, 3, 4, 8]))
    bz = draw(st.sampled_from([1, 2, 4]))
    if bx * by * bz > 1024:
        bz = 1
    if bx * by * bz > 1024:
        by = 1
    folding = (draw(st.sampled_from([1, 1, 2])), draw(st.sampled_from([1, 1, 2, 3])),
               draw(st.sampled_from([1, 1, 2])))
    sm_count = draw(st.integers(1, 4)) * draw(st.sampled_from([1, -1]))  # negative: the same on the H100
    return (bx, by, bz), folding, sm_count


def _compare(spec, block, folding, sm_count):
    kernel = warpspeed.kernel_from_dict(spec)
    dev = (A100 if sm_count > 0 else H100).with_overrides(sm_count=abs(sm_count))
    try:
        make_launch(kernel, dev, block, folding)
    except LaunchError:
        assume(False)  # e.g. too many registers for the block: nothing to compare
    e = warpspeed.estimate(kernel, dev, block, folding)
    bf = brute_force(kernel, dev, block, folding, miss_share=miss_share_of(e))
    est = from_estimate(e)
    bad = compare(bf, est)
    assert not bad, f"estimate differs from brute force (brute_force, estimate): {bad}"
    return bf


@PROFILE
@given(spec=stencil_kernels(), config=configurations())
def test_random_stencils_match_brute_force(spec, config):
    block, folding, sm_count = config
    _compare(spec, block, folding, sm_count)


@PROFILE
@given(spec=stencil_kernels(max_domain=(40, 24, 16), dims=3), bx=st.sampled_from([4, 8, 16, 32]),
       by=st.sampled_from([1, 2, 4]), bz=st.sampled_from([1, 2]), folding=st.sampled_from(
           [(1, 1, 1), (1, 2, 1), (1, 1, 2)]), sm_count=st.integers(1, 2))
def test_layer_sets_in_3d_grids_match_brute_force(spec, bx, by, bz, folding, sm_count):
    """3D domains with small blocks: several block rows and planes, so Ly and Lz are mostly non-empty."""
    _compare(spec, (bx, by, bz), folding, sm_count)


@PROFILE
@given(spec=stencil_kernels(max_domain=(40, 24, 16), aligned=True), config=configurations())
def test_line_aligned_fields_match_brute_force_exactly(spec, config):
    """Rows that start on 128 B lines: allocation volumes are exact too (no known-deviation bound)."""
    bf = _compare(spec, *config)
    assert not known_deviations(bf)


@PROFILE
@given(spec=population_kernels(), config=configurations())
def test_population_fields_match_brute_force(spec, config):
    """4-D fields whose accesses split into several disjoint access groups (counted group by group)."""
    _compare(spec, *config)


@settings(PROFILE, max_examples=EXAMPLES or 80)
@given(spec=population_kernels(aos=True), config=configurations())
def test_array_of_structures_populations_match_brute_force(spec, config):
    """Populations of a cell side by side: row phases that depend on x, y and z together."""
    _compare(spec, *config)


@PROFILE
@given(spec=box_kernels(), config=configurations())
def test_box_stencils_with_diagonal_neighbours_match_brute_force(spec, config):
    """Diagonal neighbours (27-point boxes and parts of them with a corner): a warp's rows and planes, the
    L1 line rule's lines and the L2 stages' volumes are what the brute force counts."""
    _compare(spec, *config)
