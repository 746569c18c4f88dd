"""Measured runs as CSV: the schema that ``warpspeed measure`` writes and ``validate`` / ``calibrate`` read.

One row per (kernel, device, configuration). Columns, in this order:

=========================  ======================================================================
column                     meaning
=========================  ======================================================================
device                     warpspeed device id (or device file) the row is compared with
gpu_name, driver           what the GPU and driver reported (``nvidia-smi`` / cupy)
sm_clock_MHz, mem_clock_MHz  clocks during the run (empty if unknown)
kernel                     catalog name (``star3d-r4``, ``star:r=2``) or kernel TOML path
block, folding, domain     ``XxYxZ``
code                       CUDA source that ran: ``pystencils`` (the kernel's own code) or ``warpspeed``
                           (generated from the model's accesses, loads summed; see ``warpspeed.measure``)
registers                  registers per thread of the binary that ran (estimates use them)
repeats                    timed launches after warm-up
time_s                     median kernel time of the timed launches (CUDA events)
time_min_s                 fastest timed launch
GLup_s                     valid lattice updates of the domain / time_s / 1e9
l1_cycles_per_warp_lup     ncu ``l1tex__data_pipe_lsu_wavefronts.sum`` x 32 / lups
l1_load                    ncu global-load sectors requested from L1 x 32 B / lups (B/lup)
l2_load                    ncu L2 sectors read by L1 x 32 B / lups
l2_store                   ncu L2 sectors written by L1 x 32 B / lups
dram_load, dram_store      ncu DRAM bytes read / written / lups
cycles                     ncu elapsed SM cycles (max over SMs)
date, warpspeed_version    when and with which version the row was measured
=========================  ======================================================================

The volume columns carry the names of the estimate's ``volumes_B_per_lup`` keys they are compared with;
empty cells mean "not measured" (a timing-only run).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError

COLUMNS = ("device", "gpu_name", "driver", "sm_clock_MHz", "mem_clock_MHz", "kernel", "block", "folding", "domain",
           "code", "registers", "repeats", "time_s", "time_min_s", "GLup_s", "l1_cycles_per_warp_lup", "l1_load",
           "l2_load", "l2_store", "dram_load", "dram_store", "cycles", "date", "warpspeed_version")
VOLUME_COLUMNS = ("l1_load", "l2_load", "l2_store", "dram_load", "dram_store")
_REQUIRED = ("device", "kernel", "block", "folding", "domain", "GLup_s")
_NUMERIC = ("sm_clock_MHz", "mem_clock_MHz", "registers", "repeats", "time_s", "time_min_s", "GLup_s",
            "l1_cycles_per_warp_lup", *VOLUME_COLUMNS, "cycles")


@dataclass(frozen=True)
class Measurement:
    """One measured configuration (numbers as floats, None where not measured)."""

    device: str
    kernel: str
    block: tuple[int, int, int]
    folding: tuple[int, int, int]
    domain: tuple[int, int, int]
    GLup_s: float
    registers: int | None = None
    values: dict = field(default_factory=dict, compare=False)  # every other column (floats or text)
    line: int = field(default=0, compare=False)  # line in the CSV it was read from (0: not from a file)

    @property
    def code(self) -> str:
        """Which CUDA source ran (``pystencils`` or ``warpspeed``; empty if not recorded)."""
        v = self.values.get("code", "")
        return v if isinstance(v, str) else ""

    def volume(self, key: str) -> float | None:
        v = self.values.get(key)
        return v if isinstance(v, float) else None


def triple_text(t: Iterable[int]) -> str:
    return "x".join(str(int(v)) for v in t)


def _triple(text: str, column: str, line: int, path: str) -> tuple[int, int, int]:
    parts = text.strip().replace(",", "x").split("x")
    if len(parts) != 3 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise InputError(f"{path}, line {line}: column {column} is {text!r}; write XxYxZ such as 32x4x8.")
    return tuple(int(p) for p in parts)


def read_measurements(path: str | Path) -> list[Measurement]:
    """Rows of a measurement CSV (see the module docstring); errors name the file, line and column."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise InputError(f"cannot read measurements {str(p)!r}: {e.strerror or e}.") from None
    reader = csv.DictReader(text.splitlines())
    missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError(f"{p}: missing column(s) {', '.join(missing)}; a measurement CSV has the columns "
                         f"{', '.join(COLUMNS)} (see warpspeed/measurements.py).")
    out = []
    for line, row in enumerate(reader, start=2):
        values: dict = {}
        for k, v in row.items():
            if k is None:
                raise InputError(f"{p}, line {line}: more cells than columns.")
            v = (v or "").strip()
            if k in _NUMERIC and v:
                try:
                    values[k] = float(v)
                except ValueError:
                    raise InputError(f"{p}, line {line}: column {k} is {v!r}, not a number.") from None
                if not math.isfinite(values[k]) or values[k] < 0:
                    raise InputError(f"{p}, line {line}: column {k} is {v!r}; give a finite value >= 0.")
            else:
                values[k] = v
        for c in _REQUIRED:
            if values.get(c) in ("", None):
                raise InputError(f"{p}, line {line}: column {c} is empty.")
        if values["GLup_s"] <= 0:
            raise InputError(f"{p}, line {line}: GLup_s must be positive.")
        regs = values.get("registers")
        out.append(Measurement(values["device"], values["kernel"], _triple(values["block"], "block", line, str(p)),
                               _triple(values["folding"], "folding", line, str(p)),
                               _triple(values["domain"], "domain", line, str(p)), values["GLup_s"],
                               int(regs) if isinstance(regs, float) else None, values, line))
    if not out:
        raise InputError(f"{p}: no measurement rows.")
    return out


def write_measurements(path: str | Path, rows: Iterable[dict], append: bool = False) -> Path:
    """Write rows (dicts keyed by :data:`COLUMNS`; missing keys stay empty) with a header."""
    p = Path(path)
    exists = append and p.exists() and p.stat().st_size > 0
    if exists:
        with p.open() as fh:
            header = next(csv.reader(fh), [])
        if tuple(header) != COLUMNS:
            raise InputError(f"{p}: cannot append, its columns differ from this version's "
                             f"({', '.join(COLUMNS)}); write to a new file.")
    with p.open("a" if exists else "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, extrasaction="raise", lineterminator="\n")
        if not exists:
            w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
            fh.flush()  # a long sweep keeps what it measured if interrupted
    return p
