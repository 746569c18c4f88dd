"""Families as data (devices/families.toml): every family says where its hit-rate curves, L1 rule and latency
values come from, and a family that assumes them from another loads that family's data."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warpspeed
from warpspeed.device import HIT_RATE_CURVES, device, device_ids, load_device_file
from warpspeed.device.families import (
    CHIP_SPECIFIC_KEYS,
    KINDS,
    STATUSES,
    _data_family,
    _owned,
    device_family,
    families,
    family_curves,
    family_hit_rates,
    family_latency,
    family_latency_values,
    family_named,
    read_families,
)
from warpspeed.errors import InputError

REPO = Path(__file__).resolve().parents[2]
DEVICE_DIR = Path(warpspeed.__file__).parent / "devices"
FAMILY_TEXT = (DEVICE_DIR / "families.toml").read_text()


def coefficients(hit_rates):
    return {c: (getattr(hit_rates, c).a, getattr(hit_rates, c).b, getattr(hit_rates, c).c) for c in HIT_RATE_CURVES}


def test_every_family_in_use_is_described():
    used = {device(d).architecture for d in device_ids()} | set(family_hit_rates()) | set(family_latency())
    assert used | {"blackwell", "blackwell-rtx"} <= set(families())
    for family in families().values():
        assert [o.kind for o in family.origins] == list(KINDS)
        assert all(o.status in STATUSES and o.reason for o in family.origins)


def test_statuses_of_the_shipped_families():
    assert family_named("hopper").status == "measured" and family_named("hopper").measured
    assert family_named("hopper").validation == "measured"
    ampere = family_named("ampere")
    assert ampere.origin("hit_rates").status == "published" and ampere.origin("l1_rule").status == "published"
    assert ampere.status == "assumed"  # its memory parallelism is the Hopper fit: the weakest kind decides
    assert ampere.validation == "published, partly assumed from hopper"
    for name in ("volta", "ada", "cdna2", "cdna3"):
        assert family_named(name).origin("hit_rates").data_from == "ampere"
        assert family_named(name).validation.startswith("assumed from ampere")
    blackwell = family_named("blackwell")
    assert {o.status for o in blackwell.origins} == {"assumed"}
    assert {o.data_from for o in blackwell.origins} == {"hopper"} and blackwell.validation == "assumed from hopper"
    assert {o.data_from for o in family_named("blackwell-rtx").origins} == {"ada"}
    assert [f.name for f in families().values() if f.measured] == ["hopper"]


def test_measured_kinds_name_files_that_exist_and_measured_devices():
    for family in families().values():
        for origin in family.origins:
            if origin.status == "measured":
                assert origin.files and origin.measured_on, (family.name, origin.kind)
                for f in origin.files:
                    assert (REPO / f).is_file(), f
                assert set(origin.measured_on) <= set(device_ids())
            else:
                assert origin.files == ()
            if origin.status == "assumed":
                assert origin.measured_on == () and origin.data_from in families()
                assert origin.data_from != family.name


def test_families_with_their_own_tables_hold_the_data_they_say_they_take():
    """volta, ada, cdna2, cdna3 keep their copies of ampere's curves: families.toml says they are ampere's."""
    own = family_hit_rates()
    for family in families().values():
        hr = family.origin("hit_rates")
        if hr.status == "assumed" and family.name in own:
            assert coefficients(own[family.name]) == coefficients(family_curves(hr.data_from)), family.name
        par = family.origin("parallelism")
        if par.status == "assumed" and family.name in family_latency():
            mine, theirs = family_latency_values(family.name), family_latency_values(par.data_from)
            for key in ("sectors_in_flight_per_warp", "dram_run_time", "dram_run_exponent"):
                assert mine[key][0] == theirs[key][0], (family.name, key)


def test_the_l1_rule_of_each_shipped_device_follows_its_family():
    """A family whose L1 rule is Hopper's (measured or assumed from it) gives the line-rule keys in every
    device file; the others use the pairing rule (no line-rule keys)."""
    for dev_id in device_ids():
        d = device(dev_id)
        origin = family_named(d.architecture).origin("l1_rule")
        line_rule = origin.data_from == "hopper" or d.architecture == "hopper"
        assert (d.l1_load_lines_per_wavefront is not None) == line_rule, dev_id


def b200_like(tmp_path: Path, architecture: str) -> Path:
    """The H100 SXM5 file as a GPU of another family (no hit-rate tables of its own)."""
    text = (DEVICE_DIR / "H100-SXM5-80GB.toml").read_text()
    assert "[hit_rates." not in text and "l2_latency" not in text
    text = re.sub(r'^id = .*$', 'id = "B200-like"', text, flags=re.M)
    text = re.sub(r'^architecture = .*$', f'architecture = "{architecture}"', text, flags=re.M)
    f = tmp_path / "B200-like.toml"
    f.write_text(text)
    return f


def test_an_assumed_family_loads_the_curves_and_latency_of_its_source(tmp_path):
    d = load_device_file(b200_like(tmp_path, "blackwell"))
    h100 = device("H100-SXM5-80GB")
    assert d.architecture == "blackwell" and device_family(d) is family_named("blackwell")
    assert coefficients(d.hit_rates) == coefficients(h100.hit_rates)
    for c in HIT_RATE_CURVES:
        src = d.sources[f"hit_rates.{c}"]
        assert src.startswith("assumed: the hopper family's value, taken for blackwell")
        assert src.endswith(h100.sources[f"hit_rates.{c}"])
    assert (d.l2_latency_s, d.dram_latency_s, d.sectors_in_flight_per_warp) == \
        (h100.l2_latency_s, h100.dram_latency_s, h100.sectors_in_flight_per_warp)
    assert d.sources["l2_latency"].startswith("assumed: the hopper family's value")
    # the L2 request rate is the H100 chip's, not the family's: a Blackwell GPU has none unless its file gives one
    assert CHIP_SPECIFIC_KEYS == ("l2_request_rate",)
    assert h100.l2_requests_per_ns is not None and d.l2_requests_per_ns is None


def test_a_chain_of_assumptions_resolves_to_the_data_at_its_end(tmp_path):
    """blackwell-rtx takes ada's data; ada's curves are ampere's copies and its latencies the L40's."""
    d = load_device_file(b200_like(tmp_path, "blackwell-rtx"))
    l40s = device("L40S")
    assert coefficients(d.hit_rates) == coefficients(l40s.hit_rates) == coefficients(family_curves("ampere"))
    assert (d.l2_latency_s, d.dram_latency_s) == (l40s.l2_latency_s, l40s.dram_latency_s)
    assert "ada's source: measured: gpu-benches gpu-latency l40" in d.sources["l2_latency"]


def test_a_changed_device_moved_to_an_assumed_family_takes_its_curves(tmp_path):
    f = tmp_path / "x.toml"
    f.write_text('schema_version = 1\nbase = "A100-SXM4-40GB"\narchitecture = "blackwell"\n')
    d = load_device_file(f)
    assert coefficients(d.hit_rates) == coefficients(device("H100-SXM5-80GB").hit_rates)
    assert d.sources["hit_rates.l2_z"].startswith("assumed: the hopper family's value")


def test_an_unknown_family_is_refused_as_before(tmp_path):
    f = b200_like(tmp_path, "pascal")
    with pytest.raises(InputError, match=r"architecture 'pascal' has no hit-rate curves in hit_rates.toml or "
                                         r"families.toml \(known families: .*blackwell.*\); use one of those or "
                                         r"give all four \[hit_rates.<curve>\] tables"):
        load_device_file(f)
    with pytest.raises(InputError, match=r"unknown architecture family 'blackwel'\. Did you mean 'blackwell'"):
        family_named("blackwel")


def test_a_family_of_its_own_curves_is_assumed(tmp_path):
    """A device with all four curves of its own and an undescribed architecture loads; its family says that
    nothing records whether the data was measured."""
    curves = "".join(f'[hit_rates.{c}]\na = 1.0\nb = 0.01\nc = 3.0\nsource = "measured: my run"\n'
                     for c in HIT_RATE_CURVES)
    f = b200_like(tmp_path, "pascal")
    f.write_text(f.read_text() + "\n" + curves)
    family = device_family(load_device_file(f))
    assert family.name == "pascal" and not family.described and family.status == "assumed"
    assert family.validation == "assumed (the device file's own data)"


def test_the_json_record():
    record = family_named("blackwell").to_dict()
    assert record["name"] == "blackwell" and record["status"] == "assumed"
    assert record["validation"] == "assumed from hopper"
    assert list(record["data"]) == list(KINDS)
    assert record["data"]["hit_rates"]["from"] == "hopper" and record["data"]["hit_rates"]["files"] == []
    hopper = family_named("hopper").to_dict()["data"]["hit_rates"]
    assert hopper["status"] == "measured" and "tests/data/hopper/star3d-r4-H100.csv" in hopper["files"]


def family_file(body: str) -> bytes:
    """The shipped family file with ``body`` appended (a family of its own, or a broken one)."""
    return (FAMILY_TEXT + "\n" + body).encode()


KIND_ROWS = "".join(f'{k}.status = "assumed"\n{k}.from = "hopper"\n{k}.reason = "test"\n' for k in KINDS)


@pytest.mark.parametrize(("body", "message"), [
    ('[x]\nhit_rates.status = "assumed"\n', "[x] must hold exactly the kinds hit_rates, l1_rule, latency, "
                                            "parallelism; got ['hit_rates']"),
    ("[x]\n" + KIND_ROWS.replace('hit_rates.status = "assumed"', 'hit_rates.status = "guessed"', 1),
     "x.hit_rates.status must be one of measured, published, assumed, got 'guessed'"),
    ("[x]\n" + KIND_ROWS.replace('hit_rates.from = "hopper"', 'hit_rates.from = "pascal"', 1),
     "x.hit_rates.from must name another family"),
    ("[x]\n" + KIND_ROWS.replace('latency.from = "hopper"\n', "", 1),
     "x.latency: 'from' (the family the data is taken from) goes with status assumed only"),
    ("[x]\n" + KIND_ROWS.replace('l1_rule.reason = "test"', 'l1_rule.reason = ""', 1),
     "x.l1_rule.reason must be a non-empty text"),
    ("[x]\n" + KIND_ROWS.replace('hit_rates.status = "assumed"\nhit_rates.from = "hopper"',
                                 'hit_rates.status = "measured"\nhit_rates.devices = ["H100-SXM5-80GB"]', 1),
     "x.hit_rates.files must name the data files it was fitted on"),
    ("[x]\n" + KIND_ROWS.replace('hit_rates.from = "hopper"', 'hit_rates.from = "hopper"\nhit_rates.files = ["a"]', 1),
     "x.hit_rates.files (the data files it was fitted on) go with status measured only"),
    ("[x]\n" + KIND_ROWS.replace('hit_rates.from = "hopper"', 'hit_rates.from = "y"', 1) +
     "[y]\n" + KIND_ROWS.replace('hit_rates.from = "hopper"', 'hit_rates.from = "x"', 1),
     "x.hit_rates: 'from' goes round in a circle: x -> y -> x"),
])
def test_a_broken_family_file_names_the_key_at_fault(body, message):
    with pytest.raises(InputError) as err:
        read_families(family_file(body), "families.toml")
    assert message in str(err.value)


def test_a_family_added_to_the_file_is_read():
    described = read_families(family_file("[x]\n" + KIND_ROWS), "families.toml")
    assert described["x"].validation == "assumed from hopper" and list(described)[-1] == "x"
    assert tomllib.loads(FAMILY_TEXT)["schema_version"] == 1


def test_the_device_list_has_a_validation_column_and_the_json_the_family_record():
    from warpspeed.render.device_list import device_list_json, device_list_text

    devices = [device(d) for d in ("H100-SXM5-80GB", "A100-SXM4-40GB", "L40S", "MI300X")]
    rows = device_list_text(devices).splitlines()
    head = rows[0].split()
    assert head[-3:] == ["family", "validation", "name"]
    expected = {"H100-SXM5-80GB": "hopper measured NVIDIA H100 SXM5 80GB",
                "A100-SXM4-40GB": "ampere published, partly assumed from hopper NVIDIA A100-SXM4-40GB",
                "L40S": "ada assumed from ampere, hopper NVIDIA L40S",
                "MI300X": "cdna3 assumed from ampere, cdna2, hopper AMD Instinct MI300X"}
    for row in rows[1:5]:
        words = row.split()
        assert " ".join(words[7:]) == expected[words[0]]
    assert rows.index(next(r for r in rows if r.startswith("H100"))) == 1  # the given order
    assert rows[1].index("measured") == rows[0].index("validation")  # aligned under its heading
    assert "assumed from another family" in " ".join(rows[6:])  # the column is explained below the table
    records = device_list_json(devices)
    assert [r["family"]["validation"] for r in records] == [
        "measured", "published, partly assumed from hopper", "assumed from ampere, hopper",
        "assumed from ampere, cdna2, hopper"]
    assert records[0]["sm_count"] == 132 and records[0]["family"]["status"] == "measured"
    assert records[3]["family"]["data"]["latency"] == family_named("cdna3").origin("latency").to_dict()


def test_devices_show_says_how_the_family_was_checked(tmp_path):
    text = device("H100-SXM5-80GB").to_text()
    assert "\nfamily hopper: measured\n" in text
    assert "  # hit-rate curves        measured on H100-SXM5-80GB, H200-SXM-141GB (8 files in tests/data/hopper): " \
        in text
    b200 = load_device_file(b200_like(tmp_path, "blackwell")).to_text()
    assert "\nfamily blackwell: assumed from hopper\n" in b200
    assert b200.count("assumed from hopper: ") == len(KINDS)


SHIPPED_WITH_TABLES = ("hopper", "ampere", "ada", "volta", "cdna2", "cdna3")


@given(st.integers(1, 5).flatmap(lambda n: st.lists(
    st.tuples(*(st.sampled_from([f"x{i}" for i in range(n)] + list(SHIPPED_WITH_TABLES)) for _ in KINDS)),
    min_size=n, max_size=n)))
@settings(max_examples=200, deadline=None)
def test_any_web_of_assumptions_resolves_or_names_its_circle(froms):
    """New families, each kind assumed from another new or a shipped family: the file reads and every kind
    ends at a family with tables of its own, or it is refused naming the circle (never another error)."""
    body = "".join(f"[x{i}]\n" + "".join(f'{k}.status = "assumed"\n{k}.from = "{f}"\n{k}.reason = "test"\n'
                                         for k, f in zip(KINDS, row, strict=True))
                   for i, row in enumerate(froms))
    self_reference = any(f == f"x{i}" for i, row in enumerate(froms) for f in row)
    try:
        described = read_families(family_file(body), "families.toml")
    except InputError as e:
        assert "goes round in a circle" in str(e) or (self_reference and "must name another family" in str(e))
        return
    assert not self_reference
    for i in range(len(froms)):
        for kind in KINDS:
            end = _data_family(f"x{i}", kind, described, _owned(kind, described))
            assert end in SHIPPED_WITH_TABLES or (kind == "l1_rule" and described[end].origin(kind).status
                                                  != "assumed")
