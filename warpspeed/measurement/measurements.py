"""Measured runs as CSV: the schema that ``warpspeed measure`` writes and ``validate`` / ``calibrate`` read.

One row per (kernel, device, configuration). Columns, in this order:

=========================  ======================================================================
column                     meaning
=========================  ======================================================================
device                     warpspeed device id (or device file) the row is compared with
gpu_name, driver           what the GPU and driver reported (``nvidia-smi`` / cupy)
sm_clock_MHz               SM clock under load: ``nvidia-smi --query-gpu=clocks.sm`` sampled right after the
                           row's timed launches (empty if nvidia-smi is unavailable)
mem_clock_MHz              memory clock read before the sweep (empty if unknown)
kernel                     catalog name (``star3d-r4``, ``star:r=2``) or kernel TOML path
block, folding, domain     ``XxYxZ``
code                       CUDA source that ran: ``pystencils`` (the kernel's own code) or ``warpspeed``
                           (generated from the model's accesses, loads summed; see ``warpspeed.measurement.measure``)
registers                  registers per thread of the binary that ran (estimates use them)
repeats                    timed launches after warm-up
time_s                     median kernel time of the timed launches (CUDA events)
time_min_s                 fastest timed launch
GLup_s                     valid lattice updates of the domain / time_s / 1e9
l1_cycles_per_warp_lup     ncu ``l1tex__data_pipe_lsu_wavefronts.sum`` x 32 (lanes/warp) / lups
l1_load                    ncu global-load sectors requested from L1 x 32 B / lups (B/lup)
l2_load                    ncu L2 sectors read by L1 x 32 B / lups
l2_store                   ncu L2 sectors written by L1 x 32 B / lups
dram_load, dram_store      ncu DRAM bytes read / written / lups
cycles                     ncu elapsed SM cycles (max over SMs)
date, warpspeed_version    when and with which version the row was measured
=========================  ======================================================================

The volume columns carry the names of the estimate's ``volumes_B_per_lup`` keys they are compared with;
empty cells mean "not measured" (a timing-only run).

What the reader accepts (errors name the file, line and column): UTF-8 text; a header with the columns
device, kernel, block, folding, domain and GLup_s, each once; numbers that are 0 or from 1e-15 to 1e15
(GLup_s positive, registers a whole number in 1..512: the device's own limit is checked when a row is
estimated); ``XxYxZ`` extents of ASCII digits in 1..2^31-1, a
folding of at most 64 cells per thread, a domain of at most 2^40 cells, and a grid (domain / (block x
folding), rounded up) that CUDA launches: at most 2^31-1 x 65535 x 65535 blocks.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, read_text
from ..model.launch import MAX_CELLS, MAX_EXTENT, MAX_FOLDING, MAX_GRID, grid_excess, grid_of  # the model's limits
from ..model.levels import MEASURED_VOLUMES

COLUMNS = ("device", "gpu_name", "driver", "sm_clock_MHz", "mem_clock_MHz", "kernel", "block", "folding", "domain",
           "code", "registers", "repeats", "time_s", "time_min_s", "GLup_s", "l1_cycles_per_warp_lup", "l1_load",
           "l2_load", "l2_store", "dram_load", "dram_store", "cycles", "date", "warpspeed_version")
VOLUME_COLUMNS = MEASURED_VOLUMES  # B/lup, level by level (warpspeed.model.levels)
_REQUIRED = ("device", "kernel", "block", "folding", "domain", "GLup_s")
NUMBER_RANGE = (1e-15, 1e15)  # numbers are 0 or in this range: beyond, no measurement, and ratios overflow
MAX_REGISTERS = 512
"""Registers per thread a row may give: the most of any GPU warpspeed ships (AMD CDNA2-4: 512 per lane, VGPRs and
accumulation VGPRs; NVIDIA: 255). The row's own device's limit is checked when the row is estimated."""
_CONTROL = frozenset(chr(c) for c in [*range(0x20), 0x7F]) - {"\t"}
NUMERIC_COLUMNS = ("sm_clock_MHz", "mem_clock_MHz", "registers", "repeats", "time_s", "time_min_s", "GLup_s",
                   "l1_cycles_per_warp_lup", *VOLUME_COLUMNS, "cycles")  # columns read as numbers


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
    parts = [p.strip() for p in text.strip().replace(",", "x").split("x")]
    if len(parts) != 3 or not all(p.isascii() and p.isdigit() and len(p) <= 10 and 0 < int(p) <= MAX_EXTENT
                                  for p in parts):
        raise InputError(f"{path}, line {line}: column {column} is {text!r}; write XxYxZ of integers in "
                         f"1..{MAX_EXTENT} such as 32x4x8.")
    return tuple(int(p) for p in parts)


def _records(p: Path, text: str):
    """(line, cells) of the CSV's records; line is where a record starts."""
    reader = csv.reader(io.StringIO(text, newline=""))
    line = 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise InputError(f"{p}, line {reader.line_num}: not a CSV row ({e}).") from None
        yield line, cells
        line = reader.line_num + 1


def _check_configuration(p: Path, line: int, block: tuple[int, int, int], folding: tuple[int, int, int],
                         domain: tuple[int, int, int]) -> None:
    """A row's configuration must be one that ran: a domain that fits a GPU, a grid CUDA launches."""
    if (n := math.prod(folding)) > MAX_FOLDING:
        raise InputError(f"{p}, line {line}: column folding is {triple_text(folding)}, {n} cells per thread; a "
                         f"measured folding has at most {MAX_FOLDING} (x*y*z), such as 1x1x1, 1x2x1 or 1x1x2.")
    if (n := math.prod(domain)) > MAX_CELLS:
        raise InputError(f"{p}, line {line}: column domain is {triple_text(domain)}, {n:.3g} cells; a measured "
                         f"domain has at most 2^40 cells (more than a GPU's memory holds).")
    grid = grid_of(domain, block, folding)
    if over := grid_excess(grid):
        axis, _, most = over
        raise InputError(f"{p}, line {line}: columns domain {triple_text(domain)}, block {triple_text(block)} "
                         f"and folding {triple_text(folding)} give a grid of {triple_text(grid)} blocks; CUDA "
                         f"launches at most {most} blocks in {axis} (grids up to {triple_text(MAX_GRID)}), so "
                         "this configuration cannot have run.")


def read_measurements(path: str | Path) -> list[Measurement]:
    """Rows of a measurement CSV (see the module docstring); errors name the file, line and column."""
    p = Path(path)
    records = _records(p, read_text(p, "measurements", "a measurement CSV is the UTF-8 text that "
                                                                       "warpspeed measure writes"))
    header_line, header = next(((n, r) for n, r in records if any(c.strip() for c in r)), (1, []))  # blank lines
    header = [h.strip() for h in header]
    missing = [c for c in _REQUIRED if c not in header]
    if missing:
        raise InputError(f"{p}: missing column(s) {', '.join(missing)}; a measurement CSV has the columns "
                         f"{', '.join(COLUMNS)} (see warpspeed/measurements.py).")
    twice = sorted({h for h in header if h and header.count(h) > 1})
    if twice:
        raise InputError(f"{p}, line {header_line}: column(s) {', '.join(twice)} appear more than once in the header.")
    out = []
    for line, cells in records:
        if not any(c.strip() for c in cells):
            continue  # a blank line
        if len(cells) > len(header):
            raise InputError(f"{p}, line {line}: {len(cells)} cells, more than the {len(header)} columns of the "
                             "header.")
        values: dict = {}
        for k, v in zip(header, [*cells, *[""] * (len(header) - len(cells))], strict=True):
            v = v.strip()
            if bad := next((ch for ch in v if ch in _CONTROL), None):
                raise InputError(f"{p}, line {line}: column {k or '(unnamed)'} holds the control character "
                                 f"{bad!r}; cells are one line of printable text.")
            if k in NUMERIC_COLUMNS and v:
                try:
                    values[k] = float(v)
                except ValueError:
                    raise InputError(f"{p}, line {line}: column {k} is {v!r}, not a number.") from None
                if not (values[k] == 0 or NUMBER_RANGE[0] <= values[k] <= NUMBER_RANGE[1]):
                    raise InputError(f"{p}, line {line}: column {k} is {v!r}; give 0 or a number from "
                                     f"{NUMBER_RANGE[0]:g} to {NUMBER_RANGE[1]:g}.")
            else:
                values[k] = v
        for c in _REQUIRED:
            if values.get(c) in ("", None):
                raise InputError(f"{p}, line {line}: column {c} is empty.")
        if values["GLup_s"] <= 0:
            raise InputError(f"{p}, line {line}: column GLup_s is {values['GLup_s']!r}; give a positive number.")
        regs = values.get("registers")
        if isinstance(regs, float) and (regs != int(regs) or not 1 <= regs <= MAX_REGISTERS):
            raise InputError(f"{p}, line {line}: column registers is {regs:g}; give a whole number of registers per "
                             f"thread in 1..{MAX_REGISTERS} (or leave it empty).")
        block, folding, domain = (_triple(values[c], c, line, str(p)) for c in ("block", "folding", "domain"))
        _check_configuration(p, line, block, folding, domain)
        out.append(Measurement(values["device"], values["kernel"], block, folding, domain, values["GLup_s"],
                               int(regs) if isinstance(regs, float) else None, values, line))
    if not out:
        raise InputError(f"{p}: no measurement rows (only the header).")
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
