"""``KEY=none`` in ``--set``, ``Device.with_overrides`` and the page's overrides: an optional device level switched
off (the memory-side cache, the TLB-page limiter, the L1 line rule, a vendor peak ...), the device then the same as a
file without the keys; required keys, the derived ``l2_effective_size`` and the latency keys refuse it."""

import dataclasses
import json
import re

import pytest

import warpspeed
from warpspeed.device import TLB_KEYS, DeviceFileError, device, load_device_file
from warpspeed.device.keys import KEYS, LATENCY_KEYS, NONE_REMOVES
from warpspeed.errors import InputError
from warpspeed.interface.cli import main
from warpspeed.web import service

MI300X = device("MI300X")
CASE = ("star3d-r4", (64, 4, 1), (1024, 1024, 256))
# the MI300X's volumes before it had the Infinity Cache (tests/model/test_memory_side_cache.py, BEFORE): the L2's
# misses go to the DRAM
WITHOUT_MSC = {"l1_load": 248.0, "l2_load_compulsory": 110.0, "l2_load": 248.0, "l2_store": 10.0,
               "dram_load_compulsory": 72.85608552631578, "dram_load": 73.64672459763345,
               "dram_store": 8.85313907131767}
TLB = dict(tlb_page="4KiB", tlb_reach="1MiB", tlb_walk_rate="1GHz")


def _estimate(dev):
    kernel, block, domain = CASE
    return warpspeed.estimate(kernel, dev, block, domain=domain)


def _without_msc_file(tmp_path):
    """The shipped MI300X file with its msc_* lines left out: the device a user would write without the cache."""
    text = open(MI300X.file).read()
    kept = [line for line in text.splitlines() if not line.startswith("msc_")]
    assert len(kept) == len(text.splitlines()) - 6  # msc_size: value, source; msc_bw: value, source, peak, peak_source
    path = tmp_path / "MI300X.toml"
    path.write_text("\n".join(kept) + "\n")
    return load_device_file(path)


def test_msc_size_none_is_the_mi300x_without_its_infinity_cache(tmp_path):
    off = MI300X.with_overrides(msc_size="none")
    copy = _without_msc_file(tmp_path)
    assert off.id == "MI300X+msc_size=none"
    assert (off.msc_size_bytes, off.msc_bw_GB_s, off.msc_bw_peak_GB_s) == (None, None, None)
    assert not any(k.startswith("msc_") for k in off.sources)
    assert dataclasses.replace(off, id=copy.id) == copy  # every value and source as the file without the keys
    e, c = _estimate(off), _estimate(copy)
    assert dict(e.volumes_B_per_lup) == dict(c.volumes_B_per_lup) == WITHOUT_MSC
    assert "MSC" not in e.limiters_GLup_s and e.memory_side is None
    assert {**e.to_dict(), "device": None} == {**c.to_dict(), "device": None}
    on = _estimate(MI300X)  # the cache changes the estimate: the test compares something
    assert "MSC" in on.limiters_GLup_s and "msc_load" in on.volumes_B_per_lup
    assert on.volumes_B_per_lup["dram_load"] != e.volumes_B_per_lup["dram_load"]


@pytest.mark.parametrize("value", ["none", "None", " NONE ", None])
@pytest.mark.parametrize("key", ["msc_size", "msc_bw"])
def test_either_key_of_the_cache_removes_it_in_any_spelling(key, value):
    off = MI300X.with_overrides(**{key: value})
    assert off.id == f"MI300X+{key}=none"
    assert dataclasses.replace(off, id="x") == dataclasses.replace(MI300X.with_overrides(msc_size=None), id="x")
    assert warpspeed.device(off.id) == off == warpspeed.device("MI300X", **{key: value})  # the id rebuilds it


def test_a_peak_alone_goes_and_the_level_stays():
    d = MI300X.with_overrides(msc_bw_peak="none", dram_bw_peak="none")
    assert (d.msc_bw_peak_GB_s, d.dram_bw_peak_GB_s) == (None, None)
    assert d.msc_bw_GB_s == MI300X.msc_bw_GB_s and d.dram_bw_GB_s == MI300X.dram_bw_GB_s
    assert _estimate(d).to_dict()["volumes_B_per_lup"] == _estimate(MI300X).to_dict()["volumes_B_per_lup"]
    # a new bandwidth beside a removed peak: no peak is scaled back in
    assert MI300X.with_overrides(dram_bw="5TB/s", dram_bw_peak="none").dram_bw_peak_GB_s is None


@pytest.mark.parametrize("key", TLB_KEYS)
def test_any_tlb_key_removes_the_tlb_limiter(key):
    on = MI300X.with_overrides(**TLB)
    off = on.with_overrides(**{key: "none"})
    assert all(getattr(off, a) is None for a in ("tlb_page_bytes", "tlb_reach_bytes", "tlb_walks_per_ns"))
    assert off.id == f"MI300X+{key}=none"  # the suffixes of the removed keys go: the id rebuilds the device
    assert warpspeed.device(off.id) == off
    assert "TLB" in warpspeed.estimate("copy", on, (256, 1, 1), domain=(1 << 22, 1, 1)).limiters_GLup_s
    e = warpspeed.estimate("copy", off, (256, 1, 1), domain=(1 << 22, 1, 1))
    plain = warpspeed.estimate("copy", MI300X, (256, 1, 1), domain=(1 << 22, 1, 1))
    assert "TLB" not in e.limiters_GLup_s
    assert {**e.to_dict(), "device": None} == {**plain.to_dict(), "device": None}


def test_a_line_rule_key_removes_the_line_rule_and_the_pairing_rule_applies():
    h100 = device("H100-SXM5-80GB")
    assert h100.l1_load_lines_per_wavefront is not None
    off = h100.with_overrides(l1_wavefronts_per_warp="none")
    assert (off.l1_load_lines_per_wavefront, off.l1_store_lines_per_wavefront, off.l1_wavefronts_per_warp,
            off.l1_wavefronts_per_missed_line) == (None, None, None, None)
    e, on = (warpspeed.estimate("star3d-r4", d, (64, 4, 1), domain=(256, 256, 128)) for d in (off, h100))
    assert e.l1_cycles_per_warp_lup != on.l1_cycles_per_warp_lup


def test_keys_that_take_none():
    takes = {k.key for k in KEYS if not k.required and not k.derived} - set(LATENCY_KEYS)
    assert set(NONE_REMOVES) == takes
    for key, removed in NONE_REMOVES.items():  # every key it removes is optional, itself among them
        assert key in removed and all(k in takes for k in removed)


@pytest.mark.parametrize(("key", "why"), [
    ("l2_size", "every device has one (a required key)"),
    ("sm_count", "a required key"),
    ("l2_effective_size", "derived when not given"),
    ("l2_latency", "a latency-model key"),
    ("l2_request_rate", "a latency-model key"),
])
def test_a_key_without_a_none_is_refused_naming_it_and_the_keys_that_take_it(key, why):
    with pytest.raises(DeviceFileError) as err:
        MI300X.with_overrides(**{key: "none"})
    text = str(err.value)
    assert f"{key}=none: {key} cannot be removed" in text and why in text
    assert "Keys that take none: l1_bytes_per_cycle_8B," in text and "msc_size" in text and "tlb_walk_rate" in text


def test_none_and_a_value_for_the_same_level_are_refused():
    with pytest.raises(DeviceFileError, match=r"msc_size=none removes msc_size, msc_bw, msc_bw_peak; msc_bw cannot "
                                              r"also be given a value \('5TB/s'\)"):
        MI300X.with_overrides(msc_size="none", msc_bw="5TB/s")


def test_zero_or_off_points_to_none():
    for raw in ("0B", "off"):
        with pytest.raises(DeviceFileError, match="msc_size=none removes msc_size, msc_bw, msc_bw_peak"):
            MI300X.with_overrides(msc_size=raw)


def test_a_file_of_changes_cannot_remove_a_key(tmp_path):
    f = tmp_path / "off.toml"
    f.write_text('base = "MI300X"\nmsc_size = "none"\n')
    with pytest.raises(InputError, match="only --set and Device.with_overrides take none .*write a complete file"):
        load_device_file(f)


def test_the_command_line_estimates_and_shows_the_device_without_the_cache(capsys):
    assert main(["estimate", "star3d-r4", "--device", "MI300X", "--set", "msc_size=none", "--block", "64,4,1",
                 "--domain", "1024,1024,256", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["device"] == "MI300X+msc_size=none" and doc["volumes_B_per_lup"] == WITHOUT_MSC
    assert "MSC" not in doc["limiters_GLup_s"]
    assert main(["devices", "show", "MI300X+msc_size=none"]) == 0
    shown = capsys.readouterr().out
    assert "# msc_size: not given (no memory-side cache: the L2's misses go to DRAM)" in shown
    assert "# msc_bw_peak: not given (no vendor peak recorded)" in shown
    assert not re.search(r"^\s*msc_", shown, re.M)
    assert main(["estimate", "star3d-r4", "--device", "MI300X", "--set", "l2_size=none", "--block", "64,4,1"]) != 0
    assert "l2_size=none: l2_size cannot be removed" in capsys.readouterr().err


def test_the_page_takes_none_as_the_command_line():
    q = service.query_from_json({"kernel": "star3d-r4", "device": "MI300X", "overrides": [["msc_size", "none"]],
                                 "block": "64,4,1", "domain": "1024,1024,256"})
    doc = service.estimate_doc(q)
    assert doc["estimate"]["volumes_B_per_lup"] == WITHOUT_MSC
    assert doc["headline"].startswith("star3d-r4 on MI300X+msc_size=none")
    assert "--set msc_size=none" in doc["command"]
    bad = service.query_from_json({"kernel": "copy", "device": "MI300X", "overrides": [["dram_bw", "none"]]})
    with pytest.raises(service.PageError) as err:
        service.estimate_doc(bad)
    assert err.value.part == "device" and "dram_bw=none: dram_bw cannot be removed" in str(err.value)
