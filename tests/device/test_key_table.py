"""The device keys come from one table, :data:`warpspeed.device.keys.KEY_GROUPS`: the :class:`Device` fields,
the sections of ``devices show``, what an optional key left out means, the keys of files and ``--set`` and the
rows of docs/device-format.md are held to it here, so that adding a key means an entry there, its ``Device``
field, the stage that reads it and its docs rows, and a test names whatever was forgotten."""

import dataclasses
import re

import pytest
from paths import ROOT

from warpspeed.device import Device, device, device_ids, load_device_file
from warpspeed.device.base import IDENTITY_KEYS
from warpspeed.device.keys import (
    FILE_KEYS,
    KEY_GROUPS,
    KEYS,
    KEYS_BY_NAME,
    L1_LINE_KEYS,
    LATENCY_KEYS,
    MSC_KEYS,
    OVERRIDE_KEYS,
    PEAK_OF,
    TLB_KEYS,
)
from warpspeed.errors import InputError

NOT_KEYS = {*IDENTITY_KEYS, "hit_rates", "sources", "file"}  # Device fields that are no numeric key
PYTHON_TYPE = {"count": "int", "bytes": "int", "dims": "tuple[int, int, int]"}  # every other kind: float
DEVICE_DOC = ROOT / "docs" / "device-format.md"


def test_the_device_fields_are_the_tables_attributes():
    fields = {f.name for f in dataclasses.fields(Device)} - NOT_KEYS
    table = {k.attr for k in KEYS}
    assert not table - fields, f"keys of KEY_GROUPS without a Device field: {sorted(table - fields)}"
    assert not fields - table, f"Device fields without a key in KEY_GROUPS: {sorted(fields - table)}"


@pytest.mark.parametrize("spec", KEYS, ids=lambda k: k.key)
def test_each_device_field_has_the_type_of_its_key(spec):
    """count and bytes: int, dims: three ints, the rest float; ``| None`` where a device may leave it out (an
    optional key that is not derived)."""
    field = {f.name: f for f in dataclasses.fields(Device)}.get(spec.attr)
    assert field is not None, f"Device has no field {spec.attr} (the attribute of the key {spec.key})"
    expected = PYTHON_TYPE.get(spec.kind, "float") + ("" if spec.required or spec.derived else " | None")
    assert field.type == expected, f"Device.{spec.attr}: {field.type}, but its key {spec.key} says {expected}"


def test_every_key_is_in_one_section_and_named_once():
    assert len({k.key for k in KEYS}) == len(KEYS) and len({k.attr for k in KEYS}) == len(KEYS)
    assert len({g.title for g in KEY_GROUPS}) == len(KEY_GROUPS)
    for group in KEY_GROUPS:
        assert group.keys and all(k.group == group.title for k in group.keys), group.title
    assert OVERRIDE_KEYS[:len(KEYS)] == tuple(k.key for k in KEYS)


def test_the_named_key_sets_come_from_the_table():
    assert LATENCY_KEYS == tuple(k.key for k in KEYS if k.group == "latency model")
    assert TLB_KEYS == tuple(k.key for k in KEYS if k.group.startswith("TLB"))
    assert set(L1_LINE_KEYS) <= {k.key for k in KEYS if k.group == "L1"}
    assert PEAK_OF == {"l2_bw": "l2_bw_peak", "dram_bw": "dram_bw_peak", "msc_bw": "msc_bw_peak"}
    assert MSC_KEYS == tuple(k.key for k in KEYS if k.group.startswith("memory-side") and k.peak_of is None)
    for used, peak in PEAK_OF.items():  # a peak is an optional value of its key's kind, written <key>.peak
        assert KEYS_BY_NAME[peak].kind == KEYS_BY_NAME[used].kind and not KEYS_BY_NAME[peak].required
        assert peak not in FILE_KEYS and used in FILE_KEYS


def test_devices_show_lists_every_key_under_its_section_in_table_order():
    for dev_id in ("H100-SXM5-80GB", "A100-SXM4-40GB"):
        dev = device(dev_id)
        text = dev.to_text()
        sections = re.split(r"\n\n", text)
        for group in KEY_GROUPS:
            body = next(s for s in sections if s.startswith(group.title + "\n")).splitlines()[1:]
            shown = [re.match(r"  (?:# )?(\w+)", line).group(1) for line in body]
            assert shown == list(group.names), (dev_id, group.title)
            for spec, line in zip(group.keys, body, strict=True):
                if getattr(dev, spec.attr) is None:
                    assert line == f"  # {spec.key}: not given ({spec.absent})"
        assert "\nother\n" not in text


def test_the_docs_list_the_keys_in_the_tables_order():
    rows = re.findall(r"^\| `(\w+)` \|", _table("| key | `Device` attribute |"), flags=re.M)
    assert rows == [k.key for k in KEYS]
    ranged = re.findall(r"^\| `(\w+)` \|", _table("| key | from | to |"), flags=re.M)
    assert ranged[:-1] == [k.key for k in KEYS if k.plausible is not None]
    assert ranged[-1] == "max_block_dims"


def _table(header: str) -> str:
    """The markdown table of docs/device-format.md that starts with ``header``, up to its first blank line."""
    text = DEVICE_DOC.read_text()
    return text[text.index(header):].split("\n\n")[0]


def test_a_complete_file_missing_a_key_names_every_optional_key(tmp_path):
    """The message is made from the table: an optional key added to it is named there too (before, the TLB,
    the L1 line-rule keys and dram_size were left out of a hand-written list)."""
    shipped = device("A40").file
    text = "\n".join(line for line in open(shipped).read().splitlines() if not line.startswith("sm_count"))
    f = tmp_path / "A40.toml"
    f.write_text(text)
    with pytest.raises(InputError) as err:
        load_device_file(f)
    message = " ".join(str(err.value).split())
    optional = message[message.index("(optional: "):]
    for spec in KEYS:
        if not spec.required and spec.peak_of is None:
            assert spec.key in optional, spec.key
    assert "missing key(s) sm_count" in message


def test_every_shipped_device_gives_every_required_and_derived_key():
    for dev_id in device_ids():
        dev = device(dev_id)
        for spec in KEYS:
            if spec.required or spec.derived:
                assert getattr(dev, spec.attr) is not None, (dev_id, spec.key)
            if getattr(dev, spec.attr) is not None:
                assert dev.source_of(spec.key), (dev_id, spec.key)
