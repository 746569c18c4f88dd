"""The memory-side cache (MSC) in every output: a device with one (the MI300X, or an H100 given one with --set)
shows its volumes, causes and limiter in the JSON (valid against the schema), the text report, the rank table
and CSV, the roofline plot and the web page's answers; a device without one shows none of them."""

import csv
import io
import json

import jsonschema
import pytest

from warpspeed import schemas
from warpspeed.interface.cli import main

H100, MI300X = "H100-SXM5-80GB", "MI300X"
MSC_SET = ("--set", "msc_size=256MiB", "--set", "msc_bw=10TB/s")
ESTIMATE = ("estimate", "star3d-r4", "--block", "64,4,1", "--domain", "512,512,128")


def run(capsys, *argv) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize(("device", "extra", "has"), [(H100, (), False), (H100, MSC_SET, True), (MI300X, (), True)])
def test_estimate_json_and_text(capsys, device, extra, has):
    d = json.loads(run(capsys, *ESTIMATE, "--device", device, *extra, "--format", "json"))
    jsonschema.Draft202012Validator(schemas.load("estimate")).validate(d)
    assert ("msc_load" in d["volumes_B_per_lup"]) == has and ("msc_store" in d["volumes_B_per_lup"]) == has
    assert ("MSC" in d["limiters_GLup_s"]) == has and ("MSC" in d["performance_model"]["limits_GLup_s"]) == has
    assert ("msc_layer_z" in d["causes"]) == has
    text = run(capsys, *ESTIMATE, "--device", device, *extra)
    assert ("MSC->L2 load (L2 misses)" in text) == has and ("MSC z-layer reuse" in text) == has
    assert ("\nMSC " in text) == has  # the limiter table's row
    assert ("MSC" in text) == has  # nothing about it on a device without one


def test_rank_csv_and_table_show_the_level_only_for_a_device_that_has_it(capsys):
    argv = ("rank", "star3d-r4", "--threads", "256", "--domain", "256,256,128")
    h100 = run(capsys, *argv, "--device", H100, "--format", "csv")
    assert not any("msc" in c.lower() for c in h100.splitlines()[0].split(","))
    both = list(csv.DictReader(io.StringIO(run(capsys, *argv, "--device", H100, "--device", MI300X,
                                               "--format", "csv"))))
    columns = list(both[0])
    assert columns.index("l2_store") + 1 == columns.index("msc_load") and "MSC_GLup_s" in columns
    for row in both:
        on_mi300x = row["device"] == MI300X
        assert all((row[c] != "") == on_mi300x for c in ("msc_load", "msc_store", "MSC_GLup_s")), row
    mi = next(r for r in both if r["device"] == MI300X)
    assert float(mi["msc_load"]) > float(mi["dram_load"])  # the Infinity Cache keeps layers the L2 cannot
    table = run(capsys, *argv, "--device", MI300X)
    assert " DRAM B/lup MSC B/lup  L2 B/lup  L1 cyc" in table
    assert "MSC B/lup" not in run(capsys, *argv, "--device", H100)


def test_the_roofline_plot_draws_the_msc_roof_where_the_device_has_one(tmp_path):
    pytest.importorskip("matplotlib")
    import warpspeed
    from warpspeed.render.plots import roofline_plot

    for device, has in ((MI300X, True), (H100, False)):
        e = warpspeed.estimate("star3d-r4", device, (64, 4, 1), domain=(512, 512, 128))
        labels = [t.get_text() for t in roofline_plot(e).axes[0].get_legend().get_texts()]
        assert any(label.startswith("MSC roof 13,708 GB/s") for label in labels) == has, labels
        assert any(label.startswith("kernel at MSC") for label in labels) == has


def test_the_web_page_answers_with_the_level(capsys):
    pytest.importorskip("flask")
    from warpspeed.web.app import create_app

    client = create_app().test_client()
    assert {"msc_size", "msc_bw"} <= set(client.get("/api/devices").get_json()["override_keys"])
    query = {"kernel": "star3d-r4", "device": H100, "overrides": [["msc_size", "256MiB"], ["msc_bw", "10TB/s"]],
             "block": "64,4,1", "domain": "512,512,128"}
    doc = client.post("/api/estimate", json=query).get_json()
    assert doc["estimate"] == json.loads(run(capsys, *ESTIMATE, "--device", H100, *MSC_SET, "--format", "json"))
    assert "msc_load" in doc["estimate"]["volumes_B_per_lup"] and "MSC" in doc["estimate"]["limiters_GLup_s"]
    plain = client.post("/api/estimate", json={**query, "overrides": []}).get_json()["estimate"]
    assert "msc_load" not in plain["volumes_B_per_lup"] and "MSC" not in plain["limiters_GLup_s"]


def test_the_whatif_table_adds_the_msc_z_layer_hit_rate_where_the_device_has_one(capsys):
    argv = ("whatif", "star3d-r4", "--threads", "256", "--domain", "512,512,256", "--jobs", "1")
    text = run(capsys, *argv, "--device", MI300X, "--sweep", "msc_size=16MiB:256MiB:2")
    head, small, large = text.splitlines()[-3:]
    assert head.endswith("z-layer hit  MSC z hit")
    assert float(small.split()[-1]) < float(large.split()[-1]) == 1.0  # a larger cache keeps more of the z layer
    assert "MSC" not in run(capsys, *argv, "--device", H100, "--sweep", "l2_size=16MiB:64MiB:2")


def test_a_projection_to_a_device_with_one_says_what_it_keeps(capsys):
    argv = ("project", "star3d-r4", "--from", H100, "--domain", "512,512,256")
    text = run(capsys, *argv, "--to", MI300X)
    line = next(x for x in text.splitlines() if "memory-side cache" in x)
    assert line.startswith("  - the target's memory-side cache (256 MiB) takes its L2's misses (")
    assert "memory-side" not in run(capsys, *argv, "--to", "H200-SXM-141GB")
