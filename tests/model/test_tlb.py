"""The TLB-page limiter (warpspeed.model.tlb): off by default, on as data for a device that gives its keys."""

import math

import pytest

from warpspeed.application.estimating import estimate
from warpspeed.device import TLB_KEYS, device, device_ids
from warpspeed.errors import InputError
from warpspeed.model.roofline import LIMITERS, LIMITS

H100 = device("H100-SXM5-80GB")
TLB = dict(tlb_page="4KiB", tlb_reach="1MiB", tlb_walk_rate="1GHz")


def test_no_shipped_device_has_it_and_estimates_do_not_show_it():
    assert all(device(d).tlb_page_bytes is None for d in device_ids())
    e = estimate("copy", H100, (256, 1, 1), domain=(1 << 22, 1, 1))
    assert tuple(e.limiters_GLup_s) == LIMITERS and "TLB" not in e.performance.limits_GLup_s
    assert [lim.name for lim in LIMITS] == ["FP", "L1", "L2", "MSC", "DRAM", "TLB"]  # MSC, TLB: only where given


def test_a_wave_beyond_the_reach_walks_every_page_it_touches():
    """copy, fp64, 1D: a wave of W blocks of 256 cells moves 2 x 8 x 256 W bytes in page-aligned runs, so
    it walks 2 x 2048 W / 4096 pages for 256 W lups: 1/256 page per lup, 256 GLup/s at one walk per ns."""
    dev = H100.with_overrides(**TLB)
    e = estimate("copy", dev, (256, 1, 1), domain=(1 << 22, 1, 1))
    pages = 2 * 8 * 256 * e.wave_blocks / 4096
    assert pages * 4096 > dev.tlb_reach_bytes
    assert e.limiters_GLup_s["TLB"] == pytest.approx(1.0 / (pages / (256 * e.wave_blocks)))
    assert e.limiters_GLup_s["TLB"] == pytest.approx(256.0)
    # adding the limiter changes no other number
    plain = estimate("copy", H100, (256, 1, 1), domain=(1 << 22, 1, 1))
    assert {k: e.limiters_GLup_s[k] for k in LIMITERS} == dict(plain.limiters_GLup_s)
    assert e.volumes_B_per_lup == plain.volumes_B_per_lup
    # the latency model adds its time: a slow walker binds and costs performance
    slow = estimate("copy", H100.with_overrides(**{**TLB, "tlb_walk_rate": "0.1GHz"}), (256, 1, 1),
                    domain=(1 << 22, 1, 1))
    assert slow.limiter == "TLB" and slow.performance_GLup_s < plain.performance_GLup_s
    assert slow.performance_GLup_s <= slow.limiters_GLup_s["TLB"] == pytest.approx(25.6)
    roof = estimate("copy", slow_dev := H100.with_overrides(**{**TLB, "tlb_walk_rate": "0.1GHz"}), (256, 1, 1),
                    domain=(1 << 22, 1, 1), model="roofline")
    assert roof.limiter == "TLB" and roof.performance_GLup_s == pytest.approx(25.6)
    assert slow_dev.sources["tlb_walk_rate"].startswith("override")


def test_pages_within_the_reach_are_kept_and_cost_nothing():
    dev = H100.with_overrides(**{**TLB, "tlb_reach": "1GiB"})
    e = estimate("copy", dev, (256, 1, 1), domain=(1 << 22, 1, 1))
    assert e.limiters_GLup_s["TLB"] == math.inf and e.to_dict()["limiters_GLup_s"]["TLB"] is None


def test_pages_are_counted_over_every_field_like_a_brute_force_count():
    """A 3D stencil: the distinct 64 KiB pages of the wave's loads and stores, from its cells' addresses one
    by one (tests/bruteforce.py), are what the limiter counts."""
    from bruteforce import block_cells, cell_keys

    from warpspeed.application.resolve import resolve_kernel
    from warpspeed.model.analysis import shared_analysis
    from warpspeed.model.launch import make_launch
    from warpspeed.model.tlb import wave_pages
    k = resolve_kernel("star3d-r1", (64, 32, 16))
    dev = H100.with_overrides(tlb_page="64KiB", tlb_reach="64KiB", tlb_walk_rate="1GHz")
    launch = make_launch(k, dev, (16, 4, 2), None, None)
    counted = wave_pages(launch, shared_analysis(k).footprints(65536))
    keys = set()
    for b in range(launch.wave_start, launch.wave_start + launch.wave_blocks):
        keys |= cell_keys(k, block_cells(b, launch.grid, launch.cells_per_block, k.domain), 65536, True, True)
    assert counted == len(keys) > 1


def test_a_device_with_some_of_the_keys_is_refused_by_name():
    with pytest.raises(InputError, match="needs all of tlb_page, tlb_reach, tlb_walk_rate"):
        H100.with_overrides(tlb_page="2MiB")
    on = H100.with_overrides(**TLB).to_dict()
    assert (on["tlb_page_bytes"], on["tlb_reach_bytes"], on["tlb_walks_per_ns"]) == (4096, 1 << 20, 1.0)
    assert all(on["sources"][k].startswith("override") for k in TLB_KEYS)
    assert H100.to_dict()["tlb_page_bytes"] is None
