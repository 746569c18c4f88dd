"""The blocks' lane counts from one block's offsets, shifted (shifted_lanes), against the lanes listed and sorted
one by one (footprint.lane_counts and count_full_sectors, the reference), and the estimates of array-of-structures
kernels, which the block stage counts that way, against the reference path."""

from __future__ import annotations

import math

import numpy as np
import pytest
from footprint_checks import assert_estimate_is_the_reference
from hypothesis import assume, given
from hypothesis import strategies as st
from kernel_strategies import PROFILE, population_kernels, stencil_kernels

import warpspeed
from warpspeed.model.footprint import (
    _dense_ranks,
    affine_warp_patterns,
    block_addresses,
    block_classes,
    count_full_sectors,
    folded_instructions,
    lane_counts,
    warp_patterns,
)
from warpspeed.model.launch import LaunchError, make_launch
from warpspeed.model.shifted_lanes import shifted_lanes

H100 = warpspeed.device("H100-SXM5-80GB")


@st.composite
def aos_kernels(draw):
    """Array-of-structures kernels: fields of 1-6 components (component fastest, 4 or 8 B, any offset, a halo of
    0-2 cells), each access a few components of a cell a few cells from the thread's."""
    domain = (draw(st.integers(1, 24)), draw(st.integers(1, 8)), draw(st.integers(1, 5)))
    halo = draw(st.integers(0, 2))
    fields = []
    for j in range(draw(st.integers(1, 2))):
        comps = draw(st.integers(1, 6))
        shape = [comps, domain[0] + 2 * halo + draw(st.integers(0, 3)), domain[1] + 2 * halo, domain[2] + 2 * halo]
        cell = st.tuples(*(st.integers(-halo, halo) for _ in range(3)))

        def access(o, q):
            return [str(q), *(f"{t}+{halo + d}" for t, d in zip(("tidx", "tidy", "tidz"), o, strict=True))]

        loads = [access(o, q) for o in draw(st.lists(cell, max_size=3, unique=True))
                 for q in draw(st.lists(st.integers(0, comps - 1), min_size=1, max_size=comps, unique=True))]
        stores = [access((0, 0, 0), q) for q in draw(st.lists(st.integers(0, comps - 1), max_size=comps, unique=True))]
        fields.append({"name": f"f{j}", "element_bytes": draw(st.sampled_from([4, 8])), "shape": shape,
                       "offset": draw(st.integers(0, 40)), "loads": loads, "stores": stores})
    if not any(f["loads"] or f["stores"] for f in fields):
        fields[0]["loads"] = [[str(0), f"tidx+{halo}", f"tidy+{halo}", f"tidz+{halo}"]]
    return {"name": "aos", "precision": "fp64", "flops_per_lup": 1, "domain": list(domain), "field": fields,
            "registers": 32}


KERNELS = st.one_of(aos_kernels(), population_kernels(aos=True), stencil_kernels(max_domain=(40, 16, 8)))
BLOCKS = st.sampled_from([(32, 2, 1), (8, 4, 2), (4, 4, 4), (64, 1, 1), (1, 8, 4), (3, 5, 2), (48, 1, 1), (2, 2, 2)])


def _wave_lanes(spec, block, folding, data):
    """The kernel, launch, folded instructions, wave block coordinates and listed addresses of a drawn case, and a
    random subset of the active lanes (all of them in half the draws; some blocks with none)."""
    k = warpspeed.kernel_from_dict(spec)
    try:
        launch = make_launch(k, H100, block, folding, registers=32)
    except LaunchError:
        assume(False)
    instrs = folded_instructions(k, folding)
    coords = launch.wave_block_coords()
    ba = block_addresses(launch, instrs, coords)
    share = data.draw(st.sampled_from([1.0, 1.0, 0.7, 0.2]))
    active = ba.active & (np.random.default_rng(data.draw(st.integers(0, 2**32))).random(ba.active.shape) < share)
    return k, launch, instrs, coords, ba, active


@PROFILE
@given(spec=KERNELS, block=BLOCKS, folding=st.sampled_from([(1, 1, 1), (1, 2, 1), (2, 1, 1)]),
       granules=st.sampled_from([(32, 128), (32, 32), (64, 128), (16, 64)]), data=st.data())
def test_shifted_counts_equal_the_listed_lanes(spec, block, folding, granules, data):
    """Every block of the wave (not only one per class) and a random subset of its lanes (some blocks with none):
    distinct sectors, lines, addresses, runs and full sectors of each field's loads and stores are those of the
    lanes listed and sorted, at sector and line sizes that divide the modulus."""
    k, launch, instrs, coords, ba, active = _wave_lanes(spec, block, folding, data)
    sector, line = granules
    modulus = math.lcm(sector, line) * data.draw(st.sampled_from([1, 2, 4]))
    shifted = shifted_lanes(launch, instrs, coords, active, modulus)
    assert shifted is not None
    n = coords.shape[0]
    for fi, fld in enumerate(k.fields):
        for store in (False, True):
            sel = np.array([ins.field == fi and ins.store == store for ins in instrs])
            if not sel.any() or not shifted.serves([sel]):
                continue
            addresses, act = ba.addresses[:, sel, :].reshape(n, -1), active[:, sel, :].reshape(n, -1)
            eb = fld.element_bytes
            got = shifted.counts(sel, eb, sector, line)
            for a, b in zip(got, lane_counts(addresses, act, eb, sector, line), strict=True):
                assert np.array_equal(a, b)
            assert np.array_equal(shifted.full_sectors(sel, eb, sector), count_full_sectors(addresses, act, eb, sector))


@PROFILE
@given(spec=KERNELS, block=BLOCKS, folding=st.sampled_from([(1, 1, 1), (1, 2, 1), (2, 1, 1)]),
       warp_size=st.sampled_from([32, 16, 8]), data=st.data())
def test_affine_warp_patterns_are_those_of_the_listed_lanes(spec, block, folding, warp_size, data):
    """The warp patterns from the lanes' layouts (affine_warp_patterns: every lane active, keys ranked without a
    sort, or some lanes off, keys sorted) give every warp instruction of every block of the wave the lane offsets
    and kind that the patterns of its listed addresses (warp_patterns, the reference) give it."""
    k, launch, instrs, coords, ba, active = _wave_lanes(spec, block, folding, data)
    modulus = 128 * data.draw(st.sampled_from([1, 2]))
    fast = affine_warp_patterns(launch, instrs, coords, active, warp_size, modulus)
    assert fast is not None
    reference = warp_patterns(type(ba)(ba.addresses, active, ba.valid_cells), instrs, warp_size, modulus)
    assert np.array_equal(fast.gather(fast.offsets), reference.gather(reference.offsets))
    assert np.array_equal(fast.gather(fast.kinds), reference.gather(reference.kinds))


@PROFILE
@given(block=st.sampled_from([(32, 1, 1), (8, 4, 1), (4, 2, 2), (16, 2, 2), (2, 2, 8), (1, 4, 8)]),
       blocks=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)), comps=st.integers(1, 6),
       element_bytes=st.sampled_from([4, 8]), offset=st.integers(0, 9), warp_size=st.sampled_from([32, 16]),
       data=st.data())
def test_whole_blocks_warp_patterns_are_those_of_the_listed_lanes(block, blocks, comps, element_bytes, offset,
                                                                 warp_size, data):
    """Blocks that tile the domain, every lane active: one set of lanes per warp, so the keys are ranked by
    marking them (not sorted); the patterns are still those of the listed addresses."""
    domain = [b * n for b, n in zip(block, blocks, strict=True)]
    cell = st.tuples(*(st.integers(-1, 1) for _ in range(3)))
    loads = [[str(q), *(f"{t}+{1 + d}" for t, d in zip(("tidx", "tidy", "tidz"), o, strict=True))]
             for o in data.draw(st.lists(cell, min_size=1, max_size=3, unique=True))
             for q in data.draw(st.lists(st.integers(0, comps - 1), min_size=1, max_size=comps, unique=True))]
    k = warpspeed.kernel_from_dict({
        "name": "whole", "precision": "fp64", "flops_per_lup": 1, "domain": domain,
        "field": [{"name": "f", "element_bytes": element_bytes, "shape": [comps, *(n + 2 for n in domain)],
                   "offset": offset, "loads": loads, "stores": [[str(q), "tidx+1", "tidy+1", "tidz+1"]
                                                                 for q in range(comps)]}]})
    launch = make_launch(k, H100, block, registers=32)
    instrs = folded_instructions(k, (1, 1, 1))
    coords = launch.wave_block_coords()
    ba = block_addresses(launch, instrs, coords)
    assert ba.active.all()
    fast = affine_warp_patterns(launch, instrs, coords, ba.active, warp_size, 128)
    reference = warp_patterns(ba, instrs, warp_size, 128)
    assert fast is not None
    assert np.array_equal(fast.gather(fast.offsets), reference.gather(reference.offsets))
    assert np.array_equal(fast.gather(fast.kinds), reference.gather(reference.kinds))


@given(values=st.lists(st.integers(0, 300), min_size=1, max_size=200))
def test_dense_ranks_are_the_inverse_of_unique(values):
    """Ranking the values present by marking them gives np.unique's inverse (the keys of the warp patterns)."""
    v = np.array(values, dtype=np.int64)
    assert np.array_equal(_dense_ranks(v, 301), np.unique(v, return_inverse=True)[1])


def test_one_cell_of_three_components_by_hand():
    """Four threads along x, each loading and storing the 3 components (8 B) of its cell: 96 contiguous bytes.
    A block starting on a line: 3 sectors, 1 line, 12 addresses, 1 run, 3 full sectors. The block starting 4 cells
    further is shifted by 96 B (mod 128: phase 96): bytes 96-191 reach 3 sectors, 2 lines, one run, 3 full sectors;
    8 B further than a line (an offset of one element): 4 sectors of which 2 full."""
    def counts(offset: int, block_x: int) -> tuple:
        k = warpspeed.kernel_from_dict({
            "name": "aos3", "precision": "fp64", "flops_per_lup": 1, "domain": [8, 1, 1],
            "field": [{"name": "f", "element_bytes": 8, "shape": [3, 8, 1, 1], "offset": offset,
                       "loads": [[str(q), "tidx", "tidy", "tidz"] for q in range(3)],
                       "stores": [[str(q), "tidx", "tidy", "tidz"] for q in range(3)]}]})
        launch = make_launch(k, H100, (4, 1, 1), registers=32)
        instrs = folded_instructions(k, (1, 1, 1))
        coords = np.array([[block_x, 0, 0]])
        shifted = shifted_lanes(launch, instrs, coords, block_addresses(launch, instrs, coords).active, 128)
        loads = np.array([not ins.store for ins in instrs])
        return (tuple(int(c[0]) for c in shifted.counts(loads, 8, 32, 128)),
                int(shifted.full_sectors(~loads, 8, 32)[0]))

    assert counts(0, 0) == ((3, 1, 12, 1), 3)
    assert counts(0, 1) == ((3, 2, 12, 1), 3)
    assert counts(1, 0) == ((4, 1, 12, 1), 2)


def test_instructions_of_two_slopes_are_not_served():
    """A field read along x and along y (a transposed access) has two slopes: its blocks' shifts differ by
    instruction, so the block stage counts it lane by lane."""
    k = warpspeed.kernel_from_dict({
        "name": "t", "precision": "fp64", "flops_per_lup": 1, "domain": [16, 16, 1],
        "field": [{"name": "a", "element_bytes": 8, "shape": [16, 16], "loads": [["tidx", "tidy"], ["tidy", "tidx"]],
                   "stores": []}]})
    launch = make_launch(k, H100, (8, 8, 1), registers=32)
    instrs = folded_instructions(k, (1, 1, 1))
    classes = block_classes(k, launch, instrs)
    shifted = shifted_lanes(launch, instrs, classes.coords,
                            block_addresses(launch, instrs, classes.coords).active, 128)
    assert shifted is not None and not shifted.serves([np.ones(len(instrs), dtype=bool)])


@PROFILE
@given(spec=st.one_of(aos_kernels(), population_kernels(aos=True)), block=BLOCKS,
       folding=st.sampled_from([(1, 1, 1), (1, 2, 1), (2, 1, 2)]),
       device=st.sampled_from(["H100-SXM5-80GB", "A100-SXM4-40GB", "MI300X"]))
def test_array_of_structures_estimates_equal_the_reference(spec, block, folding, device):
    """The default path of an array-of-structures kernel (warp patterns from lane layouts, block footprints from
    shifted offsets) and the reference (every lane listed and sorted, the wave counted by ISL) give the same
    estimate and bounds, to the last byte: 32- and 64-lane warps, foldings, blocks wider than the domain."""
    assert_estimate_is_the_reference(spec, block, folding, device)


@pytest.mark.parametrize("name", ["d3q19-srt:streaming=pull,layout=zyxf",
                                  "d3q19-srt:streaming=esotwist,timestep=odd,layout=zyxf"])
def test_d3q19_arrays_of_structures_equal_the_reference(name):
    """Catalog AoS kernels at a small domain, blocks whole, wider than the domain and of odd extents."""
    pytest.importorskip("lbmpy")
    k = warpspeed.find_kernel(name).with_domain((24, 12, 8))
    for block in [(32, 4, 2), (64, 1, 1), (3, 5, 7), (1, 8, 16)]:
        fast = warpspeed.estimate(k, H100, block, registers=64)
        assert fast.to_dict() == warpspeed.estimate(k, H100, block, registers=64, counter="isl").to_dict()
