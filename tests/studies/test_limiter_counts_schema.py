"""A ranking bound by a limiter only some devices have (a memory-side cache's MSC, the TLB-page limiter) counts it
in ``limiter_counts``, and the rank schema describes that count as it does the paper's four (docs/outputs.md)."""

from __future__ import annotations

import json

from paths import ROOT
from test_schemas import assert_complete, assert_valid

from warpspeed.interface.cli import main


def rank_json(capsys, *sets: str) -> dict:
    argv = ["rank", "star3d-r1", "--device", "MI300X", "--threads", "256", "--domain", "64,64,64", "--jobs", "1",
            "--format", "json"]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_an_msc_bound_ranking_counts_msc_and_the_schema_says_what_it_is(capsys):
    doc = rank_json(capsys, "msc_bw=500GB/s", "msc_bw_peak=1TB/s")
    assert doc["limiter_counts"]["MSC"] > 0
    assert_valid(doc, "rank")
    assert_complete(doc, "rank")


def test_a_tlb_bound_ranking_counts_tlb_and_the_schema_says_what_it_is(capsys):
    doc = rank_json(capsys, "tlb_page=64KiB", "tlb_reach=64KiB", "tlb_walk_rate=1M/s")
    assert doc["limiter_counts"]["TLB"] == doc["configurations"] > 0
    assert_valid(doc, "rank")
    assert_complete(doc, "rank")


def test_outputs_md_names_the_counts_of_optional_limiters():
    row = next(line for line in (ROOT / "docs" / "outputs.md").read_text().splitlines()
               if line.startswith("| `limiter_counts` |"))
    assert "`MSC`" in row and "`TLB`" in row


def test_an_msc_bound_estimate_is_valid(capsys):
    assert main(["estimate", "star3d-r1", "--device", "MI300X", "--set", "msc_bw=500GB/s", "--set",
                 "msc_bw_peak=1TB/s", "--block", "256,1,1", "--domain", "64,64,64", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["limiter"] == "MSC"
    assert_valid(doc, "estimate")
    assert_complete(doc, "estimate")
