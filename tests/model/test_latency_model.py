"""The latency model (warpspeed.model.latency) on analytic cases, and the model seam around it."""

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warpspeed
from warpspeed.application.estimating import estimate, with_model
from warpspeed.application.projection import project
from warpspeed.device import device
from warpspeed.errors import InputError
from warpspeed.kernel import Flops
from warpspeed.model.footprint import count_runs
from warpspeed.model.latency import OVERLAP_EXPONENT, LatencyModel
from warpspeed.model.performance import MODELS, RooflineModel, Workload, models, performance_model

H100 = device("H100-SXM5-80GB")


def workload(warps=64, run=8192.0, l2_load=8.0, l2_store=8.0, dram_load=8.0, dram_store=8.0, l1_cycles=1e-6,
             lups_per_thread=1, flops=None):
    vol = {"l1_load": l2_load, "l2_load_compulsory": l2_load, "l2_load": l2_load, "l2_store": l2_store,
           "dram_load_compulsory": dram_load, "dram_load": dram_load, "dram_store": dram_store}
    return Workload("fp64", flops or Flops(), l1_cycles, vol, warps, lups_per_thread, run)


def norm(*times):
    return sum(t ** OVERLAP_EXPONENT for t in times) ** (1 / OVERLAP_EXPONENT)


def test_ample_parallelism_and_long_runs_reach_the_dram_roofline():
    """A streaming kernel with every warp slot filled: the latency term is small, the DRAM limit binds."""
    w = workload(warps=64, run=1 << 20)
    lat = LatencyModel().predict(w, H100)
    roof = RooflineModel().predict(w, H100)
    assert roof.limiter == lat.limiter == "DRAM"
    assert lat.limits_GLup_s["DRAM"] == pytest.approx(roof.GLup_s, rel=2e-3)  # runs of 1 MiB: almost no run cost
    assert 0.97 * roof.GLup_s < lat.GLup_s <= roof.GLup_s
    # with infinitely many warps the prediction is the 4-norm of the other times
    many = LatencyModel().predict(workload(warps=10**9, run=1e12), H100)
    t = [1 / many.limits_GLup_s[k] for k in ("L1", "L2", "DRAM")]
    assert many.GLup_s == pytest.approx(1 / norm(*t), rel=1e-9)


def test_one_warp_per_sm_is_latency_bound_by_littles_law():
    """One warp keeps 21 sectors in flight (the Hopper fit; one iteration moves 32); 1 lup moves 0.5 + 0.5
    sectors at the DRAM and L2 latency."""
    w = workload(warps=1, l2_load=16.0, l2_store=16.0, dram_load=16.0, dram_store=16.0)
    p = LatencyModel().predict(w, H100)
    assert p.limiter == "latency"
    sectors = (16 + 16) / 32  # L2 load (all from DRAM) and L2 store per lup
    mean_latency_ns = (0.5 * H100.dram_latency_s + 0.5 * H100.l2_latency_s) / sectors * 1e9
    assert H100.sectors_in_flight_per_warp == 21
    lups_per_ns = H100.sm_count * 1 * 21 / (sectors * mean_latency_ns)
    assert p.limits_GLup_s["latency"] == pytest.approx(lups_per_ns)
    assert p.detail["mean_latency_ns"] == pytest.approx(mean_latency_ns)
    assert p.detail["bytes_in_flight_per_sm"] == 21 * 32
    others = [1 / p.limits_GLup_s[k] for k in ("L1", "L2", "DRAM")]
    assert p.GLup_s == pytest.approx(1 / norm(1 / lups_per_ns, *others))
    assert p.GLup_s < 0.2 * RooflineModel().predict(w, H100).GLup_s
    assert any(r.startswith("latency-bound: 1 warps/SM keep 672 B in flight") for r in p.reasons)


def test_a_warp_cannot_keep_more_in_flight_than_one_iteration_moves():
    w = workload(warps=1, l2_load=2.0, l2_store=2.0, dram_load=2.0, dram_store=2.0)  # 4 sectors per iteration
    p = LatencyModel().predict(w, H100)
    assert p.detail["sectors_in_flight_per_warp"] == pytest.approx(4.0)
    assert LatencyModel().predict(workload(warps=1, lups_per_thread=4), H100).detail[
        "sectors_in_flight_per_warp"] == 21


def test_only_warps_with_cells_keep_sectors_in_flight():
    """Half the resident warps without a cell: the latency limit halves, the bandwidth limits stay, and the
    reason names both counts."""
    w = workload(warps=16, l2_load=16.0, l2_store=16.0, dram_load=16.0, dram_store=16.0)
    full = LatencyModel().predict(w, H100)
    half = LatencyModel().predict(replace(w, active_warps_per_sm=8.0), H100)
    assert half.limits_GLup_s["latency"] == pytest.approx(full.limits_GLup_s["latency"] / 2)
    assert {k: v for k, v in half.limits_GLup_s.items() if k != "latency"} == \
        {k: v for k, v in full.limits_GLup_s.items() if k != "latency"}
    assert half.detail["warps_per_sm"] == 16 and half.detail["active_warps_per_sm"] == 8.0
    assert half.detail["bytes_in_flight_per_sm"] == 8 * 21 * 32
    assert full.detail["active_warps_per_sm"] == 16
    assert any(r.startswith("latency-bound: 8 of the 16 resident warps/SM have cells and keep 5.25 KiB in flight")
               for r in half.reasons)


def test_an_estimate_counts_the_warps_of_a_block_wider_than_the_domain_that_have_cells():
    """d3q19-srt (92 registers) in 512x1x1 blocks on a 256-wide domain: 1 block of 16 warps per SM, 8 with
    cells, so half the bytes in flight of 256x2x1 blocks with the same volumes."""
    k = warpspeed.find_kernel("d3q19-srt", domain=(256, 64, 64))
    wide = estimate(k, H100, (512, 1, 1), registers=92)
    tall = estimate(k, H100, (256, 2, 1), registers=92)
    assert wide.performance.detail["warps_per_sm"] == tall.performance.detail["warps_per_sm"] == 16
    assert wide.performance.detail["active_warps_per_sm"] == 8 and tall.performance.detail["active_warps_per_sm"] == 16
    assert wide.performance.detail["bytes_in_flight_per_sm"] == pytest.approx(
        tall.performance.detail["bytes_in_flight_per_sm"] / 2)


@pytest.mark.parametrize("run, overhead", [(8.0, 51), (2048.0, 51), (64.0, 0)])
def test_a_fixed_overhead_per_run_in_bytes_with_exponent_one_is_run_over_run_plus_overhead(run, overhead):
    dev = H100.with_overrides(dram_run_overhead=overhead, dram_run_exponent=1)
    p = LatencyModel().predict(workload(run=run, dram_load=100.0, dram_store=50.0), dev)
    eff = run / (run + overhead)
    assert p.detail["dram_efficiency"] == pytest.approx(eff)
    assert p.limits_GLup_s["DRAM"] == pytest.approx(dev.dram_bw_GB_s * eff / (100.0 + 50.0))


def test_the_run_overhead_is_a_time_so_a_faster_dram_loses_more_bytes_per_run():
    """dram_run_time x dram_bw is the overhead in bytes; loads and stores both stream at the efficiency
    1 / (1 + (overhead / run)^k). Twice the bandwidth: twice the bytes lost per run, so less than twice the
    DRAM limit for short runs, nearly twice for long ones."""
    dev = H100.with_overrides(dram_run_time="0.02ns", dram_run_exponent=0.5)
    assert dev.dram_run_overhead_bytes is None
    overhead = 0.02e-9 * dev.dram_bw_GB_s * 1e9
    for run in (8.0, 64.0, 4096.0):
        p = LatencyModel().predict(workload(run=run, dram_load=100.0, dram_store=50.0), dev)
        eff = 1 / (1 + math.sqrt(overhead / run))
        assert p.detail["dram_efficiency"] == pytest.approx(eff)
        assert p.limits_GLup_s["DRAM"] == pytest.approx(dev.dram_bw_GB_s * eff / 150.0)
    fast = dev.with_overrides(dram_bw=2 * dev.dram_bw_GB_s)
    gain = [LatencyModel().predict(workload(run=r, dram_load=100.0, dram_store=50.0), fast).limits_GLup_s["DRAM"]
            / LatencyModel().predict(workload(run=r, dram_load=100.0, dram_store=50.0), dev).limits_GLup_s["DRAM"]
            for r in (8.0, 1 << 20)]
    assert gain[0] < 1.6 < 1.99 < gain[1] <= 2.0
    # bytes given in the device win over the time; a kernel without loads has no runs to pay for
    both = dev.with_overrides(dram_run_overhead="32B")
    assert LatencyModel().predict(workload(run=32.0), both).detail["dram_efficiency"] == pytest.approx(0.5)
    assert LatencyModel().predict(workload(run=0.0), dev).detail["dram_efficiency"] == 1.0


def test_the_shipped_hopper_efficiency_follows_the_measured_lbm_runs():
    """The fitted run cost on the H100: 8 B runs stream at about a quarter of the copy rate, 2 KiB runs above
    90 % (measured d3q19-srt, 16 warps/SM: 25 % and 86 %, where latency costs the rest)."""
    from warpspeed.model.latency import dram_efficiency, run_overhead_bytes
    o = run_overhead_bytes(H100)
    assert 35 < o < 50
    assert 0.2 < dram_efficiency(8, o, H100.dram_run_exponent) < 0.3
    assert dram_efficiency(2048, o, H100.dram_run_exponent) > 0.9
    h200 = device("H200-SXM-141GB")
    assert run_overhead_bytes(h200) / o == pytest.approx(h200.dram_bw_GB_s / H100.dram_bw_GB_s)


def test_more_latency_or_fewer_sectors_in_flight_is_slower_and_the_overrides_work():
    k = warpspeed.find_kernel("star3d-r4", domain=(256, 128, 128))
    base = estimate(k, H100, (32, 2, 2), registers=128)
    slow = estimate(k, H100.with_overrides(dram_latency="746ns"), (32, 2, 2), registers=128)
    few = estimate(k, H100, (32, 2, 2), registers=128, overrides={"sectors_in_flight_per_warp": 6})
    assert slow.performance_GLup_s < base.performance_GLup_s and few.performance_GLup_s < base.performance_GLup_s
    assert slow.performance.detail["mean_latency_ns"] > base.performance.detail["mean_latency_ns"]
    assert slow.limiters_GLup_s == base.limiters_GLup_s  # the roofline does not see latencies


def test_a_projection_to_more_bandwidth_at_the_same_latency_gains_less_than_the_ratio():
    """A GPU with 2x the DRAM bandwidth but the same latencies no longer promises 2x (8 warps/SM)."""
    fast = H100.with_overrides(dram_bw=2 * H100.dram_bw_GB_s)
    kw = dict(blocks=[(256, 1, 1)], domain=(1 << 24, 1, 1), registers=255, jobs=1)
    roof = project("copy", H100, fast, model="roofline", **kw)
    lat = project("copy", H100, fast, **kw)
    assert roof.source_best.limiter == "DRAM" and roof.speedup == pytest.approx(2.0)
    assert 1.0 < lat.speedup < 1.5
    assert lat.target_best.limiter == "latency"


def test_low_occupancy_estimates_are_latency_bound_and_explain_it():
    e = estimate("star3d-r4", H100, (32, 2, 2), domain=(256, 128, 128), registers=255)
    assert e.model == "latency" and e.limiter == "latency"
    assert e.performance.detail["warps_per_sm"] == e.occupancy.blocks_per_sm * 4
    assert e.performance_GLup_s < min(e.limiters_GLup_s.values())
    assert e.performance.reasons[0].startswith("latency-bound:")
    r = with_model(e, H100, "roofline")
    assert r.model == "roofline" and r.performance_GLup_s == min(r.limiters_GLup_s.values())
    assert r.time_s == pytest.approx(e.time_s * e.performance_GLup_s / r.performance_GLup_s)
    with pytest.raises(InputError, match="device the estimate was made on"):
        with_model(e, "A100-SXM4-40GB", "roofline")


def test_models_are_chosen_by_name_with_clear_errors():
    assert set(MODELS) == {"roofline", "latency"} == set(models())
    assert performance_model(None).name == "latency" and performance_model("Roofline").name == "roofline"
    with pytest.raises(InputError, match="unknown performance model 'ecm'; valid: roofline, latency"):
        estimate("copy", H100, (256, 1, 1), domain=(65536, 1, 1), model="ecm")
    with pytest.raises(InputError, match="a 'name' and a 'predict"):
        performance_model(42)


def test_a_device_without_latency_values_names_them(tmp_path):
    text = (warpspeed.device("H100-SXM5-80GB").file and
            open(warpspeed.device("H100-SXM5-80GB").file).read()).replace('architecture = "hopper"',
                                                                          'architecture = "newarch"')
    curves = "".join(f'\n[hit_rates.{c}]\na = 1.0\nb = 0.01\nc = 3.0\nsource = "assumed: test"\n'
                     for c in ("l1", "l2_y", "l2_z", "l2_store"))
    f = tmp_path / "NEW.toml"
    f.write_text(text.replace('id = "H100-SXM5-80GB"', 'id = "NEW"') + curves)
    dev = device(str(f))
    assert dev.dram_latency_s is None
    assert estimate("copy", dev, (256, 1, 1), domain=(65536, 1, 1), model="roofline").performance_GLup_s > 0
    with pytest.raises(InputError, match=r"lacks l2_latency, dram_latency, sectors_in_flight_per_warp, "
                                         r"dram_run_time \(or dram_run_overhead\), dram_run_exponent, which the "
                                         "latency model needs"):
        estimate("copy", dev, (256, 1, 1), domain=(65536, 1, 1))
    fixed = dev.with_overrides(l2_latency="200ns", dram_latency="400ns", sectors_in_flight_per_warp=8,
                               dram_run_overhead="32B", dram_run_exponent=1)
    assert estimate("copy", fixed, (256, 1, 1), domain=(65536, 1, 1)).performance_GLup_s > 0


def test_load_runs_of_blocks():
    """1-wide blocks of a one-field stencil load runs of one element per row; wide ones whole rows, and rows
    next to each other in memory whose gap leaves no sector untouched are one run."""
    star = warpspeed.find_kernel("star3d-r1", domain=(256, 64, 64))
    narrow = estimate(star, H100, (1, 32, 8)).performance.detail["load_run_bytes"]
    wide_estimate = estimate(star, H100, (256, 1, 4))
    wide = wide_estimate.performance.detail["load_run_bytes"]
    # 1x32x8 block: 32x8 rows with x-1..x+1 (3 elements), 2x8 halo rows in y and 32x2 in z of 1 element
    assert narrow == pytest.approx(8 * (32 * 8 * 3 + 2 * 8 + 32 * 2) / (32 * 8 + 2 * 8 + 32 * 2))
    # 256x1x4 (rows of 258 elements with the ghosts): per z, the y-halo row of 256, the row of 258
    # (x-1..x+256) and the other y-halo row lie back to back, 8 B ghost gaps between them: one run each z
    # (4 runs); the 2 z-halo rows of 256 elements are 2 more
    assert wide == pytest.approx(8 * (4 * 258 + 10 * 256) / 6)
    assert wide_estimate.workload.load_run_bytes == wide


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=1, max_size=40), st.lists(st.booleans(), min_size=40, max_size=40),
       st.sampled_from([1, 4, 8]))
def test_count_runs_matches_a_loop(values, mask, step):
    """A run goes on while no sector between two elements is left untouched: the runs of touched sectors."""
    v = np.array(values, dtype=np.int64) * step
    a = np.array(mask[:len(values)])
    kept = sorted(set(int(x) for x, m in zip(v, a, strict=True) if m))
    touched = {b // 32 for x in kept for b in range(x, x + step)}
    by_sector = sum(1 for s in touched if s - 1 not in touched)
    assert int(count_runs(v[None, :], a[None, :], step, 32)[0]) == by_sector


@pytest.mark.parametrize("raw", ["5", 3e-7, "373"])
def test_latencies_need_a_unit(raw):
    """A bare number would be seconds: 373 means 373 ns to a user, 373 s to the parser."""
    with pytest.raises(InputError, match="dram_latency: give the unit, e.g."):
        H100.with_overrides(dram_latency=raw)
    assert H100.with_overrides(dram_latency="373ns").dram_latency_s == pytest.approx(3.73e-7)


def test_a_grid_smaller_than_one_wave_gets_a_note():
    small = estimate("copy", H100, (256, 1, 1), domain=(65536, 1, 1))
    assert any("the grid has 256 blocks, fewer than the 1056" in n for n in small.notes)
    assert not any("the grid has" in n for n in estimate("copy", H100, (256, 1, 1), domain=(1 << 24, 1, 1)).notes)


def test_a_launch_with_less_work_than_its_launch_gets_a_note():
    """1M cells of copy on the H100: under 6 us at the roofline (measured: 9.5-12.8 us per timed launch, the
    launch itself not modelled); 16M cells: 100 us, no note."""
    short = estimate("copy", H100, (256, 1, 1), domain=(1 << 20, 1, 1))
    work_us = (1 << 20) / min(short.limiters_GLup_s.values()) / 1e3
    assert 5 < work_us < 6
    assert any(n.startswith(f"this launch has {work_us:.3g} us of work at the roofline: launches shorter than 50 us")
               for n in short.notes)
    assert not any("of work at the roofline" in n for n in
                   estimate("copy", H100, (256, 1, 1), domain=(1 << 24, 1, 1)).notes)


def test_l2_requests_carry_one_sector_for_one_cell_wide_blocks_and_four_for_coalesced_ones():
    """Requests per byte from the warps' lines over sectors: a warp of a 1-cell-wide star3d-r1 block touches
    32 lines, one sector each (1/32 request per byte); a coalesced copy warp 2 lines, 8 sectors (1/128)."""
    narrow = estimate("star3d-r1", H100, (1, 16, 16), domain=(256, 256, 64))
    assert narrow.workload.l2_load_requests_per_byte == pytest.approx(1 / 32)
    assert narrow.workload.l2_store_requests_per_byte == pytest.approx(1 / 32)
    wide = estimate("copy", H100, (1024, 1, 1), domain=(1 << 22, 1, 1))
    assert wide.workload.l2_load_requests_per_byte == pytest.approx(1 / 128)
    assert wide.workload.l2_store_requests_per_byte == pytest.approx(1 / 128)
    v = wide.volumes_B_per_lup
    assert wide.performance.detail["l2_requests_per_lup"] == pytest.approx((v["l2_load"] + v["l2_store"]) / 128)


def test_the_l2_request_limit_is_the_rate_over_the_requests_and_only_where_the_device_has_a_rate():
    e = estimate("star3d-r1", H100, (1, 16, 16), domain=(256, 256, 64))
    requests = e.performance.detail["l2_requests_per_lup"]
    assert H100.l2_requests_per_ns == 142
    assert e.performance.limits_GLup_s["L2req"] == pytest.approx(142 / requests)
    faster = estimate("star3d-r1", H100.with_overrides(l2_request_rate="284GHz"), (1, 16, 16), domain=(256, 256, 64))
    assert faster.performance.limits_GLup_s["L2req"] == pytest.approx(2 * 142 / requests)
    assert faster.performance_GLup_s > e.performance_GLup_s
    # the roofline has no request limit, and a device without the rate has none in either model
    assert "L2req" not in e.limiters_GLup_s
    a100 = estimate("star3d-r1", "A100-SXM4-40GB", (1, 16, 16), domain=(256, 256, 64))
    assert "L2req" not in a100.performance.limits_GLup_s and a100.performance.detail["l2_requests_per_lup"] > 0


def test_request_bound_blocks_say_so():
    """A rate low enough to bind: the limiter is L2req and the reason gives the requests and their size."""
    slow = H100.with_overrides(l2_request_rate="5GHz")
    e = estimate("star3d-r1", slow, (1, 16, 16), domain=(256, 256, 64))
    assert e.limiter == "L2req"
    assert any(r.startswith("L2 requests: the L1 sends") and "(32 B each" in r for r in e.performance.reasons)


@pytest.mark.parametrize("device", ["MI210", "H100-SXM5-80GB"])
def test_a_warp_moves_its_own_lanes_worth_of_sectors(device):
    """The sectors a warp can have in flight per iteration count its lanes: 64 on CDNA (wave64), 32 on NVIDIA."""
    from warpspeed.model.levels import level

    dev = warpspeed.device(device)
    e = warpspeed.estimate("copy", dev, (256, 1, 1), domain=(1 << 20, 1, 1))
    pm = e.to_dict()["performance_model"]
    sectors = level("L2").traffic_B_per_lup(e.volumes_B_per_lup) / 32
    assert pm["sectors_in_flight_per_warp"] == pytest.approx(min(dev.sectors_in_flight_per_warp,
                                                                 sectors * dev.warp_size))


BOUND_CASES = [("star3d-r4", (256, 128, 128)), ("star3d-r1", (130, 66, 66)), ("box3d-r1", (66, 66, 34)),
               ("copy", (4096, 64, 1)), ("star2d-r1", (1024, 256, 1))]
BOUND_BLOCKS = [((32, 4, 2), (1, 1, 1)), ((256, 1, 1), (1, 2, 1)), ((8, 8, 8), (1, 1, 2)), ((1, 32, 8), (1, 1, 1)),
                ((64, 2, 2), (2, 1, 1)), ((1024, 1, 1), (1, 1, 1))]


@pytest.mark.parametrize("device", ["A100-SXM4-40GB", "H100-SXM5-80GB", "MI300X"])
@pytest.mark.parametrize("kernel, domain", BOUND_CASES)
def test_the_screening_bound_is_never_below_the_estimate_and_counts_dram(kernel, domain, device):
    """performance_bound (block stage + least DRAM volumes) is an upper bound of every model's estimate; where
    nothing is reused in the L2 and no sector is written partly (copy, most blocks) the least DRAM volumes are
    the estimate's, so the roofline's bound is its estimate (the DRAM volumes count)."""
    from warpspeed.application.estimating import performance_bound

    for block, folding in BOUND_BLOCKS:
        if domain[2] == 1 and block[2] > 1:
            block = (block[0], block[1] * block[2], 1)
        for model in ("latency", "roofline"):
            try:
                e = warpspeed.estimate(kernel, device, block, folding, domain, registers=32, model=model)
            except warpspeed.InputError:
                continue
            bound = performance_bound(kernel, device, block, folding, domain, registers=32, model=model)
            assert bound >= e.performance_GLup_s * (1 - 1e-9), (block, folding, model)
            least_load = e.volumes_B_per_lup["dram_load_compulsory"] - e.layer_y.potential_B_per_lup \
                - e.layer_z.potential_B_per_lup
            assert least_load <= e.volumes_B_per_lup["dram_load"] * (1 + 1e-9)
            if kernel == "copy" and model == "roofline" and e.partial_stores.miss_B_per_lup == 0:
                assert bound == pytest.approx(e.performance_GLup_s, rel=1e-12)
