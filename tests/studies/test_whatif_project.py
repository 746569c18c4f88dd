"""What-if sweeps over device keys and the analytic cross-GPU projection."""

import json

import pytest

import warpspeed
from warpspeed.application.projection import project
from warpspeed.application.whatif import sweep_values, whatif
from warpspeed.interface.cli import main


def test_sweep_values_units_linear_log_and_lists():
    key, v = sweep_values("l2_size=10MiB:160MiB:5:log")
    assert key == "l2_size" and v == [10 * 2**20, 20 * 2**20, 40 * 2**20, 80 * 2**20, 160 * 2**20]
    assert sweep_values("dram_bw=1TB/s:2TB/s:3") == ("dram_bw", [1000.0, 1500.0, 2000.0])
    assert sweep_values("sm_count=100,132,100") == ("sm_count", [100.0, 132.0])
    bad_sweeps = [("l2_size", "malformed"), ("l2_size=1:2", "START:STOP:N"), ("max_block_dims=1:2:3", "numeric"),
                  ("l2_size=1MiB:2MiB:1", "N must"), ("warp_speed=1,2", "numeric"),
                  ("l2_size=0B:4MiB:3:log", "at least 1, got '0B'"),
                  ("clock_GHz=1GHz:1500GHz:3", "'1500GHz' is 1500 GHz, outside"),  # was the midpoint 750.5 GHz
                  ("clock_GHz=1.2,1500", "'1500' is 1500 GHz, outside"), ("dram_bw=-1TB/s:2TB/s:3:log", "negative"),
                  ("l2_size=10:160:3", "give the unit"), ("dram_bw=2000,3000", "give the unit")]
    for bad, word in bad_sweeps:
        with pytest.raises(warpspeed.InputError, match=word):
            sweep_values(bad)


def test_larger_l2_restores_z_layer_reuse_of_shallow_waves():
    """3D25pt on 512^2 planes with (512,2,1) blocks: a 4x larger L2 lowers the z-layer oversubscription 4x
    and the DRAM volume towards one value per lup (issue 5's must-hold, at the model level)."""
    k = warpspeed.find_kernel("star3d-r4").with_domain((512, 512, 256))
    points = whatif(k, "A100-SXM4-40GB", "l2_size", [40 * 2**20, 160 * 2**20], blocks=[(512, 2, 1)], jobs=1)
    small, large = (p.best.data for p in points)
    zs, zl = small["causes"]["layer_z"], large["causes"]["layer_z"]
    assert zl["oversubscription"] == pytest.approx(zs["oversubscription"] / 4, rel=0.01)
    assert zl["hit_rate"] > 0.98 > zs["hit_rate"]
    assert large["volumes_B_per_lup"]["dram_load"] < 0.6 * small["volumes_B_per_lup"]["dram_load"]
    assert large["volumes_B_per_lup"]["dram_load"] < 10  # ~1 value of 8 B per lup plus the halo
    assert points[1].device.endswith("+l2_size=160MiB")


def test_dram_bound_copy_projects_by_the_dram_bandwidth_ratio():
    """The roofline promises the full bandwidth ratio to a DRAM-bound kernel."""
    a, h = warpspeed.device("A100-SXM4-40GB"), warpspeed.device("H100-SXM5-80GB")
    p = project("copy", a, h, threads=(256,), jobs=1, model="roofline")
    assert p.source_best.limiter == p.target_best.limiter == "DRAM"
    assert p.speedup == pytest.approx(h.dram_bw_GB_s / a.dram_bw_GB_s, rel=1e-9)
    d = p.to_dict()
    assert d["from"] == a.id and d["to"] == h.id and d["speedup"] == p.speedup
    assert set(d["levels"]) == {"FP", "L1", "L2", "DRAM"} and "both are DRAM-bound" in d["reasons"]


def test_projection_reports_retuning_and_volume_changes():
    p = project("star3d-r4", "V100-PCIe-32GB", "H100-SXM5-80GB", blocks=[(8, 16, 8), (16, 8, 8), (32, 4, 8)],
                folding=[(1, 1, 1), (1, 1, 2)], domain=(320, 256, 256), jobs=1)
    assert p.speedup > 1
    assert p.carried_over.configuration == p.source_best.configuration
    assert p.target_best.performance_GLup_s >= p.carried_over.performance_GLup_s


def test_cli_whatif_and_project(capsys):
    assert main(["whatif", "copy", "--device", "A100-SXM4-40GB", "--sweep", "dram_bw=1000GB/s,2000GB/s",
                 "--threads", "256", "--domain", "128,64,64", "--jobs", "1", "--format", "json",
                 "--model", "roofline"]) == 0
    d = json.loads(capsys.readouterr().out)
    perf = [pt["best"]["performance_GLup_s"] for pt in d["points"]]
    assert d["key"] == "dram_bw" and perf[1] == pytest.approx(2 * perf[0])
    assert main(["project", "copy", "--from", "A100-SXM4-40GB", "--to", "GH200", "--threads", "256",
                 "--domain", "128,64,64", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("copy: GH200 is") and "DRAM-bound" in out
    assert main(["whatif", "copy", "--device", "A100-SXM4-40GB", "--sweep", "l2_size=big"]) == 2
    assert "l2_size" in capsys.readouterr().err


def test_cli_whatif_over_a_latency_key(capsys):
    """A latency sweep parses its units once; the override keeps the value (no bare-number refusal) and a
    longer DRAM latency never speeds a latency-model kernel up."""
    assert main(["whatif", "copy", "--device", "H100-SXM5-80GB", "--sweep", "dram_latency=200ns:3.2us:3:log",
                 "--threads", "256", "--domain", "4194304,1,1", "--jobs", "1", "--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert [pt["value"] for pt in d["points"]] == pytest.approx([2e-7, 8e-7, 3.2e-6])
    perf = [pt["best"]["performance_GLup_s"] for pt in d["points"]]
    assert perf[0] >= perf[1] > perf[2]


def test_a_latency_bound_target_explains_its_limit():
    """The latency model's own limit has no device bandwidth ratio: the reasons compare the two limits
    (this raised KeyError 'latency')."""
    k = warpspeed.find_kernel("star3d-r1").with_domain((128, 128, 128))
    slow = warpspeed.device("H100-SXM5-80GB").with_overrides(dram_latency="20us")
    p = project(k, "A100-SXM4-40GB", slow, threads=(256,), jobs=1)
    assert p.target_best.data["limiter"] == "latency"
    reason = [r for r in p.reasons() if r.startswith("the latency limit")]
    assert len(reason) == 1 and "x the source's" in reason[0]
    assert json.dumps(p.to_dict())


def test_ranking_on_several_devices_is_ranking_on_each():
    """rank_on_devices shares a configuration's counts between devices; the rankings are those of rank, in this
    process or on two workers."""
    from warpspeed.application.ranking import rank_on_devices

    base = warpspeed.device("A100-SXM4-40GB")
    devices = [base.with_overrides(l2_size=v) for v in (10 * 2**20, 40 * 2**20)] + [base]
    blocks = [(32, 4, 2), (256, 1, 1), (8, 8, 4), (1, 16, 16)]
    kernel = warpspeed.find_kernel("star3d-r4").with_domain((256, 128, 128))
    each = [warpspeed.rank(kernel, d, blocks=blocks, jobs=1).to_dict() for d in devices]
    for jobs in (1, 2):
        together = rank_on_devices(kernel, devices, blocks=blocks, jobs=jobs)
        assert [r.to_dict() for r in together] == each
    assert each[0]["best"] != each[1]["best"]  # the L2 size matters here
