"""A what-if that sweeps one key of a pair the device does not have (a memory-side cache needs msc_size and
msc_bw together): the other key comes from ``--set`` (or the page's overrides), the swept one from the sweep, and
the sweep starts from the device with both. Before, the overrides were checked alone and refused ("needs both")."""

import json

import pytest

import warpspeed
from warpspeed.application.whatif import sweep_device
from warpspeed.errors import InputError
from warpspeed.interface.cli import main

H100 = "H100-SXM5-80GB"
SWEEP = "msc_size=64MiB,1GiB"
ARGS = ["whatif", "star3d-r4", "--device", H100, "--set", "msc_bw=5TB/s", "--sweep", SWEEP, "--threads", "256",
        "--domain", "640,512,512", "--jobs", "1", "--format", "json"]


def test_the_swept_key_completes_the_pair_the_overrides_begin(capsys):
    assert main(ARGS) == 0
    doc = json.loads(capsys.readouterr().out)
    points = doc["points"]
    assert [p["value"] for p in points] == [64 * 2**20, 2**30]
    assert [p["device"] for p in points] == [f"{H100}+msc_bw=5000GB/s+msc_size=64MiB",
                                             f"{H100}+msc_bw=5000GB/s+msc_size=1GiB"]
    # each point is the estimate of the device with both keys: the same best as a plain rank there
    for p, size in zip(points, ("64MiB", "1GiB"), strict=True):
        dev = warpspeed.device(H100, msc_bw="5TB/s", msc_size=size)
        best = warpspeed.rank("star3d-r4", dev, threads=(256,), domain=(640, 512, 512), jobs=1).best
        assert p["best"]["performance_GLup_s"] == pytest.approx(best.performance_GLup_s, rel=1e-12)
        assert "msc_load" in p["best"]["volumes_B_per_lup"]
    # the DRAM at 1 GiB of memory-side cache moves no more than at 64 MiB
    dram = [p["best"]["volumes_B_per_lup"]["dram_load"] for p in points]
    assert dram[1] <= dram[0]


def test_overrides_wrong_for_another_reason_keep_their_own_error():
    with pytest.raises(InputError, match="needs both msc_size and msc_bw"):
        sweep_device(H100, {"msc_bw": "5TB/s"}, "l2_size", [64 * 2**20])  # the sweep does not complete the pair
    with pytest.raises(InputError, match="msc_bw"):
        sweep_device(H100, {"msc_bw": "abc"}, "msc_size", [64 * 2**20])
    assert sweep_device(H100, None, "msc_size", [1.0]).msc_size_bytes is None  # no overrides: the device as it is


def test_the_page_sweeps_it_as_the_command_line_does(capsys):
    pytest.importorskip("flask")
    from warpspeed.web.app import create_app

    query = {"kernel": "star3d-r4", "device": H100, "threads": "256", "domain": "640,512,512",
             "overrides": [["msc_bw", "5TB/s"]], "sweep": SWEEP}
    r = create_app().test_client().post("/api/whatif", json=query)
    assert r.status_code == 200, r.get_json()
    assert main(ARGS) == 0
    cli = json.loads(capsys.readouterr().out)
    assert [p["best"] for p in r.get_json()["points"]] == [p["best"] for p in cli["points"]]
