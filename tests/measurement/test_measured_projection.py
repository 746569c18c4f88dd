"""Measured-source and hybrid projection: the seed's formula against hand-computed values."""

import math

import pytest

import warpspeed
from warpspeed.interface.cli import main
from warpspeed.measurement.measured import (
    MeasuredRun,
    Traffic,
    bandwidth_ceilings,
    estimated_traffic,
    fp_ceiling,
    implausible_run,
    project_measured,
)

A100, H100 = warpspeed.device("A100-SXM4-40GB"), warpspeed.device("H100-SXM5-80GB")


def test_ceilings_by_hand():
    traffic = Traffic(l1_bytes=400e6, l2_bytes=200e6, dram_bytes=100e6)  # hits: L1 200, L2 100, DRAM 100 MB
    bw = bandwidth_ceilings(A100, traffic)
    l1 = 108 * 1.41 * 128e9
    l2, dram = A100.l2_bw_GB_s * 1e9, A100.dram_bw_GB_s * 1e9
    assert bw["DRAM"] == pytest.approx(dram)
    assert bw["L2"] == pytest.approx(200e6 / (100e6 / l2 + 100e6 / dram))
    assert bw["L1"] == pytest.approx(400e6 / (200e6 / l1 + 100e6 / l2 + 100e6 / dram))
    run = MeasuredRun(1e-3, traffic, work=1e9, fma=30, add=10, mul=0, warp_usage=0.75)
    peak = 108 * 32 * 2 * 1.41e9
    assert fp_ceiling(A100, "fp64", run) == pytest.approx(0.75 * (peak * 30 / 40 + peak / 2 * 10 / 40))


def test_projection_formula_by_hand():
    traffic = Traffic(400e6, 200e6, 100e6)
    run = MeasuredRun(time_s=2e-4, traffic=traffic, work=25e6, add=24, mul=1)  # a memory-bound stencil
    p = project_measured(run, A100, H100)
    ps = 25e6 / 2e-4
    for lp in p.levels:
        bytes_ = traffic.level(lp.level)
        oi = 25e6 / bytes_
        rs = min(fp_ceiling(A100, "fp64", run), oi * bandwidth_ceilings(A100, traffic)[lp.level])
        rt = min(fp_ceiling(H100, "fp64", run), oi * bandwidth_ceilings(H100, traffic)[lp.level])
        assert lp.oi_source == lp.oi_target == pytest.approx(oi)
        assert lp.performance == pytest.approx(ps / rs * rt)
    lo, hi = p.interval
    assert lo <= p.midpoint <= hi and p.midpoint == pytest.approx((lo + hi) / 2)
    dram = next(lp for lp in p.levels if lp.level == "DRAM")
    assert dram.performance == pytest.approx(ps * H100.dram_bw_GB_s / A100.dram_bw_GB_s)  # pure bandwidth ratio
    d = p.to_dict()
    assert d["mode"] == "measured" and d["from"] == A100.id and d["to"] == H100.id
    assert d["time_interval_s"][0] == pytest.approx(25e6 / hi)


def test_compute_bound_kernel_projects_by_the_fp_ceiling():
    run = MeasuredRun(1e-3, Traffic(1e6, 1e6, 1e6), work=9e9, fma=1)  # OI 9000 flop/B: FP-bound everywhere
    p = project_measured(run, A100, H100)
    for lp in p.levels:
        assert lp.performance == pytest.approx(run.performance * H100.peak_GFLOP_s("fp64") / A100.peak_GFLOP_s("fp64"))


def test_hybrid_uses_target_volumes():
    k = warpspeed.find_kernel("star3d-r4")
    src = warpspeed.estimate(k, A100, (32, 4, 8)).volumes_B_per_lup
    tgt = warpspeed.estimate(k, H100, (32, 4, 8)).volumes_B_per_lup
    lups = math.prod(k.domain)
    run = MeasuredRun(lups / 45e9, estimated_traffic(src, lups), work=lups, work_is_flops=False)
    measured = project_measured(run, A100, H100)
    hybrid = project_measured(run, A100, H100, target_traffic=estimated_traffic(tgt, lups))
    assert hybrid.mode == "hybrid"
    for m, h in zip(measured.levels, hybrid.levels, strict=True):
        assert m.oi_source == h.oi_source
    dram = {lp.level: lp for lp in hybrid.levels}["DRAM"]
    v = tgt
    assert dram.oi_target == pytest.approx(1 / (v["dram_load"] + v["dram_store"]))


def test_bad_runs():
    with pytest.raises(warpspeed.InputError):
        MeasuredRun(0, Traffic(1, 1, 1), work=1)
    with pytest.raises(warpspeed.InputError):
        Traffic(-1, 0, 0)
    with pytest.raises(warpspeed.InputError):
        project_measured(MeasuredRun(1, Traffic(0, 0, 0), work=1), A100, H100)


def test_cli_measured_time_needs_a_unit_and_an_implausible_run_is_flagged(capsys):
    base = ["project", "copy", "--from", "A100-SXM4-40GB", "--to", "H100-SXM5-80GB", "--threads", "256",
            "--domain", "128,64,64", "--jobs", "1", "--measured-bytes", "8MB,8MB,8MB"]
    assert main([*base, "--measured-time", "2.1"]) == 2
    assert "--measured-time 2.1: give the unit" in capsys.readouterr().err
    # 128x64x64 cells at ~82 GLup/s (estimated) take ~6 us: 8 us is plausible, 2.1 ms is 329x slower
    assert main([*base, "--measured-time", "8us"]) == 0
    assert "warning" not in capsys.readouterr().err
    assert main([*base, "--measured-time", "2.1ms"]) == 0
    err = capsys.readouterr().err
    assert "warning: the measured run (0.25 GLup/s) is 329x slower" in err and "unit" in err
    assert implausible_run(1.0, 9.9, "X") is None and implausible_run(1.0, 0.11, "X") is None
    assert "10.1x faster" in implausible_run(10.1, 1.0, "X")
