"""The model stages one by one (l2.block_traffic, dram.layer_ranges, dram.wave_traffic) and the footprint
counter interface (counters): hand-computed cases, properties, and the counters against each other."""

from __future__ import annotations

import pickle

import pytest
from footprint_checks import assert_estimate_is_the_reference
from hypothesis import assume, given
from hypothesis import strategies as st
from kernel_strategies import PROFILE, stencil_kernels

import warpspeed
from warpspeed.errors import InputError
from warpspeed.model.counters import COUNTERS, choose_counter, counter_names, footprint_counter
from warpspeed.model.dram import layer_ranges, wave_traffic
from warpspeed.model.footprint import BlockCounts, StoreSectors
from warpspeed.model.isl_volumes import Footprints
from warpspeed.model.l2 import block_traffic
from warpspeed.model.launch import LaunchError, make_launch
from warpspeed.model.line_volumes import applies as lines_apply
from warpspeed.model.range_volumes import applies

H100 = warpspeed.device("H100-SXM5-80GB")


def test_block_traffic_by_hand():
    """100 valid lups, 50 warp load sectors, block footprints of 20 + 5 sectors: the redundant 25 sectors
    hit in the L1 at the curve's rate of the oversubscription of the resident blocks' lines."""
    k = warpspeed.find_kernel("star3d-r4")
    launch = make_launch(k, H100, (32, 4, 2), registers=32)
    counts = BlockCounts(valid_lups=100, warp_load_sectors=50, warp_store_sectors=7, block_load_sectors=(20, 5),
                         block_load_lines=(30, 10), wave_blocks=4)
    bt = block_traffic(k, H100, launch, counts)
    bps = launch.occupancy.blocks_per_sm
    o = bps * 40 * 128 / 4 / (H100.l1_size_bytes - bps * H100.shared_reserved_per_block_bytes)
    hit = H100.hit_rates.l1(o)
    assert (bt.l1_load, bt.l2_load_compulsory, bt.l2_store) == (16.0, 8.0, 7 * 32 / 100)
    assert bt.field_l2_load_compulsory == (20 * 32 / 100, 5 * 32 / 100)
    assert bt.l1_capacity.oversubscription == pytest.approx(o)
    assert bt.l2_load == pytest.approx(8.0 + 8.0 * (1 - hit))
    assert 0 < hit < 1


def test_layer_ranges_by_hand():
    # grid 4 x 3 x 5 (12 blocks per plane); a wave of 6 blocks from block 14 (plane 1, rows 0-1)
    (ya, yb), (za, zb) = layer_ranges((4, 3, 5), 14, 6)
    assert (ya, yb) == (12, 14)  # 10, 11: plane 0's last row, whose next row is in plane 1: not a y-layer
    assert (za, zb) == (2, 8)  # one plane (12 blocks) before 14..19


@given(st.tuples(st.integers(1, 9), st.integers(1, 9), st.integers(1, 9)), st.data())
def test_layer_blocks_are_one_row_or_plane_before_a_wave_block(grid, data):
    gx, gy, gz = grid
    n = gx * gy * gz
    start = data.draw(st.integers(0, n - 1))
    count = data.draw(st.integers(1, n - start))
    (ya, yb), (za, zb) = layer_ranges(grid, start, count)
    wave = range(start, start + count)
    # sound: every layer block lies before the wave, one row (plane) before a wave block
    assert all(b < start and b + gx in wave for b in range(ya, yb))
    # complete: every such block that is not in a plane's last row (whose next row is the next plane's)
    assert {b for b in range(start) if b + gx in wave and (b // gx) % gy != gy - 1} <= set(range(ya, yb))
    assert set(range(za, zb)) == {b for b in range(start) if b + gx * gy in wave}


def test_counter_names_and_a_clear_error():
    assert counter_names() == ["auto", "isl", "enumerated", "ranges", "lines"]
    with pytest.raises(InputError,
                       match=r"unknown footprint counter 'fast': valid are auto, isl, enumerated, ranges, lines"):
        warpspeed.estimate("star3d-r4", H100, (32, 4, 2), domain=(64, 32, 16), counter="fast")
    k = warpspeed.find_kernel("star3d-r4")
    assert isinstance(footprint_counter(k, 32), COUNTERS["ranges"])
    assert isinstance(footprint_counter(k, 32, name="isl"), Footprints)
    assert isinstance(footprint_counter(k, 32, name="enumerated"), COUNTERS["enumerated"])
    assert isinstance(footprint_counter(_transposed(), 32), COUNTERS["enumerated"])  # no ranges: the slices


@PROFILE
@given(spec=stencil_kernels(max_domain=(40, 16, 12)),
       block=st.sampled_from([(32, 2, 1), (8, 4, 2), (4, 4, 4), (64, 1, 1), (1, 8, 4)]))
def test_every_counter_gives_the_same_wave_traffic(spec, block):
    """The two counters behind the DRAM stage give the same counts, so the same wave traffic: sectors
    exactly, lines as ISL's cheap count (a line two rows share counts once per row)."""
    k = warpspeed.kernel_from_dict(spec)
    try:
        launch = make_launch(k, H100, block)
    except LaunchError:
        assume(False)
    out = {}
    for name in COUNTERS:
        if name == "ranges" and not (applies(k, 32) and applies(k, 128, exact=False)) or \
                name == "lines" and not (lines_apply(k, 32) and lines_apply(k, 128, exact=False)):
            continue
        sectors, lines = footprint_counter(k, 32, name=name), footprint_counter(k, 128, exact=False, name=name)
        out[name] = wave_traffic(k, H100, launch, sectors, lines, StoreSectors(0, 0), valid_lups=1000)
    i, e = out["isl"], out["enumerated"]
    assert e.dram_load_compulsory == i.dram_load_compulsory
    assert [f.dram_load_compulsory for f in e.fields] == [f.dram_load_compulsory for f in i.fields]
    assert [f.dram_store for f in e.fields] == [f.dram_store for f in i.fields]
    assert e == i and out.get("ranges", i) == i


def test_estimate_with_either_counter_and_auto():
    """The counters are two ways to one result: every number of the estimate is the same."""
    k = warpspeed.find_kernel("star3d-r4").with_domain((256, 64, 64))
    isl_e = warpspeed.estimate(k, H100, (16, 4, 2), counter="isl")
    enum_e = warpspeed.estimate(k, H100, (16, 4, 2), counter="enumerated")
    assert enum_e.layer_z.potential_B_per_lup > 0 and enum_e.partial_stores.allocated_bytes > 0
    assert enum_e.to_dict() == isl_e.to_dict() == warpspeed.estimate(k, H100, (16, 4, 2)).to_dict()
    assert pickle.loads(pickle.dumps(enum_e)) == enum_e


def _transposed(domain=(640, 512, 512)) -> warpspeed.Kernel:
    """star3d-r4's 26 accesses with x and y swapped in the array: 5 KiB per x step, no ranges."""
    star = warpspeed.find_kernel("star3d-r4")
    fields = []
    for f in star.spec["field"]:
        swap = [[a[1], a[0], a[2]] for a in f.get("loads", [])], [[a[1], a[0], a[2]] for a in f.get("stores", [])]
        fields.append(dict(f, shape=[f["shape"][1], f["shape"][0], f["shape"][2]], loads=swap[0], stores=swap[1]))
    return warpspeed.kernel_from_dict(dict(star.spec, name="transposed", field=fields, domain=list(domain)))


def test_auto_takes_the_cheaper_counter():
    """The ranges wherever they apply; else the lines (arrays of structures); else the enumeration wherever its
    slices apply (a transposed stencil at any size); else ISL (quasi-affine indices)."""
    star = warpspeed.find_kernel("star3d-r4")
    assert choose_counter("auto", star, 32) == "ranges"
    assert choose_counter("auto", star, 128, exact=False) == "ranges"
    assert choose_counter("enumerated", star, 32) == "enumerated"
    for big in (_transposed(), _transposed((64, 32, 16))):  # 26 accesses, 640x512x512 and small
        assert choose_counter("auto", big, 32) == "enumerated"
        assert footprint_counter(big, 32).__class__.__name__ == "EnumeratedFootprints"
    half = warpspeed.kernel_from_dict({
        "name": "half", "precision": "fp64", "flops_per_lup": 1, "domain": [64, 64, 64],
        "field": [{"name": "c", "element_bytes": 8, "shape": [40, 66, 66], "loads": [["tidx // 2 + 4", "tidy + 1",
                                                                                     "tidz + 1"]], "stores": []}]})
    assert choose_counter("auto", half, 32) == "isl"
    aos = warpspeed.kernel_from_dict({
        "name": "aos", "precision": "fp64", "flops_per_lup": 1, "domain": [510, 510, 510],
        "field": [{"name": "f", "element_bytes": 8, "shape": [9, 514, 512, 512],
                   "loads": [[str(q), "tidx+1", "tidy+1", "tidz+1"] for q in range(9)], "stores": []}]})
    assert choose_counter("auto", aos, 32) == "lines"  # exact and per row: line by line (ISL is dear)
    assert choose_counter("auto", aos, 32, exact=False) == "lines"


@pytest.mark.parametrize("name", ["d3q19-srt", "d3q15-allen-cahn"])
def test_lbm_estimates_are_the_same_with_either_counter(name):
    """Populations (one slab per population, rows of 66 cells sharing lines): the whole estimate is the same.
    The zyxf layout takes ISL 9-80 s here; test_enumerated_volumes checks it on small AoS kernels."""
    pytest.importorskip("warpspeed_pystencils")
    k = warpspeed.find_kernel(name).with_domain((64, 64, 64))
    for block in ((16, 4, 2), (1, 8, 8)):
        a, b, c = (warpspeed.estimate(k, H100, block, counter=c).to_dict() for c in ("isl", "enumerated", "ranges"))
        assert a == b == c and a["causes"]["layer_z"]["allocated_bytes"] > 0


@PROFILE
@given(spec=stencil_kernels(max_domain=(40, 16, 12)),
       block=st.sampled_from([(32, 2, 1), (8, 4, 2), (4, 4, 4), (64, 1, 1), (1, 8, 4), (48, 1, 1), (3, 5, 2)]),
       folding=st.sampled_from([(1, 1, 1), (1, 2, 1), (2, 1, 2)]),
       device=st.sampled_from(["H100-SXM5-80GB", "A100-SXM4-40GB", "MI300X"]))
def test_the_fast_paths_give_the_reference_estimate(spec, block, folding, device):
    """The default path (warp patterns from lane layouts, block footprints and wave counts by ranges) and the
    reference path (every lane's address listed and sorted, the wave counted by ISL) give the same estimate,
    to the last byte of its JSON: the pairing and the line L1 rule, 32- and 64-lane warps, foldings, blocks
    narrower than a warp or of odd extents."""
    assert_estimate_is_the_reference(spec, block, folding, device)


def test_elements_larger_than_a_sector_are_counted_as_the_lanes_count_them():
    """16 B elements with 8 B sectors (an override): an element is counted in the sector of its first byte by
    every counter, so the default path (which would otherwise count every sector its bytes reach) agrees."""
    k = warpspeed.kernel_from_dict({
        "name": "c16", "precision": "fp64", "flops_per_lup": 1, "domain": [64, 8, 1],
        "field": [{"name": "a", "element_bytes": 16, "shape": [64, 8], "loads": [["tidx", "tidy"]],
                   "stores": [["tidx", "tidy"]]}]})
    d = warpspeed.device("H100-SXM5-80GB", l2_sector="8B", l1_sector="8B")
    fast, ref = (warpspeed.estimate(k, d, (32, 2, 1), counter=c) for c in (None, "isl"))
    assert fast.to_dict() == ref.to_dict() and fast.volumes_B_per_lup["l2_load_compulsory"] == 8.0
    assert not applies(k, 8)
