"""FP64-poor devices: the FP limit takes the kernel's precision (``Device.lanes_per_sm``).

Blackwell Ultra (B300, cc 10.3) and consumer Blackwell (RTX 5090, RTX PRO 6000; cc 12.0) run FP64 at 1/64 of
FP32, 2 FMA lanes per SM, where the B200 (cc 10.0) has 64. So the 7-point FP64 stencil that streams from DRAM on
a B200 is bound by its arithmetic on a B300, while the same stencil in FP32 runs at the FP32 rate everywhere.
Every FP roof below is computed from the shipped file's lanes x SMs x clock and the kernel's FP instructions per
lup (an FMA counts once), and written out as the number it must be.
"""

import json

import pytest

import warpspeed
from warpspeed.device import device
from warpspeed.interface.cli import main

STAR7_FP64 = "star3d-r1"                          # 7-point star, 8 B elements: 6 adds and 1 multiply per lup
STAR7_FP32 = "star:r=1,dims=3,element_bytes=4"    # the same stencil in FP32
STAR25_FP64 = "star:r=4,dims=3,element_bytes=8"   # 25-point star (star3d-r4's stencil): 24 adds, 1 multiply
STAR25_FP32 = "star:r=4,dims=3,element_bytes=4"
BLOCK = (32, 4, 8)


def fp_instructions_per_lup(kernel: str) -> float:
    f = warpspeed.estimate(kernel, "B200", BLOCK).workload.flops
    return f.fma + f.add + f.mul + f.other


def fp_roof_GLup_s(dev_id: str, precision: str, instructions: float) -> float:
    """lanes (of the precision) x SMs x clock / FP instructions per lup, from the shipped file's values."""
    d = device(dev_id)
    lanes = {"fp64": d.fp64_lanes_per_sm, "fp32": d.fp32_lanes_per_sm}[precision]
    return lanes * d.sm_count * d.clock_GHz / instructions


def test_the_files_give_the_fp64_lanes_of_their_compute_capability():
    """FP32:FP64 throughput is 2:1 for cc 10.0 and 64:1 for cc 10.3 and 12.x (CUDA Programming Guide, Table 30),
    with 128 FP32 lanes per SM on all of them."""
    lanes = {i: (device(i).compute_capability, device(i).fp32_lanes_per_sm, device(i).fp64_lanes_per_sm)
             for i in ("B200", "GB200", "B300", "RTX-5090", "RTX-PRO-6000-Blackwell")}
    assert lanes == {"B200": ("10.0", 128, 64), "GB200": ("10.0", 128, 64), "B300": ("10.3", 128, 2),
                     "RTX-5090": ("12.0", 128, 2), "RTX-PRO-6000-Blackwell": ("12.0", 128, 2)}
    for dev_id in ("B300", "RTX-5090"):
        d = device(dev_id)
        assert d.lanes_per_sm("fp64") == 2 and d.lanes_per_sm("fp32") == 128


def test_the_7_point_fp64_stencil_counts_7_fp_instructions():
    assert fp_instructions_per_lup(STAR7_FP64) == fp_instructions_per_lup(STAR7_FP32) == 7
    assert fp_instructions_per_lup(STAR25_FP64) == fp_instructions_per_lup(STAR25_FP32) == 25


def test_the_7_point_fp64_stencil_is_fp_bound_on_the_b300_and_dram_bound_on_the_b200():
    b300 = warpspeed.estimate(STAR7_FP64, "B300", BLOCK)
    b200 = warpspeed.estimate(STAR7_FP64, "B200", BLOCK)
    assert b300.workload.precision == b200.workload.precision == "fp64"
    # B300: 2 FP64 lanes x 148 SMs x 1.98 GHz / 7 = 83.73 GLup/s, far below its DRAM and L1 limits
    assert b300.limits_GLup_s["FP"] == pytest.approx(2 * 148 * 1.98 / 7, rel=1e-12)
    assert b300.limits_GLup_s["FP"] == pytest.approx(fp_roof_GLup_s("B300", "fp64", 7), rel=1e-12)
    assert b300.limiter == "FP"
    assert b300.limits_GLup_s["DRAM"] > 3 * b300.limits_GLup_s["FP"]
    assert 0.95 * 83.73 < b300.performance_GLup_s <= 83.73
    # B200: 64 lanes x 148 SMs x 1.965 GHz / 7 = 2659 GLup/s, ten times what its DRAM delivers
    assert b200.limits_GLup_s["FP"] == pytest.approx(64 * 148 * 1.965 / 7, rel=1e-12)
    assert b200.limits_GLup_s["FP"] == pytest.approx(fp_roof_GLup_s("B200", "fp64", 7), rel=1e-12)
    assert b200.limiter == "DRAM"
    assert b200.limits_GLup_s["FP"] > 10 * b200.limits_GLup_s["DRAM"]
    assert b200.performance_GLup_s > 2.5 * b300.performance_GLup_s
    # the same bytes move on both: only the FP rate differs
    assert b300.volumes_B_per_lup == b200.volumes_B_per_lup


def test_every_coalesced_configuration_of_the_fp64_stencil_is_fp_bound_on_the_b300_and_none_on_the_b200():
    """Blocks at least a warp wide in x (coalesced rows) are all FP-bound on the B300; blocks 1 or 2 cells wide
    stay L1-bound there (uncoalesced loads cost more L1 wavefronts than the 7 FP instructions cost lanes). On the
    B200 no configuration is FP-bound."""
    on_b300 = warpspeed.rank(STAR7_FP64, "B300", threads=(256, 1024), jobs=1)
    on_b200 = warpspeed.rank(STAR7_FP64, "B200", threads=(256, 1024), jobs=1)
    assert len(on_b300.results) == len(on_b200.results) > 20
    coalesced = [r for r in on_b300.results if r.estimate.block[0] >= 32]
    assert len(coalesced) > 10 and {r.limiter for r in coalesced} == {"FP"}
    assert on_b300.best.limiter == "FP"
    assert on_b300.best.estimate.limits_GLup_s["FP"] == pytest.approx(2 * 148 * 1.98 / 7, rel=1e-12)
    assert "FP" not in {r.limiter for r in on_b200.results}


def test_the_fp32_stencil_runs_at_the_fp32_rate_on_the_fp64_poor_devices():
    for dev_id, fp64_lanes_total in (("B300", 2 * 148 * 1.98), ("RTX-5090", 2 * 170 * 2.407),
                                     ("RTX-PRO-6000-Blackwell", 2 * 188 * 2.617)):
        fp64 = warpspeed.estimate(STAR7_FP64, dev_id, BLOCK)
        fp32 = warpspeed.estimate(STAR7_FP32, dev_id, BLOCK)
        assert (fp64.workload.precision, fp32.workload.precision) == ("fp64", "fp32")
        assert fp64.limits_GLup_s["FP"] == pytest.approx(fp64_lanes_total / 7, rel=1e-12)
        assert fp32.limits_GLup_s["FP"] == pytest.approx(64 * fp64_lanes_total / 7, rel=1e-12)  # 128 lanes
        assert fp32.limits_GLup_s["FP"] == pytest.approx(fp_roof_GLup_s(dev_id, "fp32", 7), rel=1e-12)
        assert fp32.limiter != "FP"


def test_on_the_rtx_5090_the_25_point_stencil_is_fp_bound_in_fp64_but_not_in_fp32():
    """The 25-point star is compute-bound on the RTX 5090 in FP64 (2 lanes x 170 SMs x 2.407 GHz / 25 = 32.7
    GLup/s); in FP32 its FP roof is 64 times higher (2095 GLup/s) and memory bounds it."""
    fp64 = warpspeed.estimate(STAR25_FP64, "RTX-5090", (64, 4, 4))
    fp32 = warpspeed.estimate(STAR25_FP32, "RTX-5090", (64, 4, 4))
    assert fp64.limits_GLup_s["FP"] == pytest.approx(2 * 170 * 2.407 / 25, rel=1e-12)
    assert fp64.limiter == "FP"
    assert fp32.limits_GLup_s["FP"] == pytest.approx(128 * 170 * 2.407 / 25, rel=1e-12)
    assert fp32.limits_GLup_s["FP"] == pytest.approx(fp_roof_GLup_s("RTX-5090", "fp32", 25), rel=1e-12)
    assert fp32.limiter != "FP" and fp32.limiter in ("L1", "L2", "DRAM", "latency")
    assert fp32.performance_GLup_s > 3 * fp64.performance_GLup_s


def test_whatif_on_the_b200_shows_the_limiter_switch_to_fp_as_its_fp64_lanes_go_down(capsys):
    """``warpspeed whatif star3d-r1 --device B200 --sweep fp64_lanes=64,16,8,4,2``: DRAM-bound down to 8 lanes,
    FP-bound from 4 (166 GLup/s of FP against ~270 of DRAM), and at the B300's 2 lanes near the B300's rate."""
    assert main(["whatif", STAR7_FP64, "--device", "B200", "--sweep", "fp64_lanes=64,16,8,4,2", "--threads", "256",
                 "--jobs", "1", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["key"] == "fp64_lanes"
    rows = {p["value"]: p["best"] for p in doc["points"]}
    assert sorted(rows) == [2, 4, 8, 16, 64]
    assert {lanes: best["limiter"] for lanes, best in rows.items()} == {64: "DRAM", 16: "DRAM", 8: "DRAM",
                                                                         4: "FP", 2: "FP"}
    for lanes, best in rows.items():
        assert best["limiters_GLup_s"]["FP"] == pytest.approx(lanes * 148 * 1.965 / 7, rel=1e-12)
    assert rows[2]["performance_GLup_s"] == pytest.approx(2 * 148 * 1.965 / 7, rel=0.02)


def test_the_web_page_what_if_shows_the_same_switch():
    """The page's what-if (POST /api/whatif, a sweep of up to 8 values of any device key) answers the same
    limiters for the B200, so the page can show the switch."""
    pytest.importorskip("flask")
    from warpspeed.web.app import create_app

    query = {"kernel": STAR7_FP64, "device": "B200", "block": "32,4,8", "threads": "256",
             "sweep": "fp64_lanes=64,8,4,2"}
    r = create_app().test_client().post("/api/whatif", json=query)
    assert r.status_code == 200, r.get_json()
    doc = r.get_json()
    assert [(p["value"], p["best"]["limiter"]) for p in doc["points"]] == [(64, "DRAM"), (8, "DRAM"), (4, "FP"),
                                                                          (2, "FP")]
    assert doc["command"].startswith("warpspeed whatif star3d-r1 --device B200")
