"""README's table of the shipped GPUs lists every shipped device, with its name, compute capability, family and
the validation of its family's model data as the code gives them (a device added, renamed or re-validated
without the README following fails here)."""

import re

from paths import ROOT

from warpspeed.device import device, device_ids
from warpspeed.device.families import device_family

ROW = re.compile(r"^\| `(?P<id>[^`]+)` \| (?P<name>[^|]+) \| (?P<cc>[^|]+) \| (?P<family>[^|]+) \| (?P<data>[^|]+) \|$")


def readme_rows() -> dict[str, tuple[str, ...]]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## The shipped GPUs", 1)[1].split("\n## ", 1)[0]
    return {m["id"]: tuple(m[k].strip() for k in ("name", "cc", "family", "data"))
            for m in map(ROW.match, section.splitlines()) if m}


def test_the_readme_lists_every_shipped_gpu_with_its_family_and_validation():
    rows = readme_rows()
    assert sorted(rows) == sorted(device_ids())
    for dev_id, row in rows.items():
        d = device(dev_id)
        assert row == (d.name, d.compute_capability, d.architecture, device_family(d).validation), dev_id
