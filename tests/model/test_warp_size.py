"""Lanes per warp come from the device (``warp_size``: 32 on NVIDIA, 64 on CDNA), never a hard-coded 32: the L1
rule's cycles per warp-lup and its limit, occupancy, and the latency model's sectors in flight per warp.

The numbers below are worked out by hand for the ``copy`` kernel (one 8 B load and one 8 B store per thread,
consecutive in x) in blocks of 256 x 1 x 1 threads."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warpspeed
from warpspeed.device import device
from warpspeed.model.launch import occupancy

H100 = device("H100-SXM5-80GB")
H100_WAVE64 = H100.with_overrides(warp_size=64)  # a hypothetical NVIDIA GPU with 64 lanes per warp
MI300X = device("MI300X")
A100 = device("A100-SXM4-40GB")
COPY_DOMAIN = (1024, 512, 256)


def copy_estimate(dev):
    return warpspeed.estimate("copy", dev, (256, 1, 1), domain=COPY_DOMAIN)


def test_the_l1_cycles_per_warp_lup_count_the_devices_lanes_per_warp():
    """H100 line rule: 8 B lanes are served 16 per cycle (128 B/cycle), the 16 words of a group fall into 16
    banks and 128 B lines cost nothing beyond the bank cost; every warp costs 4 wavefronts once.
    32 lanes: load 2 + store 2 + 4 = 8 cycles per warp of 32 lups. 64 lanes: 4 + 4 + 4 = 12 per 64 lups."""
    e32, e64 = copy_estimate(H100), copy_estimate(H100_WAVE64)
    assert (H100.l1_wavefronts_per_warp, H100.lsu_bytes_per_cycle(8)) == (4, 128)
    assert e32.l1_cycles_per_warp_lup == 8.0 and e64.l1_cycles_per_warp_lup == 12.0
    # L1 limit = SMs x clock x lanes per warp / cycles per warp-lup: the per-warp cost is shared by twice the lanes
    assert e32.limits_GLup_s["L1"] == pytest.approx(132 * 1.98 * 32 / 8) == 1045.44
    assert e64.limits_GLup_s["L1"] == pytest.approx(132 * 1.98 * 64 / 12) == 1393.92
    assert copy_estimate(H100.with_overrides(warp_size=32)).to_dict()["limiters_GLup_s"] == e32.to_dict()[
        "limiters_GLup_s"]


def test_occupancy_allocates_registers_per_warp_of_the_devices_lanes():
    """256 threads of 36 registers on the H100's 4 x 16384 registers in granules of 256 per warp:
    32 lanes: 8 warps per block, ceil(36 x 32 / 256) x 256 = 1280 registers per warp, 12 warps per quarter,
    48 per SM = 6 blocks. 64 lanes: 4 warps per block, ceil(36 x 64 / 256) x 256 = 2304, 7 per quarter, 28 per
    SM = 7 blocks (the granule is 4 registers per thread instead of 8)."""
    o32, o64 = occupancy(H100, 256, 36), occupancy(H100_WAVE64, 256, 36)
    assert (o32.blocks_per_sm, o32.limited_by) == (6, "registers")
    assert (o64.blocks_per_sm, o64.limited_by) == (7, "registers")
    assert dict(o32.limits)["threads"] == dict(o64.limits)["threads"] == 8  # 64 warps / 8 = 32 warps / 4
    # a 32-thread block fills half a 64-lane warp, which still counts whole: 32 resident warps, 32 blocks
    assert dict(occupancy(H100_WAVE64, 32, 32).limits)["threads"] == 32
    assert dict(occupancy(H100, 32, 32).limits)["threads"] == 64


def test_the_latency_model_counts_sectors_in_flight_per_warp_of_the_devices_lanes():
    """copy moves 0.5 sectors of 32 B per lup to and from the L2: one iteration of a warp moves 0.5 x lanes,
    16 sectors at 32 lanes (below the 21 a warp keeps in flight) and 32 at 64 lanes (capped at 21); 8 blocks per
    SM are 64 warps of 32 lanes or 32 of 64."""
    p32, p64 = copy_estimate(H100).performance.detail, copy_estimate(H100_WAVE64).performance.detail
    assert (p32["warps_per_sm"], p32["sectors_in_flight_per_warp"]) == (64, 16.0)
    assert (p64["warps_per_sm"], p64["sectors_in_flight_per_warp"]) == (32, 21.0)
    assert p64["bytes_in_flight_per_sm"] == 32 * 21 * 32 and p32["bytes_in_flight_per_sm"] == 64 * 16 * 32


def test_mi300x_figures_are_per_64_lane_wavefront():
    """MI300X (pairing rule, 16 banks of 8 B, 128 B/cycle: 16 lanes of 8 B per cycle): a 64-lane wavefront's
    load is 4 groups of 16 consecutive words, 1 cycle each, and so is its store: 8 cycles per 64 lups (4.0 per
    32 lups before the wavefront was counted in its own lanes). The L1 limit is 304 x 2.1 x 64 / 8."""
    e = copy_estimate(MI300X)
    assert MI300X.warp_size == 64 and e.l1_cycles_per_warp_lup == 8.0
    assert e.limits_GLup_s["L1"] == pytest.approx(304 * 2.1 * 64 / 8)
    detail = e.performance.detail
    assert detail["warps_per_sm"] == 32  # 8 blocks (2048 work-items per CU) of 4 wavefronts
    assert detail["sectors_in_flight_per_warp"] == 21.0  # min(21, 0.5 sectors per lup x 64 lanes)
    # waves per SIMD = min(8, 512 // VGPRs in granules of 8): 128 VGPRs -> 4 per SIMD, 16 per CU, 4 blocks of 4
    assert (occupancy(MI300X, 256, 128).blocks_per_sm, occupancy(MI300X, 256, 128).limited_by) == (4, "registers")
    assert occupancy(MI300X, 256, 36).blocks_per_sm == 8  # 5 granules of 8: 12 per SIMD, the 32 waves bind first


@given(kernel=st.sampled_from(["copy", "star3d-r1", "box3d-r1"]),
       shape=st.sampled_from([(64, 1, 1), (64, 2, 2), (128, 1, 2), (32, 2, 4), (16, 4, 4), (8, 8, 4), (256, 2, 2)]))
@settings(max_examples=25, deadline=None)
def test_with_the_pairing_rule_the_l1_limit_does_not_depend_on_the_warp_size(kernel, shape):
    """The pairing rule has no cost per warp: its lane groups (16 lanes of 8 B) are the same whether warps have
    32 or 64 lanes when a block holds whole 64-lane warps, so the cycles per warp-lup double and the L1 limit
    stays exactly the same."""
    a64 = A100.with_overrides(warp_size=64)
    e32 = warpspeed.estimate(kernel, A100, shape, domain=(128, 64, 32))
    e64 = warpspeed.estimate(kernel, a64, shape, domain=(128, 64, 32))
    assert e64.l1_cycles_per_warp_lup == 2 * e32.l1_cycles_per_warp_lup
    assert e64.limits_GLup_s["L1"] == pytest.approx(e32.limits_GLup_s["L1"], rel=1e-12)
