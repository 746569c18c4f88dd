"""The device list of ``warpspeed devices``: a table of the main values with each device's family and how far
its model data was checked (the validation column), and the same devices as JSON with their family record."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

from ..device import Device
from ..device.families import device_family

DEVICE_COLUMNS = ("L2 eff: the L2 capacity in MiB that the model's capacity misses use (l2_effective_size: "
                  "l2_size / l2_partitions unless the file says otherwise, since an SM's data stays in its "
                  "partition); DRAM and L2 GB/s: the attainable bandwidths the model uses, not the peaks. "
                  "validation: how the family's hit-rate curves, L1 rule and latency values were checked: "
                  "measured (fitted to this project's measurements of that family), published (fitted by an "
                  "outside source on its GPU, not checked here) or assumed from another family (never "
                  "measured on this one; its estimates are first estimates to measure). "
                  "`warpspeed devices show ID` lists every value with its source and the family's data kind by "
                  "kind.")


def device_list_text(devices: Sequence[Device]) -> str:
    """One row per device (id, SMs, clock, L2 sizes, bandwidths, family, validation, name), then what the
    columns mean."""
    fams = [device_family(d) for d in devices]
    iw = max([len("id"), *(len(d.id) for d in devices)]) + 2
    fw = max([len("family"), *(len(f.name) for f in fams)]) + 2
    vw = max([len("validation"), *(len(f.validation) for f in fams)]) + 2
    rows = [f"{'id':<{iw}}{'SMs':>5}{'GHz':>6}{'L2 MiB':>8}{'L2 eff':>8}{'DRAM GB/s':>11}{'L2 GB/s':>9}  "
            f"{'family':<{fw}}{'validation':<{vw}}name"]
    for d, f in zip(devices, fams, strict=True):
        rows.append(f"{d.id:<{iw}}{d.sm_count:>5}{d.clock_GHz:>6.2f}{d.l2_size_bytes / 2**20:>8.0f}"
                    f"{d.l2_effective_size_bytes / 2**20:>8.0f}{d.dram_bw_GB_s:>11.0f}{d.l2_bw_GB_s:>9.0f}  "
                    f"{f.name:<{fw}}{f.validation:<{vw}}{d.name}")
    return "\n".join([*rows, "", *textwrap.wrap(DEVICE_COLUMNS, 100)])


def device_list_json(devices: Sequence[Device]) -> list[dict[str, Any]]:
    """Each device's description (as ``devices show --format json``) with its family record under
    ``family``: name, status, validation and each kind's origin (docs/outputs.md)."""
    return [{**d.to_dict(), "family": device_family(d).to_dict()} for d in devices]
